// silt produce: publishes the seed's sensor events (the generator source's
// records, byte for byte) to a Kafka topic with an idempotent producer, at a
// chosen rate or as fast as possible. For demos, benchmarks and tests.
//
// Events are numbered globally; --from picks up where an earlier run stopped,
// so several runs together publish one continuous sequence without repeats.
// Keys are device ids and the partitioner is Kafka's murmur2 (as Java
// producers), so every device's events stay in order on one partition.

#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "silt/cli/command.h"
#include "silt/kafka/producer.h"
#include "silt/stream/source/generator_source.h"

namespace silt::cli {

namespace {

class ProduceCommand final : public Command {
 public:
  explicit ProduceCommand(CLI::App* app) {
    sub_ = app->add_subcommand("produce", "Publish the seed's sensor events to a Kafka topic");
    const char* env = std::getenv("KAFKA_BOOTSTRAP");
    if (env != nullptr && *env != '\0') bootstrap_ = env;
    sub_->add_option("--bootstrap-servers,-b", bootstrap_,
                     "Kafka bootstrap servers (default: $KAFKA_BOOTSTRAP or localhost:9092)")
        ->capture_default_str();
    sub_->add_option("--topic,-t", topic_, "Topic to publish to")->capture_default_str();
    sub_->add_option("--count,-n", count_, "Number of events to publish")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
    sub_->add_option("--from", from_, "Global index of the first event (continue an earlier run)")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
    sub_->add_option("--rate", rate_, "Events per second; 0 = as fast as possible")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
    sub_->add_option("--devices", devices_, "Number of devices (half plugs, half door sensors)")
        ->check(CLI::Range(1, 9999))
        ->capture_default_str();
    sub_->add_option("--seed", seed_, "Generator seed")->capture_default_str();
    sub_->add_option("--start-timestamp", start_timestamp_,
                     "Event time of the first block (ISO-8601)")
        ->capture_default_str();
    sub_->add_option("--property,-X", properties_,
                     "librdkafka producer property NAME=VALUE (repeatable), e.g. "
                     "security.protocol=SASL_SSL");
  }

  CLI::App* subcommand() const override { return sub_; }

  Status Run() override {
    stream::SourceSpec spec;
    spec.format = "generator";
    spec.key_path = "produce";
    spec.options = {{"numDevices", std::to_string(devices_)},
                    {"seed", std::to_string(seed_)},
                    {"topic", topic_},
                    {"startTimestamp", start_timestamp_}};
    SILT_ASSIGN_OR_RETURN(stream::GeneratorOptions options,
                          stream::GeneratorOptions::FromSpec(spec));
    SILT_ASSIGN_OR_RETURN(std::unique_ptr<stream::GeneratorSource> generator,
                          stream::GeneratorSource::Make(std::move(options), &SystemClock()));

    std::map<std::string, std::string> config = {{"bootstrap.servers", bootstrap_}};
    for (const std::string& property : properties_) {
      size_t eq = property.find('=');
      if (eq == std::string::npos || eq == 0) {
        return Status::InvalidArgument("--property '", property, "': expected NAME=VALUE");
      }
      config[property.substr(0, eq)] = property.substr(eq + 1);
    }
    SILT_ASSIGN_OR_RETURN(std::unique_ptr<kafka::Producer> producer,
                          kafka::Producer::Make(std::move(config)));

    const auto started = std::chrono::steady_clock::now();
    const int64_t end = from_ + count_;
    constexpr int64_t kChunk = 4096;
    for (int64_t begin = from_; begin < end;) {
      int64_t stop = std::min(end, begin + kChunk);
      if (rate_ > 0) {
        // Pace by whole events: never ahead of rate * elapsed.
        double elapsed =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        int64_t allowed = static_cast<int64_t>(elapsed * rate_) + 1;
        int64_t produced = begin - from_;
        if (produced >= allowed) {
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
          continue;
        }
        stop = std::min(stop, from_ + allowed);
      }
      columnar::RecordBatchPtr batch = generator->GenerateRows(begin, stop);
      const columnar::Column& key = *batch->columns[0];
      const columnar::Column& value = *batch->columns[1];
      const columnar::Column& timestamp = *batch->columns[5];
      for (int64_t row = 0; row < batch->num_rows; ++row) {
        SILT_RETURN_NOT_OK(producer->Send(topic_, -1, key.StringValue(row), value.StringValue(row),
                                          timestamp.Value<int64_t>(row) / 1000));
      }
      begin = stop;
    }
    SILT_RETURN_NOT_OK(producer->Flush(120'000));
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    fmt::print("produced {} events (indexes {}..{}) to topic {} in {:.2f} s\n",
               producer->delivered(), from_, end - 1, topic_, seconds);
    return Status::OK();
  }

 private:
  CLI::App* sub_ = nullptr;
  std::string bootstrap_ = "localhost:9092";
  std::string topic_ = "sensor-events";
  int64_t count_ = 1000;
  int64_t from_ = 0;
  double rate_ = 0;
  int64_t devices_ = 2;
  int64_t seed_ = 42;
  std::string start_timestamp_ = "2026-06-22T08:00:00Z";
  std::vector<std::string> properties_;
};

}  // namespace

std::unique_ptr<Command> AddProduceCommand(CLI::App* app) {
  return std::make_unique<ProduceCommand>(app);
}

}  // namespace silt::cli
