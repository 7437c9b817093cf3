// The librdkafka implementation of kafka::Consumer.
//
// Thread safety: as Consumer (one thread at a time). Ownership: the consumer
// owns its librdkafka handle and closes it on destruction.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "silt/kafka/consumer.h"

namespace silt::kafka {

struct ConsumerConfig {
  // librdkafka properties (bootstrap.servers, security.protocol, sasl.*,
  // ssl.*, group.id, ...), already stripped of Spark's "kafka." prefix.
  // Without group.id the consumer uses a private random group and
  // CommitOffsets fails.
  std::map<std::string, std::string> properties;
  // Bound on each metadata/offset request.
  int64_t request_timeout_ms = 30'000;
  // Spark's fetchOffset.numRetries / fetchOffset.retryIntervalMs: metadata
  // and offset lookups that fail with a transient error (no leader yet
  // right after a topic is created, a leader election, a timeout) are tried
  // again this many times, this far apart.
  int fetch_offset_num_retries = 3;
  int64_t fetch_offset_retry_interval_ms = 1'000;
};

// Errors: InvalidArgument naming a property librdkafka rejects
// ("kafka.<name>: ..."); IOError when the client cannot be created.
Result<std::unique_ptr<Consumer>> MakeRdKafkaConsumer(const ConsumerConfig& config);

}  // namespace silt::kafka
