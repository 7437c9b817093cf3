// DROP FEATURE's parts, internal to delta/drop_feature*: FeatureDropper runs
// one ALTER TABLE ... DROP FEATURE (drop_feature.h) over one table.
//
// The dispatcher (drop_feature.cc) validates the request, asks the feature's
// family whether the latest version still holds a trace of it, runs the
// family's pre-downgrade procedure, protects or truncates the history and
// commits the protocol downgrade; it also holds the commits the procedures
// share (metadata, empty commit + checkpoint). Each family's procedure lives
// in its own file: deletionVectors (drop_feature_deletion_vectors.cc),
// v2Checkpoint and checkpointProtection (drop_feature_checkpoints.cc),
// typeWidening and typeWidening-preview (drop_feature_type_widening.cc),
// columnMapping (drop_feature_column_mapping.cc), rowTracking
// (drop_feature_row_tracking.cc), and the features whose traces are table
// properties or domains: inCommitTimestamp, checkConstraints and
// domainMetadata (drop_feature_table_metadata.cc). vacuumProtocolCheck
// leaves no trace but the protocol.
//
// Thread safety: a FeatureDropper is used by one thread for one run. Errors
// name the command and the table (FeatureDropper's Context()).
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/delta/drop_feature.h"
#include "silt/delta/protocol.h"
#include "silt/delta/table.h"

namespace silt::delta::drop_feature_internal {

template <size_t N>
bool Contains(const std::string_view (&list)[N], std::string_view name) {
  return std::find(std::begin(list), std::end(list), name) != std::end(list);
}

// The writer features DROP FEATURE's commits keep intact: they move no rows
// but through OPTIMIZE's rewrites, which write column-mapped files as
// such.
const std::vector<std::string>& Honoured();

// `items` as a JSON array of strings.
std::string JsonArray(const std::vector<std::string>& items);

// delta.dropFeatureTruncateHistory.retentionDuration (24 hours by default);
// InvalidArgument for a bad interval.
Result<int64_t> TruncateHistoryRetentionMs(const Metadata& metadata);
// The same as the table states it, for messages.
std::string TruncateHistoryRetentionText(const Metadata& metadata);

// `field.metadata_json` without the members `drop` names (the others kept
// in order); Corruption when it is not a JSON object.
Result<std::string> WithoutMetadataKeys(const columnar::Field& field,
                                        bool (*drop)(std::string_view key));

// --- Per family: whether a state or an action uses the feature. The
// Clean* functions are true when the latest version holds no trace of the
// feature; MetadataUses* read a metaData action of the retained history.

// drop_feature_deletion_vectors.cc
bool MetadataUsesDeletionVectors(const Metadata& metadata);
Result<bool> CleanOfDeletionVectors(const Snapshot& snapshot);
bool FilesUseDeletionVectors(const Snapshot& snapshot);
bool CommitUsesDeletionVectors(const CommitActions& actions);

// drop_feature_checkpoints.cc
bool MetadataUsesV2Checkpoint(const Metadata& metadata);
Result<bool> CleanOfV2Checkpoint(const Snapshot& snapshot);
Result<bool> CleanOfCheckpointProtection(const Snapshot& snapshot);

// drop_feature_type_widening.cc
bool MetadataUsesTypeWidening(const Metadata& metadata);
Result<bool> CleanOfTypeWidening(const Snapshot& snapshot);

// drop_feature_column_mapping.cc
bool MetadataUsesColumnMapping(const Metadata& metadata);
Result<bool> CleanOfColumnMapping(const Snapshot& snapshot);

// drop_feature_row_tracking.cc
Result<bool> CleanOfRowTracking(const Snapshot& snapshot);
// Removes from the downgrade commit's `metadata` the row tracking
// properties, and adds to `request` the removal of the delta.rowTracking
// domain: delta-spark removes these only with the protocol.
void RemoveRowTrackingWithProtocol(const Snapshot& snapshot, Metadata* metadata,
                                   CommitRequest* request);

// drop_feature_table_metadata.cc
Result<bool> CleanOfInCommitTimestamp(const Snapshot& snapshot);
Result<bool> CleanOfCheckConstraints(const Snapshot& snapshot);
Result<bool> CleanOfDomainMetadata(const Snapshot& snapshot);

// One DROP FEATURE run over one table.
class FeatureDropper {
 public:
  FeatureDropper(DeltaTable* table, std::string feature, const DropFeatureOptions& options)
      : table_(table), feature_(std::move(feature)), options_(options) {}

  Result<DropFeatureResult> Run();

 private:
  // --- The dispatcher (drop_feature.cc).

  std::string Context() const {
    return Status::Concat("ALTER TABLE DROP FEATURE ", feature_, " on Delta table ",
                          table_->path());
  }
  int64_t now_ms() const;
  // Reader-writer features leave traces an old reader would misread in the
  // history (delta-spark's requiresHistoryProtection).
  bool RequiresHistoryProtection() const {
    return feature_ != "checkpointProtection" && IsReaderWriterFeature(feature_);
  }

  Status CheckDroppable(const Snapshot& snapshot);
  // Removes the feature's traces from the latest version; true when it had
  // to change something.
  Result<bool> PreDowngrade();
  // True when the latest version holds no trace of the feature.
  Result<bool> Clean(const Snapshot& snapshot);
  // True when an action of a retained commit, or the state at the earliest
  // checkpoint, uses the feature.
  Result<bool> HistoryUsesFeature();
  bool MetadataUsesFeature(const Metadata& metadata) const;

  // --- The commits the procedures share (drop_feature.cc).

  // Commits `metadata` with operation UNSET/SET TBLPROPERTIES.
  Status CommitMetadata(const SnapshotPtr& snapshot, Metadata metadata,
                        const std::string& operation, std::map<std::string, std::string> parameters,
                        std::map<std::string, std::string> json_parameters);
  // UNSET TBLPROPERTIES over `snapshot`: removes `keys` (case-insensitively)
  // and sets `set_instead`; commits nothing when neither names a property.
  Status UnsetProperties(const SnapshotPtr& snapshot, std::vector<std::string> keys,
                         std::map<std::string, std::string> set_instead);
  // An empty commit ("Empty Commit") and a classic checkpoint of it.
  Status EmptyCommitAndCheckpoint();
  Status CheckpointLatest();

  // --- The pre-downgrade procedures, one family a file. Each removes the
  // feature's traces from `snapshot`, the latest version, and returns true
  // when it had to change something.

  // drop_feature_deletion_vectors.cc: runs even when `clean` (the purge and
  // the tombstones are delta-spark's every time).
  Result<bool> PreDowngradeDeletionVectors(const SnapshotPtr& snapshot, bool clean);
  Status DeletionVectorTombstones();

  // drop_feature_checkpoints.cc
  Result<bool> PreDowngradeV2Checkpoint(const SnapshotPtr& snapshot);
  Result<bool> PreDowngradeCheckpointProtection(SnapshotPtr snapshot);

  // drop_feature_type_widening.cc
  Result<bool> PreDowngradeTypeWidening(const SnapshotPtr& snapshot);
  // REORG ... REWRITE_TYPE_WIDENING: rewrites the files stored in a
  // narrower type than the table's.
  Status RewriteWidenedFiles();
  // Commits the schema without delta.typeChanges ("DROP FEATURE", as
  // delta-spark's UpdateColumnMetadata records it).
  Result<bool> RemoveTypeChanges();

  // drop_feature_column_mapping.cc
  Result<bool> PreDowngradeColumnMapping(const SnapshotPtr& snapshot);

  // drop_feature_row_tracking.cc
  Result<bool> PreDowngradeRowTracking(const SnapshotPtr& snapshot);
  // ROW TRACKING UNBACKFILL commits re-adding the files that carry row ids
  // without them.
  Status UnbackfillRowIds();

  // drop_feature_table_metadata.cc
  Result<bool> PreDowngradeInCommitTimestamp(const SnapshotPtr& snapshot);
  Result<bool> PreDowngradeCheckConstraints(const SnapshotPtr& snapshot);
  Result<bool> PreDowngradeDomainMetadata(const SnapshotPtr& snapshot);

  DeltaTable* table_;
  std::string feature_;
  DropFeatureOptions options_;
};

}  // namespace silt::delta::drop_feature_internal
