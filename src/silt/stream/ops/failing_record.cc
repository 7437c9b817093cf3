#include "silt/stream/ops/failing_record.h"

#include <optional>
#include <string>

#include "silt/stream/ops/transform.h"
#include "silt/stream/source/source.h"

namespace silt::stream {

namespace {

bool Fails(Transform& transform, const columnar::RecordBatchPtr& chunk, int64_t offset,
           int64_t length, const expr::EvalContext& ctx) {
  Result<columnar::RecordBatchPtr> out =
      transform.ProcessStateless(columnar::SliceBatch(*chunk, offset, length), ctx);
  return !out.ok() && out.status().IsInvalidArgument();
}

// The first row of chunk[offset, offset + length) that fails alone, when the
// range fails. Rows fail independently for every row-level error, so halving
// keeps a failing half; nullopt when the failure needs rows together.
std::optional<int64_t> FirstFailingRow(Transform& transform, const columnar::RecordBatchPtr& chunk,
                                       int64_t offset, int64_t length,
                                       const expr::EvalContext& ctx) {
  while (length > 1) {
    int64_t half = length / 2;
    if (Fails(transform, chunk, offset, half, ctx)) {
      length = half;
    } else if (Fails(transform, chunk, offset + half, length - half, ctx)) {
      offset += half;
      length -= half;
    } else {
      return std::nullopt;
    }
  }
  if (length == 1 && Fails(transform, chunk, offset, 1, ctx)) return offset;
  return std::nullopt;
}

}  // namespace

Status AddFailingRecord(const Status& error, Transform& transform, const Source& source,
                        const columnar::RecordBatchPtr& chunk, const expr::EvalContext& ctx) {
  if (!error.IsInvalidArgument() || chunk == nullptr || chunk->num_rows == 0) return error;
  std::optional<int64_t> row = FirstFailingRow(transform, chunk, 0, chunk->num_rows, ctx);
  if (!row) return error;
  std::string place = source.DescribeRow(*chunk, *row);
  if (place.empty()) return error;
  return Status(error.code(), error.message() + "; first failing record: " + place,
                error.retryable());
}

}  // namespace silt::stream
