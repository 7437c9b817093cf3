// DROP FEATURE typeWidening and typeWidening-preview (drop_feature_internal.h):
// delta.enableTypeWidening unset, the files stored in a narrower type than
// the table's rewritten (REORG ... REWRITE_TYPE_WIDENING), then the
// delta.typeChanges field metadata removed from the schema.
#include <string>
#include <utility>
#include <vector>

#include "silt/base/json_writer.h"
#include "silt/delta/drop_feature_internal.h"
#include "silt/delta/field_metadata.h"
#include "silt/delta/optimize.h"
#include "silt/delta/partition_utils.h"
#include "silt/delta/table_properties.h"
#include "silt/delta/type_widening.h"
#include "silt/parquet/file_reader.h"

namespace silt::delta::drop_feature_internal {

namespace {

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

}  // namespace

bool MetadataUsesTypeWidening(const Metadata& metadata) {
  return metadata.schema != nullptr && HasTypeChanges(*metadata.schema);
}

Result<bool> CleanOfTypeWidening(const Snapshot& snapshot) {
  SILT_ASSIGN_OR_RETURN(bool on, EnableTypeWidening(snapshot.metadata().configuration));
  return !on && !HasTypeChanges(*snapshot.schema());
}

Result<bool> FeatureDropper::PreDowngradeTypeWidening(const SnapshotPtr& snapshot) {
  SILT_RETURN_NOT_OK(UnsetProperties(snapshot, {std::string(kEnableTypeWidening)}, {}));
  if (!HasTypeChanges(*snapshot->schema())) return true;
  SILT_RETURN_NOT_OK(RewriteWidenedFiles());
  return RemoveTypeChanges();
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

}  // namespace silt::delta::drop_feature_internal
