// ForwardingConsumer: a kafka::Consumer that passes every call to another
// one, for test decorators that count or delay some calls and forward the
// rest (override only what the test watches, call the base for the rest).
//
// Thread safety: as the consumer it wraps (one thread at a time).
// Ownership: owns the wrapped consumer.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "silt/kafka/consumer.h"

namespace silt::testing {

class ForwardingConsumer : public kafka::Consumer {
 public:
  explicit ForwardingConsumer(std::unique_ptr<kafka::Consumer> inner) : inner_(std::move(inner)) {}

  Result<std::vector<kafka::TopicInfo>> ListTopics() override;
  Result<kafka::Watermarks> QueryWatermarks(const kafka::TopicPartition& partition) override;
  Result<std::map<kafka::TopicPartition, int64_t>> ListOffsets(
      const std::vector<kafka::TopicPartition>& partitions, OffsetSpec spec) override;
  Result<std::vector<std::optional<int64_t>>> OffsetsForTimes(
      const std::vector<kafka::TopicPartition>& partitions, int64_t timestamp_ms) override;
  Status Assign(const std::vector<kafka::OffsetRange>& ranges) override;
  Result<int64_t> Poll(kafka::RecordColumns* out, int64_t max_records, int64_t timeout_ms) override;
  bool AssignmentDone() const override;
  Status CommitOffsets(const std::map<kafka::TopicPartition, int64_t>& offsets) override;

 private:
  std::unique_ptr<kafka::Consumer> inner_;
};

}  // namespace silt::testing
