#include "silt/delta/log_cleanup.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>

#include "silt/base/clock.h"
#include "silt/base/logging.h"
#include "silt/base/strings.h"
#include "silt/delta/checkpoint_reader.h"
#include "silt/delta/protocol.h"
#include "silt/delta/table_properties.h"
#include "silt/delta/table_root.h"
#include "silt/parquet/file_reader.h"

namespace silt::delta {

namespace {

enum class LogFileKind { kCommit, kCheckpoint, kChecksum, kCompaction, kOther };

struct LogFileName {
  LogFileKind kind = LogFileKind::kOther;
  int64_t version = -1;  // the (end) version the file belongs to
  int64_t part = 0;      // multi-part checkpoints: part and count
  int64_t num_parts = 0;
};

LogFileName ParseLogFileName(std::string_view name) {
  LogFileName out;
  if (name.size() < 21 || !AllDigits(name.substr(0, 20)) || name[20] != '.') return out;
  out.version = std::stoll(std::string(name.substr(0, 20)));
  std::string_view rest = name.substr(21);
  if (rest == "json") {
    out.kind = LogFileKind::kCommit;
  } else if (rest == "crc") {
    out.kind = LogFileKind::kChecksum;
  } else if (rest.substr(0, 11) == "checkpoint.") {
    std::string_view tail = rest.substr(11);
    if (tail == "parquet") {
      out.kind = LogFileKind::kCheckpoint;
    } else if (tail.size() == 29 && AllDigits(tail.substr(0, 10)) && tail[10] == '.' &&
               AllDigits(tail.substr(11, 10)) && tail.substr(21) == ".parquet") {
      out.kind = LogFileKind::kCheckpoint;
      out.part = std::stoll(std::string(tail.substr(0, 10)));
      out.num_parts = std::stoll(std::string(tail.substr(11, 10)));
    } else if (tail.size() > 5 &&
               (tail.substr(tail.size() - 5) == ".json" ||
                (tail.size() > 8 && tail.substr(tail.size() - 8) == ".parquet"))) {
      out.kind = LogFileKind::kCheckpoint;  // V2, UUID-named
    }
  } else if (rest.size() == 20 + 15 && AllDigits(rest.substr(0, 20)) &&
             rest.substr(20) == ".compacted.json") {
    out.kind = LogFileKind::kCompaction;
    out.version = std::stoll(std::string(rest.substr(0, 20)));  // end version
  }
  return out;
}

struct Listing {
  LogFileTimes times;
  // Every cleanable file with the version it belongs to.
  std::vector<std::pair<int64_t, std::string>> files;
  // Single-file checkpoints (classic or V2 top-level) with their versions.
  std::vector<std::pair<int64_t, std::string>> single_checkpoints;
};

Result<std::vector<fs::FileInfo>> ListLog(fs::FileSystem* fs, const std::string& log_dir) {
  SILT_ASSIGN_OR_RETURN_CTX(std::vector<fs::FileInfo> entries, fs->ListDir(log_dir),
                            "listing Delta log ", log_dir);
  return entries;
}

// Indexes a listing of the log (consumed: its paths move into the result).
Listing IndexLog(std::vector<fs::FileInfo> entries) {
  Listing out;
  // Per version: single/V2 checkpoint present, and multi-part parts by count.
  std::map<int64_t, bool> single;
  std::map<int64_t, std::map<int64_t, std::set<int64_t>>> parts;
  for (fs::FileInfo& entry : entries) {
    if (entry.is_dir) continue;
    LogFileName name = ParseLogFileName(fs::BaseName(entry.path));
    switch (name.kind) {
      case LogFileKind::kCommit:
        out.times.commits.push_back({name.version, entry.modification_time_ms, 0, entry.path});
        break;
      case LogFileKind::kCheckpoint:
        if (name.num_parts == 0) {
          single[name.version] = true;
          out.single_checkpoints.emplace_back(name.version, entry.path);
        } else {
          parts[name.version][name.num_parts].insert(name.part);
        }
        break;
      default: break;
    }
    if (name.kind != LogFileKind::kOther) {
      out.files.emplace_back(name.version, std::move(entry.path));
    }
  }
  std::sort(out.times.commits.begin(), out.times.commits.end(),
            [](const auto& a, const auto& b) { return a.version < b.version; });
  std::set<int64_t> complete;
  for (const auto& [version, present] : single) complete.insert(version);
  for (const auto& [version, by_count] : parts) {
    for (const auto& [count, got] : by_count) {
      if (static_cast<int64_t>(got.size()) == count) complete.insert(version);
    }
  }
  out.times.checkpoint_versions.assign(complete.begin(), complete.end());

  int64_t previous = -1;
  for (auto& commit : out.times.commits) {
    commit.monotonic_time_ms = std::max(commit.file_time_ms, previous + 1);
    previous = commit.monotonic_time_ms;
  }
  LogFileTimes& t = out.times;
  t.latest = t.commits.empty() ? -1 : t.commits.back().version;
  if (!t.checkpoint_versions.empty()) t.latest = std::max(t.latest, t.checkpoint_versions.back());
  // Start of the contiguous suffix of commits.
  int64_t suffix_start = t.commits.empty() ? t.latest + 1 : t.commits.back().version;
  for (size_t i = t.commits.size(); i-- > 0;) {
    suffix_start = t.commits[i].version;
    if (i == 0 || t.commits[i - 1].version + 1 != t.commits[i].version) break;
  }
  if (!t.commits.empty() && suffix_start == 0) {
    t.earliest_recreatable = 0;
  } else {
    for (int64_t c : t.checkpoint_versions) {
      if (c + 1 >= suffix_start) {
        t.earliest_recreatable = c;
        break;
      }
    }
  }
  return out;
}

// The sidecar files (names under `_sidecars/`) that `checkpoint`, a
// single-file checkpoint, references. Classic-named checkpoints are read
// only when their schema has a sidecar column (a V2-spec classic
// checkpoint); a V1 one references nothing.
Status AddReferencedSidecars(fs::FileSystem* fs, const std::string& checkpoint,
                             std::set<std::string>* out) {
  CommitActions actions;
  if (checkpoint.size() > 5 && checkpoint.substr(checkpoint.size() - 5) == ".json") {
    SILT_ASSIGN_OR_RETURN(std::string text, fs->ReadFile(checkpoint));
    SILT_ASSIGN_OR_RETURN(actions, ParseCommit(text, checkpoint));
  } else {
    if (fs::BaseName(checkpoint).size() == 20 + std::string_view(".checkpoint.parquet").size()) {
      SILT_ASSIGN_OR_RETURN(std::unique_ptr<parquet::ParquetFileReader> reader,
                            parquet::ParquetFileReader::Open(fs, checkpoint));
      if (reader->schema()->FieldIndex("sidecar") < 0) return Status::OK();
    }
    SILT_ASSIGN_OR_RETURN(actions, ReadParquetCheckpoint(fs, checkpoint));
  }
  SILT_ASSIGN_OR_RETURN(std::vector<std::string> paths, SidecarPaths(actions, checkpoint));
  for (const std::string& path : paths) out->insert(std::string(fs::BaseName(path)));
  return Status::OK();
}

// PROTOCOL.md "Metadata Cleanup" steps 4-5: deletes the files under
// `_sidecars/` that no remaining checkpoint references and that are older
// than midnight UTC a day before `now_ms` (a checkpoint being written may
// not have named its sidecars yet). Nothing is read unless such a file
// exists.
Status CleanUpSidecars(fs::FileSystem* fs, const std::string& log_dir, const Listing& listing,
                       int64_t keep_from, int64_t now_ms, LogCleanupResult* result) {
  const std::string dir = fs::JoinPath(log_dir, "_sidecars");
  Result<std::vector<fs::FileInfo>> entries = fs->ListDir(dir);
  if (!entries.ok()) {
    if (entries.status().IsNotFound()) return Status::OK();
    return entries.status().WithContextParts("listing ", dir);
  }
  const int64_t cutoff_ms = TruncateToDayUtc(now_ms - kMillisPerDay);
  std::vector<const fs::FileInfo*> candidates;
  for (const fs::FileInfo& entry : *entries) {
    if (!entry.is_dir && entry.modification_time_ms < cutoff_ms) candidates.push_back(&entry);
  }
  if (candidates.empty()) return Status::OK();
  std::set<std::string> referenced;
  for (const auto& [version, path] : listing.single_checkpoints) {
    if (version < keep_from) continue;
    Status st = AddReferencedSidecars(fs, path, &referenced);
    // An unreadable checkpoint might reference any sidecar: keep them all.
    if (!st.ok()) {
      SILT_LOG_WARN("delta", "log cleanup in ", log_dir, ": sidecars kept, checkpoint ", path,
                    " unreadable: ", st.ToString());
      return Status::OK();
    }
  }
  for (const fs::FileInfo* entry : candidates) {
    if (referenced.count(std::string(fs::BaseName(entry->path))) > 0) continue;
    Result<std::string> inside = CheckInsideTable(log_dir, entry->path);
    if (!inside.ok()) continue;
    Status st = fs->DeleteFile(*inside);
    if (!st.ok() && !st.IsNotFound()) {
      return st.WithContextParts("cleaning up unreferenced sidecars in ", dir);
    }
    if (st.ok()) ++result->files_deleted;
  }
  return Status::OK();
}

}  // namespace

Result<LogFileTimes> ListLogFileTimes(fs::FileSystem* fs, const std::string& log_dir) {
  SILT_ASSIGN_OR_RETURN(std::vector<fs::FileInfo> entries, ListLog(fs, log_dir));
  return IndexLog(std::move(entries)).times;
}

int64_t TruncateToDayUtc(int64_t ms) {
  int64_t day = ms / kMillisPerDay;
  if (ms < 0 && ms % kMillisPerDay != 0) --day;
  return day * kMillisPerDay;
}

Result<int64_t> CheckpointProtectedBeforeVersion(const Protocol& protocol,
                                                 const Metadata& metadata) {
  if (!SupportsWriterFeature(protocol, "checkpointProtection")) return 0;
  std::optional<std::string> value =
      GetTableProperty(metadata.configuration, kRequireCheckpointProtectionBeforeVersion);
  if (!value) return 0;
  int64_t version = -1;
  auto [ptr, ec] = std::from_chars(value->data(), value->data() + value->size(), version);
  if (ec != std::errc() || ptr != value->data() + value->size() || version < 0) {
    return Status::InvalidArgument("table property ", kRequireCheckpointProtectionBeforeVersion,
                                   " = '", *value, "' is not a version");
  }
  return version;
}

Result<LogCleanupResult> CleanUpExpiredLogs(fs::FileSystem* fs, const std::string& log_dir,
                                            const Metadata& metadata, int64_t now_ms) {
  return CleanUpExpiredLogs(fs, log_dir, metadata, now_ms, LogCleanupOptions());
}

Result<LogCleanupResult> CleanUpExpiredLogs(fs::FileSystem* fs, const std::string& log_dir,
                                            const Metadata& metadata, int64_t now_ms,
                                            const LogCleanupOptions& options) {
  LogCleanupResult result;
  SILT_ASSIGN_OR_RETURN(bool enabled, EnableExpiredLogCleanup(metadata.configuration));
  if (!enabled) return result;
  int64_t retention_ms = 0;
  if (options.retention_ms) {
    retention_ms = *options.retention_ms;
  } else {
    SILT_ASSIGN_OR_RETURN(retention_ms, LogRetentionMs(metadata.configuration));
  }
  const int64_t cutoff_ms = options.minute_granularity ? (now_ms - retention_ms) / 60000 * 60000
                                                       : TruncateToDayUtc(now_ms - retention_ms);
  SILT_ASSIGN_OR_RETURN(std::vector<fs::FileInfo> entries, ListLog(fs, log_dir));
  // A commit's monotonic time is never before its file time, so with no
  // commit file at or before the cutoff nothing expires: a young table's
  // log (a fast stream's holds some 100,000 files after a few hours) is
  // not indexed for nothing, which doubled the listing's memory at each
  // writer's first checkpoint after midnight UTC (decision 179).
  std::optional<int64_t> oldest_commit;
  for (const fs::FileInfo& entry : entries) {
    if (entry.is_dir || ParseLogFileName(fs::BaseName(entry.path)).kind != LogFileKind::kCommit) {
      continue;
    }
    if (!oldest_commit || entry.modification_time_ms < *oldest_commit) {
      oldest_commit = entry.modification_time_ms;
    }
  }
  result.oldest_commit_file_time_ms = oldest_commit;
  if (!oldest_commit || *oldest_commit > cutoff_ms) return result;
  const Listing listing = IndexLog(std::move(entries));
  const LogFileTimes& t = listing.times;
  // The newest commit old enough to expire, then the newest complete
  // checkpoint at or before it: everything before that checkpoint goes.
  int64_t newest_expired = -1;
  for (const auto& commit : t.commits) {
    if (commit.monotonic_time_ms <= cutoff_ms) newest_expired = commit.version;
  }
  int64_t keep_from = -1;
  for (int64_t c : t.checkpoint_versions) {
    if (c <= newest_expired && c >= t.earliest_recreatable) keep_from = c;
  }
  if (keep_from <= 0) return result;
  // checkpointProtection: the protected checkpoints go only with
  // everything before them.
  const bool protected_cleanup = options.protected_before_version > 0;
  if (protected_cleanup && keep_from < options.protected_before_version) return result;
  std::vector<std::pair<int64_t, std::string>> doomed;
  for (const auto& [version, path] : listing.files) {
    if (version < keep_from) doomed.emplace_back(version, path);
  }
  std::stable_sort(doomed.begin(), doomed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  if (protected_cleanup) {
    // Commits before the checkpoints they lead to (the feature's rule (d)).
    std::stable_partition(doomed.begin(), doomed.end(), [](const auto& file) {
      return ParseLogFileName(fs::BaseName(file.second)).kind == LogFileKind::kCommit;
    });
  }
  result.kept_from_checkpoint = keep_from;
  for (const auto& [version, listed] : doomed) {
    Result<std::string> inside = CheckInsideTable(log_dir, listed);
    if (!inside.ok()) {
      SILT_LOG_WARN("delta", "log cleanup in ", log_dir, ": skipped ", listed,
                    ", listed under the log but outside it");
      continue;
    }
    const std::string& path = *inside;
    Status st = fs->DeleteFile(path);
    if (!st.ok() && !st.IsNotFound()) {
      return st.WithContextParts("cleaning up expired Delta log files in ", log_dir);
    }
    if (st.ok()) ++result.files_deleted;
  }
  // What the log holds now: every commit from the kept checkpoint on. A
  // doomed commit skipped above as outside the log was never a log file.
  result.oldest_commit_file_time_ms.reset();
  for (const auto& commit : t.commits) {
    if (commit.version < keep_from) continue;
    if (!result.oldest_commit_file_time_ms ||
        commit.file_time_ms < *result.oldest_commit_file_time_ms) {
      result.oldest_commit_file_time_ms = commit.file_time_ms;
    }
  }
  SILT_RETURN_NOT_OK(CleanUpSidecars(fs, log_dir, listing, keep_from, now_ms, &result));
  if (result.files_deleted > 0) {
    SILT_LOG_INFO("delta", "log cleanup in ", log_dir, ": deleted ", result.files_deleted,
                  " files before checkpoint ", keep_from, " (older than ",
                  FormatTimestampMillisUtc(cutoff_ms * 1000), ")");
  }
  return result;
}

}  // namespace silt::delta
