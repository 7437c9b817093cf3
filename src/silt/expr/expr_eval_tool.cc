// silt_expr_eval: a test-only tool for the differential corpus
// (tests/integration/test_expr_corpus.py). Reads one Spark SQL expression
// per stdin line, evaluates it as Spark's `SELECT <expr>` would (no input
// columns, one row, UTC session time zone) and prints one JSON line per
// expression:
//   {"type": "<Spark simpleString>", "value": "<text as spark-sql prints it>"}
// with "value": null for NULL, or {"error": "<message>"}.
//
// With `--table FILE` (tests/integration/data/expr/table.tsv: a header of
// "name TYPE" cells, then rows of Spark SQL literal cells, tab-separated), a
// line "T<TAB><expr>" evaluates over that table as `SELECT <expr> FROM t`
// and prints {"type": ..., "values": [<text or null per row>]}.
//
// A line may start with options, each followed by a tab: "@ansi"
// (spark.sql.ansi.enabled=true) and "@tz=<zone>" (spark.sql.session.timeZone;
// the table's cells are then read in that zone too, as Spark's view is).
// A generator at the top (explode) gives its rows, and window() anywhere in
// the expression one row per window (none for a NULL time), as Spark's
// TimeWindowing: all of them for a table line, the first (or null)
// otherwise.
//
// The value text follows Spark's HiveResult.toHiveString: top-level atomic
// values as CAST(... AS STRING) prints them; inside arrays, maps and structs
// strings are double-quoted and NULL is `null` (`[1,2]`, `{"a":1,"b":"x"}`).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "silt/base/json_writer.h"
#include "silt/columnar/column.h"
#include "silt/expr/cast/cast.h"
#include "silt/expr/expression.h"
#include "silt/expr/kernel/type_util.h"
#include "silt/expr/value/time_zone.h"

namespace silt::expr {
namespace {

using columnar::Column;
using columnar::TypeId;

void AppendHive(const Column& column, int64_t row, bool nested, const CastOptions& options,
                std::string* out) {
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
        AppendHive(*column.children[0], elem_idx, true, options, out);
      }
      out->push_back(']');
      return;
    }
    case TypeId::kMap: {
      // HiveResult prints a map as Scala's Map of it: one entry per key (the
      // last), entries sorted by their text.
      const int32_t* offsets = column.raw_values<int32_t>();
      const Column& entries = *column.children[0];
      std::vector<std::pair<std::string, std::string>> rendered;
      for (int32_t entry_idx = offsets[row]; entry_idx < offsets[row + 1]; ++entry_idx) {
        std::string key;
        std::string value;
        AppendHive(*entries.children[0], entry_idx, true, options, &key);
        AppendHive(*entries.children[1], entry_idx, true, options, &value);
        auto same = std::find_if(rendered.begin(), rendered.end(),
                                 [&key](const auto& entry) { return entry.first == key; });
        if (same != rendered.end()) {
          same->second = std::move(value);
        } else {
          rendered.emplace_back(std::move(key), std::move(value));
        }
      }
      std::vector<std::string> texts;
      for (auto& [key, value] : rendered) texts.push_back(key + ":" + value);
      std::sort(texts.begin(), texts.end());
      out->push_back('{');
      for (size_t text_idx = 0; text_idx < texts.size(); ++text_idx) {
        if (text_idx > 0) out->push_back(',');
        out->append(texts[text_idx]);
      }
      out->push_back('}');
      return;
    }
    case TypeId::kStruct: {
      out->push_back('{');
      for (int field_idx = 0; field_idx < type.num_fields(); ++field_idx) {
        if (field_idx > 0) out->push_back(',');
        out->append("\"" + type.field(field_idx).name + "\":");
        AppendHive(*column.children[static_cast<size_t>(field_idx)], row, true, options, out);
      }
      out->push_back('}');
      return;
    }
    case TypeId::kString:
      if (nested) {
        out->push_back('"');
        AppendValueText(column, row, options, out);
        out->push_back('"');
        return;
      }
      break;
    default: break;
  }
  AppendValueText(column, row, options, out);
}

std::string ErrorLine(const Status& status) {
  JsonWriter w;
  w.BeginObject();
  w.Member("error", status.ToString());
  w.EndObject();
  return w.Take();
}

std::vector<std::string> SplitTabs(const std::string& line) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t tab = line.find('\t', start);
    out.push_back(line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos) return out;
    start = tab + 1;
  }
}

Result<columnar::ColumnPtr> EvalConstant(const std::string& text, const EvalOptions& options) {
  SILT_ASSIGN_OR_RETURN(ExpressionPtr parsed, ParseExpression(text));
  // Bound in a session, as the job engine binds a select list, so that the
  // session-only kernels (e.g. CAST over get_json_object) are what is tested.
  BindSession session;
  SILT_ASSIGN_OR_RETURN(BoundExpressionPtr bound,
                        Bind(*parsed, columnar::DataType::Struct({}), options, &session));
  columnar::RecordBatch batch;
  batch.schema = columnar::DataType::Struct({});
  batch.num_rows = 1;
  return bound->Evaluate(batch, EvalContext{});
}

// Builds the input table: every cell is CAST(<cell> AS <column type>).
Result<columnar::RecordBatch> LoadTable(const std::string& path, const EvalOptions& options) {
  std::ifstream in(path);
  if (!in) return Status::IOError("Cannot open ", path);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header = SplitTabs(line);
  std::vector<columnar::Field> fields;
  std::vector<std::vector<columnar::ColumnPtr>> cells(header.size());
  for (const std::string& h : header) {
    size_t space = h.find(' ');
    columnar::Field f;
    f.name = h.substr(0, space);
    SILT_ASSIGN_OR_RETURN(columnar::ColumnPtr probe,
                          EvalConstant("CAST(NULL AS " + h.substr(space + 1) + ")", options));
    f.type = probe->type;
    fields.push_back(f);
  }
  int64_t rows = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::vector<std::string> row = SplitTabs(line);
    if (row.size() != header.size()) {
      return Status::InvalidArgument(path, ": row ", rows + 1, " has ", row.size(), " cells");
    }
    for (size_t c = 0; c < row.size(); ++c) {
      std::string type = header[c].substr(header[c].find(' ') + 1);
      SILT_ASSIGN_OR_RETURN(columnar::ColumnPtr cell,
                            EvalConstant("CAST(" + row[c] + " AS " + type + ")", options));
      cells[c].push_back(cell);
    }
    ++rows;
  }
  columnar::RecordBatch batch;
  batch.schema = columnar::DataType::Struct(fields);
  batch.num_rows = rows;
  for (auto& column : cells) batch.columns.push_back(columnar::ConcatColumns(column));
  return batch;
}

// The rows of a generator's array value (elements of every row, in order;
// *_outer: a NULL row for a NULL or empty array).
struct Generated {
  columnar::ColumnPtr elements;
  std::vector<int64_t> rows;  // element index, or -1 for a NULL row
};

Generated Flatten(const Column& array, bool outer) {
  Generated out;
  out.elements = array.children[0];
  const int32_t* offsets = array.offsets();
  for (int64_t row = 0; row < array.length; ++row) {
    const bool empty = array.IsNull(row) || offsets[row] == offsets[row + 1];
    if (empty) {
      if (outer) out.rows.push_back(-1);
      continue;
    }
    for (int32_t e = offsets[row]; e < offsets[row + 1]; ++e) out.rows.push_back(e);
  }
  return out;
}

// json_tuple's columns c0, c1, ... as one struct value per row (Spark's
// struct(*) over the generator's output).
std::string EvaluateJsonTuple(const GeneratorSpec& generator, const columnar::RecordBatch* batch,
                              const EvalOptions& options) {
  std::vector<columnar::Field> fields;
  auto out = std::make_shared<Column>();
  out->length = batch->num_rows;
  for (size_t item_idx = 0; item_idx < generator.json_tuple_items.size(); ++item_idx) {
    BindSession session;
    Result<BoundExpressionPtr> bound =
        Bind(*generator.json_tuple_items[item_idx], batch->schema, options, &session);
    if (!bound.ok()) return ErrorLine(bound.status());
    Result<columnar::ColumnPtr> value = (*bound)->Evaluate(*batch, EvalContext{});
    if (!value.ok()) return ErrorLine(value.status());
    fields.push_back(columnar::Field{"c" + std::to_string(item_idx), (*value)->type, true});
    out->children.push_back(*value);
  }
  out->type = columnar::DataType::Struct(fields);
  CastOptions cast_options;
  cast_options.zone = options.session_zone.get();
  JsonWriter w;
  w.BeginObject();
  w.Key("type");
  w.String(SimpleTypeString(*out->type));
  w.Key("values");
  w.BeginArray();
  for (int64_t row = 0; row < out->length; ++row) {
    std::string rendered;
    AppendHive(*out, row, false, cast_options, &rendered);
    w.String(rendered);
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

std::string EvaluateLine(const std::string& text, const columnar::RecordBatch* table,
                         const EvalOptions& options) {
  Result<ExpressionPtr> parsed = ParseExpression(text);
  if (!parsed.ok()) return ErrorLine(parsed.status());
  columnar::RecordBatch empty;
  empty.schema = columnar::DataType::Struct({});
  empty.num_rows = 1;
  const columnar::RecordBatch* batch = table != nullptr ? table : &empty;
  std::optional<GeneratorSpec> generator = AsGenerator(**parsed);
  if (generator && generator->function == "json_tuple") {
    return EvaluateJsonTuple(*generator, table != nullptr ? table : &empty, options);
  }
  const Expression& to_bind = generator ? *generator->argument : **parsed;
  // window() anywhere in the item: the rows expand first (Spark's
  // TimeWindowing), then the item (a generator too) applies.
  Result<std::unique_ptr<WindowExpansion>> windows =
      WindowExpansion::Make({parsed->get()}, batch->schema, options);
  if (!windows.ok()) return ErrorLine(windows.status());
  columnar::RecordBatchPtr expanded;
  EvalOptions bind_options = options;
  if (*windows != nullptr) {
    Result<columnar::RecordBatchPtr> rows = (*windows)->Expand(*batch, EvalContext{});
    if (!rows.ok()) return ErrorLine(rows.status());
    expanded = std::move(*rows);
    batch = expanded.get();
    bind_options = (*windows)->options();
  }
  BindSession session;
  Result<BoundExpressionPtr> bound = Bind(to_bind, batch->schema, bind_options, &session);
  if (!bound.ok()) return ErrorLine(bound.status());
  Result<columnar::ColumnPtr> value = (*bound)->Evaluate(*batch, EvalContext{});
  if (!value.ok()) return ErrorLine(value.status());
  CastOptions cast_options;
  cast_options.zone = options.session_zone.get();
  JsonWriter w;
  w.BeginObject();
  w.Key("type");
  const columnar::DataType& type = *(*bound)->type();
  if (generator && type.id() != TypeId::kArray) {
    return ErrorLine(Status::NotSupported("generator over ", type.ToDdl(), " in the eval tool"));
  }
  w.String(SimpleTypeString(generator ? *type.element_type() : type));
  const Column* column = value->get();
  std::vector<int64_t> rows;
  if (generator) {
    Generated flat = Flatten(**value, generator->outer);
    column = flat.elements.get();
    rows = std::move(flat.rows);
    *value = flat.elements;
  } else {
    for (int64_t row = 0; row < column->length; ++row) rows.push_back(row);
  }
  auto write_value = [&](int64_t row) {
    if (row < 0 || column->IsNull(row)) {
      w.Null();
    } else {
      std::string rendered;
      AppendHive(*column, row, false, cast_options, &rendered);
      w.String(rendered);
    }
  };
  if (table != nullptr) {
    w.Key("values");
    w.BeginArray();
    for (int64_t row : rows) write_value(row);
    w.EndArray();
  } else {
    w.Key("value");
    write_value(rows.empty() ? -1 : rows.front());
  }
  w.EndObject();
  return w.Take();
}

}  // namespace
}  // namespace silt::expr

int main(int argc, char** argv) {
  using silt::expr::EvalOptions;
  if (argc == 3 && std::string(argv[1]) != "--table") {
    std::fprintf(stderr, "usage: silt_expr_eval [--table FILE] < lines\n");
    return 2;
  }
  std::optional<std::string> table_path;
  if (argc == 3) table_path = argv[2];
  // The input table per session time zone (its cells are read in it).
  std::map<std::string, silt::columnar::RecordBatch> tables;
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    EvalOptions options;
    std::string zone_name = "UTC";
    std::string out;
    while (line.rfind("@", 0) == 0) {
      size_t tab = line.find('\t');
      std::string option = line.substr(1, tab == std::string::npos ? std::string::npos : tab - 1);
      line = tab == std::string::npos ? "" : line.substr(tab + 1);
      if (option == "ansi") {
        options.ansi = true;
      } else if (option.rfind("tz=", 0) == 0) {
        zone_name = option.substr(3);
      } else {
        out = "{\"error\": \"unknown option @" + option + "\"}";
      }
    }
    silt::Result<silt::expr::TimeZonePtr> zone = silt::expr::TimeZone::Load(zone_name);
    if (!zone.ok()) {
      out = silt::expr::ErrorLine(zone.status());
    } else {
      options.session_zone = *zone;
      int64_t now_micros = std::chrono::duration_cast<std::chrono::microseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
      options.session_zone_offset_micros = int64_t{(*zone)->OffsetSecondsAt(now_micros)} * 1000000;
    }
    if (!out.empty()) {
      // An option error.
    } else if (line.rfind("T\t", 0) == 0) {
      if (!table_path) {
        out = "{\"error\": \"no --table given\"}";
      } else {
        auto it = tables.find(zone_name);
        if (it == tables.end()) {
          EvalOptions table_options;
          table_options.session_zone = options.session_zone;
          table_options.session_zone_offset_micros = options.session_zone_offset_micros;
          silt::Result<silt::columnar::RecordBatch> loaded =
              silt::expr::LoadTable(*table_path, table_options);
          if (!loaded.ok()) {
            std::fprintf(stderr, "%s\n", loaded.status().ToString().c_str());
            return 2;
          }
          it = tables.emplace(zone_name, std::move(loaded).MoveValueUnsafe()).first;
        }
        out = silt::expr::EvaluateLine(line.substr(2), &it->second, options);
      }
    } else {
      out = silt::expr::EvaluateLine(line, nullptr, options);
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
  }
  return 0;
}
