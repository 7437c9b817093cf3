// StatefulOperator: a transform step whose result depends on earlier
// batches (Spark's StateStoreWriter operators): a streaming aggregation, a
// deduplication. Each keeps its rows in one versioned state store
// (state/state_store.h) and takes part in every micro-batch in this order:
//
//   StartBatch(N)    loads state version N (the state after batches < N)
//   Process(chunk)   for each chunk of the batch's input; may return rows
//                    at once (deduplication) or keep them (aggregation)
//   FinishBatch()    after the last chunk: rows the batch emits (per output
//                    mode), state below the watermark evicted
//   Commit()         state version N+1 durable in the checkpoint
//
// or Abort() after a failure anywhere before Commit. The query commits the
// state before the sink's table commit, and commits/N after both, so a
// batch re-run after a crash finds version N still loadable and writes N+1
// again with the same content.
//
// Watermarks (Spark 3.5's IncrementalExecution with one stateful
// operator): rows are late, dropped and counted, when their event time is
// <= the watermark of the previous batch (`late_watermark_ms`); state is
// evicted when its event time is <= the watermark of this batch
// (`eviction_watermark_ms`). For a window key the event time is the
// window's end.
//
// Thread safety: one query thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/expr/eval_options.h"
#include "silt/state/state_store.h"
#include "silt/stream/progress.h"
#include "silt/stream/stateful/event_time.h"

namespace silt::stream {

enum class OutputMode { kAppend, kComplete, kUpdate };

// "append", "complete" or "update" (as the job file spells them, lower
// case); InvalidArgument otherwise.
Result<OutputMode> ParseOutputMode(const std::string& text);
const char* OutputModeName(OutputMode mode);  // Spark's: "Append", ...

struct StatefulBatch {
  int64_t batch_id = 0;
  int64_t late_watermark_ms = 0;
  int64_t eviction_watermark_ms = 0;
  bool has_watermark = false;  // false: neither watermark applies
};

// Dead-letter mode (ctx.row_errors set): an operator reports each input
// row of a chunk it drops as late through this, by its row in the chunk.
void ReportLateRow(expr::RowErrors* errors, int64_t row, int64_t event_micros,
                   int64_t late_watermark_micros);

// Opens the state store of operator `operator_id` (0, 1, ... in plan order).
using StateStoreFactory =
    std::function<Result<std::unique_ptr<state::StateStore>>(int operator_id)>;

class StatefulOperator {
 public:
  virtual ~StatefulOperator() = default;

  virtual const columnar::SchemaPtr& output_schema() const = 0;
  virtual Status StartBatch(const StatefulBatch& batch) = 0;
  // Rows of `chunk` passed on now (may be empty or null). With
  // ctx.row_errors, the rows dropped as late are reported (ReportLateRow).
  virtual Result<columnar::RecordBatchPtr> Process(const columnar::RecordBatchPtr& chunk,
                                                   const expr::EvalContext& ctx) = 0;
  // Whether Process passes on a subset of its chunk's rows (deduplication),
  // and which: the chunk rows the last Process returned, ascending, or null
  // when it returned them all. Traces rows for the dead-letter table.
  virtual bool passes_rows() const { return false; }
  virtual const std::vector<int64_t>* last_kept_rows() const { return nullptr; }
  // Rows emitted at the end of the batch (may be null).
  virtual Result<columnar::RecordBatchPtr> FinishBatch() = 0;
  virtual Status Commit() = 0;
  virtual void Abort() = 0;
  // Of the batch last committed.
  virtual StateOperatorProgress progress() const = 0;
  // Spark's shouldRunAnotherBatch: true when a batch without new data
  // would emit or evict something because the watermark moved to
  // `next_watermark_ms` (past this batch's eviction watermark).
  virtual bool WantsNoDataBatch(int64_t next_watermark_ms) const = 0;

  // State entries as rows, for `silt state`: the key columns, then what
  // the value holds (an aggregation: each aggregate's current result;
  // dropDuplicatesWithinWatermark: expiresAtMicros). Errors: Corruption on
  // bytes this operator did not write.
  virtual Result<columnar::RecordBatchPtr> DecodeState(
      const std::vector<std::string_view>& keys,
      const std::vector<std::string_view>& values) const = 0;
};

// The bookkeeping every operator over one state store shares: the batch
// being run, its progress counters, loading the state at the start and
// committing it (with the store's metrics) at the end.
class StoreBackedOperator : public StatefulOperator {
 public:
  Status Commit() override;
  StateOperatorProgress progress() const override { return progress_; }

 protected:
  // `entries_per_row`: store entries per state row (a session window keeps
  // an index entry beside each session), for numRowsTotal. The operator
  // sets progress_.operator_name.
  explicit StoreBackedOperator(int64_t entries_per_row = 1) : entries_per_row_(entries_per_row) {}
  // Resets the batch's counters and loads state version batch.batch_id.
  Status LoadForBatch(const StatefulBatch& batch);
  static int64_t ElapsedMs(std::chrono::steady_clock::time_point since);

  std::unique_ptr<state::StateStore> store_;
  StatefulBatch batch_;
  bool ran_batch_ = false;
  std::chrono::steady_clock::duration updates_time_{};
  StateOperatorProgress current_;   // the running batch
  StateOperatorProgress progress_;  // the last committed batch

 private:
  int64_t entries_per_row_;
};

// The 8 bytes that lead a state key whose rows carry an event time, so the
// store's byte order is event-time order and eviction is a range scan:
// big-endian with the sign bit flipped (microseconds).
std::string EventTimeKeyPrefix(int64_t micros);
int64_t DecodeEventTimeKeyPrefix(std::string_view key);  // REQUIRES: key.size() >= 8
constexpr size_t kEventTimeKeyPrefixBytes = 8;

}  // namespace silt::stream
