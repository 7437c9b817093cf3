// Sink: the output side of a streaming query. The query loop drives one
// batch at a time, always in this order:
//
//   offsets/N written -> Begin(N) -> Write(chunk)... -> Commit() ->
//   commits/N written
//
// or Begin(N) -> Write(chunk)... -> Abort() when reading, transforming or
// writing failed (the query then stops with the error; nothing of batch N is
// marked done in the checkpoint).
//
// Contract relative to the checkpoint:
// - Begin(N) may be called for a batch whose offsets/N exists but whose
//   commits/N does not, after a crash anywhere between the two; the rows are
//   the same as in the first run (the source re-reads the recorded range).
// - Commit() returns only when the batch is durable in the target. The query
//   writes commits/N after it returns and never before, so a batch is either
//   committed to the target and re-run (the sink must tolerate that), or not
//   committed and re-run.
// - Exactly once (Delta): the commit carries txn{appId = query id,
//   version = N}; Begin(N) returns false when the table already records
//   version >= N for the query, and Commit() then writes nothing. A
//   concurrent duplicate found at commit time is reported the same way.
// - At least once (Kafka): there is nothing in Kafka to recognise an earlier
//   run by, so a re-run sends the batch's records again.
// - Abort() is best effort and never fails: files it leaves behind are not
//   referenced by any commit.
//
// Thread safety: one query thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "silt/base/clock.h"
#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/expr/eval_options.h"
#include "silt/fs/file_system.h"
#include "silt/stream/job.h"
#include "silt/stream/progress.h"

namespace silt::stream {

struct SinkBatchResult {
  int64_t table_version = -1;  // version committed; -1 when skipped
  bool skipped_duplicate = false;
  int64_t rows_written = 0;
  int64_t files_written = 0;
};

// One part of the current batch written on its own thread (the query's
// `parallelism`): Write from that thread only, then Close on it once the
// part's rows are all written. Commit() commits every closed part with the
// batch; a part writer destroyed unclosed discards its files.
class SinkPartWriter {
 public:
  virtual ~SinkPartWriter() = default;
  // REQUIRES: batch.schema equals the sink's schema.
  virtual Status Write(const columnar::RecordBatch& batch) = 0;
  // Finishes the part's files (encoding, compression and upload happen on
  // the calling thread).
  virtual Status Close() = 0;
};

class Sink {
 public:
  virtual ~Sink() = default;

  // Spark-style description for progress records ("DeltaSink[<path>]").
  virtual std::string Description() const = 0;
  // Where the rows go, for messages (the table path, the Kafka topic).
  virtual const std::string& target() const = 0;

  // Starts batch `batch_id`. false: the target already holds the batch;
  // Write then ignores its input and Commit reports skipped_duplicate.
  virtual Result<bool> Begin(int64_t batch_id) = 0;
  // REQUIRES: batch.schema equals the schema the sink was made for.
  virtual Status Write(const columnar::RecordBatch& batch) = 0;
  // Makes the batch durable in the target (see the contract above).
  virtual Result<SinkBatchResult> Commit() = 0;
  // Discards what the current batch wrote, as far as the target allows.
  virtual void Abort() = 0;

  // Called once at start when the checkpoint records batches up to
  // `last_committed` as committed: Corruption when the target shows it
  // does not hold them (a Delta table whose txn for the query is older, or
  // that is gone: a lost or emptied commit file), since trusting the
  // checkpoint would leave those rows missing for good. OK when the target
  // agrees or cannot tell (Kafka keeps no record of a query).
  virtual Status CheckHoldsCommitted(int64_t last_committed) {
    (void)last_committed;
    return Status::OK();
  }

  // Dead-letter mode, before Write(batch): the rows of `batch` this sink
  // would refuse, appended to `errors` (kSinkRefused, naming the column),
  // so the query can send them to the dead-letter table instead of failing
  // the batch. A Delta sink refuses a NULL in a NOT NULL table column.
  // Default: none. REQUIRES: Begin(N) was called for the current batch.
  virtual void FindRefusedRows(const columnar::RecordBatch& batch, expr::RowErrors* errors) const {
    (void)batch;
    (void)errors;
  }

  // A writer for one more part of the current batch, used on another
  // thread (SinkPartWriter). Null when the sink writes on the query thread
  // only (the default) or skips the batch. REQUIRES: after Begin(N), before
  // Commit/Abort, called on the query thread.
  virtual Result<std::unique_ptr<SinkPartWriter>> OpenPartWriter() {
    return std::unique_ptr<SinkPartWriter>();
  }

  // Per-sink progress of the last committed batch for a sink made of
  // several (`sinks:`); empty otherwise.
  virtual std::vector<SinkProgress::Child> ChildProgress() const { return {}; }
};

// Renders rows as Spark's Dataset.show() does, for the console sink:
// `has_more` appends "only showing top N rows"; `truncate` is the cell
// width (0: no truncation). The CLI supplies it (cli/value_format.h).
using ConsoleRenderer =
    std::function<std::string(const columnar::RecordBatch& rows, bool has_more, int truncate)>;

struct SinkContext {
  // The query's output schema: the rows Write receives.
  columnar::SchemaPtr schema;
  // The checkpoint's query id (the Delta txn appId).
  std::string query_id;
  // When set, used for the sink's table instead of fs::FileSystemForPath
  // (tests inject faults through it).
  fs::FileSystemPtr file_system;
  Clock* clock = &SystemClock();
  // The job's expression settings (ansi, time zone), for the expressions
  // sinks evaluate (merge clauses, dedupBy, where, select).
  expr::EvalOptions eval;
  // The output columns that hold an aggregation's group keys (the window
  // column included), in key order; empty without an aggregation. Update
  // mode on a Delta sink merges on them.
  std::vector<std::string> group_keys;
  // For format console; null: the console sink is refused.
  ConsoleRenderer console_renderer;
};

// Builds the sink for `spec` (formats: delta, kafka, console). A Delta sink
// with mode merge, or in outputMode update over an aggregation, is a
// DeltaMergeSink; update mode without one appends (Spark's rule: without
// an aggregation update mode is append). Validates the options against the
// schema; no I/O on the target yet.
// Errors: InvalidArgument naming the job-file key ("sink.partitionBy[0]: ...");
// NotSupported for other formats.
Result<std::unique_ptr<Sink>> MakeSink(const SinkSpec& spec, const SinkContext& context);

// `sinks:`: one sink over several (multi_sink.h), each made by MakeSink for
// the rows its where/select give it.
Result<std::unique_ptr<Sink>> MakeSinks(const std::vector<SinkSpec>& specs,
                                        const SinkContext& context);

}  // namespace silt::stream
