// CAST to DECIMAL(p, s).
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

}  // namespace

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

}  // namespace silt::expr::cast_internal
