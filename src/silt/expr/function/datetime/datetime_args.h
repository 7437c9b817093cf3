// Helpers shared by the session-time-zone datetime functions
// (unix_time_functions.cc, calendar_functions.cc); internal to expr.
#pragma once

#include <cstdint>
#include <string_view>

#include "silt/expr/cast/cast.h"
#include "silt/expr/kernel/function_registry.h"

namespace silt::expr::datetime_args {

// Floor division (Java's Math.floorDiv).
inline int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// Casts argument `index` to `type` as Spark's implicit cast would; nested
// arguments are a type error naming `expected`.
inline Status CoerceTo(CallSite& site, size_t index, const TypePtr& type,
                       std::string_view expected) {
  const DataType& t = *site.args[index]->type();
  if (t.Equals(*type)) return Status::OK();
  if (t.is_nested()) return ArgTypeError(site, index, expected);
  SILT_ASSIGN_OR_RETURN(site.args[index],
                        ImplicitCast(std::move(site.args[index]), type, site.options));
  return Status::OK();
}

}  // namespace silt::expr::datetime_args
