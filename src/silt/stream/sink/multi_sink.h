// MultiSink (`sinks:` in the job file): several sinks fed from one read of
// the source, one checkpoint — the foreachBatch patterns "write several
// tables" and "route rows by event type" without user code.
//
// Each entry has its own `where` (the rows it takes; absent: all) and
// `select` (what it writes of them; absent: every column), applied to the
// query's output, then its own format and options (a Delta table in append
// or merge mode, a Kafka topic, the console). Per batch N the children run
// the Sink contract side by side:
//   Begin(N) on each: a Delta table that already records txn{query id, N}
//     skips the batch (the others run it);
//   Write(chunk): each child's where/select over the chunk, then its Write;
//   Commit(): the children commit in job-file order; Commit returns when all
//     have, and only then does the query write commits/N.
// So a crash between two tables' commits re-runs batch N, and only the
// tables still missing it commit (Kafka children send again: at least
// once). An error in one child fails the batch (the others' commits, if any,
// stand and are skipped by the re-run).
//
// Thread safety: one query thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "silt/base/result.h"
#include "silt/stream/job.h"
#include "silt/stream/ops/transform.h"
#include "silt/stream/sink/sink.h"

namespace silt::stream {

// What one child did with the last committed batch (progress, messages).
struct ChildSinkResult {
  std::string name;
  std::string description;
  SinkBatchResult result;
  int64_t rows = 0;  // rows routed to it
};

class MultiSink final : public Sink {
 public:
  // `make_child` builds one entry's sink for its routed schema (MakeSink).
  // Errors: the children's, and the where/select binding errors naming
  // "sinks[i].where" / "sinks[i].select[j]".
  using ChildFactory =
      std::function<Result<std::unique_ptr<Sink>>(const SinkSpec&, const SinkContext&)>;
  static Result<std::unique_ptr<MultiSink>> Make(const std::vector<SinkSpec>& specs,
                                                 const SinkContext& context,
                                                 const ChildFactory& make_child);
  ~MultiSink() override;

  // "MultiSink[<name>=<child description>, ...]".
  std::string Description() const override;
  // The children's targets, comma-separated.
  const std::string& target() const override { return target_; }
  // false only when every child already holds the batch.
  Result<bool> Begin(int64_t batch_id) override;
  Status Write(const columnar::RecordBatch& batch) override;
  // table_version: the last Delta version committed (-1: none);
  // skipped_duplicate when every child skipped; rows_written: the sum.
  Result<SinkBatchResult> Commit() override;
  void Abort() override;
  Status CheckHoldsCommitted(int64_t last_committed) override;

  // Per child, of the last committed batch, in job-file order.
  const std::vector<ChildSinkResult>& last_results() const { return results_; }
  std::vector<SinkProgress::Child> ChildProgress() const override;

 private:
  struct Child {
    std::string name;
    std::unique_ptr<Transform> route;  // null: every row, every column
    std::unique_ptr<Sink> sink;
    bool active = false;
    int64_t rows = 0;
  };
  MultiSink() = default;

  std::vector<Child> children_;
  std::string target_;
  std::vector<ChildSinkResult> results_;
};

}  // namespace silt::stream
