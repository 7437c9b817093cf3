// QueryRunner's dead letters (query/runner_internal.h): the rows a chunk's
// transform or the sink refused, written to the job's deadLetter table
// under the source records they came from.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "silt/stream/query/runner_internal.h"

namespace silt::stream::query_internal {

Status QueryRunner::WriteDeadLetters(const columnar::RecordBatch& raw,
                                     const expr::RowErrors& errors, const std::string& input_file,
                                     int64_t batch_id) {
  std::vector<std::string> places;
  places.reserve(errors.size());
  for (int64_t row : errors.rows) places.push_back(source_->DescribeRow(raw, row));
  dead_letters_->Add(raw, errors, places, input_file);
  columnar::RecordBatchPtr rows = dead_letters_->Take();
  if (rows == nullptr) return Status::OK();
  Status st = dead_sink_->Write(*rows);
  if (!st.ok()) {
    return st.WithContextParts("batch ", batch_id, ": writing to the dead-letter table ",
                               dead_sink_->target());
  }
  return Status::OK();
}

Result<columnar::RecordBatchPtr> QueryRunner::RemoveRefusedRows(
    const columnar::RecordBatch& raw, const columnar::RecordBatchPtr& rows,
    const std::string& input_file, int64_t batch_id) {
  if (rows == nullptr || rows->num_rows == 0) return rows;
  refused_.Clear();
  sink_->FindRefusedRows(*rows, &refused_);
  if (refused_.empty()) return rows;
  std::optional<const std::vector<int64_t>*> lineage = transform_->last_lineage();
  if (!lineage) {
    return Status::InvalidArgument(
        "batch ", batch_id, ": writing to ", sink_->target(), ": ", refused_.messages.front(),
        " (the rows come from an aggregation or explode and cannot be traced to source "
        "records for the dead-letter table)");
  }
  std::vector<uint8_t> refused_row(static_cast<size_t>(rows->num_rows), 0);
  expr::RowErrors dead;
  for (size_t err_idx = 0; err_idx < refused_.size(); ++err_idx) {
    const int64_t row = refused_.rows[err_idx];
    if (refused_row[static_cast<size_t>(row)] != 0) continue;
    refused_row[static_cast<size_t>(row)] = 1;
    const int64_t source_row = *lineage == nullptr ? row : (**lineage)[static_cast<size_t>(row)];
    dead.Add(source_row, refused_.kinds[err_idx], std::move(refused_.messages[err_idx]));
  }
  SILT_RETURN_NOT_OK(WriteDeadLetters(raw, dead, input_file, batch_id));
  std::vector<int64_t> keep;
  keep.reserve(static_cast<size_t>(rows->num_rows));
  for (int64_t row = 0; row < rows->num_rows; ++row) {
    if (refused_row[static_cast<size_t>(row)] == 0) keep.push_back(row);
  }
  return columnar::TakeBatch(*rows, keep);
}

}  // namespace silt::stream::query_internal
