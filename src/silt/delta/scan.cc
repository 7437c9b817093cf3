// TableScan: reads a snapshot's live files row group by row group and shapes
// every batch to the output schema (projection, partition columns from the
// log, nulls for columns a file does not have, column mapping at every
// depth, and the casts of type widening).

#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <cstring>

#include "silt/base/strings.h"
#include "silt/delta/data_skipping.h"
#include "silt/delta/deletion_vector.h"
#include "silt/delta/partition_utils.h"
#include "silt/delta/row_tracking.h"
#include "silt/delta/table.h"
#include "silt/delta/type_widening.h"
#include "silt/parquet/file_reader.h"
#include "silt/parquet/variant_reader.h"

namespace silt::delta {

namespace {

using columnar::Column;
using columnar::ColumnPtr;
using columnar::DataType;
using columnar::TypeId;
using columnar::TypePtr;

enum class MappingMode : uint8_t { kNone, kName, kId };

MappingMode ColumnMappingModeOf(const Metadata& metadata) {
  auto it = metadata.configuration.find("delta.columnMapping.mode");
  if (it == metadata.configuration.end()) return MappingMode::kNone;
  if (EqualsIgnoreCase(it->second, "name")) return MappingMode::kName;
  if (EqualsIgnoreCase(it->second, "id")) return MappingMode::kId;
  return MappingMode::kNone;
}

// An integer under `key` in a field's metadata JSON.
std::optional<int64_t> MetadataInt(const columnar::Field& field, std::string_view key) {
  if (field.metadata_json.find(key) == std::string::npos) return std::nullopt;
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  int64_t value = 0;
  if (parser.parse(field.metadata_json).get(root) != simdjson::SUCCESS ||
      root.at_key(key).get_int64().get(value) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  return value;
}

// A table field's identity in data files, at every depth: the name data
// files use (the logical name, or delta.columnMapping.physicalName) and, in
// id mode, delta.columnMapping.id (matched against Parquet field ids).
struct FieldMap {
  std::string physical_name;
  std::optional<int64_t> id;
  // struct: one per field; array: the element; map: key, value.
  std::vector<FieldMap> children;
};

Status MapChildren(const DataType& type, MappingMode mode, const std::string& path, FieldMap* out);

Result<FieldMap> MapField(const columnar::Field& field, MappingMode mode, const std::string& path) {
  FieldMap map;
  map.physical_name = field.name;
  if (mode != MappingMode::kNone) {
    map.physical_name = PhysicalName(field);
    if (map.physical_name.empty()) {
      return Status::Corruption("the table uses column mapping but column '", path,
                                "' has no delta.columnMapping.physicalName");
    }
    if (mode == MappingMode::kId) map.id = MetadataInt(field, "delta.columnMapping.id");
  }
  SILT_RETURN_NOT_OK(MapChildren(*field.type, mode, path, &map));
  return map;
}

Status MapChildren(const DataType& type, MappingMode mode, const std::string& path, FieldMap* out) {
  switch (type.id()) {
    case TypeId::kStruct:
      for (const columnar::Field& child : type.fields()) {
        SILT_ASSIGN_OR_RETURN(FieldMap map, MapField(child, mode, path + "." + child.name));
        out->children.push_back(std::move(map));
      }
      return Status::OK();
    case TypeId::kArray: {
      FieldMap element;
      SILT_RETURN_NOT_OK(MapChildren(*type.element_type(), mode, path + ".element", &element));
      out->children.push_back(std::move(element));
      return Status::OK();
    }
    case TypeId::kMap: {
      FieldMap key;
      FieldMap value;
      SILT_RETURN_NOT_OK(MapChildren(*type.key_type(), mode, path + ".key", &key));
      SILT_RETURN_NOT_OK(MapChildren(*type.value_type(), mode, path + ".value", &value));
      out->children.push_back(std::move(key));
      out->children.push_back(std::move(value));
      return Status::OK();
    }
    default: return Status::OK();
  }
}

// The Parquet field ids of the fields of file struct `file` (Spark's
// "parquet.field.id" metadata, parquet_schema.h), one per field.
std::vector<std::optional<int64_t>> FileFieldIds(const DataType& file) {
  std::vector<std::optional<int64_t>> ids;
  ids.reserve(static_cast<size_t>(file.num_fields()));
  for (const columnar::Field& field : file.fields()) {
    ids.push_back(MetadataInt(field, "parquet.field.id"));
  }
  return ids;
}

// The index of the field of file struct `file` that holds `map`, or -1: in
// id mode the field whose Parquet field id is the column-mapping id (as
// Spark reads with field ids on: a field without a matching id is missing),
// else the field with the physical name (case-insensitive, as Spark
// resolves Parquet columns).
int FindFileField(const DataType& file, const std::vector<std::optional<int64_t>>& file_ids,
                  const FieldMap& map) {
  if (map.id) {
    for (size_t i = 0; i < file_ids.size(); ++i) {
      if (file_ids[i] == map.id) return static_cast<int>(i);
    }
    return -1;
  }
  return file.FieldIndex(map.physical_name);
}

// How a file column becomes the table column, per nesting level.
struct ReadStep {
  // kVariant: a stored variant group (metadata, value, typed_value)
  // reassembled into a VARIANT column.
  enum class Kind : uint8_t { kAsIs, kWiden, kStruct, kArray, kMap, kVariant };
  Kind kind = Kind::kAsIs;
  TypePtr type;  // the table's type
  // kStruct: per table field, the index of the file's field or -1 (nulls).
  std::vector<int> source;
  // kStruct: per table field; kArray: the element; kMap: key, value.
  std::vector<ReadStep> children;
};

Status TypeMismatch(const std::string& path, const std::string& file, const DataType& have,
                    const DataType& want) {
  return Status::NotSupported("reading column '", path, "' of ", file, " stored as ", have.ToDdl(),
                              " into the table type ", want.ToDdl(),
                              " (type conversion other than Delta type widening) is not "
                              "supported");
}

// Plans reading the file column typed `have` as the table type `want`
// described by `map`. Errors: NotSupported naming the column path and the
// file when the shapes differ or a type does not widen.
Result<ReadStep> PlanRead(const FieldMap& map, const TypePtr& want, const TypePtr& have,
                          bool mapped, const std::string& path, const std::string& file) {
  ReadStep step;
  step.type = want;
  if (have->id() == TypeId::kNull && want->id() != TypeId::kNull) {
    // A void column (Parquet UNKNOWN) is all nulls; one silt cannot decode
    // also reads as void, and reading it returns the reader's error.
    step.kind = ReadStep::Kind::kWiden;
    return step;
  }
  switch (want->id()) {
    case TypeId::kVariant:
      if (have->id() == TypeId::kVariant) return step;
      if (!parquet::IsVariantStorage(*have)) return TypeMismatch(path, file, *have, *want);
      step.kind = ReadStep::Kind::kVariant;
      return step;
    case TypeId::kStruct: {
      if (have->id() != TypeId::kStruct) return TypeMismatch(path, file, *have, *want);
      step.kind = ReadStep::Kind::kStruct;
      bool as_is = !mapped && have->Equals(*want);
      const std::vector<std::optional<int64_t>> file_ids =
          mapped ? FileFieldIds(*have) : std::vector<std::optional<int64_t>>();
      for (int i = 0; i < want->num_fields(); ++i) {
        const columnar::Field& field = want->field(i);
        const FieldMap& child = map.children[static_cast<size_t>(i)];
        int src = FindFileField(*have, file_ids, child);
        step.source.push_back(src);
        if (src < 0) {
          as_is = false;
          step.children.emplace_back();
          continue;
        }
        SILT_ASSIGN_OR_RETURN(ReadStep sub, PlanRead(child, field.type, have->field(src).type,
                                                     mapped, path + "." + field.name, file));
        as_is = as_is && src == i && sub.kind == ReadStep::Kind::kAsIs;
        step.children.push_back(std::move(sub));
      }
      if (as_is) step = ReadStep{ReadStep::Kind::kAsIs, want, {}, {}};
      return step;
    }
    case TypeId::kArray: {
      if (have->id() != TypeId::kArray) return TypeMismatch(path, file, *have, *want);
      SILT_ASSIGN_OR_RETURN(ReadStep element,
                            PlanRead(map.children[0], want->element_type(), have->element_type(),
                                     mapped, path + ".element", file));
      if (element.kind == ReadStep::Kind::kAsIs && have->Equals(*want)) return step;
      step.kind = ReadStep::Kind::kArray;
      step.children.push_back(std::move(element));
      return step;
    }
    case TypeId::kMap: {
      if (have->id() != TypeId::kMap) return TypeMismatch(path, file, *have, *want);
      SILT_ASSIGN_OR_RETURN(ReadStep key, PlanRead(map.children[0], want->key_type(),
                                                   have->key_type(), mapped, path + ".key", file));
      SILT_ASSIGN_OR_RETURN(
          ReadStep value, PlanRead(map.children[1], want->value_type(), have->value_type(), mapped,
                                   path + ".value", file));
      if (key.kind == ReadStep::Kind::kAsIs && value.kind == ReadStep::Kind::kAsIs &&
          have->Equals(*want)) {
        return step;
      }
      step.kind = ReadStep::Kind::kMap;
      step.children.push_back(std::move(key));
      step.children.push_back(std::move(value));
      return step;
    }
    default:
      if (have->Equals(*want)) return step;
      if (!CanReadWidened(*have, *want)) return TypeMismatch(path, file, *have, *want);
      step.kind = ReadStep::Kind::kWiden;
      return step;
  }
}

// The table column from the file column `in`, per `step`.
Result<ColumnPtr> ApplyRead(const ReadStep& step, const ColumnPtr& in) {
  switch (step.kind) {
    case ReadStep::Kind::kAsIs: return in;
    case ReadStep::Kind::kWiden: return WidenColumn(*in, step.type);
    case ReadStep::Kind::kVariant: return parquet::VariantFromParquet(*in);
    case ReadStep::Kind::kStruct: {
      auto out = std::make_shared<Column>();
      out->type = step.type;
      out->length = in->length;
      out->null_count = in->null_count;
      out->validity = in->validity;
      for (size_t i = 0; i < step.source.size(); ++i) {
        int src = step.source[i];
        if (src < 0) {
          out->children.push_back(
              columnar::MakeNullColumn(step.type->field(static_cast<int>(i)).type, in->length));
          continue;
        }
        SILT_ASSIGN_OR_RETURN(ColumnPtr child,
                              ApplyRead(step.children[i], in->children[static_cast<size_t>(src)]));
        out->children.push_back(std::move(child));
      }
      return ColumnPtr(std::move(out));
    }
    case ReadStep::Kind::kArray: {
      auto out = std::make_shared<Column>(*in);
      out->type = step.type;
      SILT_ASSIGN_OR_RETURN(ColumnPtr element, ApplyRead(step.children[0], in->children[0]));
      out->children = {std::move(element)};
      return ColumnPtr(std::move(out));
    }
    case ReadStep::Kind::kMap: {
      const ColumnPtr& entries_in = in->children[0];
      auto entries = std::make_shared<Column>(*entries_in);
      entries->type = step.type->map_entries_type();
      SILT_ASSIGN_OR_RETURN(ColumnPtr key, ApplyRead(step.children[0], entries_in->children[0]));
      SILT_ASSIGN_OR_RETURN(ColumnPtr value, ApplyRead(step.children[1], entries_in->children[1]));
      entries->children = {std::move(key), std::move(value)};
      auto out = std::make_shared<Column>(*in);
      out->type = step.type;
      out->children = {std::move(entries)};
      return ColumnPtr(std::move(out));
    }
  }
  return in;
}

struct OutputColumn {
  columnar::Field field;
  bool is_partition = false;
  // The `_metadata` struct of row tracking (ScanOptions::row_tracking).
  bool is_row_metadata = false;
  // The column's name in data files and partitionValues and, at every
  // depth, its fields' (column mapping).
  FieldMap map;
};

// What one data file contributes to each output column.
struct FilePlan {
  std::vector<std::string> read_columns;  // file columns to read, in order
  // Per output column: index into the read batch, or -1 (partition / null).
  std::vector<int> source;
  // Per output column read from the file: how to shape it to the table type.
  std::vector<ReadStep> steps;
  // Per output column: the partition value when it is a partition column.
  std::vector<std::optional<std::string>> partition_values;
  // Row tracking: the file's materialized row id / row commit version
  // columns (index into the read batch, -1 when the file has none) and the
  // add's default generated values.
  int materialized_row_id = -1;
  int materialized_row_commit_version = -1;
  int64_t base_row_id = 0;
  int64_t default_row_commit_version = 0;
};

// Int64 values `fresh(row)`, except where `materialized` (may be null)
// holds a value (PROTOCOL.md "Reader Requirements for Row Tracking").
template <typename Fresh>
ColumnPtr StableRowValues(const Column* materialized, int64_t rows, Fresh fresh) {
  auto values = std::make_shared<Buffer>();
  values->Resize(rows * static_cast<int64_t>(sizeof(int64_t)));
  int64_t* out = values->mutable_data_as<int64_t>();
  for (int64_t row_idx = 0; row_idx < rows; ++row_idx) out[row_idx] = fresh(row_idx);
  if (materialized != nullptr) {
    const int64_t* kept = materialized->raw_values<int64_t>();
    for (int64_t row_idx = 0; row_idx < rows; ++row_idx) {
      if (materialized->IsValid(row_idx)) out[row_idx] = kept[row_idx];
    }
  }
  auto column = std::make_shared<Column>();
  column->type = DataType::Long();
  column->length = rows;
  column->values = std::move(values);
  return column;
}

class TableScanImpl final : public TableScan {
 public:
  TableScanImpl(fs::FileSystemPtr fs, std::string table_path, SnapshotPtr snapshot,
                std::vector<OutputColumn> columns, columnar::SchemaPtr schema,
                std::vector<const AddFile*> files, columnar::Conjunction file_predicate,
                ScanMetrics metrics, bool column_mapping,
                std::optional<MaterializedRowTrackingColumns> row_tracking)
      : fs_(std::move(fs)),
        table_path_(std::move(table_path)),
        snapshot_(std::move(snapshot)),
        columns_(std::move(columns)),
        schema_(std::move(schema)),
        files_(std::move(files)),
        file_predicate_(std::move(file_predicate)),
        metrics_(metrics),
        column_mapping_(column_mapping),
        row_tracking_(row_tracking.has_value()),
        materialized_(row_tracking.value_or(MaterializedRowTrackingColumns{})) {}

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
          file_predicate_.empty() || !deleted_.empty() || row_tracking_
              ? reader_->ReadRowGroup(index, plan_.read_columns)
              : reader_->ReadRowGroupPruned(index, plan_.read_columns, file_predicate_),
          "reading Delta table ", table_path_, " version ", snapshot_->version());
      if (batch->num_rows == 0) continue;
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
    if (file_predicate_.empty() || !deleted_.empty() || row_tracking_) {
      // Row-group skipping changes the file row numbering the deletion
      // vector and the default row ids refer to; such files are read whole.
      for (int i = 0; i < reader_->num_row_groups(); ++i) row_groups_.push_back(i);
    } else {
      SILT_ASSIGN_OR_RETURN_CTX(row_groups_, reader_->SelectRowGroups(file_predicate_),
                                "reading Delta table ", table_path_, " version ",
                                snapshot_->version());
      metrics_.row_groups_skipped +=
          reader_->num_row_groups() - static_cast<int64_t>(row_groups_.size());
    }
    const columnar::Schema& file_schema = *reader_->schema();
    const std::vector<std::optional<int64_t>> file_ids =
        column_mapping_ ? FileFieldIds(file_schema) : std::vector<std::optional<int64_t>>();
    for (const OutputColumn& column : columns_) {
      plan_.steps.emplace_back();
      if (column.is_row_metadata) {
        plan_.source.push_back(-1);
        plan_.partition_values.emplace_back();
        SILT_RETURN_NOT_OK(PlanRowTracking(add, file_schema));
        continue;
      }
      if (column.is_partition) {
        plan_.source.push_back(-1);
        plan_.partition_values.push_back(
            FindPartitionValue(add.partition_values, column.map.physical_name));
        continue;
      }
      plan_.partition_values.emplace_back();
      if (column.map.id && std::none_of(file_ids.begin(), file_ids.end(),
                                        [](const auto& id) { return id.has_value(); })) {
        // Delta writers in id mode store every field id; without any, no
        // column can be found (Spark refuses such files too).
        return Status::Corruption("data file ", current_path_, " of Delta table ", table_path_,
                                  " (column mapping mode id) has no Parquet field ids");
      }
      int file_idx = FindFileField(file_schema, file_ids, column.map);
      if (file_idx < 0) {
        plan_.source.push_back(-1);
        continue;
      }
      const columnar::Field& file_field = file_schema.field(file_idx);
      SILT_ASSIGN_OR_RETURN_CTX(plan_.steps.back(),
                                PlanRead(column.map, column.field.type, file_field.type,
                                         column_mapping_, column.field.name, current_path_),
                                "reading Delta table ", table_path_, " version ",
                                snapshot_->version());
      plan_.source.push_back(static_cast<int>(plan_.read_columns.size()));
      plan_.read_columns.push_back(file_field.name);
    }
    return Status::OK();
  }

  // The add's default row ids and the file's materialized columns, for the
  // `_metadata` column.
  Status PlanRowTracking(const AddFile& add, const columnar::Schema& file_schema) {
    if (!add.base_row_id || !add.default_row_commit_version) {
      return Status::Corruption("data file ", add.path, " of Delta table ", table_path_,
                                " (version ", snapshot_->version(),
                                ") has no baseRowId/defaultRowCommitVersion although row "
                                "tracking is enabled");
    }
    plan_.base_row_id = *add.base_row_id;
    plan_.default_row_commit_version = *add.default_row_commit_version;
    auto find = [&](const std::string& name) -> int {
      int idx = file_schema.FieldIndex(name);
      if (idx < 0 || file_schema.field(idx).type->id() != TypeId::kLong) return -1;
      plan_.read_columns.push_back(file_schema.field(idx).name);
      return static_cast<int>(plan_.read_columns.size()) - 1;
    };
    plan_.materialized_row_id = find(materialized_.row_id);
    plan_.materialized_row_commit_version = find(materialized_.row_commit_version);
    return Status::OK();
  }

  // `_metadata` for the next `rows` rows of the current file (before
  // deletion vectors drop any): stable row ids and row commit versions.
  ColumnPtr RowMetadata(const columnar::RecordBatch* batch, const TypePtr& type, int64_t rows) {
    auto materialized = [&](int index) -> const Column* {
      return batch != nullptr && index >= 0 ? batch->column(index).get() : nullptr;
    };
    const int64_t first = plan_.base_row_id + file_row_;
    const int64_t version = plan_.default_row_commit_version;
    auto out = std::make_shared<Column>();
    out->type = type;
    out->length = rows;
    out->children.push_back(StableRowValues(materialized(plan_.materialized_row_id), rows,
                                            [first](int64_t row) { return first + row; }));
    out->children.push_back(StableRowValues(materialized(plan_.materialized_row_commit_version),
                                            rows, [version](int64_t) { return version; }));
    return out;
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

  Result<columnar::RecordBatchPtr> Assemble(const columnar::RecordBatch* batch, int64_t rows) {
    auto out = std::make_shared<columnar::RecordBatch>();
    out->schema = schema_;
    out->num_rows = rows;
    out->columns.reserve(columns_.size());
    for (size_t out_idx = 0; out_idx < columns_.size(); ++out_idx) {
      const OutputColumn& column = columns_[out_idx];
      if (column.is_row_metadata) {
        out->columns.push_back(RowMetadata(batch, column.field.type, rows));
      } else if (column.is_partition) {
        SILT_ASSIGN_OR_RETURN_CTX(
            columnar::ColumnPtr col,
            MakePartitionColumn(column.field.type, plan_.partition_values[out_idx], rows),
            "partition column '", column.field.name, "' of ", current_path_);
        out->columns.push_back(std::move(col));
      } else if (plan_.source[out_idx] >= 0) {
        SILT_ASSIGN_OR_RETURN_CTX(
            columnar::ColumnPtr col,
            ApplyRead(plan_.steps[out_idx], batch->column(plan_.source[out_idx])), "column '",
            column.field.name, "' of ", current_path_);
        out->columns.push_back(std::move(col));
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
  // Column mapping is on: nested fields are renamed to their logical names.
  bool column_mapping_ = false;
  // The `_metadata` row tracking column is read, from these columns.
  bool row_tracking_ = false;
  MaterializedRowTrackingColumns materialized_;

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

columnar::TypePtr RowMetadataType() {
  static const columnar::TypePtr type =
      DataType::Struct({{"row_id", DataType::Long(), false, "{}"},
                        {"row_commit_version", DataType::Long(), false, "{}"}});
  return type;
}

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
  const MappingMode mode = ColumnMappingModeOf(snapshot->metadata());
  for (int idx : indices) {
    OutputColumn column;
    column.field = table_schema.field(idx);
    column.is_partition = is_partition(column.field.name);
    SILT_ASSIGN_OR_RETURN_CTX(column.map, MapField(column.field, mode, column.field.name),
                              "Delta table ", table_path, " version ", snapshot->version());
    fields.push_back(column.field);
    output.push_back(std::move(column));
  }
  std::optional<MaterializedRowTrackingColumns> row_tracking;
  if (options.row_tracking) {
    SILT_ASSIGN_OR_RETURN(bool enabled,
                          RowTrackingEnabled(snapshot->protocol(), snapshot->metadata()));
    row_tracking = MaterializedColumns(snapshot->metadata());
    if (!enabled || !row_tracking) {
      return Status::InvalidArgument("Delta table ", table_path, " (version ", snapshot->version(),
                                     ") does not have row tracking enabled, so ",
                                     kRowMetadataColumn,
                                     ".row_id and .row_commit_version cannot be read "
                                     "(delta.enableRowTracking)");
    }
    OutputColumn column;
    column.field = columnar::Field{std::string(kRowMetadataColumn), RowMetadataType(), false, "{}"};
    column.is_row_metadata = true;
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
  // top-level data columns take part (partition columns are not stored), and
  // not columns whose type was widened (older files hold the old type).
  columnar::Conjunction file_predicate;
  for (const columnar::ColumnPredicate& p : options.predicate) {
    if (p.column.find('.') != std::string::npos || is_partition(p.column)) continue;
    int idx = table_schema.FieldIndex(p.column);
    if (idx < 0) continue;
    const columnar::Field& field = table_schema.field(idx);
    if (field.metadata_json.find("delta.typeChanges") != std::string::npos) continue;
    columnar::ColumnPredicate physical = p;
    physical.column = field.name;
    if (mode != MappingMode::kNone) {
      physical.column = PhysicalName(field);
      if (physical.column.empty()) continue;
    }
    file_predicate.push_back(std::move(physical));
  }
  return std::unique_ptr<TableScan>(new TableScanImpl(
      std::move(fs), std::move(table_path), std::move(snapshot), std::move(output),
      columnar::DataType::Struct(std::move(fields)), std::move(files), std::move(file_predicate),
      metrics, mode != MappingMode::kNone, std::move(row_tracking)));
}

}  // namespace silt::delta
