// Column: one immutable array of values of a single type, in the Arrow
// columnar layout (see types.h for each type's buffers). RecordBatch: a set of
// equal-length columns with a schema, the unit of work that flows from
// sources through operators to sinks.
//
// Columns start at offset 0 of their buffers (no slicing offsets); a slice is
// a copy (see Slice / Take in column_ops.h when present).
//
// Thread safety: immutable once built; share via ColumnPtr across threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "silt/base/buffer.h"
#include "silt/columnar/types.h"

namespace silt::columnar {

// The target number of rows per batch between the source and Parquet pages.
inline constexpr int64_t kTargetBatchRows = 8192;

// The bytes a bitmap of `bits` bits takes (validity bitmaps and BOOLEAN
// values), the last byte zero-padded.
inline constexpr int64_t BitmapBytes(int64_t bits) { return (bits + 7) / 8; }

inline bool GetBit(const uint8_t* bits, int64_t i) { return (bits[i >> 3] >> (i & 7)) & 1; }
inline void SetBit(uint8_t* bits, int64_t i) {
  bits[i >> 3] |= static_cast<uint8_t>(1u << (i & 7));
}
inline void ClearBit(uint8_t* bits, int64_t i) {
  bits[i >> 3] &= static_cast<uint8_t>(~(1u << (i & 7)));
}

struct Column;
using ColumnPtr = std::shared_ptr<const Column>;

struct Column {
  TypePtr type;
  int64_t length = 0;
  int64_t null_count = 0;
  // One bit per row, 1 = valid. Null when every row is valid.
  BufferPtr validity;
  // Fixed-width values, boolean bits, or int32 offsets (length + 1 entries)
  // for string, binary, array and map.
  BufferPtr values;
  // String/binary bytes.
  BufferPtr data;
  // Struct: one per field. Array: the elements. Map: one struct<key, value>.
  std::vector<ColumnPtr> children;

  bool IsValid(int64_t i) const { return validity == nullptr || GetBit(validity->data(), i); }
  bool IsNull(int64_t i) const { return !IsValid(i); }

  // REQUIRES: fixed-width type whose physical type is T.
  template <typename T>
  const T* raw_values() const {
    return values->data_as<T>();
  }
  template <typename T>
  T Value(int64_t i) const {
    return values->data_as<T>()[i];
  }
  bool BoolValue(int64_t i) const { return GetBit(values->data(), i); }

  // REQUIRES: string, binary, array or map.
  const int32_t* offsets() const { return values->data_as<int32_t>(); }
  // REQUIRES: string or binary.
  std::string_view StringValue(int64_t i) const {
    const int32_t* off = offsets();
    return std::string_view(reinterpret_cast<const char*>(data->data()) + off[i],
                            static_cast<size_t>(off[i + 1] - off[i]));
  }
};

struct RecordBatch {
  SchemaPtr schema;
  int64_t num_rows = 0;
  std::vector<ColumnPtr> columns;

  int num_columns() const { return static_cast<int>(columns.size()); }
  const ColumnPtr& column(int i) const { return columns[static_cast<size_t>(i)]; }
  // Column by (case-insensitive) name, or null.
  ColumnPtr GetColumn(std::string_view name) const;
};
using RecordBatchPtr = std::shared_ptr<const RecordBatch>;

// Checks buffer sizes, offsets monotonicity and child lengths against the
// type. Errors: Internal naming the first inconsistency. For tests and debug
// builds; not on hot paths.
Status ValidateColumn(const Column& column);
Status ValidateBatch(const RecordBatch& batch);

// A column of `length` nulls of `type` (nested types get null children).
ColumnPtr MakeNullColumn(const TypePtr& type, int64_t length);

// Rows [offset, offset + length) copied into a new column. The result is
// normalized: offsets start at 0 and validity is null when no row is null.
// REQUIRES: 0 <= offset, offset + length <= column.length.
ColumnPtr SliceColumn(const Column& column, int64_t offset, int64_t length);
// Rows at `indices` copied into a new column, in order (indices may repeat).
// REQUIRES: every index in [0, column.length).
ColumnPtr TakeColumn(const Column& column, const std::vector<int64_t>& indices);
// Appends columns of the same type into one. A single column is returned as
// is. REQUIRES: !columns.empty().
ColumnPtr ConcatColumns(const std::vector<ColumnPtr>& columns);
RecordBatchPtr SliceBatch(const RecordBatch& batch, int64_t offset, int64_t length);
RecordBatchPtr TakeBatch(const RecordBatch& batch, const std::vector<int64_t>& indices);
// Appends batches of the same schema into one; the first batch's schema
// object is used. A single batch is returned as is. REQUIRES: !batches.empty().
RecordBatchPtr ConcatBatches(const std::vector<RecordBatchPtr>& batches);

}  // namespace silt::columnar
