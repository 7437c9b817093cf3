// Helpers for writing kernels (internal to expr): typed readers over a Datum
// (a constant reads row 0 for every row through an index mask, so loops stay
// branch-free), output builders that allocate once per batch, and validity
// bitmap operations done a byte at a time.
//
// Thread safety: plain values; one kernel invocation each.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "silt/base/buffer.h"
#include "silt/columnar/column.h"
#include "silt/expr/kernel/bound.h"

namespace silt::expr {

using columnar::BitmapBytes;

// Returns a validity bitmap `a AND b` over `length` bits (either may be null
// = all valid), and its null count. Null result when both are null.
BufferPtr AndBitmaps(const Buffer* a, const Buffer* b, int64_t length, int64_t* null_count);

// A mutable validity bitmap being computed for an output column.
class ValidityOut {
 public:
  explicit ValidityOut(int64_t length) : length_(length) {}
  // Starts from the AND of the arguments' validity (constants count as one
  // value for every row). Returns false when some constant argument is null
  // (every row is null).
  bool InitFromArgs(std::span<const Datum> args);
  // ANDs one argument's validity in (a constant counts for every row).
  // Returns false, with every row null, when it is a null constant.
  bool AndArg(const columnar::Column& column, bool constant);
  // Starts from a copy of `column`'s validity.
  void InitFromColumn(const columnar::Column& column);
  // Marks a row null.
  // Inlined whole (the buffer test too): kernels call it in their loops.
  [[gnu::always_inline]] void SetNull(int64_t row) {
    if (bits_ == nullptr) EnsureBuffer();
    columnar::ClearBit(bits_, row);
  }
  void SetAllNull() {
    EnsureBuffer();
    std::memset(bits_, 0, static_cast<size_t>(BitmapBytes(length_)));
  }
  bool IsValid(int64_t row) const { return bits_ == nullptr || columnar::GetBit(bits_, row); }
  // Pointer to the bitmap, or null while every row is valid.
  const uint8_t* bits() const { return bits_; }
  // Hands the bitmap to `column` (null when all valid) with its null count.
  void FinishInto(columnar::Column* column);

 private:
  void EnsureBuffer();
  int64_t length_;
  BufferPtr buffer_;
  uint8_t* bits_ = nullptr;
};

// Reads fixed-width values of physical type T.
template <typename T>
class FixedReader {
 public:
  explicit FixedReader(const Datum& d) : FixedReader(*d.column, d.constant) {}
  explicit FixedReader(const columnar::Column& c, bool constant = false)
      : values_(ValuesOf(c)),
        validity_(c.validity ? c.validity->data() : nullptr),
        mask_(constant ? 0 : ~int64_t{0}) {}
  T operator[](int64_t row) const { return values_[row & mask_]; }
  bool IsValid(int64_t row) const {
    return validity_ == nullptr || columnar::GetBit(validity_, row & mask_);
  }

 private:
  static const T* ValuesOf(const columnar::Column& c) {
    static const T kZero[1] = {T()};
    return c.values != nullptr && c.values->size() > 0 ? c.values->data_as<T>() : kZero;
  }
  const T* values_;
  const uint8_t* validity_;
  int64_t mask_;
};

class BoolReader {
 public:
  explicit BoolReader(const Datum& d) : BoolReader(*d.column, d.constant) {}
  explicit BoolReader(const columnar::Column& c, bool constant = false)
      : values_(c.values != nullptr && c.values->size() > 0 ? c.values->data() : kZero),
        validity_(c.validity ? c.validity->data() : nullptr),
        mask_(constant ? 0 : ~int64_t{0}) {}
  bool operator[](int64_t row) const { return columnar::GetBit(values_, row & mask_); }
  bool IsValid(int64_t row) const {
    return validity_ == nullptr || columnar::GetBit(validity_, row & mask_);
  }

 private:
  static constexpr uint8_t kZero[1] = {0};
  const uint8_t* values_;
  const uint8_t* validity_;
  int64_t mask_;
};

// Reads string or binary values.
class StringReader {
 public:
  explicit StringReader(const Datum& d) : StringReader(*d.column, d.constant) {}
  explicit StringReader(const columnar::Column& c, bool constant = false)
      : offsets_(c.values != nullptr && c.values->size() > 0 ? c.values->data_as<int32_t>()
                                                             : kZeroOffsets),
        data_(c.data != nullptr ? reinterpret_cast<const char*>(c.data->data()) : ""),
        validity_(c.validity ? c.validity->data() : nullptr),
        mask_(constant ? 0 : ~int64_t{0}) {}
  std::string_view operator[](int64_t row) const {
    int64_t i = row & mask_;
    return std::string_view(data_ + offsets_[i],
                            static_cast<size_t>(offsets_[i + 1] - offsets_[i]));
  }
  bool IsValid(int64_t row) const {
    return validity_ == nullptr || columnar::GetBit(validity_, row & mask_);
  }

 private:
  static constexpr int32_t kZeroOffsets[2] = {0, 0};
  const int32_t* offsets_;
  const char* data_;
  const uint8_t* validity_;
  int64_t mask_;
};

// Output of fixed-width values: one allocation of `length` values.
template <typename T>
class FixedWriter {
 public:
  explicit FixedWriter(int64_t length) : length_(length), values_(std::make_shared<Buffer>()) {
    values_->Resize(length * static_cast<int64_t>(sizeof(T)));
    data_ = values_->mutable_data_as<T>();
  }
  T* data() { return data_; }
  void Set(int64_t row, T v) { data_[row] = v; }
  columnar::ColumnPtr Finish(const columnar::TypePtr& type, ValidityOut* validity) {
    auto col = std::make_shared<columnar::Column>();
    col->type = type;
    col->length = length_;
    col->values = values_;
    validity->FinishInto(col.get());
    return col;
  }

 private:
  int64_t length_;
  BufferPtr values_;
  T* data_;
};

class BoolWriter {
 public:
  explicit BoolWriter(int64_t length) : length_(length), values_(std::make_shared<Buffer>()) {
    values_->Resize(BitmapBytes(length));
    data_ = values_->mutable_data();
  }
  void Set(int64_t row, bool v) {
    if (v) {
      columnar::SetBit(data_, row);
    } else {
      columnar::ClearBit(data_, row);
    }
  }
  uint8_t* bits() { return data_; }
  columnar::ColumnPtr Finish(const columnar::TypePtr& type, ValidityOut* validity) {
    auto col = std::make_shared<columnar::Column>();
    col->type = type;
    col->length = length_;
    col->values = values_;
    validity->FinishInto(col.get());
    return col;
  }

 private:
  int64_t length_;
  BufferPtr values_;
  uint8_t* data_;
};

// Row r of the output (of `type`, `n` rows) is row r of args[choice[r]]
// (row 0 of a constant); NULL where choice[r] < 0 or the chosen value is
// NULL. One pass per batch, dispatched once on the type. Errors:
// NotSupported for nested types.
Result<columnar::ColumnPtr> GatherChoice(const columnar::TypePtr& type, std::span<const Datum> args,
                                         const std::vector<int16_t>& choice, int64_t n);

// A column of `length` nulls of a primitive or nested type.
columnar::ColumnPtr NullColumn(const columnar::TypePtr& type, int64_t length);

}  // namespace silt::expr
