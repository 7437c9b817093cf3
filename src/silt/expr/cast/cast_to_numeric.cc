// CAST to TINYINT, SMALLINT, INT, BIGINT, FLOAT and DOUBLE.
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <type_traits>

#include "silt/base/json_writer.h"
#include "silt/columnar/builder.h"
#include "silt/columnar/temporal.h"
#include "silt/expr/cast/cast_internal.h"
#include "silt/expr/kernel/bind_session_internal.h"
#include "silt/expr/kernel/function_registry.h"
#include "silt/expr/kernel/kernel_util.h"
#include "silt/expr/kernel/type_util.h"
#include "silt/expr/parse/ast.h"
#include "silt/expr/value/decimal_util.h"

namespace silt::expr::cast_internal {

namespace {

// UTF8String.toLong / toInt: trims whitespace and ISO controls, an optional
// sign, digits, and (when allowed) a '.' followed by digits that are
// ignored. Succeeds when the value lies in [min, max].
bool ParseSparkIntegral(std::string_view s, bool allow_decimal, int64_t min, int64_t max,
                        int64_t* out) {
  s = TrimAll(s);
  if (s.empty()) return false;
  size_t i = 0;
  bool negative = s[0] == '-';
  if (negative || s[0] == '+') {
    if (s.size() == 1) return false;
    ++i;
  }
  int128 value = 0;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c == '.' && allow_decimal) {
      ++i;
      break;
    }
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
    if (value > static_cast<int128>(std::numeric_limits<uint64_t>::max())) return false;
  }
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  if (negative) value = -value;
  if (value < min || value > max) return false;
  *out = static_cast<int64_t>(value);
  return true;
}

// java.lang.Double.parseDouble / Float.parseFloat, then Spark's
// processFloatingPointSpecialLiterals for "inf", "-infinity", "nan", ...
bool ParseJavaFloating(std::string_view text, bool is_float, double* out) {
  std::string_view s = JavaTrim(text);
  if (s.empty()) return false;
  std::string buf;
  size_t i = 0;
  bool negative = false;
  if (s[0] == '+' || s[0] == '-') {
    negative = s[0] == '-';
    ++i;
  }
  std::string_view rest = s.substr(i);
  bool ok = false;
  if (rest == "NaN") {
    *out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  if (rest == "Infinity") {
    *out = negative ? -std::numeric_limits<double>::infinity()
                    : std::numeric_limits<double>::infinity();
    return true;
  }
  auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  auto is_hex = [&](char c) {
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  };
  size_t p = 0;
  if (rest.size() > 2 && rest[0] == '0' && (rest[1] == 'x' || rest[1] == 'X')) {
    p = 2;
    size_t digits = 0;
    while (p < rest.size() && is_hex(rest[p])) ++p, ++digits;
    if (p < rest.size() && rest[p] == '.') {
      ++p;
      while (p < rest.size() && is_hex(rest[p])) ++p, ++digits;
    }
    // Java requires the binary exponent in hexadecimal form.
    if (digits > 0 && p < rest.size() && (rest[p] == 'p' || rest[p] == 'P')) {
      ++p;
      if (p < rest.size() && (rest[p] == '+' || rest[p] == '-')) ++p;
      size_t exp_digits = 0;
      while (p < rest.size() && is_digit(rest[p])) ++p, ++exp_digits;
      ok = exp_digits > 0;
    }
  } else {
    size_t digits = 0;
    while (p < rest.size() && is_digit(rest[p])) ++p, ++digits;
    if (p < rest.size() && rest[p] == '.') {
      ++p;
      while (p < rest.size() && is_digit(rest[p])) ++p, ++digits;
    }
    ok = digits > 0;
    if (ok && p < rest.size() && (rest[p] == 'e' || rest[p] == 'E')) {
      ++p;
      if (p < rest.size() && (rest[p] == '+' || rest[p] == '-')) ++p;
      size_t exp_digits = 0;
      while (p < rest.size() && is_digit(rest[p])) ++p, ++exp_digits;
      ok = exp_digits > 0;
    }
  }
  size_t number_end = p;
  if (ok && p < rest.size() &&
      (rest[p] == 'f' || rest[p] == 'F' || rest[p] == 'd' || rest[p] == 'D')) {
    ++p;
  }
  if (ok && p == rest.size()) {
    buf.reserve(number_end + 1);
    if (negative) buf.push_back('-');
    buf.append(rest.substr(0, number_end));
    if (is_float) {
      *out = static_cast<double>(std::strtof(buf.c_str(), nullptr));
    } else {
      *out = std::strtod(buf.c_str(), nullptr);
    }
    return true;
  }
  // Spark's case-insensitive spellings.
  if (EqualsIgnoreCase(s, "inf") || EqualsIgnoreCase(s, "+inf") ||
      EqualsIgnoreCase(s, "infinity") || EqualsIgnoreCase(s, "+infinity")) {
    *out = std::numeric_limits<double>::infinity();
    return true;
  }
  if (EqualsIgnoreCase(s, "-inf") || EqualsIgnoreCase(s, "-infinity")) {
    *out = -std::numeric_limits<double>::infinity();
    return true;
  }
  if (EqualsIgnoreCase(s, "nan")) {
    *out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  return false;
}

double DecimalToDouble(int128 v, int scale) {
  std::string text = DecimalText(v, scale);
  return std::strtod(text.c_str(), nullptr);
}

float DecimalToFloat(int128 v, int scale) {
  std::string text = DecimalText(v, scale);
  return std::strtof(text.c_str(), nullptr);
}

}  // namespace

template <typename Out>
Result<ColumnPtr> CastToIntegral(const CastCtx& c, const Column& in) {
  const bool ansi = c.options.ansi;
  constexpr int64_t kMin = std::numeric_limits<Out>::min();
  constexpr int64_t kMax = std::numeric_limits<Out>::max();
  // Narrows an exact 64-bit value: wraps like Java, or overflows under ANSI.
  auto narrow = [ansi](int64_t v, Out* o) {
    if (ansi && (v < kMin || v > kMax)) return Conv::kOverflow;
    *o = static_cast<Out>(v);
    return Conv::kOk;
  };
  switch (c.from.id()) {
    case TypeId::kString: {
      // Short and byte parse as int, then must fit (UTF8String.toShort).
      constexpr int64_t kParseMin = sizeof(Out) == 8 ? kMin : std::numeric_limits<int32_t>::min();
      constexpr int64_t kParseMax = sizeof(Out) == 8 ? kMax : std::numeric_limits<int32_t>::max();
      return MapToFixed<Out>(c, in, StringReader(in), [ansi](std::string_view s, Out* o) {
        int64_t v = 0;
        if (!ParseSparkIntegral(s, !ansi, kParseMin, kParseMax, &v) || v < kMin || v > kMax) {
          return Conv::kInvalid;
        }
        *o = static_cast<Out>(v);
        return Conv::kOk;
      });
    }
    case TypeId::kDate:
      return MapToFixed<Out>(c, in, FixedReader<int32_t>(in),
                             [](int32_t, Out*) { return Conv::kNull; });
    case TypeId::kTimestamp:
      return MapToFixed<Out>(c, in, FixedReader<int64_t>(in), [narrow](int64_t micros, Out* o) {
        int64_t seconds = micros / kMicrosPerSecond;
        if (micros % kMicrosPerSecond < 0) --seconds;
        return narrow(seconds, o);
      });
    default: break;
  }
  return VisitNumeric(in, [&](auto reader) -> Result<ColumnPtr> {
    using In = std::remove_cv_t<decltype(reader[0])>;
    int scale = c.from.scale();
    return MapToFixed<Out>(c, in, reader, [ansi, scale, narrow](In v, Out* o) {
      if constexpr (std::is_same_v<In, bool>) {
        *o = v ? 1 : 0;
        return Conv::kOk;
      } else if constexpr (std::is_same_v<In, float> || std::is_same_v<In, double>) {
        double d = static_cast<double>(v);
        if (ansi) {
          // Spark's exactNumeric: floor/ceil must stay within the range.
          double lo = sizeof(Out) == 8 ? -9223372036854775808.0 : -2147483648.0;
          double hi = sizeof(Out) == 8 ? 9223372036854775807.0 : 2147483647.0;
          if (!(std::floor(d) <= hi && std::ceil(d) >= lo)) return Conv::kOverflow;
        }
        if constexpr (sizeof(Out) == 8) {
          *o = JavaDoubleToIntegral<int64_t>(d);
          return Conv::kOk;
        } else {
          // Java: (int) d, then narrowed to short/byte.
          return narrow(JavaDoubleToIntegral<int32_t>(d), o);
        }
      } else if constexpr (std::is_same_v<In, int128>) {
        int128 whole = v / Pow10(scale);  // truncates toward zero
        if (ansi && (whole < kMin || whole > kMax)) return Conv::kOverflow;
        // Decimal.toLong keeps the low 64 bits, then narrows.
        *o = static_cast<Out>(static_cast<int64_t>(whole));
        return Conv::kOk;
      } else {
        return narrow(static_cast<int64_t>(v), o);
      }
    });
  });
}

template <typename Out>
Result<ColumnPtr> CastToFloating(const CastCtx& c, const Column& in) {
  constexpr bool kIsFloat = std::is_same_v<Out, float>;
  switch (c.from.id()) {
    case TypeId::kString:
      return MapToFixed<Out>(c, in, StringReader(in), [](std::string_view s, Out* o) {
        double d = 0;
        if (!ParseJavaFloating(s, kIsFloat, &d)) return Conv::kInvalid;
        *o = static_cast<Out>(d);
        return Conv::kOk;
      });
    case TypeId::kDate:
      return MapToFixed<Out>(c, in, FixedReader<int32_t>(in),
                             [](int32_t, Out*) { return Conv::kNull; });
    case TypeId::kTimestamp:
      return MapToFixed<Out>(c, in, FixedReader<int64_t>(in), [](int64_t micros, Out* o) {
        *o = static_cast<Out>(static_cast<double>(micros) / static_cast<double>(kMicrosPerSecond));
        return Conv::kOk;
      });
    default: break;
  }
  int scale = c.from.scale();
  return VisitNumeric(in, [&](auto reader) -> Result<ColumnPtr> {
    using In = std::remove_cv_t<decltype(reader[0])>;
    return MapToFixed<Out>(c, in, reader, [scale](In v, Out* o) {
      if constexpr (std::is_same_v<In, bool>) {
        *o = v ? 1 : 0;
      } else if constexpr (std::is_same_v<In, int128>) {
        if constexpr (kIsFloat) {
          *o = DecimalToFloat(v, scale);
        } else {
          *o = DecimalToDouble(v, scale);
        }
      } else {
        *o = static_cast<Out>(v);
      }
      return Conv::kOk;
    });
  });
}

template Result<ColumnPtr> CastToIntegral<int8_t>(const CastCtx&, const Column&);
template Result<ColumnPtr> CastToIntegral<int16_t>(const CastCtx&, const Column&);
template Result<ColumnPtr> CastToIntegral<int32_t>(const CastCtx&, const Column&);
template Result<ColumnPtr> CastToIntegral<int64_t>(const CastCtx&, const Column&);
template Result<ColumnPtr> CastToFloating<float>(const CastCtx&, const Column&);
template Result<ColumnPtr> CastToFloating<double>(const CastCtx&, const Column&);

}  // namespace silt::expr::cast_internal
