// Expired log cleanup (FORMATS.md A10 "Metadata cleanup"), as delta-spark's
// MetadataCleanup runs it after a checkpoint: commit files, checkpoints and
// `.crc` files older than delta.logRetentionDuration are deleted, but only
// those before the newest checkpoint that is itself older than the cutoff,
// so every version from that checkpoint on stays reconstructable.
//
// Also the listing helpers that time travel and history share: the commits
// of a log with their timestamps made monotonic as delta-spark does (a commit
// file whose modification time is not after its predecessor's counts as
// predecessor + 1 ms), and the earliest version that can still be rebuilt.
//
// Thread safety: pure functions over the file system; a concurrent writer
// only ever adds files newer than anything cleanup deletes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "silt/base/result.h"
#include "silt/delta/actions.h"
#include "silt/fs/file_system.h"

namespace silt::delta {

struct LogFileTimes {
  // Commits present, ascending by version, with monotonic timestamps.
  struct Commit {
    int64_t version = -1;
    int64_t file_time_ms = 0;       // modification time as stored
    int64_t monotonic_time_ms = 0;  // adjusted: strictly increasing
    std::string path;
  };
  std::vector<Commit> commits;
  // Versions of complete checkpoints, ascending.
  std::vector<int64_t> checkpoint_versions;
  // The earliest version whose snapshot can be rebuilt (commit 0, else the
  // oldest complete checkpoint followed by contiguous commits), or -1.
  int64_t earliest_recreatable = -1;
  int64_t latest = -1;
};

// Lists `log_dir` (a table's `_delta_log`). Errors: IOError from listing.
Result<LogFileTimes> ListLogFileTimes(fs::FileSystem* fs, const std::string& log_dir);

// Spark's truncateDay: midnight UTC at or before `ms`.
int64_t TruncateToDayUtc(int64_t ms);

struct LogCleanupResult {
  int64_t files_deleted = 0;
  // The checkpoint the log now starts at, or -1 when nothing was deleted.
  int64_t kept_from_checkpoint = -1;
  // The oldest modification time among the commit files the log holds
  // after this pass, when the pass listed the log and found one. Commit
  // files are never rewritten and later ones are newer, so until a cutoff
  // passes it nothing can expire and the next pass need not list the log
  // (decision 180).
  std::optional<int64_t> oldest_commit_file_time_ms;
};

// Deletes expired log files of the table whose log is `log_dir`, given its
// current metaData (delta.logRetentionDuration, delta.enableExpiredLogCleanup)
// and the time `now_ms`. The cutoff is TruncateToDayUtc(now - retention);
// files are deleted oldest version first, so an interrupted cleanup still
// leaves a contiguous log. Does nothing when cleanup is disabled or no
// complete checkpoint precedes the cutoff.
// Errors: InvalidArgument for a bad property; IOError from the file system
// (files deleted before the error stay deleted; the log is still valid).
Result<LogCleanupResult> CleanUpExpiredLogs(fs::FileSystem* fs, const std::string& log_dir,
                                            const Metadata& metadata, int64_t now_ms);

struct LogCleanupOptions {
  // Replaces delta.logRetentionDuration (DROP FEATURE ... TRUNCATE HISTORY
  // uses delta.dropFeatureTruncateHistory.retentionDuration).
  std::optional<int64_t> retention_ms;
  // The cutoff is truncated to the minute instead of the UTC day.
  bool minute_granularity = false;
  // checkpointProtection (CheckpointProtectedBeforeVersion): when > 0, the
  // checkpoints and commits before this version go only all at once (the
  // checkpoint the log keeps is at or after it), commits before
  // checkpoints; otherwise nothing is deleted, because silt does not check
  // that it supports the protocol of every version it would truncate.
  int64_t protected_before_version = 0;
};

// As above, with `options`.
Result<LogCleanupResult> CleanUpExpiredLogs(fs::FileSystem* fs, const std::string& log_dir,
                                            const Metadata& metadata, int64_t now_ms,
                                            const LogCleanupOptions& options);

// delta.requireCheckpointProtectionBeforeVersion when the protocol has the
// checkpointProtection writer feature, else 0. Errors: InvalidArgument for
// a value that is not a non-negative integer.
Result<int64_t> CheckpointProtectedBeforeVersion(const Protocol& protocol,
                                                 const Metadata& metadata);

}  // namespace silt::delta
