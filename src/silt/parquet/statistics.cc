#include "silt/parquet/statistics.h"

#include <cstring>

#include "silt/parquet/plain_encoder.h"

namespace silt::parquet {

namespace {

template <typename T>
std::string LittleEndianBytes(T v) {
  std::string s(sizeof(T), '\0');
  std::memcpy(s.data(), &v, sizeof(T));
  return s;
}

}  // namespace

template <typename T>
Statistics TypedStatistics<T>::ToThrift(PhysicalType physical_type, int type_length) const {
  Statistics s;
  s.null_count = null_count_;
  if constexpr (std::is_floating_point_v<T>) {
    s.nan_count = nan_count_;
    if (nan_count_ > 0) return s;
  }
  if (!has_min_max_) return s;

  std::string lo;
  std::string hi;
  if constexpr (std::is_same_v<T, std::string_view>) {
    if (min_.size() > kMaxStatisticsValueBytes || max_.size() > kMaxStatisticsValueBytes) return s;
    lo = min_;
    hi = max_;
  } else if constexpr (std::is_same_v<T, __int128>) {
    lo = DecimalToBigEndian(min_, type_length);
    hi = DecimalToBigEndian(max_, type_length);
  } else if constexpr (std::is_floating_point_v<T>) {
    // Readers cannot tell which zero a chunk holds, so widen zero bounds.
    T mn = min_ == 0 ? -static_cast<T>(0) : min_;
    T mx = max_ == 0 ? static_cast<T>(0) : max_;
    lo = LittleEndianBytes(mn);
    hi = LittleEndianBytes(mx);
  } else if constexpr (std::is_same_v<T, uint8_t>) {
    lo = std::string(1, static_cast<char>(min_ != 0));
    hi = std::string(1, static_cast<char>(max_ != 0));
  } else {
    lo = LittleEndianBytes(min_);
    hi = LittleEndianBytes(max_);
  }
  const bool legacy_order_matches =
      physical_type == PhysicalType::kBoolean || physical_type == PhysicalType::kInt32 ||
      physical_type == PhysicalType::kInt64 || physical_type == PhysicalType::kFloat ||
      physical_type == PhysicalType::kDouble;
  if (legacy_order_matches) {
    s.min = lo;
    s.max = hi;
  }
  s.min_value = std::move(lo);
  s.max_value = std::move(hi);
  return s;
}

template class TypedStatistics<uint8_t>;
template class TypedStatistics<int32_t>;
template class TypedStatistics<int64_t>;
template class TypedStatistics<float>;
template class TypedStatistics<double>;
template class TypedStatistics<__int128>;
template class TypedStatistics<std::string_view>;

}  // namespace silt::parquet
