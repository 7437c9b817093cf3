// CAST to DATE, TIMESTAMP and TIMESTAMP_NTZ.
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

}  // namespace

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
  // One memo for the column: its texts mostly share their second.
  columnar::TimestampParser parser;
  switch (c.from.id()) {
    case TypeId::kString:
      return MapToFixed<int64_t>(c, in, StringReader(in),
                                 [offset, &parser](std::string_view s, int64_t* o) {
                                   std::optional<int64_t> micros = parser.Parse(s, offset);
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

}  // namespace silt::expr::cast_internal
