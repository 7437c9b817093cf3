// KafkaLagPoller: how far a Kafka query is behind its topics, fetched off
// the query's thread. Every `interval` it asks the broker for the end offset
// (high watermark) of each partition the query has committed offsets for,
// with its own librdkafka handle (the source's kafka.* settings, without
// the consumer group), and publishes end - committed per partition.
//
// The committed offsets are those of the last committed batch (its end
// offsets: the next offset the query reads), handed in by SetCommitted.
//
// Thread safety: SetCommitted from any thread; `publish` is called on the
// poller's own thread. The destructor stops and joins it (waiting at most
// one broker request).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "silt/base/result.h"
#include "silt/kafka/consumer.h"
#include "silt/monitor/status.h"
#include "silt/stream/job.h"

namespace silt::stream {

class KafkaLagPoller {
 public:
  // Called after each lookup: the rows (sorted by topic, partition) and OK,
  // or no rows and the error of a failed lookup.
  using Publish = std::function<void(std::vector<monitor::LagRow>, const Status&)>;

  // For a `format: kafka` source. `consumer` null: one made from the
  // source's options. Errors: those of the source's option checks and of
  // making the client.
  static Result<std::unique_ptr<KafkaLagPoller>> Make(
      const SourceSpec& source, int64_t interval_micros, Publish publish,
      std::unique_ptr<kafka::Consumer> consumer = nullptr);
  ~KafkaLagPoller();
  KafkaLagPoller(const KafkaLagPoller&) = delete;
  KafkaLagPoller& operator=(const KafkaLagPoller&) = delete;

  // The end offsets JSON of the last committed batch ({"topic":{"0":15}}).
  // The first call triggers a lookup at once.
  void SetCommitted(const std::string& end_offsets_json);

  // One lookup now, on the calling thread (tests; the thread uses it too).
  void PollOnce();

 private:
  KafkaLagPoller(int64_t interval_micros, Publish publish,
                 std::unique_ptr<kafka::Consumer> consumer);
  void Loop();

  const int64_t interval_micros_;
  const Publish publish_;
  std::unique_ptr<kafka::Consumer> consumer_;  // used by one thread at a time (poll_mutex_)
  std::mutex poll_mutex_;

  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  bool poll_now_ = false;
  std::string committed_json_;
  std::thread thread_;
};

}  // namespace silt::stream
