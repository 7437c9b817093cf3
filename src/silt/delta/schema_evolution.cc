#include "silt/delta/schema_evolution.h"

#include <string>
#include <vector>

#include "silt/base/strings.h"
#include "silt/delta/type_widening.h"

namespace silt::delta {

namespace {

std::string PathOf(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

struct MergeOptions {
  bool merge_schema = false;
  bool type_widening = false;
};

Result<columnar::TypePtr> MergeStruct(const columnar::TypePtr& table,
                                      const columnar::DataType& incoming,
                                      const MergeOptions& options, const std::string& prefix,
                                      bool* changed);

Status TypeMismatch(const std::string& path, const columnar::DataType& table,
                    const columnar::DataType& incoming, const MergeOptions& options) {
  std::string hint;
  if (IsTypeChangeSupported(table, incoming)) {
    if (!options.merge_schema) {
      hint = "; set mergeSchema (on a table with delta.enableTypeWidening) to widen it";
    } else if (!options.type_widening) {
      hint = "; set the table property delta.enableTypeWidening to widen it";
    }
  }
  return Status::InvalidArgument("column '", path, "' is ", table.ToDdl(), " in the table but ",
                                 incoming.ToDdl(), " in the data being appended", hint);
}

// Merges the data's type `incoming` into the table's type `table` of the
// column at `path`; `field_path` is the path from the nearest struct field
// (delta.typeChanges' fieldPath). Widenings go to *changes; sets *changed
// when the result differs from `table`.
Result<columnar::TypePtr> MergeType(const columnar::TypePtr& table,
                                    const columnar::TypePtr& incoming, const MergeOptions& options,
                                    const std::string& path, const std::string& field_path,
                                    std::vector<TypeChange>* changes, bool* changed) {
  if (SameTypeIgnoringNullability(*table, *incoming)) return table;
  const columnar::TypeId id = table->id();
  if (id == columnar::TypeId::kStruct && incoming->id() == columnar::TypeId::kStruct) {
    bool nested_changed = false;
    SILT_ASSIGN_OR_RETURN(columnar::TypePtr merged,
                          MergeStruct(table, *incoming, options, path, &nested_changed));
    if (!nested_changed) return table;
    *changed = true;
    return merged;
  }
  auto sub = [&](const std::string& step) {
    return field_path.empty() ? step : field_path + "." + step;
  };
  if (id == columnar::TypeId::kArray && incoming->id() == columnar::TypeId::kArray) {
    bool nested_changed = false;
    SILT_ASSIGN_OR_RETURN(columnar::TypePtr element,
                          MergeType(table->element_type(), incoming->element_type(), options,
                                    path + ".element", sub("element"), changes, &nested_changed));
    if (!nested_changed) return table;
    *changed = true;
    return columnar::DataType::Array(std::move(element), table->contains_null());
  }
  if (id == columnar::TypeId::kMap && incoming->id() == columnar::TypeId::kMap) {
    bool nested_changed = false;
    SILT_ASSIGN_OR_RETURN(columnar::TypePtr key,
                          MergeType(table->key_type(), incoming->key_type(), options, path + ".key",
                                    sub("key"), changes, &nested_changed));
    SILT_ASSIGN_OR_RETURN(columnar::TypePtr value,
                          MergeType(table->value_type(), incoming->value_type(), options,
                                    path + ".value", sub("value"), changes, &nested_changed));
    if (!nested_changed) return table;
    *changed = true;
    return columnar::DataType::Map(std::move(key), std::move(value), table->value_contains_null());
  }
  if (!table->is_nested() && !incoming->is_nested()) {
    // A wider type of the data widens the column (delta-spark's
    // TypeEvolution with allowAutomaticWidening = always, its default).
    if (options.merge_schema && options.type_widening && IsTypeChangeSupported(*table, *incoming)) {
      changes->push_back(TypeChange{table, incoming, field_path});
      *changed = true;
      return incoming;
    }
    // Narrower data (or a void column) fits the column: AppendWriter
    // converts it, as delta-spark's streaming sink casts it.
    if (incoming->id() == columnar::TypeId::kNull || IsTypeChangeSupported(*incoming, *table)) {
      return table;
    }
  }
  return TypeMismatch(path, *table, *incoming, options);
}

// Merges struct `incoming` into struct `table`; sets *changed when the
// result differs from `table`.
Result<columnar::TypePtr> MergeStruct(const columnar::TypePtr& table,
                                      const columnar::DataType& incoming,
                                      const MergeOptions& options, const std::string& prefix,
                                      bool* changed) {
  std::vector<columnar::Field> fields = table->fields();
  for (const columnar::Field& in_field : incoming.fields()) {
    const std::string path = PathOf(prefix, in_field.name);
    int idx = table->FieldIndex(in_field.name);
    if (idx < 0) {
      if (!options.merge_schema) {
        return Status::InvalidArgument("column '", path, "' (", in_field.type->ToDdl(),
                                       ") is not in the table schema; set mergeSchema to add it");
      }
      columnar::Field added = in_field;
      added.nullable = true;
      fields.push_back(std::move(added));
      *changed = true;
      continue;
    }
    columnar::Field& table_field = fields[static_cast<size_t>(idx)];
    std::vector<TypeChange> changes;
    bool field_changed = false;
    SILT_ASSIGN_OR_RETURN(
        columnar::TypePtr merged,
        MergeType(table_field.type, in_field.type, options, path, "", &changes, &field_changed));
    if (!field_changed) continue;
    table_field.type = std::move(merged);
    // Recorded on the nearest struct field, as PROTOCOL.md asks.
    SILT_ASSIGN_OR_RETURN(table_field, AppendTypeChanges(table_field, changes));
    *changed = true;
  }
  if (!*changed) return table;
  return columnar::DataType::Struct(std::move(fields));
}

}  // namespace

bool SameTypeIgnoringNullability(const columnar::DataType& a, const columnar::DataType& b) {
  if (&a == &b) return true;
  if (a.id() != b.id()) return false;
  switch (a.id()) {
    case columnar::TypeId::kStruct:
      if (a.num_fields() != b.num_fields()) return false;
      for (int field_idx = 0; field_idx < a.num_fields(); ++field_idx) {
        const columnar::Field& fa = a.field(field_idx);
        const columnar::Field& fb = b.field(field_idx);
        if (!EqualsIgnoreCase(fa.name, fb.name) ||
            !SameTypeIgnoringNullability(*fa.type, *fb.type)) {
          return false;
        }
      }
      return true;
    case columnar::TypeId::kArray:
      return SameTypeIgnoringNullability(*a.element_type(), *b.element_type());
    case columnar::TypeId::kMap:
      return SameTypeIgnoringNullability(*a.key_type(), *b.key_type()) &&
             SameTypeIgnoringNullability(*a.value_type(), *b.value_type());
    default: return a.Equals(b);
  }
}

Result<columnar::SchemaPtr> MergeSchemaForAppend(const columnar::SchemaPtr& table,
                                                 const columnar::Schema& incoming,
                                                 bool merge_schema, bool type_widening) {
  if (table == nullptr || table->id() != columnar::TypeId::kStruct ||
      incoming.id() != columnar::TypeId::kStruct) {
    return Status::InvalidArgument("schemas to merge must be structs");
  }
  bool changed = false;
  return MergeStruct(table, incoming, MergeOptions{merge_schema, type_widening}, "", &changed);
}

}  // namespace silt::delta
