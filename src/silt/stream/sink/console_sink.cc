#include "silt/stream/sink/console_sink.h"

#include "silt/stream/options_internal.h"

namespace silt::stream {

Result<std::unique_ptr<ConsoleSink>> ConsoleSink::Make(const SinkSpec& spec,
                                                       const SinkContext& context) {
  if (!context.console_renderer) {
    return Status::NotSupported(spec.key_path,
                                ".format: console prints batches from `silt run` only");
  }
  if (!spec.path.empty() || !spec.partition_by.empty()) {
    return Status::InvalidArgument(spec.key_path,
                                   ": a console sink has no path and no partitionBy");
  }
  const std::string options_path = spec.key_path + ".options";
  internal::OptionReader reader(spec.options, options_path);
  SILT_RETURN_NOT_OK(reader.CheckNames({.what = "console sink",
                                        .honoured = {"numRows", "truncate"},
                                        .inert = {},
                                        .unsupported = {}}));
  auto sink = std::unique_ptr<ConsoleSink>(new ConsoleSink());
  sink->renderer_ = context.console_renderer;
  sink->schema_ = context.schema;
  SILT_ASSIGN_OR_RETURN(std::optional<int64_t> rows, reader.GetInt("numRows", 0));
  if (rows) sink->num_rows_ = *rows;
  SILT_ASSIGN_OR_RETURN(std::optional<bool> truncate, reader.GetBool("truncate"));
  if (truncate) sink->truncate_ = *truncate;
  return sink;
}

std::string ConsoleSink::Description() const {
  return "org.apache.spark.sql.execution.streaming.ConsoleTable$@silt";
}

Result<bool> ConsoleSink::Begin(int64_t batch_id) {
  batch_id_ = batch_id;
  seen_ = 0;
  shown_.clear();
  return true;
}

Status ConsoleSink::Write(const columnar::RecordBatch& batch) {
  const int64_t room = num_rows_ - std::min(seen_, num_rows_);
  if (room > 0 && batch.num_rows > 0) {
    shown_.push_back(batch.num_rows <= room ? std::make_shared<columnar::RecordBatch>(batch)
                                            : columnar::SliceBatch(batch, 0, room));
  }
  seen_ += batch.num_rows;
  return Status::OK();
}

Result<SinkBatchResult> ConsoleSink::Commit() {
  columnar::RecordBatchPtr rows;
  if (shown_.empty()) {
    auto empty = std::make_shared<columnar::RecordBatch>();
    empty->schema = schema_;
    for (const columnar::Field& f : schema_->fields()) {
      empty->columns.push_back(columnar::MakeNullColumn(f.type, 0));
    }
    rows = std::move(empty);
  } else {
    rows = columnar::ConcatBatches(shown_);
  }
  // Spark: three println()s, then Dataset.show's println of the table.
  std::string text =
      "-------------------------------------------\nBatch: " + std::to_string(batch_id_) +
      "\n-------------------------------------------\n" +
      renderer_(*rows, seen_ > num_rows_, truncate_ ? 20 : 0) + "\n";
  std::fwrite(text.data(), 1, text.size(), out_);
  std::fflush(out_);
  SinkBatchResult result;
  result.rows_written = seen_;
  shown_.clear();
  return result;
}

void ConsoleSink::Abort() { shown_.clear(); }

}  // namespace silt::stream
