// Reading one value of a column as the widest C++ type of its family, for the
// row-at-a-time parts of operators (group keys, aggregate updates, ORDER BY
// comparisons) and comparing two values. For operator code in exec/ and its users (query/,
// stream/); the column's type decides the physical width, so callers only pick the family
// (integral, floating, decimal).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "silt/columnar/column.h"

namespace silt::exec {

// Integral-like values (boolean, byte, short, int, long, date, timestamps) as
// int64. REQUIRES: row i is not null.
inline int64_t IntAt(const columnar::Column& c, int64_t i) {
  switch (c.type->id()) {
    case columnar::TypeId::kBoolean: return c.BoolValue(i) ? 1 : 0;
    case columnar::TypeId::kByte: return c.Value<int8_t>(i);
    case columnar::TypeId::kShort: return c.Value<int16_t>(i);
    case columnar::TypeId::kInt:
    case columnar::TypeId::kDate: return c.Value<int32_t>(i);
    default: return c.Value<int64_t>(i);
  }
}

// float or double as double.
inline double DoubleAt(const columnar::Column& c, int64_t i) {
  return c.type->id() == columnar::TypeId::kFloat ? static_cast<double>(c.Value<float>(i))
                                                  : c.Value<double>(i);
}

// A decimal's unscaled value.
inline __int128 DecimalAt(const columnar::Column& c, int64_t i) {
  __int128 v;
  std::memcpy(&v, c.values->data() + i * 16, 16);
  return v;
}

// A decimal as the nearest double, as Spark's cast (BigDecimal.doubleValue).
inline double DecimalToDouble(__int128 unscaled, int scale) {
  char digits[48];
  char* end = digits + sizeof(digits);
  char* p = end;
  const bool negative = unscaled < 0;
  unsigned __int128 u = negative ? static_cast<unsigned __int128>(-(unscaled + 1)) + 1 : unscaled;
  do {
    *--p = static_cast<char>('0' + static_cast<int>(u % 10));
    u /= 10;
  } while (u != 0);
  std::string text = negative ? "-" : "";
  text.append(p, end);
  text += "e-" + std::to_string(scale);
  return std::strtod(text.c_str(), nullptr);
}

// Whether values of `id` have an order (min/max, ORDER BY, dedupBy's
// orderBy): booleans, numbers, dates, timestamps, strings and binaries
// (by bytes).
inline bool IsOrderable(columnar::TypeId id) {
  switch (id) {
    case columnar::TypeId::kBoolean:
    case columnar::TypeId::kByte:
    case columnar::TypeId::kShort:
    case columnar::TypeId::kInt:
    case columnar::TypeId::kLong:
    case columnar::TypeId::kDate:
    case columnar::TypeId::kTimestamp:
    case columnar::TypeId::kTimestampNtz:
    case columnar::TypeId::kFloat:
    case columnar::TypeId::kDouble:
    case columnar::TypeId::kDecimal:
    case columnar::TypeId::kString:
    case columnar::TypeId::kBinary: return true;
    default: return false;
  }
}

// Spark's ascending order of rows i and j of `c`: -1, 0 or 1, NaN above
// every other float or double. REQUIRES: IsOrderable, neither row null.
inline int CompareNonNull(const columnar::Column& c, int64_t i, int64_t j) {
  auto cmp = [](const auto& a, const auto& b) { return a < b ? -1 : (b < a ? 1 : 0); };
  switch (c.type->id()) {
    case columnar::TypeId::kFloat:
    case columnar::TypeId::kDouble: {
      const double a = DoubleAt(c, i);
      const double b = DoubleAt(c, j);
      const bool a_nan = std::isnan(a);
      const bool b_nan = std::isnan(b);
      if (a_nan || b_nan) return cmp(a_nan, b_nan);
      return cmp(a, b);
    }
    case columnar::TypeId::kDecimal: return cmp(DecimalAt(c, i), DecimalAt(c, j));
    case columnar::TypeId::kString:
    case columnar::TypeId::kBinary: {
      const int r = c.StringValue(i).compare(c.StringValue(j));
      return r < 0 ? -1 : (r > 0 ? 1 : 0);
    }
    default: return cmp(IntAt(c, i), IntAt(c, j));
  }
}

}  // namespace silt::exec
