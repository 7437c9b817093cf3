// The action-to-row encoding of checkpoints (checkpoint_writer_internal.h):
// delta-spark's checkpoint and sidecar schemas, one row per action.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "silt/delta/checkpoint_writer_internal.h"

namespace silt::delta::checkpoint_writer_internal {

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

}  // namespace

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

columnar::SchemaPtr SidecarSchema() {
  static const columnar::SchemaPtr schema = DataType::Struct({
      CheckpointSchema()->field(kAdd),
      CheckpointSchema()->field(kRemove),
  });
  return schema;
}

void AppendAdd(ColumnBuilder* b, const AddFile& add, bool write_stats) {
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
}

void AppendRemove(ColumnBuilder* b, const RemoveFile& remove) {
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
}

bool KeepTombstone(const RemoveFile& remove, int64_t tombstone_cutoff_ms) {
  return remove.deletion_timestamp.value_or(0) >= tombstone_cutoff_ms;
}

parquet::WriterOptions CheckpointWriterOptions() {
  parquet::WriterOptions options;
  options.compression = parquet::Compression::kSnappy;
  // The writer buffers a row group's encoded pages until it is flushed:
  // with the default (128 MB) a checkpoint would sit in memory whole before
  // being written, a transient the size of the table state at every
  // checkpoint. Readers take any number of row groups.
  options.row_group_bytes = 8LL * 1024 * 1024;
  options.key_value_metadata.emplace_back("org.apache.spark.version", "3.5.0");
  options.column_encodings["add.path"] = parquet::ColumnEncoding::kPlain;
  options.column_encodings["add.stats"] = parquet::ColumnEncoding::kPlain;
  options.column_encodings["remove.path"] = parquet::ColumnEncoding::kPlain;
  return options;
}

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
    AppendAdd(rows->Begin(kAdd), add, write_stats);
    SILT_RETURN_NOT_OK(rows->EndRow());
  }
  for (const RemoveFile& remove : snapshot.tombstones()) {
    if (!KeepTombstone(remove, tombstone_cutoff_ms)) continue;
    AppendRemove(rows->Begin(kRemove), remove);
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

}  // namespace silt::delta::checkpoint_writer_internal
