// DROP FEATURE deletionVectors (drop_feature_internal.h): delta.enableDeletionVectors
// unset, every file with a deletion vector rewritten (REORG ... APPLY
// (PURGE)), tombstones for the vector files still referenced by tombstones.
#include <set>

#include "silt/delta/deletion_vector.h"
#include "silt/delta/drop_feature_internal.h"
#include "silt/delta/optimize.h"
#include "silt/delta/partition_utils.h"
#include "silt/delta/table_properties.h"

namespace silt::delta::drop_feature_internal {

bool MetadataUsesDeletionVectors(const Metadata& metadata) {
  Result<bool> on = EnableDeletionVectors(metadata.configuration);
  return !on.ok() || *on;
}

Result<bool> CleanOfDeletionVectors(const Snapshot& snapshot) {
  const TableConfiguration& conf = snapshot.metadata().configuration;
  SILT_ASSIGN_OR_RETURN(bool on, EnableDeletionVectors(conf));
  if (on) return false;
  for (const AddFile& add : snapshot.files()) {
    if (add.deletion_vector) return false;
  }
  return true;
}

bool FilesUseDeletionVectors(const Snapshot& snapshot) {
  for (const AddFile& add : snapshot.files()) {
    if (add.deletion_vector) return true;
  }
  return false;
}

bool CommitUsesDeletionVectors(const CommitActions& actions) {
  for (const AddFile& add : actions.adds) {
    if (add.deletion_vector) return true;
  }
  for (const RemoveFile& remove : actions.removes) {
    if (remove.deletion_vector) return true;
  }
  return false;
}

Result<bool> FeatureDropper::PreDowngradeDeletionVectors(const SnapshotPtr& snapshot, bool clean) {
  // Disable first, so that no writer adds vectors while they are purged.
  if (!clean) SILT_RETURN_NOT_OK(UnsetProperties(snapshot, {"delta.enableDeletionVectors"}, {}));
  OptimizeOptions purge;
  purge.purge_deletion_vectors = true;
  SILT_RETURN_NOT_OK(Optimize(table_, purge).status().WithContextParts(Context()));
  SILT_RETURN_NOT_OK(DeletionVectorTombstones());
  return !clean;
}

// Tombstones for the deletion vector files that remove tombstones still
// reference, so that a client without deletion vectors does not VACUUM
// them while time travel may still need them (delta-spark's
// generateDVTombstones): one remove per such file without a tombstone of
// its own, committed even when there is none, as delta-spark does.
Status FeatureDropper::DeletionVectorTombstones() {
  SILT_ASSIGN_OR_RETURN(SnapshotPtr snapshot, table_->LatestSnapshot());
  SILT_ASSIGN_OR_RETURN(int64_t retention_ms,
                        DeletedFileRetentionMs(snapshot->metadata().configuration));
  const int64_t now = now_ms();
  std::set<std::string> plain_tombstones;
  for (const RemoveFile& r : snapshot->tombstones()) {
    if (!r.deletion_vector) plain_tombstones.insert(r.path);
  }
  std::set<std::string> dv_files;
  const std::string prefix = table_->path() + "/";
  for (const RemoveFile& r : snapshot->tombstones()) {
    if (!r.deletion_vector || r.deletion_vector->storage_type == "i") continue;
    if (r.deletion_timestamp && *r.deletion_timestamp < now - retention_ms) continue;
    Result<std::string> file = DeletionVectorFilePath(table_->path(), *r.deletion_vector);
    if (!file.ok() || file->rfind(prefix, 0) != 0) continue;  // outside the table
    std::string relative = UriEncodePath(file->substr(prefix.size()));
    if (plain_tombstones.count(relative) == 0) dv_files.insert(std::move(relative));
  }
  CommitRequest request;
  request.operation = "Deletion Vector Tombstones";
  request.derive_write_metrics = false;
  request.is_blind_append = false;
  request.honoured_features = Honoured();
  for (const std::string& path : dv_files) {
    RemoveFile remove;
    remove.path = path;
    remove.deletion_timestamp = now;
    remove.data_change = false;
    request.removes.push_back(std::move(remove));
  }
  return Commit(table_, snapshot, request).status().WithContextParts(Context());
}

}  // namespace silt::delta::drop_feature_internal
