// The librdkafka implementation of kafka::GroupConsumer.

#include <librdkafka/rdkafka.h>

#include <cstring>
#include <set>

#include "silt/base/logging.h"
#include "silt/kafka/group_consumer.h"
#include "silt/kafka/rdkafka_internal.h"

namespace silt::kafka {

namespace {

using internal::CommitGroupOffsets;
using internal::KafkaStatus;
using internal::LookupOffsetsForTimes;

using internal::PartitionList;

std::vector<TopicPartition> ToVector(const rd_kafka_topic_partition_list_t* list) {
  std::vector<TopicPartition> out;
  out.reserve(static_cast<size_t>(list->cnt));
  for (int idx = 0; idx < list->cnt; ++idx) {
    out.push_back({list->elems[idx].topic, list->elems[idx].partition});
  }
  return out;
}

std::string Describe(const std::vector<TopicPartition>& partitions) {
  std::string out;
  for (const TopicPartition& tp : partitions) {
    if (!out.empty()) out += ", ";
    out += tp.ToString();
  }
  return out.empty() ? "(none)" : out;
}

class RdKafkaGroupConsumer final : public GroupConsumer {
 public:
  explicit RdKafkaGroupConsumer(GroupConsumerConfig config) : config_(std::move(config)) {}

  ~RdKafkaGroupConsumer() override {
    if (rk_ == nullptr) return;
    Close().IgnoreError("leaving the consumer group on destruction");
    if (queue_ != nullptr) rd_kafka_queue_destroy(queue_);
    rd_kafka_destroy(rk_);
  }

  Status Open() {
    std::map<std::string, std::string> properties = config_.properties;
    if (!properties.count("group.id") || properties.at("group.id").empty()) {
      return Status::InvalidArgument("a Kafka consumer group needs group.id");
    }
    if (!properties.count("bootstrap.servers")) {
      return Status::InvalidArgument("a Kafka consumer group needs bootstrap.servers");
    }
    properties.emplace("partition.assignment.strategy", "cooperative-sticky");
    // The table, not the group, holds positions: every start offset comes
    // from on_assigned, and offsets are committed only when asked.
    properties["enable.auto.commit"] = "false";
    properties["enable.auto.offset.store"] = "false";
    properties["enable.partition.eof"] = "true";
    properties["auto.offset.reset"] = "error";
    SILT_ASSIGN_OR_RETURN(rd_kafka_conf_t * conf, internal::MakeConf(properties));
    rd_kafka_conf_set_opaque(conf, this);
    rd_kafka_conf_set_rebalance_cb(conf, &RebalanceCallback);
    rd_kafka_conf_set_error_cb(conf, &ErrorCallback);
    char error[512];
    rk_ = rd_kafka_new(RD_KAFKA_CONSUMER, conf, error, sizeof(error));
    if (rk_ == nullptr) {
      rd_kafka_conf_destroy(conf);
      return Status::IOError("creating the Kafka consumer: ", error);
    }
    // One queue for records, rebalances and errors: everything is served
    // by Poll on the caller's thread.
    rd_kafka_poll_set_consumer(rk_);
    queue_ = rd_kafka_queue_get_consumer(rk_);
    waker_ = internal::ParkedFetcherWaker(internal::IntProperty(
        properties, "queued.min.messages", internal::kDefaultQueuedMinMessages));
    PartitionList topics(
        rd_kafka_topic_partition_list_new(static_cast<int>(config_.topics.size())));
    for (const std::string& topic : config_.topics) {
      rd_kafka_topic_partition_list_add(topics.get(), topic.c_str(), RD_KAFKA_PARTITION_UA);
    }
    rd_kafka_resp_err_t err = rd_kafka_subscribe(rk_, topics.get());
    if (err) {
      return KafkaStatus(err, "subscribing to Kafka topics ", Describe(ToTopics()),
                         " in consumer group ", properties.at("group.id"));
    }
    return Status::OK();
  }

  Result<int64_t> Poll(RecordColumns* out, int64_t max_records, int64_t timeout_ms) override {
    if (closed_) return Status::Internal("GroupConsumer::Poll after Close");
    WakeParkedFetcher();
    int64_t appended = 0;
    int timeout = static_cast<int>(timeout_ms);
    while (appended < max_records && out->bytes() < RecordColumns::kMaxChunkBytes) {
      rd_kafka_message_t* message = rd_kafka_consumer_poll(rk_, timeout);
      SILT_RETURN_NOT_OK(TakeCallbackError());
      if (message == nullptr) break;
      // Only the first poll waits: afterwards take what is already fetched.
      timeout = 0;
      Status st = internal::HandleMessage(message, *this, out, &appended);
      rd_kafka_message_destroy(message);
      SILT_RETURN_NOT_OK(st);
    }
    return appended;
  }

  const std::map<TopicPartition, PartitionPosition>& positions() const override {
    return positions_;
  }

  bool TakeRebalanced() override {
    const bool rebalanced = rebalanced_;
    rebalanced_ = false;
    return rebalanced;
  }

  Status Seek(const std::map<TopicPartition, int64_t>& offsets) override {
    PartitionList list(rd_kafka_topic_partition_list_new(static_cast<int>(offsets.size())));
    for (const auto& [tp, offset] : offsets) {
      if (!positions_.count(tp)) continue;
      rd_kafka_topic_partition_list_add(list.get(), tp.topic.c_str(), tp.partition)->offset =
          offset;
    }
    if (list->cnt == 0) return Status::OK();
    // Asynchronous: the call moves each partition's version barrier at
    // once, so no record fetched before it is returned afterwards, and the
    // fetcher restarts at the new offset on its own. (Waiting for the seeks
    // to finish hung for good with librdkafka 2.0.2 on partitions assigned
    // moments before.)
    rd_kafka_error_t* error = rd_kafka_seek_partitions(rk_, list.get(), 0);
    if (error != nullptr) {
      Status st = KafkaStatus(rd_kafka_error_code(error), "seeking Kafka partitions (",
                              rd_kafka_error_string(error), ")");
      rd_kafka_error_destroy(error);
      return st;
    }
    for (int idx = 0; idx < list->cnt; ++idx) {
      const rd_kafka_topic_partition_t& elem = list->elems[idx];
      if (elem.err && elem.err != RD_KAFKA_RESP_ERR__IN_PROGRESS) {
        return KafkaStatus(elem.err, "seeking Kafka partition ", elem.topic, "-", elem.partition,
                           " to offset ", elem.offset);
      }
      positions_[{elem.topic, elem.partition}] = {elem.offset, false};
    }
    return Status::OK();
  }

  Status CommitOffsets(const std::map<TopicPartition, int64_t>& offsets) override {
    return CommitGroupOffsets(rk_, offsets);
  }

  Result<Watermarks> QueryWatermarks(const TopicPartition& partition) override {
    Watermarks out;
    rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(
        rk_, partition.topic.c_str(), partition.partition, &out.low, &out.high,
        static_cast<int>(config_.request_timeout_ms));
    if (err) {
      return KafkaStatus(err, "querying the offsets of Kafka partition ", partition.ToString());
    }
    return out;
  }

  Result<std::vector<std::optional<int64_t>>> OffsetsForTimes(
      const std::vector<TopicPartition>& partitions, int64_t timestamp_ms) override {
    return LookupOffsetsForTimes(rk_, partitions, timestamp_ms,
                                 static_cast<int>(config_.request_timeout_ms));
  }

  std::string member_id() const override {
    char* id = rd_kafka_memberid(rk_);
    if (id == nullptr) return "";
    std::string out(id);
    rd_kafka_mem_free(rk_, id);
    return out;
  }

  Status Close() override {
    if (closed_ || rk_ == nullptr) return Status::OK();
    closed_ = true;
    // Serves the last revocation through on_revoked and leaves the group,
    // so the others get the partitions at once instead of after the
    // session timeout.
    rd_kafka_resp_err_t err = rd_kafka_consumer_close(rk_);
    if (err) return KafkaStatus(err, "leaving the Kafka consumer group");
    return Status::OK();
  }

 private:
  // Decision 198 (internal::ParkedFetcherWaker), checked once per Poll: a
  // member that drains a backlog parks librdkafka's fetcher as the
  // standalone consumer does.
  void WakeParkedFetcher() {
    if (queue_ == nullptr || !waker_.Due(static_cast<int64_t>(rd_kafka_queue_length(queue_)))) {
      return;
    }
    PartitionList list(rd_kafka_topic_partition_list_new(static_cast<int>(positions_.size())));
    for (const auto& [tp, position] : positions_) {
      if (position.at_end) continue;
      rd_kafka_topic_partition_list_add(list.get(), tp.topic.c_str(), tp.partition);
    }
    waker_.Wake(rk_, list.get());
  }

  static void RebalanceCallback(rd_kafka_t* rk, rd_kafka_resp_err_t err,
                                rd_kafka_topic_partition_list_t* partitions, void* opaque) {
    (void)rk;
    static_cast<RdKafkaGroupConsumer*>(opaque)->OnRebalance(err, partitions);
  }

  static void ErrorCallback(rd_kafka_t* rk, int err, const char* reason, void* opaque) {
    auto* self = static_cast<RdKafkaGroupConsumer*>(opaque);
    const auto code = static_cast<rd_kafka_resp_err_t>(err);
    if (code == RD_KAFKA_RESP_ERR__FATAL) {
      char text[512];
      rd_kafka_resp_err_t fatal = rd_kafka_fatal_error(rk, text, sizeof(text));
      if (self->callback_error_.ok()) {
        self->callback_error_ = KafkaStatus(fatal, "Kafka consumer group member (", text, ")");
      }
      return;
    }
    if (code == RD_KAFKA_RESP_ERR__AUTHENTICATION || code == RD_KAFKA_RESP_ERR__SSL ||
        code == RD_KAFKA_RESP_ERR_SASL_AUTHENTICATION_FAILED) {
      if (self->callback_error_.ok()) {
        self->callback_error_ =
            KafkaStatus(code, "connecting to Kafka (", reason != nullptr ? reason : "", ")");
      }
      return;
    }
    // Transport errors come and go while brokers restart; librdkafka
    // reconnects by itself.
    SILT_LOG_DEBUG("kafka", "consumer group: ", reason != nullptr ? reason : "", " [",
                   rd_kafka_err2name(code), "]");
  }

  void OnRebalance(rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* partitions) {
    rebalanced_ = true;
    last_ = nullptr;  // positions_ changes below
    const bool cooperative = std::strcmp(rd_kafka_rebalance_protocol(rk_), "COOPERATIVE") == 0;
    std::vector<TopicPartition> list = ToVector(partitions);
    if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
      Result<std::map<TopicPartition, int64_t>> starts = config_.on_assigned(list);
      bool failed = !starts.ok();
      // Partitions that cannot start are assigned at the log end, paused:
      // nothing of them is read, and no committed offset is looked up.
      for (int idx = 0; idx < partitions->cnt; ++idx) {
        partitions->elems[idx].offset = RD_KAFKA_OFFSET_END;
      }
      if (failed) {
        if (callback_error_.ok()) callback_error_ = starts.status();
      } else {
        for (int idx = 0; idx < partitions->cnt; ++idx) {
          rd_kafka_topic_partition_t& elem = partitions->elems[idx];
          auto it = starts->find({elem.topic, elem.partition});
          if (it == starts->end()) {
            failed = true;
            if (callback_error_.ok()) {
              callback_error_ = Status::Internal("no start offset for Kafka partition ", elem.topic,
                                                 "-", elem.partition);
            }
            continue;
          }
          elem.offset = it->second;
        }
      }
      SILT_LOG_INFO("kafka", "consumer group: assigned ", Describe(list));
      // The assignment must be taken even when the caller cannot start the
      // partitions: librdkafka's view of the group follows it. They stay
      // paused, and Poll reports the error.
      if (cooperative) {
        rd_kafka_error_t* error = rd_kafka_incremental_assign(rk_, partitions);
        if (error != nullptr) {
          if (callback_error_.ok()) {
            callback_error_ = KafkaStatus(rd_kafka_error_code(error), "assigning Kafka partitions ",
                                          Describe(list), " (", rd_kafka_error_string(error), ")");
          }
          rd_kafka_error_destroy(error);
          return;
        }
      } else {
        // An eager assignor (the user chose range or roundrobin): the list
        // is the whole new assignment.
        positions_.clear();
        rd_kafka_assign(rk_, partitions);
      }
      if (failed) {
        rd_kafka_pause_partitions(rk_, partitions);
        return;
      }
      for (int idx = 0; idx < partitions->cnt; ++idx) {
        const rd_kafka_topic_partition_t& elem = partitions->elems[idx];
        positions_[{elem.topic, elem.partition}] = {elem.offset, false};
      }
      return;
    }
    const bool lost = rd_kafka_assignment_lost(rk_) != 0;
    SILT_LOG_INFO("kafka", "consumer group: ", lost ? "lost " : "revoked ", Describe(list));
    if (config_.on_revoked) config_.on_revoked(list, lost);
    for (const TopicPartition& tp : list) positions_.erase(tp);
    if (cooperative) {
      rd_kafka_error_t* error = rd_kafka_incremental_unassign(rk_, partitions);
      if (error != nullptr) {
        SILT_LOG_WARN("kafka", "consumer group: unassigning ", Describe(list), ": ",
                      rd_kafka_error_string(error));
        rd_kafka_error_destroy(error);
      }
    } else {
      positions_.clear();
      rd_kafka_assign(rk_, nullptr);
    }
  }

  Status TakeCallbackError() {
    if (callback_error_.ok()) return Status::OK();
    Status st = std::move(callback_error_);
    callback_error_ = Status::OK();
    return st;
  }

  std::vector<TopicPartition> ToTopics() const {
    std::vector<TopicPartition> out;
    for (const std::string& topic : config_.topics) out.push_back({topic, -1});
    return out;
  }

  PartitionPosition* FindPosition(const char* topic, int32_t partition) {
    if (last_ != nullptr && last_partition_ == partition && last_topic_ == topic) return last_;
    auto it = positions_.find(TopicPartition{topic, partition});
    if (it == positions_.end()) return nullptr;
    last_ = &it->second;
    last_topic_ = it->first.topic;
    last_partition_ = partition;
    return last_;
  }

  // internal::HandleMessage's hooks: positions_ is the bookkeeping.
  friend Status internal::HandleMessage<RdKafkaGroupConsumer>(const rd_kafka_message_t*,
                                                              RdKafkaGroupConsumer&, RecordColumns*,
                                                              int64_t*);
  void AtPartitionEnd(PartitionPosition& position, int64_t end_offset) {
    // Past the last record there may be transaction markers (the end is
    // then beyond `next`); `next` stays after the last record, so an end
    // reported before a seek back can never skip records.
    if (end_offset >= position.next) position.at_end = true;
  }
  Status OnConsumerError(const rd_kafka_message_t& message, const char* /*topic*/) {
    // Consumer errors that are not about one partition's data (a broker
    // restarting, a topic not there yet) pass; librdkafka recovers.
    SILT_LOG_WARN("kafka", "consumer group: ", rd_kafka_message_errstr(&message), " [",
                  rd_kafka_err2name(message.err), "]");
    return Status::OK();
  }
  bool TakeRecord(PartitionPosition& position, int64_t offset) { return offset >= position.next; }
  void RecordTaken(PartitionPosition& position, int64_t offset) {
    position.next = offset + 1;
    position.at_end = false;
  }

  GroupConsumerConfig config_;
  rd_kafka_t* rk_ = nullptr;
  rd_kafka_queue_t* queue_ = nullptr;  // the consumer queue (records, rebalances, errors)
  internal::ParkedFetcherWaker waker_{0};
  bool closed_ = false;
  bool rebalanced_ = false;
  // An error met in a callback, returned by the next Poll.
  Status callback_error_;
  std::map<TopicPartition, PartitionPosition> positions_;
  // The partition of the last record (records come in runs per partition);
  // reset whenever positions_ loses entries.
  PartitionPosition* last_ = nullptr;
  std::string last_topic_;
  int32_t last_partition_ = -1;
};

}  // namespace

Result<std::unique_ptr<GroupConsumer>> MakeRdKafkaGroupConsumer(GroupConsumerConfig config) {
  if (!config.on_assigned) {
    return Status::InvalidArgument("a Kafka consumer group member needs on_assigned");
  }
  if (config.topics.empty()) {
    return Status::InvalidArgument("a Kafka consumer group member needs topics to subscribe to");
  }
  auto consumer = std::make_unique<RdKafkaGroupConsumer>(std::move(config));
  SILT_RETURN_NOT_OK(consumer->Open());
  return std::unique_ptr<GroupConsumer>(std::move(consumer));
}

}  // namespace silt::kafka
