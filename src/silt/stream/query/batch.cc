// QueryRunner::RunBatch (query/runner_internal.h): one planned batch read,
// transformed, written and committed to the sinks, then marked done in
// commits/N.
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "silt/base/strings.h"
#include "silt/stream/json_internal.h"
#include "silt/stream/ops/failing_record.h"
#include "silt/stream/query/runner_internal.h"

namespace silt::stream::query_internal {

namespace {

// spark.sql.streaming.multipleWatermarkPolicy as the batch records it
// (the checkpoint's value wins, as every persisted conf).
bool MaxWatermarkPolicy(std::string_view conf_json) {
  simdjson::dom::parser parser;
  Result<simdjson::dom::object> conf = internal::ParseJsonObject(parser, conf_json, "conf");
  if (!conf.ok()) return false;
  Result<std::optional<std::string>> policy =
      internal::GetOptionalString(*conf, "spark.sql.streaming.multipleWatermarkPolicy", "conf");
  return policy.ok() && *policy && AsciiLower(**policy) == "max";
}

}  // namespace

Status QueryRunner::RunBatch(const OffsetSeq& seq, int64_t trigger_wall, int64_t trigger_mono,
                             ProgressDurations* durations, BatchProgress* progress) {
  const int64_t batch_id = seq.batch_id;
  const std::string& end = seq.source_offsets[0];
  std::string table = sink_->target();

  int64_t t0 = clock_->MonotonicMicros();
  // A no-data batch (its end is where the previous batch ended) reads
  // nothing.
  const bool no_data = start_offset_ && *start_offset_ == end;
  BatchParts parts;
  if (!no_data) {
    Result<BatchParts> opened = source_->GetBatchParts(start_offset_, end, parallelism_);
    if (!opened.ok()) {
      return opened.status().WithContextParts("batch ", batch_id, ": reading the source");
    }
    parts = std::move(*opened);
  }
  std::vector<std::unique_ptr<BatchReader>>& readers = parts.readers;
  durations->get_batch = (clock_->MonotonicMicros() - t0) / 1000;

  t0 = clock_->MonotonicMicros();
  Result<bool> write = sink_->Begin(batch_id);
  if (!write.ok()) {
    return write.status().WithContextParts("batch ", batch_id, ": opening table ", table);
  }
  if (dead_sink_ != nullptr) {
    Result<bool> dead = dead_sink_->Begin(batch_id);
    if (!dead.ok()) {
      sink_->Abort();
      return dead.status().WithContextParts("batch ", batch_id, ": opening the dead-letter table ",
                                            dead_sink_->target());
    }
    dead_letters_->StartBatch(batch_id, seq.batch_timestamp_ms * 1000);
  }
  transform_->StartBatch();
  for (const std::unique_ptr<Transform>& part : part_transforms_) part->StartBatch();
  StatefulBatch stateful_batch;
  stateful_batch.batch_id = batch_id;
  // Spark 3.5: rows are late against the previous batch's watermark;
  // with allowMultiple false, against this batch's (Spark before 3.4).
  stateful_batch.late_watermark_ms =
      allow_multiple_ ? previous_watermark_ms_ : seq.batch_watermark_ms;
  stateful_batch.eviction_watermark_ms = seq.batch_watermark_ms;
  stateful_batch.has_watermark = transform_->has_watermark();
  Status started = transform_->StartStatefulBatch(stateful_batch);
  if (!started.ok()) {
    AbortSinks();
    return started.WithContextParts("batch ", batch_id, ": loading the state");
  }
  expr::EvalContext ctx;
  // current_timestamp() is the batch's recorded time, so a re-run after a
  // crash produces the same values.
  ctx.current_timestamp_micros = seq.batch_timestamp_ms * 1000;
  // Dead-letter mode: kernels and the stateful step report bad rows here
  // instead of failing the batch (transform.h).
  ctx.row_errors = dead_sink_ != nullptr ? &chunk_errors_ : nullptr;
  int64_t input_rows = 0;
  int64_t output_rows = 0;
  Status st = Status::OK();
  // Several threads' worth and a sink that writes parts: all at once.
  std::vector<std::unique_ptr<SinkPartWriter>> part_writers;
  if (parts.threads > 1 && *write && parts.threads <= part_transforms_.size() + 1 &&
      parts.threads >= readers.size()) {
    for (size_t part = 0; part < parts.threads && st.ok(); ++part) {
      Result<std::unique_ptr<SinkPartWriter>> writer = sink_->OpenPartWriter();
      if (!writer.ok()) {
        st = writer.status().WithContextParts("batch ", batch_id, ": writing to ", sink_->target());
      } else if (*writer == nullptr) {
        part_writers.clear();
        break;
      } else {
        part_writers.push_back(std::move(*writer));
      }
    }
    if (st.ok() && !part_writers.empty()) {
      st = RunParts(readers, part_writers, ctx, batch_id, &input_rows, &output_rows);
      readers.clear();
    }
  }
  for (size_t reader_idx = 0; reader_idx < readers.size() && st.ok(); ++reader_idx) {
    BatchReader* reader = readers[reader_idx].get();
    while (true) {
      Result<columnar::RecordBatchPtr> raw = reader->Next();
      if (!raw.ok()) {
        st = raw.status().WithContextParts("batch ", batch_id, ": reading the source");
        break;
      }
      if (*raw == nullptr) {
        input_rows += reader->dropped_input_rows();
        break;
      }
      input_rows += (*raw)->num_rows;
      ctx.input_file_name = reader->input_file_name();
      chunk_errors_.Clear();
      Result<columnar::RecordBatchPtr> out = transform_->Process(*raw, ctx);
      if (!out.ok()) {
        expr::EvalContext plain = ctx;
        plain.row_errors = nullptr;
        st = AddFailingRecord(out.status(), *transform_, *source_, *raw, plain)
                 .WithContextParts("batch ", batch_id, ": transform");
        break;
      }
      if (!chunk_errors_.empty()) {
        st = WriteDeadLetters(**raw, chunk_errors_, ctx.input_file_name, batch_id);
        if (!st.ok()) break;
      }
      if (dead_sink_ != nullptr) {
        Result<columnar::RecordBatchPtr> accepted =
            RemoveRefusedRows(**raw, *out, ctx.input_file_name, batch_id);
        if (!accepted.ok()) {
          st = accepted.status();
          break;
        }
        *out = std::move(*accepted);
      }
      st = WriteRows(*out, batch_id, &output_rows);
      if (!st.ok()) break;
    }
  }
  if (st.ok() && transform_->has_stateful()) {
    ctx.input_file_name.clear();
    Result<columnar::RecordBatchPtr> emitted = transform_->FinishBatch(ctx);
    st = emitted.ok() ? WriteRows(*emitted, batch_id, &output_rows)
                      : emitted.status().WithContextParts("batch ", batch_id, ": transform");
    // The state of batch N is durable before the table commit, so a crash
    // in between re-runs N from the same state version.
    if (st.ok()) {
      st = transform_->CommitState();
      if (!st.ok()) st = st.WithContextParts("batch ", batch_id, ": committing the state");
    }
  }
  if (!st.ok()) {
    transform_->AbortState();
    AbortSinks();
    return st;
  }
  const int64_t commit_start = clock_->MonotonicMicros();
  // The dead letters commit first: a crash before the sink's commit
  // re-runs the batch, which then skips them (their txn is recorded) and
  // commits the good rows; commits/N follows both.
  std::optional<DeadLetterProgress> dead_progress;
  if (dead_sink_ != nullptr && dead_letters_->total() == 0) {
    // Nothing to keep: no commit (a re-run finds no bad rows either).
    dead_sink_->Abort();
    dead_progress = DeadLetterProgress();
    dead_progress->description = dead_sink_->Description();
  } else if (dead_sink_ != nullptr) {
    Result<SinkBatchResult> dead = dead_sink_->Commit();
    if (!dead.ok()) {
      AbortSinks();
      return dead.status().WithContextParts(
          "batch ", batch_id, ": committing the dead-letter table ", dead_sink_->target());
    }
    dead_progress = DeadLetterProgress();
    dead_progress->description = dead_sink_->Description();
    if (!dead->skipped_duplicate) {
      dead_progress->num_rows = dead_letters_->total();
      for (int kind = 0; kind < DeadLetterBuilder::kNumKinds; ++kind) {
        const auto k = static_cast<expr::RowErrorKind>(kind);
        if (dead_letters_->count(k) > 0) {
          dead_progress->by_reason.emplace_back(expr::RowErrorKindName(k), dead_letters_->count(k));
        }
      }
    }
  }
  Result<SinkBatchResult> committed = sink_->Commit();
  progress->sink_commit_micros = clock_->MonotonicMicros() - commit_start;
  if (!committed.ok()) {
    sink_->Abort();
    return committed.status().WithContextParts("batch ", batch_id, ": committing to ", table);
  }
  durations->add_batch = (clock_->MonotonicMicros() - t0) / 1000;

  const int64_t next_watermark =
      transform_->AdvanceWatermark(seq.batch_watermark_ms, MaxWatermarkPolicy(seq.conf_json));
  t0 = clock_->MonotonicMicros();
  // Only now, with the table commit done (or known done), is the batch
  // marked complete.
  Status mark =
      checkpoint_->WriteCommit({batch_id, next_watermark}, source_->CommitDiscardsInput());
  if (!mark.ok()) {
    return mark.WithContextParts("batch ", batch_id, ": writing commits/", batch_id);
  }
  source_->OnBatchCommitted(end);
  durations->commit_offsets = (clock_->MonotonicMicros() - t0) / 1000;
  durations->trigger_execution = (clock_->MonotonicMicros() - trigger_mono) / 1000;

  progress->batch_id = batch_id;
  progress->num_input_rows = input_rows;
  progress->num_output_rows = committed->skipped_duplicate ? 0 : output_rows;
  progress->duration_ms = durations->trigger_execution;
  progress->table_version = committed->table_version;
  progress->skipped_duplicate = committed->skipped_duplicate;
  progress->start_offset_json = start_offset_.value_or("");
  progress->end_offset_json = end;
  progress->record = MakeProgress(seq, trigger_wall, trigger_mono, *durations, *progress);
  progress->record.dead_letters = std::move(dead_progress);
  progress->json = ProgressToJson(progress->record);

  start_offset_ = end;
  previous_watermark_ms_ = seq.batch_watermark_ms;
  watermark_ms_ = next_watermark;
  next_batch_id_ = batch_id + 1;
  last_trigger_mono_ = trigger_mono;
  return Status::OK();
}

Status QueryRunner::WriteRows(const columnar::RecordBatchPtr& rows, int64_t batch_id,
                              int64_t* output_rows) {
  if (rows == nullptr || rows->num_rows == 0) return Status::OK();
  *output_rows += rows->num_rows;
  Status st = sink_->Write(*rows);
  if (!st.ok()) return st.WithContextParts("batch ", batch_id, ": writing to ", sink_->target());
  return Status::OK();
}

void QueryRunner::AbortSinks() {
  sink_->Abort();
  if (dead_sink_ != nullptr) dead_sink_->Abort();
}

}  // namespace silt::stream::query_internal
