#include "silt/delta/column_mapping.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <tuple>
#include <vector>

#include "silt/base/json_writer.h"
#include "silt/base/strings.h"
#include "silt/base/uuid.h"
#include "silt/delta/clustering.h"
#include "silt/delta/field_metadata.h"
#include "silt/delta/generated_columns.h"
#include "silt/delta/protocol.h"
#include "silt/delta/table.h"

namespace silt::delta {

namespace {

using columnar::DataType;
using columnar::Field;
using columnar::TypeId;
using columnar::TypePtr;

std::string Path(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

Result<TypePtr> PhysicalType(const TypePtr& type, const std::string& path);

Result<Field> PhysicalField(const Field& field, const std::string& path) {
  SILT_ASSIGN_OR_RETURN(std::optional<int64_t> id, FieldMetadataLong(field, kColumnMappingIdKey));
  SILT_ASSIGN_OR_RETURN(std::optional<std::string> name,
                        FieldMetadataString(field, kPhysicalNameKey));
  // A hidden column a writer adds (HiddenColumn) has its own name as
  // physical name and no id.
  const bool hidden = !id && name && *name == field.name;
  if ((!id && !hidden) || !name || name->empty()) {
    return Status::Corruption("column '", path, "' of a column-mapped table has no ",
                              !id ? kColumnMappingIdKey : kPhysicalNameKey,
                              " in its metadata: ", field.metadata_json);
  }
  Field out;
  out.name = *name;
  out.nullable = field.nullable;
  if (id) out.metadata_json = "{\"parquet.field.id\":" + std::to_string(*id) + "}";
  SILT_ASSIGN_OR_RETURN(out.type, PhysicalType(field.type, path));
  return out;
}

Result<TypePtr> PhysicalType(const TypePtr& type, const std::string& path) {
  switch (type->id()) {
    case TypeId::kStruct: {
      std::vector<Field> fields;
      fields.reserve(type->fields().size());
      for (const Field& child : type->fields()) {
        SILT_ASSIGN_OR_RETURN(Field f, PhysicalField(child, Path(path, child.name)));
        fields.push_back(std::move(f));
      }
      return DataType::Struct(std::move(fields));
    }
    case TypeId::kArray: {
      SILT_ASSIGN_OR_RETURN(TypePtr element, PhysicalType(type->element_type(), path + ".element"));
      return DataType::Array(std::move(element), type->contains_null());
    }
    case TypeId::kMap: {
      SILT_ASSIGN_OR_RETURN(TypePtr key, PhysicalType(type->key_type(), path + ".key"));
      SILT_ASSIGN_OR_RETURN(TypePtr value, PhysicalType(type->value_type(), path + ".value"));
      return DataType::Map(std::move(key), std::move(value), type->value_contains_null());
    }
    default: return type;
  }
}

Status MaxIdOf(const DataType& type, int64_t* max_id) {
  switch (type.id()) {
    case TypeId::kStruct:
      for (const Field& field : type.fields()) {
        SILT_ASSIGN_OR_RETURN(std::optional<int64_t> id,
                              FieldMetadataLong(field, kColumnMappingIdKey));
        if (id) *max_id = std::max(*max_id, *id);
        SILT_RETURN_NOT_OK(MaxIdOf(*field.type, max_id));
      }
      return Status::OK();
    case TypeId::kArray: return MaxIdOf(*type.element_type(), max_id);
    case TypeId::kMap:
      SILT_RETURN_NOT_OK(MaxIdOf(*type.key_type(), max_id));
      return MaxIdOf(*type.value_type(), max_id);
    default: return Status::OK();
  }
}

std::string JsonQuote(std::string_view text);

// The type of `existing`'s counterpart of `type`'s child of kind `kind`
// (array element, map key or value), or null.
const DataType* Counterpart(const DataType* existing, TypeId id, int kind) {
  if (existing == nullptr || existing->id() != id) return nullptr;
  if (id == TypeId::kArray) return existing->element_type().get();
  return kind == 0 ? existing->key_type().get() : existing->value_type().get();
}

// `type` with ids assigned below it; `existing` is the table's type at the
// same place (null when there is none): fields it has keep their ids and
// physical names, every other field gets new ones, whatever its metadata
// says (a schema read from another mapped table carries that table's).
// `changed` is set when any field's metadata changed.
Result<TypePtr> AssignType(const TypePtr& type, const DataType* existing, int64_t* max_id,
                           bool* changed, const std::string& path) {
  switch (type->id()) {
    case TypeId::kStruct: {
      std::vector<Field> fields;
      fields.reserve(type->fields().size());
      for (const Field& child : type->fields()) {
        const std::string child_path = Path(path, child.name);
        const int existing_idx = existing != nullptr && existing->id() == TypeId::kStruct
                                     ? existing->FieldIndex(child.name)
                                     : -1;
        const Field* known = existing_idx >= 0 ? &existing->field(existing_idx) : nullptr;
        Field f = child;
        if (known != nullptr) {
          SILT_ASSIGN_OR_RETURN(std::optional<int64_t> id,
                                FieldMetadataLong(*known, kColumnMappingIdKey));
          SILT_ASSIGN_OR_RETURN(std::optional<std::string> name,
                                FieldMetadataString(*known, kPhysicalNameKey));
          if (!id || !name || name->empty()) {
            return Status::Corruption("column '", child_path, "' of a column-mapped table has no ",
                                      !id ? kColumnMappingIdKey : kPhysicalNameKey,
                                      " in its metadata: ", known->metadata_json);
          }
          if (f.metadata_json != known->metadata_json) {
            SILT_ASSIGN_OR_RETURN(f,
                                  WithFieldMetadata(f, kColumnMappingIdKey, std::to_string(*id)));
            SILT_ASSIGN_OR_RETURN(f, WithFieldMetadata(f, kPhysicalNameKey, JsonQuote(*name)));
            *changed = true;
          }
        } else {
          SILT_ASSIGN_OR_RETURN(
              f, WithFieldMetadata(f, kColumnMappingIdKey, std::to_string(++*max_id)));
          SILT_ASSIGN_OR_RETURN(
              f, WithFieldMetadata(f, kPhysicalNameKey, JsonQuote("col-" + NewUuid())));
          *changed = true;
        }
        SILT_ASSIGN_OR_RETURN(
            f.type, AssignType(f.type, known != nullptr ? known->type.get() : nullptr, max_id,
                               changed, child_path));
        fields.push_back(std::move(f));
      }
      return DataType::Struct(std::move(fields));
    }
    case TypeId::kArray: {
      SILT_ASSIGN_OR_RETURN(TypePtr element, AssignType(type->element_type(),
                                                        Counterpart(existing, TypeId::kArray, 0),
                                                        max_id, changed, path + ".element"));
      return DataType::Array(std::move(element), type->contains_null());
    }
    case TypeId::kMap: {
      SILT_ASSIGN_OR_RETURN(
          TypePtr key, AssignType(type->key_type(), Counterpart(existing, TypeId::kMap, 0), max_id,
                                  changed, path + ".key"));
      SILT_ASSIGN_OR_RETURN(TypePtr value,
                            AssignType(type->value_type(), Counterpart(existing, TypeId::kMap, 1),
                                       max_id, changed, path + ".value"));
      return DataType::Map(std::move(key), std::move(value), type->value_contains_null());
    }
    default: return type;
  }
}

std::string JsonQuote(std::string_view text) {
  JsonWriter w;
  w.String(text);
  return w.Take();
}

}  // namespace

Result<ColumnMappingMode> ColumnMappingModeOf(const TableConfiguration& configuration) {
  std::optional<std::string> mode = GetTableProperty(configuration, kColumnMappingModeKey);
  if (!mode || mode->empty() || EqualsIgnoreCase(*mode, "none")) return ColumnMappingMode::kNone;
  if (EqualsIgnoreCase(*mode, "name")) return ColumnMappingMode::kName;
  if (EqualsIgnoreCase(*mode, "id")) return ColumnMappingMode::kId;
  return Status::NotSupported("column mapping mode '", *mode, "' (", kColumnMappingModeKey,
                              " is none, name or id)");
}

Result<std::string> RequiredPhysicalName(const columnar::Field& field) {
  SILT_ASSIGN_OR_RETURN(std::optional<std::string> name,
                        FieldMetadataString(field, kPhysicalNameKey));
  if (!name || name->empty()) {
    return Status::Corruption("column '", field.name, "' of a column-mapped table has no ",
                              kPhysicalNameKey, " in its metadata: ", field.metadata_json);
  }
  return *name;
}

columnar::Field HiddenColumn(std::string name, columnar::TypePtr type) {
  columnar::Field field{name, std::move(type), true};
  field.metadata_json = "{\"" + std::string(kPhysicalNameKey) + "\":" + JsonQuote(name) + "}";
  return field;
}

Result<columnar::SchemaPtr> PhysicalSchema(const columnar::Schema& logical) {
  std::vector<Field> fields;
  fields.reserve(logical.fields().size());
  for (const Field& field : logical.fields()) {
    SILT_ASSIGN_OR_RETURN(Field f, PhysicalField(field, field.name));
    fields.push_back(std::move(f));
  }
  return DataType::Struct(std::move(fields));
}

Result<int64_t> MaxColumnId(const columnar::Schema& schema) {
  int64_t max_id = 0;
  SILT_RETURN_NOT_OK(MaxIdOf(schema, &max_id));
  return max_id;
}

Result<int64_t> MaxColumnIdInUse(const TableConfiguration& configuration,
                                 const columnar::Schema& schema) {
  int64_t max_id = 0;
  if (std::optional<std::string> recorded =
          GetTableProperty(configuration, kColumnMappingMaxIdKey)) {
    const char* end = recorded->data() + recorded->size();
    auto [ptr, ec] = std::from_chars(recorded->data(), end, max_id);
    if (ec != std::errc() || ptr != end) {
      return Status::Corruption("table property ", kColumnMappingMaxIdKey, " = '", *recorded,
                                "' is not an integer");
    }
  }
  SILT_ASSIGN_OR_RETURN(int64_t in_schema, MaxColumnId(schema));
  return std::max(max_id, in_schema);
}

Result<columnar::SchemaPtr> AssignColumnMapping(const columnar::SchemaPtr& schema,
                                                const columnar::Schema* table,
                                                int64_t* max_column_id) {
  bool changed = false;
  int64_t next = *max_column_id;
  SILT_ASSIGN_OR_RETURN(TypePtr assigned, AssignType(schema, table, &next, &changed, ""));
  if (!changed) return schema;
  *max_column_id = next;
  return assigned;
}

Result<columnar::SchemaPtr> MapNewTableSchema(const columnar::SchemaPtr& schema,
                                              TableConfiguration* configuration) {
  SILT_ASSIGN_OR_RETURN(ColumnMappingMode mode, ColumnMappingModeOf(*configuration));
  if (mode == ColumnMappingMode::kNone) return schema;
  int64_t max_id = 0;
  SILT_ASSIGN_OR_RETURN(columnar::SchemaPtr mapped, AssignColumnMapping(schema, nullptr, &max_id));
  (*configuration)[std::string(kColumnMappingMaxIdKey)] = std::to_string(max_id);
  return mapped;
}

namespace {

std::string JoinPath(const std::vector<std::string>& path) {
  std::string out;
  for (const std::string& part : path) {
    if (!out.empty()) out += '.';
    out += part.find('.') == std::string::npos ? part : "`" + part + "`";
  }
  return out;
}

// The snapshot an ALTER of column `what` works on, checked: column
// mapping on (name or id mode).
Result<SnapshotPtr> SnapshotForAlter(DeltaTable* table, const char* error_class, const char* what) {
  SILT_ASSIGN_OR_RETURN(SnapshotPtr snapshot, table->LatestSnapshot());
  // A metadata-only commit: the features about rows hold (CommitSchema).
  std::vector<std::string> honoured = RowPreservingFeatures();
  honoured.push_back("columnMapping");
  SILT_RETURN_NOT_OK(CheckWriteSupported(snapshot->protocol(), snapshot->metadata(), honoured));
  SILT_ASSIGN_OR_RETURN(ColumnMappingMode mode,
                        ColumnMappingModeOf(snapshot->metadata().configuration));
  // Name and id modes both: readers find the files' columns by physical
  // name or field id, which the ALTER keeps.
  if (mode == ColumnMappingMode::kNone) {
    return Status::NotSupported("[", error_class, "] ", what, " is not supported for Delta table ",
                                table->path(), ": enable column mapping with mode 'name' ",
                                "(delta.columnMapping.mode)");
  }
  return snapshot;
}

// Spark's UnresolvedAttribute(parts).name: a part with a dot back-quoted.
std::string AttributeName(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& part : parts) {
    if (!out.empty()) out += '.';
    out += part.find('.') == std::string::npos ? part : "`" + part + "`";
  }
  return out;
}

// Spark's UnresolvedAttribute(parts).sql: a part that is not all letters,
// digits and underscores (or is all digits) back-quoted, quotes doubled.
std::string AttributeSql(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& part : parts) {
    if (!out.empty()) out += '.';
    bool plain = !part.empty(), all_digits = true;
    for (char c : part) {
      const bool digit = c >= '0' && c <= '9';
      all_digits = all_digits && digit;
      plain = plain && (digit || c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'));
    }
    if (plain && !all_digits) {
      out += part;
      continue;
    }
    out += '`';
    for (char c : part) {
      if (c == '`') out += '`';
      out += c;
    }
    out += '`';
  }
  return out;
}

// A column list property (delta.dataSkippingStatsColumns): comma-separated
// multi-part names, back quotes quoting a part, blanks around names
// ignored.
std::vector<std::vector<std::string>> ParseColumnList(std::string_view text) {
  std::vector<std::vector<std::string>> out;
  std::vector<std::string> parts;
  std::string part;
  bool quoted = false, had_part = false;
  auto end_part = [&]() {
    if (!had_part) {
      std::string_view trimmed = TrimAscii(part);
      if (!trimmed.empty()) parts.emplace_back(trimmed);
    } else {
      parts.push_back(part);
    }
    part.clear();
    had_part = false;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '`' && i + 1 < text.size() && text[i + 1] == '`') {
        part += '`';
        ++i;
      } else if (c == '`') {
        quoted = false;
      } else {
        part += c;
      }
    } else if (c == '`') {
      quoted = true;
      had_part = true;
      part.clear();
    } else if (c == '.') {
      end_part();
    } else if (c == ',') {
      end_part();
      if (!parts.empty()) out.push_back(std::move(parts));
      parts.clear();
    } else if (!had_part) {
      part += c;
    }
  }
  end_part();
  if (!parts.empty()) out.push_back(std::move(parts));
  return out;
}

constexpr std::string_view kStatsColumnsKey = "delta.dataSkippingStatsColumns";

// `configuration` with delta.dataSkippingStatsColumns rewritten by `edit`
// (a column's parts to its new parts, or nullopt to drop it), as Spark
// rewrites it: every entry, comma-joined without blanks.
template <typename Edit>
void RewriteStatsColumns(TableConfiguration* configuration, bool sql_quoting, const Edit& edit) {
  for (auto& [key, value] : *configuration) {
    if (!EqualsIgnoreCase(key, kStatsColumnsKey)) continue;
    std::string out;
    for (const std::vector<std::string>& column : ParseColumnList(value)) {
      std::optional<std::vector<std::string>> edited = edit(column);
      if (!edited) continue;
      if (!out.empty()) out += ',';
      out += sql_quoting ? AttributeSql(*edited) : AttributeName(*edited);
    }
    value = std::move(out);
  }
}

// True when `prefix` is a prefix of `parts` (exact names, as Spark
// compares them here).
bool HasPrefix(const std::vector<std::string>& parts, const std::vector<std::string>& prefix) {
  return parts.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), parts.begin());
}

void CollectGenerated(const columnar::DataType& type,
                      std::vector<std::pair<std::string, std::string>>* out) {
  switch (type.id()) {
    case TypeId::kStruct:
      for (const Field& field : type.fields()) {
        Result<std::optional<std::string>> expression =
            FieldMetadataString(field, kGenerationExpressionKey);
        if (expression.ok() && *expression) out->emplace_back(field.name, **expression);
        CollectGenerated(*field.type, out);
      }
      return;
    case TypeId::kArray: CollectGenerated(*type.element_type(), out); return;
    case TypeId::kMap:
      CollectGenerated(*type.key_type(), out);
      CollectGenerated(*type.value_type(), out);
      return;
    default: return;
  }
}

// delta-spark's checkDependentExpressions: refuses to change column `path`
// (its names as the schema spells them) when a CHECK constraint or a
// generated column reads it, a field below it or a struct above it.
Status CheckDependentExpressions(const Snapshot& snapshot, const std::vector<std::string>& path,
                                 const ExpressionColumns& expression_columns,
                                 const std::string& table_path) {
  std::vector<std::pair<std::string, std::string>> constraints;
  for (const auto& [key, value] : snapshot.metadata().configuration) {
    if (StartsWithIgnoreCase(key, "delta.constraints.")) constraints.emplace_back(key, value);
  }
  std::vector<std::pair<std::string, std::string>> generated;
  CollectGenerated(*snapshot.schema(), &generated);
  if (constraints.empty() && generated.empty()) return Status::OK();
  if (!expression_columns) {
    return Status::NotSupported("changing column ", AttributeName(path), " of Delta table ",
                                table_path, " with CHECK constraints or generated columns");
  }
  auto reads = [&](const std::string& expression) -> Result<bool> {
    SILT_ASSIGN_OR_RETURN(std::vector<std::vector<std::string>> columns,
                          expression_columns(expression));
    for (const std::vector<std::string>& column : columns) {
      const size_t n = std::min(column.size(), path.size());
      bool same = n > 0;
      for (size_t i = 0; i < n && same; ++i) same = EqualsIgnoreCase(column[i], path[i]);
      if (same) return true;
    }
    return false;
  };
  for (auto [list, error_class, what] :
       {std::tuple{&constraints, "DELTA_CONSTRAINT_DEPENDENT_COLUMN_CHANGE", "check constraint"},
        std::tuple{&generated, "DELTA_GENERATED_COLUMNS_DEPENDENT_COLUMN_CHANGE",
                   "generated column"}}) {
    std::string dependents;
    for (const auto& [name, expression] : *list) {
      SILT_ASSIGN_OR_RETURN(bool dependent, reads(expression));
      if (!dependent) continue;
      if (!dependents.empty()) dependents += '\n';
      dependents += name + " -> " + expression;
    }
    if (!dependents.empty()) {
      return Status::InvalidArgument("[", error_class, "] Cannot alter column ",
                                     AttributeName(path), " of Delta table ", table_path,
                                     " because this column is referenced by the following ", what,
                                     "(s):\n", dependents);
    }
  }
  return Status::OK();
}

// The physical names along `path` (the schema's own names) in `schema`.
Result<std::vector<std::string>> PhysicalPath(const columnar::DataType& schema,
                                              const std::vector<std::string>& path) {
  std::vector<std::string> out;
  const columnar::DataType* type = &schema;
  for (const std::string& name : path) {
    const int index = type->FieldIndex(name);
    if (type->id() != TypeId::kStruct || index < 0) break;
    SILT_ASSIGN_OR_RETURN(std::string physical, RequiredPhysicalName(type->field(index)));
    out.push_back(std::move(physical));
    type = type->field(index).type.get();
  }
  return out;
}

// `path` as the schema spells its names.
std::vector<std::string> SchemaSpelling(const columnar::DataType& schema,
                                        const std::vector<std::string>& path) {
  std::vector<std::string> out;
  const columnar::DataType* type = &schema;
  for (const std::string& name : path) {
    const int index = type->id() == TypeId::kStruct ? type->FieldIndex(name) : -1;
    if (index < 0) {
      out.push_back(name);
      continue;
    }
    out.push_back(type->field(index).name);
    type = type->field(index).type.get();
  }
  return out;
}

// The struct type along `path` (all but its last name) in `schema`, and the
// index of the last name in it. Errors: InvalidArgument naming the path.
Status Locate(const columnar::DataType& schema, const std::vector<std::string>& path,
              const std::string& table_path, const columnar::DataType** parent, int* index) {
  const columnar::DataType* type = &schema;
  for (size_t depth = 0; depth < path.size(); ++depth) {
    if (type->id() != TypeId::kStruct || type->FieldIndex(path[depth]) < 0) {
      return Status::InvalidArgument("[DELTA_COLUMN_NOT_FOUND] column ", JoinPath(path),
                                     " does not exist in Delta table ", table_path);
    }
    *parent = type;
    *index = type->FieldIndex(path[depth]);
    type = type->field(*index).type.get();
  }
  return Status::OK();
}

// `type` with the struct field at `path` replaced by `edit(field)` (or
// removed when edit returns nullopt).
template <typename Edit>
TypePtr Rebuild(const TypePtr& type, const std::vector<std::string>& path, size_t depth,
                const Edit& edit) {
  std::vector<Field> fields;
  const int target = type->FieldIndex(path[depth]);
  for (int field_idx = 0; field_idx < type->num_fields(); ++field_idx) {
    Field f = type->field(field_idx);
    if (field_idx == target) {
      if (depth + 1 == path.size()) {
        std::optional<Field> edited = edit(f);
        if (!edited) continue;
        f = std::move(*edited);
      } else {
        f.type = Rebuild(f.type, path, depth + 1, edit);
      }
    }
    fields.push_back(std::move(f));
  }
  return DataType::Struct(std::move(fields));
}

Result<int64_t> CommitSchema(DeltaTable* table, const SnapshotPtr& snapshot, TypePtr schema,
                             std::vector<std::string> partition_columns,
                             TableConfiguration configuration, std::string operation,
                             std::map<std::string, std::string> parameters) {
  Metadata metadata = snapshot->metadata();
  metadata.configuration = std::move(configuration);
  metadata.schema = schema;
  metadata.schema_string = columnar::SchemaToJson(*schema);
  metadata.partition_columns = std::move(partition_columns);
  CommitRequest request;
  request.operation = std::move(operation);
  request.operation_parameters = std::move(parameters);
  request.is_blind_append = false;
  request.derive_write_metrics = false;
  request.new_metadata = std::move(metadata);
  request.honoured_features = RowPreservingFeatures();
  request.honoured_features.push_back("columnMapping");
  SILT_ASSIGN_OR_RETURN(CommitResult committed, Commit(table, snapshot, request));
  return committed.version;
}

}  // namespace

Result<int64_t> RenameColumn(DeltaTable* table, const std::vector<std::string>& path,
                             const std::string& new_name,
                             const ExpressionColumns& expression_columns) {
  SILT_ASSIGN_OR_RETURN(
      SnapshotPtr snapshot,
      SnapshotForAlter(table, "DELTA_UNSUPPORTED_RENAME_COLUMN", "RENAME COLUMN"));
  const columnar::SchemaPtr& schema = snapshot->schema();
  const columnar::DataType* parent = nullptr;
  int index = -1;
  SILT_RETURN_NOT_OK(Locate(*schema, path, table->path(), &parent, &index));
  SILT_RETURN_NOT_OK(CheckDependentExpressions(*snapshot, SchemaSpelling(*schema, path),
                                               expression_columns, table->path()));
  if (new_name.empty()) return Status::InvalidArgument("RENAME COLUMN needs a new name");
  const int clash = parent->FieldIndex(new_name);
  if (clash >= 0 && clash != index) {
    return Status::InvalidArgument("[DELTA_DUPLICATE_COLUMNS_FOUND] cannot rename ", JoinPath(path),
                                   " to ", new_name, ": Delta table ", table->path(),
                                   " already has a column ", parent->field(clash).name);
  }
  const std::string old_name = parent->field(index).name;
  TypePtr renamed = Rebuild(schema, path, 0, [&](const Field& f) -> std::optional<Field> {
    Field out = f;
    out.name = new_name;
    return out;
  });
  std::vector<std::string> partition_columns = snapshot->partition_columns();
  if (path.size() == 1) {
    for (std::string& column : partition_columns) {
      if (EqualsIgnoreCase(column, old_name)) column = new_name;
    }
  }
  std::vector<std::string> new_path = path;
  new_path.back() = new_name;
  std::vector<std::string> old_path = path;
  old_path.back() = old_name;
  // Spark matches the list's names exactly against the path as resolved.
  const std::vector<std::string> resolved = SchemaSpelling(*schema, path);
  std::vector<std::string> resolved_new = resolved;
  resolved_new.back() = new_name;
  TableConfiguration configuration = snapshot->metadata().configuration;
  RewriteStatsColumns(&configuration, true, [&](const std::vector<std::string>& column) {
    if (!HasPrefix(column, resolved)) return std::optional<std::vector<std::string>>(column);
    std::vector<std::string> out = resolved_new;
    out.insert(out.end(), column.begin() + static_cast<std::ptrdiff_t>(resolved.size()),
               column.end());
    return std::optional<std::vector<std::string>>(std::move(out));
  });
  return CommitSchema(
      table, snapshot, std::move(renamed), std::move(partition_columns), std::move(configuration),
      "RENAME COLUMN",
      {{"oldColumnPath", JoinPath(old_path)}, {"newColumnPath", JoinPath(new_path)}});
}

Result<int64_t> DropColumns(DeltaTable* table, const std::vector<std::vector<std::string>>& paths,
                            const ExpressionColumns& expression_columns) {
  SILT_ASSIGN_OR_RETURN(SnapshotPtr snapshot,
                        SnapshotForAlter(table, "DELTA_UNSUPPORTED_DROP_COLUMN", "DROP COLUMN"));
  SILT_ASSIGN_OR_RETURN(std::vector<std::string> clustering, ClusteringColumns(*snapshot));
  TypePtr schema = snapshot->schema();
  JsonWriter columns;
  columns.BeginArray();
  for (const std::vector<std::string>& path : paths) {
    const columnar::DataType* parent = nullptr;
    int index = -1;
    SILT_RETURN_NOT_OK(Locate(*schema, path, table->path(), &parent, &index));
    if (path.size() == 1) {
      for (const std::string& column : snapshot->partition_columns()) {
        if (EqualsIgnoreCase(column, parent->field(index).name)) {
          return Status::InvalidArgument("[DELTA_UNSUPPORTED_DROP_PARTITION_COLUMN] dropping ",
                                         "partition column ", column, " of Delta table ",
                                         table->path(), " is not allowed");
        }
      }
    }
    // The clustering domain names physical columns.
    SILT_ASSIGN_OR_RETURN(std::vector<std::string> physical, PhysicalPath(*schema, path));
    std::string physical_path;
    for (const std::string& part : physical) {
      physical_path += (physical_path.empty() ? "" : ".") + part;
    }
    if (std::find(clustering.begin(), clustering.end(), physical_path) != clustering.end()) {
      return Status::InvalidArgument("[DELTA_UNSUPPORTED_DROP_CLUSTERING_COLUMN] Dropping ",
                                     "clustering columns (", AttributeName(path),
                                     ") of Delta table ", table->path(), " is not allowed");
    }
    if (parent->num_fields() == 1) {
      return Status::InvalidArgument(
          "[DELTA_DROP_COLUMN_ON_SINGLE_FIELD_SCHEMA] cannot drop ", JoinPath(path),
          ": it is the only ",
          path.size() == 1 ? "column of Delta table " : "field of its struct in ", table->path());
    }
    schema = Rebuild(schema, path, 0, [](const Field&) { return std::optional<Field>(); });
    columns.String(JoinPath(path));
  }
  columns.EndArray();
  TableConfiguration configuration = snapshot->metadata().configuration;
  RewriteStatsColumns(&configuration, false, [&](const std::vector<std::string>& column) {
    for (const std::vector<std::string>& path : paths) {
      if (HasPrefix(column, path)) return std::optional<std::vector<std::string>>();
    }
    return std::optional<std::vector<std::string>>(column);
  });
  for (const std::vector<std::string>& path : paths) {
    SILT_RETURN_NOT_OK(CheckDependentExpressions(
        *snapshot, SchemaSpelling(*snapshot->schema(), path), expression_columns, table->path()));
  }
  return CommitSchema(table, snapshot, std::move(schema), snapshot->partition_columns(),
                      std::move(configuration), "DROP COLUMNS", {{"columns", columns.Take()}});
}

}  // namespace silt::delta
