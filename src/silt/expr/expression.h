// Spark SQL expressions: parse text, bind to an input schema, evaluate over
// RecordBatches column-at-a-time.
//
//   SILT_ASSIGN_OR_RETURN(auto parsed, ParseExpression("CAST(x AS INT) AS y"));
//   SILT_ASSIGN_OR_RETURN(auto bound, Bind(*parsed, input_schema, ctx));
//   SILT_ASSIGN_OR_RETURN(ColumnPtr out, bound->Evaluate(batch, eval_ctx));
//
// Semantics follow Spark 3.5 defaults: non-ANSI casts give NULL on failure
// (EvalOptions::ansi turns failures into errors naming the value and row),
// session time zone UTC unless configured.
//
// Thread safety: a parsed Expression is immutable. A BoundExpression keeps
// per-evaluation scratch state; use one per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/expr/bind/bound_expression.h"
#include "silt/expr/eval_options.h"
#include "silt/expr/kernel/bind_session.h"
#include "silt/expr/parse/parsed_expression.h"

namespace silt::expr {

// Parses one expression, optionally followed by `AS alias` (or a bare alias).
// Errors: InvalidArgument: "<message> at position <n> in '<text>'".
Result<ExpressionPtr> ParseExpression(std::string_view text);

// Resolves column references and functions against `input_schema` and picks
// kernels. Errors: InvalidArgument naming the unknown column (with the
// available ones), unknown function, or wrong argument types, with the
// expression text; NotSupported naming a Spark feature silt does not
// implement yet (e.g. a datetime pattern letter or a from_json option).
// `session`, when not null, shares work with the other expressions bound with
// it (see BindSession); it must outlive this call only.
Result<BoundExpressionPtr> Bind(const Expression& expr, const columnar::SchemaPtr& input_schema,
                                const EvalOptions& options = {}, BindSession* session = nullptr);

// ParseExpression then Bind, for callers that hold the expression as text (a
// table's CHECK constraint or generation expression). Errors: those of
// ParseExpression and Bind.
Result<BoundExpressionPtr> BindText(std::string_view text, const columnar::SchemaPtr& input_schema,
                                    const EvalOptions& options = {},
                                    BindSession* session = nullptr);

// A select-list generator at the top of a parsed item: explode,
// explode_outer, posexplode or posexplode_outer of one argument, possibly
// aliased (`explode(items) AS item`). The select step turns each input row
// into one row per element (per map entry), repeating the other items.
// (window() is not a generator: see WindowExpansion.)
struct GeneratorSpec {
  std::string function;    // lower case
  ExpressionPtr argument;  // the array or map expression
  std::string alias;       // empty when none
  bool outer = false;      // *_outer: a NULL/empty input gives one NULL row
  bool with_position = false;
  // json_tuple(json, 'k1', 'k2', ...): one row per input row with columns
  // c0, c1, ... (each the value of field kN, as get_json_object gives it);
  // `json_tuple_items` are those columns as expressions to bind.
  std::vector<ExpressionPtr> json_tuple_items;
};
// nullopt when `expr` is not a generator call.
std::optional<GeneratorSpec> AsGenerator(const Expression& expr);

// Binds one select-list item, expanding `*` into every input column and
// `x.*` into every field of struct column x (named by the field), as Spark's
// select does; any other expression binds as Bind does. Errors: as Bind, and
// InvalidArgument when `x` in `x.*` is not a struct.
Result<std::vector<BoundExpressionPtr>> BindSelectItem(const Expression& expr,
                                                       const columnar::SchemaPtr& input_schema,
                                                       const EvalOptions& options = {},
                                                       BindSession* session = nullptr);

// Spark's TimeWindowing rule for one projection (the items of a select, or
// one withColumn entry): when window(time, duration[, slide[, start]])
// appears anywhere in the items (`window(ts, '1 hour').end`, inside
// typeof(), next to explode() ...), each input row first becomes one row
// per window containing its time, latest start first (a tumbling window:
// one; a NULL time: none, the row is dropped), and every window() call in
// the items is that row's window, struct<start: timestamp, end: timestamp>
// (named `window`). A generator in the items then applies to the expanded
// rows. Outside such a projection (a where predicate) window() is the
// tumbling window of its time, NULL for a NULL time, and a sliding window is
// an error.
//
//   SILT_ASSIGN_OR_RETURN(auto windows, WindowExpansion::Make(items, schema, options));
//   if (windows) bind the items against windows->schema() with
//   windows->options(), and evaluate them over windows->Expand(batch, ctx).
//
// Thread safety: one thread (the window list keeps scratch state).
class WindowExpansion {
 public:
  // nullptr when no item calls window(). Errors: InvalidArgument when the
  // items hold two different windows (Spark: a cartesian product of rows,
  // not supported), naming both calls; the bind errors of the window()
  // arguments (e.g. a slide longer than the window).
  static Result<std::unique_ptr<WindowExpansion>> Make(const std::vector<const Expression*>& items,
                                                       const columnar::SchemaPtr& input_schema,
                                                       const EvalOptions& options = {});
  ~WindowExpansion();

  // The input columns, then the window column: bind the items against it.
  const columnar::SchemaPtr& schema() const { return schema_; }
  // The options to bind the items with (window() reads the window column).
  const EvalOptions& options() const { return options_; }
  // Spark's text of the window, e.g. "window(ts, 600000000, 300000000, 0)".
  const std::string& description() const;

  // Each row of `batch` (of the input schema) once per window containing its
  // time, with the window column appended.
  Result<columnar::RecordBatchPtr> Expand(const columnar::RecordBatch& batch,
                                          const EvalContext& ctx);
  // For each row of the last Expand's result, the input row it came from;
  // empty when they are the input's rows one to one.
  const std::vector<int64_t>& last_rows() const { return rows_; }

 private:
  WindowExpansion() = default;
  BoundExpressionPtr windows_;  // the array of the windows of each row
  std::vector<int64_t> rows_;   // see last_rows()
  columnar::SchemaPtr schema_;
  EvalOptions options_;
};

}  // namespace silt::expr
