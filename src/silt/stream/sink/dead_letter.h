// Dead letters (`deadLetter: {path, options}` in the job file): the rows a
// batch could not turn into good output, kept with what is needed to see
// what happened and to replay them. The dead-letter table is an append-only
// Delta table (a DeltaSink) of the fixed schema below, committed in the
// same micro-batch as the good rows with its own txn{query id, batch id}:
// the query commits it before the sink, and commits/N after both, so a
// re-run batch writes its dead letters again only when the table does not
// hold them yet (docs/exactly-once.md).
//
// Schema (docs/job-file.md "deadLetter", decision 44):
//   key              BINARY     the source record's key (Kafka), else NULL
//   value            BINARY     the source record's raw bytes (Kafka value;
//                               other sources: their `value` column, if any)
//   reason           STRING     malformed_json | ansi_cast | late_row |
//                               sink_refused
//   error            STRING     what failed, naming the expression or column
//   source           STRING     the record's place as the source says it
//                               ("Kafka topic t partition 0 offset 17", or
//                               the input file)
//   topic            STRING     Kafka topic, partition, offset and record
//   partition        INT        timestamp (NULL for other sources)
//   offset           BIGINT
//   timestamp        TIMESTAMP
//   input_file       STRING     file sources: the file the row came from
//   batch_id         BIGINT     the micro-batch
//   query_id         STRING     the checkpoint's query id
//   dead_lettered_at TIMESTAMP  the batch's recorded trigger time (so a
//                               re-run batch writes identical rows)
//
// Thread safety: one query thread.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "silt/columnar/column.h"
#include "silt/expr/eval_options.h"

namespace silt::stream {

// The dead-letter table's schema (every field nullable).
const columnar::SchemaPtr& DeadLetterSchema();

// Collects one batch's dead letters column by column.
class DeadLetterBuilder {
 public:
  explicit DeadLetterBuilder(std::string query_id);

  // Starts batch `batch_id` (forgets the previous batch's rows and counts).
  void StartBatch(int64_t batch_id, int64_t batch_time_micros);
  // One dead letter per entry of `errors`, whose rows index `raw` (a chunk
  // of the source's records). `places[i]` describes errors.rows[i] (may be
  // empty); `input_file` is the chunk's file ("" when none).
  // REQUIRES: places.size() == errors.size().
  void Add(const columnar::RecordBatch& raw, const expr::RowErrors& errors,
           const std::vector<std::string>& places, const std::string& input_file);
  // The rows added since StartBatch or the last Take (null when none).
  columnar::RecordBatchPtr Take();
  // Dead letters of the batch so far, in total and by reason.
  int64_t total() const { return total_; }
  int64_t count(expr::RowErrorKind kind) const { return counts_[static_cast<size_t>(kind)]; }

  static constexpr int kNumKinds = 4;

 private:
  std::string query_id_;
  int64_t batch_id_ = 0;
  int64_t batch_time_micros_ = 0;
  std::vector<columnar::RecordBatchPtr> parts_;
  int64_t total_ = 0;
  std::array<int64_t, kNumKinds> counts_{};
};

}  // namespace silt::stream
