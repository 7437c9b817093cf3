// The parts of DeltaSink (delta_sink.h) that give the query's rows the
// table's own columns, internal to sink/delta_sink*.cc: the plan of the
// generated and identity columns for one table schema, the identity values
// a batch's writers share, the filler that computes and checks those
// columns for one writer, and the table's CHECK constraints and invariants
// bound for one writer. Built by delta_sink_columns.cc; used by the batch
// path (delta_sink.cc) and Make (delta_sink_options.cc).
//
// Thread safety: a ColumnPlan is immutable and shared; IdentityCounters are
// shared by the batch's writers (atomic); a ColumnFiller and a Constraints
// belong to one writer (one thread).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "silt/base/result.h"
#include "silt/base/status.h"
#include "silt/columnar/column.h"
#include "silt/delta/generated_columns.h"
#include "silt/dml/write_rules.h"
#include "silt/expr/eval_options.h"
#include "silt/expr/expression.h"
#include "silt/stream/sink/delta_sink.h"

namespace silt::stream {

struct DeltaSink::ColumnPlan {
  struct Generated {
    std::string name;        // as the table spells it
    std::string expression;  // delta.generationExpression
    columnar::TypePtr type;  // the table column's type
    int output_index = -1;   // the query's column, or -1: computed
  };
  struct Identity {
    delta::IdentityColumn column;
    int output_index = -1;  // the query's column (BY DEFAULT), or -1: generated
    int64_t first_k = 0;    // k of the first value after the high-water mark
  };
  std::vector<Generated> generated;
  std::vector<Identity> identity;
  columnar::SchemaPtr output_schema;
  // output_schema's columns, the computed generated columns, the generated
  // identity columns.
  columnar::SchemaPtr write_schema;
  std::string table_path;
};

// The next k (value start + k * step) of each identity column, shared by
// the batch's writers: each chunk takes a range.
struct DeltaSink::IdentityCounters {
  explicit IdentityCounters(const ColumnPlan& plan) : next(plan.identity.size()) {
    for (size_t i = 0; i < plan.identity.size(); ++i) next[i].store(plan.identity[i].first_k);
  }
  std::vector<std::atomic<int64_t>> next;
};

class DeltaSink::ColumnFiller {
 public:
  // Binds `plan`'s expressions over its output schema: the computed
  // generated columns, and for a generated column the query provides, the
  // check that it equals its expression. `counters` must outlive the
  // filler. Errors: InvalidArgument naming the generated column whose
  // expression does not bind.
  static Result<std::unique_ptr<ColumnFiller>> Make(std::shared_ptr<const ColumnPlan> plan,
                                                    const expr::EvalOptions& eval,
                                                    IdentityCounters* counters, int64_t batch_id);

  // `batch` (the query's rows) with the computed columns appended, shaped
  // as plan.write_schema. Errors: InvalidArgument with Spark's error class
  // for a generated value that differs from its expression or an identity
  // value that overflows.
  Result<columnar::RecordBatch> Apply(const columnar::RecordBatch& batch);

 private:
  ColumnFiller() = default;
  struct Check {
    size_t generated = 0;
    expr::BoundExpressionPtr equal;     // column <=> expression
    expr::BoundExpressionPtr given;     // the column as text, for the error
    expr::BoundExpressionPtr expected;  // the expression as text
  };
  std::shared_ptr<const ColumnPlan> plan_;
  IdentityCounters* counters_ = nullptr;
  int64_t batch_id_ = -1;
  std::vector<expr::BoundExpressionPtr> compute_;
  std::vector<Check> checks_;
};

// Checked on the rows as handed to the AppendWriter (after the filler), as
// delta-spark checks the rows it writes.
struct DeltaSink::Constraints {
  std::vector<dml::RowCheck> checks;
  std::string where;
  Status Check(const columnar::RecordBatch& batch) {
    for (dml::RowCheck& check : checks) SILT_RETURN_NOT_OK(dml::CheckRows(&check, batch, where));
    return Status::OK();
  }
};

}  // namespace silt::stream
