// Bound DML actions over batches of the joined schema (scope.h): an
// ordered list of clauses, each an optional condition and an action
// (update: the new value of every target column; delete; insert: the value
// of every target column). For each row the first clause whose condition
// is TRUE acts. UPDATE is one unconditional update clause; MERGE has one
// list per WHEN kind.
//
// Values are cast to the target column's type with ANSI store assignment
// (an overflow or a malformed string is an error naming the column).
//
// Thread safety: one thread (bound expressions keep scratch state).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/dml/scope.h"
#include "silt/dml/write_rules.h"
#include "silt/expr/bind/bound_expression.h"
#include "silt/expr/eval_options.h"
#include "silt/expr/parse/dml_statement.h"

namespace silt::dml {

enum class ActionKind { kUpdate, kDelete, kInsert };

// A clause before binding: `values` has one entry per target column (null
// for an insert's unassigned column: NULL).
struct ClauseSpec {
  expr::NodePtr condition;  // resolved (Scope::Resolve); null = always
  ActionKind kind = ActionKind::kUpdate;
  std::vector<expr::NodePtr> values;  // resolved
  // Per target column: the statement assigns it (a generated column not
  // assigned is computed, an identity column not assigned by an insert is
  // generated: write_rules.h).
  std::vector<bool> assigned;
  std::string text;  // for messages: "WHEN MATCHED ... clause 2"
};

struct ResolvedAssignments {
  std::vector<expr::NodePtr> values;
  std::vector<bool> assigned;
};

// The resolved values of one UPDATE SET / INSERT assignment list, one per
// target column: `keep_target` columns not assigned stay the target's own
// value (UPDATE), else NULL (INSERT). `star_source` assigns every target
// column from the source column of the same name (UPDATE SET * / INSERT *).
// Errors: an unknown or repeated target column; for `*`, a target column
// the source lacks (generated and identity columns too, as delta-spark).
// `assigned` marks the columns the list (or `*`) assigns.
Result<ResolvedAssignments> ResolveAssignments(const Scope& scope,
                                               const std::vector<expr::Assignment>& set,
                                               bool keep_target, bool star_source,
                                               const std::string& context);

class ClauseList {
 public:
  // `rules` (may be null; must outlive the list) are applied to the rows
  // each update and insert clause writes; Make refuses the assignments they
  // refuse (WriteRules::CheckAssignments).
  static Result<std::unique_ptr<ClauseList>> Make(const Scope& scope,
                                                  const std::vector<ClauseSpec>& clauses,
                                                  const expr::EvalOptions& options,
                                                  WriteRules* rules = nullptr);

  struct Outcome {
    // Per row of the batch: the clause that acted, or -1.
    std::vector<int> chosen;
    // The rows written by update and insert clauses (target schema), in
    // batch order within each clause; null when none.
    columnar::RecordBatchPtr written;
    // Per row of `written`: the row of the batch it was computed from.
    std::vector<int64_t> written_from;
    // Rows acted on, per clause.
    std::vector<int64_t> counts;
  };

  // REQUIRES: `batch` has the joined schema.
  Result<Outcome> Apply(const columnar::RecordBatchPtr& batch, const expr::EvalContext& ctx);

  bool empty() const { return clauses_.empty(); }
  size_t size() const { return clauses_.size(); }
  ActionKind kind(size_t i) const { return clauses_[i].kind; }

 private:
  struct Bound {
    expr::BoundExpressionPtr condition;
    ActionKind kind;
    std::vector<expr::BoundExpressionPtr> values;
    std::vector<bool> assigned;
    std::string text;
  };
  ClauseList() = default;
  columnar::SchemaPtr target_;
  std::string table_path_;
  expr::EvalOptions options_;
  WriteRules* rules_ = nullptr;
  std::vector<Bound> clauses_;
};

// Evaluates a bound boolean expression: one byte per row, 1 where TRUE.
Result<std::vector<uint8_t>> EvaluateTrue(expr::BoundExpression* condition,
                                          const columnar::RecordBatch& batch,
                                          const expr::EvalContext& ctx);

// Binds `node` (resolved) against `schema` and checks it is BOOLEAN.
// Errors: as expr::Bind; InvalidArgument naming `context` otherwise.
Result<expr::BoundExpressionPtr> BindCondition(const expr::NodePtr& node,
                                               const columnar::SchemaPtr& schema,
                                               const expr::EvalOptions& options,
                                               const std::string& context);

}  // namespace silt::dml
