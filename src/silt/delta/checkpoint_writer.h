// Writing classic Delta checkpoints (PROTOCOL.md "Checkpoints", FORMATS.md
// A9): `<version>.checkpoint.parquet` holding the table state at one version
// (protocol, metaData, txns, live adds, unexpired remove tombstones) in the
// column layout delta-spark writes, then `_last_checkpoint`.
//
// The checkpoint file is written through FileSystem::OpenForWrite, which
// publishes it atomically (temp file + rename locally, one PUT on S3), so a
// reader never sees a partial checkpoint; rows are encoded in batches of
// columnar::kTargetBatchRows, so memory beyond the snapshot itself does not
// grow with the number of files.
//
// Thread safety: pure functions; concurrent writers of the same checkpoint
// write identical content and the last rename wins.
#pragma once

#include <cstdint>
#include <string>

#include "silt/base/result.h"
#include "silt/delta/table.h"

namespace silt::delta {

struct CheckpointInfo {
  int64_t version = -1;
  int64_t num_actions = 0;  // rows in the checkpoint (`size` in _last_checkpoint)
  int64_t num_add_files = 0;
  int64_t size_in_bytes = 0;
  std::string path;
};

// Writes the classic checkpoint of `snapshot` into the log of `table`, then
// `_last_checkpoint` (only when no newer checkpoint is recorded there).
// Remove tombstones whose deletionTimestamp is older than
// now_ms - delta.deletedFileRetentionDuration are left out; so are txns older
// than delta.setTransactionRetentionDuration when that is set.
// Errors: NotSupported when the table needs a checkpoint kind silt does not
// write (v2Checkpoint, domain metadata, row tracking); InvalidArgument for a
// bad table property; IOError from the file system.
Result<CheckpointInfo> WriteCheckpoint(DeltaTable* table, const Snapshot& snapshot, int64_t now_ms);

// True when delta-spark would checkpoint after committing `version`:
// version != 0 and version % delta.checkpointInterval == 0.
Result<bool> ShouldCheckpoint(const Metadata& metadata, int64_t version);

// The checkpoint file name: "00000000000000000010.checkpoint.parquet".
std::string CheckpointFileName(int64_t version);

}  // namespace silt::delta
