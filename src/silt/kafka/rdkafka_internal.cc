#include "silt/kafka/rdkafka_internal.h"

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

}  // namespace silt::kafka::internal
