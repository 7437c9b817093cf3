#include "silt/parquet/file_reader.h"

#include <algorithm>
#include <cstring>

#include "silt/parquet/column_reader.h"
#include "silt/parquet/parquet_metadata.h"
#include "silt/parquet/parquet_schema.h"

namespace silt::parquet {

namespace {

// Bytes read from the end of the file in the first request; most footers
// fit, so opening costs one ranged read.
constexpr int64_t kFooterReadSize = 64 * 1024;

class FileReaderImpl final : public ParquetFileReader {
 public:
  FileReaderImpl(std::string path, std::unique_ptr<fs::RandomAccessFile> file, int64_t size)
      : path_(std::move(path)), file_(std::move(file)), size_(size) {}

  Status Init() {
    const int64_t min_size = 2 * static_cast<int64_t>(kParquetMagic.size()) + 4;
    if (size_ < min_size) {
      return Status::Corruption(path_, ": ", size_,
                                " bytes is too small to be a Parquet file (truncated?)");
    }
    const int64_t tail_len = std::min(size_, kFooterReadSize);
    SILT_ASSIGN_OR_RETURN_CTX(std::string tail, ReadExactly(size_ - tail_len, tail_len, "footer"),
                              path_);
    std::string_view tail_view(tail);
    if (tail_view.substr(tail.size() - 4) != kParquetMagic) {
      if (tail_view.substr(tail.size() - 4) == "PARE") {
        return Status::NotSupported(path_, ": encrypted Parquet footers are not supported");
      }
      return Status::Corruption(path_,
                                ": not a Parquet file or truncated (no PAR1 magic at "
                                "its end)");
    }
    if (tail_len == size_ && tail_view.substr(0, 4) != kParquetMagic) {
      return Status::Corruption(path_, ": not a Parquet file (no PAR1 magic at its start)");
    }
    uint32_t footer_len;
    std::memcpy(&footer_len, tail.data() + tail.size() - 8, 4);
    if (footer_len > static_cast<uint64_t>(size_ - min_size)) {
      return Status::Corruption(path_, ": footer length ", footer_len, " exceeds the file size ",
                                size_, " (truncated?)");
    }
    footer_start_ = size_ - kFooterTrailerSize - footer_len;
    std::string footer;
    if (static_cast<int64_t>(footer_len) + kFooterTrailerSize <= tail_len) {
      footer =
          tail.substr(static_cast<size_t>(tail_len - kFooterTrailerSize - footer_len), footer_len);
    } else {
      SILT_ASSIGN_OR_RETURN_CTX(footer, ReadExactly(footer_start_, footer_len, "footer"), path_);
    }
    SILT_ASSIGN_OR_RETURN_CTX(metadata_, ParseFileMetaData(footer), path_, ": invalid footer");
    if (metadata_.encrypted) {
      return Status::NotSupported(path_, ": encrypted Parquet files are not supported");
    }
    SILT_ASSIGN_OR_RETURN_CTX(descriptors_, BuildColumnDescriptors(metadata_.schema), path_,
                              ": invalid schema");
    std::vector<columnar::Field> fields;
    int num_leaves = 0;
    for (const ColumnDescriptor& d : descriptors_) {
      fields.push_back(d.field);
      num_leaves += d.num_leaves;
    }
    schema_ = columnar::DataType::Struct(std::move(fields));
    for (size_t rg = 0; rg < metadata_.row_groups.size(); ++rg) {
      const RowGroup& group = metadata_.row_groups[rg];
      if (static_cast<int>(group.columns.size()) != num_leaves) {
        return Status::Corruption(path_, ": row group ", rg, " has ", group.columns.size(),
                                  " column chunks, the schema ", num_leaves, " leaf columns");
      }
      if (group.num_rows < 0) {
        return Status::Corruption(path_, ": row group ", rg, " has a negative row count");
      }
    }
    readers_.resize(descriptors_.size());
    return Status::OK();
  }

  const columnar::SchemaPtr& schema() const override { return schema_; }
  int64_t num_rows() const override { return metadata_.num_rows; }
  int num_row_groups() const override { return static_cast<int>(metadata_.row_groups.size()); }

  Result<columnar::RecordBatchPtr> ReadRowGroup(int index,
                                                const std::vector<std::string>& columns) override {
    if (index < 0 || index >= num_row_groups()) {
      return Status::InvalidArgument(path_, ": row group ", index, " out of range (the file has ",
                                     num_row_groups(), ")");
    }
    std::vector<int> selected;
    if (columns.empty()) {
      for (int i = 0; i < schema_->num_fields(); ++i) selected.push_back(i);
    } else {
      for (const std::string& name : columns) {
        int i = schema_->FieldIndex(name);
        if (i < 0) {
          return Status::InvalidArgument(path_, ": no column '", name, "' in the file (it has ",
                                         schema_->ToDdl(), ")");
        }
        selected.push_back(i);
      }
    }
    const RowGroup& group = metadata_.row_groups[static_cast<size_t>(index)];
    auto batch = std::make_shared<columnar::RecordBatch>();
    batch->num_rows = group.num_rows;
    std::vector<columnar::Field> fields;
    for (int field_idx : selected) {
      SILT_ASSIGN_OR_RETURN_CTX(columnar::ColumnPtr column, ReadColumn(group, field_idx), path_,
                                ": row group ", index);
      fields.push_back(schema_->field(field_idx));
      batch->columns.push_back(std::move(column));
    }
    batch->schema = columns.empty() ? schema_ : columnar::DataType::Struct(std::move(fields));
    return columnar::RecordBatchPtr(std::move(batch));
  }

 private:
  Result<std::string> ReadExactly(int64_t offset, int64_t length, const char* what) {
    SILT_ASSIGN_OR_RETURN(std::string bytes, file_->ReadAt(offset, length));
    if (static_cast<int64_t>(bytes.size()) != length) {
      return Status::Corruption(what, " at offset ", offset, " truncated (", length,
                                " bytes expected, ", bytes.size(), " read)");
    }
    return bytes;
  }

  Result<columnar::ColumnPtr> ReadColumn(const RowGroup& group, int field_idx) {
    const ColumnDescriptor& d = descriptors_[static_cast<size_t>(field_idx)];
    if (d.unsupported.ok() && d.field.type->id() == columnar::TypeId::kNull) {
      return columnar::MakeNullColumn(d.field.type, group.num_rows);
    }
    if (!d.flat) {
      return Status::NotSupported("reading nested Parquet column '", d.field.name, "' (",
                                  d.field.type->ToDdl(), ")");
    }
    SILT_RETURN_NOT_OK(d.unsupported);
    const ColumnChunk& chunk = group.columns[static_cast<size_t>(d.first_leaf)];
    if (chunk.file_path) {
      return Status::NotSupported("column '", d.field.name, "' stored in another file (",
                                  *chunk.file_path, ")");
    }
    if (!chunk.meta_data) {
      return Status::Corruption("column '", d.field.name, "' has no column metadata");
    }
    const ColumnMetaData& md = *chunk.meta_data;
    int64_t start = md.data_page_offset;
    if (md.dictionary_page_offset && *md.dictionary_page_offset > 0 &&
        *md.dictionary_page_offset < start) {
      start = *md.dictionary_page_offset;
    }
    const int64_t length = md.total_compressed_size;
    if (start < static_cast<int64_t>(kParquetMagic.size()) || length < 0 || start > footer_start_ ||
        length > footer_start_ - start) {
      return Status::Corruption("column '", d.field.name, "': column chunk [", start, ", +", length,
                                ") lies outside the file's data (", footer_start_, " bytes)");
    }
    auto& reader = readers_[static_cast<size_t>(field_idx)];
    if (reader == nullptr || reader->codec() != md.codec) {
      SILT_ASSIGN_OR_RETURN(reader, ColumnChunkReader::Make(d, md.codec));
    }
    SILT_ASSIGN_OR_RETURN(std::string bytes, ReadExactly(start, length, "column chunk"));
    return reader->Read(bytes, group.num_rows);
  }

  const std::string path_;
  std::unique_ptr<fs::RandomAccessFile> file_;
  const int64_t size_;
  int64_t footer_start_ = 0;
  FileMetaData metadata_;
  std::vector<ColumnDescriptor> descriptors_;
  columnar::SchemaPtr schema_;
  std::vector<std::unique_ptr<ColumnChunkReader>> readers_;
};

}  // namespace

Result<std::unique_ptr<ParquetFileReader>> ParquetFileReader::Open(fs::FileSystem* fs,
                                                                   const std::string& path) {
  SILT_ASSIGN_OR_RETURN(std::unique_ptr<fs::RandomAccessFile> file, fs->OpenForRead(path));
  SILT_ASSIGN_OR_RETURN_CTX(int64_t size, file->Size(), "reading ", path);
  auto reader = std::make_unique<FileReaderImpl>(path, std::move(file), size);
  SILT_RETURN_NOT_OK(reader->Init());
  return std::unique_ptr<ParquetFileReader>(std::move(reader));
}

}  // namespace silt::parquet
