// DROP FEATURE rowTracking (drop_feature_internal.h): row ids suspended,
// every file re-added without them (ROW TRACKING UNBACKFILL); the remaining
// properties and the delta.rowTracking domain go with the downgrade commit.
#include <algorithm>
#include <string>
#include <vector>

#include "silt/base/json_writer.h"
#include "silt/base/strings.h"
#include "silt/delta/drop_feature_internal.h"
#include "silt/delta/row_tracking.h"
#include "silt/delta/table_properties.h"

namespace silt::delta::drop_feature_internal {

namespace {

// delta-spark's backfill.maxNumFiles: the files one ROW TRACKING UNBACKFILL
// commit re-adds at most.
constexpr size_t kUnbackfillFilesPerCommit = 22000;

}  // namespace

Result<bool> CleanOfRowTracking(const Snapshot& snapshot) {
  const TableConfiguration& conf = snapshot.metadata().configuration;
  // The properties and the delta.rowTracking domain that are removed by
  // the downgrade commit itself do not count.
  SILT_ASSIGN_OR_RETURN(bool on, EnableRowTracking(conf));
  SILT_ASSIGN_OR_RETURN(bool suspended, RowTrackingSuspended(conf));
  if (on || !suspended) return false;
  for (const AddFile& add : snapshot.files()) {
    if (add.base_row_id || add.default_row_commit_version) return false;
  }
  return true;
}

void RemoveRowTrackingWithProtocol(const Snapshot& snapshot, Metadata* metadata,
                                   CommitRequest* request) {
  // delta-spark removes these only with the protocol, as concurrent
  // writers may still use them while the feature is there.
  for (std::string_view key :
       {kEnableRowTracking, kRowTrackingSuspended, kMaterializedRowIdColumnName,
        kMaterializedRowCommitVersionColumnName}) {
    for (auto it = metadata->configuration.begin(); it != metadata->configuration.end();) {
      it = EqualsIgnoreCase(it->first, key) ? metadata->configuration.erase(it) : std::next(it);
    }
  }
  if (const DomainMetadata* domain = snapshot.FindDomain(std::string(kRowTrackingDomain))) {
    DomainMetadata removed = *domain;
    removed.removed = true;
    request->domain_metadata.push_back(std::move(removed));
  }
}

Result<bool> FeatureDropper::PreDowngradeRowTracking(const SnapshotPtr& snapshot) {
  const TableConfiguration& conf = snapshot->metadata().configuration;
  // Stop clients from expecting row ids and from assigning them, then
  // re-add every file without its row ids ("unbackfill"); the remaining
  // properties and the high-water mark go with the downgrade commit.
  SILT_ASSIGN_OR_RETURN(bool on, EnableRowTracking(conf));
  SILT_ASSIGN_OR_RETURN(bool suspended, RowTrackingSuspended(conf));
  if (on || !suspended) {
    Metadata metadata = snapshot->metadata();
    metadata.configuration[std::string(kEnableRowTracking)] = "false";
    metadata.configuration[std::string(kRowTrackingSuspended)] = "true";
    JsonWriter properties;
    properties.BeginObject();
    properties.Member(kEnableRowTracking, "false");
    properties.Member(kRowTrackingSuspended, "true");
    properties.EndObject();
    SILT_RETURN_NOT_OK(CommitMetadata(snapshot, std::move(metadata), "SET TBLPROPERTIES",
                                      {{"properties", properties.Take()}}, {}));
  }
  SILT_RETURN_NOT_OK(UnbackfillRowIds());
  return true;
}

Status FeatureDropper::UnbackfillRowIds() {
  SILT_ASSIGN_OR_RETURN(SnapshotPtr snapshot, table_->LatestSnapshot());
  std::vector<AddFile> files;
  for (const AddFile& add : snapshot->files()) {
    if (add.base_row_id || add.default_row_commit_version) files.push_back(add);
  }
  // delta-spark commits one batch per backfill.maxNumFiles files, none when
  // no file has row ids.
  for (size_t start = 0, batch = 0; start < files.size();
       start += kUnbackfillFilesPerCommit, ++batch) {
    if (batch > 0) {
      SILT_ASSIGN_OR_RETURN(snapshot, table_->LatestSnapshot());
    }
    CommitRequest request;
    request.operation = "ROW TRACKING UNBACKFILL";
    request.operation_parameters = {{"batchId", std::to_string(batch)}};
    request.is_blind_append = false;
    request.derive_write_metrics = false;
    request.honoured_features = Honoured();
    const size_t end = std::min(files.size(), start + kUnbackfillFilesPerCommit);
    for (size_t i = start; i < end; ++i) {
      AddFile add = files[i];
      add.base_row_id.reset();
      add.default_row_commit_version.reset();
      add.data_change = false;
      request.adds.push_back(std::move(add));
    }
    SILT_RETURN_NOT_OK(Commit(table_, snapshot, request).status().WithContextParts(Context()));
  }
  return Status::OK();
}

}  // namespace silt::delta::drop_feature_internal
