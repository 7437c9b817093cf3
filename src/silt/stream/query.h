// StreamingQuery: runs a JobSpec as Spark's micro-batch execution does:
//
//   for batch N: plan the source's end offset -> write offsets/N (WAL) ->
//   read the records in (start, end] -> transform -> sink: write data files
//   and commit them with txn{appId = query id, version = N} -> write
//   commits/N.
//
// Restart rule: on start the checkpoint's latest offsets/N without commits/N
// re-runs batch N with exactly the recorded offsets; a batch whose txn
// version is already in the table is skipped by the sink (not rewritten).
// The checkpoint directory is locked by a `<checkpoint>/.silt-lock` held for
// the query's life (flock), so a second process on the same checkpoint
// refuses to start.
//
// Thread safety: Run() blocks the calling thread; Stop() may be called from
// any thread (signal handlers use RequestStop via an atomic flag).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "silt/base/clock.h"
#include "silt/base/result.h"
#include "silt/fs/file_system.h"
#include "silt/stream/job.h"
#include "silt/stream/progress.h"
#include "silt/stream/sink/sink.h"

namespace silt::stream {

// One finished micro-batch, as Spark's StreamingQueryProgress reports it.
struct BatchProgress {
  int64_t batch_id = 0;
  int64_t num_input_rows = 0;
  int64_t num_output_rows = 0;
  int64_t duration_ms = 0;
  int64_t table_version = -1;  // Delta version committed, -1 when skipped/none
  bool skipped_duplicate = false;
  std::string start_offset_json;
  std::string end_offset_json;
  // The full progress record (Spark's StreamingQueryProgress JSON fields),
  // as a struct and as its JSON.
  QueryProgress record;
  std::string json;
  // How long the sink's commit (the Delta transaction) took.
  int64_t sink_commit_micros = 0;
};

// Monitoring hooks (metrics, status page, structured logs; see
// stream/metrics/query_metrics.h). Called on the query's thread; an
// implementation publishes what it is told and returns at once (no I/O, no
// waiting), so monitoring never slows the batch loop.
class QueryListener {
 public:
  virtual ~QueryListener() = default;
  // The checkpoint is open and the query's ids are known.
  virtual void OnQueryStarted(const std::string& query_id, const std::string& run_id,
                              const std::string& source_description,
                              const std::string& sink_description) = 0;
  // A trigger asked the source and found nothing new (the query is idle
  // and alive).
  virtual void OnNoNewData() = 0;
  // Batch `batch_id` is planned and about to run.
  virtual void OnBatchStarted(int64_t batch_id) = 0;
  // Batch finished and committed (after on_progress).
  virtual void OnBatchCompleted(const BatchProgress& progress) = 0;
  // The committed source offsets changed without a batch (a scale-out
  // worker was given or lost partitions): Spark's offset JSON of what the
  // query now holds. Default: nothing.
  virtual void OnOffsetsChanged(const std::string& offsets_json) { (void)offsets_json; }
};

struct QueryOptions {
  Clock* clock = &SystemClock();
  // Set to true (e.g. from a signal handler) to stop after the current batch.
  std::atomic<bool>* stop_flag = nullptr;
  // Called after every batch (progress line printing).
  std::function<void(const BatchProgress&)> on_progress;
  // Optional monitoring hooks; must outlive RunQuery.
  QueryListener* listener = nullptr;
  // When set, used for the checkpoint, the source's data and the sink's
  // table instead of fs::FileSystemForPath (tests inject faults through it).
  // The checkpoint is flock'ed only when this is null or a local file system.
  fs::FileSystemPtr file_system;
  // Formats batches for a `format: console` sink (Spark's show()).
  ConsoleRenderer console_renderer;
};

struct QueryResult {
  std::string query_id;
  int64_t batches_run = 0;
  int64_t rows_written = 0;
};

// Runs until the trigger says stop (once/availableNow: source drained;
// maxBatches reached; stop flag), or an error. Errors name the batch and
// stage ("batch 7: committing to <table>: ...").
//
// Triggers: default runs batches back to back and polls every 100 ms (on
// options.clock) while there is no new data; processingTime starts batches
// on interval boundaries; once runs one batch (the pending one after a
// crash, else one with all available data) and stops; availableNow
// snapshots what is available at start and drains it in capped batches.
//
// Crash safety: offsets/N is written (put-if-absent) before batch N reads
// anything, and commits/N only after the Delta commit returned; a restart
// re-runs an uncommitted batch with its recorded offsets and timestamp, and
// the sink skips it when the table already records it.
Result<QueryResult> RunQuery(const JobSpec& job, const QueryOptions& options);

}  // namespace silt::stream
