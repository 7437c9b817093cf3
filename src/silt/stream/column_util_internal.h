// Column helpers shared by the stream module's sources and transforms.
// Private to src/silt/stream/*.cc.
//
// Thread safety: pure functions over immutable columns.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "silt/columnar/column.h"

namespace silt::stream::internal {

// A batch of `columns` (each of `num_rows` rows) under `schema`.
inline columnar::RecordBatchPtr MakeBatch(columnar::SchemaPtr schema, int64_t num_rows,
                                          std::vector<columnar::ColumnPtr> columns) {
  auto batch = std::make_shared<columnar::RecordBatch>();
  batch->schema = std::move(schema);
  batch->num_rows = num_rows;
  batch->columns = std::move(columns);
  return batch;
}

// Field `child_index` of a struct column with the struct's own nulls applied:
// where the struct row is null, the field is null (Spark's GetStructField).
// Shares the child's value buffers.
inline columnar::ColumnPtr StructFieldWithParentNulls(const columnar::Column& parent,
                                                      int child_index) {
  const columnar::ColumnPtr& child = parent.children[static_cast<size_t>(child_index)];
  if (parent.validity == nullptr || parent.null_count == 0) return child;
  const int64_t length = parent.length;
  const int64_t num_bytes = (length + 7) / 8;
  auto validity = std::make_shared<Buffer>();
  validity->Resize(num_bytes);
  uint8_t* out = validity->mutable_data();
  const uint8_t* parent_bits = parent.validity->data();
  const uint8_t* child_bits = child->validity ? child->validity->data() : nullptr;
  for (int64_t byte_idx = 0; byte_idx < num_bytes; ++byte_idx) {
    out[byte_idx] = child_bits ? static_cast<uint8_t>(parent_bits[byte_idx] & child_bits[byte_idx])
                               : parent_bits[byte_idx];
  }
  int64_t null_count = 0;
  for (int64_t row_idx = 0; row_idx < length; ++row_idx) {
    null_count += columnar::GetBit(out, row_idx) ? 0 : 1;
  }
  auto result = std::make_shared<columnar::Column>(*child);
  result->validity = std::move(validity);
  result->null_count = null_count;
  return result;
}

}  // namespace silt::stream::internal
