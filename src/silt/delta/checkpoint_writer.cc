#include "silt/delta/checkpoint_writer.h"

#include <simdjson.h>

#include <cstdio>

#include "silt/base/json_writer.h"
#include "silt/columnar/builder.h"
#include "silt/delta/table_properties.h"
#include "silt/parquet/file_writer.h"

namespace silt::delta {

namespace {

using columnar::ColumnBuilder;
using columnar::DataType;
using columnar::Field;
using columnar::TypePtr;

TypePtr StringMap() { return DataType::Map(DataType::String(), DataType::String(), true); }

TypePtr DeletionVectorType() {
  return DataType::Struct({{"storageType", DataType::String()},
                           {"pathOrInlineDv", DataType::String()},
                           {"offset", DataType::Int()},
                           {"sizeInBytes", DataType::Int()},
                           {"cardinality", DataType::Long()},
                           {"maxRowIndex", DataType::Long()}});
}

// delta-spark's classic checkpoint schema (Spark 3.4+/Delta 2.4+ layout, as
// in the golden tables' checkpoints), without the optional *_parsed columns.
columnar::SchemaPtr CheckpointSchema() {
  static const columnar::SchemaPtr schema = DataType::Struct({
      {"txn", DataType::Struct({{"appId", DataType::String()},
                                {"version", DataType::Long()},
                                {"lastUpdated", DataType::Long()}})},
      {"add", DataType::Struct({{"path", DataType::String()},
                                {"partitionValues", StringMap()},
                                {"size", DataType::Long()},
                                {"modificationTime", DataType::Long()},
                                {"dataChange", DataType::Boolean()},
                                {"tags", StringMap()},
                                {"deletionVector", DeletionVectorType()},
                                {"baseRowId", DataType::Long()},
                                {"defaultRowCommitVersion", DataType::Long()},
                                {"clusteringProvider", DataType::String()},
                                {"stats", DataType::String()}})},
      {"remove", DataType::Struct({{"path", DataType::String()},
                                   {"deletionTimestamp", DataType::Long()},
                                   {"dataChange", DataType::Boolean()},
                                   {"extendedFileMetadata", DataType::Boolean()},
                                   {"partitionValues", StringMap()},
                                   {"size", DataType::Long()},
                                   {"deletionVector", DeletionVectorType()},
                                   {"baseRowId", DataType::Long()},
                                   {"defaultRowCommitVersion", DataType::Long()}})},
      {"metaData",
       DataType::Struct({{"id", DataType::String()},
                         {"name", DataType::String()},
                         {"description", DataType::String()},
                         {"format", DataType::Struct({{"provider", DataType::String()},
                                                      {"options", StringMap()}})},
                         {"schemaString", DataType::String()},
                         {"partitionColumns", DataType::Array(DataType::String(), true)},
                         {"configuration", StringMap()},
                         {"createdTime", DataType::Long()}})},
      {"protocol",
       DataType::Struct({{"minReaderVersion", DataType::Int()},
                         {"minWriterVersion", DataType::Int()},
                         {"readerFeatures", DataType::Array(DataType::String(), true)},
                         {"writerFeatures", DataType::Array(DataType::String(), true)}})},
      {"domainMetadata", DataType::Struct({{"domain", DataType::String()},
                                           {"configuration", DataType::String()},
                                           {"removed", DataType::Boolean()}})},
  });
  return schema;
}

enum Col { kTxn = 0, kAdd, kRemove, kMetaData, kProtocol, kDomainMetadata, kNumCols };

void AppendOptString(ColumnBuilder* b, const std::optional<std::string>& v) {
  if (v) {
    b->AppendString(*v);
  } else {
    b->AppendNull();
  }
}

void AppendOptLong(ColumnBuilder* b, const std::optional<int64_t>& v) {
  if (v) {
    b->Append<int64_t>(*v);
  } else {
    b->AppendNull();
  }
}

void AppendPartitionValues(ColumnBuilder* map, const PartitionValues& values) {
  ColumnBuilder* entries = map->child(0);
  for (const auto& [key, value] : values) {
    entries->child(0)->AppendString(key);
    AppendOptString(entries->child(1), value);
    entries->AppendValid();
  }
  map->CloseList();
}

void AppendStringMap(ColumnBuilder* map, const std::map<std::string, std::string>& values) {
  ColumnBuilder* entries = map->child(0);
  for (const auto& [key, value] : values) {
    entries->child(0)->AppendString(key);
    entries->child(1)->AppendString(value);
    entries->AppendValid();
  }
  map->CloseList();
}

void AppendStringList(ColumnBuilder* list, const std::optional<std::vector<std::string>>& values) {
  if (!values) {
    list->AppendNull();
    return;
  }
  for (const std::string& v : *values) list->child(0)->AppendString(v);
  list->CloseList();
}

void AppendDeletionVector(ColumnBuilder* b, const std::optional<DeletionVectorDescriptor>& dv) {
  if (!dv) {
    b->AppendNull();
    return;
  }
  b->child(0)->AppendString(dv->storage_type);
  b->child(1)->AppendString(dv->path_or_inline_dv);
  if (dv->offset) {
    b->child(2)->Append<int32_t>(static_cast<int32_t>(*dv->offset));
  } else {
    b->child(2)->AppendNull();
  }
  b->child(3)->Append<int32_t>(static_cast<int32_t>(dv->size_in_bytes));
  b->child(4)->Append<int64_t>(dv->cardinality);
  AppendOptLong(b->child(5), dv->max_row_index);
  b->AppendValid();
}

// Writes rows in batches of kTargetBatchRows; each row sets one column.
class CheckpointRows {
 public:
  explicit CheckpointRows(parquet::ParquetFileWriter* writer) : writer_(writer) {
    const columnar::SchemaPtr& schema = CheckpointSchema();
    for (int i = 0; i < schema->num_fields(); ++i) {
      builders_.push_back(std::make_unique<ColumnBuilder>(schema->field(i).type));
    }
  }

  // The builder of column `col` for a new row; the caller fills the struct
  // and marks it valid, then calls EndRow.
  ColumnBuilder* Begin(Col col) {
    for (int i = 0; i < kNumCols; ++i) {
      if (i != col) builders_[static_cast<size_t>(i)]->AppendNull();
    }
    return builders_[static_cast<size_t>(col)].get();
  }

  Status EndRow() {
    ++rows_;
    ++pending_;
    if (pending_ >= columnar::kTargetBatchRows) return Flush();
    return Status::OK();
  }

  Status Flush() {
    if (pending_ == 0) return Status::OK();
    columnar::RecordBatch batch;
    batch.schema = CheckpointSchema();
    batch.num_rows = pending_;
    for (auto& b : builders_) batch.columns.push_back(b->Finish());
    pending_ = 0;
    return writer_->WriteBatch(batch);
  }

  int64_t rows() const { return rows_; }

 private:
  parquet::ParquetFileWriter* writer_;
  std::vector<std::unique_ptr<ColumnBuilder>> builders_;
  int64_t rows_ = 0;
  int64_t pending_ = 0;
};

Status WriteRows(const Snapshot& snapshot, int64_t tombstone_cutoff_ms,
                 std::optional<int64_t> txn_cutoff_ms, bool write_stats, CheckpointRows* rows) {
  {
    const Protocol& p = snapshot.protocol();
    ColumnBuilder* b = rows->Begin(kProtocol);
    b->child(0)->Append<int32_t>(p.min_reader_version);
    b->child(1)->Append<int32_t>(p.min_writer_version);
    AppendStringList(b->child(2), p.reader_features);
    AppendStringList(b->child(3), p.writer_features);
    b->AppendValid();
    SILT_RETURN_NOT_OK(rows->EndRow());
  }
  {
    const Metadata& m = snapshot.metadata();
    ColumnBuilder* b = rows->Begin(kMetaData);
    b->child(0)->AppendString(m.id);
    AppendOptString(b->child(1), m.name);
    AppendOptString(b->child(2), m.description);
    ColumnBuilder* format = b->child(3);
    format->child(0)->AppendString(m.format_provider);
    AppendStringMap(format->child(1), {});
    format->AppendValid();
    b->child(4)->AppendString(m.schema_string);
    AppendStringList(b->child(5), m.partition_columns);
    AppendStringMap(b->child(6), m.configuration);
    AppendOptLong(b->child(7), m.created_time);
    b->AppendValid();
    SILT_RETURN_NOT_OK(rows->EndRow());
  }
  for (const auto& [app_id, txn] : snapshot.txns()) {
    if (txn_cutoff_ms && txn.last_updated.value_or(0) < *txn_cutoff_ms) continue;
    ColumnBuilder* b = rows->Begin(kTxn);
    b->child(0)->AppendString(txn.app_id);
    b->child(1)->Append<int64_t>(txn.version);
    AppendOptLong(b->child(2), txn.last_updated);
    b->AppendValid();
    SILT_RETURN_NOT_OK(rows->EndRow());
  }
  for (const AddFile& add : snapshot.files()) {
    ColumnBuilder* b = rows->Begin(kAdd);
    b->child(0)->AppendString(add.path);
    AppendPartitionValues(b->child(1), add.partition_values);
    b->child(2)->Append<int64_t>(add.size);
    b->child(3)->Append<int64_t>(add.modification_time);
    // Checkpointed adds are state, not changes (delta-spark writes false).
    b->child(4)->AppendBool(false);
    if (add.tags.empty()) {
      b->child(5)->AppendNull();
    } else {
      AppendStringMap(b->child(5), add.tags);
    }
    AppendDeletionVector(b->child(6), add.deletion_vector);
    AppendOptLong(b->child(7), add.base_row_id);
    AppendOptLong(b->child(8), add.default_row_commit_version);
    AppendOptString(b->child(9), add.clustering_provider);
    if (write_stats) {
      AppendOptString(b->child(10), add.stats);
    } else {
      b->child(10)->AppendNull();
    }
    b->AppendValid();
    SILT_RETURN_NOT_OK(rows->EndRow());
  }
  for (const RemoveFile& remove : snapshot.tombstones()) {
    // delta-spark keeps a tombstone without deletionTimestamp (treated as 0
    // = expired) only until the retention passes; so do we.
    if (remove.deletion_timestamp.value_or(0) < tombstone_cutoff_ms) continue;
    ColumnBuilder* b = rows->Begin(kRemove);
    b->child(0)->AppendString(remove.path);
    AppendOptLong(b->child(1), remove.deletion_timestamp);
    b->child(2)->AppendBool(false);
    b->child(3)->AppendBool(remove.extended_file_metadata);
    if (remove.extended_file_metadata) {
      AppendPartitionValues(b->child(4), remove.partition_values);
    } else {
      b->child(4)->AppendNull();
    }
    AppendOptLong(b->child(5), remove.size);
    AppendDeletionVector(b->child(6), remove.deletion_vector);
    AppendOptLong(b->child(7), remove.base_row_id);
    AppendOptLong(b->child(8), remove.default_row_commit_version);
    b->AppendValid();
    SILT_RETURN_NOT_OK(rows->EndRow());
  }
  for (const auto& [name, domain] : snapshot.domain_metadata()) {
    ColumnBuilder* b = rows->Begin(kDomainMetadata);
    b->child(0)->AppendString(domain.domain);
    b->child(1)->AppendString(domain.configuration);
    b->child(2)->AppendBool(domain.removed);
    b->AppendValid();
    SILT_RETURN_NOT_OK(rows->EndRow());
  }
  return rows->Flush();
}

// The classic checkpoint must carry everything a reader needs (protocol,
// metaData, txns, files with their row tracking fields, tombstones, metadata
// domains); tables whose state or checkpoint format silt does not model are
// left to writers that model it.
Status CheckCheckpointable(const Snapshot& snapshot) {
  const Protocol& p = snapshot.protocol();
  if (p.min_writer_version >= 7 && p.writer_features) {
    for (const std::string& f : *p.writer_features) {
      if (f == "v2Checkpoint" || f == "icebergCompatV1" || f == "icebergCompatV2") {
        return Status::NotSupported(
            "silt does not write checkpoints for tables with writer "
            "feature ",
            f);
      }
    }
  }
  return Status::OK();
}

// Version recorded in an existing _last_checkpoint, or -1.
int64_t LastCheckpointVersion(fs::FileSystem* fs, const std::string& file) {
  auto text = fs->ReadFile(file);
  if (!text.ok()) return -1;
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(text->data(), text->size(), true).get(root) != simdjson::SUCCESS) return -1;
  int64_t version = -1;
  if (root["version"].get_int64().get(version) != simdjson::SUCCESS) return -1;
  return version;
}

}  // namespace

std::string CheckpointFileName(int64_t version) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%020lld.checkpoint.parquet", static_cast<long long>(version));
  return buf;
}

Result<bool> ShouldCheckpoint(const Metadata& metadata, int64_t version) {
  SILT_ASSIGN_OR_RETURN(int64_t interval, CheckpointInterval(metadata.configuration));
  return version != 0 && version % interval == 0;
}

Result<CheckpointInfo> WriteCheckpoint(DeltaTable* table, const Snapshot& snapshot,
                                       int64_t now_ms) {
  SILT_RETURN_NOT_OK(CheckCheckpointable(snapshot));
  const TableConfiguration& conf = snapshot.metadata().configuration;
  SILT_ASSIGN_OR_RETURN(int64_t tombstone_retention_ms, DeletedFileRetentionMs(conf));
  SILT_ASSIGN_OR_RETURN(std::optional<int64_t> txn_retention_ms, SetTransactionRetentionMs(conf));
  SILT_ASSIGN_OR_RETURN(bool write_stats, CheckpointWriteStatsAsJson(conf));
  std::optional<int64_t> txn_cutoff_ms;
  if (txn_retention_ms) txn_cutoff_ms = now_ms - *txn_retention_ms;

  CheckpointInfo info;
  info.version = snapshot.version();
  info.path = fs::JoinPath(table->log_path(), CheckpointFileName(snapshot.version()));
  fs::FileSystem* fs = table->file_system().get();
  parquet::WriterOptions options;
  options.compression = parquet::Compression::kSnappy;
  // The writer buffers a row group's encoded pages until it is flushed:
  // with the default (128 MB) a checkpoint would sit in memory whole before
  // being written, a transient the size of the table state at every
  // checkpoint. Readers take any number of row groups.
  options.row_group_bytes = 8LL * 1024 * 1024;
  options.key_value_metadata.emplace_back("org.apache.spark.version", "3.5.0");
  SILT_ASSIGN_OR_RETURN_CTX(
      std::unique_ptr<parquet::ParquetFileWriter> writer,
      parquet::ParquetFileWriter::Open(fs, info.path, CheckpointSchema(), options),
      "writing checkpoint ", info.path);
  CheckpointRows rows(writer.get());
  Status st =
      WriteRows(snapshot, now_ms - tombstone_retention_ms, txn_cutoff_ms, write_stats, &rows);
  if (!st.ok()) {
    (void)writer->Abort();
    return st.WithContextParts("writing checkpoint ", info.path);
  }
  SILT_ASSIGN_OR_RETURN_CTX(parquet::WriteResult result, writer->Close(), "writing checkpoint ",
                            info.path);
  info.num_actions = rows.rows();
  info.num_add_files = static_cast<int64_t>(snapshot.files().size());
  info.size_in_bytes = result.file_size;

  // _last_checkpoint is a hint; never move it backwards (a slower writer
  // checkpointing an older version must not hide a newer checkpoint).
  std::string last = fs::JoinPath(table->log_path(), "_last_checkpoint");
  if (LastCheckpointVersion(fs, last) > info.version) return info;
  JsonWriter w;
  w.BeginObject();
  w.Member("version", info.version);
  w.Member("size", info.num_actions);
  w.Member("sizeInBytes", info.size_in_bytes);
  w.Member("numOfAddFiles", info.num_add_files);
  w.Key("checkpointSchema");
  w.Raw(columnar::SchemaToJson(*CheckpointSchema()));
  w.EndObject();
  SILT_RETURN_NOT_OK_CTX(fs->WriteFile(last, w.Take()), "writing ", last);
  return info;
}

}  // namespace silt::delta
