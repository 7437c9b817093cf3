// DROP FEATURE's dispatcher (drop_feature_internal.h): the checks, the
// history protection or truncation, the protocol downgrade commit and the
// commits the per-family procedures share.
#include "silt/delta/drop_feature.h"

#include <simdjson.h>

#include <algorithm>
#include <map>

#include "silt/base/clock.h"
#include "silt/base/json_writer.h"
#include "silt/base/logging.h"
#include "silt/base/strings.h"
#include "silt/delta/checkpoint_writer.h"
#include "silt/delta/drop_feature_internal.h"
#include "silt/delta/log_cleanup.h"
#include "silt/delta/protocol.h"
#include "silt/delta/table_properties.h"

namespace silt::delta {

namespace drop_feature_internal {

namespace {

// Every table feature delta-spark 4.4 knows outside its tests.
constexpr std::string_view kKnownFeatures[] = {"appendOnly",
                                               "invariants",
                                               "checkConstraints",
                                               "changeDataFeed",
                                               "generatedColumns",
                                               "identityColumns",
                                               "columnMapping",
                                               "timestampNtz",
                                               "variantType",
                                               "variantType-preview",
                                               "variantShredding",
                                               "variantShredding-preview",
                                               "deletionVectors",
                                               "rowTracking",
                                               "domainMetadata",
                                               "icebergCompatV1",
                                               "icebergCompatV2",
                                               "icebergCompatV3",
                                               "clustering",
                                               "allowColumnDefaults",
                                               "materializePartitionColumns",
                                               "v2Checkpoint",
                                               "coordinatedCommits-preview",
                                               "catalogManaged",
                                               "typeWidening",
                                               "typeWidening-preview",
                                               "inCommitTimestamp",
                                               "vacuumProtocolCheck",
                                               "checkpointProtection",
                                               "geospatial",
                                               "geospatial-dev"};

// The ones delta-spark 4.4 can drop (its RemovableFeature).
constexpr std::string_view kRemovableFeatures[] = {
    "checkConstraints",     "columnMapping",
    "deletionVectors",      "rowTracking",
    "domainMetadata",       "materializePartitionColumns",
    "v2Checkpoint",         "coordinatedCommits-preview",
    "catalogManaged",       "typeWidening",
    "typeWidening-preview", "inCommitTimestamp",
    "vacuumProtocolCheck",  "checkpointProtection",
    "geospatial",           "geospatial-dev"};

// The ones silt drops.
constexpr std::string_view kSiltDrops[] = {
    "deletionVectors", "v2Checkpoint",         "inCommitTimestamp",    "vacuumProtocolCheck",
    "typeWidening",    "typeWidening-preview", "checkpointProtection", "checkConstraints",
    "domainMetadata",  "rowTracking",          "columnMapping"};

// Features that require `feature` (delta-spark's requiredFeatures, reversed).
std::vector<std::string_view> DependentsOf(std::string_view feature) {
  static const std::map<std::string_view, std::vector<std::string_view>> kDependents = {
      {"domainMetadata", {"rowTracking", "clustering", "adaptiveMetadata-preview"}},
      {"columnMapping", {"icebergCompatV1", "icebergCompatV2", "icebergCompatV3"}},
      {"rowTracking", {"icebergCompatV3"}},
      {"inCommitTimestamp", {"coordinatedCommits-preview", "catalogManaged"}},
      {"vacuumProtocolCheck", {"coordinatedCommits-preview", "catalogManaged"}},
      {"variantType", {"variantShredding"}},
  };
  auto it = kDependents.find(feature);
  return it == kDependents.end() ? std::vector<std::string_view>() : it->second;
}

int64_t NowMs() { return SystemClock().NowMicros() / 1000; }

std::string LogRetentionText(const Metadata& metadata) {
  return GetTableProperty(metadata.configuration, kLogRetentionDuration)
      .value_or("interval 30 days");
}

}  // namespace

const std::vector<std::string>& Honoured() {
  static const std::vector<std::string> kFeatures = [] {
    std::vector<std::string> features = RowPreservingFeatures();
    features.push_back("columnMapping");
    return features;
  }();
  return kFeatures;
}

Result<std::string> WithoutMetadataKeys(const columnar::Field& field,
                                        bool (*drop)(std::string_view key)) {
  simdjson::dom::parser parser;
  simdjson::dom::object object;
  if (parser.parse(field.metadata_json).get(object) != simdjson::SUCCESS) {
    return Status::Corruption("the metadata of column '", field.name,
                              "' is not a JSON object: ", field.metadata_json);
  }
  JsonWriter w;
  w.BeginObject();
  for (auto [key, value] : object) {
    if (drop(key)) continue;
    w.Key(key);
    w.Raw(simdjson::minify(value));
  }
  w.EndObject();
  return w.Take();
}

Result<int64_t> TruncateHistoryRetentionMs(const Metadata& metadata) {
  std::optional<std::string> value =
      GetTableProperty(metadata.configuration, kDropFeatureTruncateHistoryRetention);
  if (!value) return 24LL * 3600 * 1000;
  return ParseIntervalMs(*value);
}

std::string TruncateHistoryRetentionText(const Metadata& metadata) {
  return GetTableProperty(metadata.configuration, kDropFeatureTruncateHistoryRetention)
      .value_or("interval 24 hours");
}

std::string JsonArray(const std::vector<std::string>& items) {
  JsonWriter w;
  w.BeginArray();
  for (const std::string& item : items) w.String(item);
  w.EndArray();
  return w.Take();
}

int64_t FeatureDropper::now_ms() const { return options_.now_ms != 0 ? options_.now_ms : NowMs(); }

Status FeatureDropper::CheckDroppable(const Snapshot& snapshot) {
  const Protocol& protocol = snapshot.protocol();
  const std::vector<std::string> supported = SupportedFeatures(protocol);
  const bool present = std::find(supported.begin(), supported.end(), feature_) != supported.end();
  if (!present && StartsWithIgnoreCase(feature_, "delta.") && IsKnownTableProperty(feature_)) {
    return Status::InvalidArgument("[DELTA_FEATURE_DROP_FEATURE_IS_DELTA_PROPERTY] Cannot drop `",
                                   feature_,
                                   "` from this table because this is a delta table property and "
                                   "not a table feature (",
                                   Context(), ")");
  }
  if (!Contains(kKnownFeatures, feature_)) {
    return Status::InvalidArgument("[DELTA_FEATURE_DROP_UNSUPPORTED_CLIENT_FEATURE] Cannot drop ",
                                   feature_, " because it is not supported by this Delta version (",
                                   Context(), ")");
  }
  if (!present) {
    return Status::InvalidArgument("[DELTA_FEATURE_DROP_FEATURE_NOT_PRESENT] Cannot drop ",
                                   feature_,
                                   " from this table because it is not currently present in the "
                                   "table's protocol (",
                                   Context(), ")");
  }
  if (!Contains(kRemovableFeatures, feature_)) {
    return Status::InvalidArgument("[DELTA_FEATURE_DROP_NONREMOVABLE_FEATURE] Cannot drop ",
                                   feature_, " because dropping this feature is not supported (",
                                   Context(), ")");
  }
  const bool history_eligible = RequiresHistoryProtection() || feature_ == "checkpointProtection";
  if (options_.truncate_history && !history_eligible) {
    return Status::InvalidArgument(
        "[DELTA_FEATURE_DROP_HISTORY_TRUNCATION_NOT_ALLOWED] The particular feature does not "
        "require history truncation (",
        Context(), ")");
  }
  if (feature_ == "checkpointProtection" && !options_.truncate_history) {
    return Status::InvalidArgument(
        "[DELTA_FEATURE_CAN_ONLY_DROP_CHECKPOINT_PROTECTION_WITH_HISTORY_TRUNCATION] Could not "
        "drop the Checkpoint Protection feature. This feature can only be dropped by truncating "
        "history. Please try again with the TRUNCATE HISTORY option: ALTER TABLE table_name DROP "
        "FEATURE checkpointProtection TRUNCATE HISTORY (",
        Context(), ")");
  }
  std::vector<std::string> dependents;
  for (std::string_view dependent : DependentsOf(feature_)) {
    if (std::find(supported.begin(), supported.end(), dependent) != supported.end()) {
      dependents.emplace_back(dependent);
    }
  }
  if (!dependents.empty()) {
    std::string list;
    for (const std::string& d : dependents) list += (list.empty() ? "" : ", ") + d;
    return Status::InvalidArgument(
        "[DELTA_FEATURE_DROP_DEPENDENT_FEATURE] Cannot drop table "
        "feature `",
        feature_, "` because some other features (", list, ") in this table depends on `", feature_,
        "`. Consider dropping them first before dropping this feature (", Context(), ")");
  }
  if (!Contains(kSiltDrops, feature_)) {
    return Status::NotSupported(Context(), ": dropping table feature ", feature_,
                                " is not supported by silt yet (delta-spark can drop it)");
  }
  return CheckWriteSupported(protocol, snapshot.metadata(), Honoured()).WithContextParts(Context());
}

bool FeatureDropper::MetadataUsesFeature(const Metadata& metadata) const {
  if (feature_ == "deletionVectors") return MetadataUsesDeletionVectors(metadata);
  if (feature_ == "v2Checkpoint") return MetadataUsesV2Checkpoint(metadata);
  if (feature_ == "typeWidening" || feature_ == "typeWidening-preview") {
    return MetadataUsesTypeWidening(metadata);
  }
  if (feature_ == "columnMapping") return MetadataUsesColumnMapping(metadata);
  return false;
}

Result<bool> FeatureDropper::Clean(const Snapshot& snapshot) {
  if (feature_ == "deletionVectors") return CleanOfDeletionVectors(snapshot);
  if (feature_ == "v2Checkpoint") return CleanOfV2Checkpoint(snapshot);
  if (feature_ == "inCommitTimestamp") return CleanOfInCommitTimestamp(snapshot);
  if (feature_ == "typeWidening" || feature_ == "typeWidening-preview") {
    return CleanOfTypeWidening(snapshot);
  }
  if (feature_ == "checkpointProtection") return CleanOfCheckpointProtection(snapshot);
  if (feature_ == "checkConstraints") return CleanOfCheckConstraints(snapshot);
  if (feature_ == "columnMapping") return CleanOfColumnMapping(snapshot);
  if (feature_ == "domainMetadata") return CleanOfDomainMetadata(snapshot);
  if (feature_ == "rowTracking") return CleanOfRowTracking(snapshot);
  return true;  // vacuumProtocolCheck leaves no trace but the protocol
}

Status FeatureDropper::CommitMetadata(const SnapshotPtr& snapshot, Metadata metadata,
                                      const std::string& operation,
                                      std::map<std::string, std::string> parameters,
                                      std::map<std::string, std::string> json_parameters) {
  CommitRequest request;
  request.operation = operation;
  request.operation_parameters = std::move(parameters);
  request.operation_parameters_json = std::move(json_parameters);
  request.is_blind_append = false;
  request.derive_write_metrics = false;
  request.new_metadata = std::move(metadata);
  request.honoured_features = Honoured();
  return Commit(table_, snapshot, request).status().WithContextParts(Context());
}

Status FeatureDropper::UnsetProperties(const SnapshotPtr& snapshot, std::vector<std::string> keys,
                                       std::map<std::string, std::string> set_instead) {
  Metadata metadata = snapshot->metadata();
  std::vector<std::string> named;
  for (const std::string& key : keys) {
    for (auto it = metadata.configuration.begin(); it != metadata.configuration.end();) {
      if (EqualsIgnoreCase(it->first, key)) {
        it = metadata.configuration.erase(it);
        named.push_back(key);
      } else {
        ++it;
      }
    }
  }
  for (const auto& [key, value] : set_instead) {
    metadata.configuration[key] = value;
    named.push_back(key);
  }
  if (named.empty()) return Status::OK();
  return CommitMetadata(snapshot, std::move(metadata), "UNSET TBLPROPERTIES",
                        {{"properties", JsonArray(named)}}, {{"ifExists", "true"}});
}

Status FeatureDropper::CheckpointLatest() {
  SILT_ASSIGN_OR_RETURN(SnapshotPtr snapshot, table_->LatestSnapshot());
  Result<CheckpointInfo> written = WriteCheckpoint(table_, *snapshot, now_ms());
  if (!written.ok()) {
    return Status::IOError("[DELTA_FEATURE_DROP_CHECKPOINT_FAILED] Dropping ", feature_,
                           " failed due to a failure in checkpoint creation (", Context(),
                           "): ", written.status().ToString());
  }
  return Status::OK();
}

Status FeatureDropper::EmptyCommitAndCheckpoint() {
  SILT_ASSIGN_OR_RETURN(SnapshotPtr snapshot, table_->LatestSnapshot());
  CommitRequest request;
  request.operation = "Empty Commit";
  request.derive_write_metrics = false;
  request.honoured_features = Honoured();
  SILT_RETURN_NOT_OK(Commit(table_, snapshot, request).status().WithContextParts(Context()));
  return CheckpointLatest();
}

Result<bool> FeatureDropper::PreDowngrade() {
  SILT_ASSIGN_OR_RETURN(SnapshotPtr snapshot, table_->LatestSnapshot());
  SILT_ASSIGN_OR_RETURN(bool clean, Clean(*snapshot));
  if (feature_ == "deletionVectors") return PreDowngradeDeletionVectors(snapshot, clean);
  if (clean) return false;
  if (feature_ == "v2Checkpoint") return PreDowngradeV2Checkpoint(snapshot);
  if (feature_ == "inCommitTimestamp") return PreDowngradeInCommitTimestamp(snapshot);
  if (feature_ == "typeWidening" || feature_ == "typeWidening-preview") {
    return PreDowngradeTypeWidening(snapshot);
  }
  if (feature_ == "columnMapping") return PreDowngradeColumnMapping(snapshot);
  if (feature_ == "checkConstraints") return PreDowngradeCheckConstraints(snapshot);
  if (feature_ == "domainMetadata") return PreDowngradeDomainMetadata(snapshot);
  if (feature_ == "rowTracking") return PreDowngradeRowTracking(snapshot);
  if (feature_ == "checkpointProtection") return PreDowngradeCheckpointProtection(snapshot);
  return false;
}

Result<bool> FeatureDropper::HistoryUsesFeature() {
  SILT_ASSIGN_OR_RETURN(LogFileTimes times,
                        ListLogFileTimes(table_->file_system().get(), table_->log_path()));
  // The state at the earliest checkpoint (tombstones left out, as
  // delta-spark leaves them out).
  if (times.earliest_recreatable > 0) {
    SILT_ASSIGN_OR_RETURN(SnapshotPtr earliest, table_->SnapshotAt(times.earliest_recreatable));
    if (MetadataUsesFeature(earliest->metadata())) return true;
    if (feature_ == "deletionVectors" && FilesUseDeletionVectors(*earliest)) return true;
  }
  for (const LogFileTimes::Commit& commit : times.commits) {
    SILT_ASSIGN_OR_RETURN(CommitActions actions, table_->ReadCommit(commit.version));
    if (actions.metadata && MetadataUsesFeature(*actions.metadata)) return true;
    if (feature_ == "deletionVectors" && CommitUsesDeletionVectors(actions)) return true;
  }
  return false;
}

Result<DropFeatureResult> FeatureDropper::Run() {
  SILT_ASSIGN_OR_RETURN(SnapshotPtr snapshot, table_->LatestSnapshot());
  SILT_RETURN_NOT_OK(CheckDroppable(*snapshot));
  const bool history = RequiresHistoryProtection();
  SILT_ASSIGN_OR_RETURN(bool changed, PreDowngrade());
  if (history && !options_.truncate_history) {
    // Barrier checkpoints: a client that does not know the feature never
    // has to replay a commit before them.
    for (int i = 0; i < 3; ++i) SILT_RETURN_NOT_OK(EmptyCommitAndCheckpoint());
  }
  if (history && options_.truncate_history) {
    SILT_RETURN_NOT_OK(EmptyCommitAndCheckpoint());
    if (changed) {
      SILT_ASSIGN_OR_RETURN(SnapshotPtr latest, table_->LatestSnapshot());
      return Status::InvalidArgument(
          "[DELTA_FEATURE_DROP_WAIT_FOR_RETENTION_PERIOD] Dropping ", feature_,
          " was partially successful. The feature is now no longer used in the current version "
          "of the table. However, the feature is still present in historical versions of the "
          "table. The table feature cannot be dropped from the table protocol until these "
          "historical versions have expired. To drop the table feature from the protocol, please "
          "wait for the historical versions to expire, and then repeat this command. The "
          "retention period for historical versions is currently configured as "
          "delta.logRetentionDuration=",
          LogRetentionText(latest->metadata()),
          ". Alternatively, please wait for the TRUNCATE HISTORY retention period to expire (",
          TruncateHistoryRetentionText(latest->metadata()),
          ") and then run: ALTER TABLE table_name DROP FEATURE feature_name TRUNCATE HISTORY (",
          Context(), ")");
    }
  }
  SILT_ASSIGN_OR_RETURN(snapshot, table_->LatestSnapshot());
  SILT_ASSIGN_OR_RETURN(bool clean, Clean(*snapshot));
  if (!clean) {
    return Status::Conflict(
        "[DELTA_FEATURE_DROP_CONFLICT_REVALIDATION_FAIL] Cannot drop feature because a "
        "concurrent transaction modified the table. Please try the operation again (",
        Context(), ")");
  }
  if (history && options_.truncate_history) {
    LogCleanupOptions cleanup;
    SILT_ASSIGN_OR_RETURN(cleanup.retention_ms, TruncateHistoryRetentionMs(snapshot->metadata()));
    cleanup.minute_granularity = true;
    SILT_ASSIGN_OR_RETURN(
        cleanup.protected_before_version,
        CheckpointProtectedBeforeVersion(snapshot->protocol(), snapshot->metadata()));
    SILT_RETURN_NOT_OK(CleanUpExpiredLogs(table_->file_system().get(), table_->log_path(),
                                          snapshot->metadata(), now_ms(), cleanup)
                           .status()
                           .WithContextParts(Context()));
    SILT_ASSIGN_OR_RETURN(bool used, HistoryUsesFeature());
    if (used) {
      return Status::InvalidArgument(
          "[DELTA_FEATURE_DROP_HISTORICAL_VERSIONS_EXIST] Cannot drop ", feature_,
          " because the Delta log contains historical versions that use the feature. Please "
          "wait until the history retention period (delta.logRetentionDuration=",
          LogRetentionText(snapshot->metadata()),
          ") has passed since the feature was last active. Alternatively, please wait for the "
          "TRUNCATE HISTORY retention period to expire (",
          TruncateHistoryRetentionText(snapshot->metadata()),
          ") and then run: ALTER TABLE table_name DROP FEATURE feature_name TRUNCATE HISTORY (",
          Context(), ")");
    }
  }

  Protocol protocol = snapshot->protocol();
  Metadata metadata = snapshot->metadata();
  if (history && !options_.truncate_history) {
    AddTableFeature(&protocol, "checkpointProtection");
    metadata.configuration[std::string(kRequireCheckpointProtectionBeforeVersion)] =
        std::to_string(snapshot->version() + 1);
  }
  protocol = RemoveTableFeature(protocol, feature_);
  CommitRequest request;
  if (feature_ == "rowTracking") RemoveRowTrackingWithProtocol(*snapshot, &metadata, &request);
  request.operation = "DROP FEATURE";
  request.operation_parameters = {{"featureName", feature_}};
  request.operation_parameters_json = {
      {"truncateHistory", options_.truncate_history ? "true" : "false"}};
  request.is_blind_append = false;
  request.derive_write_metrics = false;
  request.new_protocol = protocol;
  request.new_metadata = std::move(metadata);
  request.honoured_features = Honoured();
  // A concurrent commit that is not a blind append may have brought the
  // feature back (a deletion vector): such a commit is a conflict.
  CommitRequest::ReadSet read;
  read.whole_table = true;
  request.read_set = read;
  SILT_ASSIGN_OR_RETURN_CTX(CommitResult committed, Commit(table_, snapshot, request), Context());
  if (history && !options_.truncate_history) SILT_RETURN_NOT_OK(CheckpointLatest());
  SILT_LOG_INFO("delta", Context(), ": dropped at version ", committed.version);
  return DropFeatureResult{committed.version, protocol};
}

}  // namespace drop_feature_internal

Result<DropFeatureResult> DropFeature(DeltaTable* table, const std::string& feature,
                                      const DropFeatureOptions& options) {
  if (table == nullptr) return Status::InvalidArgument("DropFeature needs a table");
  return drop_feature_internal::FeatureDropper(table, feature, options).Run();
}

}  // namespace silt::delta
