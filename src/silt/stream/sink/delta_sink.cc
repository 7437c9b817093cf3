// DeltaSink's batch path (delta_sink.h): Begin, the writes of the query
// thread and of part writers, Commit with its txn and metadata, Abort, and
// the restart check against the table. Make and the options are in
// delta_sink_options.cc, the table's computed columns in
// delta_sink_columns.cc.
#include "silt/stream/sink/delta_sink.h"

#include <iterator>
#include <string>
#include <vector>

#include "silt/base/logging.h"
#include "silt/base/uuid.h"
#include "silt/delta/clustering.h"
#include "silt/delta/column_mapping.h"
#include "silt/delta/protocol.h"
#include "silt/delta/replace_all.h"
#include "silt/delta/table_properties.h"
#include "silt/delta/table_root.h"
#include "silt/delta/type_widening.h"
#include "silt/fs/file_system.h"
#include "silt/stream/options_internal.h"
#include "silt/stream/sink/delta_sink_columns_internal.h"

namespace silt::stream {

namespace {

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

// Writes the query's rows `batch` through `filler` (the table's computed
// columns) and `constraints`, each null when the table has none, into
// `writer`: the same for the query thread's writer and a part writer.
Status WriteThrough(DeltaSink::ColumnFiller* filler, DeltaSink::Constraints* constraints,
                    delta::AppendWriter* writer, const columnar::RecordBatch& batch) {
  if (filler != nullptr) {
    SILT_ASSIGN_OR_RETURN(columnar::RecordBatch filled, filler->Apply(batch));
    if (constraints != nullptr) SILT_RETURN_NOT_OK(constraints->Check(filled));
    return writer->Write(filled);
  }
  if (constraints != nullptr) SILT_RETURN_NOT_OK(constraints->Check(batch));
  return writer->Write(batch);
}

}  // namespace

DeltaSink::~DeltaSink() = default;

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
    SILT_RETURN_NOT_OK(WriteThrough(filler_.get(), constraints_.get(), writer_.get(), batch));
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
  SILT_RETURN_NOT_OK(WriteThrough(filler_.get(), constraints_.get(), writer_.get(), batch));
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
  // The compactor selects from this state (shared) instead of keeping its
  // own copy of the table's files and tombstones (decision 192).
  if (auto_compactor_ != nullptr) auto_compactor_->OnCommit(snapshot_);
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
