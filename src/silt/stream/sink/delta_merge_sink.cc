#include "silt/stream/sink/delta_merge_sink.h"

#include <algorithm>
#include <functional>
#include <unordered_map>

#include "silt/base/logging.h"
#include "silt/base/uuid.h"
#include "silt/delta/append_writer.h"
#include "silt/delta/column_mapping.h"
#include "silt/delta/protocol.h"
#include "silt/delta/table_properties.h"
#include "silt/exec/value_access.h"
#include "silt/expr/parse/ast.h"
#include "silt/expr/parse/parser.h"
#include "silt/fs/file_system.h"
#include "silt/stream/options_internal.h"
#include "silt/stream/sink/delta_sink.h"

namespace silt::stream {

namespace {

using columnar::Column;
using columnar::RecordBatchPtr;
using columnar::TypeId;

bool IsTablePropertyKey(std::string_view key) {
  return key.size() > 6 && internal::EqualsIgnoreCase(key.substr(0, 6), "delta.");
}

// The clause text of an expression field, parsed; errors name the key.
Result<expr::NodePtr> ParseAt(const std::string& text, const std::string& key_path) {
  Result<expr::NodePtr> node = expr::ParseNode(text);
  if (!node.ok()) return Status::InvalidArgument(key_path, ": ", node.status().message());
  return node;
}

Result<std::vector<expr::MergeClause>> ParseClauses(const std::vector<MergeClauseSpec>& specs,
                                                    expr::MergeMatch match) {
  std::vector<expr::MergeClause> out;
  for (const MergeClauseSpec& spec : specs) {
    expr::MergeClause clause;
    clause.match = match;
    if (!spec.condition.empty()) {
      SILT_ASSIGN_OR_RETURN(clause.condition,
                            ParseAt(spec.condition, spec.key_path + ".condition"));
    }
    if (spec.action == "update") clause.action = expr::MergeActionKind::kUpdate;
    if (spec.action == "updateAll") clause.action = expr::MergeActionKind::kUpdateAll;
    if (spec.action == "delete") clause.action = expr::MergeActionKind::kDelete;
    if (spec.action == "insert") clause.action = expr::MergeActionKind::kInsert;
    if (spec.action == "insertAll") clause.action = expr::MergeActionKind::kInsertAll;
    const std::string list = spec.action == "insert" ? ".values." : ".set.";
    for (const auto& [column, value] : spec.assignments) {
      expr::Assignment a;
      // `t.v` or `v`: the target column, as DeltaMergeBuilder's set keys.
      size_t begin = 0;
      while (true) {
        size_t dot = column.find('.', begin);
        a.column.push_back(column.substr(begin, dot == std::string::npos ? dot : dot - begin));
        if (dot == std::string::npos) break;
        begin = dot + 1;
      }
      SILT_ASSIGN_OR_RETURN(a.value, ParseAt(value, spec.key_path + list + column));
      clause.assignments.push_back(std::move(a));
    }
    out.push_back(std::move(clause));
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<BatchDeduplicator>> BatchDeduplicator::Make(
    const DedupSpec& spec, const columnar::SchemaPtr& schema, const expr::EvalOptions& options,
    const std::string& key_path) {
  auto dedup = std::unique_ptr<BatchDeduplicator>(new BatchDeduplicator());
  std::vector<columnar::TypePtr> key_types;
  auto bind = [&](const std::string& text,
                  const std::string& path) -> Result<expr::BoundExpressionPtr> {
    Result<expr::ExpressionPtr> parsed = expr::ParseExpression(text);
    if (!parsed.ok()) return Status::InvalidArgument(path, ": ", parsed.status().message());
    Result<expr::BoundExpressionPtr> bound = expr::Bind(**parsed, schema, options);
    if (!bound.ok()) return Status::InvalidArgument(path, ": ", bound.status().message());
    return bound;
  };
  for (size_t i = 0; i < spec.keys.size(); ++i) {
    SILT_ASSIGN_OR_RETURN(expr::BoundExpressionPtr key,
                          bind(spec.keys[i], key_path + ".keys[" + std::to_string(i) + "]"));
    key_types.push_back(key->type());
    dedup->keys_.push_back(std::move(key));
  }
  Result<exec::KeyCodec> codec = exec::KeyCodec::Make(key_types);
  if (!codec.ok()) return codec.status().WithContextParts(key_path, ".keys");
  dedup->codec_ = std::make_unique<exec::KeyCodec>(std::move(*codec));
  for (size_t i = 0; i < spec.order_by.size(); ++i) {
    const std::string path = key_path + ".orderBy[" + std::to_string(i) + "]";
    SILT_ASSIGN_OR_RETURN(expr::BoundExpressionPtr order, bind(spec.order_by[i], path));
    if (!exec::IsOrderable(order->type()->id())) {
      return Status::NotSupported(path, ": cannot order by ", order->type()->ToDdl(),
                                  " (a number, string, binary, date or timestamp)");
    }
    dedup->order_by_.push_back(std::move(order));
  }
  return dedup;
}

Result<RecordBatchPtr> BatchDeduplicator::Apply(const RecordBatchPtr& batch) {
  const int64_t n = batch->num_rows;
  expr::EvalContext ctx;
  std::vector<columnar::ColumnPtr> keys;
  for (auto& key : keys_) {
    SILT_ASSIGN_OR_RETURN(columnar::ColumnPtr column, key->Evaluate(*batch, ctx));
    keys.push_back(std::move(column));
  }
  std::vector<columnar::ColumnPtr> order;
  for (auto& o : order_by_) {
    SILT_ASSIGN_OR_RETURN(columnar::ColumnPtr column, o->Evaluate(*batch, ctx));
    order.push_back(std::move(column));
  }
  std::vector<std::string> encoded;
  encoded.reserve(static_cast<size_t>(n));
  codec_->EncodeRows(keys, n, &encoded);
  // Row b replaces the kept row a when its order values are >= a's.
  auto later_or_equal = [&](int64_t a, int64_t b) {
    for (const columnar::ColumnPtr& c : order) {
      const bool va = c->IsValid(a), vb = c->IsValid(b);
      if (!va || !vb) {
        if (va == vb) continue;
        return vb;  // a value beats NULL
      }
      const int r = exec::CompareNonNull(*c, a, b);
      if (r != 0) return r < 0;
    }
    return true;
  };
  std::unordered_map<std::string_view, int64_t> kept;
  kept.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    auto [it, inserted] = kept.emplace(encoded[static_cast<size_t>(i)], i);
    if (!inserted && later_or_equal(it->second, i)) it->second = i;
  }
  if (static_cast<int64_t>(kept.size()) == n) return batch;
  std::vector<int64_t> rows;
  rows.reserve(kept.size());
  for (const auto& [key, row] : kept) rows.push_back(row);
  std::sort(rows.begin(), rows.end());
  return columnar::TakeBatch(*batch, rows);
}

DeltaMergeSink::~DeltaMergeSink() = default;

Result<std::unique_ptr<DeltaMergeSink>> DeltaMergeSink::Make(
    const SinkSpec& spec, const SinkContext& context, const std::vector<std::string>& update_keys) {
  const std::string& kp = spec.key_path;
  if (spec.output_mode == "complete") {
    return Status::InvalidArgument(kp, ".outputMode: complete replaces the table every batch; ",
                                   "it cannot be combined with mode: merge");
  }
  if (spec.path.empty()) return Status::InvalidArgument(kp, ".path: required");
  auto sink = std::unique_ptr<DeltaMergeSink>(new DeltaMergeSink());
  sink->path_ = fs::NormalizePath(spec.path);
  sink->key_path_ = kp;
  sink->fs_ = context.file_system;
  if (sink->fs_ == nullptr) {
    SILT_ASSIGN_OR_RETURN(sink->fs_, fs::FileSystemForPath(sink->path_));
  }
  sink->clock_ = context.clock;
  sink->query_id_ = context.query_id;
  sink->output_schema_ = context.schema;
  sink->eval_ = context.eval;
  if (!spec.cluster_by.empty()) {
    return Status::NotSupported(
        "sink.clusterBy: creating a clustered table is supported with mode: append only");
  }

  for (size_t i = 0; i < spec.partition_by.size(); ++i) {
    int index = sink->output_schema_->FieldIndex(spec.partition_by[i]);
    if (index < 0) {
      return Status::InvalidArgument(kp, ".partitionBy[", static_cast<int64_t>(i), "]: '",
                                     spec.partition_by[i], "' is not a column of the output (",
                                     delta::SchemaDdl(*sink->output_schema_), ")");
    }
    sink->partition_by_.push_back(sink->output_schema_->field(index).name);
  }
  std::map<std::string, std::string> properties;
  for (const auto& [key, value] : spec.options) {
    if (!IsTablePropertyKey(key)) {
      return Status::InvalidArgument(
          kp, ".options.", key,
          ": not used by the merge sink (it takes `delta.*` table properties, applied when it "
          "creates the table)");
    }
    properties[key] = value;
  }
  Result<delta::TableConfiguration> validated = delta::ValidateTableProperties(properties);
  if (!validated.ok()) return validated.status().WithContextParts(kp, ".options");
  // An unknown column mapping mode is refused here, before any batch.
  Result<delta::ColumnMappingMode> mapping = delta::ColumnMappingModeOf(*validated);
  if (!mapping.ok()) return mapping.status().WithContextParts(kp, ".options");
  sink->table_properties_ = std::move(*validated);

  dml::MergeSpec& merge = sink->merge_;
  if (spec.merge) {
    merge.target_alias = spec.merge->target_alias;
    merge.source_alias = spec.merge->source_alias;
    SILT_ASSIGN_OR_RETURN(merge.on, ParseAt(spec.merge->on, kp + ".merge.on"));
    for (auto [list, match] :
         {std::pair{&spec.merge->when_matched, expr::MergeMatch::kMatched},
          std::pair{&spec.merge->when_not_matched, expr::MergeMatch::kNotMatched},
          std::pair{&spec.merge->when_not_matched_by_source,
                    expr::MergeMatch::kNotMatchedBySource}}) {
      SILT_ASSIGN_OR_RETURN(std::vector<expr::MergeClause> clauses, ParseClauses(*list, match));
      for (expr::MergeClause& c : clauses) merge.clauses.push_back(std::move(c));
    }
  } else {
    // Update mode: upsert the changed groups on their keys. `<=>`: a NULL
    // group key is a group too.
    if (update_keys.empty()) {
      return Status::InvalidArgument(kp,
                                     ".outputMode: update on a Delta sink upserts the groups of "
                                     "an aggregation by their keys; this query has no groupBy "
                                     "keys (write mode: merge with merge.on to choose them)");
    }
    merge.target_alias = "t";
    merge.source_alias = "s";
    std::string on;
    // A struct key (the window) is compared field by field: struct values
    // have no comparison of their own in silt's expressions.
    std::function<void(const std::string&, const columnar::TypePtr&)> add =
        [&](const std::string& name, const columnar::TypePtr& type) {
          if (type->id() == TypeId::kStruct) {
            for (const columnar::Field& f : type->fields())
              add(name + "." + expr::BackquoteIdentifier(f.name), f.type);
            return;
          }
          if (!on.empty()) on += " AND ";
          on += "t." + name + " <=> s." + name;
        };
    for (const std::string& key : update_keys) {
      const int index = sink->output_schema_->FieldIndex(key);
      if (index < 0) {
        return Status::InvalidArgument(kp, ".outputMode: update needs the group key column '", key,
                                       "' in the query output to merge on (",
                                       delta::SchemaDdl(*sink->output_schema_), ")");
      }
      add(expr::BackquoteIdentifier(key), sink->output_schema_->field(index).type);
    }
    SILT_ASSIGN_OR_RETURN(merge.on, ParseAt(on, kp + ".outputMode"));
    expr::MergeClause update;
    update.match = expr::MergeMatch::kMatched;
    update.action = expr::MergeActionKind::kUpdateAll;
    expr::MergeClause insert;
    insert.match = expr::MergeMatch::kNotMatched;
    insert.action = expr::MergeActionKind::kInsertAll;
    merge.clauses = {std::move(update), std::move(insert)};
  }
  if (spec.dedup_by) {
    SILT_ASSIGN_OR_RETURN(sink->dedup_, BatchDeduplicator::Make(*spec.dedup_by, context.schema,
                                                                context.eval, kp + ".dedupBy"));
  }
  return sink;
}

std::string DeltaMergeSink::Description() const { return "DeltaMergeSink[" + path_ + "]"; }

Status DeltaMergeSink::CheckHoldsCommitted(int64_t last_committed) {
  if (table_ == nullptr) {
    SILT_ASSIGN_OR_RETURN(table_, delta::DeltaTable::Open(fs_, path_));
  }
  return CheckTableHoldsCommitted(table_.get(), query_id_, last_committed);
}

Result<bool> DeltaMergeSink::Begin(int64_t batch_id) {
  batch_id_ = batch_id;
  skip_ = false;
  rows_.clear();
  snapshot_.reset();
  if (table_ == nullptr) {
    SILT_ASSIGN_OR_RETURN(table_, delta::DeltaTable::Open(fs_, path_));
  }
  SILT_ASSIGN_OR_RETURN(bool exists, table_->Exists());
  if (!exists) return true;
  SILT_ASSIGN_OR_RETURN(snapshot_, table_->LatestSnapshot());
  std::optional<int64_t> done = snapshot_->TxnVersion(query_id_);
  if (done && *done >= batch_id) {
    SILT_LOG_INFO("stream", "batch ", batch_id, " already in table ", path_, " version ",
                  snapshot_->version(), "; skipping");
    skip_ = true;
    return false;
  }
  return true;
}

Status DeltaMergeSink::Write(const columnar::RecordBatch& batch) {
  if (skip_ || batch.num_rows == 0) return Status::OK();
  rows_.push_back(std::make_shared<columnar::RecordBatch>(batch));
  return Status::OK();
}

Status DeltaMergeSink::CreateTable() {
  const int64_t now_ms = clock_->NowMicros() / 1000;
  delta::AppendLayout layout = delta::NewTableLayout(output_schema_);
  delta::CommitRequest request;
  delta::Metadata metadata;
  metadata.id = NewUuid();
  metadata.configuration = table_properties_;
  // Column mapping numbers the fields as the append sink does (decision 126).
  SILT_ASSIGN_OR_RETURN_CTX(metadata.schema,
                            delta::MapNewTableSchema(layout.table_schema, &metadata.configuration),
                            "creating table ", path_);
  metadata.schema_string = columnar::SchemaToJson(*metadata.schema);
  metadata.partition_columns = partition_by_;
  metadata.created_time = now_ms;
  SILT_ASSIGN_OR_RETURN(request.new_protocol, delta::ProtocolForNewTable(table_properties_));
  delta::AddSchemaFeatures(*metadata.schema, &*request.new_protocol);
  request.new_metadata = std::move(metadata);
  request.honoured_features = {"columnMapping"};
  request.operation = "CREATE TABLE";
  request.is_blind_append = true;
  Result<delta::CommitResult> created = delta::Commit(table_.get(), nullptr, request);
  if (!created.ok()) return created.status().WithContextParts("creating table ", path_);
  SILT_ASSIGN_OR_RETURN(snapshot_, table_->LatestSnapshot());
  return Status::OK();
}

Result<SinkBatchResult> DeltaMergeSink::Commit() {
  SinkBatchResult result;
  if (skip_) {
    result.skipped_duplicate = true;
    skip_ = false;
    return result;
  }
  if (snapshot_ == nullptr) SILT_RETURN_NOT_OK(CreateTable());
  RecordBatchPtr batch;
  if (rows_.empty()) {
    auto empty = std::make_shared<columnar::RecordBatch>();
    empty->schema = output_schema_;
    for (const columnar::Field& f : output_schema_->fields()) {
      empty->columns.push_back(columnar::MakeNullColumn(f.type, 0));
    }
    batch = std::move(empty);
  } else {
    batch = columnar::ConcatBatches(rows_);
  }
  rows_.clear();
  if (dedup_ != nullptr && batch->num_rows > 0) {
    SILT_ASSIGN_OR_RETURN_CTX(batch, dedup_->Apply(batch), key_path_, ".dedupBy");
  }
  std::unique_ptr<dml::RowSource> source = dml::MakeBatchSource(output_schema_, {batch});
  dml::DmlOptions options;
  options.snapshot = snapshot_;
  options.eval = eval_;
  const int64_t now_ms = clock_->NowMicros() / 1000;
  options.txn = delta::Txn{query_id_, batch_id_, now_ms};
  Result<dml::DmlResult> merged = dml::Merge(table_.get(), source.get(), merge_, options);
  if (!merged.ok()) {
    Status st = merged.status();
    if (st.message().find("DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE") !=
            std::string::npos &&
        dedup_ == nullptr) {
      return st.WithContextParts(
          key_path_, " (set ", key_path_,
          ".dedupBy: {keys: [...], orderBy: [...]} to merge only the latest row per key)");
    }
    return st.WithContextParts(key_path_);
  }
  snapshot_.reset();
  if (merged->skipped_duplicate) {
    SILT_LOG_INFO("stream", "batch ", batch_id_, " already in table ", path_, "; skipping");
    result.skipped_duplicate = true;
    return result;
  }
  result.table_version = merged->version;
  result.rows_written = merged->num_affected_rows;
  result.files_written = merged->num_files_added;
  return result;
}

void DeltaMergeSink::Abort() {
  rows_.clear();
  skip_ = false;
}

}  // namespace silt::stream
