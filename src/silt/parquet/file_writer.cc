#include "silt/parquet/file_writer.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "silt/base/strings.h"
#include "silt/base/version.h"
#include "silt/parquet/column_writer.h"
#include "silt/parquet/nested_writer.h"
#include "silt/parquet/parquet_metadata.h"
#include "silt/parquet/parquet_schema.h"

namespace silt::parquet {

using columnar::RecordBatch;

Result<Compression> ParseCompression(std::string_view name) {
  std::string lower = AsciiLower(name);
  if (lower == "snappy") return Compression::kSnappy;
  if (lower == "zstd") return Compression::kZstd;
  if (lower == "gzip") return Compression::kGzip;
  if (lower == "lz4" || lower == "lz4_raw") return Compression::kLz4Raw;
  if (lower == "none" || lower == "uncompressed") return Compression::kUncompressed;
  return Status::InvalidArgument("unknown Parquet compression '", name,
                                 "' (expected snappy, zstd, gzip, lz4, lz4_raw, none or "
                                 "uncompressed)");
}

Result<ColumnEncoding> ParseColumnEncoding(std::string_view name) {
  std::string lower = AsciiLower(name);
  if (lower == "dictionary" || lower == "rle_dictionary") return ColumnEncoding::kDictionary;
  if (lower == "plain") return ColumnEncoding::kPlain;
  if (lower == "delta_binary_packed") return ColumnEncoding::kDeltaBinaryPacked;
  if (lower == "delta_length_byte_array") return ColumnEncoding::kDeltaLengthByteArray;
  if (lower == "delta_byte_array") return ColumnEncoding::kDeltaByteArray;
  if (lower == "byte_stream_split") return ColumnEncoding::kByteStreamSplit;
  return Status::InvalidArgument("unknown Parquet column encoding '", name,
                                 "' (expected dictionary, plain, delta_binary_packed, "
                                 "delta_length_byte_array, delta_byte_array or "
                                 "byte_stream_split)");
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

// One top-level field: a primitive's single leaf writer, or a nested field.
struct FieldWriter {
  std::unique_ptr<ColumnWriter> flat;
  std::unique_ptr<NestedFieldWriter> nested;
};

class FileWriterImpl final : public ParquetFileWriter {
 public:
  FileWriterImpl(std::string path, columnar::SchemaPtr schema, WriterOptions options,
                 std::unique_ptr<fs::WritableFile> file, std::vector<FieldWriter> fields)
      : path_(std::move(path)),
        schema_(std::move(schema)),
        options_(std::move(options)),
        file_(std::move(file)),
        fields_(std::move(fields)) {
    for (const FieldWriter& f : fields_) {
      if (f.flat) {
        columns_.push_back(f.flat.get());
      } else {
        for (const auto& leaf : f.nested->leaves()) columns_.push_back(leaf.get());
      }
    }
  }

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
      for (size_t col_idx = 0; col_idx < fields_.size(); ++col_idx) {
        const FieldWriter& f = fields_[col_idx];
        const columnar::Column& column = *batch.columns[col_idx];
        SILT_RETURN_NOT_OK_CTX(
            f.flat ? f.flat->Write(column, done, n) : f.nested->Write(column, done, n), "writing ",
            path_);
      }
      done += n;
      rg_rows_ += n;
      num_rows_ += n;
      if (BufferedBytes() >= options_.row_group_bytes) SILT_RETURN_NOT_OK(FlushRowGroup());
    }
    return Status::OK();
  }

  Status WriteRows(const RecordBatch& batch, std::span<const int64_t> rows) override {
    if (closed_) return Status::InvalidArgument("Parquet writer for ", path_, " is closed");
    SILT_RETURN_NOT_OK(CheckBatch(batch));
    // Nested fields are written from contiguous rows: their listed rows are
    // taken once per call.
    std::vector<columnar::ColumnPtr> taken(fields_.size());
    for (size_t col_idx = 0; col_idx < fields_.size(); ++col_idx) {
      if (fields_[col_idx].nested) {
        taken[col_idx] = columnar::TakeColumn(*batch.columns[col_idx],
                                              std::vector<int64_t>(rows.begin(), rows.end()));
      }
    }
    const int64_t total = static_cast<int64_t>(rows.size());
    int64_t done = 0;
    while (done < total) {
      const int64_t n = NextSliceRows(total - done);
      for (size_t col_idx = 0; col_idx < fields_.size(); ++col_idx) {
        const FieldWriter& f = fields_[col_idx];
        SILT_RETURN_NOT_OK_CTX(
            f.flat ? f.flat->WriteRows(*batch.columns[col_idx], rows.data() + done, n)
                   : f.nested->Write(*taken[col_idx], done, n),
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
    root.num_children = static_cast<int32_t>(fields_.size());
    metadata_.schema.push_back(std::move(root));
    for (const FieldWriter& f : fields_) {
      if (f.flat) {
        metadata_.schema.push_back(f.flat->schema_element());
      } else {
        const std::vector<SchemaElement>& els = f.nested->schema_elements();
        metadata_.schema.insert(metadata_.schema.end(), els.begin(), els.end());
      }
    }
    for (size_t leaf_idx = 0; leaf_idx < columns_.size(); ++leaf_idx) {
      metadata_.column_orders.push_back(ColumnOrder::kTypeDefinedOrder);
    }
    for (const auto& [key, value] : options_.key_value_metadata) {
      metadata_.key_value_metadata.push_back(KeyValue{key, value});
    }
    SILT_RETURN_NOT_OK(WriteBloomFilters());
    SILT_RETURN_NOT_OK(WritePageIndex());
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
    result.column_stats.reserve(fields_.size());
    for (const FieldWriter& f : fields_) {
      result.column_stats.push_back(f.flat ? f.flat->FileStats() : f.nested->FileStats());
    }
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

  // The bloom filters of every chunk that has one, in chunk order.
  Status WriteBloomFilters() {
    size_t chunk_idx = 0;
    for (RowGroup& rg : metadata_.row_groups) {
      for (ColumnChunk& cc : rg.columns) {
        const std::string& bytes = bloom_filters_[chunk_idx++];
        if (bytes.empty()) continue;
        SILT_RETURN_NOT_OK_CTX(file_->Append(bytes), "writing a bloom filter of ", path_);
        cc.meta_data->bloom_filter_offset = file_pos_;
        cc.meta_data->bloom_filter_length = static_cast<int32_t>(bytes.size());
        file_pos_ += static_cast<int64_t>(bytes.size());
      }
    }
    bloom_filters_.clear();
    return Status::OK();
  }

  // Column indexes of every chunk, then their offset indexes, as
  // parquet-mr and Arrow lay them out; records where each one went.
  Status WritePageIndex() {
    for (int pass = 0; pass < 2; ++pass) {
      size_t chunk_idx = 0;
      for (RowGroup& rg : metadata_.row_groups) {
        for (ColumnChunk& cc : rg.columns) {
          const auto& [column_index, offset_index] = page_indexes_[chunk_idx++];
          const std::string& bytes = pass == 0 ? column_index : offset_index;
          if (bytes.empty()) continue;
          SILT_RETURN_NOT_OK_CTX(file_->Append(bytes), "writing the page index of ", path_);
          if (pass == 0) {
            cc.column_index_offset = file_pos_;
            cc.column_index_length = static_cast<int32_t>(bytes.size());
          } else {
            cc.offset_index_offset = file_pos_;
            cc.offset_index_length = static_cast<int32_t>(bytes.size());
          }
          file_pos_ += static_cast<int64_t>(bytes.size());
        }
      }
    }
    page_indexes_.clear();
    return Status::OK();
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
      std::pair<std::string, std::string> index;
      column->TakePageIndex(&index.first, &index.second);
      page_indexes_.push_back(std::move(index));
      bloom_filters_.push_back(column->TakeBloomFilter());
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
  std::vector<FieldWriter> fields_;
  std::vector<ColumnWriter*> columns_;  // every leaf, in column-chunk order
  // (column index, offset index) per column chunk written, in file order.
  std::vector<std::pair<std::string, std::string>> page_indexes_;
  // Serialized bloom filter per column chunk written (empty: none).
  std::vector<std::string> bloom_filters_;
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
                                                                   WriterOptions options,
                                                                   Publish publish) {
  if (options.page_bytes <= 0 || options.row_group_bytes <= 0 ||
      options.dictionary_page_bytes_limit < 0) {
    return Status::InvalidArgument("Parquet writer options for ", path,
                                   ": page_bytes and row_group_bytes must be positive");
  }
  if (!options.column_encodings.empty() || !options.bloom_filters.empty()) {
    // Every key must name a column: a typo would silently keep the default.
    std::vector<std::string> names;
    std::vector<std::string> booleans;  // leaves that cannot have a bloom filter
    for (const columnar::Field& field : schema->fields()) {
      names.push_back(field.name);
      if (field.type->id() == columnar::TypeId::kBoolean) booleans.push_back(field.name);
      if (!field.type->is_nested()) continue;
      Result<std::vector<SchemaElement>> els = ParquetElementsForField(field);
      if (!els.ok()) continue;  // reported below, by the field's writer
      SchemaElement root;
      root.name = "schema";
      root.num_children = 1;
      els->insert(els->begin(), root);
      Result<std::vector<ColumnDescriptor>> descs = BuildColumnDescriptors(*els);
      if (!descs.ok()) continue;
      for (const ColumnDescriptor& leaf : (*descs)[0].leaves) {
        names.push_back(leaf.field.name);
        if (leaf.field.type->id() == columnar::TypeId::kBoolean) {
          booleans.push_back(leaf.field.name);
        }
      }
    }
    for (const auto& [key, encoding] : options.column_encodings) {
      if (std::find(names.begin(), names.end(), key) == names.end()) {
        return Status::InvalidArgument("Parquet writer options for ", path,
                                       ": column_encodings names no column '", key, "'");
      }
    }
    for (const auto& [key, bloom] : options.bloom_filters) {
      if (std::find(names.begin(), names.end(), key) == names.end()) {
        return Status::InvalidArgument("Parquet writer options for ", path,
                                       ": bloom_filters names no column '", key, "'");
      }
      if (std::find(booleans.begin(), booleans.end(), key) != booleans.end()) {
        return Status::InvalidArgument("Parquet writer options for ", path, ": column '", key,
                                       "' is boolean; Parquet has no bloom filters for booleans");
      }
      if (!(bloom.fpp > 0 && bloom.fpp < 1) || bloom.ndv < 0) {
        return Status::InvalidArgument("Parquet writer options for ", path, ": bloom filter of '",
                                       key, "': fpp must be in (0, 1) and ndv >= 0");
      }
    }
  }
  std::vector<FieldWriter> columns;
  columns.reserve(static_cast<size_t>(schema->num_fields()));
  for (const columnar::Field& field : schema->fields()) {
    FieldWriter f;
    if (field.type->is_nested()) {
      SILT_ASSIGN_OR_RETURN_CTX(f.nested, NestedFieldWriter::Make(field, options), "opening ",
                                path);
    } else {
      SILT_ASSIGN_OR_RETURN_CTX(f.flat, ColumnWriter::Make(field, options), "opening ", path);
    }
    columns.push_back(std::move(f));
  }
  SILT_ASSIGN_OR_RETURN(std::unique_ptr<fs::WritableFile> file, publish == Publish::kInPlace
                                                                    ? fs->OpenForWriteInPlace(path)
                                                                    : fs->OpenForWrite(path));
  auto writer = std::make_unique<FileWriterImpl>(path, std::move(schema), std::move(options),
                                                 std::move(file), std::move(columns));
  SILT_RETURN_NOT_OK(writer->Init());
  return std::unique_ptr<ParquetFileWriter>(std::move(writer));
}

}  // namespace silt::parquet
