// RunScaleOutWorker: one of N `silt run` processes of a `scaleOut:` job
// (docs/scale-out.md), sharing a Kafka topic through a consumer group and
// writing one Delta table.
//
// The table is the offset log. Every batch commits, in one Delta commit,
// its data files and one txn per topic-partition it read, appId
// "<appId>:<topic>:<partition>" (worker_record.h), version = the next
// offset to read. Each txn is a compare-and-set
// (delta::CommitRequest::expected_txns): it lands only if the table still
// records the offset this worker started the batch from, checked
// atomically against every commit that won the race. So:
//
//  - when the group hands this worker partitions (cooperative-sticky
//    incremental assignment), it starts each at the table's recorded
//    offset, or by startingOffsets when the table has none yet;
//  - a batch holding records of a partition revoked meanwhile is discarded
//    (its files deleted, the other partitions sought back), and so is a
//    batch whose commit finds that another worker advanced one of its
//    partitions: both re-read the table and go on from what it records;
//  - after the table commit, the offsets are committed to the group too,
//    for lag tools (and again after every assignment), never read back.
//
// A batch reads until every owned partition is at its end (default
// trigger, at most kMaxReadMicros), until the next processingTime
// boundary, or until maxOffsetsPerTrigger records; it also ends at a
// rebalance. Records go through the transform and into Parquet files a
// chunk at a time while the batch reads.
//
// Thread safety: Run blocks the calling thread; the stop flag may be set
// from any thread.
#pragma once

#include "silt/base/result.h"
#include "silt/stream/job.h"
#include "silt/stream/query.h"

namespace silt::stream {

// Longest a default-trigger batch keeps reading when the partitions never
// reach their end (a topic written faster than it is read).
constexpr int64_t kMaxReadMicros = 5'000'000;

// Runs the worker until the stop flag, maxBatches committed batches, or an
// error. REQUIRES: job.scale_out. Errors: InvalidArgument naming the
// job-file key for a job a worker cannot run; those of the table, the
// transform and the Kafka group, naming the batch.
Result<QueryResult> RunScaleOutWorker(const JobSpec& job, const QueryOptions& options);

}  // namespace silt::stream
