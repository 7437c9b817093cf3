// Replacing everything a table holds in one commit: the remove of every live
// file of the snapshot read, the caller's adds, and whatever else the
// request carries (txn, metaData), in one Delta commit. This is what
// delta-spark's DeltaSink commits for outputMode complete, and what a
// whole-table overwrite (or a MERGE/OPTIMIZE-like rewrite of every file)
// commits: readers of the new version see exactly the added files.
//
// The removes are written as delta-spark's AddFile.remove writes them:
// dataChange true, one deletionTimestamp for all of them, extendedFileMetadata
// true with the file's partitionValues and size, and its deletion vector
// (log reconciliation matches a remove to its add by path and deletion
// vector). The commit is not a blind append: it read the whole table, so a
// concurrent writer that added or removed data makes it conflict (Commit's
// rules) instead of silently losing that writer's rows.
//
// Thread safety: reentrant.
#pragma once

#include <cstdint>
#include <vector>

#include "silt/base/result.h"
#include "silt/delta/table.h"

namespace silt::delta {

// The remove action for live file `file`, as delta-spark writes it.
RemoveFile RemoveOf(const AddFile& file, int64_t deletion_timestamp_ms, bool data_change = true);
// As RemoveOf, with stats {"numRecords":N} from the add's stats, as
// delta-spark's DELETE, UPDATE and MERGE write their removes (its streaming
// complete mode and OPTIMIZE do not).
RemoveFile RemoveWithNumRecords(const AddFile& file, int64_t deletion_timestamp_ms);

// The removes of every live file of `snapshot`, in its file order.
std::vector<RemoveFile> RemoveEveryFile(const Snapshot& snapshot, int64_t deletion_timestamp_ms);

// Commits `request` on top of `read_snapshot` with every live file of the
// snapshot removed (null `read_snapshot`: the table is created and holds the
// adds). The request's own removes must be empty. Sets is_blind_append to
// false and the metric numRemovedFiles (unless given). A request whose txn
// the table already records is skipped as Commit skips it.
// Errors: InvalidArgument when request.removes is not empty, or when the
// table is append-only (delta.appendOnly) and holds files; what Commit
// returns (Conflict when a concurrent commit changed data).
Result<CommitResult> CommitReplacingAllFiles(DeltaTable* table, const SnapshotPtr& read_snapshot,
                                             CommitRequest request, int64_t deletion_timestamp_ms);

}  // namespace silt::delta
