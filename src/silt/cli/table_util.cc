#include "silt/cli/table_util.h"

#include "silt/cli/value_format.h"
#include "silt/fs/file_system.h"

namespace silt::cli {

Result<std::unique_ptr<delta::DeltaTable>> OpenExistingTable(const std::string& path) {
  std::string normalized = fs::NormalizePath(path);
  SILT_ASSIGN_OR_RETURN(fs::FileSystemPtr file_system, fs::FileSystemForPath(normalized));
  SILT_ASSIGN_OR_RETURN(auto table, delta::DeltaTable::Open(file_system, normalized));
  SILT_ASSIGN_OR_RETURN(bool exists, table->Exists());
  if (!exists) {
    return Status::NotFound("'", path, "' is not a Delta table (no commits in ",
                            fs::JoinPath(normalized, "_delta_log"), ")");
  }
  return table;
}

Result<delta::SnapshotPtr> SnapshotOrLatest(delta::DeltaTable* table, int64_t version) {
  if (version < 0) return table->LatestSnapshot();
  return table->SnapshotAt(version);
}

std::string FormatMillisUtc(int64_t millis) { return FormatJsonTimestamp(millis * 1000); }

}  // namespace silt::cli
