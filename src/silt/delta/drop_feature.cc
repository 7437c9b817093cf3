#include "silt/delta/drop_feature.h"

#include <algorithm>
#include <map>
#include <set>

#include "silt/base/clock.h"
#include "silt/base/json_writer.h"
#include "silt/base/logging.h"
#include "silt/base/strings.h"
#include "silt/delta/checkpoint_writer.h"
#include "silt/delta/deletion_vector.h"
#include "silt/delta/log_cleanup.h"
#include "silt/delta/optimize.h"
#include "silt/delta/partition_utils.h"
#include "silt/delta/protocol.h"
#include "silt/delta/table_properties.h"

namespace silt::delta {

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
    "deletionVectors", "v2Checkpoint",         "inCommitTimestamp",   "vacuumProtocolCheck",
    "typeWidening",    "typeWidening-preview", "checkpointProtection"};

template <size_t N>
bool Contains(const std::string_view (&list)[N], std::string_view name) {
  return std::find(std::begin(list), std::end(list), name) != std::end(list);
}

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

bool HasTypeChanges(const columnar::DataType& type) {
  switch (type.id()) {
    case columnar::TypeId::kStruct:
      for (const columnar::Field& field : type.fields()) {
        if (field.metadata_json.find("\"delta.typeChanges\"") != std::string::npos) return true;
        if (HasTypeChanges(*field.type)) return true;
      }
      return false;
    case columnar::TypeId::kArray: return HasTypeChanges(*type.element_type());
    case columnar::TypeId::kMap:
      return HasTypeChanges(*type.key_type()) || HasTypeChanges(*type.value_type());
    default: return false;
  }
}

// delta.dropFeatureTruncateHistory.retentionDuration (24 hours by default).
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

std::string LogRetentionText(const Metadata& metadata) {
  return GetTableProperty(metadata.configuration, kLogRetentionDuration)
      .value_or("interval 30 days");
}

std::string JsonArray(const std::vector<std::string>& items) {
  JsonWriter w;
  w.BeginArray();
  for (const std::string& item : items) w.String(item);
  w.EndArray();
  return w.Take();
}

// One DROP FEATURE run over one table.
class FeatureDropper {
 public:
  FeatureDropper(DeltaTable* table, std::string feature, const DropFeatureOptions& options)
      : table_(table), feature_(std::move(feature)), options_(options) {}

  Result<DropFeatureResult> Run();

 private:
  std::string Context() const {
    return Status::Concat("ALTER TABLE DROP FEATURE ", feature_, " on Delta table ",
                          table_->path());
  }
  int64_t now_ms() const { return options_.now_ms != 0 ? options_.now_ms : NowMs(); }
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

  // Commits `metadata` with operation UNSET/SET TBLPROPERTIES.
  Status CommitMetadata(const SnapshotPtr& snapshot, Metadata metadata,
                        const std::string& operation, std::map<std::string, std::string> parameters,
                        std::map<std::string, std::string> json_parameters);
  // An empty commit ("Empty Commit") and a classic checkpoint of it.
  Status EmptyCommitAndCheckpoint();
  Status CheckpointLatest();
  Status DeletionVectorTombstones();

  DeltaTable* table_;
  std::string feature_;
  DropFeatureOptions options_;
};

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
  if ((feature_ == "typeWidening" || feature_ == "typeWidening-preview") &&
      HasTypeChanges(*snapshot.schema())) {
    return Status::NotSupported(
        Context(),
        ": the schema records type changes (delta.typeChanges), whose data files would have to "
        "be rewritten in the wider types; silt does not do that yet");
  }
  return CheckWriteSupported(protocol, snapshot.metadata(), RowPreservingFeatures())
      .WithContextParts(Context());
}

bool FeatureDropper::MetadataUsesFeature(const Metadata& metadata) const {
  if (feature_ == "deletionVectors") {
    Result<bool> on = EnableDeletionVectors(metadata.configuration);
    return !on.ok() || *on;
  }
  if (feature_ == "v2Checkpoint") {
    Result<bool> v2 = CheckpointPolicyV2(metadata.configuration);
    return !v2.ok() || *v2;
  }
  if (feature_ == "typeWidening" || feature_ == "typeWidening-preview") {
    return metadata.schema != nullptr && HasTypeChanges(*metadata.schema);
  }
  return false;
}

Result<bool> FeatureDropper::Clean(const Snapshot& snapshot) {
  const TableConfiguration& conf = snapshot.metadata().configuration;
  if (feature_ == "deletionVectors") {
    SILT_ASSIGN_OR_RETURN(bool on, EnableDeletionVectors(conf));
    if (on) return false;
    for (const AddFile& add : snapshot.files()) {
      if (add.deletion_vector) return false;
    }
    return true;
  }
  if (feature_ == "v2Checkpoint") {
    SILT_ASSIGN_OR_RETURN(bool v2, CheckpointPolicyV2(conf));
    return !v2;
  }
  if (feature_ == "inCommitTimestamp") {
    SILT_ASSIGN_OR_RETURN(bool on, EnableInCommitTimestamps(conf));
    return !on && !GetTableProperty(conf, kInCommitTimestampEnablementVersion) &&
           !GetTableProperty(conf, kInCommitTimestampEnablementTimestamp);
  }
  if (feature_ == "typeWidening" || feature_ == "typeWidening-preview") {
    SILT_ASSIGN_OR_RETURN(bool on, EnableTypeWidening(conf));
    return !on && !HasTypeChanges(*snapshot.schema());
  }
  if (feature_ == "checkpointProtection") {
    return !GetTableProperty(conf, kRequireCheckpointProtectionBeforeVersion);
  }
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
  request.honoured_features = RowPreservingFeatures();
  return Commit(table_, snapshot, request).status().WithContextParts(Context());
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
  request.honoured_features = RowPreservingFeatures();
  SILT_RETURN_NOT_OK(Commit(table_, snapshot, request).status().WithContextParts(Context()));
  return CheckpointLatest();
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
  request.honoured_features = RowPreservingFeatures();
  for (const std::string& path : dv_files) {
    RemoveFile remove;
    remove.path = path;
    remove.deletion_timestamp = now;
    remove.data_change = false;
    request.removes.push_back(std::move(remove));
  }
  return Commit(table_, snapshot, request).status().WithContextParts(Context());
}

Result<bool> FeatureDropper::PreDowngrade() {
  SILT_ASSIGN_OR_RETURN(SnapshotPtr snapshot, table_->LatestSnapshot());
  SILT_ASSIGN_OR_RETURN(bool clean, Clean(*snapshot));
  const TableConfiguration& conf = snapshot->metadata().configuration;
  auto unset = [&](std::vector<std::string> keys,
                   std::map<std::string, std::string> set_instead) -> Status {
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
  };
  if (feature_ == "deletionVectors") {
    // Disable first, so that no writer adds vectors while they are purged.
    if (!clean) SILT_RETURN_NOT_OK(unset({"delta.enableDeletionVectors"}, {}));
    OptimizeOptions purge;
    purge.purge_deletion_vectors = true;
    SILT_RETURN_NOT_OK(Optimize(table_, purge).status().WithContextParts(Context()));
    SILT_RETURN_NOT_OK(DeletionVectorTombstones());
    return !clean;
  }
  if (clean) return false;
  if (feature_ == "v2Checkpoint") {
    Metadata metadata = snapshot->metadata();
    metadata.configuration[std::string(kCheckpointPolicy)] = "classic";
    SILT_RETURN_NOT_OK(CommitMetadata(snapshot, std::move(metadata), "SET TBLPROPERTIES",
                                      {{"properties", R"({"delta.checkpointPolicy":"classic"})"}},
                                      {}));
    return true;
  }
  if (feature_ == "inCommitTimestamp") {
    std::vector<std::string> remove;
    for (std::string_view key :
         {kInCommitTimestampEnablementTimestamp, kInCommitTimestampEnablementVersion}) {
      if (GetTableProperty(conf, key)) remove.emplace_back(key);
    }
    SILT_ASSIGN_OR_RETURN(bool on, EnableInCommitTimestamps(conf));
    std::map<std::string, std::string> disable;
    if (on) {
      remove.emplace_back(kEnableInCommitTimestamps);  // replaced by "false"
      disable[std::string(kEnableInCommitTimestamps)] = "false";
    }
    // The parameters name the removed keys, then the disabled one.
    Metadata metadata = snapshot->metadata();
    for (const std::string& key : remove) metadata.configuration.erase(key);
    for (const auto& [key, value] : disable) metadata.configuration[key] = value;
    SILT_RETURN_NOT_OK(CommitMetadata(snapshot, std::move(metadata), "UNSET TBLPROPERTIES",
                                      {{"properties", JsonArray(remove)}}, {{"ifExists", "true"}}));
    return true;
  }
  if (feature_ == "typeWidening" || feature_ == "typeWidening-preview") {
    SILT_RETURN_NOT_OK(unset({std::string(kEnableTypeWidening)}, {}));
    return true;
  }
  if (feature_ == "checkpointProtection") {
    SILT_ASSIGN_OR_RETURN(
        int64_t protected_before,
        CheckpointProtectedBeforeVersion(snapshot->protocol(), snapshot->metadata()));
    auto truncated = [&]() -> Result<bool> {
      SILT_ASSIGN_OR_RETURN(LogFileTimes times,
                            ListLogFileTimes(table_->file_system().get(), table_->log_path()));
      if (times.commits.empty() || times.commits.front().version < protected_before) return false;
      return !times.checkpoint_versions.empty() &&
             times.checkpoint_versions.front() >= protected_before;
    };
    SILT_ASSIGN_OR_RETURN(bool done, truncated());
    if (protected_before > 0 && !done) {
      SILT_RETURN_NOT_OK(EmptyCommitAndCheckpoint());
      SILT_ASSIGN_OR_RETURN(SnapshotPtr latest, table_->LatestSnapshot());
      LogCleanupOptions cleanup;
      SILT_ASSIGN_OR_RETURN(cleanup.retention_ms, TruncateHistoryRetentionMs(latest->metadata()));
      cleanup.minute_granularity = true;
      cleanup.protected_before_version = protected_before;
      SILT_RETURN_NOT_OK(CleanUpExpiredLogs(table_->file_system().get(), table_->log_path(),
                                            latest->metadata(), now_ms(), cleanup)
                             .status());
      SILT_ASSIGN_OR_RETURN(done, truncated());
      if (!done) {
        return Status::InvalidArgument(
            "[DELTA_FEATURE_DROP_CHECKPOINT_PROTECTION_WAIT_FOR_RETENTION_PERIOD] The operation "
            "did not succeed because there are still traces of dropped features in the table "
            "history. CheckpointProtection cannot be dropped until these historical versions "
            "have expired. To drop CheckpointProtection, please wait for the historical versions "
            "to expire, and then repeat this command. The retention period for historical "
            "versions is currently configured to ",
            TruncateHistoryRetentionText(latest->metadata()), " (", Context(), ")");
      }
      SILT_ASSIGN_OR_RETURN(snapshot, table_->LatestSnapshot());
    }
    // History before the protected version is gone: the property may go
    // (it is no trace of a dropped feature).
    SILT_RETURN_NOT_OK(unset({std::string(kRequireCheckpointProtectionBeforeVersion)}, {}));
    return false;
  }
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
    if (feature_ == "deletionVectors") {
      for (const AddFile& add : earliest->files()) {
        if (add.deletion_vector) return true;
      }
    }
  }
  for (const LogFileTimes::Commit& commit : times.commits) {
    SILT_ASSIGN_OR_RETURN(CommitActions actions, table_->ReadCommit(commit.version));
    if (actions.metadata && MetadataUsesFeature(*actions.metadata)) return true;
    if (feature_ != "deletionVectors") continue;
    for (const AddFile& add : actions.adds) {
      if (add.deletion_vector) return true;
    }
    for (const RemoveFile& remove : actions.removes) {
      if (remove.deletion_vector) return true;
    }
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
  request.operation = "DROP FEATURE";
  request.operation_parameters = {{"featureName", feature_}};
  request.operation_parameters_json = {
      {"truncateHistory", options_.truncate_history ? "true" : "false"}};
  request.is_blind_append = false;
  request.derive_write_metrics = false;
  request.new_protocol = protocol;
  request.new_metadata = std::move(metadata);
  request.honoured_features = RowPreservingFeatures();
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

}  // namespace

Result<DropFeatureResult> DropFeature(DeltaTable* table, const std::string& feature,
                                      const DropFeatureOptions& options) {
  if (table == nullptr) return Status::InvalidArgument("DropFeature needs a table");
  return FeatureDropper(table, feature, options).Run();
}

}  // namespace silt::delta
