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

}  // namespace silt::cli
