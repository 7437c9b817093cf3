// Shared by the cast target files (cast_to_*.cc) and cast.cc; internal to
// cast/: the outcome of one conversion, value printing, and the typed
// per-row drivers every target loops with.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "silt/base/json_writer.h"
#include "silt/base/strings.h"
#include "silt/columnar/builder.h"
#include "silt/columnar/temporal.h"
#include "silt/expr/cast/cast.h"
#include "silt/expr/kernel/executor.h"
#include "silt/expr/kernel/kernel_util.h"
#include "silt/expr/kernel/type_util.h"
#include "silt/expr/value/decimal_util.h"

namespace silt::expr::cast_internal {

using columnar::AppendTimestampText;
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
inline const TimeZone* ZoneWithRules(const CastOptions& options) {
  return options.zone != nullptr && !options.zone->is_fixed() ? options.zone : nullptr;
}

// The fixed offset to use when ZoneWithRules is null.
inline int64_t FixedOffsetMicros(const CastOptions& options) {
  if (options.zone != nullptr) return int64_t{options.zone->fixed_offset_seconds()} * 1000000;
  return options.zone_offset_micros;
}

inline bool IsSpaceOrIsoControl(char c) {
  unsigned char u = static_cast<unsigned char>(c);
  return u <= 0x20 || u == 0x7f;
}

inline std::string_view TrimAll(std::string_view s) {
  while (!s.empty() && IsSpaceOrIsoControl(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpaceOrIsoControl(s.back())) s.remove_suffix(1);
  return s;
}

// ---------------------------------------------------------------------------
// Value parsing and printing.

inline void AppendInt(int64_t v, std::string* out) {
  char buf[24];
  auto res = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, static_cast<size_t>(res.ptr - buf));
}

inline int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) {
    return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  }
  return r;
}

// Java's (long) / (int) conversion of a double: NaN -> 0, saturating.
template <typename I>
inline I JavaDoubleToIntegral(double d) {
  if (std::isnan(d)) return 0;
  if (d >= static_cast<double>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  if (d <= static_cast<double>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  return static_cast<I>(d);
}

inline std::string DecimalText(int128 v, int scale) {
  std::string out;
  AppendDecimalPlain(v, scale, &out);
  return out;
}

// ---------------------------------------------------------------------------
// Drivers: one typed loop per (source, target) pair.

template <typename T>
inline std::string ValueText(const T& v) {
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

inline Status CastFailure(const CastCtx& c, int64_t row, const std::string& value, Conv kind) {
  const char* reason = kind == Conv::kOverflow ? "the value is out of the target type's range"
                                               : "the value is malformed";
  // Spark's error classes for the two ANSI failures.
  const char* error_class = kind == Conv::kOverflow ? "[CAST_OVERFLOW] " : "[CAST_INVALID_INPUT] ";
  return Status::InvalidArgument(error_class, "Cannot cast ", value, " of type ", TypeName(c.from),
                                 " to ", TypeName(*c.to), ": ", reason, " (row ", row, ") in '",
                                 c.options.context, "'");
}

template <typename In>
inline std::string Describe(const CastCtx& c, In v) {
  if constexpr (std::is_same_v<In, int128>) {
    return DecimalText(v, c.from.scale());
  } else {
    return ValueText(v);
  }
}

// The value type a reader yields (the reader only names the input layout:
// the executor reads the column itself).
template <typename Reader>
using ReaderValue = std::remove_cv_t<decltype(std::declval<const Reader&>()[0])>;

// convert(value, &out) -> Conv for each valid row: kNull and (outside ANSI)
// kInvalid / kOverflow make the row NULL; under ANSI those two fail naming
// the row and value.
template <typename Out, typename Reader, typename Convert>
inline Result<ColumnPtr> MapToFixed(const CastCtx& c, const Column& in, const Reader&,
                                    Convert convert) {
  using In = ReaderValue<Reader>;
  const bool ansi = c.options.ansi;
  return UnaryExecutor<In, Out>::ExecuteChecked(
      c.to, in, in.length, [&c, ansi, convert](In v, RowContext& ctx) -> Out {
        Out value{};
        Conv r = convert(v, &value);
        if (r == Conv::kOk) return value;
        if (ansi && r != Conv::kNull) {
          if (c.options.row_errors != nullptr) {
            Status failure = CastFailure(c, ctx.row(), Describe(c, v), r);
            c.options.row_errors->Add(ctx.row(), RowErrorKind::kAnsiCast, failure.message());
          } else {
            ctx.Fail(CastFailure(c, ctx.row(), Describe(c, v), r));
          }
        } else {
          ctx.SetNull();
        }
        return Out();
      });
}

template <typename Reader, typename Convert>
inline Result<ColumnPtr> MapToBool(const CastCtx& c, const Column& in, const Reader& reader,
                                   Convert convert) {
  return MapToFixed<bool>(c, in, reader, convert);
}

// Appends text for each valid row; `format(value, &text)` appends to text.
template <typename Reader, typename Format>
inline Result<ColumnPtr> MapToString(const CastCtx& c, const Column& in, const Reader&,
                                     Format format) {
  using In = ReaderValue<Reader>;
  std::string text;
  return UnaryExecutor<In, std::string_view>::Execute(c.to, in, in.length,
                                                      [&](In v, StringAppender& out) {
                                                        text.clear();
                                                        format(v, &text);
                                                        out.Append(text);
                                                      });
}

// Calls f(reader) with the typed reader for a numeric or boolean column.
template <typename F>
inline Result<ColumnPtr> VisitNumeric(const Column& in, F f) {
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

// The targets, one file per family (cast_to_<family>.cc).
template <typename Out>
Result<ColumnPtr> CastToIntegral(const CastCtx& c, const Column& in);
template <typename Out>
Result<ColumnPtr> CastToFloating(const CastCtx& c, const Column& in);
Result<ColumnPtr> CastToDecimal(const CastCtx& c, const Column& in);
Result<ColumnPtr> CastToBoolean(const CastCtx& c, const Column& in);
Result<ColumnPtr> CastToDate(const CastCtx& c, const Column& in);
Result<ColumnPtr> CastToTimestamp(const CastCtx& c, const Column& in);
Result<ColumnPtr> CastToTimestampNtz(const CastCtx& c, const Column& in);
Result<ColumnPtr> CastToBinary(const CastCtx& c, const Column& in);
Result<ColumnPtr> CastToString(const CastCtx& c, const Column& in);

}  // namespace silt::expr::cast_internal
