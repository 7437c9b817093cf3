// Reading a planned Kafka batch: its ranges assigned to one consumer, or
// spread over several for parallel parts, and polled into record batches.
#include <algorithm>
#include <cstddef>

#include "silt/base/logging.h"
#include "silt/stream/source/kafka_source.h"

namespace silt::stream {

namespace {

class KafkaBatchReader final : public BatchReader {
 public:
  KafkaBatchReader(kafka::Consumer* consumer, bool include_headers, int64_t poll_timeout_ms,
                   std::string description)
      : consumer_(consumer),
        columns_(include_headers),
        poll_timeout_ms_(poll_timeout_ms),
        description_(std::move(description)) {}

  Result<columnar::RecordBatchPtr> Next() override {
    // Waits in short polls so a stalled broker is reported after
    // kafkaConsumer.pollTimeoutMs without progress, like Spark's
    // "Cannot fetch record ... after polling for" error.
    constexpr int64_t kPollSliceMs = 200;
    int64_t idle_ms = 0;
    while (!consumer_->AssignmentDone() && columns_.num_rows() < columnar::kTargetBatchRows &&
           columns_.bytes() < kafka::RecordColumns::kMaxChunkBytes) {
      SILT_ASSIGN_OR_RETURN(
          int64_t n, consumer_->Poll(&columns_, columnar::kTargetBatchRows - columns_.num_rows(),
                                     kPollSliceMs));
      if (n > 0) {
        idle_ms = 0;
        continue;
      }
      idle_ms += kPollSliceMs;
      if (idle_ms >= poll_timeout_ms_) {
        return Status::IOError("reading ", description_, ": no records after polling for ",
                               poll_timeout_ms_, " ms (kafkaConsumer.pollTimeoutMs)")
            .WithRetryable(true);
      }
    }
    if (columns_.num_rows() == 0) return columnar::RecordBatchPtr();
    return columns_.Finish();
  }

 private:
  kafka::Consumer* consumer_;
  kafka::RecordColumns columns_;
  int64_t poll_timeout_ms_;
  std::string description_;
};

}  // namespace

Result<std::unique_ptr<BatchReader>> KafkaSource::GetBatch(const std::optional<std::string>& start,
                                                           const std::string& end) {
  SILT_ASSIGN_OR_RETURN(std::vector<kafka::OffsetRange> ranges, BatchRanges(start, end));
  SILT_RETURN_NOT_OK(consumer_->Assign(ranges));
  return std::unique_ptr<BatchReader>(std::make_unique<KafkaBatchReader>(
      consumer_.get(), options_.include_headers, options_.poll_timeout_ms, Description()));
}

Result<BatchParts> KafkaSource::GetBatchParts(const std::optional<std::string>& start,
                                              const std::string& end, int max_parts) {
  SILT_ASSIGN_OR_RETURN(std::vector<kafka::OffsetRange> ranges, BatchRanges(start, end));
  int64_t total = 0;
  for (const kafka::OffsetRange& range : ranges) total += range.until - range.from;
  const int64_t num_threads =
      std::max<int64_t>(1, std::min<int64_t>(max_parts, total / kMinRecordsPerPart));
  // A consumer per part, up to one per partition: partitions are read at
  // once as well as decoded at once; the threads share what is unequal.
  int64_t num_parts = make_consumer_ ? num_threads : 1;
  num_parts =
      std::max<int64_t>(1, std::min<int64_t>(num_parts, static_cast<int64_t>(ranges.size())));
  std::vector<std::vector<kafka::OffsetRange>> groups(static_cast<size_t>(num_parts));
  std::vector<int64_t> load(groups.size(), 0);
  std::stable_sort(ranges.begin(), ranges.end(), [](const auto& a, const auto& b) {
    return a.until - a.from > b.until - b.from;
  });
  for (kafka::OffsetRange& range : ranges) {
    const size_t part =
        static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    load[part] += range.until - range.from;
    groups[part].push_back(std::move(range));
  }
  ReleaseUnusedConsumers(groups.size() - 1);
  while (part_consumers_.size() + 1 < groups.size()) {
    SILT_ASSIGN_OR_RETURN(std::unique_ptr<kafka::Consumer> consumer, make_consumer_());
    part_consumers_.push_back({std::move(consumer)});
  }
  const int64_t now = context_.clock->MonotonicMicros();
  BatchParts parts;
  parts.threads = static_cast<size_t>(num_threads);
  for (size_t part = 0; part < groups.size(); ++part) {
    kafka::Consumer* consumer = consumer_.get();
    if (part > 0) {
      PartConsumer& extra = part_consumers_[part - 1];
      extra.last_used_micros = now;
      extra.assigned = true;
      consumer = extra.consumer.get();
    }
    SILT_RETURN_NOT_OK(consumer->Assign(groups[part]));
    parts.readers.push_back(std::make_unique<KafkaBatchReader>(
        consumer, options_.include_headers, options_.poll_timeout_ms, Description()));
  }
  return parts;
}

void KafkaSource::ReleaseUnusedConsumers(size_t used) {
  // A consumer keeps its partitions assigned after a range it read to the
  // end while more records followed (the next batch usually reads on from
  // there), and librdkafka then goes on fetching them into the consumer's
  // queue, up to queued.min.messages / queued.max.messages.kbytes: an
  // extra consumer left so after a split batch held 54-60 MB of workload
  // B's records for the rest of a run (bench/results/2026-12-07-vm-acomp.md).
  // Unassigning stops the fetching; closing the client after a while also
  // frees whatever it had already queued (what an unassignment leaves in
  // the queue is not known to be freed before the queue is served, and
  // nothing serves an unused client's queue), and its threads.
  // A consumer that cannot be unassigned is closed instead: this is
  // housekeeping between batches, never a reason to fail one.
  const int64_t now = context_.clock->MonotonicMicros();
  for (size_t idx = used; idx < part_consumers_.size();) {
    PartConsumer& extra = part_consumers_[idx];
    bool close = now - extra.last_used_micros >= kReleaseIdleMicros;
    if (!close && extra.assigned) {
      Status unassigned = extra.consumer->Assign({});
      if (unassigned.ok()) {
        extra.assigned = false;
      } else {
        SILT_LOG_WARN("stream", "closing an extra Kafka consumer that could not be unassigned: ",
                      unassigned.ToString());
        close = true;
      }
    }
    if (close) {
      part_consumers_.erase(part_consumers_.begin() + static_cast<std::ptrdiff_t>(idx));
    } else {
      ++idx;
    }
  }
}

}  // namespace silt::stream
