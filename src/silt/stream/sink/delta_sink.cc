#include "silt/stream/sink/delta_sink.h"

#include <algorithm>
#include <atomic>

#include "silt/base/logging.h"
#include "silt/base/uuid.h"
#include "silt/columnar/builder.h"
#include "silt/delta/clustering.h"
#include "silt/delta/column_mapping.h"
#include "silt/delta/constraints.h"
#include "silt/delta/partition_utils.h"
#include "silt/delta/protocol.h"
#include "silt/delta/replace_all.h"
#include "silt/delta/schema_evolution.h"
#include "silt/delta/table_properties.h"
#include "silt/delta/table_root.h"
#include "silt/delta/type_widening.h"
#include "silt/dml/write_rules.h"
#include "silt/expr/expression.h"
#include "silt/expr/parse/ast.h"
#include "silt/fs/file_system.h"
#include "silt/stream/maintenance.h"
#include "silt/stream/options_internal.h"

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

bool HasTimestampNtz(const columnar::DataType& type) {
  switch (type.id()) {
    case columnar::TypeId::kTimestampNtz: return true;
    case columnar::TypeId::kArray: return HasTimestampNtz(*type.element_type());
    case columnar::TypeId::kMap:
      return HasTimestampNtz(*type.key_type()) || HasTimestampNtz(*type.value_type());
    case columnar::TypeId::kStruct:
      for (const columnar::Field& field : type.fields()) {
        if (HasTimestampNtz(*field.type)) return true;
      }
      return false;
    default: return false;
  }
}

using expr::BindText;

}  // namespace

struct DeltaSink::ColumnPlan {
  struct Generated {
    std::string name;        // as the table spells it
    std::string expression;  // delta.generationExpression
    columnar::TypePtr type;  // the table column's type
    int output_index = -1;   // the query's column, or -1: computed
  };
  struct Identity {
    delta::IdentityColumn column;
    int output_index = -1;  // the query's column (BY DEFAULT), or -1: generated
    int64_t first_k = 0;    // k of the first value after the high-water mark
  };
  std::vector<Generated> generated;
  std::vector<Identity> identity;
  columnar::SchemaPtr output_schema;
  // output_schema's columns, the computed generated columns, the generated
  // identity columns.
  columnar::SchemaPtr write_schema;
  std::string table_path;
};

// The next k (value start + k * step) of each identity column, shared by
// the batch's writers: each chunk takes a range.
struct DeltaSink::IdentityCounters {
  explicit IdentityCounters(const ColumnPlan& plan) : next(plan.identity.size()) {
    for (size_t i = 0; i < plan.identity.size(); ++i) next[i].store(plan.identity[i].first_k);
  }
  std::vector<std::atomic<int64_t>> next;
};

class DeltaSink::ColumnFiller {
 public:
  static Result<std::unique_ptr<ColumnFiller>> Make(std::shared_ptr<const ColumnPlan> plan,
                                                    const expr::EvalOptions& eval,
                                                    IdentityCounters* counters, int64_t batch_id) {
    std::unique_ptr<ColumnFiller> filler(new ColumnFiller());
    filler->plan_ = plan;
    filler->counters_ = counters;
    filler->batch_id_ = batch_id;
    const columnar::SchemaPtr& schema = plan->output_schema;
    for (size_t i = 0; i < plan->generated.size(); ++i) {
      const ColumnPlan::Generated& g = plan->generated[i];
      auto context = [&](const Status& st) {
        return Status::InvalidArgument("generated column '", g.name, "' of Delta table ",
                                       plan->table_path, " (", g.expression, "): ", st.message());
      };
      if (g.output_index < 0) {
        Result<expr::BoundExpressionPtr> bound = BindText(g.expression, schema, eval);
        if (bound.ok() && !(*bound)->type()->Equals(*g.type)) {
          bound = BindText("CAST((" + g.expression + ") AS " + g.type->ToDdl() + ")", schema, eval);
        }
        if (!bound.ok()) return context(bound.status());
        filler->compute_.push_back(std::move(*bound));
        continue;
      }
      Check check;
      check.generated = i;
      const std::string column = expr::BackquoteIdentifier(schema->field(g.output_index).name);
      Result<expr::BoundExpressionPtr> equal =
          BindText("(" + column + ") <=> (" + g.expression + ")", schema, eval);
      if (!equal.ok()) return context(equal.status());
      check.equal = std::move(*equal);
      Result<expr::BoundExpressionPtr> given =
          BindText("CAST(" + column + " AS STRING)", schema, eval);
      Result<expr::BoundExpressionPtr> expected =
          BindText("CAST((" + g.expression + ") AS STRING)", schema, eval);
      if (!given.ok()) return context(given.status());
      if (!expected.ok()) return context(expected.status());
      check.given = std::move(*given);
      check.expected = std::move(*expected);
      filler->checks_.push_back(std::move(check));
    }
    return filler;
  }

  // `batch` (the query's rows) with the computed columns appended, shaped
  // as plan.write_schema. Errors: InvalidArgument with Spark's error class
  // for a generated value that differs from its expression or an identity
  // value that overflows.
  Result<columnar::RecordBatch> Apply(const columnar::RecordBatch& batch) {
    const expr::EvalContext ctx;
    for (Check& check : checks_) {
      SILT_ASSIGN_OR_RETURN(columnar::ColumnPtr equal, check.equal->Evaluate(batch, ctx));
      for (int64_t row = 0; row < equal->length; ++row) {
        if (!equal->IsNull(row) && equal->BoolValue(row)) continue;
        const ColumnPlan::Generated& g = plan_->generated[check.generated];
        SILT_ASSIGN_OR_RETURN(columnar::ColumnPtr given, check.given->Evaluate(batch, ctx));
        SILT_ASSIGN_OR_RETURN(columnar::ColumnPtr expected, check.expected->Evaluate(batch, ctx));
        auto text = [row](const columnar::Column& c) {
          return c.IsNull(row) ? std::string("NULL") : std::string(c.StringValue(row));
        };
        return Status::InvalidArgument(
            "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES: CHECK constraint Generated Column (", g.name,
            " <=> ", g.expression, ") of Delta table ", plan_->table_path, " violated by row ", row,
            " of batch ", batch_id_, ": ", g.name, " = ", text(*given), ", the expression gives ",
            text(*expected));
      }
    }
    columnar::RecordBatch out;
    out.schema = plan_->write_schema;
    out.num_rows = batch.num_rows;
    out.columns = batch.columns;
    for (expr::BoundExpressionPtr& compute : compute_) {
      SILT_ASSIGN_OR_RETURN(columnar::ColumnPtr column, compute->Evaluate(batch, ctx));
      out.columns.push_back(std::move(column));
    }
    for (size_t i = 0; i < plan_->identity.size(); ++i) {
      const ColumnPlan::Identity& id = plan_->identity[i];
      if (id.output_index >= 0) continue;
      const int64_t first = counters_->next[i].fetch_add(batch.num_rows);
      columnar::ColumnBuilder values(columnar::DataType::Long());
      values.Reserve(batch.num_rows);
      for (int64_t row = 0; row < batch.num_rows; ++row) {
        int64_t value = 0;
        if (__builtin_mul_overflow(first + row, id.column.step, &value) ||
            __builtin_add_overflow(value, id.column.start, &value)) {
          return Status::InvalidArgument("DELTA_IDENTITY_COLUMNS_VALUE_OVERFLOW: identity column '",
                                         id.column.name, "' of Delta table ", plan_->table_path,
                                         " ran out of BIGINT values (start ", id.column.start,
                                         ", step ", id.column.step, ")");
        }
        values.Append<int64_t>(value);
      }
      out.columns.push_back(values.Finish());
    }
    return out;
  }

 private:
  ColumnFiller() = default;
  struct Check {
    size_t generated = 0;
    expr::BoundExpressionPtr equal;     // column <=> expression
    expr::BoundExpressionPtr given;     // the column as text, for the error
    expr::BoundExpressionPtr expected;  // the expression as text
  };
  std::shared_ptr<const ColumnPlan> plan_;
  IdentityCounters* counters_ = nullptr;
  int64_t batch_id_ = -1;
  std::vector<expr::BoundExpressionPtr> compute_;
  std::vector<Check> checks_;
};

DeltaSink::~DeltaSink() = default;

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

std::string DeltaSink::Description() const { return "DeltaSink[" + path_ + "]"; }

Status DeltaSink::CheckTableSchema(const delta::Snapshot& snapshot) {
  if (overwrite_schema_) {
    // Complete mode with overwriteSchema (delta-spark's
    // ImplicitMetadataOperation): the batch replaces the table's schema and
    // partitioning with the query's, so any difference is allowed.
    column_plan_.reset();
    write_schema_ = output_schema_;
    layout_ = delta::NewTableLayout(output_schema_);
    const std::vector<std::string>& existing = snapshot.partition_columns();
    bool same_partitioning = existing.size() == partition_by_.size();
    for (size_t i = 0; same_partitioning && i < existing.size(); ++i) {
      same_partitioning = existing[i] == partition_by_[i];
    }
    layout_.schema_changed =
        !same_partitioning || snapshot.schema() == nullptr ||
        columnar::SchemaToJson(*snapshot.schema()) != columnar::SchemaToJson(*layout_.table_schema);
    return Status::OK();
  }
  SILT_RETURN_NOT_OK(PlanColumns(snapshot.schema().get()));
  // delta-spark's DeltaSink: mergeSchema on a table with type widening
  // enabled widens a column to a wider type of the query's.
  bool type_widening = false;
  if (merge_schema_) {
    SILT_ASSIGN_OR_RETURN(type_widening,
                          delta::TypeWideningEnabled(snapshot.protocol(), snapshot.metadata()));
  }
  SILT_ASSIGN_OR_RETURN(layout_, delta::PlanAppend(snapshot.schema(), *write_schema_, merge_schema_,
                                                   path_, type_widening));
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

Status DeltaSink::PlanColumns(const columnar::Schema* table) {
  auto plan = std::make_shared<ColumnPlan>();
  plan->output_schema = output_schema_;
  plan->table_path = path_;
  if (table != nullptr) {
    SILT_ASSIGN_OR_RETURN(std::vector<delta::GeneratedColumn> generated,
                          delta::GeneratedColumns(*table));
    for (delta::GeneratedColumn& g : generated) {
      ColumnPlan::Generated column;
      column.type = table->field(table->FieldIndex(g.name)).type;
      column.name = std::move(g.name);
      column.expression = std::move(g.expression);
      plan->generated.push_back(std::move(column));
    }
    SILT_ASSIGN_OR_RETURN(std::vector<delta::IdentityColumn> identity,
                          delta::IdentityColumns(*table));
    for (delta::IdentityColumn& id : identity) {
      plan->identity.push_back(ColumnPlan::Identity{std::move(id), -1, 0});
    }
  } else {
    for (const auto& [name, expression] : generated_spec_) {
      ColumnPlan::Generated column;
      column.name = name;
      column.expression = expression;
      const int index = output_schema_->FieldIndex(name);
      if (index >= 0) {
        column.type = output_schema_->field(index).type;
      } else {
        Result<expr::BoundExpressionPtr> bound = BindText(expression, output_schema_, eval_);
        if (!bound.ok()) {
          return Status::InvalidArgument("sink.generatedColumns.", name, ": ",
                                         bound.status().message());
        }
        column.type = (*bound)->type();
      }
      plan->generated.push_back(std::move(column));
    }
    for (const delta::IdentityColumn& id : identity_spec_) {
      plan->identity.push_back(ColumnPlan::Identity{id, -1, 0});
    }
  }
  if (plan->generated.empty() && plan->identity.empty()) {
    column_plan_.reset();
    write_schema_ = output_schema_;
    return Status::OK();
  }
  std::vector<columnar::Field> fields = output_schema_->fields();
  for (ColumnPlan::Generated& g : plan->generated) {
    g.output_index = output_schema_->FieldIndex(g.name);
    if (g.output_index < 0) fields.push_back(columnar::Field{g.name, g.type, true, "{}"});
  }
  for (ColumnPlan::Identity& id : plan->identity) {
    id.output_index = output_schema_->FieldIndex(id.column.name);
    if (id.output_index >= 0 && !id.column.allow_explicit_insert) {
      return Status::InvalidArgument(
          "DELTA_IDENTITY_COLUMNS_EXPLICIT_INSERT_NOT_SUPPORTED: the query provides values for "
          "column '",
          id.column.name, "' of Delta table ", path_,
          ", which is GENERATED ALWAYS AS IDENTITY (drop it from the query's output)");
    }
    if (id.output_index >= 0) continue;
    fields.push_back(columnar::Field{id.column.name, columnar::DataType::Long(), true, "{}"});
    // The first value after the high-water mark: values are start + k *
    // step, beyond the mark in the step's direction.
    const delta::IdentityColumn& c = id.column;
    if (c.high_water_mark) {
      const __int128 distance = static_cast<__int128>(*c.high_water_mark) - c.start;
      const __int128 k = distance / c.step;
      id.first_k = k < 0 ? 0 : static_cast<int64_t>(k) + 1;
    }
  }
  plan->write_schema = columnar::DataType::Struct(std::move(fields));
  // Binds every expression once, so a bad one fails before any data.
  IdentityCounters counters(*plan);
  SILT_RETURN_NOT_OK(ColumnFiller::Make(plan, eval_, &counters, -1).status());
  write_schema_ = plan->write_schema;
  column_plan_ = std::move(plan);
  return Status::OK();
}

Result<columnar::SchemaPtr> DeltaSink::NewTableSchema() const {
  if (column_plan_ == nullptr) return delta::AsNullable(output_schema_);
  std::vector<columnar::Field> fields;
  auto add_identity = [&](const ColumnPlan::Identity& id, columnar::Field field) -> Status {
    field.type = columnar::DataType::Long();
    SILT_ASSIGN_OR_RETURN(field, delta::WithIdentity(field, id.column.start, id.column.step,
                                                     id.column.allow_explicit_insert));
    fields.push_back(std::move(field));
    return Status::OK();
  };
  for (const ColumnPlan::Identity& id : column_plan_->identity) {
    if (id.output_index < 0) {
      SILT_RETURN_NOT_OK(add_identity(id, columnar::Field{id.column.name, nullptr, true, "{}"}));
    }
  }
  for (int i = 0; i < output_schema_->num_fields(); ++i) {
    columnar::Field field = output_schema_->field(i);
    bool done = false;
    for (const ColumnPlan::Identity& id : column_plan_->identity) {
      if (id.output_index == i) {
        SILT_RETURN_NOT_OK(add_identity(id, field));
        done = true;
      }
    }
    if (done) continue;
    for (const ColumnPlan::Generated& g : column_plan_->generated) {
      if (g.output_index == i) {
        SILT_ASSIGN_OR_RETURN(field, delta::WithGenerationExpression(field, g.expression));
      }
    }
    fields.push_back(std::move(field));
  }
  for (const ColumnPlan::Generated& g : column_plan_->generated) {
    if (g.output_index >= 0) continue;
    SILT_ASSIGN_OR_RETURN(
        columnar::Field field,
        delta::WithGenerationExpression(columnar::Field{g.name, g.type, true, "{}"}, g.expression));
    fields.push_back(std::move(field));
  }
  return delta::AsNullable(columnar::DataType::Struct(std::move(fields)));
}

Status DeltaSink::ApplyColumnMapping(const delta::Snapshot* snapshot) {
  max_column_id_.reset();
  const delta::TableConfiguration& configuration =
      snapshot != nullptr ? snapshot->metadata().configuration : table_properties_;
  SILT_ASSIGN_OR_RETURN_CTX(delta::ColumnMappingMode mode,
                            delta::ColumnMappingModeOf(configuration), "Delta table ", path_);
  layout_.column_mapping = mode != delta::ColumnMappingMode::kNone;
  if (!layout_.column_mapping) return Status::OK();
  int64_t max_id = 0;
  if (snapshot != nullptr) {
    SILT_ASSIGN_OR_RETURN_CTX(max_id, delta::MaxColumnIdInUse(configuration, *snapshot->schema()),
                              "Delta table ", path_);
  }
  const int64_t before = max_id;
  SILT_ASSIGN_OR_RETURN_CTX(
      columnar::SchemaPtr mapped,
      delta::AssignColumnMapping(layout_.table_schema,
                                 snapshot != nullptr ? snapshot->schema().get() : nullptr, &max_id),
      "Delta table ", path_);
  if (mapped != layout_.table_schema) {
    layout_.table_schema = std::move(mapped);
    layout_.schema_changed = true;
  }
  if (max_id != before) max_column_id_ = max_id;
  return Status::OK();
}

Result<std::unique_ptr<DeltaSink::ColumnFiller>> DeltaSink::MakeFiller() {
  if (column_plan_ == nullptr) return std::unique_ptr<ColumnFiller>();
  return ColumnFiller::Make(column_plan_, eval_, identity_counters_.get(), batch_id_);
}

// Checked on the rows as handed to the AppendWriter (after the filler), as
// delta-spark checks the rows it writes.
struct DeltaSink::Constraints {
  std::vector<dml::RowCheck> checks;
  std::string where;
  Status Check(const columnar::RecordBatch& batch) {
    for (dml::RowCheck& check : checks) SILT_RETURN_NOT_OK(dml::CheckRows(&check, batch, where));
    return Status::OK();
  }
};

Result<std::unique_ptr<DeltaSink::Constraints>> DeltaSink::MakeConstraints() const {
  if (snapshot_ == nullptr) return std::unique_ptr<Constraints>();
  SILT_ASSIGN_OR_RETURN(std::vector<delta::Constraint> constraints,
                        delta::TableConstraints(snapshot_->metadata()));
  if (constraints.empty()) return std::unique_ptr<Constraints>();
  auto out = std::make_unique<Constraints>();
  out->where = Status::Concat("Delta table ", path_, ", batch ", batch_id_);
  for (const delta::Constraint& c : constraints) {
    SILT_ASSIGN_OR_RETURN_CTX(dml::RowCheck check,
                              dml::MakeRowCheck(c.name, c.expression, write_schema_, eval_, ""),
                              "Delta table ", path_);
    out->checks.push_back(std::move(check));
  }
  return out;
}

Status CheckTableHoldsCommitted(delta::DeltaTable* table, const std::string& query_id,
                                int64_t last_committed) {
  SILT_ASSIGN_OR_RETURN(bool exists, table->Exists());
  if (!exists) {
    return Status::Corruption(
        "the checkpoint records batches up to ", last_committed, " as committed, but the table ",
        table->path(),
        " does not exist: their rows would be missing. Restore the table, or start the query "
        "with a new checkpoint to write it anew");
  }
  SILT_ASSIGN_OR_RETURN(delta::SnapshotPtr snapshot, table->LatestSnapshot());
  // With a txn retention, delta-spark and silt drop old txn entries: the
  // table can no longer tell, so the checkpoint is trusted.
  if (snapshot->metadata().configuration.count("delta.setTransactionRetentionDuration")) {
    return Status::OK();
  }
  std::optional<int64_t> held = snapshot->TxnVersion(query_id);
  if (held && *held >= last_committed) return Status::OK();
  return Status::Corruption(
      "the checkpoint records batches up to ", last_committed, " as committed, but the table ",
      table->path(), " (version ", snapshot->version(), ") holds ",
      held ? "batches of this query only up to " + std::to_string(*held)
           : std::string("no batch of this query"),
      " (txn appId ", query_id,
      "): a commit file lost or emptied? Their rows would be missing. Restore the table's log, "
      "or start the query with a new checkpoint");
}

void DeltaSink::DeleteDataFiles(const std::vector<delta::AddFile>& adds, const char* why) {
  for (const delta::AddFile& add : adds) {
    Result<std::string> file = delta::ResolvePathInsideTable(path_, add.path);
    if (file.ok()) fs_->DeleteFile(*file).IgnoreError(why);
  }
}

Status DeltaSink::CheckHoldsCommitted(int64_t last_committed) {
  if (table_ == nullptr) {
    SILT_ASSIGN_OR_RETURN(table_, delta::DeltaTable::Open(fs_, path_));
    table_->set_background_checkpoints(true);
  }
  return CheckTableHoldsCommitted(table_.get(), query_id_, last_committed);
}

void DeltaSink::SetPartitionTxns(std::vector<delta::CommitRequest::ExpectedTxn> txns,
                                 std::map<std::string, std::string> commit_info) {
  partition_txns_ = std::move(txns);
  commit_info_ = std::move(commit_info);
}

Status DeltaSink::RefreshForPartitionTxns(const std::vector<delta::AddFile>& adds) {
  Status st = Status::OK();
  // Scale-out workers share the table: the others' commits would make a
  // state without its checkpointed files re-read the table every batch.
  table_->set_elide_checkpointed_files(false);
  if (snapshot_ != nullptr) {
    const delta::Metadata before = snapshot_->metadata();
    const delta::Protocol protocol = snapshot_->protocol();
    Result<delta::SnapshotPtr> latest = table_->Update(snapshot_);
    if (!latest.ok()) {
      st = latest.status();
    } else {
      snapshot_ = std::move(*latest);
      const delta::Metadata& after = snapshot_->metadata();
      if (after.id != before.id || after.schema_string != before.schema_string ||
          after.partition_columns != before.partition_columns ||
          after.configuration != before.configuration ||
          snapshot_->protocol().min_writer_version != protocol.min_writer_version ||
          snapshot_->protocol().writer_features != protocol.writer_features) {
        st = Status::Conflict("the metadata or protocol of Delta table ", path_,
                              " changed while the batch ran (version ", snapshot_->version(), ")");
      }
    }
  } else {
    Result<bool> exists = table_->Exists();
    if (!exists.ok()) {
      st = exists.status();
    } else if (*exists) {
      st = Status::Conflict("Delta table ", path_,
                            " was created by another writer while the batch ran");
    }
  }
  if (!st.ok()) {
    DeleteDataFiles(adds, "data file of a discarded batch");
    partition_txns_.reset();
  }
  return st;
}

namespace {

class DeltaPartWriter final : public SinkPartWriter {
 public:
  DeltaPartWriter(std::unique_ptr<delta::AppendWriter> writer,
                  std::unique_ptr<DeltaSink::ColumnFiller> filler,
                  std::unique_ptr<DeltaSink::Constraints> constraints,
                  DeltaSink::PartResult* result)
      : writer_(std::move(writer)),
        filler_(std::move(filler)),
        constraints_(std::move(constraints)),
        result_(result) {}
  ~DeltaPartWriter() override {
    if (writer_ != nullptr) {
      writer_->Abort().IgnoreError("data files of an unfinished part are never committed");
    }
  }
  Status Write(const columnar::RecordBatch& batch) override {
    if (batch.num_rows == 0) return Status::OK();
    if (writer_ == nullptr) return Status::Internal("DeltaSink part written after Close");
    if (filler_ != nullptr) {
      SILT_ASSIGN_OR_RETURN(columnar::RecordBatch filled, filler_->Apply(batch));
      if (constraints_ != nullptr) SILT_RETURN_NOT_OK(constraints_->Check(filled));
      SILT_RETURN_NOT_OK(writer_->Write(filled));
    } else {
      if (constraints_ != nullptr) SILT_RETURN_NOT_OK(constraints_->Check(batch));
      SILT_RETURN_NOT_OK(writer_->Write(batch));
    }
    rows_ += batch.num_rows;
    return Status::OK();
  }
  Status Close() override {
    if (writer_ == nullptr) return Status::OK();
    SILT_ASSIGN_OR_RETURN(result_->adds, writer_->Finish());
    writer_.reset();
    result_->rows = rows_;
    result_->closed = true;
    return Status::OK();
  }

 private:
  std::unique_ptr<delta::AppendWriter> writer_;
  std::unique_ptr<DeltaSink::ColumnFiller> filler_;
  std::unique_ptr<DeltaSink::Constraints> constraints_;
  DeltaSink::PartResult* result_;
  int64_t rows_ = 0;
};

}  // namespace

Result<std::unique_ptr<SinkPartWriter>> DeltaSink::OpenPartWriter() {
  if (skip_ || complete_ || writer_ == nullptr) return std::unique_ptr<SinkPartWriter>();
  SILT_ASSIGN_OR_RETURN(std::unique_ptr<delta::AppendWriter> writer,
                        delta::AppendWriter::Make(fs_, path_, layout_, partition_columns_,
                                                  writer_options_, batch_id_));
  SILT_ASSIGN_OR_RETURN(std::unique_ptr<ColumnFiller> filler, MakeFiller());
  SILT_ASSIGN_OR_RETURN(std::unique_ptr<Constraints> constraints, MakeConstraints());
  parts_.push_back(std::make_unique<PartResult>());
  return std::unique_ptr<SinkPartWriter>(std::make_unique<DeltaPartWriter>(
      std::move(writer), std::move(filler), std::move(constraints), parts_.back().get()));
}

Result<bool> DeltaSink::Begin(int64_t batch_id) {
  batch_id_ = batch_id;
  skip_ = false;
  rows_ = 0;
  partition_txns_.reset();
  commit_info_.clear();
  writer_.reset();
  parts_.clear();
  if (table_ == nullptr) {
    SILT_ASSIGN_OR_RETURN(table_, delta::DeltaTable::Open(fs_, path_));
    table_->set_background_checkpoints(true);
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
    partition_columns_ = overwrite_schema_ ? partition_by_ : snapshot_->partition_columns();
    SILT_ASSIGN_OR_RETURN(writer_options_.num_indexed_cols,
                          delta::DataSkippingNumIndexedCols(snapshot_->metadata().configuration));
  } else {
    partition_columns_ = partition_by_;
    SILT_RETURN_NOT_OK(PlanColumns(nullptr));
    if (column_plan_ == nullptr) {
      layout_ = delta::NewTableLayout(output_schema_);
    } else {
      SILT_ASSIGN_OR_RETURN(columnar::SchemaPtr table_schema, NewTableSchema());
      SILT_ASSIGN_OR_RETURN(layout_, delta::PlanAppend(table_schema, *write_schema_, false, path_));
    }
  }
  SILT_RETURN_NOT_OK(ApplyColumnMapping(exists ? snapshot_.get() : nullptr));
  identity_counters_.reset();
  if (column_plan_ != nullptr) {
    identity_counters_ = std::make_unique<IdentityCounters>(*column_plan_);
  }
  SILT_ASSIGN_OR_RETURN(filler_, MakeFiller());
  SILT_ASSIGN_OR_RETURN(constraints_, MakeConstraints());
  SILT_ASSIGN_OR_RETURN(writer_, delta::AppendWriter::Make(fs_, path_, layout_, partition_columns_,
                                                           writer_options_, batch_id));
  return true;
}

void DeltaSink::FindRefusedRows(const columnar::RecordBatch& batch, expr::RowErrors* errors) const {
  if (skip_ || writer_ == nullptr) return;
  for (int table_col : layout_.not_null_columns) {
    const int data_col = layout_.column_order[static_cast<size_t>(table_col)];
    if (data_col < 0 || data_col >= static_cast<int>(batch.columns.size())) continue;
    const columnar::Column& column = *batch.columns[static_cast<size_t>(data_col)];
    if (column.validity == nullptr || column.null_count == 0) continue;
    const std::string message =
        Status::Concat("NULL in column ", layout_.table_schema->field(table_col).name,
                       ", which is NOT NULL in table ", path_, " (the sink refuses the row)");
    for (int64_t row = 0; row < column.length; ++row) {
      if (column.IsNull(row)) errors->Add(row, expr::RowErrorKind::kSinkRefused, message);
    }
  }
}

Status DeltaSink::Write(const columnar::RecordBatch& batch) {
  if (skip_ || batch.num_rows == 0) return Status::OK();
  if (writer_ == nullptr) return Status::Internal("DeltaSink::Write outside a batch");
  if (filler_ != nullptr) {
    SILT_ASSIGN_OR_RETURN(columnar::RecordBatch filled, filler_->Apply(batch));
    if (constraints_ != nullptr) SILT_RETURN_NOT_OK(constraints_->Check(filled));
    SILT_RETURN_NOT_OK(writer_->Write(filled));
  } else {
    if (constraints_ != nullptr) SILT_RETURN_NOT_OK(constraints_->Check(batch));
    SILT_RETURN_NOT_OK(writer_->Write(batch));
  }
  rows_ += batch.num_rows;
  return Status::OK();
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
  for (const std::unique_ptr<PartResult>& part : parts_) {
    // A part writer destroyed unclosed discarded its files (sink.h).
    if (!part->closed) continue;
    adds.insert(adds.end(), std::make_move_iterator(part->adds.begin()),
                std::make_move_iterator(part->adds.end()));
    rows_ += part->rows;
  }
  parts_.clear();
  const int64_t now_ms = clock_->NowMicros() / 1000;

  // The identity columns' new high-water marks (the last value generated).
  columnar::SchemaPtr table_schema = layout_.table_schema;
  bool marks_changed = false;
  if (column_plan_ != nullptr) {
    for (size_t i = 0; i < column_plan_->identity.size(); ++i) {
      const ColumnPlan::Identity& id = column_plan_->identity[i];
      const int64_t next = identity_counters_->next[i].load();
      if (id.output_index >= 0 || next == id.first_k) continue;
      // Filled values did not overflow, so neither does the last.
      SILT_ASSIGN_OR_RETURN(table_schema, delta::WithIdentityHighWaterMark(
                                              *table_schema, id.column.name,
                                              id.column.start + (next - 1) * id.column.step));
      marks_changed = true;
    }
  }
  delta::CommitRequest request;
  // Constraints and invariants are checked on every row written
  // (Constraints).
  request.honoured_features = {"generatedColumns", "identityColumns", "columnMapping",
                               "checkConstraints", "invariants"};
  if (snapshot_ == nullptr) {
    delta::Metadata metadata;
    metadata.id = NewUuid();
    // Nullable at every depth (NewTableLayout), as delta-spark creates it.
    metadata.schema = table_schema;
    metadata.schema_string = columnar::SchemaToJson(*table_schema);
    metadata.partition_columns = partition_by_;
    metadata.configuration = table_properties_;
    if (max_column_id_) {
      metadata.configuration[std::string(delta::kColumnMappingMaxIdKey)] =
          std::to_string(*max_column_id_);
    }
    metadata.created_time = now_ms;
    request.new_metadata = std::move(metadata);
    SILT_ASSIGN_OR_RETURN(request.new_protocol,
                          delta::ProtocolForNewTable(table_properties_, !cluster_by_.empty()));
    delta::AddSchemaFeatures(*layout_.table_schema, &*request.new_protocol);
    if (column_plan_ != nullptr && !column_plan_->generated.empty()) {
      delta::AddTableFeature(&*request.new_protocol, "generatedColumns");
    }
    if (column_plan_ != nullptr && !column_plan_->identity.empty()) {
      delta::AddTableFeature(&*request.new_protocol, "identityColumns");
    }
    if (!cluster_by_.empty()) {
      request.domain_metadata.push_back(delta::ClusteringDomain(cluster_by_));
    }
  } else if (layout_.schema_changed || marks_changed) {
    // mergeSchema grew the schema, overwriteSchema replaced it, or identity
    // values were generated: this commit carries the new metaData (same
    // table id and properties), as delta-spark's does.
    delta::Metadata metadata = snapshot_->metadata();
    metadata.schema = table_schema;
    metadata.schema_string = columnar::SchemaToJson(*table_schema);
    metadata.partition_columns = partition_columns_;
    if (max_column_id_) {
      metadata.configuration[std::string(delta::kColumnMappingMaxIdKey)] =
          std::to_string(*max_column_id_);
    }
    request.new_metadata = std::move(metadata);
    // A VARIANT column added by mergeSchema needs the variantType feature,
    // a TIMESTAMP_NTZ one (added, or a DATE widened to it) timestampNtz.
    delta::Protocol protocol = snapshot_->protocol();
    bool upgraded = delta::AddSchemaFeatures(*layout_.table_schema, &protocol);
    if (HasTimestampNtz(*layout_.table_schema)) {
      upgraded = delta::AddTableFeature(&protocol, "timestampNtz") || upgraded;
    }
    if (upgraded) request.new_protocol = protocol;
  }
  int64_t bytes = 0;
  for (const delta::AddFile& add : adds) bytes += add.size;
  result.files_written = static_cast<int64_t>(adds.size());
  request.adds = adds;
  if (partition_txns_) {
    // The expected offsets come from table reads made while the batch ran
    // (a partition assigned midway): the commit must be made on a state at
    // least as new (delta::CommitRequest::expected_txns).
    SILT_RETURN_NOT_OK(RefreshForPartitionTxns(adds));
    request.expected_txns = std::move(*partition_txns_);
    partition_txns_.reset();
    request.commit_info_extra = commit_info_;
  } else {
    request.txn = delta::Txn{query_id_, batch_id_, now_ms};
  }
  request.operation = "STREAMING UPDATE";
  request.operation_parameters = {{"outputMode", complete_ ? "Complete" : "Append"},
                                  {"queryId", query_id_},
                                  {"epochId", std::to_string(batch_id_)}};
  request.operation_metrics = {{"numAddedFiles", std::to_string(adds.size())},
                               {"numOutputRows", std::to_string(rows_)},
                               {"numOutputBytes", std::to_string(bytes)}};
  if (!complete_) {
    request.operation_metrics.emplace("numRemovedFiles", "0");
    request.is_blind_append = true;
  }
  // Complete mode: the batch is the whole result, so every file of the table
  // read at Begin goes in the commit that adds the batch's files.
  // Append: the sink's snapshot moves on by its own commit in memory, so the
  // next batch only probes the log for other writers' commits (Update)
  // instead of re-reading this one; nothing per batch grows with the table.
  Result<delta::CommitResult> committed =
      complete_ ? delta::CommitReplacingAllFiles(table_.get(), snapshot_, request, now_ms)
                : delta::CommitAndAdvance(table_.get(), &snapshot_, request);
  if (!committed.ok()) {
    if (committed.status().IsConflict() && !request.expected_txns.empty()) {
      // A scale-out batch another worker overtook: its files are never
      // referenced.
      DeleteDataFiles(adds, "data file of a discarded batch");
    }
    return committed.status();
  }
  if (committed->skipped_duplicate) {
    // Another run of this query committed the batch between our snapshot and
    // our commit; the files written here are not referenced by the table.
    SILT_LOG_INFO("stream", "batch ", batch_id_, " already in table version ", committed->version,
                  "; skipping");
    DeleteDataFiles(adds, "orphan data file cleanup");
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
  for (const std::unique_ptr<PartResult>& part : parts_) {
    DeleteDataFiles(part->adds, "data files of a failed batch");
  }
  parts_.clear();
  skip_ = false;
}

}  // namespace silt::stream
