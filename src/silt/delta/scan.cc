// TableScan: reads a snapshot's live files row group by row group and shapes
// every batch to the output schema (projection, partition columns from the
// log, nulls for columns a file does not have).

#include <simdjson.h>

#include <algorithm>
#include <cctype>

#include "silt/base/strings.h"
#include "silt/delta/data_skipping.h"
#include "silt/delta/deletion_vector.h"
#include "silt/delta/partition_utils.h"
#include "silt/delta/table.h"
#include "silt/parquet/file_reader.h"

namespace silt::delta {

namespace {

struct OutputColumn {
  columnar::Field field;
  bool is_partition = false;
  // The column's name in data files and partitionValues: the field name, or
  // delta.columnMapping.physicalName when column mapping is on.
  std::string physical_name;
};

bool ColumnMappingActive(const Metadata& metadata) {
  auto it = metadata.configuration.find("delta.columnMapping.mode");
  return it != metadata.configuration.end() && it->second != "none" && it->second != "NONE" &&
         !it->second.empty();
}

// What one data file contributes to each output column.
struct FilePlan {
  std::vector<std::string> read_columns;  // file columns to read, in order
  // Per output column: index into the read batch, or -1 (partition / null).
  std::vector<int> source;
  // Per output column: the partition value when it is a partition column.
  std::vector<std::optional<std::string>> partition_values;
};

class TableScanImpl final : public TableScan {
 public:
  TableScanImpl(fs::FileSystemPtr fs, std::string table_path, SnapshotPtr snapshot,
                std::vector<OutputColumn> columns, columnar::SchemaPtr schema,
                std::vector<const AddFile*> files, columnar::Conjunction file_predicate,
                ScanMetrics metrics)
      : fs_(std::move(fs)),
        table_path_(std::move(table_path)),
        snapshot_(std::move(snapshot)),
        columns_(std::move(columns)),
        schema_(std::move(schema)),
        files_(std::move(files)),
        file_predicate_(std::move(file_predicate)),
        metrics_(metrics) {}

  const columnar::SchemaPtr& schema() const override { return schema_; }
  const ScanMetrics& metrics() const override { return metrics_; }

  Result<columnar::RecordBatchPtr> Next() override {
    while (true) {
      if (reader_ == nullptr) {
        if (file_idx_ >= files_.size()) return columnar::RecordBatchPtr();
        SILT_RETURN_NOT_OK(OpenFile(*files_[file_idx_]));
      }
      if (plan_.read_columns.empty()) {
        // Nothing to read from the file itself (only partition columns or
        // columns it lacks): one batch with the file's row count.
        int64_t rows = reader_->num_rows();
        if (rows == 0) {
          CloseFile();
          continue;
        }
        SILT_ASSIGN_OR_RETURN(columnar::RecordBatchPtr out, Assemble(nullptr, rows));
        out = DropDeletedRows(std::move(out));
        CloseFile();
        if (out->num_rows == 0) continue;
        return out;
      }
      if (row_group_ >= static_cast<int>(row_groups_.size())) {
        CloseFile();
        continue;
      }
      int index = row_groups_[static_cast<size_t>(row_group_++)];
      // Page pruning returns a subset of a row group's rows, which would
      // misalign deletion-vector row indexes: files with one read whole.
      SILT_ASSIGN_OR_RETURN_CTX(
          columnar::RecordBatchPtr batch,
          file_predicate_.empty() || !deleted_.empty()
              ? reader_->ReadRowGroup(index, plan_.read_columns)
              : reader_->ReadRowGroupPruned(index, plan_.read_columns, file_predicate_),
          "reading Delta table ", table_path_, " version ", snapshot_->version());
      if (batch->num_rows == 0) continue;
      SILT_RETURN_NOT_OK(CheckTypes(*batch));
      SILT_ASSIGN_OR_RETURN(columnar::RecordBatchPtr out, Assemble(batch.get(), batch->num_rows));
      out = DropDeletedRows(std::move(out));
      if (out->num_rows == 0) continue;
      return out;
    }
  }

 private:
  Status OpenFile(const AddFile& add) {
    SILT_ASSIGN_OR_RETURN(current_path_, ResolveDataFilePath(table_path_, add.path));
    SILT_ASSIGN_OR_RETURN_CTX(reader_, parquet::ParquetFileReader::Open(fs_.get(), current_path_),
                              "reading Delta table ", table_path_, " version ",
                              snapshot_->version());
    row_group_ = 0;
    row_groups_.clear();
    plan_ = FilePlan();
    file_row_ = 0;
    deleted_.clear();
    if (add.deletion_vector) {
      SILT_ASSIGN_OR_RETURN_CTX(deleted_,
                                LoadDeletionVector(fs_.get(), table_path_, *add.deletion_vector),
                                "reading the deletion vector of ", current_path_,
                                " in Delta table ", table_path_, " version ", snapshot_->version());
    }
    metrics_.row_groups_total += reader_->num_row_groups();
    if (file_predicate_.empty() || !deleted_.empty()) {
      // Row-group skipping changes the file row numbering the deletion
      // vector refers to; such files are read whole.
      for (int i = 0; i < reader_->num_row_groups(); ++i) row_groups_.push_back(i);
    } else {
      SILT_ASSIGN_OR_RETURN_CTX(row_groups_, reader_->SelectRowGroups(file_predicate_),
                                "reading Delta table ", table_path_, " version ",
                                snapshot_->version());
      metrics_.row_groups_skipped +=
          reader_->num_row_groups() - static_cast<int64_t>(row_groups_.size());
    }
    const columnar::Schema& file_schema = *reader_->schema();
    for (const OutputColumn& column : columns_) {
      if (column.is_partition) {
        plan_.source.push_back(-1);
        plan_.partition_values.push_back(
            FindPartitionValue(add.partition_values, column.physical_name));
        continue;
      }
      plan_.partition_values.emplace_back();
      int file_idx = file_schema.FieldIndex(column.physical_name);
      if (file_idx < 0) {
        plan_.source.push_back(-1);
        continue;
      }
      plan_.source.push_back(static_cast<int>(plan_.read_columns.size()));
      plan_.read_columns.push_back(file_schema.field(file_idx).name);
    }
    return Status::OK();
  }

  // Removes the rows the file's deletion vector marks (row indices count
  // from the file's first row across row groups); `batch` holds the next
  // num_rows rows of the current file.
  columnar::RecordBatchPtr DropDeletedRows(columnar::RecordBatchPtr batch) {
    const int64_t first = file_row_;
    const int64_t rows = batch->num_rows;
    file_row_ += rows;
    if (deleted_.empty()) return batch;
    auto it = std::lower_bound(deleted_.begin(), deleted_.end(), static_cast<uint64_t>(first));
    if (it == deleted_.end() || *it >= static_cast<uint64_t>(first + rows)) return batch;
    std::vector<int64_t> keep;
    keep.reserve(static_cast<size_t>(rows));
    for (int64_t row_idx = 0; row_idx < rows; ++row_idx) {
      if (it != deleted_.end() && *it == static_cast<uint64_t>(first + row_idx)) {
        ++it;
        continue;
      }
      keep.push_back(row_idx);
    }
    return columnar::TakeBatch(*batch, keep);
  }

  void CloseFile() {
    reader_.reset();
    ++file_idx_;
  }

  // Type changes need casts (type widening), which silt does not do yet; a
  // mismatch is reported rather than producing mistyped columns.
  Status CheckTypes(const columnar::RecordBatch& batch) const {
    for (size_t out_idx = 0; out_idx < columns_.size(); ++out_idx) {
      int src = plan_.source[out_idx];
      if (src < 0) continue;
      const columnar::TypePtr& have = batch.column(src)->type;
      const columnar::TypePtr& want = columns_[out_idx].field.type;
      if (!have->Equals(*want)) {
        return Status::NotSupported("reading column '", columns_[out_idx].field.name, "' of ",
                                    current_path_, " stored as ", have->ToDdl(),
                                    " into the table type ", want->ToDdl(),
                                    " (type conversion) is not supported yet");
      }
    }
    return Status::OK();
  }

  Result<columnar::RecordBatchPtr> Assemble(const columnar::RecordBatch* batch, int64_t rows) {
    auto out = std::make_shared<columnar::RecordBatch>();
    out->schema = schema_;
    out->num_rows = rows;
    out->columns.reserve(columns_.size());
    for (size_t out_idx = 0; out_idx < columns_.size(); ++out_idx) {
      const OutputColumn& column = columns_[out_idx];
      if (column.is_partition) {
        SILT_ASSIGN_OR_RETURN_CTX(
            columnar::ColumnPtr col,
            MakePartitionColumn(column.field.type, plan_.partition_values[out_idx], rows),
            "partition column '", column.field.name, "' of ", current_path_);
        out->columns.push_back(std::move(col));
      } else if (plan_.source[out_idx] >= 0) {
        out->columns.push_back(batch->column(plan_.source[out_idx]));
      } else {
        out->columns.push_back(columnar::MakeNullColumn(column.field.type, rows));
      }
    }
    return columnar::RecordBatchPtr(std::move(out));
  }

  fs::FileSystemPtr fs_;
  std::string table_path_;
  SnapshotPtr snapshot_;
  std::vector<OutputColumn> columns_;
  columnar::SchemaPtr schema_;

  // The files left after data skipping, and the predicate (on physical
  // names of data columns) for row-group and page pruning.
  std::vector<const AddFile*> files_;
  columnar::Conjunction file_predicate_;
  ScanMetrics metrics_;

  size_t file_idx_ = 0;
  std::unique_ptr<parquet::ParquetFileReader> reader_;
  std::string current_path_;
  // Indexes of the row groups to read in the current file, and the next one.
  std::vector<int> row_groups_;
  int row_group_ = 0;
  FilePlan plan_;
  // Rows of the current file before the next batch, and the rows its
  // deletion vector deletes (sorted).
  int64_t file_row_ = 0;
  std::vector<uint64_t> deleted_;
};

}  // namespace

Result<std::unique_ptr<TableScan>> TableScan::Make(fs::FileSystemPtr fs, std::string table_path,
                                                   SnapshotPtr snapshot,
                                                   std::vector<std::string> columns) {
  ScanOptions options;
  options.columns = std::move(columns);
  return Make(std::move(fs), std::move(table_path), std::move(snapshot), std::move(options));
}

Result<std::unique_ptr<TableScan>> TableScan::Make(fs::FileSystemPtr fs, std::string table_path,
                                                   SnapshotPtr snapshot, ScanOptions options) {
  std::vector<std::string>& columns = options.columns;
  if (fs == nullptr) return Status::InvalidArgument("no file system given for ", table_path);
  if (snapshot == nullptr || snapshot->schema() == nullptr) {
    return Status::InvalidArgument("no snapshot given to scan Delta table ", table_path);
  }
  const columnar::Schema& table_schema = *snapshot->schema();
  auto is_partition = [&](std::string_view name) {
    for (const std::string& p : snapshot->partition_columns()) {
      if (EqualsIgnoreCase(p, name)) return true;
    }
    return false;
  };
  std::vector<int> indices;
  if (columns.empty()) {
    for (int idx = 0; idx < table_schema.num_fields(); ++idx) indices.push_back(idx);
  } else {
    for (const std::string& name : columns) {
      int idx = table_schema.FieldIndex(name);
      if (idx < 0) {
        return Status::InvalidArgument("column '", name, "' is not in Delta table ", table_path,
                                       " (version ", snapshot->version(), ")");
      }
      indices.push_back(idx);
    }
  }
  std::vector<OutputColumn> output;
  std::vector<columnar::Field> fields;
  const bool column_mapping = ColumnMappingActive(snapshot->metadata());
  for (int idx : indices) {
    OutputColumn column;
    column.field = table_schema.field(idx);
    column.is_partition = is_partition(column.field.name);
    column.physical_name = column.field.name;
    if (column_mapping) {
      columnar::TypeId type_id = column.field.type->id();
      if (type_id == columnar::TypeId::kStruct || type_id == columnar::TypeId::kArray ||
          type_id == columnar::TypeId::kMap) {
        return Status::NotSupported("reading the nested column '", column.field.name,
                                    "' of a table with columnMapping (column mapping of nested "
                                    "fields) is not supported yet: ",
                                    table_path);
      }
      std::string physical = PhysicalName(column.field);
      if (physical.empty()) {
        return Status::Corruption("Delta table ", table_path, " uses column mapping but column '",
                                  column.field.name, "' has no delta.columnMapping.physicalName");
      }
      column.physical_name = std::move(physical);
    }
    fields.push_back(column.field);
    output.push_back(std::move(column));
  }
  while (table_path.size() > 1 && table_path.back() == '/') table_path.pop_back();

  ScanMetrics metrics;
  metrics.files_total = static_cast<int64_t>(snapshot->files().size());
  std::vector<const AddFile*> files;
  files.reserve(snapshot->files().size());
  FileSkipper skipper = FileSkipper::Make(snapshot->metadata(), options.predicate);
  for (const AddFile& add : snapshot->files()) {
    switch (skipper.empty() ? SkipDecision::kKeep : skipper.Decide(add)) {
      case SkipDecision::kKeep: files.push_back(&add); break;
      case SkipDecision::kSkipByPartition: ++metrics.files_skipped_by_partition; break;
      case SkipDecision::kSkipByStats: ++metrics.files_skipped_by_stats; break;
    }
  }
  // Row groups are judged on the files' own (physical) column names; only
  // top-level data columns take part (partition columns are not stored).
  columnar::Conjunction file_predicate;
  for (const columnar::ColumnPredicate& p : options.predicate) {
    if (p.column.find('.') != std::string::npos || is_partition(p.column)) continue;
    int idx = table_schema.FieldIndex(p.column);
    if (idx < 0) continue;
    columnar::ColumnPredicate physical = p;
    physical.column = table_schema.field(idx).name;
    if (column_mapping) {
      physical.column = PhysicalName(table_schema.field(idx));
      if (physical.column.empty()) continue;
    }
    file_predicate.push_back(std::move(physical));
  }
  return std::unique_ptr<TableScan>(
      new TableScanImpl(std::move(fs), std::move(table_path), std::move(snapshot),
                        std::move(output), columnar::DataType::Struct(std::move(fields)),
                        std::move(files), std::move(file_predicate), metrics));
}

}  // namespace silt::delta
