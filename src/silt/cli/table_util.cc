#include "silt/cli/table_util.h"

#include "silt/cli/value_format.h"
#include "silt/fs/file_system.h"

namespace silt::cli {

Result<std::unique_ptr<delta::DeltaTable>> OpenExistingTable(const std::string& path) {
  return delta::DeltaTable::OpenExisting(path);
}

Result<delta::SnapshotPtr> SnapshotOrLatest(delta::DeltaTable* table, int64_t version) {
  if (version < 0) return table->LatestSnapshot();
  return table->SnapshotAt(version);
}

std::string FormatMillisUtc(int64_t millis) { return FormatJsonTimestamp(millis * 1000); }

Result<OpenedCheckpoint> OpenExistingCheckpoint(const std::string& dir) {
  OpenedCheckpoint out;
  out.path = fs::NormalizePath(dir);
  SILT_ASSIGN_OR_RETURN(out.file_system, fs::FileSystemForPath(out.path));
  SILT_ASSIGN_OR_RETURN(out.checkpoint, stream::CheckpointDir::Open(out.file_system, out.path));
  Result<std::string> query_id = out.checkpoint->ReadQueryId();
  if (!query_id.ok()) {
    if (query_id.status().IsNotFound()) {
      return Status::NotFound("'", dir, "' is not a streaming checkpoint (no ",
                              fs::JoinPath(out.path, "metadata"), ")");
    }
    return query_id.status();
  }
  out.query_id = std::move(*query_id);
  return out;
}

}  // namespace silt::cli
