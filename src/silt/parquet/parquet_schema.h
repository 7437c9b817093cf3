// Mapping between Spark types (columnar::DataType) and Parquet schema
// elements, in both directions.
//
// Writing follows Spark's conventions (see file_writer.h). Reading follows
// Spark's Parquet schema converter: INT32 alone -> int, INT(8) -> byte,
// INT(16) -> short, unsigned INT(8|16|32) -> short|int|long, unsigned INT(64)
// -> decimal(20,0), INT64 -> long, DATE -> date, DECIMAL -> decimal(p,s),
// STRING/UTF8/ENUM/JSON -> string, other BYTE_ARRAY and FIXED_LEN_BYTE_ARRAY
// -> binary, INT96 and TIMESTAMP(isAdjustedToUTC=true) or the legacy
// TIMESTAMP_* annotations -> timestamp, TIMESTAMP(isAdjustedToUTC=false) ->
// timestamp_ntz, UNKNOWN -> void. Groups become struct/array/map with the
// LIST/MAP backward-compatibility rules of LogicalTypes.md. A top-level or
// struct field with a Parquet field_id carries it in its metadata as Spark
// does: {"parquet.field.id":N}.
//
// Thread safety: stateless functions; descriptors are plain values.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/types.h"
#include "silt/parquet/parquet_metadata.h"

namespace silt::parquet {

// The leaf schema element for a flat (top-level primitive) Spark field.
// Errors: NotSupported naming the field for nested and void types.
Result<SchemaElement> ParquetElementForField(const columnar::Field& field);

// Bytes of the FIXED_LEN_BYTE_ARRAY Spark uses for decimals of `precision`
// (the fewest bytes whose signed range holds 10^precision - 1).
int DecimalFlbaWidth(int precision);

// The shape of one Spark node (a top-level field, a struct field, a list
// element, a map key or value) in terms of the Parquet levels of the leaves
// below it. A level entry (def, rep) of a leaf under this node opens a slot
// (a row of this node's column) when rep <= rep_level and def >= exist_def;
// the slot is non-null when def >= valid_def. For a list or map, the entry
// adds an element when rep <= rep_level + 1 and def >= child_def.
struct LevelNode {
  columnar::TypePtr type;
  int rep_level = 0;
  int exist_def = 0;
  int valid_def = 0;
  int child_def = 0;  // list/map only
  // Leaf ordinal within the top-level field (-1 for groups); for groups, the
  // ordinal of the first leaf below.
  int leaf = -1;
  int first_leaf = 0;
  // struct: one per field; array: the element; map: key, value.
  std::vector<LevelNode> children;
};

// One top-level field of a file's schema as the reader sees it, or one leaf
// column of a nested field (see `leaves`).
struct ColumnDescriptor {
  columnar::Field field;  // Spark name, type and nullability
  // Leaf column chunks of this field: [first_leaf, first_leaf + num_leaves).
  int first_leaf = 0;
  int num_leaves = 0;
  // True for a single primitive leaf: a non-repeated top-level primitive, or
  // an entry of a nested field's `leaves`. `leaf` is then its schema element.
  bool flat = false;
  SchemaElement leaf;
  // Maximum definition and repetition levels of the leaf (flat only).
  int max_definition_level = 0;
  int max_repetition_level = 0;
  // Flat only: level entries with def >= slot_definition_level are rows of
  // the leaf's column (entries below it are empty or null ancestors).
  int slot_definition_level = 0;
  // The leaf's path from the root (flat only), for ColumnMetaData.
  std::vector<std::string> path;
  // Nested fields (struct/array/map, or a repeated primitive): one flat
  // descriptor per leaf, in column-chunk order, and the level tree.
  std::vector<ColumnDescriptor> leaves;
  std::shared_ptr<const LevelNode> levels;
  // Not OK when the field cannot be read; the message names the field and
  // the Parquet type. The field's type is then void.
  Status unsupported;
};

// The schema elements for a Spark field, in Parquet's depth-first order:
// one leaf for a primitive; for nested types the groups Spark writes
// (struct -> group; array -> LIST group / repeated group "list" / "element";
// map -> MAP group / repeated group "key_value" / "key", "value").
// Errors: NotSupported naming the field for void types.
Result<std::vector<SchemaElement>> ParquetElementsForField(const columnar::Field& field);

// Builds descriptors for the root's children. Errors: Corruption when the
// flattened schema tree is malformed (missing root, child counts that run
// past the list, leaves without a type).
Result<std::vector<ColumnDescriptor>> BuildColumnDescriptors(
    const std::vector<SchemaElement>& schema);

}  // namespace silt::parquet
