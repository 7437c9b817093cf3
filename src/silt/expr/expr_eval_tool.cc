// silt_expr_eval: a test-only tool for the differential corpus
// (tests/integration/test_expr_corpus.py). Reads one Spark SQL expression
// per stdin line, evaluates it as Spark's `SELECT <expr>` would (no input
// columns, one row, UTC session time zone) and prints one JSON line per
// expression:
//   {"type": "<Spark simpleString>", "value": "<text as spark-sql prints it>"}
// with "value": null for NULL, or {"error": "<message>"}.
//
// The value text follows Spark's HiveResult.toHiveString: top-level atomic
// values as CAST(... AS STRING) prints them; inside arrays, maps and structs
// strings are double-quoted and NULL is `null` (`[1,2]`, `{"a":1,"b":"x"}`).
#include <cstdio>
#include <iostream>
#include <string>

#include "silt/base/json_writer.h"
#include "silt/columnar/column.h"
#include "silt/expr/cast.h"
#include "silt/expr/expression.h"
#include "silt/expr/type_util.h"

namespace silt::expr {
namespace {

using columnar::Column;
using columnar::TypeId;

void AppendHive(const Column& column, int64_t row, bool nested, std::string* out) {
  if (column.IsNull(row)) {
    out->append(nested ? "null" : "NULL");
    return;
  }
  const columnar::DataType& type = *column.type;
  switch (type.id()) {
    case TypeId::kArray: {
      const int32_t* offsets = column.raw_values<int32_t>();
      out->push_back('[');
      for (int32_t elem_idx = offsets[row]; elem_idx < offsets[row + 1]; ++elem_idx) {
        if (elem_idx > offsets[row]) out->push_back(',');
        AppendHive(*column.children[0], elem_idx, true, out);
      }
      out->push_back(']');
      return;
    }
    case TypeId::kMap: {
      const int32_t* offsets = column.raw_values<int32_t>();
      const Column& entries = *column.children[0];
      out->push_back('{');
      for (int32_t entry_idx = offsets[row]; entry_idx < offsets[row + 1]; ++entry_idx) {
        if (entry_idx > offsets[row]) out->push_back(',');
        AppendHive(*entries.children[0], entry_idx, true, out);
        out->push_back(':');
        AppendHive(*entries.children[1], entry_idx, true, out);
      }
      out->push_back('}');
      return;
    }
    case TypeId::kStruct: {
      out->push_back('{');
      for (int field_idx = 0; field_idx < type.num_fields(); ++field_idx) {
        if (field_idx > 0) out->push_back(',');
        out->append("\"" + type.field(field_idx).name + "\":");
        AppendHive(*column.children[static_cast<size_t>(field_idx)], row, true, out);
      }
      out->push_back('}');
      return;
    }
    case TypeId::kString:
      if (nested) {
        out->push_back('"');
        AppendValueText(column, row, CastOptions{}, out);
        out->push_back('"');
        return;
      }
      break;
    default: break;
  }
  AppendValueText(column, row, CastOptions{}, out);
}

std::string ErrorLine(const Status& status) {
  JsonWriter w;
  w.BeginObject();
  w.Key("error");
  w.String(status.ToString());
  w.EndObject();
  return w.Take();
}

std::string EvaluateLine(const std::string& text) {
  Result<ExpressionPtr> parsed = ParseExpression(text);
  if (!parsed.ok()) return ErrorLine(parsed.status());
  Result<BoundExpressionPtr> bound = Bind(**parsed, columnar::DataType::Struct({}));
  if (!bound.ok()) return ErrorLine(bound.status());
  columnar::RecordBatch batch;
  batch.schema = columnar::DataType::Struct({});
  batch.num_rows = 1;
  Result<columnar::ColumnPtr> value = (*bound)->Evaluate(batch, EvalContext{});
  if (!value.ok()) return ErrorLine(value.status());
  JsonWriter w;
  w.BeginObject();
  w.Key("type");
  w.String(SimpleTypeString(*(*bound)->type()));
  w.Key("value");
  const Column& column = **value;
  if (column.IsNull(0)) {
    w.Null();
  } else {
    std::string rendered;
    AppendHive(column, 0, false, &rendered);
    w.String(rendered);
  }
  w.EndObject();
  return w.Take();
}

}  // namespace
}  // namespace silt::expr

int main() {
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    std::string out = silt::expr::EvaluateLine(line);
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
  }
  return 0;
}
