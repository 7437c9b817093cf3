// An in-process Kafka-protocol broker (librdkafka's mock cluster) for unit
// tests of code that talks to Kafka through the real client, and for demos
// that should run without an installed broker.
//
// Thread safety: one thread at a time; the mock serves clients on its own
// threads. Ownership: owns the cluster and the client handle hosting it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "silt/base/result.h"

namespace silt::kafka {

class MockCluster {
 public:
  // A cluster of `num_brokers` brokers. Errors: IOError.
  static Result<std::unique_ptr<MockCluster>> Make(int num_brokers = 1);
  ~MockCluster();
  MockCluster(const MockCluster&) = delete;
  MockCluster& operator=(const MockCluster&) = delete;

  // "host:port,..." for bootstrap.servers.
  std::string bootstraps() const;
  // Errors: IOError naming the topic.
  Status CreateTopic(const std::string& topic, int32_t partitions);

  struct State;

 private:
  explicit MockCluster(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace silt::kafka
