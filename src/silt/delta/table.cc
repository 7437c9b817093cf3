#include "silt/delta/table.h"

#include <algorithm>
#include <map>
#include <string_view>

namespace silt::delta {

namespace {

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// A checkpoint file name (PROTOCOL.md "Checkpoints"), taken apart.
struct CheckpointName {
  int64_t version = -1;
  // Multi-part: part (1-based) of num_parts; 0 for single-file and V2.
  int64_t part = 0;
  int64_t num_parts = 0;
};

// "<v>.checkpoint.parquet", "<v>.checkpoint.<part>.<parts>.parquet" or the
// V2 "<v>.checkpoint.<uuid>.(json|parquet)"; nullopt for anything else.
std::optional<CheckpointName> ParseCheckpointName(std::string_view name) {
  constexpr std::string_view kInfix = ".checkpoint.";
  if (name.size() < 20 + kInfix.size() || !AllDigits(name.substr(0, 20)) ||
      name.substr(20, kInfix.size()) != kInfix) {
    return std::nullopt;
  }
  CheckpointName out;
  out.version = std::stoll(std::string(name.substr(0, 20)));
  std::string_view rest = name.substr(20 + kInfix.size());
  if (rest == "parquet") return out;
  if (rest.size() == 10 + 1 + 10 + 8 && AllDigits(rest.substr(0, 10)) && rest[10] == '.' &&
      AllDigits(rest.substr(11, 10)) && rest.substr(21) == ".parquet") {
    out.part = std::stoll(std::string(rest.substr(0, 10)));
    out.num_parts = std::stoll(std::string(rest.substr(11, 10)));
    if (out.part < 1 || out.part > out.num_parts) return std::nullopt;
    return out;
  }
  size_t dot = rest.rfind('.');
  if (dot == std::string_view::npos || dot == 0) return std::nullopt;
  std::string_view ext = rest.substr(dot + 1);
  if ((ext == "json" || ext == "parquet") && rest.substr(0, dot).find('.') == std::string::npos) {
    return out;
  }
  return std::nullopt;
}

}  // namespace

int64_t DeltaTable::LogListing::LatestVersion() const {
  int64_t latest = versions.empty() ? -1 : versions.back();
  if (!checkpoints.empty()) latest = std::max(latest, checkpoints.back().version);
  return latest;
}

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
  // Per version: the single-file / V2 candidate, and the multi-part parts
  // keyed by part count.
  struct Candidates {
    std::string single;
    int64_t single_mtime = 0;
    std::map<int64_t, std::map<int64_t, std::pair<std::string, int64_t>>> parts;
  };
  std::map<int64_t, Candidates> checkpoints;
  for (auto& entry : entries) {
    if (entry.is_dir) continue;
    std::string_view name = fs::BaseName(entry.path);
    if (auto version = ParseCommitFileName(name)) {
      commits.emplace_back(*version, std::move(entry));
    } else if (auto checkpoint = ParseCheckpointName(name)) {
      Candidates& c = checkpoints[checkpoint->version];
      if (checkpoint->num_parts == 0) {
        if (c.single.empty() || std::string_view(c.single) > name) {
          c.single = std::string(name);
          c.single_mtime = entry.modification_time_ms;
        }
      } else {
        c.parts[checkpoint->num_parts][checkpoint->part] = {std::string(name),
                                                            entry.modification_time_ms};
      }
    }
  }
  for (auto& [version, c] : checkpoints) {
    CheckpointEntry checkpoint;
    checkpoint.version = version;
    if (!c.single.empty()) {
      checkpoint.files.push_back(c.single);
      checkpoint.modification_time_ms = c.single_mtime;
    } else {
      for (auto& [num_parts, parts] : c.parts) {
        if (static_cast<int64_t>(parts.size()) != num_parts) continue;  // incomplete
        for (auto& [part, file] : parts) {
          checkpoint.files.push_back(file.first);
          checkpoint.modification_time_ms = std::max(checkpoint.modification_time_ms, file.second);
        }
        break;
      }
    }
    if (!checkpoint.files.empty()) listing.checkpoints.push_back(std::move(checkpoint));
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
  return !listing.commits.empty() || !listing.checkpoints.empty();
}

Result<std::vector<int64_t>> DeltaTable::ListVersions() {
  SILT_ASSIGN_OR_RETURN(LogListing listing, ListLog());
  return std::move(listing.versions);
}

Result<SnapshotPtr> DeltaTable::LatestSnapshot() {
  SILT_ASSIGN_OR_RETURN(LogListing listing, ListLog());
  if (listing.LatestVersion() < 0) {
    return Status::NotFound(path_, " is not a Delta table (no _delta_log/",
                            CommitFileName(0), " or later commit in ", log_path(), ")");
  }
  return Replay(listing, listing.LatestVersion());
}

Result<SnapshotPtr> DeltaTable::SnapshotAt(int64_t version) {
  SILT_ASSIGN_OR_RETURN(LogListing listing, ListLog());
  if (listing.LatestVersion() < 0) {
    return Status::NotFound("version ", version, " of ", path_,
                            " does not exist: it is not a Delta table (no commits in ",
                            log_path(), ")");
  }
  bool is_checkpoint = std::any_of(listing.checkpoints.begin(), listing.checkpoints.end(),
                                   [&](const CheckpointEntry& c) { return c.version == version; });
  if (!is_checkpoint &&
      !std::binary_search(listing.versions.begin(), listing.versions.end(), version)) {
    int64_t first = listing.versions.empty() ? listing.checkpoints.front().version
                                             : listing.versions.front();
    if (!listing.checkpoints.empty()) first = std::min(first, listing.checkpoints.front().version);
    return Status::NotFound("version ", version, " of Delta table ", path_,
                            " does not exist (available versions: ", first, " to ",
                            listing.LatestVersion(), ")");
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
