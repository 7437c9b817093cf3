#include "silt/parquet/file_writer.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "silt/base/version.h"
#include "silt/parquet/column_writer.h"
#include "silt/parquet/parquet_metadata.h"

namespace silt::parquet {

using columnar::RecordBatch;

Result<Compression> ParseCompression(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "snappy") return Compression::kSnappy;
  if (lower == "zstd") return Compression::kZstd;
  if (lower == "gzip") return Compression::kGzip;
  if (lower == "lz4" || lower == "lz4_raw") return Compression::kLz4Raw;
  if (lower == "none" || lower == "uncompressed") return Compression::kUncompressed;
  return Status::InvalidArgument("unknown Parquet compression '", name,
                                 "' (expected snappy, zstd, gzip, lz4, lz4_raw, none or "
                                 "uncompressed)");
}

std::string_view CompressionFileExtension(Compression c) {
  switch (c) {
    case Compression::kSnappy: return "snappy";
    case Compression::kZstd: return "zstd";
    case Compression::kGzip: return "gz";
    case Compression::kLz4Raw: return "lz4raw";
    case Compression::kUncompressed: return "";
  }
  return "";
}

namespace {

constexpr std::string_view kCreatedBy = "silt version " SILT_VERSION_STRING " (build silt)";
// Rows of the first slice of a row group, before a bytes-per-row estimate
// exists.
constexpr int64_t kFirstSliceRows = 1024;

class FileWriterImpl final : public ParquetFileWriter {
 public:
  FileWriterImpl(std::string path, columnar::SchemaPtr schema, WriterOptions options,
                 std::unique_ptr<fs::WritableFile> file,
                 std::vector<std::unique_ptr<ColumnWriter>> columns)
      : path_(std::move(path)),
        schema_(std::move(schema)),
        options_(std::move(options)),
        file_(std::move(file)),
        columns_(std::move(columns)) {}

  Status Init() {
    SILT_RETURN_NOT_OK_CTX(file_->Append(kParquetMagic), "writing Parquet file ", path_);
    file_pos_ = static_cast<int64_t>(kParquetMagic.size());
    return Status::OK();
  }

  Status WriteBatch(const RecordBatch& batch) override {
    if (closed_) return Status::InvalidArgument("Parquet writer for ", path_, " is closed");
    SILT_RETURN_NOT_OK(CheckBatch(batch));
    int64_t done = 0;
    while (done < batch.num_rows) {
      const int64_t n = NextSliceRows(batch.num_rows - done);
      for (size_t col_idx = 0; col_idx < columns_.size(); ++col_idx) {
        SILT_RETURN_NOT_OK_CTX(columns_[col_idx]->Write(*batch.columns[col_idx], done, n),
                               "writing ", path_);
      }
      done += n;
      rg_rows_ += n;
      num_rows_ += n;
      if (BufferedBytes() >= options_.row_group_bytes) SILT_RETURN_NOT_OK(FlushRowGroup());
    }
    return Status::OK();
  }

  int64_t num_rows() const override { return num_rows_; }

  int64_t estimated_size() const override {
    // Footer: roughly 100 bytes per column chunk plus the schema.
    const int64_t chunks = static_cast<int64_t>(columns_.size()) *
                           (static_cast<int64_t>(metadata_.row_groups.size()) + 1);
    return file_pos_ + BufferedBytes() + 100 * chunks + 64 * static_cast<int64_t>(columns_.size());
  }

  Result<WriteResult> Close() override {
    if (closed_) return Status::InvalidArgument("Parquet writer for ", path_, " is closed");
    if (rg_rows_ > 0) SILT_RETURN_NOT_OK(FlushRowGroup());

    metadata_.version = 1;
    metadata_.num_rows = num_rows_;
    metadata_.created_by = std::string(kCreatedBy);
    SchemaElement root;
    root.name = "spark_schema";
    root.num_children = static_cast<int32_t>(columns_.size());
    metadata_.schema.push_back(std::move(root));
    for (const auto& column : columns_) {
      metadata_.schema.push_back(column->schema_element());
      metadata_.column_orders.push_back(ColumnOrder::kTypeDefinedOrder);
    }
    for (const auto& [key, value] : options_.key_value_metadata) {
      metadata_.key_value_metadata.push_back(KeyValue{key, value});
    }
    std::string footer = SerializeThrift(metadata_);
    const uint32_t footer_len = static_cast<uint32_t>(footer.size());
    footer.append(reinterpret_cast<const char*>(&footer_len), 4);
    footer.append(kParquetMagic);
    SILT_RETURN_NOT_OK_CTX(file_->Append(footer), "writing the footer of ", path_);
    file_pos_ += static_cast<int64_t>(footer.size());
    SILT_RETURN_NOT_OK_CTX(file_->Close(), "closing ", path_);
    closed_ = true;

    WriteResult result;
    result.num_rows = num_rows_;
    result.file_size = file_pos_;
    result.column_stats.reserve(columns_.size());
    for (const auto& column : columns_) result.column_stats.push_back(column->FileStats());
    return result;
  }

  Status Abort() override {
    if (closed_) return Status::OK();
    closed_ = true;
    return file_->Abort();
  }

 private:
  Status CheckBatch(const RecordBatch& batch) const {
    if (batch.num_columns() != schema_->num_fields()) {
      return Status::InvalidArgument("writing ", path_, ": batch has ", batch.num_columns(),
                                     " columns, the file's schema ", schema_->num_fields());
    }
    for (int col_idx = 0; col_idx < batch.num_columns(); ++col_idx) {
      const columnar::Field& field = schema_->field(col_idx);
      const columnar::Column& column = *batch.column(col_idx);
      if (!column.type->Equals(*field.type)) {
        return Status::InvalidArgument("writing ", path_, ": column '", field.name, "' has type ",
                                       column.type->ToDdl(), ", the file's schema says ",
                                       field.type->ToDdl());
      }
      if (column.length != batch.num_rows) {
        return Status::InvalidArgument("writing ", path_, ": column '", field.name, "' has ",
                                       column.length, " rows, the batch ", batch.num_rows);
      }
      if (!field.nullable && column.validity != nullptr && column.null_count > 0) {
        return Status::InvalidArgument("writing ", path_, ": column '", field.name,
                                       "' is NOT NULL but the batch has ", column.null_count,
                                       " nulls in it");
      }
    }
    return Status::OK();
  }

  // Rows to encode before checking the row group size again: the rows the
  // bytes-per-row seen so far predict will fill the row group.
  int64_t NextSliceRows(int64_t remaining) const {
    if (rg_rows_ == 0) return std::min(remaining, kFirstSliceRows);
    const int64_t buffered = BufferedBytes();
    const int64_t per_row = std::max<int64_t>(1, buffered / rg_rows_);
    const int64_t room = std::max<int64_t>(0, options_.row_group_bytes - buffered);
    return std::clamp<int64_t>(room / per_row + 1, 1, remaining);
  }

  int64_t BufferedBytes() const {
    int64_t total = 0;
    for (const auto& column : columns_) total += column->buffered_bytes();
    return total;
  }

  Status FlushRowGroup() {
    RowGroup rg;
    rg.num_rows = rg_rows_;
    rg.file_offset = file_pos_;
    int64_t compressed = 0;
    for (const auto& column : columns_) {
      SILT_ASSIGN_OR_RETURN_CTX(ColumnChunk chunk, column->FlushChunk(file_pos_, file_.get()),
                                "writing row group ", metadata_.row_groups.size(), " of ", path_);
      const ColumnMetaData& md = *chunk.meta_data;
      file_pos_ += md.total_compressed_size;
      compressed += md.total_compressed_size;
      rg.total_byte_size += md.total_uncompressed_size;
      rg.columns.push_back(std::move(chunk));
    }
    rg.total_compressed_size = compressed;
    if (metadata_.row_groups.size() <= static_cast<size_t>(std::numeric_limits<int16_t>::max())) {
      rg.ordinal = static_cast<int16_t>(metadata_.row_groups.size());
    }
    metadata_.row_groups.push_back(std::move(rg));
    rg_rows_ = 0;
    return Status::OK();
  }

  const std::string path_;
  const columnar::SchemaPtr schema_;
  const WriterOptions options_;
  std::unique_ptr<fs::WritableFile> file_;
  std::vector<std::unique_ptr<ColumnWriter>> columns_;
  FileMetaData metadata_;
  int64_t file_pos_ = 0;
  int64_t num_rows_ = 0;
  int64_t rg_rows_ = 0;
  bool closed_ = false;
};

}  // namespace

Result<std::unique_ptr<ParquetFileWriter>> ParquetFileWriter::Open(fs::FileSystem* fs,
                                                                   const std::string& path,
                                                                   columnar::SchemaPtr schema,
                                                                   WriterOptions options) {
  if (options.page_bytes <= 0 || options.row_group_bytes <= 0 ||
      options.dictionary_page_bytes_limit < 0) {
    return Status::InvalidArgument("Parquet writer options for ", path,
                                   ": page_bytes and row_group_bytes must be positive");
  }
  std::vector<std::unique_ptr<ColumnWriter>> columns;
  columns.reserve(static_cast<size_t>(schema->num_fields()));
  for (const columnar::Field& field : schema->fields()) {
    SILT_ASSIGN_OR_RETURN_CTX(std::unique_ptr<ColumnWriter> column,
                              ColumnWriter::Make(field, options), "opening ", path);
    columns.push_back(std::move(column));
  }
  SILT_ASSIGN_OR_RETURN(std::unique_ptr<fs::WritableFile> file, fs->OpenForWrite(path));
  auto writer = std::make_unique<FileWriterImpl>(path, std::move(schema), std::move(options),
                                                 std::move(file), std::move(columns));
  SILT_RETURN_NOT_OK(writer->Init());
  return std::unique_ptr<ParquetFileWriter>(std::move(writer));
}

}  // namespace silt::parquet
