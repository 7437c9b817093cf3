#include "silt/delta/schema_evolution.h"

#include <string>
#include <vector>

#include "silt/base/strings.h"

namespace silt::delta {

namespace {

std::string PathOf(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

// Merges struct `incoming` into struct `table`; sets *changed when the
// result differs from `table`.
Result<columnar::TypePtr> MergeStruct(const columnar::TypePtr& table,
                                      const columnar::DataType& incoming, bool merge_schema,
                                      const std::string& prefix, bool* changed) {
  std::vector<columnar::Field> fields = table->fields();
  for (const columnar::Field& in_field : incoming.fields()) {
    const std::string path = PathOf(prefix, in_field.name);
    int idx = table->FieldIndex(in_field.name);
    if (idx < 0) {
      if (!merge_schema) {
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
    if (SameTypeIgnoringNullability(*table_field.type, *in_field.type)) continue;
    if (table_field.type->id() == columnar::TypeId::kStruct &&
        in_field.type->id() == columnar::TypeId::kStruct) {
      bool nested_changed = false;
      SILT_ASSIGN_OR_RETURN(
          columnar::TypePtr merged,
          MergeStruct(table_field.type, *in_field.type, merge_schema, path, &nested_changed));
      if (nested_changed) {
        table_field.type = std::move(merged);
        *changed = true;
      }
      continue;
    }
    return Status::InvalidArgument("column '", path, "' is ", table_field.type->ToDdl(),
                                   " in the table but ", in_field.type->ToDdl(),
                                   " in the data being appended");
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
                                                 bool merge_schema) {
  if (table == nullptr || table->id() != columnar::TypeId::kStruct ||
      incoming.id() != columnar::TypeId::kStruct) {
    return Status::InvalidArgument("schemas to merge must be structs");
  }
  bool changed = false;
  return MergeStruct(table, incoming, merge_schema, "", &changed);
}

}  // namespace silt::delta
