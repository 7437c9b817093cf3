#include "silt/stream/metrics/kafka_lag.h"

#include <algorithm>
#include <chrono>

#include "silt/kafka/rdkafka_consumer.h"
#include "silt/stream/source/kafka_source.h"

namespace silt::stream {

namespace {

// A lag lookup is a hint, not the query's work: no retries, and a bound well
// below the usual scrape interval so that a dead broker shows as an error
// soon.
constexpr int64_t kMaxRequestTimeoutMs = 5'000;

}  // namespace

KafkaLagPoller::KafkaLagPoller(int64_t interval_micros, Publish publish,
                               std::unique_ptr<kafka::Consumer> consumer)
    : interval_micros_(interval_micros),
      publish_(std::move(publish)),
      consumer_(std::move(consumer)) {}

Result<std::unique_ptr<KafkaLagPoller>> KafkaLagPoller::Make(
    const SourceSpec& source, int64_t interval_micros, Publish publish,
    std::unique_ptr<kafka::Consumer> consumer) {
  if (consumer == nullptr) {
    SILT_ASSIGN_OR_RETURN(KafkaSourceOptions options, KafkaSourceOptions::FromSpec(source));
    kafka::ConsumerConfig config;
    config.properties = options.properties;
    // Not a member of the query's group: it only reads offsets.
    config.properties.erase("group.id");
    config.request_timeout_ms =
        std::clamp<int64_t>(interval_micros / 1000, 1'000, kMaxRequestTimeoutMs);
    config.fetch_offset_num_retries = 0;
    SILT_ASSIGN_OR_RETURN(consumer, kafka::MakeRdKafkaConsumer(config));
  }
  std::unique_ptr<KafkaLagPoller> poller(
      new KafkaLagPoller(interval_micros, std::move(publish), std::move(consumer)));
  KafkaLagPoller* raw = poller.get();
  poller->thread_ = std::thread([raw] { raw->Loop(); });
  return poller;
}

KafkaLagPoller::~KafkaLagPoller() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void KafkaLagPoller::SetCommitted(const std::string& end_offsets_json) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (committed_json_.empty()) poll_now_ = true;
    committed_json_ = end_offsets_json;
  }
  wake_.notify_all();
}

void KafkaLagPoller::Loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    wake_.wait_for(lock, std::chrono::microseconds(interval_micros_),
                   [this] { return stop_ || poll_now_; });
    if (stop_) break;
    poll_now_ = false;
    lock.unlock();
    PollOnce();
    lock.lock();
  }
}

void KafkaLagPoller::PollOnce() {
  std::string committed_json;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    committed_json = committed_json_;
  }
  if (committed_json.empty()) return;
  Result<KafkaOffsets> committed = KafkaOffsetsFromJson(committed_json, "committed offsets", false);
  if (!committed.ok()) {
    publish_({}, committed.status());
    return;
  }
  std::lock_guard<std::mutex> poll_lock(poll_mutex_);
  std::vector<monitor::LagRow> rows;
  for (const auto& [partition, offset] : *committed) {
    Result<kafka::Watermarks> marks = consumer_->QueryWatermarks(partition);
    if (!marks.ok()) {
      publish_({}, marks.status());
      return;
    }
    monitor::LagRow row;
    row.topic = partition.topic;
    row.partition = partition.partition;
    row.committed_offset = offset;
    row.end_offset = marks->high;
    // Records deleted before the committed offset cannot make the lag
    // negative; a committed offset past the end (a recreated topic) shows 0.
    row.lag = std::max<int64_t>(0, marks->high - offset);
    rows.push_back(std::move(row));
  }
  publish_(std::move(rows), Status::OK());
}

}  // namespace silt::stream
