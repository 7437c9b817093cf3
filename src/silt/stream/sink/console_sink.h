// ConsoleSink (format: console): prints each micro-batch to stdout as
// Spark's console sink does, in every output mode:
//
//   -------------------------------------------
//   Batch: N
//   -------------------------------------------
//   <Dataset.show(numRows, truncate) of the batch's rows>
//
// Options (Spark's): numRows (default 20: rows shown; "only showing top N
// rows" when the batch has more), truncate (default true: cells cut to 20
// characters). The table text comes from the ConsoleRenderer the caller
// supplies (the CLI's show() formatter), so stream/ does not format values.
// Nothing is kept: a re-run batch prints again (at least once, as Spark's).
//
// Thread safety: one query thread.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/stream/job.h"
#include "silt/stream/sink/sink.h"

namespace silt::stream {

class ConsoleSink final : public Sink {
 public:
  // Errors: InvalidArgument for a bad numRows/truncate or another option
  // (naming the key); NotSupported without a renderer in `context`.
  static Result<std::unique_ptr<ConsoleSink>> Make(const SinkSpec& spec,
                                                   const SinkContext& context);

  // "org.apache.spark.sql.execution.streaming.ConsoleTable$", Spark's.
  std::string Description() const override;
  const std::string& target() const override { return target_; }
  Result<bool> Begin(int64_t batch_id) override;
  Status Write(const columnar::RecordBatch& batch) override;
  // Prints the batch and flushes stdout.
  Result<SinkBatchResult> Commit() override;
  void Abort() override;

 private:
  ConsoleSink() = default;
  ConsoleRenderer renderer_;
  columnar::SchemaPtr schema_;
  std::string target_ = "console";
  int64_t num_rows_ = 20;
  bool truncate_ = true;
  std::FILE* out_ = stdout;
  int64_t batch_id_ = -1;
  int64_t seen_ = 0;
  std::vector<columnar::RecordBatchPtr> shown_;  // at most num_rows_ rows
};

}  // namespace silt::stream
