#include "silt/expr/cast/cast.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <type_traits>

#include "silt/base/json_writer.h"
#include "silt/base/strings.h"
#include "silt/columnar/builder.h"
#include "silt/columnar/temporal.h"
#include "silt/expr/bind/bind_session_internal.h"
#include "silt/expr/bind/function_registry.h"
#include "silt/expr/bind/type_util.h"
#include "silt/expr/function/kernel_util.h"
#include "silt/expr/parse/ast.h"
#include "silt/expr/value/decimal_util.h"

namespace silt::expr {

namespace {

using columnar::Column;
using columnar::ColumnBuilder;
using columnar::ColumnPtr;
using columnar::kMicrosPerDay;
using columnar::kMicrosPerSecond;

// Outcome of converting one value.
enum class Conv : uint8_t {
  kOk,
  kNull,      // Spark defines the result as NULL (also in ANSI mode)
  kInvalid,   // malformed input: NULL, or an ANSI error
  kOverflow,  // out of range: NULL (or wraps, handled by the converter), or an ANSI error
};

struct CastCtx {
  const CastOptions& options;
  const DataType& from;
  const TypePtr& to;
};

// The session zone when it has transitions (DST); null when a fixed offset
// (options.zone_offset_micros or the zone's own) is exact.
const TimeZone* ZoneWithRules(const CastOptions& options) {
  return options.zone != nullptr && !options.zone->is_fixed() ? options.zone : nullptr;
}

// The fixed offset to use when ZoneWithRules is null.
int64_t FixedOffsetMicros(const CastOptions& options) {
  if (options.zone != nullptr) return int64_t{options.zone->fixed_offset_seconds()} * 1000000;
  return options.zone_offset_micros;
}

bool IsSpaceOrIsoControl(char c) {
  unsigned char u = static_cast<unsigned char>(c);
  return u <= 0x20 || u == 0x7f;
}

std::string_view TrimAll(std::string_view s) {
  while (!s.empty() && IsSpaceOrIsoControl(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpaceOrIsoControl(s.back())) s.remove_suffix(1);
  return s;
}

// ---------------------------------------------------------------------------
// Value parsing and printing.

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
  auto is_hex = [&](char c) {
    return IsAsciiDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
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
      while (p < rest.size() && IsAsciiDigit(rest[p])) ++p, ++exp_digits;
      ok = exp_digits > 0;
    }
  } else {
    size_t digits = 0;
    while (p < rest.size() && IsAsciiDigit(rest[p])) ++p, ++digits;
    if (p < rest.size() && rest[p] == '.') {
      ++p;
      while (p < rest.size() && IsAsciiDigit(rest[p])) ++p, ++digits;
    }
    ok = digits > 0;
    if (ok && p < rest.size() && (rest[p] == 'e' || rest[p] == 'E')) {
      ++p;
      if (p < rest.size() && (rest[p] == '+' || rest[p] == '-')) ++p;
      size_t exp_digits = 0;
      while (p < rest.size() && IsAsciiDigit(rest[p])) ++p, ++exp_digits;
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

// StringUtils.isTrueString / isFalseString after trimAll.
Conv ParseSparkBoolean(std::string_view s, bool* out) {
  s = TrimAll(s);
  if (EqualsIgnoreCase(s, "t") || EqualsIgnoreCase(s, "true") || EqualsIgnoreCase(s, "y") ||
      EqualsIgnoreCase(s, "yes") || s == "1") {
    *out = true;
    return Conv::kOk;
  }
  if (EqualsIgnoreCase(s, "f") || EqualsIgnoreCase(s, "false") || EqualsIgnoreCase(s, "n") ||
      EqualsIgnoreCase(s, "no") || s == "0") {
    *out = false;
    return Conv::kOk;
  }
  return Conv::kInvalid;
}

void AppendInt(int64_t v, std::string* out) {
  char buf[24];
  auto res = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, static_cast<size_t>(res.ptr - buf));
}

void AppendTwoDigits(int64_t v, std::string* out) {
  out->push_back(static_cast<char>('0' + v / 10));
  out->push_back(static_cast<char>('0' + v % 10));
}

// Spark's timestamp text: "yyyy-MM-dd HH:mm:ss" plus the fraction with
// trailing zeros dropped (TimestampFormatter.getFractionFormatter).
void AppendTimestampText(int64_t micros, std::string* out) {
  int32_t days = columnar::DaysFromMicros(micros);
  int64_t of_day = micros - static_cast<int64_t>(days) * kMicrosPerDay;
  out->append(columnar::FormatDate(days));
  out->push_back(' ');
  int64_t seconds = of_day / kMicrosPerSecond;
  int64_t fraction = of_day % kMicrosPerSecond;
  AppendTwoDigits(seconds / 3600, out);
  out->push_back(':');
  AppendTwoDigits(seconds / 60 % 60, out);
  out->push_back(':');
  AppendTwoDigits(seconds % 60, out);
  if (fraction != 0) {
    char digits[7];
    for (int i = 5; i >= 0; --i) {
      digits[i] = static_cast<char>('0' + fraction % 10);
      fraction /= 10;
    }
    int len = 6;
    while (len > 0 && digits[len - 1] == '0') --len;
    out->push_back('.');
    out->append(digits, static_cast<size_t>(len));
  }
}

int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) {
    return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  }
  return r;
}

// Java's (long) / (int) conversion of a double: NaN -> 0, saturating.
template <typename I>
I JavaDoubleToIntegral(double d) {
  if (std::isnan(d)) return 0;
  if (d >= static_cast<double>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  if (d <= static_cast<double>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  return static_cast<I>(d);
}

std::string DecimalText(int128 v, int scale) {
  std::string out;
  AppendDecimalPlain(v, scale, &out);
  return out;
}

double DecimalToDouble(int128 v, int scale) {
  std::string text = DecimalText(v, scale);
  return std::strtod(text.c_str(), nullptr);
}

float DecimalToFloat(int128 v, int scale) {
  std::string text = DecimalText(v, scale);
  return std::strtof(text.c_str(), nullptr);
}

// Scala BigDecimal(double) reads Double.toString; NaN and infinities are not
// numbers.
Conv DoubleToDecimal(double d, int precision, int scale, int128* out) {
  if (std::isnan(d) || std::isinf(d)) return Conv::kInvalid;
  std::string text = FormatDoubleJava(d);
  bool overflow = false;
  if (!ParseDecimal(text, precision, scale, out, &overflow)) {
    return overflow ? Conv::kOverflow : Conv::kInvalid;
  }
  return Conv::kOk;
}

// Spark 3.5 stringToTimestampWithoutTimeZone: a zone suffix is ignored.
std::optional<int64_t> ParseTimestampNtz(std::string_view s) {
  std::string_view t = JavaTrim(s);
  // The zone starts after the time part: find the first character after
  // position 10 that cannot belong to "HH:mm:ss.ffffff".
  size_t time_start = std::string_view::npos;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] == ' ' || t[i] == 'T') {
      time_start = i + 1;
      break;
    }
  }
  if (time_start != std::string_view::npos) {
    size_t end = time_start;
    while (end < t.size() && ((t[end] >= '0' && t[end] <= '9') || t[end] == ':' || t[end] == '.')) {
      ++end;
    }
    t = t.substr(0, end);
  }
  return columnar::ParseTimestamp(t, 0);
}

// ---------------------------------------------------------------------------
// Drivers: one typed loop per (source, target) pair.

template <typename T>
std::string ValueText(const T& v) {
  if constexpr (std::is_same_v<T, std::string_view>) {
    std::string out = "'";
    out.append(v);
    out.push_back('\'');
    return out;
  } else if constexpr (std::is_same_v<T, bool>) {
    return v ? "true" : "false";
  } else if constexpr (std::is_same_v<T, double>) {
    return FormatDoubleJava(v);
  } else if constexpr (std::is_same_v<T, float>) {
    return FormatFloatJava(v);
  } else if constexpr (std::is_same_v<T, int128>) {
    return "decimal";
  } else {
    return std::to_string(v);
  }
}

Status CastFailure(const CastCtx& c, int64_t row, const std::string& value, Conv kind) {
  const char* reason = kind == Conv::kOverflow ? "the value is out of the target type's range"
                                               : "the value is malformed";
  return Status::InvalidArgument("Cannot cast ", value, " of type ", TypeName(c.from), " to ",
                                 TypeName(*c.to), ": ", reason, " (row ", row, ") in '",
                                 c.options.context, "'");
}

template <typename Reader>
auto Describe(const CastCtx& c, const Reader& reader, int64_t row) {
  auto v = reader[row];
  if constexpr (std::is_same_v<decltype(v), int128>) {
    return DecimalText(v, c.from.scale());
  } else {
    return ValueText(v);
  }
}

template <typename Out, typename Reader, typename Convert>
Result<ColumnPtr> MapToFixed(const CastCtx& c, const Column& in, const Reader& reader,
                             Convert convert) {
  int64_t n = in.length;
  FixedWriter<Out> out(n);
  ValidityOut validity(n);
  validity.InitFromColumn(in);
  Out* data = out.data();
  for (int64_t row = 0; row < n; ++row) {
    if (!validity.IsValid(row)) continue;
    Conv r = convert(reader[row], &data[row]);
    if (r != Conv::kOk) {
      if (c.options.ansi && r != Conv::kNull)
        return CastFailure(c, row, Describe(c, reader, row), r);
      data[row] = Out();
      validity.SetNull(row);
    }
  }
  return out.Finish(c.to, &validity);
}

template <typename Reader, typename Convert>
Result<ColumnPtr> MapToBool(const CastCtx& c, const Column& in, const Reader& reader,
                            Convert convert) {
  int64_t n = in.length;
  BoolWriter out(n);
  ValidityOut validity(n);
  validity.InitFromColumn(in);
  for (int64_t row = 0; row < n; ++row) {
    if (!validity.IsValid(row)) continue;
    bool value = false;
    Conv r = convert(reader[row], &value);
    if (r != Conv::kOk) {
      if (c.options.ansi && r != Conv::kNull)
        return CastFailure(c, row, Describe(c, reader, row), r);
      validity.SetNull(row);
      continue;
    }
    out.Set(row, value);
  }
  return out.Finish(c.to, &validity);
}

// Appends text for each valid row; `format(value, &text)` appends to text.
template <typename Reader, typename Format>
Result<ColumnPtr> MapToString(const CastCtx& c, const Column& in, const Reader& reader,
                              Format format) {
  int64_t n = in.length;
  ColumnBuilder builder(c.to);
  builder.Reserve(n);
  std::string text;
  for (int64_t row = 0; row < n; ++row) {
    if (!reader.IsValid(row)) {
      builder.AppendNull();
      continue;
    }
    text.clear();
    format(reader[row], &text);
    builder.AppendString(text);
  }
  return builder.Finish();
}

// Calls f(reader) with the typed reader for a numeric or boolean column.
template <typename F>
Result<ColumnPtr> VisitNumeric(const Column& in, F f) {
  switch (in.type->id()) {
    case TypeId::kBoolean: return f(BoolReader(in));
    case TypeId::kByte: return f(FixedReader<int8_t>(in));
    case TypeId::kShort: return f(FixedReader<int16_t>(in));
    case TypeId::kInt: return f(FixedReader<int32_t>(in));
    case TypeId::kLong: return f(FixedReader<int64_t>(in));
    case TypeId::kFloat: return f(FixedReader<float>(in));
    case TypeId::kDouble: return f(FixedReader<double>(in));
    case TypeId::kDecimal: return f(FixedReader<int128>(in));
    default: return Status::Internal("Not a numeric column: ", in.type->ToDdl());
  }
}

// ---------------------------------------------------------------------------
// Targets.

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

Result<ColumnPtr> CastToDecimal(const CastCtx& c, const Column& in) {
  const int precision = c.to->precision();
  const int scale = c.to->scale();
  switch (c.from.id()) {
    case TypeId::kString:
      return MapToFixed<int128>(c, in, StringReader(in),
                                [precision, scale](std::string_view s, int128* o) {
                                  bool overflow = false;
                                  if (ParseDecimal(s, precision, scale, o, &overflow)) {
                                    return Conv::kOk;
                                  }
                                  return overflow ? Conv::kOverflow : Conv::kInvalid;
                                });
    case TypeId::kDate:
      return MapToFixed<int128>(c, in, FixedReader<int32_t>(in),
                                [](int32_t, int128*) { return Conv::kNull; });
    case TypeId::kTimestamp:
      return MapToFixed<int128>(
          c, in, FixedReader<int64_t>(in), [precision, scale](int64_t micros, int128* o) {
            double seconds = static_cast<double>(micros) / static_cast<double>(kMicrosPerSecond);
            return DoubleToDecimal(seconds, precision, scale, o);
          });
    default: break;
  }
  int from_scale = c.from.scale();
  return VisitNumeric(in, [&](auto reader) -> Result<ColumnPtr> {
    using In = std::remove_cv_t<decltype(reader[0])>;
    return MapToFixed<int128>(c, in, reader, [precision, scale, from_scale](In v, int128* o) {
      if constexpr (std::is_same_v<In, bool>) {
        return RescaleDecimal(v ? 1 : 0, 0, scale, precision, o) ? Conv::kOk : Conv::kOverflow;
      } else if constexpr (std::is_same_v<In, float> || std::is_same_v<In, double>) {
        return DoubleToDecimal(static_cast<double>(v), precision, scale, o);
      } else if constexpr (std::is_same_v<In, int128>) {
        return RescaleDecimal(v, from_scale, scale, precision, o) ? Conv::kOk : Conv::kOverflow;
      } else {
        return RescaleDecimal(static_cast<int128>(v), 0, scale, precision, o) ? Conv::kOk
                                                                              : Conv::kOverflow;
      }
    });
  });
}

Result<ColumnPtr> CastToBoolean(const CastCtx& c, const Column& in) {
  switch (c.from.id()) {
    case TypeId::kString:
      return MapToBool(c, in, StringReader(in),
                       [](std::string_view s, bool* o) { return ParseSparkBoolean(s, o); });
    case TypeId::kDate:
      return MapToBool(c, in, FixedReader<int32_t>(in), [](int32_t, bool*) { return Conv::kNull; });
    case TypeId::kTimestamp:
      return MapToBool(c, in, FixedReader<int64_t>(in), [](int64_t v, bool* o) {
        *o = v != 0;
        return Conv::kOk;
      });
    default: break;
  }
  return VisitNumeric(in, [&](auto reader) -> Result<ColumnPtr> {
    using In = std::remove_cv_t<decltype(reader[0])>;
    return MapToBool(c, in, reader, [](In v, bool* o) {
      *o = v != 0;
      return Conv::kOk;
    });
  });
}

Result<ColumnPtr> CastToDate(const CastCtx& c, const Column& in) {
  int64_t offset = FixedOffsetMicros(c.options);
  if (const TimeZone* zone = ZoneWithRules(c.options); zone && c.from.id() == TypeId::kTimestamp) {
    return MapToFixed<int32_t>(c, in, FixedReader<int64_t>(in), [zone](int64_t v, int32_t* o) {
      *o = columnar::DaysFromMicros(zone->UtcToLocal(v));
      return Conv::kOk;
    });
  }
  switch (c.from.id()) {
    case TypeId::kString:
      return MapToFixed<int32_t>(c, in, StringReader(in), [](std::string_view s, int32_t* o) {
        std::optional<int32_t> days = columnar::ParseDate(s);
        if (!days) return Conv::kInvalid;
        *o = *days;
        return Conv::kOk;
      });
    case TypeId::kTimestamp:
      return MapToFixed<int32_t>(c, in, FixedReader<int64_t>(in), [offset](int64_t v, int32_t* o) {
        *o = columnar::DaysFromMicros(SaturatingAdd(v, offset));
        return Conv::kOk;
      });
    case TypeId::kTimestampNtz:
      return MapToFixed<int32_t>(c, in, FixedReader<int64_t>(in), [](int64_t v, int32_t* o) {
        *o = columnar::DaysFromMicros(v);
        return Conv::kOk;
      });
    default: return Status::Internal("Unsupported cast to DATE from ", TypeName(c.from));
  }
}

Result<ColumnPtr> CastToTimestamp(const CastCtx& c, const Column& in) {
  const int64_t offset = FixedOffsetMicros(c.options);
  const bool ansi = c.options.ansi;
  if (const TimeZone* zone = ZoneWithRules(c.options)) {
    switch (c.from.id()) {
      case TypeId::kString:
        return MapToFixed<int64_t>(c, in, StringReader(in), [zone](std::string_view s, int64_t* o) {
          std::optional<int64_t> micros = ParseTimestampInZone(s, *zone);
          if (!micros) return Conv::kInvalid;
          *o = *micros;
          return Conv::kOk;
        });
      case TypeId::kDate:
        return MapToFixed<int64_t>(
            c, in, FixedReader<int32_t>(in), [zone](int32_t days, int64_t* o) {
              *o = zone->LocalToUtc(static_cast<int64_t>(days) * kMicrosPerDay);
              return Conv::kOk;
            });
      case TypeId::kTimestampNtz:
        return MapToFixed<int64_t>(c, in, FixedReader<int64_t>(in), [zone](int64_t v, int64_t* o) {
          *o = zone->LocalToUtc(v);
          return Conv::kOk;
        });
      default: break;
    }
  }
  switch (c.from.id()) {
    case TypeId::kString:
      return MapToFixed<int64_t>(c, in, StringReader(in), [offset](std::string_view s, int64_t* o) {
        std::optional<int64_t> micros = columnar::ParseTimestamp(s, offset);
        if (!micros) return Conv::kInvalid;
        *o = *micros;
        return Conv::kOk;
      });
    case TypeId::kDate:
      return MapToFixed<int64_t>(c, in, FixedReader<int32_t>(in),
                                 [offset](int32_t days, int64_t* o) {
                                   *o = static_cast<int64_t>(days) * kMicrosPerDay - offset;
                                   return Conv::kOk;
                                 });
    case TypeId::kTimestampNtz:
      return MapToFixed<int64_t>(c, in, FixedReader<int64_t>(in), [offset](int64_t v, int64_t* o) {
        *o = SaturatingAdd(v, -offset);
        return Conv::kOk;
      });
    default: break;
  }
  int scale = c.from.scale();
  return VisitNumeric(in, [&](auto reader) -> Result<ColumnPtr> {
    using In = std::remove_cv_t<decltype(reader[0])>;
    return MapToFixed<int64_t>(c, in, reader, [ansi, scale](In v, int64_t* o) {
      if constexpr (std::is_same_v<In, bool>) {
        *o = v ? 1 : 0;
        return Conv::kOk;
      } else if constexpr (std::is_same_v<In, float> || std::is_same_v<In, double>) {
        double d = static_cast<double>(v);
        if (std::isnan(d) || std::isinf(d)) return ansi ? Conv::kInvalid : Conv::kNull;
        *o = JavaDoubleToIntegral<int64_t>(d * static_cast<double>(kMicrosPerSecond));
        return Conv::kOk;
      } else if constexpr (std::is_same_v<In, int128>) {
        // (BigDecimal * 1e6).longValue: truncated, low 64 bits.
        int128 micros = 0;
        if (__builtin_mul_overflow(v, static_cast<int128>(kMicrosPerSecond), &micros)) {
          return Conv::kOverflow;
        }
        *o = static_cast<int64_t>(micros / Pow10(scale));
        return Conv::kOk;
      } else {
        // TimeUnit.SECONDS.toMicros saturates.
        int64_t micros = 0;
        if (__builtin_mul_overflow(static_cast<int64_t>(v), kMicrosPerSecond, &micros)) {
          micros =
              v > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
        }
        *o = micros;
        return Conv::kOk;
      }
    });
  });
}

Result<ColumnPtr> CastToTimestampNtz(const CastCtx& c, const Column& in) {
  int64_t offset = FixedOffsetMicros(c.options);
  if (const TimeZone* zone = ZoneWithRules(c.options); zone && c.from.id() == TypeId::kTimestamp) {
    return MapToFixed<int64_t>(c, in, FixedReader<int64_t>(in), [zone](int64_t v, int64_t* o) {
      *o = zone->UtcToLocal(v);
      return Conv::kOk;
    });
  }
  switch (c.from.id()) {
    case TypeId::kString:
      return MapToFixed<int64_t>(c, in, StringReader(in), [](std::string_view s, int64_t* o) {
        std::optional<int64_t> micros = ParseTimestampNtz(s);
        if (!micros) return Conv::kInvalid;
        *o = *micros;
        return Conv::kOk;
      });
    case TypeId::kDate:
      return MapToFixed<int64_t>(c, in, FixedReader<int32_t>(in), [](int32_t days, int64_t* o) {
        *o = static_cast<int64_t>(days) * kMicrosPerDay;
        return Conv::kOk;
      });
    case TypeId::kTimestamp:
      return MapToFixed<int64_t>(c, in, FixedReader<int64_t>(in), [offset](int64_t v, int64_t* o) {
        *o = SaturatingAdd(v, offset);
        return Conv::kOk;
      });
    default: return Status::Internal("Unsupported cast to TIMESTAMP_NTZ from ", TypeName(c.from));
  }
}

Result<ColumnPtr> CastToBinary(const CastCtx& c, const Column& in) {
  if (c.from.id() == TypeId::kString) {
    // Same bytes; only the type changes.
    auto out = std::make_shared<Column>(in);
    out->type = c.to;
    return ColumnPtr(std::move(out));
  }
  auto big_endian = [](auto v, std::string* text) {
    using T = decltype(v);
    auto u = static_cast<std::make_unsigned_t<T>>(v);
    for (int i = static_cast<int>(sizeof(T)) - 1; i >= 0; --i) {
      text->push_back(static_cast<char>((u >> (8 * i)) & 0xFF));
    }
  };
  switch (c.from.id()) {
    case TypeId::kByte: return MapToString(c, in, FixedReader<int8_t>(in), big_endian);
    case TypeId::kShort: return MapToString(c, in, FixedReader<int16_t>(in), big_endian);
    case TypeId::kInt: return MapToString(c, in, FixedReader<int32_t>(in), big_endian);
    case TypeId::kLong: return MapToString(c, in, FixedReader<int64_t>(in), big_endian);
    default: return Status::Internal("Unsupported cast to BINARY from ", TypeName(c.from));
  }
}

Result<ColumnPtr> CastToString(const CastCtx& c, const Column& in) {
  const CastOptions& options = c.options;
  switch (c.from.id()) {
    case TypeId::kBinary: {
      auto out = std::make_shared<Column>(in);
      out->type = c.to;
      return ColumnPtr(std::move(out));
    }
    case TypeId::kBoolean:
      return MapToString(c, in, BoolReader(in),
                         [](bool v, std::string* t) { t->append(v ? "true" : "false"); });
    case TypeId::kByte:
      return MapToString(c, in, FixedReader<int8_t>(in),
                         [](int8_t v, std::string* t) { AppendInt(v, t); });
    case TypeId::kShort:
      return MapToString(c, in, FixedReader<int16_t>(in),
                         [](int16_t v, std::string* t) { AppendInt(v, t); });
    case TypeId::kInt:
      return MapToString(c, in, FixedReader<int32_t>(in),
                         [](int32_t v, std::string* t) { AppendInt(v, t); });
    case TypeId::kLong:
      return MapToString(c, in, FixedReader<int64_t>(in),
                         [](int64_t v, std::string* t) { AppendInt(v, t); });
    case TypeId::kFloat:
      return MapToString(c, in, FixedReader<float>(in),
                         [](float v, std::string* t) { t->append(FormatFloatJava(v)); });
    case TypeId::kDouble:
      return MapToString(c, in, FixedReader<double>(in),
                         [](double v, std::string* t) { t->append(FormatDoubleJava(v)); });
    case TypeId::kDecimal: {
      int scale = c.from.scale();
      bool plain = options.ansi;
      return MapToString(c, in, FixedReader<int128>(in), [scale, plain](int128 v, std::string* t) {
        if (plain) {
          AppendDecimalPlain(v, scale, t);
        } else {
          AppendDecimalJava(v, scale, t);
        }
      });
    }
    case TypeId::kDate:
      return MapToString(c, in, FixedReader<int32_t>(in),
                         [](int32_t v, std::string* t) { t->append(columnar::FormatDate(v)); });
    case TypeId::kTimestamp: {
      if (const TimeZone* zone = ZoneWithRules(options)) {
        return MapToString(c, in, FixedReader<int64_t>(in), [zone](int64_t v, std::string* t) {
          AppendTimestampText(zone->UtcToLocal(v), t);
        });
      }
      int64_t offset = FixedOffsetMicros(options);
      return MapToString(c, in, FixedReader<int64_t>(in), [offset](int64_t v, std::string* t) {
        AppendTimestampText(SaturatingAdd(v, offset), t);
      });
    }
    case TypeId::kTimestampNtz:
      return MapToString(c, in, FixedReader<int64_t>(in),
                         [](int64_t v, std::string* t) { AppendTimestampText(v, t); });
    case TypeId::kStruct:
    case TypeId::kArray:
    case TypeId::kMap: {
      // Nested values print per row; they are rare on hot paths.
      ColumnBuilder builder(c.to);
      builder.Reserve(in.length);
      std::string text;
      for (int64_t row = 0; row < in.length; ++row) {
        if (in.IsNull(row)) {
          builder.AppendNull();
          continue;
        }
        text.clear();
        AppendValueText(in, row, options, &text);
        builder.AppendString(text);
      }
      return builder.Finish();
    }
    default: return Status::Internal("Unsupported cast to STRING from ", TypeName(c.from));
  }
}

Result<ColumnPtr> CastNested(const CastCtx& c, const Column& in) {
  auto out = std::make_shared<Column>(in);
  out->type = c.to;
  out->children.clear();
  switch (c.to->id()) {
    case TypeId::kStruct:
      for (int i = 0; i < c.to->num_fields(); ++i) {
        SILT_ASSIGN_OR_RETURN(ColumnPtr child, CastColumn(*in.children[static_cast<size_t>(i)],
                                                          c.to->field(i).type, c.options));
        out->children.push_back(std::move(child));
      }
      break;
    case TypeId::kArray: {
      SILT_ASSIGN_OR_RETURN(ColumnPtr child,
                            CastColumn(*in.children[0], c.to->element_type(), c.options));
      out->children.push_back(std::move(child));
      break;
    }
    case TypeId::kMap: {
      TypePtr entry = DataType::Struct(
          {columnar::Field{"key", c.to->key_type(), false},
           columnar::Field{"value", c.to->value_type(), c.to->value_contains_null()}});
      SILT_ASSIGN_OR_RETURN(ColumnPtr child, CastColumn(*in.children[0], entry, c.options));
      out->children.push_back(std::move(child));
      break;
    }
    default: return Status::Internal("Not a nested type: ", TypeName(*c.to));
  }
  return ColumnPtr(std::move(out));
}

bool SameStructure(const DataType& a, const DataType& b) {
  if (a.id() != b.id()) return false;
  switch (a.id()) {
    case TypeId::kDecimal: return a.precision() == b.precision() && a.scale() == b.scale();
    case TypeId::kStruct:
      if (a.num_fields() != b.num_fields()) return false;
      for (int i = 0; i < a.num_fields(); ++i) {
        if (!SameStructure(*a.field(i).type, *b.field(i).type)) return false;
      }
      return true;
    case TypeId::kArray: return SameStructure(*a.element_type(), *b.element_type());
    case TypeId::kMap:
      return SameStructure(*a.key_type(), *b.key_type()) &&
             SameStructure(*a.value_type(), *b.value_type());
    default: return true;
  }
}

class CastKernel final : public Kernel {
 public:
  explicit CastKernel(std::string context) : context_(std::move(context)) {}
  Result<ColumnPtr> Exec(const KernelInfo& info, const ExecArgs& args) override {
    CastOptions options;
    options.ansi = info.options.ansi;
    options.zone_offset_micros = info.options.session_zone_offset_micros;
    options.zone = info.options.session_zone.get();
    options.context = context_;
    return CastColumn(*args.args[0].column, info.type, options);
  }

 private:
  std::string context_;
};

}  // namespace

bool CanCast(const DataType& from, const DataType& to, bool ansi) {
  TypeId f = from.id();
  TypeId t = to.id();
  if (from.Equals(to) || SameStructure(from, to)) return true;
  if (f == TypeId::kNull) return true;
  if (t == TypeId::kString) return true;
  switch (t) {
    case TypeId::kBinary: return f == TypeId::kString || (!ansi && from.is_integral());
    case TypeId::kBoolean:
      return f == TypeId::kString || from.is_numeric() ||
             (!ansi && (f == TypeId::kDate || f == TypeId::kTimestamp));
    case TypeId::kTimestamp:
      return f == TypeId::kString || f == TypeId::kDate || f == TypeId::kTimestampNtz ||
             from.is_numeric() || (!ansi && f == TypeId::kBoolean);
    case TypeId::kTimestampNtz:
      return f == TypeId::kString || f == TypeId::kDate || f == TypeId::kTimestamp;
    case TypeId::kDate:
      return f == TypeId::kString || f == TypeId::kTimestamp || f == TypeId::kTimestampNtz;
    case TypeId::kByte:
    case TypeId::kShort:
    case TypeId::kInt:
    case TypeId::kLong:
    case TypeId::kFloat:
    case TypeId::kDouble:
    case TypeId::kDecimal:
      return f == TypeId::kString || f == TypeId::kBoolean || from.is_numeric() ||
             f == TypeId::kTimestamp || (!ansi && f == TypeId::kDate);
    case TypeId::kArray:
      return f == TypeId::kArray && CanCast(*from.element_type(), *to.element_type(), ansi);
    case TypeId::kMap:
      return f == TypeId::kMap && CanCast(*from.key_type(), *to.key_type(), ansi) &&
             CanCast(*from.value_type(), *to.value_type(), ansi);
    case TypeId::kStruct:
      if (f != TypeId::kStruct || from.num_fields() != to.num_fields()) return false;
      for (int i = 0; i < from.num_fields(); ++i) {
        if (!CanCast(*from.field(i).type, *to.field(i).type, ansi)) return false;
      }
      return true;
    default: return false;
  }
}

bool CastForceNullable(const DataType& from, const DataType& to) {
  TypeId f = from.id();
  TypeId t = to.id();
  if (f == TypeId::kNull) return false;
  if (from.Equals(to)) return false;
  if (f == TypeId::kString && t == TypeId::kBinary) return false;
  if (f == TypeId::kString) return true;
  if (t == TypeId::kString) return false;
  if ((f == TypeId::kFloat || f == TypeId::kDouble) && t == TypeId::kTimestamp) return true;
  if (f == TypeId::kTimestamp && t == TypeId::kDate) return false;
  if (t == TypeId::kDate) return true;
  if (f == TypeId::kDate && t == TypeId::kTimestamp) return false;
  if (f == TypeId::kDate) return true;
  if (t == TypeId::kDecimal) {
    // canNullSafeCastToDecimal.
    if (f == TypeId::kBoolean) return to.precision() - to.scale() < 1;
    if (from.is_integral()) {
      TypePtr d = DecimalForIntegral(from);
      return to.precision() - to.scale() < d->precision();
    }
    if (f == TypeId::kDecimal) {
      return to.precision() - to.scale() <= from.precision() - from.scale();
    }
    return true;
  }
  if ((f == TypeId::kFloat || f == TypeId::kDouble) && to.is_integral()) return true;
  return false;
}

Result<ColumnPtr> CastColumn(const Column& input, const TypePtr& to, const CastOptions& options) {
  const DataType& from = *input.type;
  if (from.Equals(*to)) return std::make_shared<Column>(input);
  if (from.id() == TypeId::kNull) return NullColumn(to, input.length);
  CastCtx c{options, from, to};
  if (SameStructure(from, *to)) {
    // Only names or nullability differ: the data is reused.
    auto out = std::make_shared<Column>(input);
    out->type = to;
    return ColumnPtr(std::move(out));
  }
  switch (to->id()) {
    case TypeId::kString: return CastToString(c, input);
    case TypeId::kBinary: return CastToBinary(c, input);
    case TypeId::kBoolean: return CastToBoolean(c, input);
    case TypeId::kByte: return CastToIntegral<int8_t>(c, input);
    case TypeId::kShort: return CastToIntegral<int16_t>(c, input);
    case TypeId::kInt: return CastToIntegral<int32_t>(c, input);
    case TypeId::kLong: return CastToIntegral<int64_t>(c, input);
    case TypeId::kFloat: return CastToFloating<float>(c, input);
    case TypeId::kDouble: return CastToFloating<double>(c, input);
    case TypeId::kDecimal: return CastToDecimal(c, input);
    case TypeId::kDate: return CastToDate(c, input);
    case TypeId::kTimestamp: return CastToTimestamp(c, input);
    case TypeId::kTimestampNtz: return CastToTimestampNtz(c, input);
    case TypeId::kStruct:
    case TypeId::kArray:
    case TypeId::kMap: return CastNested(c, input);
    default:
      return Status::Internal("Unsupported cast from ", TypeName(from), " to ", TypeName(*to));
  }
}

void AppendValueText(const Column& column, int64_t row, const CastOptions& options,
                     std::string* out) {
  const DataType& type = *column.type;
  switch (type.id()) {
    case TypeId::kNull: out->append("null"); break;
    case TypeId::kBoolean: out->append(column.BoolValue(row) ? "true" : "false"); break;
    case TypeId::kByte: AppendInt(column.Value<int8_t>(row), out); break;
    case TypeId::kShort: AppendInt(column.Value<int16_t>(row), out); break;
    case TypeId::kInt: AppendInt(column.Value<int32_t>(row), out); break;
    case TypeId::kLong: AppendInt(column.Value<int64_t>(row), out); break;
    case TypeId::kFloat: out->append(FormatFloatJava(column.Value<float>(row))); break;
    case TypeId::kDouble: out->append(FormatDoubleJava(column.Value<double>(row))); break;
    case TypeId::kDecimal:
      if (options.ansi) {
        AppendDecimalPlain(column.Value<int128>(row), type.scale(), out);
      } else {
        AppendDecimalJava(column.Value<int128>(row), type.scale(), out);
      }
      break;
    case TypeId::kString:
    case TypeId::kBinary: out->append(column.StringValue(row)); break;
    case TypeId::kDate: out->append(columnar::FormatDate(column.Value<int32_t>(row))); break;
    case TypeId::kTimestamp:
      if (const TimeZone* zone = ZoneWithRules(options)) {
        AppendTimestampText(zone->UtcToLocal(column.Value<int64_t>(row)), out);
      } else {
        AppendTimestampText(SaturatingAdd(column.Value<int64_t>(row), FixedOffsetMicros(options)),
                            out);
      }
      break;
    case TypeId::kTimestampNtz: AppendTimestampText(column.Value<int64_t>(row), out); break;
    case TypeId::kStruct: {
      // Spark 3.x: "{1, null, a}".
      out->push_back('{');
      for (size_t i = 0; i < column.children.size(); ++i) {
        if (i > 0) out->append(column.children[i]->IsNull(row) ? "," : ", ");
        if (column.children[i]->IsNull(row)) {
          out->append(i > 0 ? " null" : "null");
        } else {
          AppendValueText(*column.children[i], row, options, out);
        }
      }
      out->push_back('}');
      break;
    }
    case TypeId::kArray: {
      const Column& elements = *column.children[0];
      int32_t begin = column.offsets()[row];
      int32_t end = column.offsets()[row + 1];
      out->push_back('[');
      for (int32_t i = begin; i < end; ++i) {
        if (i > begin) out->append(", ");
        if (elements.IsNull(i)) {
          out->append("null");
        } else {
          AppendValueText(elements, i, options, out);
        }
      }
      out->push_back(']');
      break;
    }
    case TypeId::kMap: {
      const Column& entries = *column.children[0];
      const Column& keys = *entries.children[0];
      const Column& values = *entries.children[1];
      int32_t begin = column.offsets()[row];
      int32_t end = column.offsets()[row + 1];
      out->push_back('{');
      for (int32_t i = begin; i < end; ++i) {
        if (i > begin) out->append(", ");
        AppendValueText(keys, i, options, out);
        out->append(" ->");
        if (values.IsNull(i)) {
          out->append(" null");
        } else {
          out->push_back(' ');
          AppendValueText(values, i, options, out);
        }
      }
      out->push_back('}');
      break;
    }
  }
}

Result<BoundNodePtr> BindCast(BoundNodePtr child, const TypePtr& to, bool user_specified,
                              const EvalOptions& options, std::string_view context, bool try_cast,
                              BindSession* session) {
  const DataType& from = *child->type();
  bool ansi = options.ansi && !try_cast;
  if (!CanCast(from, *to, ansi)) {
    return Status::InvalidArgument("Cannot cast ", child->sql(), " of type ", TypeName(from),
                                   " to ", TypeName(*to), (ansi ? " with ANSI on" : ""), " in '",
                                   context, "'");
  }
  std::string sql = user_specified ? PrettyCast(child->sql(), *to, try_cast) : child->sql();
  bool nullable = child->nullable() || CastForceNullable(from, *to) || (try_cast && options.ansi);
  KernelInfo info;
  info.type = to;
  info.arg_types.push_back(child->type());
  info.options = options;
  info.options.ansi = ansi;
  info.sql = std::move(sql);
  std::unique_ptr<Kernel> kernel;
  if (from.id() == TypeId::kString) {
    kernel = MakeJsonCastKernel(*child, to, std::string(context), session);
  }
  if (kernel == nullptr) kernel = std::make_unique<CastKernel>(std::string(context));
  std::vector<BoundNodePtr> args;
  args.push_back(std::move(child));
  return BoundNodePtr(
      std::make_unique<BoundCall>(std::move(info), nullable, std::move(args), std::move(kernel)));
}

Result<BoundNodePtr> ImplicitCast(BoundNodePtr node, const TypePtr& to,
                                  const EvalOptions& options) {
  if (node->type()->Equals(*to)) return node;
  std::string context = node->sql();
  return BindCast(std::move(node), to, /*user_specified=*/false, options, context);
}

// Spark's type-named cast functions: int(x), string(x), double(x), ...
template <TypeId kId>
Result<BoundNodePtr> BindTypeFunction(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 1, 1));
  TypePtr to;
  switch (kId) {
    case TypeId::kBoolean: to = DataType::Boolean(); break;
    case TypeId::kByte: to = DataType::Byte(); break;
    case TypeId::kShort: to = DataType::Short(); break;
    case TypeId::kInt: to = DataType::Int(); break;
    case TypeId::kLong: to = DataType::Long(); break;
    case TypeId::kFloat: to = DataType::Float(); break;
    case TypeId::kDouble: to = DataType::Double(); break;
    case TypeId::kDecimal: to = DataType::Decimal(10, 0); break;
    case TypeId::kDate: to = DataType::Date(); break;
    case TypeId::kTimestamp: to = DataType::Timestamp(); break;
    case TypeId::kBinary: to = DataType::Binary(); break;
    default: to = DataType::String(); break;
  }
  return BindCast(std::move(site.args[0]), to, /*user_specified=*/true, site.options, site.text,
                  /*try_cast=*/false, site.session);
}

void RegisterCastFunctions(FunctionRegistry* registry) {
  registry->Register("boolean", &BindTypeFunction<TypeId::kBoolean>);
  registry->Register("tinyint", &BindTypeFunction<TypeId::kByte>);
  registry->Register("smallint", &BindTypeFunction<TypeId::kShort>);
  registry->Register("int", &BindTypeFunction<TypeId::kInt>);
  registry->Register("bigint", &BindTypeFunction<TypeId::kLong>);
  registry->Register("float", &BindTypeFunction<TypeId::kFloat>);
  registry->Register("double", &BindTypeFunction<TypeId::kDouble>);
  registry->Register("decimal", &BindTypeFunction<TypeId::kDecimal>);
  registry->Register("date", &BindTypeFunction<TypeId::kDate>);
  registry->Register("timestamp", &BindTypeFunction<TypeId::kTimestamp>);
  registry->Register("binary", &BindTypeFunction<TypeId::kBinary>);
  registry->Register("string", &BindTypeFunction<TypeId::kString>);
}

}  // namespace silt::expr
