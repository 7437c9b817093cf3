// QueryRunner::RunParts (query/runner_internal.h): the parts of a batch
// (Kafka partitions, files) each read, transformed and written on a thread
// of its own, as the job's `parallelism` asks.
#include <atomic>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "silt/base/logging.h"
#include "silt/stream/ops/failing_record.h"
#include "silt/stream/query/runner_internal.h"
#include "silt/stream/query/shared_readers.h"

namespace silt::stream::query_internal {

Status QueryRunner::RunParts(const std::vector<std::unique_ptr<BatchReader>>& readers,
                             const std::vector<std::unique_ptr<SinkPartWriter>>& writers,
                             const expr::EvalContext& ctx, int64_t batch_id, int64_t* input_rows,
                             int64_t* output_rows) {
  struct Outcome {
    Status status;
    bool transform_failed = false;
    columnar::RecordBatchPtr failed_chunk;
    std::string input_file;
    int64_t input_rows = 0;
    int64_t output_rows = 0;
  };
  const size_t num_parts = writers.size();
  std::vector<Outcome> outcomes(num_parts);
  std::atomic<bool> failed{false};
  auto transform_of = [&](size_t part) {
    return part == 0 ? transform_.get() : part_transforms_[part - 1].get();
  };
  // A thread done with its own part's reader goes on with the others'.
  SharedReaders shared(readers);
  auto run = [&](size_t part) {
    Outcome& out = outcomes[part];
    Transform* transform = transform_of(part);
    expr::EvalContext part_ctx = ctx;
    SharedReaders::Cursor cursor;
    columnar::RecordBatchPtr raw;
    while (!failed.load(std::memory_order_relaxed)) {
      Result<bool> taken =
          shared.Take(part, &cursor, &raw, &part_ctx.input_file_name, &out.input_rows);
      if (!taken.ok()) {
        out.status = taken.status().WithContextParts("batch ", batch_id, ": reading the source");
        break;
      }
      if (!*taken) break;
      out.input_rows += raw->num_rows;
      Result<columnar::RecordBatchPtr> processed = transform->Process(raw, part_ctx);
      if (!processed.ok()) {
        out.status = processed.status();
        out.transform_failed = true;
        out.failed_chunk = raw;
        out.input_file = part_ctx.input_file_name;
        break;
      }
      const columnar::RecordBatchPtr& rows = *processed;
      if (rows == nullptr || rows->num_rows == 0) continue;
      out.output_rows += rows->num_rows;
      out.status = writers[part]->Write(*rows);
      if (!out.status.ok()) {
        out.status =
            out.status.WithContextParts("batch ", batch_id, ": writing to ", sink_->target());
        break;
      }
    }
    if (out.status.ok() && !failed.load(std::memory_order_relaxed)) {
      out.status = writers[part]->Close();
      if (out.status.ok()) return;
      out.status =
          out.status.WithContextParts("batch ", batch_id, ": writing to ", sink_->target());
    }
    failed.store(true, std::memory_order_relaxed);
  };
  std::vector<std::thread> threads;
  size_t started = 1;
  for (; started < num_parts; ++started) {
    try {
      threads.emplace_back(run, started);
    } catch (const std::system_error& e) {
      // No thread to be had: the remaining parts run here, after part 0
      // (which leaves them nothing to read, only their writers to close).
      SILT_LOG_WARN("stream", "batch ", batch_id, ": could not start a thread (", e.what(),
                    "); the remaining parts run on the query thread");
      break;
    }
  }
  run(0);
  for (size_t part = started; part < num_parts; ++part) run(part);
  for (std::thread& thread : threads) thread.join();
  for (size_t part = 0; part < num_parts; ++part) {
    *input_rows += outcomes[part].input_rows;
    *output_rows += outcomes[part].output_rows;
    if (part > 0) transform_->MergeBatchStats(*transform_of(part));
  }
  for (size_t part = 0; part < num_parts; ++part) {
    Outcome& out = outcomes[part];
    if (out.status.ok()) continue;
    if (!out.transform_failed) return out.status;
    expr::EvalContext plain = ctx;
    plain.row_errors = nullptr;
    plain.input_file_name = out.input_file;
    return AddFailingRecord(out.status, *transform_of(part), *source_, out.failed_chunk, plain)
        .WithContextParts("batch ", batch_id, ": transform");
  }
  return Status::OK();
}

}  // namespace silt::stream::query_internal
