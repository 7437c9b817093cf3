// TableWriter: splits batches by partition tuple and streams each group into
// its own Parquet file under a Hive-style directory.

#include <cstdio>
#include <optional>
#include <string>
#include <unordered_map>

#include "silt/base/clock.h"
#include "silt/base/uuid.h"
#include "silt/delta/partition_utils.h"
#include "silt/delta/stats.h"
#include "silt/delta/table.h"
#include "silt/delta/table_root.h"

namespace silt::delta {

namespace {

// Dictionary codes of one partition column: 0 for null, 1.. for each
// distinct value in order of first appearance. One typed pass per column;
// values are compared by their bytes, so no per-row allocation happens.
void PartitionCodes(const columnar::Column& column, std::vector<uint32_t>* codes) {
  const int64_t n = column.length;
  codes->assign(static_cast<size_t>(n), 0);
  const columnar::DataType& type = *column.type;
  if (type.id() == columnar::TypeId::kNull) return;
  if (type.id() == columnar::TypeId::kBoolean) {
    for (int64_t row_idx = 0; row_idx < n; ++row_idx) {
      if (column.IsValid(row_idx)) (*codes)[row_idx] = column.BoolValue(row_idx) ? 2 : 1;
    }
    return;
  }
  std::unordered_map<std::string_view, uint32_t> dictionary;
  const bool var_width =
      type.id() == columnar::TypeId::kString || type.id() == columnar::TypeId::kBinary;
  const auto width = static_cast<size_t>(type.byte_width());
  const char* fixed = column.values ? reinterpret_cast<const char*>(column.values->data()) : "";
  for (int64_t row_idx = 0; row_idx < n; ++row_idx) {
    if (!column.IsValid(row_idx)) continue;
    std::string_view key =
        var_width ? column.StringValue(row_idx) : std::string_view(fixed + row_idx * width, width);
    auto [it, inserted] = dictionary.try_emplace(key, static_cast<uint32_t>(dictionary.size() + 1));
    (*codes)[row_idx] = it->second;
  }
}

int64_t NowMillis() { return SystemClock().NowMicros() / 1000; }

// The longest file or directory name local file systems take (NAME_MAX).
constexpr size_t kMaxPathComponentBytes = 255;

// A partition value that cannot become a directory name fails the batch
// naming the column and the first row that holds it: a NUL byte (Spark's
// escaping keeps it, and no path can hold it), or a `col=value` name longer
// than kMaxPathComponentBytes once escaped. Both are refused on every file
// system, so a table can be copied between object stores and local disks.
Status CheckPartitionPathValue(const std::string& column, const std::optional<std::string>& value,
                               int64_t row) {
  if (!value) return Status::OK();
  if (value->find('\0') != std::string::npos) {
    return Status::InvalidArgument("partition column '", column, "', row ", row,
                                   " of the batch: the value contains a NUL byte (at byte ",
                                   static_cast<int64_t>(value->find('\0')),
                                   "), which no directory name can hold");
  }
  const size_t length =
      EscapePartitionPathName(column).size() + 1 + EscapePartitionPathName(*value).size();
  if (length > kMaxPathComponentBytes) {
    return Status::InvalidArgument(
        "partition column '", column, "', row ", row, " of the batch: the value (",
        static_cast<int64_t>(value->size()), " bytes, starting '", value->substr(0, 32),
        "') makes a directory name of ", static_cast<int64_t>(length), " bytes; at most ",
        static_cast<int64_t>(kMaxPathComponentBytes), " fit");
  }
  return Status::OK();
}

class TableWriterImpl final : public TableWriter {
 public:
  TableWriterImpl(fs::FileSystemPtr fs, std::string table_path, columnar::SchemaPtr schema,
                  columnar::SchemaPtr data_schema, std::vector<int> partition_indices,
                  std::vector<int> data_indices, TableWriterOptions options)
      : fs_(std::move(fs)),
        table_path_(std::move(table_path)),
        schema_(std::move(schema)),
        data_schema_(std::move(data_schema)),
        partition_indices_(std::move(partition_indices)),
        data_indices_(std::move(data_indices)),
        options_(std::move(options)) {}

  ~TableWriterImpl() override {
    for (auto& [dir, file] : open_) {
      file.writer->Abort().IgnoreError("writer destroyed without Finish");
    }
  }

  Status Write(const columnar::RecordBatch& batch) override {
    if (batch.num_columns() != schema_->num_fields()) {
      return Status::InvalidArgument("batch has ", batch.num_columns(), " columns but Delta table ",
                                     table_path_, " has ", schema_->num_fields());
    }
    for (int col_idx = 0; col_idx < batch.num_columns(); ++col_idx) {
      const columnar::Field& field = schema_->field(col_idx);
      if (!batch.column(col_idx)->type->Equals(*field.type)) {
        return Status::InvalidArgument("column '", field.name, "' has type ",
                                       batch.column(col_idx)->type->ToDdl(), " in the batch but ",
                                       field.type->ToDdl(), " in Delta table ", table_path_);
      }
    }
    if (batch.num_rows == 0) return Status::OK();
    auto data = std::make_shared<columnar::RecordBatch>();
    data->schema = data_schema_;
    data->num_rows = batch.num_rows;
    for (int idx : data_indices_) data->columns.push_back(batch.column(idx));

    if (partition_indices_.empty()) return WriteGroup(PartitionValues(), *data);

    // Group rows by partition tuple: combine the per-column codes into a
    // group id column by column.
    const int64_t n = batch.num_rows;
    std::vector<uint32_t> group(static_cast<size_t>(n), 0);
    std::vector<uint32_t> codes;
    uint32_t num_groups = 1;
    for (int idx : partition_indices_) {
      PartitionCodes(*batch.column(idx), &codes);
      std::unordered_map<uint64_t, uint32_t> combined;
      for (int64_t row_idx = 0; row_idx < n; ++row_idx) {
        uint64_t key = (static_cast<uint64_t>(group[row_idx]) << 32) | codes[row_idx];
        auto [it, inserted] = combined.try_emplace(key, static_cast<uint32_t>(combined.size()));
        group[row_idx] = it->second;
      }
      num_groups = static_cast<uint32_t>(combined.size());
    }
    std::vector<std::vector<int64_t>> rows(num_groups);
    for (int64_t row_idx = 0; row_idx < n; ++row_idx) rows[group[row_idx]].push_back(row_idx);

    for (const auto& group_rows : rows) {
      PartitionValues values;
      for (int idx : partition_indices_) {
        values.emplace_back(schema_->field(idx).name,
                            SerializePartitionValue(*batch.column(idx), group_rows.front()));
        SILT_RETURN_NOT_OK(
            CheckPartitionPathValue(values.back().first, values.back().second, group_rows.front()));
      }
      if (num_groups == 1) {
        SILT_RETURN_NOT_OK(WriteGroup(std::move(values), *data));
      } else {
        columnar::RecordBatchPtr part = columnar::TakeBatch(*data, group_rows);
        SILT_RETURN_NOT_OK(WriteGroup(std::move(values), *part));
      }
    }
    return Status::OK();
  }

  Result<std::vector<AddFile>> Finish() override {
    for (auto& [dir, file] : open_) {
      SILT_ASSIGN_OR_RETURN(AddFile add, CloseFile(&file));
      finished_.push_back(std::move(add));
    }
    open_.clear();
    std::vector<AddFile> out = std::move(finished_);
    finished_.clear();
    written_.clear();
    return out;
  }

  Status Abort() override {
    Status first;
    for (auto& [dir, file] : open_) {
      Status st = file.writer->Abort();
      if (first.ok() && !st.ok()) first = st;
    }
    open_.clear();
    for (const std::string& path : written_) {
      Status st = fs_->DeleteFile(path);
      if (first.ok() && !st.ok() && !st.IsNotFound()) first = st;
    }
    written_.clear();
    finished_.clear();
    return first;
  }

 private:
  struct OpenFile {
    std::string relative_path;  // not URI-encoded
    std::string physical_path;
    PartitionValues partition_values;
    std::unique_ptr<parquet::ParquetFileWriter> writer;
  };

  std::string NextFileName() {
    char counter[16];
    std::snprintf(counter, sizeof(counter), "%05lld", static_cast<long long>(file_counter_++));
    std::string name = "part-";
    name += counter;
    name += '-';
    name += NewUuid();
    name += ".c000";
    std::string_view ext = parquet::CompressionFileExtension(options_.parquet.compression);
    if (!ext.empty()) {
      name += '.';
      name += ext;
    }
    name += ".parquet";
    return name;
  }

  Status WriteGroup(PartitionValues values, const columnar::RecordBatch& data) {
    std::string dir = PartitionDirectory(values);
    auto it = open_.find(dir);
    if (it == open_.end()) {
      OpenFile file;
      std::string name = NextFileName();
      file.relative_path = dir.empty() ? name : dir + "/" + name;
      // Partition directories are escaped, so this always holds; it is the
      // same check every command that writes under a table makes.
      SILT_ASSIGN_OR_RETURN_CTX(
          file.physical_path,
          CheckInsideTable(table_path_, fs::JoinPath(table_path_, file.relative_path)),
          "writing a data file of Delta table ", table_path_);
      file.partition_values = std::move(values);
      SILT_ASSIGN_OR_RETURN_CTX(file.writer,
                                parquet::ParquetFileWriter::Open(fs_.get(), file.physical_path,
                                                                 data_schema_, options_.parquet),
                                "writing a data file of Delta table ", table_path_);
      it = open_.emplace(dir, std::move(file)).first;
    }
    OpenFile& file = it->second;
    SILT_RETURN_NOT_OK_CTX(file.writer->WriteBatch(data), "writing ", file.physical_path);
    if (file.writer->estimated_size() >= options_.target_file_bytes) {
      SILT_ASSIGN_OR_RETURN(AddFile add, CloseFile(&file));
      finished_.push_back(std::move(add));
      open_.erase(it);
    }
    return Status::OK();
  }

  Result<AddFile> CloseFile(OpenFile* file) {
    SILT_ASSIGN_OR_RETURN_CTX(parquet::WriteResult result, file->writer->Close(), "closing ",
                              file->physical_path);
    written_.push_back(file->physical_path);
    AddFile add;
    add.path = UriEncodePath(file->relative_path);
    add.partition_values = file->partition_values;
    add.size = result.file_size;
    add.modification_time = NowMillis();
    add.data_change = true;
    add.stats = EncodeStats(result, *data_schema_, options_.num_indexed_cols);
    return add;
  }

  fs::FileSystemPtr fs_;
  std::string table_path_;
  columnar::SchemaPtr schema_;
  columnar::SchemaPtr data_schema_;
  std::vector<int> partition_indices_;
  std::vector<int> data_indices_;
  TableWriterOptions options_;
  // Open files by partition directory ("" when unpartitioned).
  std::map<std::string, OpenFile> open_;
  // Closed files not yet returned by Finish, and their physical paths (for
  // Abort).
  std::vector<AddFile> finished_;
  std::vector<std::string> written_;
  int64_t file_counter_ = 0;
};

}  // namespace

Result<std::unique_ptr<TableWriter>> TableWriter::Make(fs::FileSystemPtr fs, std::string table_path,
                                                       columnar::SchemaPtr schema,
                                                       std::vector<std::string> partition_columns,
                                                       TableWriterOptions options) {
  if (fs == nullptr) return Status::InvalidArgument("no file system given for ", table_path);
  if (schema == nullptr || schema->id() != columnar::TypeId::kStruct) {
    return Status::InvalidArgument("no table schema given for Delta table ", table_path);
  }
  if (options.target_file_bytes <= 0) {
    return Status::InvalidArgument("target file size must be positive, got ",
                                   options.target_file_bytes);
  }
  std::vector<int> partition_indices;
  for (const std::string& name : partition_columns) {
    int idx = schema->FieldIndex(name);
    if (idx < 0) {
      return Status::InvalidArgument("partition column '", name,
                                     "' is not in the schema of Delta table ", table_path);
    }
    for (int existing : partition_indices) {
      if (existing == idx) {
        return Status::InvalidArgument("partition column '", name, "' is listed twice");
      }
    }
    if (schema->field(idx).type->is_nested()) {
      return Status::InvalidArgument("partition column '", name, "' has type ",
                                     schema->field(idx).type->ToDdl(),
                                     "; partition columns must be of a primitive type");
    }
    partition_indices.push_back(idx);
  }
  std::vector<columnar::Field> data_fields;
  std::vector<int> data_indices;
  for (int idx = 0; idx < schema->num_fields(); ++idx) {
    bool is_partition = false;
    for (int p : partition_indices) is_partition |= p == idx;
    if (is_partition) continue;
    data_fields.push_back(schema->field(idx));
    data_indices.push_back(idx);
  }
  if (data_fields.empty()) {
    return Status::InvalidArgument("Delta table ", table_path,
                                   " needs at least one column that is not a partition column");
  }
  while (table_path.size() > 1 && table_path.back() == '/') table_path.pop_back();
  return std::unique_ptr<TableWriter>(new TableWriterImpl(
      std::move(fs), std::move(table_path), std::move(schema),
      columnar::DataType::Struct(std::move(data_fields)), std::move(partition_indices),
      std::move(data_indices), std::move(options)));
}

}  // namespace silt::delta
