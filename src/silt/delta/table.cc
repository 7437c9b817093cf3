#include "silt/delta/table.h"

#include <algorithm>

namespace silt::delta {

namespace {

bool IsCheckpointFileName(std::string_view name) {
  return name == "_last_checkpoint" || name.find(".checkpoint.") != std::string_view::npos;
}

}  // namespace

std::optional<int64_t> Snapshot::TxnVersion(const std::string& app_id) const {
  auto it = txns_.find(app_id);
  if (it == txns_.end()) return std::nullopt;
  return it->second.version;
}

Result<std::unique_ptr<DeltaTable>> DeltaTable::Open(fs::FileSystemPtr fs,
                                                     std::string table_path) {
  if (fs == nullptr) return Status::InvalidArgument("no file system given for table ", table_path);
  while (table_path.size() > 1 && table_path.back() == '/') table_path.pop_back();
  if (table_path.empty()) return Status::InvalidArgument("empty Delta table path");
  return std::unique_ptr<DeltaTable>(new DeltaTable(std::move(fs), std::move(table_path)));
}

std::string DeltaTable::log_path() const { return fs::JoinPath(path_, "_delta_log"); }

Result<DeltaTable::LogListing> DeltaTable::ListLog() {
  SILT_ASSIGN_OR_RETURN_CTX(auto entries, fs_->ListDir(log_path()), "listing the Delta log of ",
                            path_);
  LogListing listing;
  std::vector<std::pair<int64_t, fs::FileInfo>> commits;
  for (auto& entry : entries) {
    if (entry.is_dir) continue;
    std::string_view name = fs::BaseName(entry.path);
    if (auto version = ParseCommitFileName(name)) {
      commits.emplace_back(*version, std::move(entry));
    } else if (IsCheckpointFileName(name)) {
      listing.checkpoint_files.emplace_back(name);
    }
  }
  // Zero-padded names already sort by version; sorting again keeps this
  // independent of how a file system orders its listing.
  std::sort(commits.begin(), commits.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [version, info] : commits) {
    listing.versions.push_back(version);
    listing.commits.push_back(std::move(info));
  }
  return listing;
}

Result<bool> DeltaTable::Exists() {
  SILT_ASSIGN_OR_RETURN(LogListing listing, ListLog());
  return !listing.commits.empty() || !listing.checkpoint_files.empty();
}

Result<std::vector<int64_t>> DeltaTable::ListVersions() {
  SILT_ASSIGN_OR_RETURN(LogListing listing, ListLog());
  return std::move(listing.versions);
}

Result<SnapshotPtr> DeltaTable::LatestSnapshot() {
  SILT_ASSIGN_OR_RETURN(LogListing listing, ListLog());
  if (listing.versions.empty()) {
    if (!listing.checkpoint_files.empty()) {
      return Status::NotSupported("reading Delta checkpoints (", log_path(), "/",
                                  listing.checkpoint_files.back(),
                                  ") is not supported yet: the table has no JSON commits");
    }
    return Status::NotFound(path_, " is not a Delta table (no _delta_log/",
                            CommitFileName(0), " or later commit in ", log_path(), ")");
  }
  return Replay(listing, listing.versions.back());
}

Result<SnapshotPtr> DeltaTable::SnapshotAt(int64_t version) {
  SILT_ASSIGN_OR_RETURN(LogListing listing, ListLog());
  if (listing.versions.empty()) {
    return Status::NotFound("version ", version, " of ", path_,
                            " does not exist: it is not a Delta table (no commits in ",
                            log_path(), ")");
  }
  if (!std::binary_search(listing.versions.begin(), listing.versions.end(), version)) {
    return Status::NotFound("version ", version, " of Delta table ", path_,
                            " does not exist (available versions: ", listing.versions.front(),
                            " to ", listing.versions.back(), ")");
  }
  return Replay(listing, version);
}

Result<CommitActions> DeltaTable::ReadCommit(int64_t version) {
  std::string file = fs::JoinPath(log_path(), CommitFileName(version));
  auto text = fs_->ReadFile(file);
  if (!text.ok()) {
    if (text.status().IsNotFound()) {
      return Status::NotFound("version ", version, " of Delta table ", path_,
                              " does not exist (no ", file, ")");
    }
    return text.status().WithContextParts("reading commit ", version, " of ", path_);
  }
  SILT_ASSIGN_OR_RETURN(CommitActions actions, ParseCommit(*text, file));
  actions.version = version;
  return actions;
}

}  // namespace silt::delta
