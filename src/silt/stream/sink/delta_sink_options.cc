// DeltaSink::Make (delta_sink.h): the sink spec and its options read and
// checked against the query's output and, when the table exists, against
// the table, before the query writes anything.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "silt/base/logging.h"
#include "silt/delta/table_properties.h"
#include "silt/fs/file_system.h"
#include "silt/stream/maintenance.h"
#include "silt/stream/options_internal.h"
#include "silt/stream/sink/delta_sink_columns_internal.h"

namespace silt::stream {

namespace {

bool IsTablePropertyKey(std::string_view key) {
  return key.size() > 6 && internal::EqualsIgnoreCase(key.substr(0, 6), "delta.");
}

bool IsBloomFilterKey(std::string_view key) {
  constexpr std::string_view kBloomPrefix = delta::kBloomFilterOptionPrefix;
  return key.size() > kBloomPrefix.size() &&
         internal::EqualsIgnoreCase(key.substr(0, kBloomPrefix.size()), kBloomPrefix);
}

// The bloom filters the sink's options ask for (delta/append_writer.h's
// BloomFilterRequest, read from the option texts). Errors: InvalidArgument
// naming the job-file key, for a malformed value or a column that cannot
// have a filter.
Result<std::map<std::string, parquet::BloomFilterOptions>> ParseBloomFilterOptions(
    const std::map<std::string, std::string>& options, const columnar::SchemaPtr& data_schema,
    const std::vector<std::string>& partition_by) {
  constexpr std::string_view kBloomPrefix = delta::kBloomFilterOptionPrefix;
  internal::OptionReader reader(options, "sink.options");
  delta::BloomFilterRequest request;
  for (const auto& [key, value] : options) {
    if (!IsBloomFilterKey(key)) continue;
    const std::string_view rest = std::string_view(key).substr(kBloomPrefix.size());
    const size_t hash = rest.find('#');
    const std::string_view option = rest.substr(0, hash);
    if (hash == std::string_view::npos) {
      if (internal::EqualsIgnoreCase(option, "enabled")) {
        SILT_ASSIGN_OR_RETURN(request.all, reader.GetBool(key));
      } else {
        SILT_LOG_WARN("stream", reader.KeyPath(key), ": option is not used by silt");
      }
      continue;
    }
    SILT_ASSIGN_OR_RETURN(const std::string name,
                          delta::BloomFilterColumn(std::string(rest.substr(hash + 1)), data_schema,
                                                   partition_by, reader.KeyPath(key)));
    if (internal::EqualsIgnoreCase(option, "enabled")) {
      SILT_ASSIGN_OR_RETURN(std::optional<bool> on, reader.GetBool(key));
      request.enabled[name] = *on;
      request.key_of[name] = reader.KeyPath(key);
    } else if (internal::EqualsIgnoreCase(option, "expected.ndv")) {
      SILT_ASSIGN_OR_RETURN(std::optional<int64_t> n, reader.GetInt(key, 1));
      request.ndv[name] = *n;
      request.key_of.emplace(name, reader.KeyPath(key));
    } else if (internal::EqualsIgnoreCase(option, "fpp")) {
      SILT_ASSIGN_OR_RETURN(std::optional<double> p, reader.GetDouble(key));
      if (!(*p > 0 && *p < 1)) {
        return Status::InvalidArgument(reader.KeyPath(key), ": must be in (0, 1), got ", *p);
      }
      request.fpp[name] = *p;
      request.key_of.emplace(name, reader.KeyPath(key));
    } else {
      SILT_LOG_WARN("stream", reader.KeyPath(key), ": option is not used by silt");
    }
  }
  return delta::ResolveBloomFilters(request, data_schema);
}

}  // namespace

Result<std::unique_ptr<DeltaSink>> DeltaSink::Make(const SinkSpec& spec,
                                                   columnar::SchemaPtr output_schema,
                                                   std::string query_id, fs::FileSystemPtr fs,
                                                   Clock* clock, const expr::EvalOptions& eval) {
  if (spec.output_mode == "update") {
    // delta-spark refuses it ("Data source delta does not support Update
    // output mode"); upserting by the group keys is a later step.
    return Status::InvalidArgument(
        "sink.outputMode: update mode on a Delta sink is not supported yet (use append, or "
        "complete to rewrite the table every batch)");
  }
  if (spec.output_mode != "append" && spec.output_mode != "complete") {
    return Status::InvalidArgument("sink.outputMode: '", spec.output_mode,
                                   "' is not supported by the Delta sink (append or complete)");
  }
  if (spec.path.empty()) return Status::InvalidArgument("sink.path: required");
  auto sink = std::unique_ptr<DeltaSink>(new DeltaSink());
  sink->complete_ = spec.output_mode == "complete";
  sink->path_ = fs::NormalizePath(spec.path);
  sink->fs_ = fs;
  if (sink->fs_ == nullptr) {
    SILT_ASSIGN_OR_RETURN(sink->fs_, fs::FileSystemForPath(sink->path_));
  }
  sink->clock_ = clock;
  sink->query_id_ = std::move(query_id);
  sink->output_schema_ = std::move(output_schema);
  sink->write_schema_ = sink->output_schema_;
  sink->eval_ = eval;
  sink->generated_spec_ = spec.generated_columns;
  for (const auto& [name, text] : spec.identity_columns) {
    Result<delta::IdentityColumn> identity = delta::ParseIdentityDefinition(name, text);
    if (!identity.ok()) {
      return Status::InvalidArgument(spec.key_path, ".identityColumns.", name, ": ",
                                     identity.status().message());
    }
    sink->identity_spec_.push_back(std::move(*identity));
  }

  for (size_t i = 0; i < spec.partition_by.size(); ++i) {
    const std::string& name = spec.partition_by[i];
    int index = sink->output_schema_->FieldIndex(name);
    if (index < 0) {
      // A generated or identity column the sink computes (its type is
      // checked once the expressions are bound, below).
      const std::string* computed = nullptr;
      for (const auto& [column, expression] : sink->generated_spec_) {
        if (internal::EqualsIgnoreCase(column, name)) computed = &column;
      }
      for (const delta::IdentityColumn& id : sink->identity_spec_) {
        if (internal::EqualsIgnoreCase(id.name, name)) computed = &id.name;
      }
      if (computed != nullptr) {
        sink->partition_by_.push_back(*computed);
        continue;
      }
      return Status::InvalidArgument("sink.partitionBy[", static_cast<int64_t>(i), "]: '", name,
                                     "' is not a column of the query output (",
                                     delta::SchemaDdl(*sink->output_schema_), ")");
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
  size_t computed_columns = 0;  // generated and identity columns the query lacks
  for (const auto& [column, expression] : spec.generated_columns) {
    if (sink->output_schema_->FieldIndex(column) < 0) ++computed_columns;
  }
  for (const delta::IdentityColumn& id : sink->identity_spec_) {
    if (sink->output_schema_->FieldIndex(id.name) < 0) ++computed_columns;
  }
  if (!sink->partition_by_.empty() &&
      sink->partition_by_.size() >=
          static_cast<size_t>(sink->output_schema_->num_fields()) + computed_columns) {
    return Status::InvalidArgument(
        "sink.partitionBy: cannot partition by every column; a Delta table needs at least one "
        "data column");
  }

  for (size_t i = 0; i < spec.cluster_by.size(); ++i) {
    const std::string& name = spec.cluster_by[i];
    int index = sink->output_schema_->FieldIndex(name);
    if (index < 0) {
      return Status::InvalidArgument("sink.clusterBy[", static_cast<int64_t>(i), "]: '", name,
                                     "' is not a column of the query output (",
                                     delta::SchemaDdl(*sink->output_schema_), ")");
    }
    // Statistics are kept for the first dataSkippingNumIndexedCols columns;
    // delta-spark requires clustering columns among them (checked below).
    sink->cluster_by_.push_back(sink->output_schema_->field(index).name);
  }
  if (!sink->cluster_by_.empty() && !sink->partition_by_.empty()) {
    return Status::InvalidArgument(
        "sink.clusterBy: a Delta table is either partitioned or clustered (drop partitionBy)");
  }

  internal::OptionReader reader(spec.options, "sink.options");
  std::map<std::string, std::string> non_property_options;
  for (const auto& [key, value] : spec.options) {
    if (!IsTablePropertyKey(key) && !IsBloomFilterKey(key)) non_property_options[key] = value;
  }
  // delta-spark's writer options (DeltaOptions) for a streaming append.
  SILT_RETURN_NOT_OK(
      internal::OptionReader(non_property_options, "sink.options")
          .CheckNames({
              .what = "Delta sink",
              .honoured = {"compression", "mergeSchema", "overwriteSchema", "autoCompact",
                           "autoCompact.everyNCommits", "autoCompact.minNumFiles",
                           "autoCompact.maxFileSize", "autoCompact.minFileSize"},
              // File sizing only: the rows written are the same.
              .inert = {"maxRecordsPerFile", "optimizeWrite"},
              .unsupported = {{"userMetadata", ""},
                              {"txnAppId", ""},
                              {"txnVersion", ""},
                              {"dataChange", "true"},
                              {"replaceWhere", ""},
                              {"partitionOverwriteMode", ""},
                              {"path", ""},
                              {"checkpointLocation", ""}},
          }));
  if (std::optional<std::string> codec = reader.Get("compression")) {
    Result<parquet::Compression> compression = parquet::ParseCompression(*codec);
    if (!compression.ok()) {
      return Status::InvalidArgument(reader.KeyPath("compression"), ": ",
                                     compression.status().message());
    }
    sink->writer_options_.parquet.compression = *compression;
  }
  SILT_ASSIGN_OR_RETURN(
      sink->writer_options_.parquet.bloom_filters,
      ParseBloomFilterOptions(spec.options,
                              delta::DataFileSchema(*sink->output_schema_, sink->partition_by_),
                              sink->partition_by_));
  SILT_ASSIGN_OR_RETURN(std::optional<bool> merge_schema, reader.GetBool("mergeSchema"));
  sink->merge_schema_ = merge_schema.value_or(false);
  SILT_ASSIGN_OR_RETURN(std::optional<bool> overwrite_schema, reader.GetBool("overwriteSchema"));
  // As in delta-spark, overwriteSchema only takes effect when a write
  // replaces the table (complete mode); appends ignore it.
  sink->overwrite_schema_ = sink->complete_ && overwrite_schema.value_or(false);
  if (overwrite_schema.value_or(false) && !sink->complete_) {
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
  for (const std::string& column : sink->cluster_by_) {
    const int index = sink->output_schema_->FieldIndex(column);
    const int indexed = sink->writer_options_.num_indexed_cols;
    if (indexed >= 0 && index >= indexed) {
      return Status::InvalidArgument("sink.clusterBy: column '", column, "' is column ", index + 1,
                                     " of the output, past the ", indexed,
                                     " columns that get statistics "
                                     "(delta.dataSkippingNumIndexedCols); clustering columns "
                                     "need statistics");
    }
  }
  SILT_ASSIGN_OR_RETURN(std::optional<delta::AutoCompactOptions> auto_compact,
                        ParseAutoCompactOptions(spec.options));
  if (auto_compact && sink->complete_) {
    // Every batch rewrites the whole table, so there is nothing to compact,
    // and a compaction committed between a batch's snapshot and its commit
    // would make the batch conflict.
    SILT_LOG_WARN("stream",
                  "sink.options.autoCompact: ignored for outputMode complete (every "
                  "batch rewrites the table)");
  } else if (auto_compact) {
    sink->auto_compactor_ =
        std::make_unique<delta::AutoCompactor>(sink->fs_, sink->path_, *auto_compact);
  }
  // A query whose columns or partitioning do not fit an existing table is a
  // bad job: say so now, before the query creates its checkpoint (each
  // batch checks again, for another writer's changes).
  SILT_ASSIGN_OR_RETURN(sink->table_, delta::DeltaTable::Open(sink->fs_, sink->path_));
  // Appends only: between V2 checkpoints the sink's state holds the files
  // added since the last one, not the whole table (decision 135). Not with
  // autoCompact, whose commits would make it re-read the table.
  sink->table_->set_elide_checkpointed_files(!sink->complete_ && sink->auto_compactor_ == nullptr);
  // The checkpoint every delta.checkpointInterval batches is written off the
  // commit path, so the batch after it does not wait (decision 152).
  sink->table_->set_background_checkpoints(true);
  SILT_ASSIGN_OR_RETURN(bool exists, sink->table_->Exists());
  if (exists) {
    SILT_ASSIGN_OR_RETURN(sink->snapshot_, sink->table_->LatestSnapshot());
    SILT_RETURN_NOT_OK(sink->CheckTableSchema(*sink->snapshot_));
    if (!spec.generated_columns.empty() || !spec.identity_columns.empty()) {
      SILT_LOG_WARN("stream", spec.key_path,
                    ".generatedColumns/identityColumns: ignored, the table exists (its own "
                    "generated and identity columns apply)");
    }
  } else {
    // Bind the spec's expressions now: a bad one is a bad job.
    SILT_RETURN_NOT_OK(sink->PlanColumns(nullptr));
    SILT_ASSIGN_OR_RETURN(columnar::SchemaPtr table_schema, sink->NewTableSchema());
    for (const std::string& name : sink->partition_by_) {
      const columnar::Field& field = table_schema->field(table_schema->FieldIndex(name));
      if (field.type->is_nested()) {
        return Status::InvalidArgument("sink.partitionBy: '", name, "' is ", field.type->ToDdl(),
                                       "; partition columns must be of a primitive type");
      }
    }
  }
  return sink;
}

}  // namespace silt::stream
