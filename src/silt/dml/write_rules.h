// The table's rules for rows DML writes (UPDATE's and MERGE's new rows), as
// delta-spark 4 applies them:
//  - generated columns (delta.generationExpression): a column the clause
//    does not assign is computed from the row's new values; one it assigns
//    must equal the expression (`col <=> expr`), else
//    DELTA_VIOLATE_CONSTRAINT_WITH_VALUES naming the column and values;
//  - identity columns (delta.identity.*): UPDATE may not assign one
//    (DELTA_IDENTITY_COLUMNS_UPDATE_NOT_SUPPORTED); an INSERT that does not
//    assign one gets fresh values beyond the high-water mark, which the
//    commit raises; a GENERATED ALWAYS one refuses explicit values
//    (DELTA_IDENTITY_COLUMNS_EXPLICIT_INSERT_NOT_SUPPORTED), a BY DEFAULT
//    one keeps them;
//  - CHECK constraints (delta.constraints.<name>) and column invariants
//    (delta.invariants): every new row must satisfy each (a NULL result
//    violates too, as delta-spark checks), else
//    DELTA_VIOLATE_CONSTRAINT_WITH_VALUES naming the constraint and the
//    values of the columns it reads.
// Rows a DML statement copies unchanged are not checked (delta-spark
// neither; they satisfied the rules when written).
//
// Thread safety: one thread (bound expressions keep scratch state, the
// identity counters advance).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/delta/generated_columns.h"
#include "silt/delta/table.h"
#include "silt/expr/bind/bound_expression.h"
#include "silt/expr/eval_options.h"

namespace silt::dml {

// A boolean rule over the table's rows with its error text.
struct RowCheck {
  std::string name;        // "pos", "Generated Column", "EXPRESSION(...)"
  std::string expression;  // as the error shows it
  expr::BoundExpressionPtr holds;
  // The columns (or nested fields) it reads, as the error lists them, and
  // their values as strings.
  std::vector<std::string> columns;
  std::vector<expr::BoundExpressionPtr> values;
};

// Binds `expression` (Spark SQL text over `schema`'s columns) as a
// RowCheck shown as `shown_expression`, or when that is empty as Spark
// re-prints it (every operation parenthesized: "((a > 0) AND (b < 1))").
// Errors: the parser's and binder's, naming `name`.
Result<RowCheck> MakeRowCheck(std::string name, const std::string& expression,
                              const columnar::SchemaPtr& schema, const expr::EvalOptions& eval,
                              const std::string& shown_expression);

// The first row of `rows` where `check` does not hold TRUE, as Spark's
// error; OK when every row passes. `where` names the table for messages.
Status CheckRows(RowCheck* check, const columnar::RecordBatch& rows, const std::string& where);

class WriteRules {
 public:
  enum class Kind { kUpdate, kInsert };

  // The rules of `snapshot`'s table (its schema and configuration).
  // Errors: Corruption for malformed field metadata; InvalidArgument when a
  // generation expression or constraint does not bind.
  static Result<std::unique_ptr<WriteRules>> Make(const delta::Snapshot& snapshot,
                                                  const std::string& table_path,
                                                  const expr::EvalOptions& eval);

  // Refuses assignments Spark refuses: an identity column assigned by an
  // update, or by an insert when GENERATED ALWAYS. `assigned` has one entry
  // per table column; `context` names the clause.
  Status CheckAssignments(Kind kind, const std::vector<bool>& assigned,
                          const std::string& context) const;

  // `rows` (table schema, one clause's new rows) with generated and identity
  // columns filled in and every rule checked. REQUIRES: CheckAssignments
  // passed for `assigned`.
  Result<columnar::RecordBatchPtr> Apply(const columnar::RecordBatchPtr& rows, Kind kind,
                                         const std::vector<bool>& assigned);

  // The table schema with the identity columns' high-water marks raised,
  // as delta-spark does, to the highest (step < 0: lowest) value among the
  // new rows of the operation (explicit BY DEFAULT values included) for
  // each column the operation generated values of; null when it generated
  // none.
  Result<columnar::SchemaPtr> SchemaWithHighWaterMarks() const;

  // The writer features these rules honour (for CommitRequest).
  static const std::vector<std::string>& HonouredFeatures();

 private:
  WriteRules() = default;
  struct Generated {
    int column = -1;
    expr::BoundExpressionPtr compute;  // CAST(expr AS column type)
    RowCheck check;                    // column <=> expr
  };
  struct Identity {
    delta::IdentityColumn column;
    int index = -1;
    int64_t first_k = 0;  // k of the first value after the high-water mark
    int64_t next_k = 0;
    // The highest (step < 0: lowest) value among the rows written.
    std::optional<int64_t> extreme;
  };
  columnar::SchemaPtr schema_;
  std::string table_path_;
  std::vector<Generated> generated_;
  std::vector<Identity> identity_;
  std::vector<RowCheck> constraints_;
};

}  // namespace silt::dml
