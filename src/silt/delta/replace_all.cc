#include "silt/delta/replace_all.h"

#include <string>
#include <utility>

#include "silt/delta/stats.h"

namespace silt::delta {

RemoveFile RemoveOf(const AddFile& file, int64_t deletion_timestamp_ms, bool data_change) {
  RemoveFile remove;
  remove.path = file.path;
  remove.deletion_timestamp = deletion_timestamp_ms;
  remove.data_change = data_change;
  remove.extended_file_metadata = true;
  remove.partition_values = file.partition_values;
  remove.size = file.size;
  remove.deletion_vector = file.deletion_vector;
  remove.base_row_id = file.base_row_id;
  remove.default_row_commit_version = file.default_row_commit_version;
  return remove;
}

RemoveFile RemoveWithNumRecords(const AddFile& file, int64_t deletion_timestamp_ms) {
  RemoveFile remove = RemoveOf(file, deletion_timestamp_ms);
  if (file.stats) {
    if (std::optional<int64_t> n = StatsNumRecords(*file.stats)) {
      remove.stats = "{\"numRecords\":" + std::to_string(*n) + "}";
    }
  }
  return remove;
}

std::vector<RemoveFile> RemoveEveryFile(const Snapshot& snapshot, int64_t deletion_timestamp_ms) {
  std::vector<RemoveFile> removes;
  removes.reserve(snapshot.files().size());
  for (const AddFile& file : snapshot.files()) {
    removes.push_back(RemoveOf(file, deletion_timestamp_ms));
  }
  return removes;
}

Result<CommitResult> CommitReplacingAllFiles(DeltaTable* table, const SnapshotPtr& read_snapshot,
                                             CommitRequest request, int64_t deletion_timestamp_ms) {
  if (table == nullptr) return Status::InvalidArgument("CommitReplacingAllFiles needs a table");
  if (!request.removes.empty()) {
    return Status::InvalidArgument("replacing every file of Delta table ", table->path(),
                                   ": the request already removes files");
  }
  if (read_snapshot != nullptr) {
    request.removes = RemoveEveryFile(*read_snapshot, deletion_timestamp_ms);
  }
  // Reading the whole table makes the commit depend on every file, as
  // delta-spark's txn.filterFiles() does.
  request.is_blind_append = false;
  request.operation_metrics.emplace("numRemovedFiles", std::to_string(request.removes.size()));
  return Commit(table, read_snapshot, request);
}

}  // namespace silt::delta
