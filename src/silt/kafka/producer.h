// An idempotent Kafka producer over librdkafka, for `silt produce` and the
// Kafka sink.
//
// Records are queued by Send and delivered in the background; Flush waits for
// every queued record and returns the first delivery error. Idempotence is on
// by default (enable.idempotence=true), so librdkafka's internal retries
// neither duplicate nor reorder records within a partition.
//
// Thread safety: one thread at a time. Ownership: owns its librdkafka handle.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "silt/base/result.h"

namespace silt::kafka {

// One record header; a null value is sent as a header without a value.
struct Header {
  std::string_view key;
  std::optional<std::string_view> value;
};

class Producer {
 public:
  // `properties`: librdkafka properties (bootstrap.servers, ...). Defaults
  // added unless given: enable.idempotence=true, and partitioner
  // murmur2_random so that keyed records land on the partition Java clients
  // choose. Errors: InvalidArgument naming a rejected property; IOError.
  static Result<std::unique_ptr<Producer>> Make(std::map<std::string, std::string> properties);
  ~Producer();
  Producer(const Producer&) = delete;
  Producer& operator=(const Producer&) = delete;

  // Queues one record (copied). `partition` -1 lets the partitioner choose;
  // `timestamp_ms` 0 means now. Blocks while librdkafka's queue is full.
  // Errors: IOError naming the topic (e.g. an earlier delivery failed).
  Status Send(std::string_view topic, int32_t partition, std::optional<std::string_view> key,
              std::optional<std::string_view> value, int64_t timestamp_ms,
              const std::vector<Header>& headers = {});

  // Waits until every queued record is delivered. Errors: IOError with the
  // first delivery error (retryable when transient), or a timeout.
  Status Flush(int64_t timeout_ms);

  // Records acknowledged by the broker so far.
  int64_t delivered() const;

  // Implementation state (librdkafka handle, delivery results), public only
  // so that librdkafka's C callbacks can reach it.
  struct State;

 private:
  explicit Producer(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace silt::kafka
