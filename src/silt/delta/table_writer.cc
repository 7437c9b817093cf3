// TableWriter: splits batches by partition tuple and streams each group into
// its own Parquet file under a Hive-style directory.

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "silt/base/clock.h"
#include "silt/base/short_bytes.h"
#include "silt/base/uuid.h"
#include "silt/delta/column_mapping.h"
#include "silt/delta/partition_utils.h"
#include "silt/delta/stats.h"
#include "silt/delta/table.h"
#include "silt/delta/table_root.h"

namespace silt::delta {

namespace {

// Dictionary codes of one partition column: 0 for null, 1.. for each
// distinct value in order of first appearance. Returns the number of codes
// handed out (nulls included). One typed pass per column; values are
// compared by their bytes, so no per-row allocation happens, and a row
// equal to the row before takes its code without a hash lookup (partition
// values come in runs: one date for a whole batch, a few device types).
// Every row's code is written, so `codes` is only sized, not zero-filled:
// the caller keeps it across batches.
uint32_t PartitionCodes(const columnar::Column& column, std::vector<uint32_t>* codes) {
  const int64_t n = column.length;
  codes->resize(static_cast<size_t>(n));
  uint32_t* const out = codes->data();
  const columnar::DataType& type = *column.type;
  if (type.id() == columnar::TypeId::kNull) {
    std::fill(out, out + n, 0u);
    return 1;
  }
  if (type.id() == columnar::TypeId::kBoolean) {
    for (int64_t row_idx = 0; row_idx < n; ++row_idx) {
      out[row_idx] = column.IsValid(row_idx) ? (column.BoolValue(row_idx) ? 2u : 1u) : 0u;
    }
    return 3;
  }
  std::unordered_map<std::string_view, uint32_t> dictionary;
  const bool var_width =
      type.id() == columnar::TypeId::kString || type.id() == columnar::TypeId::kBinary;
  const auto width = static_cast<size_t>(type.byte_width());
  const char* fixed = column.values ? reinterpret_cast<const char*>(column.values->data()) : "";
  std::string_view last_key;
  uint32_t last_code = 0;  // 0: no valid row seen yet
  for (int64_t row_idx = 0; row_idx < n; ++row_idx) {
    if (!column.IsValid(row_idx)) {
      out[row_idx] = 0;
      continue;
    }
    std::string_view key =
        var_width ? column.StringValue(row_idx) : std::string_view(fixed + row_idx * width, width);
    if (last_code == 0 || !short_bytes::Equal(key, last_key)) {
      auto [it, inserted] =
          dictionary.try_emplace(key, static_cast<uint32_t>(dictionary.size() + 1));
      last_key = key;
      last_code = it->second;
    }
    out[row_idx] = last_code;
  }
  return static_cast<uint32_t>(dictionary.size() + 1);
}

// Group ids in a table of num_groups x num_codes entries while it stays
// this small; a hash map of the pairs beyond.
constexpr uint64_t kMaxDenseGroupPairs = uint64_t{1} << 16;

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

// A Parquet column path ("s.b", "m.key_value.value.c") of the logical
// schema spelled with the physical names of the struct fields on it; the
// list and map levels keep their names.
Result<std::string> PhysicalPath(const std::string& path, const columnar::DataType& schema) {
  std::string out;
  const columnar::DataType* type = &schema;
  size_t start = 0;
  while (start <= path.size()) {
    size_t dot = path.find('.', start);
    if (dot == std::string::npos) dot = path.size();
    std::string part = path.substr(start, dot - start);
    if (type != nullptr && type->id() == columnar::TypeId::kStruct && type->FieldIndex(part) >= 0) {
      const columnar::Field& field = type->field(type->FieldIndex(part));
      SILT_ASSIGN_OR_RETURN(part, RequiredPhysicalName(field));
      type = field.type.get();
    } else if (type != nullptr && type->id() == columnar::TypeId::kArray && part == "element") {
      type = type->element_type().get();
    } else if (type != nullptr && type->id() == columnar::TypeId::kMap && part == "key") {
      type = type->key_type().get();
    } else if (type != nullptr && type->id() == columnar::TypeId::kMap && part == "value") {
      type = type->value_type().get();
    } else if (part != "list" && part != "key_value") {
      type = nullptr;  // names no column: the Parquet writer reports it
    }
    if (!out.empty()) out += '.';
    out += part;
    start = dot + 1;
  }
  return out;
}

// `column` typed as `physical` (the same type with the struct fields under
// their physical names), sharing its buffers: one shallow copy per nested
// level, per batch.
columnar::ColumnPtr Relabel(const columnar::ColumnPtr& column, const columnar::TypePtr& physical) {
  const columnar::TypeId id = physical->id();
  if (id != columnar::TypeId::kStruct && id != columnar::TypeId::kArray &&
      id != columnar::TypeId::kMap) {
    return column;
  }
  auto out = std::make_shared<columnar::Column>(*column);
  out->type = physical;
  if (id == columnar::TypeId::kStruct) {
    for (size_t child_idx = 0; child_idx < out->children.size(); ++child_idx) {
      out->children[child_idx] =
          Relabel(column->children[child_idx], physical->field(static_cast<int>(child_idx)).type);
    }
  } else if (!out->children.empty()) {
    out->children[0] =
        Relabel(column->children[0], id == columnar::TypeId::kArray ? physical->element_type()
                                                                    : physical->map_entries_type());
  }
  return out;
}

template <typename T>
Result<std::map<std::string, T>> PhysicalKeys(const std::map<std::string, T>& by_column,
                                              const columnar::DataType& schema) {
  std::map<std::string, T> out;
  for (const auto& [column, value] : by_column) {
    SILT_ASSIGN_OR_RETURN(std::string physical, PhysicalPath(column, schema));
    out.emplace(std::move(physical), value);
  }
  return out;
}

class TableWriterImpl final : public TableWriter {
 public:
  TableWriterImpl(fs::FileSystemPtr fs, std::string table_path, columnar::SchemaPtr schema,
                  columnar::SchemaPtr data_schema, std::vector<int> partition_indices,
                  std::vector<std::string> partition_names, std::vector<int> data_indices,
                  TableWriterOptions options, bool column_mapping)
      : fs_(std::move(fs)),
        table_path_(std::move(table_path)),
        schema_(std::move(schema)),
        data_schema_(std::move(data_schema)),
        partition_indices_(std::move(partition_indices)),
        partition_names_(std::move(partition_names)),
        data_indices_(std::move(data_indices)),
        options_(std::move(options)),
        column_mapping_(column_mapping) {}

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
    for (size_t data_idx = 0; data_idx < data_indices_.size(); ++data_idx) {
      const columnar::ColumnPtr& column = batch.column(data_indices_[data_idx]);
      data->columns.push_back(
          column_mapping_ ? Relabel(column, data_schema_->field(static_cast<int>(data_idx)).type)
                          : column);
    }

    if (partition_indices_.empty()) return WriteGroup(PartitionValues(), *data);

    // Group rows by partition tuple: combine the per-column codes into a
    // group id column by column. The vectors are members, kept across
    // batches, and every element used is written before it is read.
    const int64_t n = batch.num_rows;
    std::vector<uint32_t>& group = group_;
    std::vector<uint32_t>& codes = codes_;
    std::vector<uint32_t>& dense = dense_;
    group.resize(static_cast<size_t>(n));
    uint32_t num_groups = 1;
    bool first_column = true;
    for (int idx : partition_indices_) {
      const uint32_t num_codes = PartitionCodes(*batch.column(idx), &codes);
      // Group ids are handed out in order of first appearance either way.
      // Before the first column every row is in group 0.
      if (static_cast<uint64_t>(num_groups) * num_codes <= kMaxDenseGroupPairs) {
        constexpr uint32_t kUnset = ~uint32_t{0};
        dense.assign(static_cast<size_t>(num_groups) * num_codes, kUnset);
        uint32_t next = 0;
        for (int64_t row_idx = 0; row_idx < n; ++row_idx) {
          const uint32_t previous = first_column ? 0 : group[row_idx];
          uint32_t& id = dense[static_cast<size_t>(previous) * num_codes + codes[row_idx]];
          if (id == kUnset) id = next++;
          group[row_idx] = id;
        }
        num_groups = next;
        first_column = false;
        continue;
      }
      std::unordered_map<uint64_t, uint32_t> combined;
      for (int64_t row_idx = 0; row_idx < n; ++row_idx) {
        const uint32_t previous = first_column ? 0 : group[row_idx];
        uint64_t key = (static_cast<uint64_t>(previous) << 32) | codes[row_idx];
        auto [it, inserted] = combined.try_emplace(key, static_cast<uint32_t>(combined.size()));
        group[row_idx] = it->second;
      }
      num_groups = static_cast<uint32_t>(combined.size());
      first_column = false;
    }
    // Each group's row list keeps its capacity for the next batch.
    if (group_rows_.size() < num_groups) group_rows_.resize(num_groups);
    for (uint32_t group_idx = 0; group_idx < num_groups; ++group_idx) {
      group_rows_[group_idx].clear();
    }
    for (int64_t row_idx = 0; row_idx < n; ++row_idx) {
      group_rows_[group[row_idx]].push_back(row_idx);
    }

    if (made_dirs_.size() > kMaxMadeDirs) made_dirs_.clear();
    std::vector<PartitionValues> group_values(num_groups);
    std::vector<std::string> new_dirs;
    for (uint32_t group_idx = 0; group_idx < num_groups; ++group_idx) {
      const int64_t first_row = group_rows_[group_idx].front();
      PartitionValues& values = group_values[group_idx];
      for (size_t p = 0; p < partition_indices_.size(); ++p) {
        const int idx = partition_indices_[p];
        values.emplace_back(partition_names_[p],
                            SerializePartitionValue(*batch.column(idx), first_row));
        SILT_RETURN_NOT_OK(
            CheckPartitionPathValue(values.back().first, values.back().second, first_row));
      }
      // Column-mapped tables put files under random directories instead.
      if (column_mapping_) continue;
      std::string dir = PartitionDirectory(values);
      if (open_.contains(dir) || made_dirs_.contains(dir)) continue;
      SILT_ASSIGN_OR_RETURN_CTX(std::string physical,
                                CheckInsideTable(table_path_, fs::JoinPath(table_path_, dir)),
                                "writing a data file of Delta table ", table_path_);
      new_dirs.push_back(std::move(physical));
      made_dirs_.insert(std::move(dir));
    }
    // The batch's partition directories are made before its files, all in
    // one call: the local file system then syncs each parent directory once
    // rather than once per new partition (a batch of events spanning days
    // adds a date directory per day under each device type's).
    if (!new_dirs.empty()) {
      SILT_RETURN_NOT_OK_CTX(fs_->CreateDirs(new_dirs),
                             "creating the partition directories of Delta table ", table_path_);
    }
    for (uint32_t group_idx = 0; group_idx < num_groups; ++group_idx) {
      const std::vector<int64_t>& group_rows = group_rows_[group_idx];
      // A partition's rows go to its file by their indices, not copied
      // into a batch of their own first.
      SILT_RETURN_NOT_OK(WriteGroup(std::move(group_values[group_idx]), *data,
                                    num_groups == 1 ? nullptr : &group_rows));
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

  // Writes `data` (only `*rows` of it when given) to the open file of the
  // partition `values`, opening one when there is none.
  Status WriteGroup(PartitionValues values, const columnar::RecordBatch& data,
                    const std::vector<int64_t>* rows = nullptr) {
    std::string dir = PartitionDirectory(values);
    auto it = open_.find(dir);
    if (it == open_.end()) {
      OpenFile file;
      std::string name = NextFileName();
      file.relative_path = dir.empty() ? name : dir + "/" + name;
      if (column_mapping_ && !dir.empty()) {
        // delta-spark puts the files of a column-mapped partitioned table
        // under a random two-character directory instead of Hive-style
        // ones (a rename would leave those naming the old column).
        file.relative_path = NewUuid().substr(0, 2) + "/" + name;
      }
      // Partition directories are escaped, so this always holds; it is the
      // same check every command that writes under a table makes.
      SILT_ASSIGN_OR_RETURN_CTX(
          file.physical_path,
          CheckInsideTable(table_path_, fs::JoinPath(table_path_, file.relative_path)),
          "writing a data file of Delta table ", table_path_);
      file.partition_values = std::move(values);
      // Written in place: no reader looks for a data file before a commit
      // names it, and the name is new (a UUID), so the temp file and rename
      // of an atomic write would only cost a directory update each.
      SILT_ASSIGN_OR_RETURN_CTX(file.writer,
                                parquet::ParquetFileWriter::Open(
                                    fs_.get(), file.physical_path, data_schema_, options_.parquet,
                                    parquet::ParquetFileWriter::Publish::kInPlace),
                                "writing a data file of Delta table ", table_path_);
      it = open_.emplace(dir, std::move(file)).first;
    }
    OpenFile& file = it->second;
    SILT_RETURN_NOT_OK_CTX(
        rows != nullptr ? file.writer->WriteRows(data, *rows) : file.writer->WriteBatch(data),
        "writing ", file.physical_path);
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
  // The partition columns' names in add.partitionValues and directories
  // (physical names under column mapping).
  std::vector<std::string> partition_names_;
  std::vector<int> data_indices_;
  TableWriterOptions options_;
  bool column_mapping_ = false;
  // Open files by partition directory ("" when unpartitioned).
  std::map<std::string, OpenFile> open_;
  // Closed files not yet returned by Finish, and their physical paths (for
  // Abort).
  std::vector<AddFile> finished_;
  std::vector<std::string> written_;
  // Write()'s per-batch grouping arrays, kept so a batch reuses the
  // previous one's capacity instead of allocating and zero-filling.
  std::vector<uint32_t> group_;
  std::vector<uint32_t> codes_;
  std::vector<uint32_t> dense_;
  std::vector<std::vector<int64_t>> group_rows_;
  // Partition directories this writer has made sure exist (CreateDirs), so
  // a stream's later batches in the same partitions skip the call. Cleared
  // past kMaxMadeDirs entries; a directory deleted meanwhile (an empty one
  // by vacuum) is made again when its file is created.
  static constexpr size_t kMaxMadeDirs = 4096;
  std::unordered_set<std::string> made_dirs_;
  int64_t file_counter_ = 0;
};

}  // namespace

Result<std::unique_ptr<TableWriter>> TableWriter::Make(fs::FileSystemPtr fs, std::string table_path,
                                                       columnar::SchemaPtr schema,
                                                       std::vector<std::string> partition_columns,
                                                       TableWriterOptions options) {
  return MakeTableWriter(std::move(fs), std::move(table_path), std::move(schema),
                         std::move(partition_columns), std::move(options), false);
}

Result<std::unique_ptr<TableWriter>> MakeTableWriter(fs::FileSystemPtr fs, std::string table_path,
                                                     columnar::SchemaPtr schema,
                                                     std::vector<std::string> partition_columns,
                                                     TableWriterOptions options,
                                                     bool column_mapping) {
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
  columnar::SchemaPtr data_schema = columnar::DataType::Struct(std::move(data_fields));
  std::vector<std::string> partition_names;
  for (int idx : partition_indices) {
    if (column_mapping) {
      SILT_ASSIGN_OR_RETURN_CTX(std::string name, RequiredPhysicalName(schema->field(idx)),
                                "writing to Delta table ", table_path);
      partition_names.push_back(std::move(name));
    } else {
      partition_names.push_back(schema->field(idx).name);
    }
  }
  if (column_mapping) {
    // Data files hold physical names and field ids; the batches keep the
    // logical names, matched to the file's columns by position. Per-column
    // Parquet options name logical columns: renamed alike.
    SILT_ASSIGN_OR_RETURN(options.parquet.column_encodings,
                          PhysicalKeys(options.parquet.column_encodings, *data_schema));
    SILT_ASSIGN_OR_RETURN(options.parquet.bloom_filters,
                          PhysicalKeys(options.parquet.bloom_filters, *data_schema));
    SILT_ASSIGN_OR_RETURN_CTX(data_schema, PhysicalSchema(*data_schema), "writing to Delta table ",
                              table_path);
  }
  return std::unique_ptr<TableWriter>(new TableWriterImpl(
      std::move(fs), std::move(table_path), std::move(schema), std::move(data_schema),
      std::move(partition_indices), std::move(partition_names), std::move(data_indices),
      std::move(options), column_mapping));
}

}  // namespace silt::delta
