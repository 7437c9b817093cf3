// CAST between Spark types with Spark 3.5 semantics (Cast.scala).
//
// Non-ANSI (the default): a value that cannot be converted becomes NULL
// (malformed strings, out-of-range decimals, NaN to timestamp); integral
// narrowing wraps like Java; floating to integral saturates like Java.
// ANSI: those cases are errors naming the value, the row and the expression,
// and a few conversions Spark's ANSI mode forbids are rejected when binding.
//
// Strings parse like Spark: integers via UTF8String.toInt/toLong (surrounding
// whitespace and ISO controls trimmed, a fractional part truncated), floating
// point via java.lang.Double.parseDouble plus "inf"/"nan" spellings, booleans
// from t/true/y/yes/1 and f/false/n/no/0 (case-insensitive), dates and
// timestamps via columnar/temporal.h. Numbers print like Java (Double.toString
// "84.3", "1.0E10"; BigDecimal.toString "0E-18").
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/expr/kernel/bind_session.h"
#include "silt/expr/kernel/bound.h"
#include "silt/expr/kernel/function_registry.h"
#include "silt/expr/value/time_zone.h"

namespace silt::expr {

struct CastOptions {
  bool ansi = false;
  // Session time zone offset for timestamp <-> string/date conversions.
  int64_t zone_offset_micros = 0;
  // The session time zone with its DST rules; when set, it replaces
  // zone_offset_micros. Not owned; must outlive the call.
  const TimeZone* zone = nullptr;
  // The expression, for ANSI error messages.
  std::string_view context;
  // Dead-letter mode (not owned; null: ANSI failures fail the call): a row
  // that fails under ANSI is reported here with the error and reads as the
  // type's zero value (the caller drops it), so one bad value no longer
  // fails the batch.
  RowErrors* row_errors = nullptr;
  // TRY_CAST: a variant that does not convert is NULL (other casts fail on
  // it even without ANSI, as Spark 4's VariantGet.cast).
  bool try_cast = false;
};

// Spark's Cast.canCast (non-ANSI) or Cast.canAnsiCast (ANSI).
bool CanCast(const columnar::DataType& from, const columnar::DataType& to, bool ansi);
// Cast.forceNullable: true when a non-null input may still give NULL.
bool CastForceNullable(const columnar::DataType& from, const columnar::DataType& to);

// Casts every row of `input` to `to`; null rows stay null.
// REQUIRES: CanCast(*input.type, *to, options.ansi).
// Errors (ANSI only): InvalidArgument naming the value, row and context.
Result<columnar::ColumnPtr> CastColumn(const columnar::Column& input, const columnar::TypePtr& to,
                                       const CastOptions& options);

// Spark's TRY mode (TRY_CAST): CastColumn with the ANSI rules, and NULL in
// each row where the ANSI cast fails (never an error or a dead letter;
// `options.ansi` and `options.row_errors` are ignored).
// REQUIRES: TryCastsByRow(*to).
Result<columnar::ColumnPtr> TryCastColumn(const columnar::Column& input,
                                          const columnar::TypePtr& to, CastOptions options);
// False for ARRAY, MAP, STRUCT and VARIANT: their ANSI failures name
// elements, not rows, so TRY_CAST to them keeps the non-ANSI cast.
bool TryCastsByRow(const columnar::DataType& to);

// Appends row `row` of `column` as CAST(... AS STRING) prints it.
// REQUIRES: the row is valid.
void AppendValueText(const columnar::Column& column, int64_t row, const CastOptions& options,
                     std::string* out);

// Binds CAST(child AS to). A user-specified cast shows in generated names
// ("CAST(x AS INT)"); an implicit one is invisible, as in Spark. A try-cast
// gives NULL on failure even with ANSI on ("TRY_CAST(x AS INT)").
// With `session`, a cast over a get_json_object call bound with it may read
// the JSON numbers directly (same results; see MakeJsonCastKernel).
// Errors: InvalidArgument when the cast is not allowed, quoting `context`.
Result<BoundNodePtr> BindCast(BoundNodePtr child, const columnar::TypePtr& to, bool user_specified,
                              const EvalOptions& options, std::string_view context,
                              bool try_cast = false, BindSession* session = nullptr);

// Spark's implicit cast to `to`: returns `node` unchanged when it already
// has that type.
Result<BoundNodePtr> ImplicitCast(BoundNodePtr node, const columnar::TypePtr& to,
                                  const EvalOptions& options);

// Makes argument `index` a STRING: other atomic types are cast, as Spark's
// implicit casts do for functions expecting strings. Errors: ArgTypeError for
// nested types.
Status CoerceToString(CallSite& site, size_t index);

}  // namespace silt::expr
