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
//                     stateful steps (stream/stateful/), any number of them
//                     (Spark 3.5's spark.sql.streaming.statefulOperator.
//                     allowMultiple); the steps after one run on what it
//                     emits. Process passes a chunk through the steps and
//                     into each stateful step in turn, as far as rows go
//                     (a deduplication passes rows on at once, an
//                     aggregation keeps them); FinishBatch, after the
//                     batch's last chunk, finishes the stateful steps in
//                     order, each one's end-of-batch rows running through
//                     the steps and stateful steps after it before the next
//                     one finishes. Needs StatefulOptions.
//
// Operator ids are Spark's: IncrementalExecution numbers stateful operators
// walking the plan from the sink down, so the last stateful step is
// operator 0 and the first is N-1 (state/<id>/0/, progress stateOperators
// in that order). Every operator sees the query's watermarks (Spark 3.5's
// WatermarkPropagator: each built-in operator's output watermark is its
// input watermark, so along one chain every operator's late-event
// watermark is the previous batch's and its eviction watermark this
// batch's); a row an operator receives at or behind its late-event
// watermark is dropped and counted by that operator. The event time an
// operator sees is the first column of its input carrying withWatermark's
// mark (stateful/event_time.h).
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
class WatermarkStep;

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
  // spark.sql.streaming.statefulOperator.checkCorrectness.enabled: false
  // lets a stateful step follow an aggregation in complete or update mode
  // (Spark then only logs its correctness warning).
  bool check_correctness = true;
  // spark.sql.streaming.statefulOperator.allowMultiple: true (Spark 3.5's
  // default) refuses a second withWatermark step (Spark's watermark
  // propagation cannot redefine one); false takes it (several watermarks
  // combine by the policy), and the query then drops late rows against the
  // batch's own watermark, as Spark before 3.4 did.
  bool allow_multiple = true;
};

class Transform {
 public:
  // Binds `steps` against `input_schema`. Errors: InvalidArgument naming the
  // step's key path (unknown column, bad expression, non-boolean predicate,
  // watermark on a non-timestamp column, duplicate output column names).
  // Without `stateful`, a stateful step is an InvalidArgument error; with
  // it, the combinations Spark 3.5's UnsupportedOperationChecker refuses
  // are InvalidArgument errors with its reasons (complete mode without an
  // aggregation, a stateful step after an aggregation in complete or update
  // mode, a withWatermark after a stateful step), before any state is read.
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
  // Only the steps before the first stateful one (all steps without one): the
  // failing-record search re-runs rows through them without touching state.
  Result<columnar::RecordBatchPtr> ProcessStateless(const columnar::RecordBatchPtr& batch,
                                                    const expr::EvalContext& ctx);

  // The stateful steps' part of a batch (stateful_operator.h); each is a
  // no-op without one. StartStatefulBatch after StartBatch (every
  // operator loads its state version batch.batch_id); FinishBatch after the
  // last Process (null: nothing emitted); CommitState before the sink
  // commits (every operator's state version N+1, in operator order);
  // AbortState when the batch fails.
  bool has_stateful() const { return !stages_.empty(); }
  // The stateful steps, in job order (the first step's operator id is
  // num_stateful() - 1), as their checkpoint records them, and their
  // operators. REQUIRES: index < num_stateful().
  int num_stateful() const { return static_cast<int>(stages_.size()); }
  const StatefulStep& stateful_step(int index) const;
  const StatefulOperator& stateful_operator(int index) const;
  Status StartStatefulBatch(const StatefulBatch& batch);
  Result<columnar::RecordBatchPtr> FinishBatch(const expr::EvalContext& ctx);
  Status CommitState();
  void AbortState();
  // stateOperators of the last committed batch, one per stateful step in
  // Spark's order (operator 0 first; empty without a stateful step).
  std::vector<StateOperatorProgress> state_progress() const;
  // Spark's no-data batch rule: some stateful step would evict or emit
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
  // A stateful step and the stateless steps after it (up to the next
  // stateful step or the end).
  struct Stage {
    std::unique_ptr<StatefulOperator> op;
    StatefulStep record;
    std::vector<std::unique_ptr<TransformStepImpl>> post_steps;
    // A withWatermark step comes before it: the operator filters late rows,
    // evicts and asks for no-data batches by the watermarks (Spark's
    // propagation gives an operator without one no input watermark).
    bool watermarked = false;
  };
  // The steps before the first stateful one (all of them without one), then
  // the stateful steps in job order.
  std::vector<std::unique_ptr<TransformStepImpl>> steps_;
  std::vector<Stage> stages_;
  // The withWatermark steps (owned by steps_ or a stage's post_steps), and
  // each one's operator watermark (Spark keeps these per run, not in the
  // checkpoint).
  std::vector<const WatermarkStep*> watermark_steps_;
  std::vector<std::optional<int64_t>> operator_watermarks_;

  // Runs `current`, the input of stage `first`, through that stage and the
  // ones after it; what comes out of the last one (null or empty: nothing).
  Result<columnar::RecordBatchPtr> RunStages(size_t first, columnar::RecordBatchPtr current,
                                             const expr::EvalContext& ctx);
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
