#include "silt/expr/kernel/bound.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "silt/expr/kernel/kernel_util.h"

namespace silt::expr {

using columnar::Column;
using columnar::ColumnPtr;

Result<Datum> BoundColumn::Eval(const columnar::RecordBatch& batch, const EvalContext&) {
  if (index_ >= batch.num_columns()) {
    return Status::Internal("Bound column ", name_, " (#", index_,
                            ") is missing from a batch with ", batch.num_columns(), " columns");
  }
  return Datum{batch.column(index_), false};
}

Result<Datum> BoundField::Eval(const columnar::RecordBatch& batch, const EvalContext& ctx) {
  SILT_ASSIGN_OR_RETURN(Datum parent, child_->Eval(batch, ctx));
  const Column& st = *parent.column;
  ColumnPtr field = st.children[static_cast<size_t>(field_index_)];
  if (st.null_count == 0 || st.validity == nullptr) return Datum{field, parent.constant};
  // A null struct makes its fields null, whatever the child arrays hold.
  auto out = std::make_shared<Column>(*field);
  int64_t null_count = 0;
  out->validity = AndBitmaps(st.validity.get(), field->validity.get(), st.length, &null_count);
  out->null_count = null_count;
  return Datum{ColumnPtr(std::move(out)), parent.constant};
}

BoundCall::BoundCall(KernelInfo info, bool nullable, std::vector<BoundNodePtr> args,
                     std::unique_ptr<Kernel> kernel, bool context_dependent)
    : BoundNode(info.type, nullable, info.sql),
      info_(std::move(info)),
      args_(std::move(args)),
      kernel_(std::move(kernel)),
      context_dependent_(context_dependent) {}

bool BoundCall::foldable() const {
  if (context_dependent_) return false;
  for (const BoundNodePtr& arg : args_) {
    if (!arg->foldable()) return false;
  }
  return true;
}

Result<Datum> BoundCall::Eval(const columnar::RecordBatch& batch, const EvalContext& ctx) {
  scratch_.clear();
  bool all_constant = true;
  for (const BoundNodePtr& arg : args_) {
    SILT_ASSIGN_OR_RETURN(Datum d, arg->Eval(batch, ctx));
    all_constant = all_constant && d.constant;
    scratch_.push_back(std::move(d));
  }
  ExecArgs exec;
  exec.args = scratch_;
  exec.num_rows = all_constant ? 1 : batch.num_rows;
  exec.eval = &ctx;
  SILT_ASSIGN_OR_RETURN(ColumnPtr out, kernel_->Exec(info_, exec));
  if (out->length != exec.num_rows) {
    return Status::Internal("Kernel for ", info_.sql, " returned ", out->length, " rows, expected ",
                            exec.num_rows);
  }
  return Datum{std::move(out), all_constant};
}

Result<Datum> EvaluateConstant(BoundNode& node) {
  columnar::RecordBatch empty;
  empty.schema = columnar::DataType::Struct({});
  empty.num_rows = 0;
  EvalContext ctx;
  SILT_ASSIGN_OR_RETURN(Datum d, node.Eval(empty, ctx));
  if (!d.constant) return Status::Internal("Expression ", node.sql(), " is not constant");
  return d;
}

Result<ColumnPtr> ExpandConstant(const Column& constant, int64_t num_rows) {
  if (num_rows == 1) return std::make_shared<Column>(constant);
  if (constant.length != 1) {
    return Status::Internal("A constant column has ", constant.length, " rows, expected 1");
  }
  if (constant.IsNull(0)) return columnar::MakeNullColumn(constant.type, num_rows);
  // Constants such as current_timestamp() reach the root of every batch:
  // repeat primitive values directly.
  const columnar::DataType& type = *constant.type;
  auto out = std::make_shared<Column>();
  out->type = constant.type;
  out->length = num_rows;
  out->null_count = 0;
  switch (type.id()) {
    case columnar::TypeId::kBoolean: {
      auto values = std::make_shared<Buffer>();
      values->Resize(std::max<int64_t>(1, BitmapBytes(num_rows)));
      std::memset(values->mutable_data(), constant.BoolValue(0) ? 0xFF : 0,
                  static_cast<size_t>(values->size()));
      out->values = std::move(values);
      return ColumnPtr(std::move(out));
    }
    case columnar::TypeId::kString:
    case columnar::TypeId::kBinary: {
      std::string_view value = constant.StringValue(0);
      auto offsets = std::make_shared<Buffer>();
      // Every offset and byte is written below: no zero-fill first.
      offsets->ResizeUninitialized((num_rows + 1) * static_cast<int64_t>(sizeof(int32_t)));
      auto data = std::make_shared<Buffer>();
      int64_t total = static_cast<int64_t>(value.size()) * num_rows;
      if (total > std::numeric_limits<int32_t>::max()) {
        return Status::ResourceExhausted("Repeating a ", value.size(), "-byte constant over ",
                                         num_rows, " rows exceeds the 2 GiB string column limit");
      }
      data->ResizeUninitialized(total);
      int32_t* off = offsets->mutable_data_as<int32_t>();
      uint8_t* bytes = data->mutable_data();
      for (int64_t row = 0; row < num_rows; ++row) {
        off[row] = static_cast<int32_t>(row * static_cast<int64_t>(value.size()));
        if (!value.empty()) std::memcpy(bytes + off[row], value.data(), value.size());
      }
      off[num_rows] = static_cast<int32_t>(total);
      out->values = std::move(offsets);
      out->data = std::move(data);
      return ColumnPtr(std::move(out));
    }
    default: break;
  }
  int width = type.byte_width();
  if (width > 0) {
    auto values = std::make_shared<Buffer>();
    values->ResizeUninitialized(num_rows * width);
    const uint8_t* src = constant.values->data();
    uint8_t* dst = values->mutable_data();
    for (int64_t row = 0; row < num_rows; ++row) {
      std::memcpy(dst + row * width, src, static_cast<size_t>(width));
    }
    out->values = std::move(values);
    return ColumnPtr(std::move(out));
  }
  std::vector<int64_t> indices(static_cast<size_t>(num_rows), 0);
  return columnar::TakeColumn(constant, indices);
}

}  // namespace silt::expr
