#include "silt/stream/metrics/kafka_lag.h"

#include <algorithm>
#include <chrono>

#include "silt/kafka/rdkafka_consumer.h"

namespace silt::stream {

namespace {

// A lag lookup is a hint, not the query's work: no retries, and a bound well
// below the usual scrape interval so that a dead broker shows as an error
// soon.
constexpr int64_t kMinRequestTimeoutMs = 1'000;
constexpr int64_t kMaxRequestTimeoutMs = 5'000;

int64_t SteadyMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

KafkaLagPoller::KafkaLagPoller(int64_t interval_micros, int64_t timeout_micros, Publish publish,
                               std::unique_ptr<kafka::Consumer> consumer)
    : interval_micros_(interval_micros),
      timeout_micros_(timeout_micros),
      publish_(std::move(publish)),
      consumer_(std::move(consumer)) {}

Result<std::unique_ptr<KafkaLagPoller>> KafkaLagPoller::Make(
    const SourceSpec& source, int64_t interval_micros, Publish publish,
    std::unique_ptr<kafka::Consumer> consumer, int64_t timeout_micros) {
  const int64_t timeout_ms =
      timeout_micros > 0
          ? timeout_micros / 1000
          : std::clamp<int64_t>(interval_micros / 1000, kMinRequestTimeoutMs, kMaxRequestTimeoutMs);
  if (consumer == nullptr) {
    SILT_ASSIGN_OR_RETURN(KafkaSourceOptions options, KafkaSourceOptions::FromSpec(source));
    kafka::ConsumerConfig config;
    config.properties = options.properties;
    // Not a member of the query's group: it only reads offsets.
    config.properties.erase("group.id");
    config.request_timeout_ms = timeout_ms;
    config.fetch_offset_num_retries = 0;
    // A request of this client that gets no answer gives up after the
    // timeout too (librdkafka's default is 60 s, retried twice), so that a
    // hung lookup returns soon after the broker stops answering.
    config.properties.emplace("socket.timeout.ms", std::to_string(timeout_ms));
    SILT_ASSIGN_OR_RETURN(consumer, kafka::MakeRdKafkaConsumer(config));
  }
  std::unique_ptr<KafkaLagPoller> poller(new KafkaLagPoller(
      interval_micros, timeout_ms * 1000, std::move(publish), std::move(consumer)));
  KafkaLagPoller* raw = poller.get();
  poller->thread_ = std::thread([raw] { raw->Loop(); });
  poller->watchdog_ = std::thread([raw] { raw->Watch(); });
  return poller;
}

KafkaLagPoller::~KafkaLagPoller() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (watchdog_.joinable()) watchdog_.join();
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

void KafkaLagPoller::Watch() {
  const int64_t period = std::min(interval_micros_, timeout_micros_);
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    wake_.wait_for(lock, std::chrono::microseconds(period), [this] { return stop_; });
    if (stop_) break;
    const int64_t started = lookup_started_;
    if (started == 0) continue;
    const int64_t waited = SteadyMicros() - started;
    if (waited <= timeout_micros_) continue;
    lock.unlock();
    {
      // Re-checked under publish_mutex_: a lookup that has just returned
      // publishes its answer after this error, never before it.
      std::lock_guard<std::mutex> publish_lock(publish_mutex_);
      bool still_hung;
      {
        std::lock_guard<std::mutex> state_lock(mutex_);
        still_hung = lookup_started_ == started;
      }
      if (still_hung) {
        publish_({}, Status::IOError("no answer from the Kafka broker for ", waited / 1'000'000,
                                     " s (request timeout ", timeout_micros_ / 1000, " ms)")
                         .WithRetryable(true));
      }
    }
    lock.lock();
  }
}

void KafkaLagPoller::Report(std::vector<monitor::LagRow> rows, const Status& status) {
  std::lock_guard<std::mutex> lock(publish_mutex_);
  publish_(std::move(rows), status);
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
    Report({}, committed.status());
    return;
  }
  std::lock_guard<std::mutex> poll_lock(poll_mutex_);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    lookup_started_ = SteadyMicros();
  }
  Result<std::vector<monitor::LagRow>> rows = LookUp(*committed);
  std::lock_guard<std::mutex> publish_lock(publish_mutex_);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    lookup_started_ = 0;
  }
  if (rows.ok()) {
    publish_(std::move(*rows), Status::OK());
  } else {
    publish_({}, rows.status());
  }
}

Result<std::vector<monitor::LagRow>> KafkaLagPoller::LookUp(const KafkaOffsets& committed) {
  std::vector<monitor::LagRow> rows;
  for (const auto& [partition, offset] : committed) {
    SILT_ASSIGN_OR_RETURN(kafka::Watermarks marks, consumer_->QueryWatermarks(partition));
    monitor::LagRow row;
    row.topic = partition.topic;
    row.partition = partition.partition;
    row.committed_offset = offset;
    row.end_offset = marks.high;
    // Records deleted before the committed offset cannot make the lag
    // negative; a committed offset past the end (a recreated topic) shows 0.
    row.lag = std::max<int64_t>(0, marks.high - offset);
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace silt::stream
