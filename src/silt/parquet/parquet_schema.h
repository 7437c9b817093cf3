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
// LIST/MAP backward-compatibility rules of LogicalTypes.md.
//
// Thread safety: stateless functions; descriptors are plain values.
#pragma once

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

// One top-level field of a file's schema as the reader sees it.
struct ColumnDescriptor {
  columnar::Field field;  // Spark name, type and nullability
  // Leaf column chunks of this field: [first_leaf, first_leaf + num_leaves).
  int first_leaf = 0;
  int num_leaves = 0;
  // True for a single non-repeated primitive leaf (the only shape read
  // today); `leaf` is then its schema element.
  bool flat = false;
  SchemaElement leaf;
  // 1 when the flat field is OPTIONAL, else 0.
  int max_definition_level = 0;
  // Not OK when the field cannot be read; the message names the field and
  // the Parquet type. The field's type is then void.
  Status unsupported;
};

// Builds descriptors for the root's children. Errors: Corruption when the
// flattened schema tree is malformed (missing root, child counts that run
// past the list, leaves without a type).
Result<std::vector<ColumnDescriptor>> BuildColumnDescriptors(
    const std::vector<SchemaElement>& schema);

}  // namespace silt::parquet
