#include "silt/dml/rewrite.h"

#include <iterator>
#include <set>

#include "silt/base/clock.h"
#include "silt/columnar/builder.h"
#include "silt/delta/column_mapping.h"
#include "silt/delta/deletion_vector.h"
#include "silt/delta/replace_all.h"
#include "silt/delta/row_tracking.h"
#include "silt/delta/table_properties.h"
#include "silt/delta/table_root.h"

namespace silt::dml {

Result<TargetRows> ReadTargetFile(const delta::DeltaTable& table,
                                  const delta::SnapshotPtr& snapshot, const delta::AddFile& file) {
  delta::ScanOptions options;
  SILT_ASSIGN_OR_RETURN(options.row_tracking,
                        delta::RowTrackingEnabled(snapshot->protocol(), snapshot->metadata()));
  SILT_ASSIGN_OR_RETURN(auto scan, delta::TableScan::Make(table.file_system(), table.path(),
                                                          snapshot->WithFiles({file}), options));
  std::vector<columnar::RecordBatchPtr> batches;
  while (true) {
    SILT_ASSIGN_OR_RETURN(columnar::RecordBatchPtr batch, scan->Next());
    if (batch == nullptr) break;
    if (batch->num_rows > 0) batches.push_back(std::move(batch));
  }
  columnar::RecordBatchPtr all;
  if (batches.empty()) {
    auto empty = std::make_shared<columnar::RecordBatch>();
    empty->schema = scan->schema();
    for (const columnar::Field& f : scan->schema()->fields()) {
      empty->columns.push_back(columnar::MakeNullColumn(f.type, 0));
    }
    all = std::move(empty);
  } else {
    all = batches.size() == 1 ? batches[0] : columnar::ConcatBatches(batches);
  }
  TargetRows out;
  if (!options.row_tracking) {
    out.rows = std::move(all);
    return out;
  }
  // The scan's last column is `_metadata`: split it off the table's columns.
  auto rows = std::make_shared<columnar::RecordBatch>();
  rows->schema = snapshot->schema();
  rows->num_rows = all->num_rows;
  rows->columns.assign(all->columns.begin(), all->columns.end() - 1);
  out.rows = std::move(rows);
  out.row_metadata = all->columns.back();
  return out;
}

Result<std::vector<uint64_t>> PhysicalRows(const delta::DeltaTable& table,
                                           const FileChange& change) {
  std::vector<uint64_t> deleted;
  if (change.file->deletion_vector) {
    SILT_ASSIGN_OR_RETURN(deleted,
                          delta::LoadDeletionVector(table.file_system().get(), table.path(),
                                                    *change.file->deletion_vector));
  }
  std::vector<uint64_t> out;
  out.reserve(change.dropped.size());
  // Position p is the p-th physical row not in `deleted`.
  size_t d = 0;
  uint64_t physical = 0;
  int64_t position = 0;
  for (int64_t want : change.dropped) {
    while (true) {
      while (d < deleted.size() && deleted[d] == physical) {
        ++d;
        ++physical;
      }
      if (position == want) break;
      ++position;
      ++physical;
    }
    out.push_back(physical);
  }
  return out;
}

Status CheckNotNull(const columnar::Schema& schema, const columnar::RecordBatch& batch,
                    const std::string& table_path) {
  for (int i = 0; i < schema.num_fields(); ++i) {
    if (schema.field(i).nullable) continue;
    if (batch.column(i)->null_count > 0) {
      return Status::InvalidArgument(
          "[DELTA_NOT_NULL_CONSTRAINT_VIOLATED] NOT NULL constraint violated for column: ",
          schema.field(i).name, " (Delta table ", table_path, ")");
    }
  }
  return Status::OK();
}

WriteMode WriteModeFor(const delta::Snapshot& snapshot) {
  std::optional<std::string> on =
      delta::GetTableProperty(snapshot.metadata().configuration, "delta.enableDeletionVectors");
  if (!on || (*on != "true" && *on != "TRUE" && *on != "True")) return WriteMode::kCopyOnWrite;
  const std::optional<std::vector<std::string>>& features = snapshot.protocol().writer_features;
  if (!features) return WriteMode::kCopyOnWrite;
  for (const std::string& f : *features) {
    if (f == "deletionVectors") return WriteMode::kDeletionVectors;
  }
  return WriteMode::kCopyOnWrite;
}

Result<std::unique_ptr<DmlWriter>> DmlWriter::Make(delta::DeltaTable* table,
                                                   const delta::SnapshotPtr& snapshot,
                                                   WriteMode mode) {
  std::unique_ptr<DmlWriter> out(new DmlWriter());
  out->table_ = table;
  out->snapshot_ = snapshot;
  out->mode_ = mode;
  delta::TableWriterOptions options;
  SILT_ASSIGN_OR_RETURN(options.num_indexed_cols,
                        delta::DataSkippingNumIndexedCols(snapshot->metadata().configuration));
  SILT_ASSIGN_OR_RETURN(out->row_tracking_, delta::RowTrackingWriteFor(*snapshot, table->path()));
  columnar::SchemaPtr schema = snapshot->schema();
  if (out->row_tracking_) {
    schema = out->row_tracking_->schema;
    // Statistics cover the table's columns only, never the hidden ones.
    if (options.num_indexed_cols < 0 ||
        options.num_indexed_cols > out->row_tracking_->stats_columns) {
      options.num_indexed_cols = out->row_tracking_->stats_columns;
    }
  }
  SILT_ASSIGN_OR_RETURN(delta::ColumnMappingMode mapping,
                        delta::ColumnMappingModeOf(snapshot->metadata().configuration));
  const bool column_mapping = mapping != delta::ColumnMappingMode::kNone;
  SILT_ASSIGN_OR_RETURN(
      out->writer_, delta::MakeTableWriter(table->file_system(), table->path(), schema,
                                           snapshot->partition_columns(), options, column_mapping));
  out->deletion_ms_ = SystemClock().NowMicros() / 1000;
  return out;
}

DmlWriter::~DmlWriter() = default;

Status DmlWriter::WriteChangeData() {
  SILT_ASSIGN_OR_RETURN(delta::ColumnMappingMode mapping,
                        delta::ColumnMappingModeOf(snapshot_->metadata().configuration));
  const bool column_mapping = mapping != delta::ColumnMappingMode::kNone;
  std::vector<columnar::Field> fields = snapshot_->schema()->fields();
  // Under column mapping the change data files hold physical names and
  // field ids like the data files, _change_type under its own name.
  fields.push_back(column_mapping
                       ? delta::HiddenColumn("_change_type", columnar::DataType::String())
                       : columnar::Field{"_change_type", columnar::DataType::String(), true});
  cdc_schema_ = columnar::DataType::Struct(std::move(fields));
  delta::TableWriterOptions options;
  SILT_ASSIGN_OR_RETURN(options.num_indexed_cols,
                        delta::DataSkippingNumIndexedCols(snapshot_->metadata().configuration));
  SILT_ASSIGN_OR_RETURN(
      cdc_writer_,
      delta::MakeTableWriter(table_->file_system(), fs::JoinPath(table_->path(), "_change_data"),
                             cdc_schema_, snapshot_->partition_columns(), options, column_mapping));
  return Status::OK();
}

Status DmlWriter::WriteChanges(const columnar::RecordBatch& rows,
                               const std::vector<const char*>& types) {
  if (cdc_writer_ == nullptr || rows.num_rows == 0) return Status::OK();
  columnar::ColumnBuilder type_column(columnar::DataType::String());
  type_column.Reserve(rows.num_rows);
  for (const char* t : types) type_column.AppendString(t);
  columnar::RecordBatch out;
  out.schema = cdc_schema_;
  out.num_rows = rows.num_rows;
  out.columns = rows.columns;
  out.columns.push_back(type_column.Finish());
  return cdc_writer_->Write(out);
}

Status DmlWriter::WriteData(const columnar::RecordBatch& rows, const columnar::ColumnPtr& row_id,
                            const columnar::ColumnPtr& row_commit_version) {
  if (!row_tracking_) return writer_->Write(rows);
  const columnar::TypePtr& type = columnar::DataType::Long();
  columnar::RecordBatch out;
  out.schema = row_tracking_->schema;
  out.num_rows = rows.num_rows;
  out.columns = rows.columns;
  out.columns.push_back(row_id != nullptr ? row_id : columnar::MakeNullColumn(type, rows.num_rows));
  out.columns.push_back(row_commit_version != nullptr
                            ? row_commit_version
                            : columnar::MakeNullColumn(type, rows.num_rows));
  return writer_->Write(out);
}

Status DmlWriter::WriteReplacement(const FileChange& change) {
  if (!row_tracking_) return writer_->Write(*change.replacement);
  if (change.row_metadata == nullptr ||
      static_cast<int64_t>(change.replacement_of.size()) != change.replacement->num_rows) {
    return Status::Internal("DML on row-tracking Delta table ", table_->path(),
                            ": the updated rows of ", change.file->path,
                            " do not say which rows they replace");
  }
  // An updated row keeps its stable row id; its version becomes the
  // commit's (NULL: the new file's defaultRowCommitVersion).
  return WriteData(*change.replacement,
                   columnar::TakeColumn(*change.row_metadata->children[0], change.replacement_of),
                   nullptr);
}

Status DmlWriter::Apply(const FileChange& change) {
  const bool replaces = change.replacement != nullptr && change.replacement->num_rows > 0;
  if (replaces) {
    SILT_RETURN_NOT_OK(CheckNotNull(*snapshot_->schema(), *change.replacement, table_->path()));
  }
  if (cdc_writer_ != nullptr && !change.dropped.empty()) {
    std::vector<const char*> types(change.dropped.size(), "delete");
    for (size_t i = 0; i < types.size(); ++i) {
      if (change.all_updated || (i < change.updated.size() && change.updated[i])) {
        types[i] = "update_preimage";
      }
    }
    SILT_RETURN_NOT_OK(WriteChanges(*columnar::TakeBatch(*change.rows, change.dropped), types));
    if (replaces) {
      SILT_RETURN_NOT_OK(
          WriteChanges(*change.replacement,
                       std::vector<const char*>(static_cast<size_t>(change.replacement->num_rows),
                                                "update_postimage")));
    }
  }
  if (mode_ == WriteMode::kDeletionVectors) {
    if (change.dropped.empty()) return Status::OK();
    delta::RowDeletion deletion;
    deletion.file = *change.file;
    SILT_ASSIGN_OR_RETURN(deletion.rows, PhysicalRows(*table_, change));
    deletions_.push_back(std::move(deletion));
    ++touched_files_;
    if (replaces) SILT_RETURN_NOT_OK(WriteReplacement(change));
    return Status::OK();
  }
  if (change.dropped.empty() && !replaces && !change.rewrite) return Status::OK();
  const int64_t n = change.rows->num_rows;
  std::vector<int64_t> keep;
  keep.reserve(static_cast<size_t>(n) - change.dropped.size());
  size_t d = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (d < change.dropped.size() && change.dropped[d] == i) {
      ++d;
      continue;
    }
    keep.push_back(i);
  }
  copied_rows_ += static_cast<int64_t>(keep.size());
  if (!keep.empty()) {
    const bool all = static_cast<int64_t>(keep.size()) == n;
    columnar::RecordBatchPtr kept = all ? change.rows : columnar::TakeBatch(*change.rows, keep);
    if (row_tracking_) {
      if (change.row_metadata == nullptr) {
        return Status::Internal("DML on row-tracking Delta table ", table_->path(),
                                ": the rows of ", change.file->path,
                                " were read without their row ids");
      }
      // A copied row keeps its stable row id and row commit version.
      const columnar::Column& metadata = *change.row_metadata;
      SILT_RETURN_NOT_OK(WriteData(
          *kept, all ? metadata.children[0] : columnar::TakeColumn(*metadata.children[0], keep),
          all ? metadata.children[1] : columnar::TakeColumn(*metadata.children[1], keep)));
    } else {
      SILT_RETURN_NOT_OK(writer_->Write(*kept));
    }
  }
  if (replaces) SILT_RETURN_NOT_OK(WriteReplacement(change));
  // Spark's remove for a rewritten file: extended metadata, the add's
  // partition values and size, and its deletion vector (which goes too).
  removes_.push_back(delta::RemoveWithNumRecords(*change.file, deletion_ms_));
  ++touched_files_;
  ++removed_files_;
  removed_bytes_ += change.file->size;
  if (change.file->deletion_vector) ++dv_removed_;
  return Status::OK();
}

void DmlWriter::RemoveWhole(const delta::AddFile& file) {
  removes_.push_back(delta::RemoveWithNumRecords(file, deletion_ms_));
  ++touched_files_;
  ++removed_files_;
  removed_bytes_ += file.size;
  if (file.deletion_vector) {
    ++dv_removed_;
    ++removed_files_with_vector_;
  }
}

Status DmlWriter::Insert(const columnar::RecordBatchPtr& rows) {
  if (rows == nullptr || rows->num_rows == 0) return Status::OK();
  SILT_RETURN_NOT_OK(CheckNotNull(*snapshot_->schema(), *rows, table_->path()));
  SILT_RETURN_NOT_OK(
      WriteChanges(*rows, std::vector<const char*>(static_cast<size_t>(rows->num_rows), "insert")));
  return WriteData(*rows, nullptr, nullptr);
}

Status DmlWriter::Finish() {
  if (finished_) return Status::OK();
  finished_ = true;
  if (cdc_writer_ != nullptr) {
    SILT_ASSIGN_OR_RETURN(std::vector<delta::AddFile> written, cdc_writer_->Finish());
    for (const delta::AddFile& f : written) {
      delta::AddCdcFile cdc;
      cdc.path = "_change_data/" + f.path;
      cdc.partition_values = f.partition_values;
      cdc.size = f.size;
      cdc_files_.push_back(std::move(cdc));
    }
  }
  SILT_ASSIGN_OR_RETURN(adds_, writer_->Finish());
  new_files_ = static_cast<int64_t>(adds_.size());
  for (const delta::AddFile& a : adds_) new_bytes_ += a.size;
  if (mode_ == WriteMode::kDeletionVectors && !deletions_.empty()) {
    SILT_ASSIGN_OR_RETURN(
        delta::DeletionVectorChanges changes,
        delta::DeleteRowsByDeletionVector(table_->file_system().get(), table_->path(), deletions_,
                                          deletion_ms_));
    deletion_vector_file_ = changes.deletion_vector_file;
    removes_.insert(removes_.end(), std::make_move_iterator(changes.removes.begin()),
                    std::make_move_iterator(changes.removes.end()));
    removed_files_ += changes.num_files_fully_deleted;
    std::set<std::string> kept;
    for (const delta::AddFile& a : changes.adds) kept.insert(a.path);
    for (const delta::RowDeletion& d : deletions_) {
      if (kept.count(d.file.path) > 0) continue;
      removed_bytes_ += d.file.size;
      if (d.file.deletion_vector) ++removed_files_with_vector_;
    }
    dv_added_ += changes.num_deletion_vectors_added;
    dv_removed_ += changes.num_deletion_vectors_removed;
    dv_updated_ += changes.num_deletion_vectors_updated;
    // The re-added files first, as delta-spark orders them.
    changes.adds.insert(changes.adds.end(), std::make_move_iterator(adds_.begin()),
                        std::make_move_iterator(adds_.end()));
    adds_ = std::move(changes.adds);
  }
  return Status::OK();
}

void DmlWriter::DeleteWritten() {
  if (!finished_) {
    writer_->Abort().IgnoreError("DML output");
    if (cdc_writer_ != nullptr) cdc_writer_->Abort().IgnoreError("DML change data");
    return;
  }
  for (const delta::AddCdcFile& cdc : cdc_files_) {
    Result<std::string> file = delta::ResolvePathInsideTable(table_->path(), cdc.path);
    if (file.ok()) table_->file_system()->DeleteFile(*file).IgnoreError("uncommitted change data");
  }
  std::set<std::string> existing;  // re-added files: only their vector is new
  for (const delta::RowDeletion& d : deletions_) existing.insert(d.file.path);
  for (const delta::AddFile& add : adds_) {
    if (add.deletion_vector && existing.count(add.path) > 0) continue;
    Result<std::string> file = delta::ResolvePathInsideTable(table_->path(), add.path);
    if (file.ok()) table_->file_system()->DeleteFile(*file).IgnoreError("uncommitted DML output");
  }
  if (!deletion_vector_file_.empty()) {
    table_->file_system()
        ->DeleteFile(deletion_vector_file_)
        .IgnoreError("uncommitted deletion vector file");
  }
}

}  // namespace silt::dml
