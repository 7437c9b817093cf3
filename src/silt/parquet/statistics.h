// TypedStatistics<T>: min / max / null count / NaN count of a column chunk,
// kept in the writer's dense physical value type and ordered as Parquet's
// ColumnOrder TYPE_ORDER requires:
//   int32_t, int64_t (ints, dates, timestamps, small decimals): signed
//   __int128 (decimals stored as FIXED_LEN_BYTE_ARRAY): signed value order
//   float, double: numeric, NaN ignored (counted in nan_count); a zero min
//                  is written as -0.0 and a zero max as +0.0. ToThrift
//                  writes no bounds once a NaN was seen: parquet-mr (Spark's
//                  reader) ignores nan_count, so NaN-free bounds would let it
//                  skip row groups and pages (column index) holding NaN,
//                  which Spark orders above every number
//   std::string_view (BYTE_ARRAY): unsigned byte-wise
//   uint8_t (booleans): false < true
//
// ToThrift() encodes min_value/max_value (fields 6/5) PLAIN without length
// prefix, and also the deprecated min/max (2/1) where their signed order
// agrees (booleans, INT32, INT64, FLOAT, DOUBLE).
//
// Update() runs over dense non-null values in a tight loop; string extrema
// are found as views and copied only when they change.
//
// Thread safety: one instance per thread.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "silt/base/short_bytes.h"
#include "silt/parquet/parquet_metadata.h"

namespace silt::parquet {

// Values larger than this are left out of the footer's min/max (the null
// count is still written) to keep footers small.
inline constexpr size_t kMaxStatisticsValueBytes = 4096;

template <typename T>
class TypedStatistics {
 public:
  // Stored form of an extreme value: strings own their bytes.
  using Stored = std::conditional_t<std::is_same_v<T, std::string_view>, std::string, T>;

  void Update(const T* values, int64_t count);
  void AddNulls(int64_t n) { null_count_ += n; }
  void Merge(const TypedStatistics& other);
  void Reset() { *this = TypedStatistics(); }

  bool has_min_max() const { return has_min_max_; }
  // REQUIRES: has_min_max().
  const Stored& min() const { return min_; }
  const Stored& max() const { return max_; }
  int64_t null_count() const { return null_count_; }
  int64_t nan_count() const { return nan_count_; }

  // `type_length` is the FIXED_LEN_BYTE_ARRAY width for __int128 values.
  Statistics ToThrift(PhysicalType physical_type, int type_length) const;

 private:
  bool has_min_max_ = false;
  Stored min_{};
  Stored max_{};
  int64_t null_count_ = 0;
  int64_t nan_count_ = 0;
};

template <typename T>
void TypedStatistics<T>::Update(const T* values, int64_t count) {
  if (count == 0) return;
  if constexpr (std::is_same_v<T, std::string_view>) {
    std::string_view lo = values[0];
    std::string_view hi = values[0];
    for (int64_t i = 1; i < count; ++i) {
      // string_view compares through char_traits<char>, which orders bytes
      // as unsigned char: Parquet's byte-wise unsigned order. lo <= hi, so
      // a value at or below lo needs no second comparison (a column's
      // values often repeat its extrema: few devices, few states).
      // A value equal to the one before it changes nothing; short ones are
      // told equal inline (ids and states repeat in runs), long ones of
      // equal length go on to the comparisons.
      bool decided;
      if (short_bytes::ShortEqual(values[i], values[i - 1], &decided)) continue;
      const int vs_lo = values[i].compare(lo);
      if (vs_lo < 0) {
        lo = values[i];
      } else if (vs_lo > 0 && hi < values[i]) {
        hi = values[i];
      }
    }
    if (!has_min_max_) {
      min_.assign(lo);
      max_.assign(hi);
      has_min_max_ = true;
    } else {
      if (lo < std::string_view(min_)) min_.assign(lo);
      if (std::string_view(max_) < hi) max_.assign(hi);
    }
  } else if constexpr (std::is_floating_point_v<T>) {
    T lo = 0;
    T hi = 0;
    bool any = false;
    int64_t nans = 0;
    for (int64_t i = 0; i < count; ++i) {
      const T v = values[i];
      if (std::isnan(v)) {
        ++nans;
        continue;
      }
      if (!any) {
        lo = hi = v;
        any = true;
      } else {
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
      }
    }
    nan_count_ += nans;
    if (!any) return;
    if (!has_min_max_) {
      min_ = lo;
      max_ = hi;
      has_min_max_ = true;
    } else {
      min_ = lo < min_ ? lo : min_;
      max_ = hi > max_ ? hi : max_;
    }
  } else {
    T lo = values[0];
    T hi = values[0];
    for (int64_t i = 1; i < count; ++i) {
      lo = values[i] < lo ? values[i] : lo;
      hi = values[i] > hi ? values[i] : hi;
    }
    if (!has_min_max_) {
      min_ = lo;
      max_ = hi;
      has_min_max_ = true;
    } else {
      min_ = lo < min_ ? lo : min_;
      max_ = hi > max_ ? hi : max_;
    }
  }
}

template <typename T>
void TypedStatistics<T>::Merge(const TypedStatistics& other) {
  null_count_ += other.null_count_;
  nan_count_ += other.nan_count_;
  if (!other.has_min_max_) return;
  if (!has_min_max_) {
    min_ = other.min_;
    max_ = other.max_;
    has_min_max_ = true;
    return;
  }
  if (other.min_ < min_) min_ = other.min_;
  if (max_ < other.max_) max_ = other.max_;
}

// Explicitly instantiated in statistics.cc.
extern template class TypedStatistics<uint8_t>;
extern template class TypedStatistics<int32_t>;
extern template class TypedStatistics<int64_t>;
extern template class TypedStatistics<float>;
extern template class TypedStatistics<double>;
extern template class TypedStatistics<__int128>;
extern template class TypedStatistics<std::string_view>;

}  // namespace silt::parquet
