// Writes query results (`silt read`, `silt sql`) in one of the output
// formats: `table` (Spark's show()), `csv` (with header), `jsonl` (one
// JSON object per row) — to stdout or a file — or `parquet` (a file;
// --output is required). See value_format.h for the text forms.
//
// Thread safety: one writer per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "silt/base/result.h"
#include "silt/cli/value_format.h"
#include "silt/columnar/column.h"
#include "silt/query/query.h"

namespace silt::cli {

class ResultWriter {
 public:
  // `format`: table, csv, jsonl or parquet. `output_path` empty = stdout.
  // `table_rows`: the row count shown by `table` before "only showing top
  // N rows" (the query may return one more to detect it). `style`: how
  // csv and jsonl print values (value_format.h). Errors: InvalidArgument
  // for parquet without an output path.
  static Result<std::unique_ptr<ResultWriter>> Make(const std::string& format,
                                                    const std::string& output_path,
                                                    int64_t table_rows = INT64_MAX,
                                                    ValueStyle style = ValueStyle::kExact);
  virtual ~ResultWriter() = default;
  virtual Status Begin(const columnar::SchemaPtr& schema) = 0;
  virtual Status Write(const columnar::RecordBatch& batch) = 0;
  virtual Status Finish() = 0;

  // Adapts this writer to a query's output callbacks.
  query::QueryOutput AsQueryOutput() {
    query::QueryOutput out;
    out.begin = [this](const columnar::SchemaPtr& schema) { return Begin(schema); };
    out.batch = [this](const columnar::RecordBatch& batch) { return Write(batch); };
    return out;
  }
};

}  // namespace silt::cli
