// ScriptedCluster: an in-memory stand-in for a Kafka cluster, and the
// kafka::Consumer that reads it, for unit tests of code written against
// silt/kafka/consumer.h (the stream module's Kafka source).
//
// A test appends records to topics, deletes old records as retention would,
// adds partitions, and injects errors; consumers made by NewConsumer see the
// changes at once. Offsets committed to the group are recorded for asserts.
//
// Thread safety: none; one test thread. Ownership: consumers share the
// cluster's state and may outlive the ScriptedCluster object.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "silt/kafka/consumer.h"

namespace silt::testing {

class ScriptedCluster {
 public:
  struct Record {
    std::optional<std::string> key;
    std::optional<std::string> value;
    int64_t timestamp_ms = 0;
    std::vector<std::pair<std::string, std::optional<std::string>>> headers;
  };

  ScriptedCluster();

  // Creates `topic` with `partitions` partitions, or grows it to that many.
  void CreateTopic(const std::string& topic, int32_t partitions);
  // Appends a record; returns its offset. REQUIRES: the partition exists.
  int64_t Append(const std::string& topic, int32_t partition, Record record);
  // Drops the records before `offset`, as retention does (low watermark).
  void DeleteBefore(const std::string& topic, int32_t partition, int64_t offset);
  // The next call to any consumer method fails with `status` (once).
  void FailNextCall(Status status);
  // Offsets committed to the group so far (latest per partition).
  const std::map<kafka::TopicPartition, int64_t>& committed() const;
  // Number of Assign calls over all consumers.
  int64_t assign_calls() const;

  // A consumer of this cluster; `group` empty means no group (commits fail).
  std::unique_ptr<kafka::Consumer> NewConsumer(std::string group = "");

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace silt::testing
