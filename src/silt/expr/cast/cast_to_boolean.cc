// CAST to BOOLEAN.
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

}  // namespace

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

}  // namespace silt::expr::cast_internal
