// GroupConsumer: a Kafka consumer that shares its topics with the other
// members of a consumer group, for scale-out workers (docs/scale-out.md).
//
// kafka::Consumer reads planned offset ranges and leaves positions to the
// query's checkpoint; a GroupConsumer lets the group protocol decide which
// partitions this member reads (librdkafka's high-level consumer,
// cooperative-sticky assignment by default: a rebalance moves only the
// partitions that change owner, and the others keep being read through it).
// The caller still decides where each partition starts:
//
//  - `on_assigned` runs inside Poll (librdkafka's rebalance callback) with
//    the partitions just handed to this member and returns the offset each
//    one starts at; the consumer then adds them to its assignment
//    (incremental assign) at those offsets. An error stops nothing by
//    itself: the partitions are assigned but paused and Poll returns the
//    error, so the caller can leave the group.
//  - `on_revoked` runs inside Poll (or Close) before partitions leave this
//    member (`lost`: the group already gave them to someone else, e.g.
//    after a session timeout); nothing of them is returned afterwards.
//
// Per owned partition the consumer keeps the next offset (after the last
// record Poll returned, or where the partition was started or sought) and
// whether the broker reported the end of the log there. Records below a
// partition's next offset (fetched before a seek) are dropped.
//
// Offsets are committed to the group only when asked (CommitOffsets):
// auto-commit is off.
//
// Thread safety: one thread at a time; the callbacks run on the thread
// that calls Poll or Close.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "silt/base/result.h"
#include "silt/kafka/consumer.h"

namespace silt::kafka {

struct PartitionPosition {
  // The offset of the next record to read.
  int64_t next = 0;
  // The broker reported the end of the log at `next` and no record came
  // since.
  bool at_end = false;
};

struct GroupConsumerConfig {
  // librdkafka properties without Spark's "kafka." prefix; bootstrap.servers
  // and group.id are required. partition.assignment.strategy defaults to
  // cooperative-sticky; auto-commit and auto.offset.reset are always off.
  std::map<std::string, std::string> properties;
  // Topic names; a name starting with '^' is a regular expression
  // (librdkafka's subscription syntax).
  std::vector<std::string> topics;
  // Bound on each metadata/offset/commit request.
  int64_t request_timeout_ms = 30'000;
  // See the header comment. Required.
  std::function<Result<std::map<TopicPartition, int64_t>>(const std::vector<TopicPartition>&)>
      on_assigned;
  std::function<void(const std::vector<TopicPartition>&, bool lost)> on_revoked;
};

class GroupConsumer {
 public:
  virtual ~GroupConsumer() = default;

  // Appends at most `max_records` records of the owned partitions to `out`
  // (fewer once out->bytes() reaches RecordColumns::kMaxChunkBytes),
  // waiting at most `timeout_ms` for the first one, and serves the group
  // protocol (the callbacks). Returns how many were appended. Errors:
  // NotFound naming topic, partition and offset when a start offset is
  // no longer stored (deleted by retention); the error of `on_assigned`;
  // IOError for a fatal client error (fenced, authentication).
  virtual Result<int64_t> Poll(RecordColumns* out, int64_t max_records, int64_t timeout_ms) = 0;

  // The partitions this member owns now and their positions.
  virtual const std::map<TopicPartition, PartitionPosition>& positions() const = 0;
  // True after a rebalance callback ran since the last call (the owned set
  // may have changed).
  virtual bool TakeRebalanced() = 0;

  // Moves owned partitions to `offsets` (others are ignored): no record
  // read before the call is returned after it, and reading goes on from
  // the new offsets. Errors: IOError naming the partition (errors found
  // later by the fetcher come back through Poll).
  virtual Status Seek(const std::map<TopicPartition, int64_t>& offsets) = 0;

  // Commits `offsets` (the next offset to read) to the group. Errors:
  // IOError (retryable for a rebalance in progress or a timeout).
  virtual Status CommitOffsets(const std::map<TopicPartition, int64_t>& offsets) = 0;

  // As kafka::Consumer's (may be called from the callbacks).
  virtual Result<Watermarks> QueryWatermarks(const TopicPartition& partition) = 0;
  virtual Result<std::vector<std::optional<int64_t>>> OffsetsForTimes(
      const std::vector<TopicPartition>& partitions, int64_t timestamp_ms) = 0;

  // The group's id for this member ("" before it joined).
  virtual std::string member_id() const = 0;

  // Leaves the group (on_revoked runs for what is still owned). Idempotent.
  virtual Status Close() = 0;
};

// Errors: InvalidArgument naming a property librdkafka rejects
// ("kafka.<name>: ...") or a missing group.id / bootstrap.servers; IOError
// when the client cannot be created or subscribe.
Result<std::unique_ptr<GroupConsumer>> MakeRdKafkaGroupConsumer(GroupConsumerConfig config);

}  // namespace silt::kafka
