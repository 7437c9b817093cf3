// VACUUM (FORMATS.md A13): deletes the files under a Delta table's
// directory that no version within the retention window needs, as
// delta-spark's VacuumCommand does:
//
//   cutoff = now - retention (default: delta.deletedFileRetentionDuration,
//            1 week)
//   keep   = the latest snapshot's live files (and their deletion vector
//            files) + every file removed at or after the cutoff (tombstones
//            still inside the window, and their deletion vector files)
//   delete = files listed under the table, not hidden, not in `keep`, and
//            last modified before the cutoff.
//
// Hidden paths are never deleted on their own: any path component starting
// with '_' or '.' (so `_delta_log`, `_checkpoints`, `.crc` files), except
// `_change_data`, `_delta_index` and partition directories of a partition
// column whose name starts with '_'. The one exception: the Hadoop checksum
// sidecar `.<name>.crc` of a file VACUUM deletes goes with it, as in
// delta-spark (Hadoop's ChecksumFileSystem deletes it with the file).
//
// Nothing outside the table directory is ever deleted, whatever the log
// says: every candidate goes through CheckInsideTable (table_root.h), and one
// that would escape (`../x`, `%2E%2E/x`, an absolute path or URI elsewhere)
// is skipped and reported in VacuumResult::skipped, as is a hidden file named
// by a remove. Files written by a writer that has not committed yet are
// younger than any sensible cutoff, which is what protects them.
//
// Tombstones are gathered from every JSON commit still in the log plus the
// newest readable checkpoint: a superset of the snapshot's tombstones, so
// VACUUM may keep more than delta-spark would, never less.
//
// Lite mode (delta-spark's VACUUM LITE) does not list the table: the
// candidates are the files of `remove` actions older than the cutoff, in the
// JSON commits still in the log. It refuses (InvalidArgument) when the log
// no longer starts at version 0 and no completed VACUUM is recorded in it,
// because the removes of the cleaned-up commits are then unknown.
//
// Thread safety: reentrant; safe beside concurrent writers (see above).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "silt/base/clock.h"
#include "silt/base/result.h"
#include "silt/delta/table.h"

namespace silt::delta {

struct VacuumOptions {
  // Retention window; nullopt = the table's delta.deletedFileRetentionDuration.
  std::optional<int64_t> retention_ms;
  // Spark's spark.databricks.delta.retentionDurationCheck.enabled: refuse a
  // retention shorter than the table's deletedFileRetentionDuration.
  bool retention_check = true;
  bool dry_run = false;
  bool lite = false;
  // Record VACUUM START / VACUUM END commits (commitInfo only), as
  // delta-spark does on file systems other than S3. nullopt = delta-spark's
  // default for the table's storage (off for s3:// and s3a://).
  std::optional<bool> log_commits;
  // Time source for the cutoff (tests); null = the system clock.
  Clock* clock = nullptr;
};

struct VacuumResult {
  int64_t cutoff_ms = 0;
  int64_t retention_ms = 0;
  int64_t default_retention_ms = 0;
  // Full paths of the files deleted (dry run: that would be deleted), sorted.
  std::vector<std::string> files;
  int64_t bytes = 0;
  // The Hadoop checksum sidecars (`.<name>.crc`, which Spark writes beside
  // each file on local and HDFS storage) of those files, deleted with them
  // (dry run: that would be), as delta-spark's VACUUM deletes them. Not
  // counted in `deleted` or `bytes`, as delta-spark does not count them.
  std::vector<std::string> checksum_files;
  // Crash leftovers: temp files of writes that never published (the local
  // file system's hidden `.<name>.<pid>-<nonce>-<n>.tmp`, in data
  // directories and `_delta_log`), older than the cutoff; deleted with the
  // files (dry run: that would be), full VACUUM only. Not counted in
  // `deleted` or `bytes`, nor in the VACUUM commits' metrics.
  std::vector<std::string> temp_files;
  // Files actually deleted (0 in a dry run; fewer than files.size() when
  // some were already gone).
  int64_t deleted = 0;
  // Candidates left alone, one line each: the path the log (or listing)
  // gave and why (outside the table root, hidden). Also logged as warnings.
  std::vector<std::string> skipped;
  // Directories under the table that were listed, plus the table root.
  int64_t directories = 0;
  // The VACUUM START / END versions, -1 when not recorded.
  int64_t start_version = -1;
  int64_t end_version = -1;
};

// Whether a path component is hidden from VACUUM (see the header comment).
bool IsHiddenForVacuum(std::string_view name, const std::vector<std::string>& partition_columns);

// Runs VACUUM on `table`.
// Errors: InvalidArgument for a negative retention, or a retention shorter
// than delta.deletedFileRetentionDuration while retention_check is on (the
// message names both durations); NotSupported when the write protocol gate
// refuses the table (delta-spark checks the writer protocol before VACUUM,
// which the vacuumProtocolCheck feature makes mandatory for every client);
// NotFound when the path is not a Delta table; IOError.
Result<VacuumResult> Vacuum(DeltaTable* table, const VacuumOptions& options);

// "168 hours", "1.5 hours", "30 minutes" — a retention for messages.
std::string FormatRetention(int64_t ms);

}  // namespace silt::delta
