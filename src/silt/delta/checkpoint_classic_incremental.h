// Classic checkpoints of a blind appender built from the previous one
// (decision 161): the checkpoint `<v>.checkpoint.parquet` is one Parquet
// file, as the protocol says, whose row groups are laid out so that the next
// checkpoint can copy most of them byte for byte (parquet/row_group_copy.h)
// instead of encoding the whole table state again:
//
//   [frozen add groups][tail add group][head group]
//
// Frozen add groups hold add rows only and are never re-encoded: each later
// checkpoint copies their pages (merged into fewer row groups, see below).
// The tail group holds the adds of the last few checkpoints (fewer than
// kClassicTailAdds); the handle keeps those adds in memory and the next
// checkpoint encodes them again with the adds since, freezing the lot once
// they reach kClassicTailAdds. The head group holds
// protocol, metaData, txns and domainMetadata rows, encoded anew every time
// by the classic checkpoint writer itself (WriteCheckpoint, into memory).
// Every row is the one WriteCheckpoint writes from the whole state, so the
// checkpoint holds the same actions (as a set); only the row order and
// the row groups differ, and the page index is left out.
//
// The handle's plan (ClassicCheckpointPlan) records the last such
// checkpoint: its version and file, the number of frozen groups and the
// tail adds. With DeltaTable::set_elide_checkpointed_files, the writer's
// state then drops every file that checkpoint holds (Snapshot::files_elided,
// as decision 135 does for V2 checkpoints), so the writer holds only the
// files added since plus the tail.
//
// Staged adds (decision 190): a streaming writer's checkpoints are paced by
// bytes (decision 189), so the commits between two of them grow with the
// table and so would the files its state holds. Once the state holds
// kClassicStageAdds files added since the last checkpoint, and no
// checkpoint is waiting or running through the handle, those files are
// encoded as add rows (a row group in memory, a seventh of their size as
// AddFile structs) into the plan and dropped from the state; the next
// checkpoint copies the staged row groups after the frozen ones, as frozen
// groups themselves.
//
// Merged frozen groups (decision 193): the frozen groups, copied whole by
// every checkpoint, would grow in number with the table (one per
// kClassicTailAdds adds), and with them the footer every checkpoint reads,
// rebuilds and writes. Add row groups are written without dictionary pages,
// so that a checkpoint can copy several of them as one row group, column
// chunk after column chunk (RowGroupCopier::AppendMerged: pages copied, not
// decoded); consecutive frozen groups are packed so into groups of at most
// kClassicGroupBytes (PackFrozenGroups). Earlier full groups are copied as
// they are; only the last one grows.
//
// Thread safety: one checkpoint per handle at a time (the commit path
// writes these inline).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/types.h"
#include "silt/delta/actions.h"
#include "silt/delta/checkpoint_writer.h"
#include "silt/delta/table.h"
#include "silt/fs/file_system.h"

namespace silt::delta {

// Adds in the tail group before they are frozen into their own row group.
constexpr int64_t kClassicTailAdds = 2'048;
// Files added since the last checkpoint a writer's state holds before they
// are staged (see above).
constexpr int64_t kClassicStageAdds = kClassicTailAdds;

// The most bytes (column chunks, compressed) of a merged frozen row group:
// what a reader buffers for one row group at most is bounded as with the
// 128 MB row groups of Spark's own checkpoints, and the footer holds one
// row group per 32 MiB of checkpoint (a state of ~200,000 files).
constexpr int64_t kClassicGroupBytes = 32LL * 1024 * 1024;

// Packs consecutive row groups of `bytes[i]` bytes into runs of at most
// `max_bytes` (a group larger than that is a run alone): returns where each
// run ends (exclusive), in order. Greedy from the front: a run ends where
// the next group does not fit, so packing the runs of one checkpoint and the
// groups after them again keeps every run but the last as it was.
std::vector<size_t> PackFrozenGroups(const std::vector<int64_t>& bytes, int64_t max_bytes);

// What the last incremental classic checkpoint written through a handle
// holds (see above).
struct ClassicCheckpointPlan {
  int64_t version = -1;
  std::string table_id;
  bool write_stats = true;
  std::string file_name;  // in _delta_log
  int64_t file_size = 0;
  size_t num_row_groups = 0;     // all of them
  size_t num_frozen_groups = 0;  // the first ones: add rows only
  int64_t num_frozen_adds = 0;
  std::vector<AddFile> tail;  // the adds of the tail group, by path
  // The state the checkpoint was written from: the paths of its files()
  // (sorted) and its elided_since(), so that a writer whose state has moved
  // on meanwhile (a checkpoint written in the background) drops exactly
  // the files the checkpoint holds (DeltaTable::ElideClassicCheckpointedFiles).
  std::vector<std::string> state_paths;
  int64_t state_elided_since = -1;
  // Adds since `version` the writer's state no longer holds (decision 190):
  // Parquet files of add rows in `staged_fs` (memory), in the checkpoint
  // schema `schema` (this checkpoint's, read back), in staging order.
  // Appended to only on the writer's thread while no checkpoint is waiting
  // or running through the handle, the only other reader.
  columnar::SchemaPtr schema;
  fs::FileSystemPtr staged_fs;
  std::vector<std::string> staged_files;
  int64_t num_staged_adds = 0;
};

// True when the writer's checkpoint of `snapshot` through `table` takes the
// incremental classic layout: the handle elides checkpointed files, the
// table takes classic checkpoints (no v2 policy with the v2Checkpoint
// feature), and the state has no tombstone and no deletion vector.
// Errors: InvalidArgument for a bad table property.
Result<bool> UsesIncrementalClassicCheckpoint(const DeltaTable& table, const Snapshot& snapshot);

// The checkpoint a writer writes after its commit at snapshot.version():
// WriteIncrementalClassicCheckpoint when UsesIncrementalClassicCheckpoint,
// else WriteCheckpoint (which also refuses a state without its
// checkpointed files that cannot be written).
Result<CheckpointInfo> WriteWriterCheckpoint(DeltaTable* table, const Snapshot& snapshot,
                                             int64_t now_ms);

// Writes the classic checkpoint of `snapshot` in the layout above, then
// `_last_checkpoint` (unless it names a newer version), and records the plan
// in `table`. A whole state (not files_elided) is encoded whole; a state
// without its checkpointed files needs the handle's plan at
// snapshot.elided_since() and that checkpoint file unchanged (same size and
// row groups), and copies its frozen groups and the plan's staged ones. Errors: Internal when the
// state is elided and the plan or the file does not match (the caller reads the state whole again);
// as WriteCheckpoint otherwise; Corruption / IOError reading the previous checkpoint.
Result<CheckpointInfo> WriteIncrementalClassicCheckpoint(DeltaTable* table,
                                                         const Snapshot& snapshot, int64_t now_ms);

}  // namespace silt::delta
