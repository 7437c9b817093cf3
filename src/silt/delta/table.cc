#include "silt/delta/table.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <map>
#include <string_view>

#include "silt/base/clock.h"
#include "silt/base/strings.h"
#include "silt/delta/checkpoint_worker.h"
#include "silt/delta/log_cleanup.h"
#include "silt/delta/table_properties.h"

namespace silt::delta {

namespace {

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

std::shared_ptr<const Snapshot> Snapshot::WithFiles(std::vector<AddFile> files) const {
  // Member by member, not `Snapshot(*this)`: copying the whole file list
  // only to replace it cost a second copy of the table's live files per
  // OPTIMIZE bin (decision 170). Not elided: it holds exactly `files`. No
  // tombstones (decision 192): a scan never reads them, and a stream's
  // state holds ~2 per batch for 7 days, which every OPTIMIZE bin, change
  // feed file and DML rewrite copied. The checkpoint writers' callers
  // (checkpoint_writer_v2.cc, checkpoint_classic_incremental.cc) take it
  // only from states that have none.
  auto copy = std::make_shared<Snapshot>();
  copy->version_ = version_;
  copy->timestamp_ms_ = timestamp_ms_;
  copy->protocol_ = protocol_;
  copy->metadata_ = metadata_;
  copy->files_ = std::move(files);
  copy->txns_ = txns_;
  copy->domains_ = domains_;
  copy->plain_paths_ = plain_paths_;
  return copy;
}

std::shared_ptr<const Snapshot> Snapshot::WithFilesAndSchema(std::vector<AddFile> files,
                                                             columnar::SchemaPtr schema) const {
  auto copy = std::const_pointer_cast<Snapshot>(WithFiles(std::move(files)));
  copy->metadata_.schema = std::move(schema);
  return copy;
}

Result<std::unique_ptr<DeltaTable>> DeltaTable::Open(fs::FileSystemPtr fs, std::string table_path) {
  if (fs == nullptr) return Status::InvalidArgument("no file system given for table ", table_path);
  while (table_path.size() > 1 && table_path.back() == '/') table_path.pop_back();
  if (table_path.empty()) return Status::InvalidArgument("empty Delta table path");
  return std::unique_ptr<DeltaTable>(new DeltaTable(std::move(fs), std::move(table_path)));
}

Result<std::unique_ptr<DeltaTable>> DeltaTable::OpenExisting(const std::string& path) {
  std::string normalized = fs::NormalizePath(path);
  SILT_ASSIGN_OR_RETURN(fs::FileSystemPtr file_system, fs::FileSystemForPath(normalized));
  SILT_ASSIGN_OR_RETURN(auto table, Open(file_system, normalized));
  SILT_ASSIGN_OR_RETURN(LogListing listing, table->ListLog());
  if (listing.commits.empty() && listing.checkpoints.empty()) {
    return Status::NotFound("'", path, "' is not a Delta table (no commits in ",
                            fs::JoinPath(normalized, "_delta_log"), ")");
  }
  table->opening_listing_ = std::move(listing);
  return table;
}

std::string DeltaTable::log_path() const { return fs::JoinPath(path_, "_delta_log"); }

Result<DeltaTable::LogListing> DeltaTable::ListLog() {
  if (opening_listing_) {
    LogListing listing = std::move(*opening_listing_);
    opening_listing_.reset();
    return listing;
  }
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
    return Status::NotFound(path_, " is not a Delta table (no _delta_log/", CommitFileName(0),
                            " or later commit in ", log_path(), ")");
  }
  return Replay(listing, listing.LatestVersion());
}

Result<SnapshotPtr> DeltaTable::SnapshotAtTimestamp(int64_t timestamp_ms) {
  SILT_ASSIGN_OR_RETURN(LogFileTimes times, ListLogFileTimes(fs_.get(), log_path()));
  if (times.latest < 0) {
    return Status::NotFound("cannot time travel on ", path_,
                            ": it is not a Delta table (no commits in ", log_path(), ")");
  }
  // Commits that can be rebuilt, oldest first.
  std::vector<LogFileTimes::Commit> commits;
  for (const auto& commit : times.commits) {
    if (times.earliest_recreatable >= 0 && commit.version >= times.earliest_recreatable) {
      commits.push_back(commit);
    }
  }
  if (commits.empty()) {
    return Status::NotFound("cannot time travel on ", path_, " by timestamp: no commit files from ",
                            "a reconstructable version on are left in ", log_path());
  }
  // In-commit timestamps replace file times from the enablement version on.
  int64_t ict_from = std::numeric_limits<int64_t>::max();
  {
    SILT_ASSIGN_OR_RETURN(SnapshotPtr latest, LatestSnapshot());
    const TableConfiguration& conf = latest->metadata().configuration;
    SILT_ASSIGN_OR_RETURN(bool ict, EnableInCommitTimestamps(conf));
    if (ict) {
      ict_from = 0;
      if (auto v = GetTableProperty(conf, "delta.inCommitTimestampEnablementVersion")) {
        ict_from = std::atoll(v->c_str());
      }
    }
  }
  std::vector<std::optional<int64_t>> cache(commits.size());
  auto commit_time = [&](size_t idx) -> Result<int64_t> {
    if (cache[idx]) return *cache[idx];
    int64_t ts = commits[idx].monotonic_time_ms;
    if (commits[idx].version >= ict_from) {
      SILT_ASSIGN_OR_RETURN(CommitActions actions, ReadCommit(commits[idx].version));
      if (actions.commit_timestamp_ms) ts = *actions.commit_timestamp_ms;
    }
    cache[idx] = ts;
    return ts;
  };
  SILT_ASSIGN_OR_RETURN(int64_t first_ts, commit_time(0));
  SILT_ASSIGN_OR_RETURN(int64_t last_ts, commit_time(commits.size() - 1));
  auto iso = [](int64_t ms) { return FormatTimestampMillisUtc(ms * 1000); };
  if (timestamp_ms < first_ts) {
    std::string cleaned =
        commits.front().version > 0
            ? Status::Concat(
                  " (older versions were removed by log cleanup; the log now starts "
                  "at checkpoint ",
                  commits.front().version, ")")
            : std::string();
    return Status::NotFound("timestamp ", iso(timestamp_ms), " is before the earliest available ",
                            "version ", commits.front().version, " of Delta table ", path_,
                            ", committed at ", iso(first_ts), cleaned);
  }
  if (timestamp_ms > last_ts) {
    return Status::NotFound("timestamp ", iso(timestamp_ms), " is after the latest version ",
                            commits.back().version, " of Delta table ", path_, ", committed at ",
                            iso(last_ts), "; use a timestamp at or before ", iso(last_ts));
  }
  // The newest commit with time <= timestamp_ms (times are monotonic).
  size_t lo = 0;
  size_t hi = commits.size() - 1;
  while (lo < hi) {
    size_t mid = lo + (hi - lo + 1) / 2;
    SILT_ASSIGN_OR_RETURN(int64_t ts, commit_time(mid));
    if (ts <= timestamp_ms) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return SnapshotAt(commits[lo].version);
}

Result<SnapshotPtr> DeltaTable::SnapshotAt(int64_t version) {
  SILT_ASSIGN_OR_RETURN(LogListing listing, ListLog());
  if (listing.LatestVersion() < 0) {
    return Status::NotFound("version ", version, " of ", path_,
                            " does not exist: it is not a Delta table (no commits in ", log_path(),
                            ")");
  }
  if (version >= 0 && version <= listing.LatestVersion() &&
      (listing.versions.empty() || listing.versions.front() != 0) && !listing.checkpoints.empty() &&
      version < listing.checkpoints.front().version) {
    return Status::NotFound("version ", version, " of Delta table ", path_,
                            " is no longer available: the log now starts at checkpoint ",
                            listing.checkpoints.front().version,
                            " (older commits were removed by log cleanup, see "
                            "delta.logRetentionDuration; available versions: ",
                            listing.checkpoints.front().version, " to ", listing.LatestVersion(),
                            ")");
  }
  bool is_checkpoint = std::any_of(listing.checkpoints.begin(), listing.checkpoints.end(),
                                   [&](const CheckpointEntry& c) { return c.version == version; });
  if (!is_checkpoint &&
      !std::binary_search(listing.versions.begin(), listing.versions.end(), version) &&
      // A listing racing with writers may miss a commit that exists.
      !(version >= 0 && version < listing.LatestVersion() &&
        fs_->Exists(fs::JoinPath(log_path(), CommitFileName(version))).ValueOr(false))) {
    int64_t first =
        listing.versions.empty() ? listing.checkpoints.front().version : listing.versions.front();
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

DeltaTable::DeltaTable(fs::FileSystemPtr fs, std::string path)
    : fs_(std::move(fs)), path_(std::move(path)) {}

DeltaTable::~DeltaTable() {
  // Before any other member goes: the checkpoint in flight uses them.
  checkpoint_worker_.reset();
}

std::shared_ptr<SidecarPlan> DeltaTable::sidecar_plan() const {
  std::lock_guard<std::mutex> lock(sidecar_plan_mu_);
  return sidecar_plan_;
}

void DeltaTable::set_sidecar_plan(std::shared_ptr<SidecarPlan> plan) {
  std::lock_guard<std::mutex> lock(sidecar_plan_mu_);
  sidecar_plan_ = std::move(plan);
}

CheckpointWorker* DeltaTable::checkpoint_worker() {
  if (checkpoint_worker_ == nullptr) checkpoint_worker_ = std::make_unique<CheckpointWorker>();
  return checkpoint_worker_.get();
}

void DeltaTable::WaitForBackgroundCheckpoint() {
  if (checkpoint_worker_ != nullptr) checkpoint_worker_->WaitIdle();
}

}  // namespace silt::delta
