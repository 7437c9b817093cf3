// QueryRunner, internal to stream/query*: the state of one RunQuery call
// (query.h) and its steps, one job a file:
//
//   query.cc               the trigger loop (Run) and each batch's progress
//   query/open.cc          building the source, transforms and sinks and
//                          opening (or creating) the checkpoint (Open)
//   query/restore.cc       where the query resumes: the checkpoint's last
//                          batch, committed or to re-run (Restore)
//   query/batch.cc         running one planned batch: read, transform,
//                          write, commit, commits/N (RunBatch)
//   query/parts.cc         a batch's parts on threads of their own
//                          (RunParts, the job's `parallelism`)
//   query/dead_letters.cc  a chunk's bad rows to the dead-letter table
//
// Thread safety: one query thread; RunParts alone starts threads, each of
// which touches only its own part's transform and writer, and the parts'
// readers one call at a time under each reader's lock, until it is
// joined. Errors name the batch and stage, as RunQuery documents.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "silt/base/clock.h"
#include "silt/base/result.h"
#include "silt/base/status.h"
#include "silt/columnar/column.h"
#include "silt/expr/eval_options.h"
#include "silt/stream/checkpoint/checkpoint.h"
#include "silt/stream/checkpoint/checkpoint_lock.h"
#include "silt/stream/job.h"
#include "silt/stream/ops/transform.h"
#include "silt/stream/progress.h"
#include "silt/stream/query.h"
#include "silt/stream/sink/dead_letter.h"
#include "silt/stream/sink/sink.h"
#include "silt/stream/source/source.h"

namespace silt::stream::query_internal {

// `job` and `options` must outlive the runner.
class QueryRunner {
 public:
  QueryRunner(const JobSpec& job, const QueryOptions& options)
      : job_(job), options_(options), clock_(options.clock ? options.clock : &SystemClock()) {}

  // Opens and restores the query, then runs batches until the trigger says
  // stop (RunQuery's contract).
  Result<QueryResult> Run();

 private:
  // --- The trigger loop (query.cc).
  bool StopRequested() const { return options_.stop_flag != nullptr && options_.stop_flag->load(); }
  // Sleeps on the injected clock in short slices until the monotonic clock
  // reaches `deadline`, so a stop request is seen promptly.
  void WaitUntilMono(int64_t deadline);
  // processingTime: waits for the next multiple of the interval after the
  // trigger start `trigger_wall` (Spark's ProcessingTimeExecutor); a batch
  // that overran its interval is followed at once.
  void WaitForNextInterval(int64_t trigger_wall);
  // Spark's StreamingQueryProgress of the batch just finished.
  QueryProgress MakeProgress(const OffsetSeq& seq, int64_t trigger_wall, int64_t trigger_mono,
                             const ProgressDurations& durations, const BatchProgress& batch) const;

  // --- Opening (query/open.cc).
  // Builds and binds the source, the transforms and the sinks, then opens
  // (locks, creates) the checkpoint; a bad job fails before anything is
  // written. Sets the ids, parallelism_ and the part transforms.
  Status Open();
  // Logs a warning for each spark.sql.* key of the job file that silt
  // neither honours nor records.
  void WarnInertSparkConf() const;
  // The output columns of the aggregation's group keys (SinkContext's
  // group_keys): the last stateful step's, when it is a groupBy. Errors:
  // InvalidArgument for outputMode update on a Delta sink over a groupBy
  // written as SQL.
  Result<std::vector<std::string>> GroupKeyColumns() const;
  // sink_ (and the dead-letter sink) for query_id_.
  Status MakeQuerySink();

  // --- Restoring (query/restore.cc).
  // MicroBatchExecution.populateStartOffsets: resume after the last
  // committed batch, or re-run the last planned one that has no commit
  // (pending_); then restores the source.
  Status Restore();
  // Warns for each offset conf whose value in the checkpoint
  // (`checkpoint_conf_json`) wins over the job's, as Spark does.
  void WarnCheckpointConfWins(std::string_view checkpoint_conf_json) const;

  // --- One batch (query/batch.cc).
  // Reads, transforms and writes batch `seq` (already in offsets/), commits
  // it to the sinks, writes commits/N and moves the query's offsets and
  // watermark on. Fills `durations` and `progress`.
  Status RunBatch(const OffsetSeq& seq, int64_t trigger_wall, int64_t trigger_mono,
                  ProgressDurations* durations, BatchProgress* progress);
  // Writes one transform result (null or empty: nothing) to the sink,
  // adding its rows to `output_rows`.
  Status WriteRows(const columnar::RecordBatchPtr& rows, int64_t batch_id, int64_t* output_rows);
  void AbortSinks();

  // --- Parallel parts (query/parts.cc).
  // The batch's parts, each read, transformed and written on a thread of
  // its own (the first on this one) through its own transform and sink part
  // writer, one thread per writer: thread i starts with reader i (modulo
  // the readers) and, when that is done, goes on with chunks of the others
  // (so the rows a part writer holds may come from any reader); the
  // first failure stops the others at their next chunk and is returned
  // as the serial loop would report it. The parts' event-time statistics
  // join the main transform's (the batch's watermark).
  // REQUIRES: 0 < readers.size() <= writers.size() <= part_transforms_.size() + 1.
  Status RunParts(const std::vector<std::unique_ptr<BatchReader>>& readers,
                  const std::vector<std::unique_ptr<SinkPartWriter>>& writers,
                  const expr::EvalContext& ctx, int64_t batch_id, int64_t* input_rows,
                  int64_t* output_rows);

  // --- Dead letters (query/dead_letters.cc).
  // The chunk's bad rows (`errors`, rows of `raw`) to the dead-letter
  // table, each with its place as the source describes it.
  Status WriteDeadLetters(const columnar::RecordBatch& raw, const expr::RowErrors& errors,
                          const std::string& input_file, int64_t batch_id);
  // The rows of `rows` (the transform's result for chunk `raw`) the sink
  // would refuse go to the dead-letter table under their source records;
  // returns the rest. Errors: InvalidArgument when some are refused but
  // the rows cannot be traced to source records (after an aggregation or
  // an explode), naming the first refusal.
  Result<columnar::RecordBatchPtr> RemoveRefusedRows(const columnar::RecordBatch& raw,
                                                     const columnar::RecordBatchPtr& rows,
                                                     const std::string& input_file,
                                                     int64_t batch_id);

  const JobSpec& job_;
  const QueryOptions& options_;
  Clock* clock_;
  std::string checkpoint_path_;
  std::unique_ptr<CheckpointLock> lock_;
  std::unique_ptr<CheckpointDir> checkpoint_;
  std::string query_id_;
  std::string run_id_;
  std::unique_ptr<Source> source_;
  std::unique_ptr<Transform> transform_;
  // Threads per batch (the job's `parallelism`), and the transforms of the
  // parts beyond the first (RunParts).
  int parallelism_ = 1;
  std::vector<std::unique_ptr<Transform>> part_transforms_;
  std::unique_ptr<Sink> sink_;
  expr::EvalOptions eval_options_;
  // deadLetter: the table's sink, the batch's dead letters, and the error
  // vector of the chunk being processed.
  std::unique_ptr<Sink> dead_sink_;
  std::unique_ptr<DeadLetterBuilder> dead_letters_;
  expr::RowErrors chunk_errors_;
  expr::RowErrors refused_;

  std::string conf_json_;
  int64_t next_batch_id_ = 0;
  std::optional<std::string> start_offset_;
  int64_t watermark_ms_ = 0;
  // The watermark of the batch before the next one (offsets/N-1's): rows at
  // or below it are late for a stateful step (Spark 3.5's late-event rule).
  int64_t previous_watermark_ms_ = 0;
  // spark.sql.streaming.statefulOperator.allowMultiple (see Open).
  bool allow_multiple_ = true;
  std::optional<OffsetSeq> pending_;
  std::optional<int64_t> last_trigger_mono_;
};

}  // namespace silt::stream::query_internal
