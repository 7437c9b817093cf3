#include "silt/kafka/producer.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>

#include "silt/kafka/rdkafka_internal.h"

namespace silt::kafka {

struct Producer::State {
  rd_kafka_t* rk = nullptr;
  int64_t delivered = 0;
  // The first failed delivery; later ones are usually the same cause.
  Status first_error;
};

namespace {

void OnDelivery(rd_kafka_t*, const rd_kafka_message_t* message, void* opaque) {
  auto* state = static_cast<Producer::State*>(opaque);
  if (message->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    ++state->delivered;
  } else if (state->first_error.ok()) {
    state->first_error = internal::KafkaStatus(
        message->err, "delivering a record to Kafka topic ",
        message->rkt ? rd_kafka_topic_name(message->rkt) : "?", " partition ", message->partition);
  }
}

// Errors that no retry can fix (wrong credentials, a TLS handshake the broker
// or silt rejects, a missing ACL, a fatal idempotence error) stop the producer
// at once: otherwise every record would wait out message.timeout.ms and the
// user would see a timeout instead of the cause. Transport errors stay
// librdkafka's to retry.
void OnError(rd_kafka_t* rk, int err, const char* reason, void* opaque) {
  auto* state = static_cast<Producer::State*>(opaque);
  auto code = static_cast<rd_kafka_resp_err_t>(err);
  char fatal_reason[512];
  if (code == RD_KAFKA_RESP_ERR__FATAL) {
    code = rd_kafka_fatal_error(rk, fatal_reason, sizeof(fatal_reason));
    reason = fatal_reason;
  } else if (code != RD_KAFKA_RESP_ERR__AUTHENTICATION && code != RD_KAFKA_RESP_ERR__SSL &&
             code != RD_KAFKA_RESP_ERR_SASL_AUTHENTICATION_FAILED &&
             code != RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED &&
             code != RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED) {
    return;
  }
  if (state->first_error.ok()) {
    state->first_error = Status::IOError("Kafka producer: ", rd_kafka_err2name(code), ": ", reason);
  }
}

}  // namespace

Producer::Producer(std::unique_ptr<State> state) : state_(std::move(state)) {}

Producer::~Producer() {
  // Records not flushed by the caller are abandoned: Flush reports errors,
  // the destructor cannot.
  rd_kafka_destroy(state_->rk);
}

Result<std::unique_ptr<Producer>> Producer::Make(std::map<std::string, std::string> properties) {
  properties.emplace("enable.idempotence", "true");
  properties.emplace("partitioner", "murmur2_random");
  properties.emplace("linger.ms", "5");
  SILT_ASSIGN_OR_RETURN(rd_kafka_conf_t * conf, internal::MakeConf(properties));
  auto state = std::make_unique<State>();
  rd_kafka_conf_set_opaque(conf, state.get());
  rd_kafka_conf_set_dr_msg_cb(conf, &OnDelivery);
  rd_kafka_conf_set_error_cb(conf, &OnError);
  char error[512];
  state->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof(error));
  if (state->rk == nullptr) {
    rd_kafka_conf_destroy(conf);
    return Status::IOError("creating the Kafka producer: ", error);
  }
  return std::unique_ptr<Producer>(new Producer(std::move(state)));
}

Status Producer::Send(std::string_view topic, int32_t partition,
                      std::optional<std::string_view> key, std::optional<std::string_view> value,
                      int64_t timestamp_ms, const std::vector<Header>& headers) {
  if (!state_->first_error.ok()) return state_->first_error;
  std::string topic_name(topic);
  // librdkafka's argument macros cast their operands, so give them plain
  // names rather than expressions.
  void* key_data = key ? const_cast<char*>(key->data()) : nullptr;
  size_t key_size = key ? key->size() : 0;
  void* value_data = value ? const_cast<char*>(value->data()) : nullptr;
  size_t value_size = value ? value->size() : 0;
  while (true) {
    rd_kafka_headers_t* hdrs = nullptr;
    if (!headers.empty()) {
      hdrs = rd_kafka_headers_new(headers.size());
      for (const Header& header : headers) {
        rd_kafka_header_add(hdrs, header.key.data(), static_cast<ssize_t>(header.key.size()),
                            header.value ? header.value->data() : nullptr,
                            header.value ? static_cast<ssize_t>(header.value->size()) : 0);
      }
    }
    rd_kafka_resp_err_t err = rd_kafka_producev(
        state_->rk, RD_KAFKA_V_TOPIC(topic_name.c_str()), RD_KAFKA_V_PARTITION(partition),
        RD_KAFKA_V_KEY(key_data, key_size), RD_KAFKA_V_VALUE(value_data, value_size),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_TIMESTAMP(timestamp_ms),
        RD_KAFKA_V_HEADERS(hdrs), RD_KAFKA_V_END);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) break;
    // On failure the headers stay ours.
    if (hdrs != nullptr) rd_kafka_headers_destroy(hdrs);
    if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      return internal::KafkaStatus(err, "producing to Kafka topic ", topic_name);
    }
    // Back-pressure: serve delivery reports until the queue drains a bit.
    rd_kafka_poll(state_->rk, 50);
    if (!state_->first_error.ok()) return state_->first_error;
  }
  rd_kafka_poll(state_->rk, 0);
  return Status::OK();
}

Status Producer::Flush(int64_t timeout_ms) {
  // In short steps, so that a fatal error (OnError) ends the wait early.
  constexpr int64_t kStepMs = 200;
  rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR__TIMED_OUT;
  for (int64_t waited = 0; waited < timeout_ms || waited == 0; waited += kStepMs) {
    int step = static_cast<int>(std::min(kStepMs, std::max<int64_t>(timeout_ms - waited, 0)));
    err = rd_kafka_flush(state_->rk, step);
    if (!state_->first_error.ok()) return state_->first_error;
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) break;
  }
  if (err) {
    return internal::KafkaStatus(err, "flushing ", rd_kafka_outq_len(state_->rk),
                                 " queued Kafka records");
  }
  return Status::OK();
}

int64_t Producer::delivered() const { return state_->delivered; }

}  // namespace silt::kafka
