// DROP FEATURE columnMapping (drop_feature_internal.h): every file rewritten
// with the logical names in one REMOVE COLUMN MAPPING commit that also drops
// the mapping metadata.
#include <string>
#include <vector>

#include "silt/delta/column_mapping.h"
#include "silt/delta/drop_feature_internal.h"
#include "silt/delta/optimize.h"

namespace silt::delta::drop_feature_internal {

namespace {

// The field metadata of column mapping (delta-spark's
// COLUMN_MAPPING_METADATA_KEYS).
constexpr std::string_view kColumnMappingFieldKeys[] = {
    "delta.columnMapping.id", "delta.columnMapping.physicalName", "delta.columnMapping.nested.ids",
    "parquet.field.id", "parquet.field.nested.ids"};

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

}  // namespace

bool MetadataUsesColumnMapping(const Metadata& metadata) {
  Result<ColumnMappingMode> mode = ColumnMappingModeOf(metadata.configuration);
  return !mode.ok() || *mode != ColumnMappingMode::kNone;
}

Result<bool> CleanOfColumnMapping(const Snapshot& snapshot) {
  SILT_ASSIGN_OR_RETURN(ColumnMappingMode mode,
                        ColumnMappingModeOf(snapshot.metadata().configuration));
  return mode == ColumnMappingMode::kNone && !HasColumnMappingMetadata(*snapshot.schema());
}

Result<bool> FeatureDropper::PreDowngradeColumnMapping(const SnapshotPtr& snapshot) {
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

}  // namespace silt::delta::drop_feature_internal
