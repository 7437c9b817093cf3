#include "silt/stream/stateful/stateful_operator.h"

#include "silt/columnar/temporal.h"

namespace silt::stream {

void ReportLateRow(expr::RowErrors* errors, int64_t row, int64_t event_micros,
                   int64_t late_watermark_micros) {
  errors->Add(row, expr::RowErrorKind::kLateRow,
              "Late row: event time " + columnar::FormatTimestampUtc(event_micros) +
                  " is at or before the watermark " +
                  columnar::FormatTimestampUtc(late_watermark_micros) +
                  " (dropped by the stateful step, as Spark drops late rows)");
}

Result<OutputMode> ParseOutputMode(const std::string& text) {
  if (text == "append") return OutputMode::kAppend;
  if (text == "complete") return OutputMode::kComplete;
  if (text == "update") return OutputMode::kUpdate;
  return Status::InvalidArgument("sink.outputMode: expected append, complete or update, got '",
                                 text, "'");
}

const char* OutputModeName(OutputMode mode) {
  switch (mode) {
    case OutputMode::kAppend: return "Append";
    case OutputMode::kComplete: return "Complete";
    case OutputMode::kUpdate: return "Update";
  }
  return "Append";
}

int64_t StoreBackedOperator::ElapsedMs(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               since)
      .count();
}

Status StoreBackedOperator::LoadForBatch(const StatefulBatch& batch) {
  batch_ = batch;
  ran_batch_ = true;
  current_ = StateOperatorProgress();
  current_.operator_name = progress_.operator_name;
  updates_time_ = std::chrono::steady_clock::duration::zero();
  return store_->Load(batch.batch_id);
}

Status StoreBackedOperator::Commit() {
  const auto start = std::chrono::steady_clock::now();
  SILT_RETURN_NOT_OK(store_->Commit().status());
  current_.commit_time_ms = ElapsedMs(start);
  state::StateStoreMetrics metrics = store_->metrics();
  current_.num_rows_total = metrics.num_rows / entries_per_row_;
  current_.memory_used_bytes = metrics.memory_bytes;
  progress_ = current_;
  return Status::OK();
}

std::string EventTimeKeyPrefix(int64_t micros) {
  uint64_t bits = static_cast<uint64_t>(micros) ^ (uint64_t{1} << 63);
  std::string out(kEventTimeKeyPrefixBytes, '\0');
  for (size_t i = 0; i < kEventTimeKeyPrefixBytes; ++i) {
    out[kEventTimeKeyPrefixBytes - 1 - i] = static_cast<char>(bits & 0xff);
    bits >>= 8;
  }
  return out;
}

int64_t DecodeEventTimeKeyPrefix(std::string_view key) {
  uint64_t bits = 0;
  for (size_t i = 0; i < kEventTimeKeyPrefixBytes; ++i) {
    bits = (bits << 8) | static_cast<unsigned char>(key[i]);
  }
  return static_cast<int64_t>(bits ^ (uint64_t{1} << 63));
}

}  // namespace silt::stream
