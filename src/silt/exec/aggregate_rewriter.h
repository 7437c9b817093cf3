// Planning an aggregation from parsed expressions, shared by `silt sql`
// (query/) and streaming `groupBy` / `sql ... GROUP BY` steps (stream/):
// which calls are aggregates, and rewriting the items computed from the
// groups (a select list, HAVING, ORDER BY) into expressions over the
// aggregation's output columns: `__key<k>` for the k-th GROUP BY key, and
// `__agg<a>` for the a-th distinct aggregate call met while rewriting.
//
//   AggregateRewriter rw;
//   for (key : group_by) rw.AddKey(*key);
//   SILT_ASSIGN_OR_RETURN(NodePtr item, rw.Rewrite(select_item));  // sum(x) / count(*) ->
//                                                                  // __agg0 / __agg1
//   rw.calls()  // what to aggregate: kind, argument, constant parameters
//
// Thread safety: one rewriter per planning pass.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "silt/base/result.h"
#include "silt/exec/aggregate.h"
#include "silt/expr/parse/ast.h"

namespace silt::exec {

// The aggregate `call` is (count(*), count(DISTINCT x), sum, first, ...
// as AggKindFromName names them); nullopt for any other function.
std::optional<AggKind> AggregateCallKind(const expr::CallNode& call);
// True when `node` or a subtree is an aggregate call.
bool ContainsAggregate(const expr::Node& node);

// The AggregateSpec of aggregate call `call` of kind `kind` (as
// AggregateCallKind gives it), all but arg_type: first/last's ignoreNulls,
// approx_count_distinct's relativeSD and percentile_approx's percentages and
// accuracy, each a constant. Errors: InvalidArgument, with Spark's reason
// and the call's text, for a wrong argument count or a parameter that is not
// a constant of the right type and range.
Result<AggregateSpec> AggregateCallSpec(const expr::CallNode& call, AggKind kind);

class AggregateRewriter {
 public:
  struct Call {
    AggKind kind;
    expr::NodePtr arg;   // null for count(*)
    std::string text;    // lower-cased, identifies repeats of one call
    AggregateSpec spec;  // AggregateCallSpec: all but arg_type
  };

  static std::string KeyColumn(size_t k);
  static std::string AggColumn(size_t a);

  // The next GROUP BY key: an item equal to it (as text, ignoring case)
  // becomes a reference to its column, and so does a plain column
  // reference to `name` when given (`window` for a window() key, as Spark
  // resolves it).
  void AddKey(const expr::Node& key, std::string name = {});
  // `node` over the aggregation's output. Errors: InvalidArgument for a
  // column outside the keys and outside any aggregate, `*`, a nested
  // aggregate, a wrong argument count; NotSupported for DISTINCT other than
  // count(DISTINCT x).
  Result<expr::NodePtr> Rewrite(const expr::NodePtr& node);
  const std::vector<Call>& calls() const { return calls_; }

 private:
  std::vector<std::string> key_texts_;
  std::vector<std::string> key_names_;  // lower case; empty: none
  std::vector<Call> calls_;
};

}  // namespace silt::exec
