// Test helpers for expr: columns from literal values, one-call evaluation
// of an expression text over a batch, and rendering of a column as text.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/builder.h"
#include "silt/columnar/column.h"
#include "silt/expr/cast/cast.h"
#include "silt/expr/expression.h"

namespace silt::expr::testing {

using columnar::ColumnPtr;
using columnar::DataType;
using columnar::RecordBatch;
using columnar::RecordBatchPtr;
using columnar::TypePtr;

inline ColumnPtr StringColumn(std::initializer_list<std::optional<std::string>> values,
                              TypePtr type = DataType::String()) {
  columnar::ColumnBuilder builder(type);
  for (const auto& v : values) {
    if (v) {
      builder.AppendString(*v);
    } else {
      builder.AppendNull();
    }
  }
  return builder.Finish();
}

template <typename T>
ColumnPtr FixedColumn(TypePtr type, std::initializer_list<std::optional<T>> values) {
  columnar::ColumnBuilder builder(type);
  for (const auto& v : values) {
    if (v) {
      builder.Append<T>(*v);
    } else {
      builder.AppendNull();
    }
  }
  return builder.Finish();
}

inline ColumnPtr IntColumn(std::initializer_list<std::optional<int32_t>> values) {
  return FixedColumn<int32_t>(DataType::Int(), values);
}
inline ColumnPtr LongColumn(std::initializer_list<std::optional<int64_t>> values) {
  return FixedColumn<int64_t>(DataType::Long(), values);
}
inline ColumnPtr DoubleColumn(std::initializer_list<std::optional<double>> values) {
  return FixedColumn<double>(DataType::Double(), values);
}

inline ColumnPtr BoolColumn(std::initializer_list<std::optional<bool>> values) {
  columnar::ColumnBuilder builder(DataType::Boolean());
  for (const auto& v : values) {
    if (v) {
      builder.AppendBool(*v);
    } else {
      builder.AppendNull();
    }
  }
  return builder.Finish();
}

inline RecordBatchPtr MakeBatch(std::vector<std::pair<std::string, ColumnPtr>> columns) {
  auto batch = std::make_shared<RecordBatch>();
  std::vector<columnar::Field> fields;
  for (auto& [name, column] : columns) {
    fields.push_back(columnar::Field{name, column->type, true});
    batch->num_rows = column->length;
    batch->columns.push_back(column);
  }
  batch->schema = DataType::Struct(std::move(fields));
  return batch;
}

// A batch with no columns and `rows` rows, for constant expressions.
inline RecordBatchPtr EmptyBatch(int64_t rows) {
  auto batch = std::make_shared<RecordBatch>();
  batch->schema = DataType::Struct({});
  batch->num_rows = rows;
  return batch;
}

inline Result<BoundExpressionPtr> BindText(std::string_view text, const RecordBatch& batch,
                                           const EvalOptions& options = {}) {
  SILT_ASSIGN_OR_RETURN(ExpressionPtr parsed, ParseExpression(text));
  return Bind(*parsed, batch.schema, options);
}

inline Result<ColumnPtr> Eval(std::string_view text, const RecordBatch& batch,
                              const EvalOptions& options = {}, const EvalContext& ctx = {}) {
  SILT_ASSIGN_OR_RETURN(BoundExpressionPtr bound, BindText(text, batch, options));
  SILT_ASSIGN_OR_RETURN(ColumnPtr out, bound->Evaluate(batch, ctx));
  SILT_RETURN_NOT_OK(columnar::ValidateColumn(*out));
  return out;
}

// Each row as CAST(... AS STRING) prints it, "NULL" for nulls.
inline std::vector<std::string> Render(const columnar::Column& column,
                                       int64_t zone_offset_micros = 0) {
  std::vector<std::string> out;
  CastOptions options;
  options.zone_offset_micros = zone_offset_micros;
  for (int64_t row = 0; row < column.length; ++row) {
    if (column.IsNull(row)) {
      out.push_back("NULL");
      continue;
    }
    std::string text;
    AppendValueText(column, row, options, &text);
    out.push_back(std::move(text));
  }
  return out;
}

// Evaluates and renders; "ERROR: <message>" on failure.
inline std::vector<std::string> EvalRender(std::string_view text, const RecordBatch& batch,
                                           const EvalOptions& options = {},
                                           const EvalContext& ctx = {}) {
  Result<ColumnPtr> out = Eval(text, batch, options, ctx);
  if (!out.ok()) return {"ERROR: " + out.status().ToString()};
  return Render(**out, options.session_zone_offset_micros);
}

using Rows = std::vector<std::string>;

}  // namespace silt::expr::testing
