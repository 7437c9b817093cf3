// Transform: the job's `transform:` steps as a pipeline over RecordBatches,
// bound once at query start so the output schema is known before the first
// batch and every expression error surfaces before any data moves.
//
// Steps (Spark DataFrame operations):
//   select            expressions; `*` and `x.*` (struct fields) expand
//   where / filter    keeps rows whose predicate is true (NULL drops)
//   withColumn        name: expr, replacing a same-named column in place or
//                     appending; several entries apply in order
//   withColumnRenamed old: new (a missing column is a no-op, as in Spark)
//   sql               "SELECT <items> FROM input [WHERE <predicate>]": the
//                     WHERE filters the input, then the items are selected
//   explode(x) / explode_outer / posexplode / posexplode_outer as a select
//                     item: one output row per array element (map entry),
//                     other items repeated
//   window(ts, dur[, slide[, start]]) anywhere in a select (or withColumn
//                     entry): Spark's TimeWindowing, one row per window
//                     containing ts (none for a NULL ts) before the items
//                     (and a generator) apply; two different windows in one
//                     select are an error (expr::WindowExpansion)
//   drop              column names (missing ones are ignored, as in Spark)
//   withWatermark     eventTime column (timestamp) and delayThreshold: rows
//                     pass unchanged; the step records the event-time
//                     min/max of every batch so the query can advance the
//                     watermark as Spark does (max event time - delay, never
//                     backwards, minimum across several watermarks)
//   groupBy, dropDuplicates, dropDuplicatesWithinWatermark
//                     stateful steps (stream/stateful/): at most one per
//                     job; the steps after it run on what it emits. Process
//                     passes a chunk through the steps before it and into
//                     it; FinishBatch, after the batch's last chunk, runs
//                     what it emits at the end of the batch through the
//                     steps after it. Needs StatefulOptions.
//
// Errors name the job-file key path ("transform[1].select[3]") and, from the
// expression module, the position within the expression.
//
// Thread safety: one query thread (bound expressions keep scratch state).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "silt/base/clock.h"
#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/expr/expression.h"
#include "silt/stream/job.h"
#include "silt/stream/stateful/stateful_step.h"

namespace silt::stream {

// Event-time statistics of one batch, in milliseconds (Spark's
// EventTimeStats).
struct EventTimeStats {
  int64_t min_ms = 0;
  int64_t max_ms = 0;
  double sum_ms = 0;
  int64_t count = 0;
};

class TransformStepImpl;

// The expression options of a job: `ansi` and the session time zone
// (`spark.sql.session.timeZone`). Errors: InvalidArgument naming an unknown
// time zone. The fixed zone offset is the zone's offset at `clock`'s now
// (the query's clock, so tests can pin it).
Result<expr::EvalOptions> EvalOptionsForJob(const JobSpec& job, const Clock& clock);

// What stateful steps need from the query: the output mode (Spark's
// UnsupportedOperationChecker rules are checked against it) and where their
// state stores live.
struct StatefulOptions {
  OutputMode output_mode = OutputMode::kAppend;
  StateStoreFactory make_store;
};

class Transform {
 public:
  // Binds `steps` against `input_schema`. Errors: InvalidArgument naming the
  // step's key path (unknown column, bad expression, non-boolean predicate,
  // watermark on a non-timestamp column, duplicate output column names).
  // Without `stateful`, a stateful step is an InvalidArgument error; with
  // it, complete mode without an aggregation is one too (Spark's rule).
  static Result<std::unique_ptr<Transform>> Make(const std::vector<TransformStep>& steps,
                                                 columnar::SchemaPtr input_schema,
                                                 const expr::EvalOptions& options = {},
                                                 const StatefulOptions* stateful = nullptr);
  ~Transform();

  const columnar::SchemaPtr& input_schema() const { return input_schema_; }
  const columnar::SchemaPtr& output_schema() const { return output_schema_; }
  bool has_watermark() const { return !watermark_steps_.empty(); }

  // Forgets the event-time statistics of the previous batch.
  void StartBatch();
  // Runs every step over one chunk of the current batch. `ctx` fixes
  // current_timestamp() for the batch. Errors name the failing step. With a
  // stateful step the result holds what it passes on now: null or empty
  // when it keeps the rows (an aggregation).
  //
  // Dead-letter mode (ctx.row_errors set): the rows kernels report as bad
  // (from_json DEADLETTER, ANSI casts) and the rows the stateful step drops
  // as late leave the pipeline after the step that found them, and
  // ctx.row_errors receives one entry per such row, indexed by its row in
  // `batch` (the source chunk), first error only. A step's rows are traced
  // back through steps that keep rows one to one or filter them (select,
  // withColumn, drop, rename, withWatermark, where, dropDuplicates); an
  // error found after an explode, window expansion, join or aggregation is
  // not traceable and fails the batch with the kernel's message
  // (InvalidArgument naming the step).
  // The lineage of the result's rows (its row -> the chunk's row) is then
  // last_lineage() when there is no stateful step.
  Result<columnar::RecordBatchPtr> Process(const columnar::RecordBatchPtr& batch,
                                           const expr::EvalContext& ctx);
  // After a dead-letter Process: for each row of its result, the row of the
  // source chunk it came from; null when the rows are the chunk's one to
  // one; nullopt when they cannot be traced (an aggregation, an explode).
  std::optional<const std::vector<int64_t>*> last_lineage() const;
  // Only the steps before a stateful one (all steps without one): the
  // failing-record search re-runs rows through them without touching state.
  Result<columnar::RecordBatchPtr> ProcessStateless(const columnar::RecordBatchPtr& batch,
                                                    const expr::EvalContext& ctx);

  // The stateful step's part of a batch (stateful_operator.h); each is a
  // no-op without one. StartStatefulBatch after StartBatch; FinishBatch after
  // the last Process (null: nothing emitted); CommitState before the sink
  // commits; AbortState when the batch fails.
  bool has_stateful() const { return stateful_ != nullptr; }
  // The stateful step as its checkpoint records it, and its operator (null
  // without one).
  const std::optional<StatefulStep>& stateful_step() const { return stateful_step_; }
  const StatefulOperator* stateful_operator() const { return stateful_.get(); }
  Status StartStatefulBatch(const StatefulBatch& batch);
  Result<columnar::RecordBatchPtr> FinishBatch(const expr::EvalContext& ctx);
  Status CommitState();
  void AbortState();
  // stateOperators of the last committed batch (empty without a stateful step).
  std::vector<StateOperatorProgress> state_progress() const;
  // Spark's no-data batch rule: the stateful step would evict or emit
  // because the watermark moved to `next_watermark_ms`.
  bool WantsNoDataBatch(int64_t next_watermark_ms) const;
  // Event-time statistics of the batch so far, merged over watermark steps;
  // nullopt without a watermark or without non-null event times.
  std::optional<EventTimeStats> batch_event_time_stats() const;
  // Adds the event-time statistics `other` (made from the same steps) saw
  // this batch to this transform's: the parts of a batch processed by
  // separate transforms (parallelism) make one batch's watermark.
  void MergeBatchStats(const Transform& other);
  // Spark's WatermarkTracker.updateWatermark after a batch: returns the
  // global watermark for the next batch, given the current one.
  // Several watermarks combine by spark.sql.streaming.multipleWatermarkPolicy:
  // the minimum (Spark's default) or, with `max_policy`, the maximum.
  int64_t AdvanceWatermark(int64_t current_watermark_ms, bool max_policy = false);

 private:
  Transform() = default;
  columnar::SchemaPtr input_schema_;
  columnar::SchemaPtr output_schema_;
  // The steps before the stateful one (all of them without one), the
  // stateful step, and the steps after it.
  std::vector<std::unique_ptr<TransformStepImpl>> steps_;
  std::unique_ptr<StatefulOperator> stateful_;
  std::optional<StatefulStep> stateful_step_;
  std::vector<std::unique_ptr<TransformStepImpl>> post_steps_;
  // Indices into steps_ of the withWatermark steps, and each one's operator
  // watermark (Spark keeps these per run, not in the checkpoint).
  std::vector<size_t> watermark_steps_;
  std::vector<std::optional<int64_t>> operator_watermarks_;

  // Dead-letter mode: runs `steps` tracing rows back to the source chunk.
  Result<columnar::RecordBatchPtr> RunTraced(
      const std::vector<std::unique_ptr<TransformStepImpl>>& steps,
      columnar::RecordBatchPtr current, const expr::EvalContext& ctx);
  // Reports the rows step_errors_ names (rows of a step's input, marked in
  // bad_rows_) to `dead` under their source rows (via lineage_).
  void ReportStepErrors(int64_t input_rows, expr::RowErrors* dead);
  // The current rows are now rows `kept` of the previous ones.
  void ComposeLineage(const std::vector<int64_t>& kept);
  // ReportStepErrors, then drops those rows from `output`, whose row i is
  // input row kept[i] (kept null: row i).
  Result<columnar::RecordBatchPtr> RemoveErrorRows(const columnar::RecordBatchPtr& output,
                                                   int64_t input_rows,
                                                   const std::vector<int64_t>* kept,
                                                   expr::RowErrors* dead);
  // Each current row's source row; identity while lineage_identity_.
  std::vector<int64_t> lineage_;
  bool lineage_identity_ = true;
  bool lineage_known_ = true;
  expr::RowErrors step_errors_;
  std::vector<uint8_t> bad_rows_;
};

}  // namespace silt::stream
