// BoundExpression: an expression bound to an input schema, evaluated over
// whole batches (Bind in expression.h makes them).
//
// Thread safety: keeps per-evaluation scratch state; one per thread.
#pragma once

#include <memory>
#include <string>

#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/expr/eval_options.h"

namespace silt::expr {

class BoundExpression {
 public:
  virtual ~BoundExpression() = default;
  virtual const columnar::TypePtr& type() const = 0;
  virtual bool nullable() const = 0;
  virtual const std::string& name() const = 0;  // output column name
  // Evaluates over every row of `batch` (whose schema is the bound schema).
  // Returns a column of batch.num_rows rows. Errors only for ANSI failures or
  // internal errors, one Status per batch.
  virtual Result<columnar::ColumnPtr> Evaluate(const columnar::RecordBatch& batch,
                                               const EvalContext& ctx) = 0;
};
using BoundExpressionPtr = std::unique_ptr<BoundExpression>;

}  // namespace silt::expr
