// Gathering for the column writers: rows of a Column -> a dense array of the
// Parquet physical value type, nulls left out. The rows are a contiguous
// range [offset, offset + length) or a list of row indices (a partition's
// rows of a batch, written without taking them into columns of their own
// first). Each gather returns a pointer to `*count` values: into the column
// itself when a contiguous range needs no conversion or compaction, else
// into `scratch`. Private to column_writer.cc.
//
// Thread safety: stateless functions over caller-owned scratch.
#pragma once

#include <cstdint>
#include <string_view>
#include <type_traits>
#include <vector>

#include "silt/columnar/column.h"
#include "silt/parquet/scratch_internal.h"

namespace silt::parquet::internal {

template <typename T>
using GatherFn = const T* (*)(const columnar::Column& column, int64_t offset, int64_t length,
                              ScratchVector<T>* scratch, int64_t* count);
template <typename T>
using GatherAtFn = const T* (*)(const columnar::Column& column, const int64_t* rows, int64_t length,
                                ScratchVector<T>* scratch, int64_t* count);

// Row `i` of a slice: offset + i, or rows[i].
struct RangeRows {
  int64_t offset;
  int64_t operator[](int64_t i) const { return offset + i; }
};
struct ListedRows {
  const int64_t* rows;
  int64_t operator[](int64_t i) const { return rows[i]; }
};

// Room for `length` values. What the scratch held is not kept: growing it
// copies nothing and (ScratchVector) fills nothing.
template <typename T>
T* ScratchFor(ScratchVector<T>* scratch, int64_t length) {
  if (static_cast<int64_t>(scratch->size()) < length) {
    scratch->clear();
    scratch->resize(static_cast<size_t>(length));
  }
  return scratch->data();
}

template <typename Src, typename T, bool kHasNulls, typename Rows>
const T* GatherFixedRows(const columnar::Column& column, Rows rows, int64_t length,
                         ScratchVector<T>* scratch, int64_t* count) {
  const Src* src = column.raw_values<Src>();
  T* dst = ScratchFor(scratch, length);
  if constexpr (kHasNulls) {
    // Branch-free compaction: always store, advance only past valid rows.
    const uint8_t* valid = column.validity->data();
    int64_t k = 0;
    for (int64_t i = 0; i < length; ++i) {
      const int64_t row = rows[i];
      dst[k] = static_cast<T>(src[row]);
      k += columnar::GetBit(valid, row);
    }
    *count = k;
  } else {
    for (int64_t i = 0; i < length; ++i) dst[i] = static_cast<T>(src[rows[i]]);
    *count = length;
  }
  return dst;
}

template <typename Src, typename T, bool kHasNulls>
const T* GatherFixed(const columnar::Column& column, int64_t offset, int64_t length,
                     ScratchVector<T>* scratch, int64_t* count) {
  if constexpr (!kHasNulls && std::is_same_v<Src, T>) {
    *count = length;
    return column.raw_values<Src>() + offset;
  }
  return GatherFixedRows<Src, T, kHasNulls>(column, RangeRows{offset}, length, scratch, count);
}

template <typename Src, typename T, bool kHasNulls>
const T* GatherFixedAt(const columnar::Column& column, const int64_t* rows, int64_t length,
                       ScratchVector<T>* scratch, int64_t* count) {
  return GatherFixedRows<Src, T, kHasNulls>(column, ListedRows{rows}, length, scratch, count);
}

template <bool kHasNulls, typename Rows>
const uint8_t* GatherBoolsRows(const columnar::Column& column, Rows rows, int64_t length,
                               ScratchVector<uint8_t>* scratch, int64_t* count) {
  uint8_t* dst = ScratchFor(scratch, length);
  const uint8_t* bits = column.values->data();
  int64_t k = 0;
  if constexpr (kHasNulls) {
    const uint8_t* valid = column.validity->data();
    for (int64_t i = 0; i < length; ++i) {
      const int64_t row = rows[i];
      dst[k] = columnar::GetBit(bits, row);
      k += columnar::GetBit(valid, row);
    }
  } else {
    for (int64_t i = 0; i < length; ++i) dst[i] = columnar::GetBit(bits, rows[i]);
    k = length;
  }
  *count = k;
  return dst;
}

template <bool kHasNulls>
const uint8_t* GatherBools(const columnar::Column& column, int64_t offset, int64_t length,
                           ScratchVector<uint8_t>* scratch, int64_t* count) {
  return GatherBoolsRows<kHasNulls>(column, RangeRows{offset}, length, scratch, count);
}

template <bool kHasNulls>
const uint8_t* GatherBoolsAt(const columnar::Column& column, const int64_t* rows, int64_t length,
                             ScratchVector<uint8_t>* scratch, int64_t* count) {
  return GatherBoolsRows<kHasNulls>(column, ListedRows{rows}, length, scratch, count);
}

template <bool kHasNulls, typename Rows>
const std::string_view* GatherStringsRows(const columnar::Column& column, Rows rows, int64_t length,
                                          ScratchVector<std::string_view>* scratch,
                                          int64_t* count) {
  std::string_view* dst = ScratchFor(scratch, length);
  const int32_t* offs = column.offsets();
  const char* data = column.data ? reinterpret_cast<const char*>(column.data->data()) : "";
  int64_t k = 0;
  if constexpr (kHasNulls) {
    const uint8_t* valid = column.validity->data();
    for (int64_t i = 0; i < length; ++i) {
      const int64_t row = rows[i];
      dst[k] = std::string_view(data + offs[row], static_cast<size_t>(offs[row + 1] - offs[row]));
      k += columnar::GetBit(valid, row);
    }
  } else {
    for (int64_t i = 0; i < length; ++i) {
      const int64_t row = rows[i];
      dst[i] = std::string_view(data + offs[row], static_cast<size_t>(offs[row + 1] - offs[row]));
    }
    k = length;
  }
  *count = k;
  return dst;
}

template <bool kHasNulls>
const std::string_view* GatherStrings(const columnar::Column& column, int64_t offset,
                                      int64_t length, ScratchVector<std::string_view>* scratch,
                                      int64_t* count) {
  return GatherStringsRows<kHasNulls>(column, RangeRows{offset}, length, scratch, count);
}

template <bool kHasNulls>
const std::string_view* GatherStringsAt(const columnar::Column& column, const int64_t* rows,
                                        int64_t length, ScratchVector<std::string_view>* scratch,
                                        int64_t* count) {
  return GatherStringsRows<kHasNulls>(column, ListedRows{rows}, length, scratch, count);
}

// A column writer's gathers: contiguous and listed rows, without and with
// nulls (one dispatch per slice).
template <typename T>
struct Gatherers {
  GatherFn<T> no_nulls;
  GatherFn<T> with_nulls;
  GatherAtFn<T> at_no_nulls;
  GatherAtFn<T> at_with_nulls;
};

template <typename Src, typename T>
Gatherers<T> FixedGatherers() {
  return {&GatherFixed<Src, T, false>, &GatherFixed<Src, T, true>, &GatherFixedAt<Src, T, false>,
          &GatherFixedAt<Src, T, true>};
}

inline Gatherers<uint8_t> BoolGatherers() {
  return {&GatherBools<false>, &GatherBools<true>, &GatherBoolsAt<false>, &GatherBoolsAt<true>};
}

inline Gatherers<std::string_view> StringGatherers() {
  return {&GatherStrings<false>, &GatherStrings<true>, &GatherStringsAt<false>,
          &GatherStringsAt<true>};
}

}  // namespace silt::parquet::internal
