// Helpers shared by the commands that open Delta tables and checkpoints from
// a user-supplied path (`silt read`, `silt log`, `silt demo`).
//
// Thread safety: plain functions.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "silt/base/result.h"
#include "silt/delta/table.h"
#include "silt/fs/file_system.h"
#include "silt/stream/checkpoint/checkpoint.h"

namespace silt::cli {

// Opens the Delta table at `path` (local path or URI) and checks that it has
// a log. Errors: NotFound "'<path>' is not a Delta table (no commits in
// <path>/_delta_log)"; file-system errors.
Result<std::unique_ptr<delta::DeltaTable>> OpenExistingTable(const std::string& path);

// The snapshot at `version`, or the latest when `version` < 0.
Result<delta::SnapshotPtr> SnapshotOrLatest(delta::DeltaTable* table, int64_t version);

// A streaming checkpoint opened from a user-supplied directory.
struct OpenedCheckpoint {
  std::string path;  // normalized
  fs::FileSystemPtr file_system;
  std::unique_ptr<stream::CheckpointDir> checkpoint;
  std::string query_id;
};
// Errors: NotFound "'<dir>' is not a streaming checkpoint (no <dir>/metadata)";
// file-system errors.
Result<OpenedCheckpoint> OpenExistingCheckpoint(const std::string& dir);

// "2026-06-22T08:16:01.000Z" for a commit timestamp in milliseconds.
std::string FormatMillisUtc(int64_t millis);

}  // namespace silt::cli
