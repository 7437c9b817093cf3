#include "silt/testing/forwarding_consumer.h"

namespace silt::testing {

Result<std::vector<kafka::TopicInfo>> ForwardingConsumer::ListTopics() {
  return inner_->ListTopics();
}

Result<kafka::Watermarks> ForwardingConsumer::QueryWatermarks(
    const kafka::TopicPartition& partition) {
  return inner_->QueryWatermarks(partition);
}

Result<std::map<kafka::TopicPartition, int64_t>> ForwardingConsumer::ListOffsets(
    const std::vector<kafka::TopicPartition>& partitions, OffsetSpec spec) {
  return inner_->ListOffsets(partitions, spec);
}

Result<std::vector<std::optional<int64_t>>> ForwardingConsumer::OffsetsForTimes(
    const std::vector<kafka::TopicPartition>& partitions, int64_t timestamp_ms) {
  return inner_->OffsetsForTimes(partitions, timestamp_ms);
}

Status ForwardingConsumer::Assign(const std::vector<kafka::OffsetRange>& ranges) {
  return inner_->Assign(ranges);
}

Result<int64_t> ForwardingConsumer::Poll(kafka::RecordColumns* out, int64_t max_records,
                                         int64_t timeout_ms) {
  return inner_->Poll(out, max_records, timeout_ms);
}

bool ForwardingConsumer::AssignmentDone() const { return inner_->AssignmentDone(); }

Status ForwardingConsumer::CommitOffsets(const std::map<kafka::TopicPartition, int64_t>& offsets) {
  return inner_->CommitOffsets(offsets);
}

}  // namespace silt::testing
