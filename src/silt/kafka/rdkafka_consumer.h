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
};

// Errors: InvalidArgument naming a property librdkafka rejects
// ("kafka.<name>: ..."); IOError when the client cannot be created.
Result<std::unique_ptr<Consumer>> MakeRdKafkaConsumer(const ConsumerConfig& config);

}  // namespace silt::kafka
