// Reading one value of a column as the widest C++ type of its family, for the
// row-at-a-time parts of operators (group keys, aggregate updates, ORDER BY
// comparisons). For operator code in exec/ and its users (query/, stream/);
// the column's type decides the physical width, so callers only pick the
// family (integral, floating, decimal).
#pragma once

#include <cstdint>
#include <cstring>

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

}  // namespace silt::exec
