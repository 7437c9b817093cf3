// Writing Delta checkpoints (PROTOCOL.md "Checkpoints", FORMATS.md A9):
// classic `<version>.checkpoint.parquet` holding the table state at one
// version (protocol, metaData, txns, live adds, unexpired remove tombstones)
// in the column layout delta-spark writes, or V2 checkpoints with sidecars,
// then `_last_checkpoint`.
//
// The checkpoint file is written through FileSystem::OpenForWrite, which
// publishes it atomically (temp file + rename locally, one PUT on S3), so a
// reader never sees a partial checkpoint; rows are encoded in batches of
// columnar::kTargetBatchRows, so memory beyond the snapshot itself does not
// grow with the number of files.
//
// V2 checkpoints (delta.checkpointPolicy = v2) write a UUID-named top-level
// file and sidecar files, each published atomically the same way.
//
// Thread safety: one writer per DeltaTable handle at a time (a V2
// checkpoint updates the handle's sidecar plan); concurrent writers of the
// same classic checkpoint write identical content and the last rename wins.
#pragma once

#include <cstdint>
#include <string>

#include "silt/base/result.h"
#include "silt/delta/table.h"

namespace silt::delta {

struct CheckpointInfo {
  int64_t version = -1;
  int64_t num_actions = 0;  // actions in the checkpoint (`size` in _last_checkpoint)
  int64_t num_add_files = 0;
  int64_t size_in_bytes = 0;  // V2: the top-level file and its sidecars
  std::string path;           // the (top-level) checkpoint file
  // V2: sidecars written for this checkpoint, and those of the previous V2
  // checkpoint through the same handle that it references again.
  int64_t sidecars_written = 0;
  int64_t sidecars_reused = 0;
  // File actions (add, remove) encoded into Parquet for this checkpoint.
  int64_t file_actions_encoded = 0;
};

// Writes the checkpoint of `snapshot` into the log of `table`, then
// `_last_checkpoint` (only when no newer checkpoint is recorded there).
// Classic (one `<v>.checkpoint.parquet`) unless the table has
// delta.checkpointPolicy = v2 and the v2Checkpoint feature: then a V2
// checkpoint, `<v>.checkpoint.<uuid>.json` with every add and remove in
// sidecar files under `_delta_log/_sidecars/`, and `_last_checkpoint` with
// its v2Checkpoint fields. A V2 checkpoint references again the sidecars of
// the previous V2 checkpoint written through the same `table` handle whose
// actions are all unchanged, so a writer that checkpoints often encodes
// little more than what changed since (checkpoint_writer_v2.cc says how).
// A state without its checkpointed files (Snapshot::files_elided) is
// written as the sidecars of the handle's last V2 checkpoint plus one new
// sidecar (decision 135); Internal when that checkpoint is not the handle's
// last or the table takes classic checkpoints.
// Remove tombstones whose deletionTimestamp is older than
// now_ms - delta.deletedFileRetentionDuration are left out; so are txns older
// than delta.setTransactionRetentionDuration when that is set.
// Errors: NotSupported when the table needs a checkpoint kind silt does not
// write (domain metadata, row tracking); InvalidArgument for a bad table
// property; IOError from the file system.
Result<CheckpointInfo> WriteCheckpoint(DeltaTable* table, const Snapshot& snapshot, int64_t now_ms);

// True when delta-spark would checkpoint after committing `version`:
// version != 0 and version % delta.checkpointInterval == 0.
Result<bool> ShouldCheckpoint(const Metadata& metadata, int64_t version);

// The checkpoint file name: "00000000000000000010.checkpoint.parquet".
std::string CheckpointFileName(int64_t version);

}  // namespace silt::delta
