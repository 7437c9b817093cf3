// Bound expression nodes and the kernel interface (internal to expr).
//
// Binding turns a parsed tree into BoundNodes with resolved types. Evaluation
// is column-at-a-time: every node evaluates its children to whole columns,
// then runs one kernel over them — one virtual call per node per batch, never
// per row. A Datum is a column of the batch's length, or a "constant": a
// one-row column standing for every row (literals, and calls whose arguments
// are all constant, so constant subtrees are computed once per batch on one
// row and never expanded until the root).
//
// Thread safety: bound nodes keep scratch state; one tree per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/expr/eval_options.h"

namespace silt::expr {

struct Datum {
  columnar::ColumnPtr column;
  // True when `column` has one row that stands for every row.
  bool constant = false;
};

class BoundNode {
 public:
  BoundNode(columnar::TypePtr type, bool nullable, std::string sql)
      : type_(std::move(type)), nullable_(nullable), sql_(std::move(sql)) {}
  virtual ~BoundNode() = default;
  BoundNode(const BoundNode&) = delete;
  BoundNode& operator=(const BoundNode&) = delete;

  const columnar::TypePtr& type() const { return type_; }
  bool nullable() const { return nullable_; }
  // Spark's pretty SQL of the bound subtree (implicit casts hidden), used for
  // generated column names and messages.
  const std::string& sql() const { return sql_; }

  // True when the value depends on neither input columns nor the per-batch
  // context, so it can be computed at bind time.
  virtual bool foldable() const = 0;
  // For a top-level column reference: the column's name in the schema.
  virtual const std::string* column_name() const { return nullptr; }

  // Evaluates over `batch`. The result has batch.num_rows rows or is a
  // constant. Errors: ANSI failures and internal errors, one per batch.
  virtual Result<Datum> Eval(const columnar::RecordBatch& batch, const EvalContext& ctx) = 0;

 private:
  columnar::TypePtr type_;
  bool nullable_;
  std::string sql_;
};
using BoundNodePtr = std::unique_ptr<BoundNode>;

// What a kernel knows from binding: its output type, argument types, the
// session options and the expression text for error messages.
struct KernelInfo {
  columnar::TypePtr type;
  std::vector<columnar::TypePtr> arg_types;
  EvalOptions options;
  std::string sql;
};

// One kernel invocation. Every Datum in `args` has `num_rows` rows or is a
// constant (one row); when all arguments are constant, num_rows is 1.
struct ExecArgs {
  std::span<const Datum> args;
  int64_t num_rows = 0;
  const EvalContext* eval = nullptr;
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  // Returns a column of args.num_rows rows of info.type.
  virtual Result<columnar::ColumnPtr> Exec(const KernelInfo& info, const ExecArgs& args) = 0;
};

using KernelFn = Result<columnar::ColumnPtr> (*)(const KernelInfo& info, const ExecArgs& args);

// A stateless kernel: a plain function chosen at bind time.
class FunctionKernel final : public Kernel {
 public:
  explicit FunctionKernel(KernelFn fn) : fn_(fn) {}
  Result<columnar::ColumnPtr> Exec(const KernelInfo& info, const ExecArgs& args) override {
    return fn_(info, args);
  }

 private:
  KernelFn fn_;
};

class BoundLiteral final : public BoundNode {
 public:
  // `value` is a one-row column. `written` is true for a literal the user
  // wrote (Spark types some of those more tightly, e.g. an integer literal
  // next to a decimal), false for a folded constant.
  BoundLiteral(columnar::ColumnPtr value, bool is_null, std::string sql, bool written)
      : BoundNode(value->type, is_null, std::move(sql)),
        value_(std::move(value)),
        written_(written) {}
  bool foldable() const override { return true; }
  Result<Datum> Eval(const columnar::RecordBatch&, const EvalContext&) override {
    return Datum{value_, true};
  }
  const columnar::ColumnPtr& value() const { return value_; }
  bool written() const { return written_; }

 private:
  columnar::ColumnPtr value_;
  bool written_;
};

class BoundColumn final : public BoundNode {
 public:
  BoundColumn(int index, const columnar::Field& field)
      : BoundNode(field.type, field.nullable, field.name), index_(index), name_(field.name) {}
  bool foldable() const override { return false; }
  const std::string* column_name() const override { return &name_; }
  Result<Datum> Eval(const columnar::RecordBatch& batch, const EvalContext& ctx) override;

 private:
  int index_;
  std::string name_;
};

// A struct field of the child's value; null where the struct is null.
class BoundField final : public BoundNode {
 public:
  BoundField(BoundNodePtr child, int field_index, bool nullable, std::string sql)
      : BoundNode(child->type()->field(field_index).type, nullable, std::move(sql)),
        child_(std::move(child)),
        field_index_(field_index) {}
  bool foldable() const override { return child_->foldable(); }
  Result<Datum> Eval(const columnar::RecordBatch& batch, const EvalContext& ctx) override;

 private:
  BoundNodePtr child_;
  int field_index_;
};

// A function or operator: evaluates its arguments, then one kernel.
class BoundCall final : public BoundNode {
 public:
  // `context_dependent` marks kernels that read the EvalContext
  // (current_timestamp()), which are never folded at bind time.
  BoundCall(KernelInfo info, bool nullable, std::vector<BoundNodePtr> args,
            std::unique_ptr<Kernel> kernel, bool context_dependent = false);
  bool foldable() const override;
  Result<Datum> Eval(const columnar::RecordBatch& batch, const EvalContext& ctx) override;
  const std::vector<BoundNodePtr>& args() const { return args_; }

 private:
  KernelInfo info_;
  std::vector<BoundNodePtr> args_;
  std::unique_ptr<Kernel> kernel_;
  bool context_dependent_;
  std::vector<Datum> scratch_;
};

// Evaluates a foldable node once (at bind time). REQUIRES: node.foldable().
Result<Datum> EvaluateConstant(BoundNode& node);

// Repeats a constant's single row `num_rows` times (the root of a tree
// returns full columns).
Result<columnar::ColumnPtr> ExpandConstant(const columnar::Column& constant, int64_t num_rows);

}  // namespace silt::expr
