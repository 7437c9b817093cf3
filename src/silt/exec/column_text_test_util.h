// Test-only: one value of a column as text, exactly (doubles as their bits'
// shortest round-trip form, NaN and -0.0 visible), for comparing results.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>

#include "silt/columnar/column.h"
#include "silt/exec/value_access.h"

namespace silt::exec::testing {

inline std::string Int128Text(__int128 v) {
  if (v == 0) return "0";
  bool neg = v < 0;
  unsigned __int128 u = neg ? static_cast<unsigned __int128>(-(v + 1)) + 1 : v;
  std::string s;
  while (u != 0) {
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  }
  return neg ? "-" + s : s;
}

inline std::string CellText(const columnar::Column& c, int64_t i) {
  if (c.IsNull(i)) return "NULL";
  char buf[64];
  switch (c.type->id()) {
    case columnar::TypeId::kFloat:
    case columnar::TypeId::kDouble: {
      double v = DoubleAt(c, i);
      if (std::isnan(v)) return "NaN";
      std::snprintf(buf, sizeof(buf), "%.17g", v);
      return std::signbit(v) && v == 0 ? "-0" : std::string(buf);
    }
    case columnar::TypeId::kDecimal: return Int128Text(DecimalAt(c, i));
    case columnar::TypeId::kString:
    case columnar::TypeId::kBinary: return "'" + std::string(c.StringValue(i)) + "'";
    case columnar::TypeId::kStruct: {
      std::string s = "{";
      for (size_t f = 0; f < c.children.size(); ++f) {
        if (f > 0) s += ", ";
        s += CellText(*c.children[f], i);
      }
      return s + "}";
    }
    case columnar::TypeId::kArray: {
      std::string s = "[";
      for (int32_t e = c.offsets()[i]; e < c.offsets()[i + 1]; ++e) {
        if (e > c.offsets()[i]) s += ", ";
        s += CellText(*c.children[0], e);
      }
      return s + "]";
    }
    default: return std::to_string(IntAt(c, i));
  }
}

}  // namespace silt::exec::testing
