#include "silt/stream/sink/delta_sink.h"

#include <algorithm>

#include "silt/base/logging.h"
#include "silt/base/uuid.h"
#include "silt/delta/partition_utils.h"
#include "silt/delta/schema_evolution.h"
#include "silt/delta/table_properties.h"
#include "silt/fs/file_system.h"
#include "silt/parquet/file_writer.h"
#include "silt/stream/maintenance.h"
#include "silt/stream/options_internal.h"

namespace silt::stream {

namespace {

std::string SchemaDdl(const columnar::Schema& schema) {
  std::string out;
  for (const columnar::Field& field : schema.fields()) {
    if (!out.empty()) out += ", ";
    out += field.name + " " + field.type->ToDdl();
  }
  return out;
}

bool IsTablePropertyKey(std::string_view key) {
  return key.size() > 6 && internal::EqualsIgnoreCase(key.substr(0, 6), "delta.");
}

// `column` shaped as `target`: struct fields matched by name (case-
// insensitive), fields the data lacks filled with nulls, at any struct depth
// (mergeSchema may have added nested fields the data does not have).
Result<columnar::ColumnPtr> ConformColumn(const columnar::ColumnPtr& column,
                                          const columnar::TypePtr& target,
                                          const std::string& name) {
  if (column->type->Equals(*target)) return column;
  if (column->type->id() != columnar::TypeId::kStruct ||
      target->id() != columnar::TypeId::kStruct) {
    return Status::InvalidArgument("column '", name, "' is ", column->type->ToDdl(),
                                   " in the query but ", target->ToDdl(), " in the table");
  }
  auto out = std::make_shared<columnar::Column>();
  out->type = target;
  out->length = column->length;
  out->null_count = column->null_count;
  out->validity = column->validity;
  for (const columnar::Field& field : target->fields()) {
    int idx = column->type->FieldIndex(field.name);
    if (idx < 0) {
      out->children.push_back(columnar::MakeNullColumn(field.type, column->length));
      continue;
    }
    SILT_ASSIGN_OR_RETURN(columnar::ColumnPtr child,
                          ConformColumn(column->children[static_cast<size_t>(idx)], field.type,
                                        name + "." + field.name));
    out->children.push_back(std::move(child));
  }
  return columnar::ColumnPtr(std::move(out));
}

// parquet-mr's bloom filter options, which Spark hands to the Parquet
// writer from the write options: "parquet.bloom.filter.enabled" (every
// column), "parquet.bloom.filter.enabled#<column>",
// "parquet.bloom.filter.expected.ndv#<column>" and
// "parquet.bloom.filter.fpp#<column>".
constexpr std::string_view kBloomPrefix = "parquet.bloom.filter.";

bool IsBloomFilterKey(std::string_view key) {
  return key.size() > kBloomPrefix.size() &&
         internal::EqualsIgnoreCase(key.substr(0, kBloomPrefix.size()), kBloomPrefix);
}

// The bloom filters the sink's options ask for, keyed as
// parquet::WriterOptions::bloom_filters wants them: a top-level column of
// the data files (`data_schema`, spelled as there) or a nested leaf's dotted
// Parquet path. Errors: InvalidArgument naming the job-file key, for a
// column that is not in the files (or is a partition column), a boolean or
// nested column, or a malformed value.
Result<std::map<std::string, parquet::BloomFilterOptions>> ParseBloomFilterOptions(
    const std::map<std::string, std::string>& options, const columnar::SchemaPtr& data_schema,
    const std::vector<std::string>& partition_by) {
  internal::OptionReader reader(options, "sink.options");
  std::optional<bool> all;
  std::map<std::string, bool> enabled;
  std::map<std::string, int64_t> ndv;
  std::map<std::string, double> fpp;
  std::map<std::string, std::string> key_of;  // column -> the key that named it
  for (const auto& [key, value] : options) {
    if (!IsBloomFilterKey(key)) continue;
    const std::string_view rest = std::string_view(key).substr(kBloomPrefix.size());
    const size_t hash = rest.find('#');
    const std::string_view option = rest.substr(0, hash);
    if (hash == std::string_view::npos) {
      if (internal::EqualsIgnoreCase(option, "enabled")) {
        SILT_ASSIGN_OR_RETURN(all, reader.GetBool(key));
      } else {
        SILT_LOG_WARN("stream", reader.KeyPath(key), ": option is not used by silt");
      }
      continue;
    }
    const std::string column(rest.substr(hash + 1));
    const std::string top = column.substr(0, column.find('.'));
    for (const std::string& p : partition_by) {
      if (internal::EqualsIgnoreCase(p, top)) {
        return Status::InvalidArgument(reader.KeyPath(key), ": '", top,
                                       "' is a partition column; its values are not stored in "
                                       "the data files");
      }
    }
    const int idx = data_schema->FieldIndex(top);
    if (top.empty() || idx < 0) {
      return Status::InvalidArgument(reader.KeyPath(key), ": no column '", column,
                                     "' in the query's output (", SchemaDdl(*data_schema), ")");
    }
    const columnar::Field& field = data_schema->field(idx);
    const std::string name = field.name + column.substr(top.size());
    if (internal::EqualsIgnoreCase(option, "enabled")) {
      SILT_ASSIGN_OR_RETURN(std::optional<bool> on, reader.GetBool(key));
      enabled[name] = *on;
      key_of[name] = reader.KeyPath(key);
    } else if (internal::EqualsIgnoreCase(option, "expected.ndv")) {
      SILT_ASSIGN_OR_RETURN(std::optional<int64_t> n, reader.GetInt(key, 1));
      ndv[name] = *n;
      key_of.emplace(name, reader.KeyPath(key));
    } else if (internal::EqualsIgnoreCase(option, "fpp")) {
      SILT_ASSIGN_OR_RETURN(std::optional<double> p, reader.GetDouble(key));
      if (!(*p > 0 && *p < 1)) {
        return Status::InvalidArgument(reader.KeyPath(key), ": must be in (0, 1), got ", *p);
      }
      fpp[name] = *p;
      key_of.emplace(name, reader.KeyPath(key));
    } else {
      SILT_LOG_WARN("stream", reader.KeyPath(key), ": option is not used by silt");
    }
  }
  std::map<std::string, parquet::BloomFilterOptions> out;
  if (all.value_or(false)) {
    // Every column that can have one: primitive, not boolean.
    for (const columnar::Field& field : data_schema->fields()) {
      if (field.type->is_nested() || field.type->id() == columnar::TypeId::kBoolean) continue;
      out[field.name] = parquet::BloomFilterOptions();
    }
  }
  for (const auto& [name, on] : enabled) {
    if (on) {
      out[name] = parquet::BloomFilterOptions();
    } else {
      out.erase(name);
    }
  }
  // Tuning for a column without a filter is ignored, with a warning.
  auto tune = [&](const auto& values, auto member) {
    for (const auto& [name, value] : values) {
      auto it = out.find(name);
      if (it == out.end()) {
        SILT_LOG_WARN("stream", key_of[name], ": no effect, no bloom filter is enabled for '", name,
                      "'");
      } else {
        it->second.*member = value;
      }
    }
  };
  tune(ndv, &parquet::BloomFilterOptions::ndv);
  tune(fpp, &parquet::BloomFilterOptions::fpp);
  // The columns named explicitly must be able to carry a filter: checked
  // against the Parquet writer itself (nested leaves, booleans).
  for (const auto& [name, bloom] : out) {
    auto key = key_of.find(name);
    if (key == key_of.end()) continue;  // chosen by "enabled: true"
    const int idx = data_schema->FieldIndex(name.substr(0, name.find('.')));
    const columnar::Field& field = data_schema->field(idx);
    if (field.type->id() == columnar::TypeId::kBoolean) {
      return Status::InvalidArgument(key->second, ": '", name,
                                     "' is boolean; Parquet has no bloom filters for booleans");
    }
    if (name.find('.') == std::string::npos && field.type->is_nested()) {
      return Status::InvalidArgument(key->second, ": '", name, "' is ", field.type->ToDdl(),
                                     "; name one of its leaves by its Parquet path (for example ",
                                     "'a.b', 'l.list.element', 'm.key_value.key')");
    }
    if (name.find('.') != std::string::npos) {
      parquet::WriterOptions trial;
      trial.bloom_filters[name] = bloom;
      auto mem = fs::MakeMemoryFileSystem();
      Result<std::unique_ptr<parquet::ParquetFileWriter>> writer =
          parquet::ParquetFileWriter::Open(mem.get(), "/bloom-check.parquet", data_schema, trial);
      if (!writer.ok()) {
        return Status::InvalidArgument(key->second, ": no Parquet leaf column '", name,
                                       "' that can have a bloom filter");
      }
      SILT_RETURN_NOT_OK((*writer)->Abort());
    }
  }
  return out;
}

}  // namespace

DeltaSink::~DeltaSink() = default;

Result<std::unique_ptr<DeltaSink>> DeltaSink::Make(const SinkSpec& spec,
                                                   columnar::SchemaPtr output_schema,
                                                   std::string query_id, fs::FileSystemPtr fs,
                                                   Clock* clock) {
  if (spec.output_mode == "complete") {
    return Status::NotSupported(
        "sink.outputMode: complete (rewriting the whole table every batch comes with "
        "aggregations in a later issue; use append)");
  }
  if (spec.output_mode != "append") {
    return Status::InvalidArgument("sink.outputMode: '", spec.output_mode,
                                   "' is not supported by the Delta sink (append or complete)");
  }
  if (spec.path.empty()) return Status::InvalidArgument("sink.path: required");
  auto sink = std::unique_ptr<DeltaSink>(new DeltaSink());
  sink->path_ = fs::NormalizePath(spec.path);
  sink->fs_ = fs;
  if (sink->fs_ == nullptr) {
    SILT_ASSIGN_OR_RETURN(sink->fs_, fs::FileSystemForPath(sink->path_));
  }
  sink->clock_ = clock;
  sink->query_id_ = std::move(query_id);
  sink->output_schema_ = std::move(output_schema);

  for (size_t i = 0; i < spec.partition_by.size(); ++i) {
    const std::string& name = spec.partition_by[i];
    int index = sink->output_schema_->FieldIndex(name);
    if (index < 0) {
      return Status::InvalidArgument("sink.partitionBy[", static_cast<int64_t>(i), "]: '", name,
                                     "' is not a column of the query output (",
                                     SchemaDdl(*sink->output_schema_), ")");
    }
    const columnar::Field& field = sink->output_schema_->field(index);
    if (field.type->is_nested()) {
      return Status::InvalidArgument("sink.partitionBy[", static_cast<int64_t>(i), "]: '", name,
                                     "' is ", field.type->ToDdl(),
                                     "; partition columns must be of a primitive type");
    }
    // Partition values are matched by the schema's spelling of the name.
    sink->partition_by_.push_back(field.name);
  }
  if (!sink->partition_by_.empty() &&
      static_cast<int>(sink->partition_by_.size()) >= sink->output_schema_->num_fields()) {
    return Status::InvalidArgument(
        "sink.partitionBy: cannot partition by every column; a Delta table needs at least one "
        "data column");
  }

  internal::OptionReader reader(spec.options, "sink.options");
  std::map<std::string, std::string> non_property_options;
  for (const auto& [key, value] : spec.options) {
    if (!IsTablePropertyKey(key) && !IsBloomFilterKey(key)) non_property_options[key] = value;
  }
  internal::OptionReader(non_property_options, "sink.options")
      .WarnUnknown({"compression", "mergeSchema", "overwriteSchema", "autoCompact",
                    "autoCompact.everyNCommits", "autoCompact.minNumFiles",
                    "autoCompact.maxFileSize"});
  if (std::optional<std::string> codec = reader.Get("compression")) {
    Result<parquet::Compression> compression = parquet::ParseCompression(*codec);
    if (!compression.ok()) {
      return Status::InvalidArgument(reader.KeyPath("compression"), ": ",
                                     compression.status().message());
    }
    sink->writer_options_.parquet.compression = *compression;
  }
  {
    std::vector<columnar::Field> data_fields;
    for (const columnar::Field& field : sink->output_schema_->fields()) {
      if (std::find(sink->partition_by_.begin(), sink->partition_by_.end(), field.name) ==
          sink->partition_by_.end()) {
        data_fields.push_back(field);
      }
    }
    SILT_ASSIGN_OR_RETURN(
        sink->writer_options_.parquet.bloom_filters,
        ParseBloomFilterOptions(spec.options, columnar::DataType::Struct(std::move(data_fields)),
                                sink->partition_by_));
  }
  SILT_ASSIGN_OR_RETURN(std::optional<bool> merge_schema, reader.GetBool("mergeSchema"));
  sink->merge_schema_ = merge_schema.value_or(false);
  SILT_ASSIGN_OR_RETURN(std::optional<bool> overwrite_schema, reader.GetBool("overwriteSchema"));
  if (overwrite_schema.value_or(false)) {
    // As in delta-spark, overwriteSchema only takes effect when a write
    // replaces the table (complete mode); appends ignore it.
    SILT_LOG_WARN("stream", reader.KeyPath("overwriteSchema"),
                  ": ignored for outputMode append (it applies when a write replaces the table)");
  }
  // `delta.*` options are table properties, applied when the sink creates
  // the table (validated now so a typo fails before any data is written).
  std::map<std::string, std::string> properties;
  for (const auto& [key, value] : spec.options) {
    if (IsTablePropertyKey(key)) properties[key] = value;
  }
  Result<delta::TableConfiguration> validated = delta::ValidateTableProperties(properties);
  if (!validated.ok()) {
    return validated.status().WithContextParts("sink.options");
  }
  sink->table_properties_ = std::move(*validated);
  SILT_ASSIGN_OR_RETURN(sink->writer_options_.num_indexed_cols,
                        delta::DataSkippingNumIndexedCols(sink->table_properties_));
  SILT_ASSIGN_OR_RETURN(std::optional<AutoCompactOptions> auto_compact,
                        ParseAutoCompactOptions(spec.options));
  if (auto_compact) {
    sink->auto_compactor_ = std::make_unique<AutoCompactor>(sink->fs_, sink->path_, *auto_compact);
  }
  return sink;
}

std::string DeltaSink::Description() const { return "DeltaSink[" + path_ + "]"; }

Status DeltaSink::CheckTableSchema(const delta::Snapshot& snapshot) {
  const columnar::SchemaPtr& table = snapshot.schema();
  const columnar::Schema& output = *output_schema_;
  // Spark's schema enforcement on append: columns match by name; table
  // columns the query lacks are written as nulls; new columns (also nested
  // struct fields) need mergeSchema; a type change is an error.
  Result<columnar::SchemaPtr> merged = delta::MergeSchemaForAppend(table, output, merge_schema_);
  if (!merged.ok()) {
    return Status::InvalidArgument("the Delta table at ", path_, " has schema (", SchemaDdl(*table),
                                   ") but the query writes (", SchemaDdl(output),
                                   "): ", merged.status().message());
  }
  table_schema_ = *merged;
  schema_changed_ = table_schema_.get() != table.get();
  std::vector<std::string> problems;
  column_order_.clear();
  not_null_columns_.clear();
  reorder_ = false;
  for (int table_idx = 0; table_idx < table_schema_->num_fields(); ++table_idx) {
    const columnar::Field& field = table_schema_->field(table_idx);
    int out_idx = output.FieldIndex(field.name);
    if (out_idx < 0) {
      if (!field.nullable) {
        problems.push_back("column '" + field.name +
                           "' is NOT NULL in the table but missing from the query output");
      }
      column_order_.push_back(-1);
      reorder_ = true;
      continue;
    }
    const columnar::Field& out_field = output.field(out_idx);
    if (!field.nullable && out_field.nullable) not_null_columns_.push_back(table_idx);
    if (out_idx != table_idx || !field.type->Equals(*out_field.type)) reorder_ = true;
    column_order_.push_back(out_idx);
  }
  if (!problems.empty()) {
    std::string detail;
    for (const std::string& p : problems) detail += "; " + p;
    return Status::InvalidArgument("the Delta table at ", path_, " has schema (", SchemaDdl(*table),
                                   ") but the query writes (", SchemaDdl(output), ")", detail);
  }
  if (!partition_by_.empty()) {
    const std::vector<std::string>& existing = snapshot.partition_columns();
    bool same = existing.size() == partition_by_.size();
    for (size_t i = 0; same && i < existing.size(); ++i) {
      same = internal::EqualsIgnoreCase(existing[i], partition_by_[i]);
    }
    if (!same) {
      return Status::InvalidArgument("sink.partitionBy: ", internal::BracketedList(partition_by_),
                                     " differs from the partition columns ",
                                     internal::BracketedList(existing),
                                     " of the existing table at ", path_);
    }
  }
  return Status::OK();
}

Result<bool> DeltaSink::Begin(int64_t batch_id) {
  batch_id_ = batch_id;
  skip_ = false;
  rows_ = 0;
  writer_.reset();
  if (table_ == nullptr) {
    SILT_ASSIGN_OR_RETURN(table_, delta::DeltaTable::Open(fs_, path_));
  }
  bool exists = snapshot_ != nullptr;
  if (exists) {
    // The table's state moves on only by the commits since the last batch
    // (ours, or another writer's): read those, not the whole log.
    SILT_ASSIGN_OR_RETURN(snapshot_, table_->Update(std::move(snapshot_)));
  } else {
    SILT_ASSIGN_OR_RETURN(exists, table_->Exists());
    if (exists) {
      SILT_ASSIGN_OR_RETURN(snapshot_, table_->LatestSnapshot());
    }
  }
  if (exists) {
    // Checked every batch: another writer may have changed the table.
    SILT_RETURN_NOT_OK(CheckTableSchema(*snapshot_));
    std::optional<int64_t> done = snapshot_->TxnVersion(query_id_);
    if (done && *done >= batch_id) {
      SILT_LOG_INFO("stream", "batch ", batch_id, " already in table version ",
                    snapshot_->version(), "; skipping");
      skip_ = true;
      return false;
    }
    partition_columns_ = snapshot_->partition_columns();
    SILT_ASSIGN_OR_RETURN(writer_options_.num_indexed_cols,
                          delta::DataSkippingNumIndexedCols(snapshot_->metadata().configuration));
  } else {
    table_schema_ = output_schema_;
    partition_columns_ = partition_by_;
    column_order_.clear();
    for (int i = 0; i < output_schema_->num_fields(); ++i) column_order_.push_back(i);
    reorder_ = false;
    schema_changed_ = false;
    not_null_columns_.clear();
  }
  SILT_ASSIGN_OR_RETURN(writer_, delta::TableWriter::Make(fs_, path_, table_schema_,
                                                          partition_columns_, writer_options_));
  return true;
}

Status DeltaSink::Write(const columnar::RecordBatch& batch) {
  if (skip_ || batch.num_rows == 0) return Status::OK();
  if (writer_ == nullptr) return Status::Internal("DeltaSink::Write outside a batch");
  for (int table_idx : not_null_columns_) {
    const columnar::Column& column = *batch.column(column_order_[static_cast<size_t>(table_idx)]);
    if (column.null_count > 0) {
      return Status::InvalidArgument("NOT NULL constraint violated for column '",
                                     table_schema_->field(table_idx).name, "' of ", path_, ": ",
                                     column.null_count, " null value(s) in batch ", batch_id_);
    }
  }
  columnar::RecordBatch table_batch;
  table_batch.schema = table_schema_;
  table_batch.num_rows = batch.num_rows;
  table_batch.columns.reserve(column_order_.size());
  for (size_t table_idx = 0; table_idx < column_order_.size(); ++table_idx) {
    int out_idx = column_order_[table_idx];
    const columnar::Field& field = table_schema_->field(static_cast<int>(table_idx));
    if (out_idx < 0) {
      table_batch.columns.push_back(columnar::MakeNullColumn(field.type, batch.num_rows));
    } else if (!reorder_) {
      table_batch.columns.push_back(batch.column(out_idx));
    } else {
      SILT_ASSIGN_OR_RETURN(columnar::ColumnPtr column,
                            ConformColumn(batch.column(out_idx), field.type, field.name));
      table_batch.columns.push_back(std::move(column));
    }
  }
  rows_ += batch.num_rows;
  return writer_->Write(table_batch);
}

Result<SinkBatchResult> DeltaSink::Commit() {
  SinkBatchResult result;
  if (skip_) {
    result.skipped_duplicate = true;
    skip_ = false;
    return result;
  }
  if (writer_ == nullptr) return Status::Internal("DeltaSink::CommitBatch outside a batch");
  SILT_ASSIGN_OR_RETURN(std::vector<delta::AddFile> adds, writer_->Finish());
  writer_.reset();
  const int64_t now_ms = clock_->NowMicros() / 1000;

  delta::CommitRequest request;
  if (snapshot_ == nullptr) {
    delta::Metadata metadata;
    metadata.id = NewUuid();
    metadata.schema = output_schema_;
    metadata.schema_string = columnar::SchemaToJson(*output_schema_);
    metadata.partition_columns = partition_by_;
    metadata.configuration = table_properties_;
    metadata.created_time = now_ms;
    request.new_metadata = std::move(metadata);
    request.new_protocol = delta::Protocol();
  } else if (schema_changed_) {
    // mergeSchema grew the schema: this commit carries the new metaData.
    delta::Metadata metadata = snapshot_->metadata();
    metadata.schema = table_schema_;
    metadata.schema_string = columnar::SchemaToJson(*table_schema_);
    request.new_metadata = std::move(metadata);
  }
  int64_t bytes = 0;
  for (const delta::AddFile& add : adds) bytes += add.size;
  result.files_written = static_cast<int64_t>(adds.size());
  request.adds = adds;
  request.txn = delta::Txn{query_id_, batch_id_, now_ms};
  request.operation = "STREAMING UPDATE";
  request.operation_parameters = {
      {"outputMode", "Append"}, {"queryId", query_id_}, {"epochId", std::to_string(batch_id_)}};
  request.operation_metrics = {{"numAddedFiles", std::to_string(adds.size())},
                               {"numRemovedFiles", "0"},
                               {"numOutputRows", std::to_string(rows_)},
                               {"numOutputBytes", std::to_string(bytes)}};
  request.is_blind_append = true;
  Result<delta::CommitResult> committed = delta::Commit(table_.get(), snapshot_, request);
  if (!committed.ok()) return committed.status();
  if (committed->skipped_duplicate) {
    // Another run of this query committed the batch between our snapshot and
    // our commit; the files written here are not referenced by the table.
    SILT_LOG_INFO("stream", "batch ", batch_id_, " already in table version ", committed->version,
                  "; skipping");
    for (const delta::AddFile& add : adds) {
      Result<std::string> file = delta::ResolveDataFilePath(path_, add.path);
      if (file.ok()) fs_->DeleteFile(*file).IgnoreError("orphan data file cleanup");
    }
    result.skipped_duplicate = true;
    return result;
  }
  result.table_version = committed->version;
  if (auto_compactor_ != nullptr) auto_compactor_->OnCommit();
  result.rows_written = rows_;
  return result;
}

void DeltaSink::Abort() {
  if (writer_ != nullptr) {
    writer_->Abort().IgnoreError("data files of a failed batch are never committed");
    writer_.reset();
  }
  skip_ = false;
}

}  // namespace silt::stream
