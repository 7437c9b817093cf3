// The rules for appending rows to a Delta table, shared by every writer that
// appends (the streaming Delta sink today; MERGE and a dead-letter table
// later):
//
// - Spark's schema enforcement (PlanAppend): columns match the table by name
//   (case-insensitive) in any order; table columns the data lacks are written
//   as nulls, unless they are NOT NULL; new columns and nested struct fields
//   need mergeSchema; a type change is an error (nullability is not one),
//   except data of a narrower type, converted to the column's, and, with
//   mergeSchema on a table with delta.enableTypeWidening, a wider type of
//   the data, which widens the column (schema_evolution.h).
// - A new table's schema is the data's, nullable at every depth, as
//   delta-spark creates it (NewTableLayout).
// - NOT NULL columns are checked on every chunk (AppendWriter::Write).
// - Bloom filters: parquet-mr's per-column write options, resolved against
//   the columns of the data files (ResolveBloomFilters).
//
// Error messages speak of "the query" because the one caller today is a
// streaming query; they are part of silt's user-visible output.
//
// Thread safety: an AppendWriter is used by one thread; the functions are
// pure.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/delta/table.h"
#include "silt/fs/file_system.h"
#include "silt/parquet/file_writer.h"

namespace silt::delta {

// "a INT, b STRING", for messages.
std::string SchemaDdl(const columnar::Schema& schema);

// How the writer's rows map onto the table's columns.
struct AppendLayout {
  // The table schema after the append (grown by mergeSchema).
  columnar::SchemaPtr table_schema;
  // mergeSchema grew the schema: the commit must carry a new metaData.
  bool schema_changed = false;
  // For each table column, the data column that feeds it (-1: the data
  // lacks it; written as nulls).
  std::vector<int> column_order;
  // The data is not already in the table's column order and types.
  bool reorder = false;
  // Table columns that are NOT NULL but nullable in the data: checked per
  // chunk.
  std::vector<int> not_null_columns;
  // The table uses column mapping (name or id mode): table_schema's fields
  // carry their ids and physical names, and the files are written with the
  // physical ones (MakeTableWriter, column_mapping.h).
  bool column_mapping = false;
};

// The layout for a table that does not exist yet: its schema is the data's
// made nullable at every depth (AsNullable, schema_evolution.h), as
// delta-spark creates a table from a query (schema.asNullable). NOT NULL is
// then only ever a property of a table someone created with it (Spark DDL),
// and PlanAppend enforces it there.
AppendLayout NewTableLayout(columnar::SchemaPtr data_schema);

// The layout for appending `data` to a table with schema `table`
// (MergeSchemaForAppend: with `merge_schema` and `type_widening` a wider
// data type widens the column).
// Errors: InvalidArgument naming `table_path` and both schemas, for a type
// change, a new column without `merge_schema`, or a NOT NULL table column
// the data lacks.
Result<AppendLayout> PlanAppend(const columnar::SchemaPtr& table, const columnar::Schema& data,
                                bool merge_schema, const std::string& table_path,
                                bool type_widening = false);

// The columns stored in the data files: `schema` without the partition
// columns (matched by exact name, as spelled in `schema`).
columnar::SchemaPtr DataFileSchema(const columnar::Schema& schema,
                                   const std::vector<std::string>& partition_columns);

// Writes chunks shaped as the data through a layout into a TableWriter.
class AppendWriter {
 public:
  // `batch_id` only names the batch in NOT NULL errors.
  static Result<std::unique_ptr<AppendWriter>> Make(fs::FileSystemPtr fs, std::string table_path,
                                                    AppendLayout layout,
                                                    std::vector<std::string> partition_columns,
                                                    TableWriterOptions options, int64_t batch_id);

  // Errors: InvalidArgument when a NOT NULL column has nulls (nothing of the
  // chunk is written); what TableWriter::Write returns.
  Status Write(const columnar::RecordBatch& batch);
  Result<std::vector<AddFile>> Finish() { return writer_->Finish(); }
  Status Abort() { return writer_->Abort(); }

 private:
  AppendWriter() = default;

  std::string path_;
  AppendLayout layout_;
  int64_t batch_id_ = -1;
  std::unique_ptr<TableWriter> writer_;
};

// parquet-mr's bloom filter options, which Spark hands to the Parquet writer
// from the write options, once parsed from their text: keys
// "parquet.bloom.filter.enabled" (every column: `all`),
// "parquet.bloom.filter.enabled#<column>",
// "parquet.bloom.filter.expected.ndv#<column>" and
// "parquet.bloom.filter.fpp#<column>". Columns are spelled as
// BloomFilterColumn returns them.
struct BloomFilterRequest {
  std::optional<bool> all;
  std::map<std::string, bool> enabled;
  std::map<std::string, int64_t> ndv;
  std::map<std::string, double> fpp;
  // column -> the option key that named it first, for messages.
  std::map<std::string, std::string> key_of;
};

// The option key prefix, "parquet.bloom.filter.".
inline constexpr std::string_view kBloomFilterOptionPrefix = "parquet.bloom.filter.";

// The column `column` (a top-level name, or a nested leaf's dotted Parquet
// path) of an option key, spelled as in `data_schema` (the data files'
// columns). Errors: InvalidArgument starting with `key`, for a partition
// column or a column not in the files.
Result<std::string> BloomFilterColumn(const std::string& column,
                                      const columnar::SchemaPtr& data_schema,
                                      const std::vector<std::string>& partition_columns,
                                      const std::string& key);

// The filters to write, keyed as parquet::WriterOptions::bloom_filters wants
// them. Tuning (ndv, fpp) for a column without a filter is ignored with a
// warning. Errors: InvalidArgument starting with the key that named the
// column, for a boolean or nested column, or a path that is not a Parquet
// leaf able to carry a filter.
Result<std::map<std::string, parquet::BloomFilterOptions>> ResolveBloomFilters(
    const BloomFilterRequest& request, const columnar::SchemaPtr& data_schema);

}  // namespace silt::delta
