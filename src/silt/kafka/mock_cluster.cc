#include "silt/kafka/mock_cluster.h"

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include "silt/kafka/rdkafka_internal.h"

namespace silt::kafka {

struct MockCluster::State {
  rd_kafka_t* rk = nullptr;
  rd_kafka_mock_cluster_t* cluster = nullptr;
};

MockCluster::MockCluster(std::unique_ptr<State> state) : state_(std::move(state)) {}

MockCluster::~MockCluster() {
  rd_kafka_mock_cluster_destroy(state_->cluster);
  rd_kafka_destroy(state_->rk);
}

Result<std::unique_ptr<MockCluster>> MockCluster::Make(int num_brokers) {
  auto state = std::make_unique<State>();
  char error[512];
  // The mock lives inside a client handle; a producer is the lightest one.
  // The host handle never connects anywhere; silence its "no
  // bootstrap.servers" notice.
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "log_level", "3", error, sizeof(error));
  state->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof(error));
  if (state->rk == nullptr) {
    rd_kafka_conf_destroy(conf);
    return Status::IOError("creating the Kafka mock cluster: ", error);
  }
  state->cluster = rd_kafka_mock_cluster_new(state->rk, num_brokers);
  if (state->cluster == nullptr) {
    rd_kafka_destroy(state->rk);
    return Status::IOError("creating the Kafka mock cluster");
  }
  return std::unique_ptr<MockCluster>(new MockCluster(std::move(state)));
}

std::string MockCluster::bootstraps() const {
  return rd_kafka_mock_cluster_bootstraps(state_->cluster);
}

Status MockCluster::CreateTopic(const std::string& topic, int32_t partitions) {
  rd_kafka_resp_err_t err =
      rd_kafka_mock_topic_create(state_->cluster, topic.c_str(), partitions, 1);
  if (err) return internal::KafkaStatus(err, "creating mock Kafka topic ", topic);
  return Status::OK();
}

}  // namespace silt::kafka
