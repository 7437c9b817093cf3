#include "silt/kafka/rdkafka_internal.h"

#include <exception>
#include <optional>

#include "silt/base/logging.h"

namespace silt::kafka::internal {

bool IsRetryable(rd_kafka_resp_err_t err) {
  switch (err) {
    case RD_KAFKA_RESP_ERR__TRANSPORT:
    case RD_KAFKA_RESP_ERR__TIMED_OUT:
    case RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN:
    case RD_KAFKA_RESP_ERR__WAIT_COORD:
    case RD_KAFKA_RESP_ERR__QUEUE_FULL:
    case RD_KAFKA_RESP_ERR__TIMED_OUT_QUEUE:
    case RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION:
    case RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION:
    case RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT:
    case RD_KAFKA_RESP_ERR_NETWORK_EXCEPTION:
    case RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS:
    case RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_NOT_COORDINATOR:
    case RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS:
    case RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND:
    case RD_KAFKA_RESP_ERR_KAFKA_STORAGE_ERROR:
    case RD_KAFKA_RESP_ERR_FENCED_LEADER_EPOCH:
    case RD_KAFKA_RESP_ERR_UNKNOWN_LEADER_EPOCH:
    case RD_KAFKA_RESP_ERR_OFFSET_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_PREFERRED_LEADER_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
    case RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS: return true;
    default: return false;
  }
}

namespace {

// librdkafka's own log lines (syslog levels) go through silt's logger, so
// they share its format (text or JSON lines) and its level.
void LogToSilt(const rd_kafka_t* rk, int level, const char* facility, const char* text) {
  (void)rk;
  const LogLevel silt_level = level <= 3   ? LogLevel::kError
                              : level == 4 ? LogLevel::kWarn
                              : level <= 6 ? LogLevel::kInfo
                                           : LogLevel::kDebug;
  Log(silt_level, "kafka", facility, ": ", text);
}

}  // namespace

Result<rd_kafka_conf_t*> MakeConf(const std::map<std::string, std::string>& config) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set_log_cb(conf, &LogToSilt);
  char error[512];
  for (const auto& [name, value] : config) {
    if (rd_kafka_conf_set(conf, name.c_str(), value.c_str(), error, sizeof(error)) !=
        RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      return Status::InvalidArgument("kafka.", name, ": ", error);
    }
  }
  return conf;
}

Status CommitGroupOffsets(rd_kafka_t* rk, const std::map<TopicPartition, int64_t>& offsets) {
  if (offsets.empty()) return Status::OK();
  PartitionList list(rd_kafka_topic_partition_list_new(static_cast<int>(offsets.size())));
  for (const auto& [tp, offset] : offsets) {
    rd_kafka_topic_partition_list_add(list.get(), tp.topic.c_str(), tp.partition)->offset = offset;
  }
  rd_kafka_resp_err_t err = rd_kafka_commit(rk, list.get(), 0);
  if (err) return KafkaStatus(err, "committing offsets to the Kafka consumer group");
  for (int idx = 0; idx < list->cnt; ++idx) {
    if (list->elems[idx].err) {
      return KafkaStatus(list->elems[idx].err, "committing offset ", list->elems[idx].offset,
                         " of Kafka partition ", list->elems[idx].topic, "-",
                         list->elems[idx].partition, " to the consumer group");
    }
  }
  return Status::OK();
}

Result<std::vector<std::optional<int64_t>>> LookupOffsetsForTimes(
    rd_kafka_t* rk, const std::vector<TopicPartition>& partitions, int64_t timestamp_ms,
    int timeout_ms) {
  PartitionList list(rd_kafka_topic_partition_list_new(static_cast<int>(partitions.size())));
  for (const TopicPartition& tp : partitions) {
    rd_kafka_topic_partition_list_add(list.get(), tp.topic.c_str(), tp.partition)->offset =
        timestamp_ms;
  }
  rd_kafka_resp_err_t err = rd_kafka_offsets_for_times(rk, list.get(), timeout_ms);
  if (err) return KafkaStatus(err, "looking up Kafka offsets for timestamp ", timestamp_ms);
  std::vector<std::optional<int64_t>> out;
  for (int idx = 0; idx < list->cnt; ++idx) {
    const rd_kafka_topic_partition_t& elem = list->elems[idx];
    if (elem.err) {
      return KafkaStatus(elem.err, "looking up the offset for timestamp ", timestamp_ms,
                         " in Kafka partition ", elem.topic, "-", elem.partition);
    }
    out.push_back(elem.offset >= 0 ? std::optional<int64_t>(elem.offset) : std::nullopt);
  }
  return out;
}

namespace {

// librdkafka's timestamp types mapped to Kafka's enum ids, which Spark shows.
int32_t SparkTimestampType(rd_kafka_timestamp_type_t type) {
  switch (type) {
    case RD_KAFKA_TIMESTAMP_CREATE_TIME: return 0;
    case RD_KAFKA_TIMESTAMP_LOG_APPEND_TIME: return 1;
    default: return -1;
  }
}

}  // namespace

int64_t IntProperty(const std::map<std::string, std::string>& properties, const std::string& name,
                    int64_t fallback) {
  auto it = properties.find(name);
  if (it == properties.end()) return fallback;
  try {
    return std::stoll(it->second);
  } catch (const std::exception&) {
    return fallback;
  }
}

void ParkedFetcherWaker::Wake(rd_kafka_t* rk, rd_kafka_topic_partition_list_t* partitions) const {
  if (partitions->cnt == 0) return;
  for (int idx = 0; idx < partitions->cnt; ++idx) {
    partitions->elems[idx].offset = RD_KAFKA_OFFSET_END;
  }
  SILT_LOG_DEBUG("kafka", "waking the fetcher of ", partitions->cnt,
                 " partition(s): the consumer queue reached queued.min.messages (", threshold_,
                 ")");
  constexpr int kWakeWaitMs = 100;
  const rd_kafka_resp_err_t err = rd_kafka_offsets_for_times(rk, partitions, kWakeWaitMs);
  if (err) SILT_LOG_DEBUG("kafka", "waking the fetcher: ", rd_kafka_err2str(err));
}

void AppendMessage(const rd_kafka_message_t* message, std::string_view topic, RecordColumns* out) {
  std::optional<std::string_view> key;
  if (message->key != nullptr) {
    key = std::string_view(static_cast<const char*>(message->key), message->key_len);
  }
  std::optional<std::string_view> value;
  if (message->payload != nullptr) {
    value = std::string_view(static_cast<const char*>(message->payload), message->len);
  }
  rd_kafka_timestamp_type_t ts_type = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE;
  int64_t ts = rd_kafka_message_timestamp(message, &ts_type);
  out->Append(key, value, topic, message->partition, message->offset, ts,
              SparkTimestampType(ts_type));
  if (!out->include_headers()) return;
  rd_kafka_headers_t* headers = nullptr;
  if (rd_kafka_message_headers(message, &headers) != RD_KAFKA_RESP_ERR_NO_ERROR ||
      headers == nullptr || rd_kafka_header_cnt(headers) == 0) {
    out->NoHeaders();
    return;
  }
  const char* name = nullptr;
  const void* header_value = nullptr;
  size_t size = 0;
  for (size_t idx = 0; rd_kafka_header_get_all(headers, idx, &name, &header_value, &size) ==
                       RD_KAFKA_RESP_ERR_NO_ERROR;
       ++idx) {
    out->AddHeader(name, header_value == nullptr
                             ? std::nullopt
                             : std::optional<std::string_view>(
                                   std::string_view(static_cast<const char*>(header_value), size)));
  }
  out->EndHeaders();
}

}  // namespace silt::kafka::internal
