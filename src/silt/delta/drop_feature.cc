#include "silt/delta/drop_feature.h"

#include <simdjson.h>

#include <algorithm>
#include <map>
#include <set>

#include "silt/base/clock.h"
#include "silt/base/json_writer.h"
#include "silt/base/logging.h"
#include "silt/base/strings.h"
#include "silt/delta/checkpoint_writer.h"
#include "silt/delta/column_mapping.h"
#include "silt/delta/constraints.h"
#include "silt/delta/deletion_vector.h"
#include "silt/delta/field_metadata.h"
#include "silt/delta/log_cleanup.h"
#include "silt/delta/optimize.h"
#include "silt/delta/partition_utils.h"
#include "silt/delta/protocol.h"
#include "silt/delta/row_tracking.h"
#include "silt/delta/table_properties.h"
#include "silt/delta/type_widening.h"
#include "silt/parquet/file_reader.h"

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
    "deletionVectors", "v2Checkpoint",         "inCommitTimestamp",    "vacuumProtocolCheck",
    "typeWidening",    "typeWidening-preview", "checkpointProtection", "checkConstraints",
    "domainMetadata",  "rowTracking",          "columnMapping"};

// The field metadata of column mapping (delta-spark's
// COLUMN_MAPPING_METADATA_KEYS).
constexpr std::string_view kColumnMappingFieldKeys[] = {
    "delta.columnMapping.id", "delta.columnMapping.physicalName", "delta.columnMapping.nested.ids",
    "parquet.field.id", "parquet.field.nested.ids"};

// delta-spark's backfill.maxNumFiles: the files one ROW TRACKING UNBACKFILL
// commit re-adds at most.
constexpr size_t kUnbackfillFilesPerCommit = 22000;

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

// The writer features DROP FEATURE's commits keep intact: they move no rows
// but through OPTIMIZE's rewrites, which write column-mapped files as
// such.
const std::vector<std::string>& Honoured() {
  static const std::vector<std::string> kFeatures = [] {
    std::vector<std::string> features = RowPreservingFeatures();
    features.push_back("columnMapping");
    return features;
  }();
  return kFeatures;
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

// The names of the table's CHECK constraints (delta.constraints.*).
std::vector<std::string> CheckConstraintNames(const Metadata& metadata) {
  std::vector<std::string> names;
  for (const Constraint& c : CheckConstraints(metadata)) names.push_back(c.name);
  return names;
}

// Whether a file's column type differs from the table's, nullability
// aside (delta-spark's fileHasDifferentTypes); struct fields are matched by
// name and fields missing on either side do not count.
bool TypesDiffer(const columnar::DataType& file, const columnar::DataType& table) {
  if (file.id() != table.id()) return true;
  switch (table.id()) {
    case columnar::TypeId::kDecimal:
      return file.precision() != table.precision() || file.scale() != table.scale();
    case columnar::TypeId::kStruct:
      for (const columnar::Field& field : table.fields()) {
        const int idx = file.FieldIndex(field.name);
        if (idx >= 0 && TypesDiffer(*file.field(idx).type, *field.type)) return true;
      }
      return false;
    case columnar::TypeId::kArray: return TypesDiffer(*file.element_type(), *table.element_type());
    case columnar::TypeId::kMap:
      return TypesDiffer(*file.key_type(), *table.key_type()) ||
             TypesDiffer(*file.value_type(), *table.value_type());
    default: return false;
  }
}

// A struct field's name in the file: its physical name under column
// mapping.
std::string FileColumnName(const columnar::Field& field) {
  Result<std::optional<std::string>> physical =
      FieldMetadataString(field, "delta.columnMapping.physicalName");
  return physical.ok() && physical->has_value() ? **physical : field.name;
}

// `metadata_json` without the members `drop` names (the others kept in
// order).
template <typename Drop>
Result<std::string> WithoutMetadataKeys(const columnar::Field& field, Drop drop) {
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

// A column path as Spark's UnresolvedAttribute prints it: parts joined by
// dots, a part holding a dot or a backquote quoted.
std::string ColumnPathName(const std::vector<std::string>& path) {
  std::string out;
  for (const std::string& part : path) {
    if (!out.empty()) out += '.';
    if (part.find('.') != std::string::npos || part.find('`') != std::string::npos) {
      out += '`';
      for (char c : part) out += c == '`' ? std::string("``") : std::string(1, c);
      out += '`';
    } else {
      out += part;
    }
  }
  return out;
}

// `type` without delta.typeChanges field metadata; each field that had it is
// appended to `changes` as delta-spark's UpdateColumnMetadata records it
// ({"name", "type", "nullable", "metadata"} with the metadata before the
// removal).
Result<columnar::TypePtr> StripTypeChanges(const columnar::TypePtr& type,
                                           std::vector<std::string>* path, JsonWriter* changes) {
  switch (type->id()) {
    case columnar::TypeId::kStruct: {
      std::vector<columnar::Field> fields;
      for (const columnar::Field& field : type->fields()) {
        columnar::Field out = field;
        path->push_back(field.name);
        SILT_ASSIGN_OR_RETURN(out.type, StripTypeChanges(field.type, path, changes));
        if (field.metadata_json.find(kTypeChangesKey) != std::string::npos) {
          SILT_ASSIGN_OR_RETURN(std::optional<std::string> recorded,
                                FieldMetadataJson(field, kTypeChangesKey));
          if (recorded) {
            changes->BeginObject();
            changes->Member("name", ColumnPathName(*path));
            changes->Member("type", field.type->JsonTypeName());
            changes->Key("nullable");
            changes->Bool(field.nullable);
            changes->Key("metadata");
            changes->Raw(field.metadata_json);
            changes->EndObject();
            SILT_ASSIGN_OR_RETURN(out.metadata_json,
                                  WithoutMetadataKeys(field, [](std::string_view key) {
                                    return key == kTypeChangesKey;
                                  }));
          }
        }
        path->pop_back();
        fields.push_back(std::move(out));
      }
      return columnar::DataType::Struct(std::move(fields));
    }
    case columnar::TypeId::kArray: {
      path->push_back("element");
      SILT_ASSIGN_OR_RETURN(columnar::TypePtr element,
                            StripTypeChanges(type->element_type(), path, changes));
      path->pop_back();
      return columnar::DataType::Array(element, type->contains_null());
    }
    case columnar::TypeId::kMap: {
      path->push_back("key");
      SILT_ASSIGN_OR_RETURN(columnar::TypePtr key,
                            StripTypeChanges(type->key_type(), path, changes));
      path->back() = "value";
      SILT_ASSIGN_OR_RETURN(columnar::TypePtr value,
                            StripTypeChanges(type->value_type(), path, changes));
      path->pop_back();
      return columnar::DataType::Map(key, value, type->value_contains_null());
    }
    default: return type;
  }
}

bool IsColumnMappingKey(std::string_view key) { return Contains(kColumnMappingFieldKeys, key); }

bool HasColumnMappingMetadata(const columnar::DataType& type) {
  switch (type.id()) {
    case columnar::TypeId::kStruct:
      for (const columnar::Field& field : type.fields()) {
        for (std::string_view key : kColumnMappingFieldKeys) {
          if (field.metadata_json.find(key) != std::string::npos) return true;
        }
        if (HasColumnMappingMetadata(*field.type)) return true;
      }
      return false;
    case columnar::TypeId::kArray: return HasColumnMappingMetadata(*type.element_type());
    case columnar::TypeId::kMap:
      return HasColumnMappingMetadata(*type.key_type()) ||
             HasColumnMappingMetadata(*type.value_type());
    default: return false;
  }
}

// `type` without column mapping field metadata; the (dotted) names holding
// a character delta-spark does not allow without column mapping
// (' ,;{}()\n\t=') are appended to `invalid`.
Result<columnar::TypePtr> StripColumnMapping(const columnar::TypePtr& type,
                                             const std::string& prefix,
                                             std::vector<std::string>* invalid) {
  switch (type->id()) {
    case columnar::TypeId::kStruct: {
      std::vector<columnar::Field> fields;
      for (const columnar::Field& field : type->fields()) {
        columnar::Field out = field;
        const std::string name = prefix.empty() ? field.name : prefix + "." + field.name;
        if (field.name.find_first_of(" ,;{}()\n\t=") != std::string::npos) {
          invalid->push_back(name);
        }
        SILT_ASSIGN_OR_RETURN(out.type, StripColumnMapping(field.type, name, invalid));
        SILT_ASSIGN_OR_RETURN(out.metadata_json, WithoutMetadataKeys(field, IsColumnMappingKey));
        fields.push_back(std::move(out));
      }
      return columnar::DataType::Struct(std::move(fields));
    }
    case columnar::TypeId::kArray: {
      SILT_ASSIGN_OR_RETURN(columnar::TypePtr element,
                            StripColumnMapping(type->element_type(), prefix + ".element", invalid));
      return columnar::DataType::Array(element, type->contains_null());
    }
    case columnar::TypeId::kMap: {
      SILT_ASSIGN_OR_RETURN(columnar::TypePtr key,
                            StripColumnMapping(type->key_type(), prefix + ".key", invalid));
      SILT_ASSIGN_OR_RETURN(columnar::TypePtr value,
                            StripColumnMapping(type->value_type(), prefix + ".value", invalid));
      return columnar::DataType::Map(key, value, type->value_contains_null());
    }
    default: return type;
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
  // REORG ... REWRITE_TYPE_WIDENING: rewrites the files stored in a
  // narrower type than the table's.
  Status RewriteWidenedFiles();
  // Commits the schema without delta.typeChanges ("DROP FEATURE", as
  // delta-spark's UpdateColumnMetadata records it).
  Result<bool> RemoveTypeChanges();
  // ROW TRACKING UNBACKFILL commits re-adding the files that carry row ids
  // without them.
  Status UnbackfillRowIds();

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
  return CheckWriteSupported(protocol, snapshot.metadata(), Honoured()).WithContextParts(Context());
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
  if (feature_ == "columnMapping") {
    Result<ColumnMappingMode> mode = ColumnMappingModeOf(metadata.configuration);
    return !mode.ok() || *mode != ColumnMappingMode::kNone;
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
  if (feature_ == "checkConstraints") return CheckConstraintNames(snapshot.metadata()).empty();
  if (feature_ == "columnMapping") {
    SILT_ASSIGN_OR_RETURN(ColumnMappingMode mode, ColumnMappingModeOf(conf));
    return mode == ColumnMappingMode::kNone && !HasColumnMappingMetadata(*snapshot.schema());
  }
  if (feature_ == "domainMetadata") return snapshot.domain_metadata().empty();
  if (feature_ == "rowTracking") {
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

Status FeatureDropper::RewriteWidenedFiles() {
  OptimizeOptions reorg;
  reorg.rewrite_type_widening = true;
  const fs::FileSystemPtr fs = table_->file_system();
  const std::string path = table_->path();
  reorg.file_filter = [fs, path](const Snapshot& snapshot) -> Result<std::vector<AddFile>> {
    // The columns whose type changed, as the files name them.
    std::vector<std::pair<std::string, columnar::TypePtr>> changed;
    for (const columnar::Field& field : snapshot.schema()->fields()) {
      if (field.metadata_json.find(kTypeChangesKey) != std::string::npos ||
          HasTypeChanges(*columnar::DataType::Struct({field}))) {
        changed.emplace_back(FileColumnName(field), field.type);
      }
    }
    std::vector<AddFile> out;
    for (const AddFile& add : snapshot.files()) {
      SILT_ASSIGN_OR_RETURN(std::string file, ResolveDataFilePath(path, add.path));
      SILT_ASSIGN_OR_RETURN_CTX(auto reader, parquet::ParquetFileReader::Open(fs.get(), file),
                                "data file ", file);
      const columnar::SchemaPtr& file_schema = reader->schema();
      for (const auto& [name, type] : changed) {
        const int idx = file_schema->FieldIndex(name);
        if (idx >= 0 && TypesDiffer(*file_schema->field(idx).type, *type)) {
          out.push_back(add);
          break;
        }
      }
    }
    return out;
  };
  return Optimize(table_, reorg).status().WithContextParts(Context());
}

Result<bool> FeatureDropper::RemoveTypeChanges() {
  SILT_ASSIGN_OR_RETURN(SnapshotPtr snapshot, table_->LatestSnapshot());
  if (!HasTypeChanges(*snapshot->schema())) return false;
  JsonWriter changes;
  changes.BeginArray();
  std::vector<std::string> column_path;
  SILT_ASSIGN_OR_RETURN(columnar::TypePtr schema,
                        StripTypeChanges(snapshot->schema(), &column_path, &changes));
  changes.EndArray();
  Metadata metadata = snapshot->metadata();
  metadata.schema = schema;
  metadata.schema_string = columnar::SchemaToJson(*schema);
  SILT_RETURN_NOT_OK(CommitMetadata(snapshot, std::move(metadata), "DROP FEATURE",
                                    {{"columns", changes.Take()}}, {}));
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
    if (!HasTypeChanges(*snapshot->schema())) return true;
    SILT_RETURN_NOT_OK(RewriteWidenedFiles());
    return RemoveTypeChanges();
  }
  if (feature_ == "columnMapping") {
    // Every file rewritten with the logical names, in one commit with the
    // metadata without column mapping (delta-spark's
    // RemoveColumnMappingCommand, the mode property removed).
    std::vector<std::string> invalid;
    SILT_ASSIGN_OR_RETURN(columnar::TypePtr schema,
                          StripColumnMapping(snapshot->schema(), "", &invalid));
    if (!invalid.empty()) {
      std::string names;
      for (const std::string& name : invalid) names += (names.empty() ? "" : ", ") + name;
      return Status::InvalidArgument(
          "[DELTA_INVALID_COLUMN_NAMES_WHEN_REMOVING_COLUMN_MAPPING] Found invalid character(s) "
          "among ' ,;{}()\\n\\t=' in the column names of your schema. Invalid column names: ",
          names,
          ". Column mapping cannot be removed when there are invalid characters in the column "
          "names. Please rename the columns to remove the invalid characters and execute this "
          "command again (",
          Context(), ")");
    }
    Metadata metadata = snapshot->metadata();
    metadata.schema = schema;
    metadata.schema_string = columnar::SchemaToJson(*schema);
    metadata.configuration.erase(std::string(kColumnMappingModeKey));
    metadata.configuration.erase(std::string(kColumnMappingMaxIdKey));
    OptimizeOptions remove;
    remove.remove_column_mapping = std::move(metadata);
    SILT_RETURN_NOT_OK(Optimize(table_, remove).status().WithContextParts(Context()));
    return true;
  }
  if (feature_ == "checkConstraints") {
    // delta-spark does not drop the constraints for the user: dropping a
    // feature never changes the table's logical content.
    std::string names;
    for (const std::string& name : CheckConstraintNames(snapshot->metadata())) {
      names += (names.empty() ? "`" : ", `") + name + "`";
    }
    return Status::InvalidArgument(
        "[DELTA_CANNOT_DROP_CHECK_CONSTRAINT_FEATURE] Cannot drop the CHECK constraints table "
        "feature. The following constraints must be dropped first: ",
        names, " (", Context(), ")");
  }
  if (feature_ == "domainMetadata") {
    // No feature that needs domains is left (DELTA_FEATURE_DROP_DEPENDENT_FEATURE
    // otherwise), so the remaining ones are leaked: remove them all.
    CommitRequest request;
    request.operation = "DOMAIN METADATA CLEANUP";
    request.operation_parameters_json = {
        {"domainMetadataRemovedCount", std::to_string(snapshot->domain_metadata().size())}};
    request.is_blind_append = false;
    request.derive_write_metrics = false;
    request.honoured_features = Honoured();
    for (const auto& [name, domain] : snapshot->domain_metadata()) {
      DomainMetadata removed = domain;
      removed.removed = true;
      request.domain_metadata.push_back(std::move(removed));
    }
    SILT_RETURN_NOT_OK(Commit(table_, snapshot, request).status().WithContextParts(Context()));
    return true;
  }
  if (feature_ == "rowTracking") {
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
  if (feature_ == "rowTracking") {
    // delta-spark removes these only with the protocol, as concurrent
    // writers may still use them while the feature is there.
    for (std::string_view key :
         {kEnableRowTracking, kRowTrackingSuspended, kMaterializedRowIdColumnName,
          kMaterializedRowCommitVersionColumnName}) {
      for (auto it = metadata.configuration.begin(); it != metadata.configuration.end();) {
        it = EqualsIgnoreCase(it->first, key) ? metadata.configuration.erase(it) : std::next(it);
      }
    }
    if (const DomainMetadata* domain = snapshot->FindDomain(std::string(kRowTrackingDomain))) {
      DomainMetadata removed = *domain;
      removed.removed = true;
      request.domain_metadata.push_back(std::move(removed));
    }
  }
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

}  // namespace

Result<DropFeatureResult> DropFeature(DeltaTable* table, const std::string& feature,
                                      const DropFeatureOptions& options) {
  if (table == nullptr) return Status::InvalidArgument("DropFeature needs a table");
  return FeatureDropper(table, feature, options).Run();
}

}  // namespace silt::delta
