#include "silt/delta/checkpoint_writer.h"

#include <simdjson.h>
#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>

#include "silt/base/json_writer.h"
#include "silt/base/uuid.h"
#include "silt/columnar/builder.h"
#include "silt/delta/checkpoint_reader.h"
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

// A V2 checkpoint's sidecar files hold file actions only: the add and remove
// columns of the classic layout (as delta-spark's sidecars).
columnar::SchemaPtr SidecarSchema() {
  static const columnar::SchemaPtr schema = DataType::Struct({
      CheckpointSchema()->field(kAdd),
      CheckpointSchema()->field(kRemove),
  });
  return schema;
}
enum SidecarCol { kSidecarAdd = 0, kSidecarRemove };

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

// Writes rows of `schema` (top-level struct columns, each row setting one)
// in batches of kTargetBatchRows.
class CheckpointRows {
 public:
  CheckpointRows(parquet::ParquetFileWriter* writer, columnar::SchemaPtr schema)
      : writer_(writer), schema_(std::move(schema)) {
    for (int i = 0; i < schema_->num_fields(); ++i) {
      builders_.push_back(std::make_unique<ColumnBuilder>(schema_->field(i).type));
    }
  }

  // The builder of column `col` for a new row; the caller fills the struct
  // and marks it valid, then calls EndRow.
  ColumnBuilder* Begin(int col) {
    for (size_t i = 0; i < builders_.size(); ++i) {
      if (static_cast<int>(i) != col) builders_[i]->AppendNull();
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
    batch.schema = schema_;
    batch.num_rows = pending_;
    for (auto& b : builders_) batch.columns.push_back(b->Finish());
    pending_ = 0;
    return writer_->WriteBatch(batch);
  }

  int64_t rows() const { return rows_; }

 private:
  parquet::ParquetFileWriter* writer_;
  columnar::SchemaPtr schema_;
  std::vector<std::unique_ptr<ColumnBuilder>> builders_;
  int64_t rows_ = 0;
  int64_t pending_ = 0;
};

// One add row (the builder of the add column, from CheckpointRows::Begin).
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

// A tombstone a checkpoint keeps: delta-spark keeps a tombstone without
// deletionTimestamp (treated as 0 = expired) only until the retention
// passes; so do we.
bool KeepTombstone(const RemoveFile& remove, int64_t tombstone_cutoff_ms) {
  return remove.deletion_timestamp.value_or(0) >= tombstone_cutoff_ms;
}

// Writer options for checkpoint and sidecar files. Paths and stats are
// (nearly) unique per row, so a dictionary over them never pays off: they
// are written PLAIN instead of being hashed into a dictionary first.
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

// A checkpoint must carry everything a reader needs (protocol, metaData,
// txns, files with their row tracking fields, tombstones, metadata domains);
// tables whose state silt does not model are left to writers that model it.
// (A table with v2Checkpoint may take a classic, V1-spec checkpoint: the
// protocol always allows one.)
Status CheckCheckpointable(const Snapshot& snapshot) {
  const Protocol& p = snapshot.protocol();
  if (p.min_writer_version >= 7 && p.writer_features) {
    for (const std::string& f : *p.writer_features) {
      if (f == "icebergCompatV1" || f == "icebergCompatV2") {
        return Status::NotSupported(
            "silt does not write checkpoints for tables with writer "
            "feature ",
            f);
      }
    }
  }
  return Status::OK();
}

bool HasFeature(const std::optional<std::vector<std::string>>& features, std::string_view name) {
  return features && std::find(features->begin(), features->end(), name) != features->end();
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

// What a checkpoint needs from the table properties.
struct CheckpointSettings {
  int64_t tombstone_cutoff_ms = 0;
  std::optional<int64_t> txn_cutoff_ms;
  bool write_stats = true;
};

Result<CheckpointSettings> Settings(const TableConfiguration& conf, int64_t now_ms) {
  CheckpointSettings out;
  SILT_ASSIGN_OR_RETURN(int64_t tombstone_retention_ms, DeletedFileRetentionMs(conf));
  SILT_ASSIGN_OR_RETURN(std::optional<int64_t> txn_retention_ms, SetTransactionRetentionMs(conf));
  SILT_ASSIGN_OR_RETURN(out.write_stats, CheckpointWriteStatsAsJson(conf));
  out.tombstone_cutoff_ms = now_ms - tombstone_retention_ms;
  if (txn_retention_ms) out.txn_cutoff_ms = now_ms - *txn_retention_ms;
  return out;
}

Result<CheckpointInfo> WriteClassicCheckpoint(DeltaTable* table, const Snapshot& snapshot,
                                              const CheckpointSettings& settings) {
  CheckpointInfo info;
  info.version = snapshot.version();
  info.path = fs::JoinPath(table->log_path(), CheckpointFileName(snapshot.version()));
  fs::FileSystem* fs = table->file_system().get();
  SILT_ASSIGN_OR_RETURN_CTX(std::unique_ptr<parquet::ParquetFileWriter> writer,
                            parquet::ParquetFileWriter::Open(fs, info.path, CheckpointSchema(),
                                                             CheckpointWriterOptions()),
                            "writing checkpoint ", info.path);
  CheckpointRows rows(writer.get(), CheckpointSchema());
  Status st = WriteRows(snapshot, settings.tombstone_cutoff_ms, settings.txn_cutoff_ms,
                        settings.write_stats, &rows);
  if (!st.ok()) {
    (void)writer->Abort();
    return st.WithContextParts("writing checkpoint ", info.path);
  }
  SILT_ASSIGN_OR_RETURN_CTX(parquet::WriteResult result, writer->Close(), "writing checkpoint ",
                            info.path);
  info.num_actions = rows.rows();
  info.num_add_files = static_cast<int64_t>(snapshot.files().size());
  info.size_in_bytes = result.file_size;
  info.file_actions_encoded = rows.rows();

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

// ---------------------------------------------------------------------------
// V2 checkpoints (PROTOCOL.md "V2 Spec", "Sidecar Files").
//
// The top-level file `<v>.checkpoint.<uuid>.json` holds the checkpointMetadata
// action, one sidecar action per sidecar file, and the non-file actions
// (protocol, metaData, txns, domainMetadata); every add and remove is in the sidecars under
// `_delta_log/_sidecars/`. A sidecar is only a set of file actions, so a later
// checkpoint may name it again as long as every action in it is still part
// of the state it describes (its adds still live, unchanged; its removes still
// unexpired tombstones) and no other sidecar repeats one of them; the metadata
// cleanup rules protect any sidecar some kept checkpoint references.
//
// The handle remembers what it put where (SidecarPlan): for every file action
// of its last V2 checkpoint, a 128-bit hash of everything the checkpoint
// writes for it, and the sidecar holding it. The next checkpoint hashes the
// state's actions (one pass, no encoding), keeps each sidecar whose actions
// are all still there, and encodes only the rest: the actions that are new
// since, plus those of sidecars that lost an action (a file compacted away,
// a tombstone expired) and of small recent sidecars merged into the new one.
// The merging keeps the count low: a new sidecar absorbs the newest kept
// sidecar while that one is no larger than what it already holds (sizes
// then fall geometrically from the oldest sidecar to the newest, like a
// binary counter, so there are O(log n) of them and each action is
// re-encoded O(log n) times over its life), and a sidecar of
// kSidecarFullActions is never merged again. The first V2 checkpoint
// through a handle (a process start) writes the whole state.
//
// A hash collision between an action that changed and the old one it
// replaces would keep a stale sidecar; with 128-bit hashes its probability
// is about n / 2^128 per checkpoint.

constexpr int64_t kSidecarFullActions = 100'000;

}  // namespace

struct SidecarPlan {
  struct Sidecar {
    std::string name;  // file name under _delta_log/_sidecars
    int64_t size_in_bytes = 0;
    int64_t modification_time_ms = 0;
    int64_t num_actions = 0;
  };
  struct Entry {
    uint64_t low = 0;
    uint64_t high = 0;
    uint32_t sidecar = 0;
    bool operator<(const Entry& other) const {
      return low != other.low ? low < other.low : high < other.high;
    }
  };
  std::string table_id;  // metaData.id of the table the sidecars belong to
  bool write_stats = true;
  int64_t version = -1;  // of the checkpoint this plan describes
  // False when `entries` were not kept (a checkpoint of a state without its
  // checkpointed files): the next checkpoint of a whole state cannot match
  // its actions against this plan and writes them all.
  bool hashed = true;
  std::vector<Sidecar> sidecars;  // oldest first
  std::vector<Entry> entries;     // one per action in a sidecar, sorted
};

namespace {

// Serializes what a checkpoint writes for one action into `buf` (reused)
// and hashes it.
class ActionHasher {
 public:
  SidecarPlan::Entry Add(const AddFile& add, bool write_stats) {
    buf_.clear();
    buf_ += 'a';
    Str(add.path);
    Partitions(add.partition_values);
    Long(add.size);
    Long(add.modification_time);
    for (const auto& [key, value] : add.tags) {
      Str(key);
      Str(value);
    }
    buf_ += '|';
    Dv(add.deletion_vector);
    OptLong(add.base_row_id);
    OptLong(add.default_row_commit_version);
    if (add.clustering_provider) {
      buf_ += 'c';
      Str(*add.clustering_provider);
    } else {
      buf_ += '-';
    }
    if (write_stats && add.stats) {
      buf_ += 's';
      Str(*add.stats);
    }
    return Hash();
  }

  SidecarPlan::Entry Remove(const RemoveFile& remove) {
    buf_.clear();
    buf_ += 'r';
    Str(remove.path);
    Long(remove.deletion_timestamp.value_or(std::numeric_limits<int64_t>::min()));
    buf_ += remove.extended_file_metadata ? 'e' : '-';
    if (remove.extended_file_metadata) Partitions(remove.partition_values);
    Long(remove.size.value_or(std::numeric_limits<int64_t>::min()));
    Dv(remove.deletion_vector);
    OptLong(remove.base_row_id);
    OptLong(remove.default_row_commit_version);
    return Hash();
  }

 private:
  void Str(std::string_view v) {
    Long(static_cast<int64_t>(v.size()));
    buf_.append(v);
  }
  void Long(int64_t v) {
    char bytes[sizeof(v)];
    std::memcpy(bytes, &v, sizeof(v));
    buf_.append(bytes, sizeof(v));
  }
  void OptLong(const std::optional<int64_t>& v) {
    if (v) {
      buf_ += 'l';
      Long(*v);
    } else {
      buf_ += '-';
    }
  }
  void Partitions(const PartitionValues& values) {
    for (const auto& [key, value] : values) {
      Str(key);
      if (value) {
        buf_ += 'v';
        Str(*value);
      } else {
        buf_ += 'n';
      }
    }
    buf_ += '|';
  }
  void Dv(const std::optional<DeletionVectorDescriptor>& dv) {
    if (!dv) {
      buf_ += '-';
      return;
    }
    buf_ += 'd';
    Str(dv->storage_type);
    Str(dv->path_or_inline_dv);
    Long(dv->offset.value_or(-1));
    Long(dv->size_in_bytes);
    Long(dv->cardinality);
    Long(dv->max_row_index.value_or(-1));
  }
  SidecarPlan::Entry Hash() const {
    const XXH128_hash_t h = XXH3_128bits(buf_.data(), buf_.size());
    SidecarPlan::Entry e;
    e.low = h.low64;
    e.high = h.high64;
    return e;
  }

  std::string buf_;
};

std::string SidecarFileName(int64_t version) {
  char buf[96];
  std::snprintf(buf, sizeof(buf), "%020lld.checkpoint.0000000001.0000000001.",
                static_cast<long long>(version));
  return std::string(buf) + NewUuid() + ".parquet";
}

// An action of the state, by kind and index in snapshot.files() or in
// snapshot.tombstones().
struct ActionRef {
  bool is_add = true;
  uint32_t index = 0;
};

// Writes one sidecar file with the rows `emit(CheckpointRows*)` appends;
// returns its plan entry (size and modification time as stored).
template <typename Emit>
Result<SidecarPlan::Sidecar> WriteSidecarRows(DeltaTable* table, int64_t version, Emit&& emit) {
  fs::FileSystem* fs = table->file_system().get();
  SidecarPlan::Sidecar sidecar;
  sidecar.name = SidecarFileName(version);
  const std::string path = fs::JoinPath(fs::JoinPath(table->log_path(), "_sidecars"), sidecar.name);
  SILT_ASSIGN_OR_RETURN_CTX(
      std::unique_ptr<parquet::ParquetFileWriter> writer,
      parquet::ParquetFileWriter::Open(fs, path, SidecarSchema(), CheckpointWriterOptions()),
      "writing checkpoint sidecar ", path);
  CheckpointRows rows(writer.get(), SidecarSchema());
  Status st = emit(&rows);
  if (st.ok()) st = rows.Flush();
  if (!st.ok()) {
    (void)writer->Abort();
    return st.WithContextParts("writing checkpoint sidecar ", path);
  }
  SILT_RETURN_NOT_OK_CTX(writer->Close().status(), "writing checkpoint sidecar ", path);
  SILT_ASSIGN_OR_RETURN_CTX(fs::FileInfo stored, fs->GetFileInfo(path),
                            "writing checkpoint sidecar ", path);
  sidecar.size_in_bytes = stored.size;
  sidecar.modification_time_ms = stored.modification_time_ms;
  sidecar.num_actions = rows.rows();
  return sidecar;
}

// Writes `actions` [begin, end) as one sidecar file.
Result<SidecarPlan::Sidecar> WriteSidecar(DeltaTable* table, const Snapshot& snapshot,
                                          int64_t version, const std::vector<ActionRef>& actions,
                                          size_t begin, size_t end, bool write_stats) {
  return WriteSidecarRows(table, version, [&](CheckpointRows* rows) {
    for (size_t i = begin; i < end; ++i) {
      const ActionRef& ref = actions[i];
      if (ref.is_add) {
        AppendAdd(rows->Begin(kSidecarAdd), snapshot.files()[ref.index], write_stats);
      } else {
        AppendRemove(rows->Begin(kSidecarRemove), snapshot.tombstones()[ref.index]);
      }
      SILT_RETURN_NOT_OK(rows->EndRow());
    }
    return Status::OK();
  });
}

void WriteSidecarAction(JsonWriter* w, const SidecarPlan::Sidecar& sidecar) {
  w->BeginObject();
  w->Key("sidecar");
  w->BeginObject();
  w->Member("path", sidecar.name);
  w->Member("sizeInBytes", sidecar.size_in_bytes);
  w->Member("modificationTime", sidecar.modification_time_ms);
  w->EndObject();
  w->EndObject();
}

Result<CheckpointInfo> PublishV2Checkpoint(DeltaTable* table, const Snapshot& snapshot,
                                           const CheckpointSettings& settings,
                                           std::shared_ptr<SidecarPlan> plan, CheckpointInfo info);

// The V2 checkpoint of a state that holds only the files added since the
// handle's last V2 checkpoint (Snapshot::files_elided): that state changed
// by blind appends alone, so every sidecar of that checkpoint still holds
// live files only and is named again; the new files go into one new
// sidecar, with the newest old sidecars merged into it by the rule of
// WriteV2Checkpoint, read back from storage (their files are not in
// memory). Merging stops at sidecars of kElidedMergeLimit actions, which
// bounds what a checkpoint reads back (and holds) at once.
constexpr int64_t kElidedMergeLimit = 8'192;

Result<CheckpointInfo> WriteElidedV2Checkpoint(DeltaTable* table, const Snapshot& snapshot,
                                               const CheckpointSettings& settings) {
  const int64_t version = snapshot.version();
  const std::shared_ptr<SidecarPlan>& previous = table->sidecar_plan();
  if (previous == nullptr || previous->version != snapshot.elided_since() ||
      previous->table_id != snapshot.metadata().id ||
      previous->write_stats != settings.write_stats || !snapshot.tombstones().empty()) {
    return Status::Internal("checkpoint of ", table->path(), " at version ", version,
                            ": the state holds only the files added since version ",
                            snapshot.elided_since(),
                            ", whose checkpoint is not the last one written through this handle");
  }
  const size_t num_old = previous->sidecars.size();
  int64_t pending = static_cast<int64_t>(snapshot.files().size());
  size_t merge_from = num_old;
  while (merge_from > 0) {
    const int64_t size = previous->sidecars[merge_from - 1].num_actions;
    if (size >= kElidedMergeLimit || size > pending) break;
    --merge_from;
    pending += size;
  }
  auto plan = std::make_shared<SidecarPlan>();
  plan->table_id = snapshot.metadata().id;
  plan->write_stats = settings.write_stats;
  plan->version = version;
  plan->hashed = false;
  plan->sidecars.assign(previous->sidecars.begin(),
                        previous->sidecars.begin() + static_cast<std::ptrdiff_t>(merge_from));
  CheckpointInfo info;
  info.version = version;
  info.sidecars_reused = static_cast<int64_t>(merge_from);
  if (pending > 0) {
    const std::string sidecar_dir = fs::JoinPath(table->log_path(), "_sidecars");
    SILT_ASSIGN_OR_RETURN(
        SidecarPlan::Sidecar sidecar, WriteSidecarRows(table, version, [&](CheckpointRows* rows) {
          for (size_t s = merge_from; s < num_old; ++s) {
            const std::string path = fs::JoinPath(sidecar_dir, previous->sidecars[s].name);
            SILT_ASSIGN_OR_RETURN_CTX(
                CommitActions merged, ReadParquetCheckpoint(table->file_system().get(), path),
                "merging sidecar ", path, " into the checkpoint at version ", version);
            for (const AddFile& add : merged.adds) {
              AppendAdd(rows->Begin(kSidecarAdd), add, settings.write_stats);
              SILT_RETURN_NOT_OK(rows->EndRow());
            }
            for (const RemoveFile& remove : merged.removes) {
              AppendRemove(rows->Begin(kSidecarRemove), remove);
              SILT_RETURN_NOT_OK(rows->EndRow());
            }
          }
          for (const AddFile& add : snapshot.files()) {
            AppendAdd(rows->Begin(kSidecarAdd), add, settings.write_stats);
            SILT_RETURN_NOT_OK(rows->EndRow());
          }
          return Status::OK();
        }));
    info.file_actions_encoded = sidecar.num_actions;
    if (sidecar.num_actions != pending) {
      return Status::Corruption("checkpoint of ", table->path(), " at version ", version,
                                ": the merged sidecars hold ",
                                sidecar.num_actions - static_cast<int64_t>(snapshot.files().size()),
                                " actions, their checkpoint said ",
                                pending - static_cast<int64_t>(snapshot.files().size()));
    }
    plan->sidecars.push_back(std::move(sidecar));
    info.sidecars_written = 1;
  }
  return PublishV2Checkpoint(table, snapshot, settings, std::move(plan), std::move(info));
}

Result<CheckpointInfo> WriteV2Checkpoint(DeltaTable* table, const Snapshot& snapshot,
                                         const CheckpointSettings& settings) {
  if (snapshot.files_elided()) return WriteElidedV2Checkpoint(table, snapshot, settings);
  const int64_t version = snapshot.version();
  std::shared_ptr<SidecarPlan> previous = table->sidecar_plan();
  if (previous != nullptr && (previous->table_id != snapshot.metadata().id ||
                              previous->write_stats != settings.write_stats || !previous->hashed)) {
    previous = nullptr;
  }
  const size_t num_old = previous != nullptr ? previous->sidecars.size() : 0;

  // Which kept sidecar (if any) holds each action of the state.
  constexpr uint32_t kNew = std::numeric_limits<uint32_t>::max();
  std::vector<ActionRef> actions;
  std::vector<SidecarPlan::Entry> keys;
  std::vector<int64_t> present(num_old, 0);
  ActionHasher hasher;
  const std::vector<AddFile>& files = snapshot.files();
  const std::vector<RemoveFile>& tombstones = snapshot.tombstones();
  actions.reserve(files.size());
  keys.reserve(files.size());
  auto place = [&](SidecarPlan::Entry key, ActionRef ref) {
    key.sidecar = kNew;
    if (previous != nullptr) {
      auto it = std::lower_bound(previous->entries.begin(), previous->entries.end(), key);
      if (it != previous->entries.end() && it->low == key.low && it->high == key.high) {
        key.sidecar = it->sidecar;
        ++present[it->sidecar];
      }
    }
    actions.push_back(ref);
    keys.push_back(key);
  };
  for (size_t i = 0; i < files.size(); ++i) {
    place(hasher.Add(files[i], settings.write_stats), {true, static_cast<uint32_t>(i)});
  }
  for (size_t i = 0; i < tombstones.size(); ++i) {
    if (!KeepTombstone(tombstones[i], settings.tombstone_cutoff_ms)) continue;
    place(hasher.Remove(tombstones[i]), {false, static_cast<uint32_t>(i)});
  }

  // Keep the sidecars whose every action is still there, then merge the
  // newest kept ones into the new sidecar while they are no larger than it.
  std::vector<bool> keep(num_old, false);
  int64_t pending = 0;
  for (const SidecarPlan::Entry& key : keys) {
    if (key.sidecar == kNew) ++pending;
  }
  for (size_t s = 0; s < num_old; ++s) {
    keep[s] = present[s] == previous->sidecars[s].num_actions;
    if (!keep[s]) pending += present[s];
  }
  for (size_t s = num_old; s-- > 0;) {
    if (!keep[s]) continue;
    const int64_t size = previous->sidecars[s].num_actions;
    if (size >= kSidecarFullActions || size > pending) break;
    keep[s] = false;
    pending += size;
  }

  auto plan = std::make_shared<SidecarPlan>();
  plan->table_id = snapshot.metadata().id;
  plan->write_stats = settings.write_stats;
  plan->version = version;
  std::vector<uint32_t> renumber(num_old, kNew);
  for (size_t s = 0; s < num_old; ++s) {
    if (!keep[s]) continue;
    renumber[s] = static_cast<uint32_t>(plan->sidecars.size());
    plan->sidecars.push_back(previous->sidecars[s]);
  }
  const size_t num_kept = plan->sidecars.size();

  // Encode the rest, kSidecarFullActions per file.
  std::vector<ActionRef> fresh;
  std::vector<SidecarPlan::Entry> fresh_keys;
  fresh.reserve(static_cast<size_t>(pending));
  fresh_keys.reserve(static_cast<size_t>(pending));
  plan->entries.reserve(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    SidecarPlan::Entry key = keys[i];
    if (key.sidecar != kNew && keep[key.sidecar]) {
      key.sidecar = renumber[key.sidecar];
      plan->entries.push_back(key);
    } else {
      fresh.push_back(actions[i]);
      fresh_keys.push_back(key);
    }
  }
  CheckpointInfo info;
  info.version = version;
  for (size_t begin = 0; begin < fresh.size(); begin += kSidecarFullActions) {
    const size_t end = std::min(fresh.size(), begin + static_cast<size_t>(kSidecarFullActions));
    SILT_ASSIGN_OR_RETURN(
        SidecarPlan::Sidecar sidecar,
        WriteSidecar(table, snapshot, version, fresh, begin, end, settings.write_stats));
    const auto index = static_cast<uint32_t>(plan->sidecars.size());
    for (size_t i = begin; i < end; ++i) {
      SidecarPlan::Entry key = fresh_keys[i];
      key.sidecar = index;
      plan->entries.push_back(key);
    }
    plan->sidecars.push_back(std::move(sidecar));
  }
  std::sort(plan->entries.begin(), plan->entries.end());
  info.sidecars_reused = static_cast<int64_t>(num_kept);
  info.sidecars_written = static_cast<int64_t>(plan->sidecars.size() - num_kept);
  info.file_actions_encoded = static_cast<int64_t>(fresh.size());
  return PublishV2Checkpoint(table, snapshot, settings, std::move(plan), std::move(info));
}

// Writes the top-level file of the V2 checkpoint of `snapshot` whose
// sidecars are `plan`'s, then `_last_checkpoint`; makes `plan` the handle's.
Result<CheckpointInfo> PublishV2Checkpoint(DeltaTable* table, const Snapshot& snapshot,
                                           const CheckpointSettings& settings,
                                           std::shared_ptr<SidecarPlan> plan, CheckpointInfo info) {
  fs::FileSystem* fs = table->file_system().get();
  const int64_t version = snapshot.version();
  // The top-level file: checkpointMetadata, the sidecars, then the non-file
  // actions (delta-spark's order).
  int64_t sidecar_bytes = 0;
  int64_t file_actions = 0;
  for (const SidecarPlan::Sidecar& sidecar : plan->sidecars) {
    sidecar_bytes += sidecar.size_in_bytes;
    file_actions += sidecar.num_actions;
  }
  const int64_t num_add_files = snapshot.num_files();
  JsonWriter w;
  auto checkpoint_metadata = [&](JsonWriter* out) {
    out->BeginObject();
    out->Key("checkpointMetadata");
    out->BeginObject();
    out->Member("version", version);
    out->Key("tags");
    out->BeginObject();
    out->Member("sidecarNumActions", std::to_string(file_actions));
    out->Member("sidecarSizeInBytes", std::to_string(sidecar_bytes));
    out->Member("numOfAddFiles", std::to_string(num_add_files));
    out->Member("sidecarFileSchema", columnar::SchemaToJson(*SidecarSchema()));
    out->EndObject();
    out->EndObject();
    out->EndObject();
  };
  auto take_line = [&w](std::string* out) {
    *out += w.str();
    *out += '\n';
    w.Clear();
  };
  std::string text;
  checkpoint_metadata(&w);
  take_line(&text);
  for (const SidecarPlan::Sidecar& sidecar : plan->sidecars) {
    WriteSidecarAction(&w, sidecar);
    take_line(&text);
  }
  CommitActions non_file;
  non_file.protocol = snapshot.protocol();
  non_file.metadata = snapshot.metadata();
  for (const auto& [app_id, txn] : snapshot.txns()) {
    if (settings.txn_cutoff_ms && txn.last_updated.value_or(0) < *settings.txn_cutoff_ms) continue;
    non_file.txns.push_back(txn);
  }
  for (const auto& [name, domain] : snapshot.domain_metadata()) {
    non_file.domain_metadata.push_back(domain);
  }
  const std::string non_file_text = SerializeCommit(non_file);
  text += non_file_text;

  const std::string name = Status::Concat(
      std::string_view(CheckpointFileName(version)).substr(0, 32), NewUuid(), ".json");
  info.path = fs::JoinPath(table->log_path(), name);
  SILT_RETURN_NOT_OK_CTX(fs->WriteFile(info.path, text), "writing checkpoint ", info.path);
  SILT_ASSIGN_OR_RETURN_CTX(fs::FileInfo stored, fs->GetFileInfo(info.path), "writing checkpoint ",
                            info.path);
  // Only now, with the checkpoint that names them published, does the next
  // checkpoint through this handle build on these sidecars.
  table->set_sidecar_plan(plan);
  const int64_t num_non_file = 2 + static_cast<int64_t>(non_file.txns.size()) +
                               static_cast<int64_t>(non_file.domain_metadata.size());
  info.num_actions = 1 + static_cast<int64_t>(plan->sidecars.size()) + num_non_file + file_actions;
  info.num_add_files = num_add_files;
  info.size_in_bytes = stored.size + sidecar_bytes;

  std::string last = fs::JoinPath(table->log_path(), "_last_checkpoint");
  if (LastCheckpointVersion(fs, last) > info.version) return info;
  w.Clear();
  w.BeginObject();
  w.Member("version", info.version);
  w.Member("size", info.num_actions);
  w.Member("sizeInBytes", info.size_in_bytes);
  w.Member("numOfAddFiles", info.num_add_files);
  w.Key("v2Checkpoint");
  w.BeginObject();
  w.Member("path", name);
  w.Member("sizeInBytes", stored.size);
  w.Member("modificationTime", stored.modification_time_ms);
  w.Key("nonFileActions");
  w.BeginArray();
  size_t start = 0;
  while (start < non_file_text.size()) {
    size_t end = non_file_text.find('\n', start);
    if (end == std::string::npos) end = non_file_text.size();
    w.Raw(std::string_view(non_file_text).substr(start, end - start));
    start = end + 1;
  }
  checkpoint_metadata(&w);
  w.EndArray();
  w.Key("sidecarFiles");
  w.BeginArray();
  for (const SidecarPlan::Sidecar& sidecar : plan->sidecars) {
    w.BeginObject();
    w.Member("path", sidecar.name);
    w.Member("sizeInBytes", sidecar.size_in_bytes);
    w.Member("modificationTime", sidecar.modification_time_ms);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  w.EndObject();
  SILT_RETURN_NOT_OK_CTX(fs->WriteFile(last, w.Take()), "writing ", last);
  return info;
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
  SILT_ASSIGN_OR_RETURN(CheckpointSettings settings, Settings(conf, now_ms));
  SILT_ASSIGN_OR_RETURN(bool v2, CheckpointPolicyV2(conf));
  // The policy says v2 but the table lacks the feature (set by hand, or by
  // an engine that ignores it): the classic checkpoint every reader takes.
  const Protocol& p = snapshot.protocol();
  if (v2 && p.min_writer_version >= 7 && HasFeature(p.writer_features, "v2Checkpoint") &&
      p.min_reader_version >= 3 && HasFeature(p.reader_features, "v2Checkpoint")) {
    return WriteV2Checkpoint(table, snapshot, settings);
  }
  if (snapshot.files_elided()) {
    return Status::Internal("a classic checkpoint of ", table->path(), " at version ",
                            snapshot.version(), " needs every live file; the state holds only ",
                            "those added since version ", snapshot.elided_since());
  }
  return WriteClassicCheckpoint(table, snapshot, settings);
}

SnapshotPtr DeltaTable::ElideCheckpointedFiles(SnapshotPtr snapshot) const {
  if (!elide_checkpointed_files_ || snapshot == nullptr) return snapshot;
  const std::shared_ptr<SidecarPlan> plan = sidecar_plan();
  if (plan == nullptr || plan->version != snapshot->version() ||
      plan->table_id != snapshot->metadata().id || !snapshot->tombstones().empty()) {
    return snapshot;
  }
  std::shared_ptr<Snapshot> elided;
  if (snapshot.use_count() == 1) {
    // The only reference, created non-const by replay: nobody observes it
    // being emptied.
    elided = std::const_pointer_cast<Snapshot>(std::move(snapshot));
  } else {
    elided = std::make_shared<Snapshot>();
    elided->version_ = snapshot->version_;
    elided->timestamp_ms_ = snapshot->timestamp_ms_;
    elided->protocol_ = snapshot->protocol_;
    elided->metadata_ = snapshot->metadata_;
    elided->txns_ = snapshot->txns_;
    elided->domains_ = snapshot->domains_;
    elided->plain_paths_ = snapshot->plain_paths_;
    elided->elided_files_ = snapshot->num_files();
    elided->elided_since_ = elided->version_;
    return elided;
  }
  elided->elided_files_ = elided->num_files();
  elided->elided_since_ = elided->version_;
  std::vector<AddFile>().swap(elided->files_);
  return elided;
}

}  // namespace silt::delta
