#include "silt/cli/result_output.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "silt/cli/value_format.h"
#include "silt/fs/file_system.h"
#include "silt/parquet/file_writer.h"

namespace silt::cli {

namespace {

// Text formats: stdout or a file opened with stdio.
class TextWriter final : public ResultWriter {
 public:
  TextWriter(std::string format, std::string path, int64_t table_rows, ValueStyle style)
      : format_(std::move(format)),
        path_(std::move(path)),
        table_rows_(table_rows),
        style_(style) {}
  ~TextWriter() override {
    if (file_ != nullptr && file_ != stdout) std::fclose(file_);
  }

  Status Begin(const columnar::SchemaPtr& schema) override {
    if (path_.empty()) {
      file_ = stdout;
    } else {
      file_ = std::fopen(path_.c_str(), "wb");
      if (file_ == nullptr) {
        return Status::IOError("cannot write --output ", path_, ": ", std::strerror(errno));
      }
    }
    if (format_ == "table") {
      std::vector<std::string> header;
      for (const auto& field : schema->fields()) header.push_back(field.name);
      printer_ = std::make_unique<TablePrinter>(std::move(header));
    } else if (format_ == "csv") {
      std::string line = CsvHeader(*schema) + "\n";
      return Put(line);
    }
    return Status::OK();
  }

  Status Write(const columnar::RecordBatch& batch) override {
    if (format_ == "table") {
      for (int64_t row = 0; row < batch.num_rows; ++row) {
        if (printer_->num_rows() >= table_rows_) {
          has_more_ = true;
          break;
        }
        printer_->AddRow(batch, row);
      }
      return Status::OK();
    }
    buffer_.clear();
    for (int64_t row = 0; row < batch.num_rows; ++row) {
      buffer_ += format_ == "csv" ? RowToCsv(batch, row, style_) : RowToJson(batch, row, style_);
      buffer_ += '\n';
    }
    return Put(buffer_);
  }

  Status Finish() override {
    if (file_ == nullptr) return Status::OK();
    if (printer_ != nullptr) SILT_RETURN_NOT_OK(Put(printer_->Render(has_more_)));
    if (std::fflush(file_) != 0) {
      return Status::IOError("cannot write ", path_.empty() ? "stdout" : path_, ": ",
                             std::strerror(errno));
    }
    return Status::OK();
  }

 private:
  Status Put(const std::string& text) {
    if (std::fwrite(text.data(), 1, text.size(), file_) != text.size()) {
      return Status::IOError("cannot write ", path_.empty() ? "stdout" : path_, ": ",
                             std::strerror(errno));
    }
    return Status::OK();
  }

  std::string format_;
  std::string path_;
  int64_t table_rows_;
  ValueStyle style_;
  std::FILE* file_ = nullptr;
  std::unique_ptr<TablePrinter> printer_;
  bool has_more_ = false;
  std::string buffer_;
};

class ParquetWriter final : public ResultWriter {
 public:
  explicit ParquetWriter(std::string path) : path_(std::move(path)) {}

  Status Begin(const columnar::SchemaPtr& schema) override {
    std::string normalized = fs::NormalizePath(path_);
    SILT_ASSIGN_OR_RETURN(fs_, fs::FileSystemForPath(normalized));
    SILT_ASSIGN_OR_RETURN_CTX(writer_,
                              parquet::ParquetFileWriter::Open(fs_.get(), normalized, schema),
                              "writing --output ", path_);
    schema_ = schema;
    return Status::OK();
  }
  Status Write(const columnar::RecordBatch& batch) override {
    if (batch.num_rows == 0) return Status::OK();
    // Batches carry the query's output schema; the writer checks equality.
    return writer_->WriteBatch(batch);
  }
  Status Finish() override {
    if (writer_ == nullptr) return Status::OK();
    SILT_ASSIGN_OR_RETURN_CTX(parquet::WriteResult result, writer_->Close(), "writing --output ",
                              path_);
    (void)result;
    return Status::OK();
  }

 private:
  std::string path_;
  fs::FileSystemPtr fs_;
  std::unique_ptr<parquet::ParquetFileWriter> writer_;
  columnar::SchemaPtr schema_;
};

}  // namespace

Result<std::unique_ptr<ResultWriter>> ResultWriter::Make(const std::string& format,
                                                         const std::string& output_path,
                                                         int64_t table_rows, ValueStyle style) {
  if (format == "parquet") {
    if (output_path.empty()) {
      return Status::InvalidArgument("--format parquet needs --output PATH");
    }
    return std::unique_ptr<ResultWriter>(new ParquetWriter(output_path));
  }
  if (format != "table" && format != "csv" && format != "jsonl") {
    return Status::InvalidArgument("unknown --format '", format,
                                   "' (expected table, csv, jsonl or parquet)");
  }
  return std::unique_ptr<ResultWriter>(new TextWriter(format, output_path, table_rows, style));
}

}  // namespace silt::cli
