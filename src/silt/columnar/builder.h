// ColumnBuilder: appends values of one type and seals them into a Column.
//
// One concrete (non-virtual) class serves every type so hot loops call inline
// methods only. Capacity is kept across Finish() calls when the builder is
// reused: Finish() hands the filled buffers to the column and starts fresh
// buffers reserved to the previous size (string and binary bytes to an
// eighth more, so a slightly larger next batch does not regrow them).
//
// Nested types:
//   struct: append each field through child(i), then AppendValid() or
//           AppendNull() on the struct itself (AppendNull also appends a null
//           to every child so children stay aligned).
//   array:  append elements through child(0), then CloseList() (or AppendNull).
//   map:    append keys through child(0)->child(0), values through
//           child(0)->child(1), mark each entry with child(0)->AppendValid(),
//           then CloseList().
//
// Thread safety: a builder is used by one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "silt/base/buffer.h"
#include "silt/columnar/column.h"

namespace silt::columnar {

class ColumnBuilder {
 public:
  explicit ColumnBuilder(TypePtr type, MemoryPool* pool = DefaultMemoryPool());
  ColumnBuilder(const ColumnBuilder&) = delete;
  ColumnBuilder& operator=(const ColumnBuilder&) = delete;

  const TypePtr& type() const { return type_; }
  int64_t length() const { return length_; }
  int64_t null_count() const { return null_count_; }
  ColumnBuilder* child(int i) { return children_[static_cast<size_t>(i)].get(); }
  int num_children() const { return static_cast<int>(children_.size()); }

  // Reserves capacity for `rows` more rows (struct children too; list
  // children cannot be sized from the row count). Never changes length().
  void Reserve(int64_t rows);
  // REQUIRES: string or binary. Reserves capacity for `bytes` more bytes of
  // values, so a caller that knows a chunk's size appends it without the
  // geometric regrowth (and its copies) of AppendString. Never changes
  // length().
  void ReserveData(int64_t bytes) { data_->Reserve(data_->size() + bytes); }

  void AppendNull();
  void AppendNulls(int64_t n) {
    for (int64_t i = 0; i < n; ++i) AppendNull();
  }

  // REQUIRES: fixed-width type with physical type T (int8_t … int64_t, float,
  // double, __int128 for decimal).
  template <typename T>
  void Append(T v) {
    values_->Append(&v, static_cast<int64_t>(sizeof(T)));
    MarkValid();
  }
  // REQUIRES: boolean.
  void AppendBool(bool v);
  // REQUIRES: string or binary.
  void AppendString(std::string_view v) {
    data_->Append(v.data(), static_cast<int64_t>(v.size()));
    int32_t end = static_cast<int32_t>(data_->size());
    values_->Append(&end, sizeof(end));
    MarkValid();
  }
  // REQUIRES: struct. Marks the struct row valid after its children were
  // appended.
  void AppendValid() { MarkValid(); }
  // REQUIRES: array or map. Ends the current list after its elements were
  // appended to child(0).
  void CloseList() {
    int32_t end = static_cast<int32_t>(children_[0]->length());
    values_->Append(&end, sizeof(end));
    MarkValid();
  }

  // Seals the appended rows into a Column and resets the builder to empty
  // (children too), with fresh buffers reserved to the sealed size. The
  // column's validity is null when no row is null.
  ColumnPtr Finish();

 private:
  void MarkValid() {
    if (validity_->size() * 8 <= length_) GrowValidity();
    SetBit(validity_->mutable_data(), length_);
    ++length_;
  }
  void GrowValidity();
  template <typename T>
  void AppendZero() {
    const T zero = 0;
    values_->Append(&zero, static_cast<int64_t>(sizeof(T)));
  }
  static int64_t Grow(int64_t min) {
    int64_t c = 64;
    while (c < min) c *= 2;
    return c;
  }
  void ResetBuffers(int64_t reserve_rows);

  TypePtr type_;
  MemoryPool* pool_;
  int64_t length_ = 0;
  int64_t null_count_ = 0;
  std::shared_ptr<Buffer> validity_;
  std::shared_ptr<Buffer> values_;
  std::shared_ptr<Buffer> data_;
  std::vector<std::unique_ptr<ColumnBuilder>> children_;
};

}  // namespace silt::columnar
