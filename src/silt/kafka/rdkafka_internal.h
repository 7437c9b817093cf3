// librdkafka helpers shared by the consumers and the producer:
// configuration, error conversion, partition lists and records taken into
// RecordColumns. Private to src/silt/kafka/*.cc.
//
// Thread safety: plain functions; a ParkedFetcherWaker belongs to one
// consumer.
#pragma once

#include <librdkafka/rdkafka.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "silt/base/result.h"
#include "silt/kafka/consumer.h"

namespace silt::kafka::internal {

// Whether `err` is a transient condition worth retrying (timeouts, leader
// elections, transport failures).
bool IsRetryable(rd_kafka_resp_err_t err);

// Status for `err` with `context` first: NotFound for unknown topics and
// partitions, IOError otherwise; retryable per IsRetryable.
template <typename... Args>
Status KafkaStatus(rd_kafka_resp_err_t err, Args&&... context) {
  const char* text = rd_kafka_err2str(err);
  Status st =
      (err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART || err == RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC ||
       err == RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION)
          ? Status::NotFound(std::forward<Args>(context)..., ": ", text)
          : Status::IOError(std::forward<Args>(context)..., ": ", text);
  return st.WithRetryable(IsRetryable(err));
}

// An rd_kafka_conf_t holding `config` (librdkafka property names). Errors:
// InvalidArgument naming the property librdkafka rejected ("kafka.<name>").
Result<rd_kafka_conf_t*> MakeConf(const std::map<std::string, std::string>& config);

struct PartitionListDeleter {
  void operator()(rd_kafka_topic_partition_list_t* list) const {
    rd_kafka_topic_partition_list_destroy(list);
  }
};
using PartitionList = std::unique_ptr<rd_kafka_topic_partition_list_t, PartitionListDeleter>;

// Commits `offsets` (the next offset to read, per partition) to the consumer
// group of `rk`, synchronously. An empty map commits nothing. Errors: the
// commit's own error, or the first partition whose commit failed, named with
// its topic, partition and offset (KafkaStatus).
Status CommitGroupOffsets(rd_kafka_t* rk, const std::map<TopicPartition, int64_t>& offsets);

// Consumer::OffsetsForTimes on `rk`, one lookup of at most `timeout_ms`: for
// each of `partitions`, the earliest offset whose record timestamp is >=
// `timestamp_ms`, or nullopt when there is none. Errors: KafkaStatus naming
// the timestamp (and the partition whose lookup failed).
Result<std::vector<std::optional<int64_t>>> LookupOffsetsForTimes(
    rd_kafka_t* rk, const std::vector<TopicPartition>& partitions, int64_t timestamp_ms,
    int timeout_ms);

// The integer value of librdkafka property `name` in `properties`, or
// `fallback` when it is not set or not an integer (librdkafka itself then
// rejects the value, naming the property).
int64_t IntProperty(const std::map<std::string, std::string>& properties, const std::string& name,
                    int64_t fallback);

// librdkafka's default queued.min.messages.
inline constexpr int64_t kDefaultQueuedMinMessages = 100000;

// librdkafka 2.0.2 (Debian 12's) stops fetching while a consumer queue holds
// queued.min.messages records and decides again only when the partition's
// broker thread wakes up, up to a second later (rd_kafka_max_block_ms; 2.3
// added fetch.queue.backoff.ms): a consumer that reads a backlog more
// slowly than the broker sends it waits out that second again and again
// (decision 198). A consumer calls Due with its queue's length before it
// waits on the queue; once the queue has reached the threshold and half of
// it is read, Due says so once, and the consumer calls Wake with the
// partitions it is still reading: a ListOffsets request to their leaders
// wakes each leader's broker thread, which sees the queue below the
// threshold and fetches. The answer is not needed.
//
// Thread safety: one consumer's thread.
class ParkedFetcherWaker {
 public:
  // `threshold`: the consumer's queued.min.messages; 0 or less never wakes.
  explicit ParkedFetcherWaker(int64_t threshold) : threshold_(threshold) {}

  bool Due(int64_t queued) {
    if (threshold_ <= 0) return false;
    if (queued >= threshold_) {
      parked_ = true;
      return false;
    }
    if (!parked_ || queued > threshold_ / 2) return false;
    parked_ = false;
    return true;
  }

  // Sends the request for `partitions` (their offsets are overwritten),
  // waiting for the answer at most 100 ms. Failures are logged at debug
  // level only: the next wake-up retries.
  void Wake(rd_kafka_t* rk, rd_kafka_topic_partition_list_t* partitions) const;

 private:
  int64_t threshold_;
  bool parked_ = false;  // the queue reached threshold_ since the last Due
};

// Appends `message` (of `topic`) to `out` as Spark's Kafka source shows a
// record: key, value, partition, offset, timestamp and its type, and the
// headers when `out` takes them.
void AppendMessage(const rd_kafka_message_t* message, std::string_view topic, RecordColumns* out);

// Handles one message taken off a consumer queue, the steps both consumers
// share: a partition end, an offset gone, another consumer error, or a
// record appended to `out` (AppendMessage) and counted in `*appended`.
// `tracker` is the consumer's per-partition bookkeeping, called directly
// (no virtual call, no allocation here: this runs per record):
//   Position* FindPosition(const char* topic, int32_t partition): nullptr
//       for a partition not tracked (its messages are dropped);
//   void AtPartitionEnd(Position&, int64_t end_offset);
//   Status OnConsumerError(const rd_kafka_message_t&, const char* topic):
//       any other error; its Status is returned;
//   bool TakeRecord(Position&, int64_t offset): false drops the record;
//   void RecordTaken(Position&, int64_t offset): after the append.
// Errors: NotFound naming topic-partition and offset when that offset is no
// longer available (retention, out of range); else OnConsumerError's.
template <typename Tracker>
Status HandleMessage(const rd_kafka_message_t* message, Tracker& tracker, RecordColumns* out,
                     int64_t* appended) {
  const char* topic = message->rkt ? rd_kafka_topic_name(message->rkt) : "";
  if (message->err) {
    if (message->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      auto* position = tracker.FindPosition(topic, message->partition);
      if (position != nullptr) tracker.AtPartitionEnd(*position, message->offset);
      return Status::OK();
    }
    if (message->err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET ||
        message->err == RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE) {
      return Status::NotFound(
          "Kafka partition ", topic, "-", message->partition, ": offset ", message->offset,
          " is no longer available (deleted by retention?): ", rd_kafka_message_errstr(message));
    }
    return tracker.OnConsumerError(*message, topic);
  }
  auto* position = tracker.FindPosition(topic, message->partition);
  if (position == nullptr || !tracker.TakeRecord(*position, message->offset)) return Status::OK();
  AppendMessage(message, topic, out);
  ++*appended;
  tracker.RecordTaken(*position, message->offset);
  return Status::OK();
}

}  // namespace silt::kafka::internal
