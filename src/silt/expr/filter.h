// BoundFilter: a WHERE predicate bound for filtering batches, as Spark's
// filter keeps the rows where it is TRUE (NULL drops).
//
// The top-level AND conjuncts are evaluated one after the other, each only
// where the earlier ones were TRUE: get_json_object parses just those rows
// (other kernels are cheap and run over the batch). Outside ANSI mode the
// conjuncts run cheapest first (`device_type = 'x'` before a
// get_json_object), which Spark's result cannot tell apart; in ANSI mode
// they keep their written order.
//
// Bound with a BindSession, the filter shares get_json_object parses with
// the expressions bound with the same session: the select list that follows
// a WHERE reuses the parses of the kept rows instead of parsing them again.
//
//   BindSession session;
//   SILT_ASSIGN_OR_RETURN(auto filter, BoundFilter::Make(*where, schema, options, &session));
//   SILT_ASSIGN_OR_RETURN(auto item, Bind(*select_item, schema, options, &session));
//   SILT_ASSIGN_OR_RETURN(RecordBatchPtr kept, filter->Filter(batch, ctx));
//   SILT_ASSIGN_OR_RETURN(ColumnPtr column, item->Evaluate(*kept, ctx));
//
// Thread safety: as BoundExpression — one evaluating thread, the same one
// as every expression bound with the session.
#pragma once

#include <memory>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/expr/bind/bound_expression.h"
#include "silt/expr/eval_options.h"
#include "silt/expr/kernel/bind_session.h"
#include "silt/expr/parse/parsed_expression.h"

namespace silt::expr {

struct RowScope;

class BoundFilter {
 public:
  // Binds `predicate` against `input_schema`. Errors: as Bind. The type is
  // not checked here (see type()).
  static Result<std::unique_ptr<BoundFilter>> Make(const Expression& predicate,
                                                   const columnar::SchemaPtr& input_schema,
                                                   const EvalOptions& options = {},
                                                   BindSession* session = nullptr);
  ~BoundFilter();
  BoundFilter(const BoundFilter&) = delete;
  BoundFilter& operator=(const BoundFilter&) = delete;

  // The predicate's type; Filter needs BOOLEAN.
  const columnar::TypePtr& type() const { return whole_->type(); }

  // The rows of `batch` where the predicate is TRUE: `batch` itself when
  // every row is kept. Errors: as BoundExpression::Evaluate; InvalidArgument
  // for a non-BOOLEAN predicate.
  Result<columnar::RecordBatchPtr> Filter(const columnar::RecordBatchPtr& batch,
                                          const EvalContext& ctx);
  // The rows of its input the last Filter kept, ascending (the selection
  // vector); null when it kept every row. Valid until the next Filter.
  const std::vector<int64_t>* last_kept_rows() const;

 private:
  BoundFilter() = default;
  // The whole predicate (its type and name), and the conjuncts in
  // evaluation order (just the whole predicate when it is not an AND).
  BoundExpressionPtr whole_;
  std::vector<BoundExpressionPtr> conjuncts_;
  std::shared_ptr<RowScope> scope_;
  std::vector<uint8_t> keep_;
};

}  // namespace silt::expr
