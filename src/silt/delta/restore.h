// RESTORE (delta-spark's RestoreTableCommand): returns a Delta table's live
// file set to that of an earlier version with one new commit, so history is
// kept and the restore itself can be undone:
//
//   add    every file live in the target version but not now (dataChange true)
//   remove every file live now but not in the target version (dataChange true)
//   metaData the target version's metadata, when it differs from the current
//   commitInfo operation RESTORE {version | timestamp}, with delta-spark's
//            metrics (numRestoredFiles, numRemovedFiles, restoredFilesSize,
//            removedFilesSize, numOfFilesAfterRestore, tableSizeAfterRestore)
//
// The protocol is never downgraded. Before committing, every file to re-add
// is checked on storage: files deleted by VACUUM make the restore fail
// (NotFound naming up to 10 of them) rather than produce a table whose
// files are missing.
//
// Thread safety: reentrant.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "silt/base/result.h"
#include "silt/delta/table.h"

namespace silt::delta {

struct RestoreResult {
  int64_t version = -1;           // the RESTORE commit
  int64_t restored_version = -1;  // the version whose files are live again
  int64_t num_restored_files = 0;
  int64_t num_removed_files = 0;
  int64_t restored_bytes = 0;
  int64_t removed_bytes = 0;
  int64_t num_files_after = 0;
  int64_t table_size_after = 0;
};

// Restores `table` to `target` (a snapshot of it, from SnapshotAt or
// SnapshotAtTimestamp). `timestamp_text`, when set, is recorded as the
// operation's `timestamp` parameter instead of `version`.
// Restoring to the current state still commits (an empty RESTORE, as in
// delta-spark). Errors: InvalidArgument when target is newer than the latest
// version; NotFound when files of the target version are gone from storage;
// Conflict when a concurrent commit changed data; NotSupported from the
// write gate.
Result<RestoreResult> Restore(DeltaTable* table, const SnapshotPtr& target,
                              const std::optional<std::string>& timestamp_text = std::nullopt);

}  // namespace silt::delta
