// Checkpoint writing's parts, internal to delta/checkpoint_writer*: the
// entry (checkpoint_writer.cc: WriteCheckpoint picks the kind, the table
// settings a checkpoint reads, _last_checkpoint's version), the
// action-to-row encoding in delta-spark's checkpoint layout
// (checkpoint_writer_rows.cc), the classic single-file checkpoint
// (checkpoint_writer_classic.cc) and the V2 checkpoint, its top-level file
// and sidecars (checkpoint_writer_v2.cc).
//
// Thread safety: as checkpoint_writer.h; a CheckpointRows is used by one
// thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/builder.h"
#include "silt/columnar/column.h"
#include "silt/delta/checkpoint_writer.h"
#include "silt/delta/table.h"
#include "silt/fs/file_system.h"
#include "silt/parquet/file_writer.h"

namespace silt::delta::checkpoint_writer_internal {

// --- The action-to-row encoding (checkpoint_writer_rows.cc).

// delta-spark's classic checkpoint schema (Spark 3.4+/Delta 2.4+ layout, as
// in the golden tables' checkpoints), without the optional *_parsed columns.
columnar::SchemaPtr CheckpointSchema();

enum Col { kTxn = 0, kAdd, kRemove, kMetaData, kProtocol, kDomainMetadata, kNumCols };

// A V2 checkpoint's sidecar files hold file actions only: the add and remove
// columns of the classic layout (as delta-spark's sidecars).
columnar::SchemaPtr SidecarSchema();
enum SidecarCol { kSidecarAdd = 0, kSidecarRemove };

// Writes rows of `schema` (top-level struct columns, each row setting one)
// in batches of kTargetBatchRows.
class CheckpointRows {
 public:
  CheckpointRows(parquet::ParquetFileWriter* writer, columnar::SchemaPtr schema)
      : writer_(writer), schema_(std::move(schema)) {
    for (int i = 0; i < schema_->num_fields(); ++i) {
      builders_.push_back(std::make_unique<columnar::ColumnBuilder>(schema_->field(i).type));
    }
  }

  // The builder of column `col` for a new row; the caller fills the struct
  // and marks it valid, then calls EndRow.
  columnar::ColumnBuilder* Begin(int col) {
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
  std::vector<std::unique_ptr<columnar::ColumnBuilder>> builders_;
  int64_t rows_ = 0;
  int64_t pending_ = 0;
};

// One add row (the builder of the add column, from CheckpointRows::Begin).
void AppendAdd(columnar::ColumnBuilder* b, const AddFile& add, bool write_stats);
// One remove row (the builder of the remove column).
void AppendRemove(columnar::ColumnBuilder* b, const RemoveFile& remove);

// A tombstone a checkpoint keeps: delta-spark keeps a tombstone without
// deletionTimestamp (treated as 0 = expired) only until the retention
// passes; so do we.
bool KeepTombstone(const RemoveFile& remove, int64_t tombstone_cutoff_ms);

// Writer options for checkpoint and sidecar files. Paths and stats are
// (nearly) unique per row, so a dictionary over them never pays off: they
// are written PLAIN instead of being hashed into a dictionary first.
parquet::WriterOptions CheckpointWriterOptions();

// The rows of the whole state of `snapshot` in the classic layout: protocol,
// metaData, the txns not older than `txn_cutoff_ms`, every add, the
// tombstones KeepTombstone keeps, the domains; then flushes `rows`.
Status WriteRows(const Snapshot& snapshot, int64_t tombstone_cutoff_ms,
                 std::optional<int64_t> txn_cutoff_ms, bool write_stats, CheckpointRows* rows);

// --- Shared by both kinds (checkpoint_writer.cc).

// What a checkpoint needs from the table properties.
struct CheckpointSettings {
  int64_t tombstone_cutoff_ms = 0;
  std::optional<int64_t> txn_cutoff_ms;
  bool write_stats = true;
};

// Version recorded in an existing _last_checkpoint, or -1.
int64_t LastCheckpointVersion(fs::FileSystem* fs, const std::string& file);

// --- The kinds of checkpoint. Both write `_last_checkpoint` unless it
// records a newer version.

// The classic `<version>.checkpoint.parquet` (checkpoint_writer_classic.cc).
Result<CheckpointInfo> WriteClassicCheckpoint(DeltaTable* table, const Snapshot& snapshot,
                                              const CheckpointSettings& settings);

// Writes a classic checkpoint's `_last_checkpoint` (with `schema_json` as
// its checkpointSchema unless empty) unless it records a newer version.
Status WriteClassicLastCheckpoint(fs::FileSystem* fs, const std::string& log_path,
                                  const CheckpointInfo& info, std::string_view schema_json);

// A V2 checkpoint: its sidecars, then the top-level
// `<version>.checkpoint.<uuid>.json` (checkpoint_writer_v2.cc).
Result<CheckpointInfo> WriteV2Checkpoint(DeltaTable* table, const Snapshot& snapshot,
                                         const CheckpointSettings& settings);

}  // namespace silt::delta::checkpoint_writer_internal
