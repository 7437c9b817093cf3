// KafkaLagPoller: how far a Kafka query is behind its topics, fetched off
// the query's thread. Every `interval` it asks the broker for the end offset
// (high watermark) of each partition the query has committed offsets for,
// with its own librdkafka handle (the source's kafka.* settings, without
// the consumer group), and publishes end - committed per partition.
//
// The committed offsets are those of the last committed batch (its end
// offsets: the next offset the query reads), handed in by SetCommitted.
//
// A lookup that gets no answer within the request timeout is a failure,
// published as such at once, whatever librdkafka does meanwhile: librdkafka
// 2.0's rd_kafka_query_watermark_offsets does not bound its wait by its
// timeout argument (it waits for the ListOffsets replies, whose own timeout
// is socket.timeout.ms, retried, and which wait unsent, retried without
// end, while the broker is down; the leader comes from cached metadata, so
// that step does not fail either). So a watchdog thread reports a lookup
// still running after the timeout as an error, once per interval, until it
// returns; a new lookup starts only when the hung one has returned.
//
// Thread safety: SetCommitted from any thread; `publish` is called on the
// poller's threads, one call at a time. The destructor stops and joins them
// (waiting for a lookup in flight to return).
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
#include "silt/stream/source/kafka_source.h"

namespace silt::stream {

class KafkaLagPoller {
 public:
  // Called after each lookup: the rows (sorted by topic, partition) and OK,
  // or no rows and the error of a failed lookup.
  using Publish = std::function<void(std::vector<monitor::LagRow>, const Status&)>;

  // For a `format: kafka` source. `consumer` null: one made from the
  // source's options. Errors: those of the source's option checks and of
  // making the client.
  // `timeout_micros` 0: the interval, between 1 s and 5 s.
  static Result<std::unique_ptr<KafkaLagPoller>> Make(
      const SourceSpec& source, int64_t interval_micros, Publish publish,
      std::unique_ptr<kafka::Consumer> consumer = nullptr, int64_t timeout_micros = 0);
  ~KafkaLagPoller();
  KafkaLagPoller(const KafkaLagPoller&) = delete;
  KafkaLagPoller& operator=(const KafkaLagPoller&) = delete;

  // The end offsets JSON of the last committed batch ({"topic":{"0":15}}).
  // The first call triggers a lookup at once.
  void SetCommitted(const std::string& end_offsets_json);

  // One lookup now, on the calling thread (tests; the thread uses it too).
  void PollOnce();

 private:
  KafkaLagPoller(int64_t interval_micros, int64_t timeout_micros, Publish publish,
                 std::unique_ptr<kafka::Consumer> consumer);
  void Loop();
  void Watch();
  Result<std::vector<monitor::LagRow>> LookUp(const KafkaOffsets& committed);
  // publish_ under publish_mutex_ (the lookup and the watchdog both report;
  // lock order: publish_mutex_, then mutex_).
  void Report(std::vector<monitor::LagRow> rows, const Status& status);

  const int64_t interval_micros_;
  const int64_t timeout_micros_;
  const Publish publish_;
  std::mutex publish_mutex_;
  std::unique_ptr<kafka::Consumer> consumer_;  // used by one thread at a time (poll_mutex_)
  std::mutex poll_mutex_;

  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  bool poll_now_ = false;
  std::string committed_json_;
  // Steady-clock microseconds at which the lookup in flight started; 0:
  // none in flight.
  int64_t lookup_started_ = 0;
  std::thread thread_;
  std::thread watchdog_;
};

}  // namespace silt::stream
