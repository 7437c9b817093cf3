#include "silt/kafka/rdkafka_consumer.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "silt/base/logging.h"
#include "silt/base/uuid.h"
#include "silt/kafka/rdkafka_internal.h"
#include "silt/metrics/default_registry.h"

namespace silt::kafka {

namespace {

using internal::CommitGroupOffsets;
using internal::KafkaStatus;
using internal::LookupOffsetsForTimes;

// Records one librdkafka call takes off the consumer queue at most.
constexpr size_t kPollBatch = 1024;
// Taken messages a chunk is sized from at least (SizeChunk), unless fewer
// rows are left to read.
constexpr size_t kSizingSample = 64;

using internal::PartitionList;

// The connection errors librdkafka reported through the error callback
// since the last look. The callback runs on the thread that serves the main
// queue (rd_kafka_poll, called by the consumer only), so no lock is needed.
struct ConnectionErrors {
  rd_kafka_resp_err_t last_code = RD_KAFKA_RESP_ERR_NO_ERROR;
  std::string last_reason;
  // A TLS handshake or authentication failure: no retry can fix it.
  rd_kafka_resp_err_t fatal_code = RD_KAFKA_RESP_ERR_NO_ERROR;
  std::string fatal_reason;
  // A response larger than receive.message.max.bytes (librdkafka drops the
  // connection and would fetch the same records again without end).
  std::string oversized_reason;
};

bool IsFatalConnectionError(rd_kafka_resp_err_t code) {
  return code == RD_KAFKA_RESP_ERR__SSL || code == RD_KAFKA_RESP_ERR__AUTHENTICATION ||
         code == RD_KAFKA_RESP_ERR_SASL_AUTHENTICATION_FAILED;
}

void OnConsumerError(rd_kafka_t*, int err, const char* reason, void* opaque) {
  auto* errors = static_cast<ConnectionErrors*>(opaque);
  const auto code = static_cast<rd_kafka_resp_err_t>(err);
  // All-brokers-down repeats the cause of the last transport error; keep
  // that one, which names the broker and the reason.
  if (code != RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN || errors->last_reason.empty()) {
    errors->last_code = code;
    errors->last_reason = reason != nullptr ? reason : "";
  }
  if (code == RD_KAFKA_RESP_ERR__BAD_MSG && errors->oversized_reason.empty()) {
    errors->oversized_reason = reason != nullptr ? reason : "";
  }
  if (IsFatalConnectionError(code) && errors->fatal_code == RD_KAFKA_RESP_ERR_NO_ERROR) {
    errors->fatal_code = code;
    errors->fatal_reason = reason != nullptr ? reason : "";
  }
}

// What to check for each kind of connection error.
const char* ConnectionHint(rd_kafka_resp_err_t code) {
  switch (code) {
    case RD_KAFKA_RESP_ERR__SSL:
      return "check kafka.ssl.ca.location (the CA that signed the broker's certificate) and that "
             "kafka.security.protocol matches the listener (SSL/SASL_SSL for a TLS listener, "
             "PLAINTEXT/SASL_PLAINTEXT otherwise)";
    case RD_KAFKA_RESP_ERR__AUTHENTICATION:
    case RD_KAFKA_RESP_ERR_SASL_AUTHENTICATION_FAILED:
      return "check kafka.sasl.mechanism, kafka.sasl.username and kafka.sasl.password";
    case RD_KAFKA_RESP_ERR__RESOLVE: return "check the host names in kafka.bootstrap.servers";
    default:
      return "check kafka.bootstrap.servers, that the broker is up, and that "
             "kafka.security.protocol matches the listener";
  }
}

class RdKafkaConsumer final : public Consumer {
 public:
  RdKafkaConsumer(rd_kafka_t* rk, std::unique_ptr<ConnectionErrors> errors, bool has_group,
                  const ConsumerConfig& config, std::string bootstrap, int64_t queued_min_messages)
      : rk_(rk),
        errors_(std::move(errors)),
        bootstrap_(std::move(bootstrap)),
        has_group_(has_group),
        request_timeout_ms_(static_cast<int>(config.request_timeout_ms)),
        retries_(std::max(config.fetch_offset_num_retries, 0)),
        retry_interval_ms_(std::max<int64_t>(config.fetch_offset_retry_interval_ms, 0)),
        waker_(queued_min_messages),
        max_held_(static_cast<size_t>(std::max<int64_t>(queued_min_messages, 1))),
        queue_(rd_kafka_queue_get_consumer(rk)) {}

  ~RdKafkaConsumer() override {
    DropTaken();
    DropHeld();
    rd_kafka_queue_destroy(queue_);
    // Leaves no group membership behind; errors on close are irrelevant
    // because nothing is committed implicitly.
    rd_kafka_consumer_close(rk_);
    rd_kafka_destroy(rk_);
  }

  Result<std::vector<TopicInfo>> ListTopics() override {
    SILT_RETURN_NOT_OK(EnsureConnected());
    return WithRetries("list_topics", [&] { return ListTopicsOnce(); });
  }

  Result<Watermarks> QueryWatermarks(const TopicPartition& partition) override {
    SILT_RETURN_NOT_OK(EnsureConnected());
    return WithRetries("query_watermarks", [&] { return QueryWatermarksOnce(partition); });
  }

  Result<std::map<TopicPartition, int64_t>> ListOffsets(
      const std::vector<TopicPartition>& partitions, OffsetSpec spec) override {
    SILT_RETURN_NOT_OK(EnsureConnected());
    return WithRetries("query_watermarks", [&] { return ListOffsetsOnce(partitions, spec); });
  }

  Result<std::vector<std::optional<int64_t>>> OffsetsForTimes(
      const std::vector<TopicPartition>& partitions, int64_t timestamp_ms) override {
    SILT_RETURN_NOT_OK(EnsureConnected());
    return WithRetries("offsets_for_times",
                       [&] { return OffsetsForTimesOnce(partitions, timestamp_ms); });
  }

 private:
  // The first contact with the cluster: a broker-list metadata request,
  // asked again in short slices for up to the request timeout, with the
  // error callback served between slices. A TLS or authentication failure
  // ends it at once, and a cluster still unreachable at the timeout ends it
  // with the connection error librdkafka saw (which names the broker), not
  // retried: before any broker has answered, an unreachable cluster is a
  // configuration mistake more often than an outage. Once a broker has
  // answered, requests are retried as before (an outage is survived).
  Status EnsureConnected() {
    if (connected_) return Status::OK();
    constexpr int kSliceMs = 500;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(request_timeout_ms_);
    while (true) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                            deadline - std::chrono::steady_clock::now())
                            .count();
      const int slice = static_cast<int>(std::clamp<int64_t>(left, 1, kSliceMs));
      const rd_kafka_metadata_t* metadata = nullptr;
      rd_kafka_resp_err_t err = rd_kafka_metadata(rk_, 0, nullptr, &metadata, slice);
      ServeErrors();
      if (!err) {
        rd_kafka_metadata_destroy(metadata);
        connected_ = true;
        return Status::OK();
      }
      if (errors_->fatal_code != RD_KAFKA_RESP_ERR_NO_ERROR) {
        return Status::IOError("connecting to Kafka (bootstrap servers ", bootstrap_,
                               "): ", errors_->fatal_reason, " [",
                               rd_kafka_err2name(errors_->fatal_code), "]; ",
                               ConnectionHint(errors_->fatal_code));
      }
      if (err != RD_KAFKA_RESP_ERR__TIMED_OUT && err != RD_KAFKA_RESP_ERR__TRANSPORT) {
        return KafkaStatus(err, "connecting to Kafka (bootstrap servers ", bootstrap_, ")");
      }
      if (left <= slice) break;
    }
    if (errors_->last_code == RD_KAFKA_RESP_ERR_NO_ERROR) {
      return Status::IOError("connecting to Kafka (bootstrap servers ", bootstrap_,
                             "): no broker answered within ", request_timeout_ms_,
                             " ms (kafka.socket.timeout.ms); ",
                             ConnectionHint(RD_KAFKA_RESP_ERR__TRANSPORT));
    }
    return Status::IOError(
        "connecting to Kafka (bootstrap servers ", bootstrap_, "): no broker answered within ",
        request_timeout_ms_, " ms (kafka.socket.timeout.ms); last error: ", errors_->last_reason,
        " [", rd_kafka_err2name(errors_->last_code), "]; ", ConnectionHint(errors_->last_code));
  }

  // Serves librdkafka's main queue (error callbacks; OAUTHBEARER token
  // refreshes), which is not forwarded to the consumer queue.
  void ServeErrors() { rd_kafka_poll(rk_, 0); }

  // A fetch response over receive.message.max.bytes: the records at the
  // partitions' positions are larger than the client takes. Names each
  // partition still being read at its next offset and the options to raise.
  Status CheckResponsesFit() const {
    if (errors_->oversized_reason.empty()) return Status::OK();
    std::string where;
    for (const RangeState& state : ranges_) {
      if (state.done) continue;
      if (!where.empty()) where += ", ";
      where += "topic " + state.range.partition.topic + " partition " +
               std::to_string(state.range.partition.partition) + " offset " +
               std::to_string(state.next);
    }
    return Status::IOError(
        "reading Kafka ", where.empty() ? std::string("records") : where,
        ": a record there is larger than the client accepts (", errors_->oversized_reason,
        "); raise kafka.receive.message.max.bytes above the record batch's size, with "
        "kafka.fetch.max.bytes at least 512 bytes below it");
  }

  // Runs `attempt` until it succeeds, fails for good, or the retries are
  // used up (then the last error, still marked retryable).
  template <typename Fn>
  auto WithRetries(const char* operation, Fn attempt) -> decltype(attempt()) {
    auto result = attempt();
    for (int retry = 0; retry < retries_ && !result.ok() && result.status().retryable(); ++retry) {
      std::this_thread::sleep_for(std::chrono::milliseconds(retry_interval_ms_));
      metrics::CountRetry("kafka", operation);
      result = attempt();
    }
    return result;
  }

  Result<std::vector<TopicInfo>> ListTopicsOnce() {
    const rd_kafka_metadata_t* metadata = nullptr;
    rd_kafka_resp_err_t err = rd_kafka_metadata(rk_, 1, nullptr, &metadata, request_timeout_ms_);
    if (err) return KafkaStatus(err, "listing Kafka topics");
    std::vector<TopicInfo> topics;
    for (int topic_idx = 0; topic_idx < metadata->topic_cnt; ++topic_idx) {
      const rd_kafka_metadata_topic_t& topic = metadata->topics[topic_idx];
      // Internal topics (__consumer_offsets, ...) are never data, as in
      // Kafka's pattern subscription.
      if (topic.err || std::string_view(topic.topic).starts_with("__")) continue;
      topics.push_back({topic.topic, topic.partition_cnt});
    }
    rd_kafka_metadata_destroy(metadata);
    std::sort(topics.begin(), topics.end(),
              [](const TopicInfo& a, const TopicInfo& b) { return a.name < b.name; });
    return topics;
  }

  Result<Watermarks> QueryWatermarksOnce(const TopicPartition& partition) {
    Watermarks out;
    rd_kafka_resp_err_t err =
        rd_kafka_query_watermark_offsets(rk_, partition.topic.c_str(), partition.partition,
                                         &out.low, &out.high, request_timeout_ms_);
    if (err)
      return KafkaStatus(err, "querying the offsets of Kafka partition ", partition.ToString());
    return out;
  }

  // rd_kafka_query_watermark_offsets sends two ListOffsets requests per
  // partition (earliest and latest) and waits for both, so asking for many
  // partitions waits one round trip per partition. rd_kafka_offsets_for_times
  // builds the same ListOffsets request (same API version and isolation
  // level) with an entry per partition, one request per partition leader,
  // and Kafka reads the timestamps -2 and -1 as earliest and latest.
  Result<std::map<TopicPartition, int64_t>> ListOffsetsOnce(
      const std::vector<TopicPartition>& partitions, OffsetSpec spec) {
    std::map<TopicPartition, int64_t> out;
    if (partitions.empty()) return out;
    const int64_t which =
        spec == OffsetSpec::kEarliest ? RD_KAFKA_OFFSET_BEGINNING : RD_KAFKA_OFFSET_END;
    PartitionList list(rd_kafka_topic_partition_list_new(static_cast<int>(partitions.size())));
    for (const TopicPartition& tp : partitions) {
      rd_kafka_topic_partition_list_add(list.get(), tp.topic.c_str(), tp.partition)->offset = which;
    }
    rd_kafka_resp_err_t err = rd_kafka_offsets_for_times(rk_, list.get(), request_timeout_ms_);
    if (err) {
      return KafkaStatus(err, "querying the offsets of Kafka partition ",
                         partitions.front().ToString(), partitions.size() > 1 ? " and others" : "");
    }
    for (int idx = 0; idx < list->cnt; ++idx) {
      const rd_kafka_topic_partition_t& elem = list->elems[idx];
      TopicPartition tp{elem.topic, elem.partition};
      if (elem.err) {
        return KafkaStatus(elem.err, "querying the offsets of Kafka partition ", tp.ToString());
      }
      // The entry still holds the request: the broker sent no answer for it.
      if (elem.offset < 0) {
        return Status::IOError("querying the offsets of Kafka partition ", tp.ToString(),
                               ": no offset in the broker's answer")
            .WithRetryable(true);
      }
      out[std::move(tp)] = elem.offset;
    }
    return out;
  }

  Result<std::vector<std::optional<int64_t>>> OffsetsForTimesOnce(
      const std::vector<TopicPartition>& partitions, int64_t timestamp_ms) {
    return LookupOffsetsForTimes(rk_, partitions, timestamp_ms, request_timeout_ms_);
  }

 public:
  Status Assign(const std::vector<OffsetRange>& ranges) override {
    if (ContinuesKept(ranges)) return Status::OK();
    // Records taken for the previous assignment must not be read as this
    // one's (a retried batch assigns the same ranges again).
    DropTaken();
    DropHeld();
    kept_ = false;
    ranges_.clear();
    ResetLookup();
    PartitionList list(rd_kafka_topic_partition_list_new(static_cast<int>(ranges.size())));
    for (const OffsetRange& range : ranges) {
      if (range.from >= range.until) continue;
      rd_kafka_topic_partition_list_add(list.get(), range.partition.topic.c_str(),
                                        range.partition.partition)
          ->offset = range.from;
      ranges_.push_back({range, false, range.from, false});
    }
    remaining_ = static_cast<int64_t>(ranges_.size());
    rd_kafka_resp_err_t err = rd_kafka_assign(rk_, list.get());
    if (err) return KafkaStatus(err, "assigning Kafka partitions");
    return Status::OK();
  }

  Result<int64_t> Poll(RecordColumns* out, int64_t max_records, int64_t timeout_ms) override {
    int64_t appended = 0;
    int timeout = static_cast<int>(timeout_ms);
    ServeErrors();
    while (true) {
      if (!out->reserved() && taken_pos_ < taken_len_) SizeChunk(out, max_records - appended);
      // Records already taken off the queue come first, in queue order; a
      // limit reached or an error leaves the rest for the next call.
      while (taken_pos_ < taken_len_) {
        if (appended >= max_records || out->bytes() >= RecordColumns::kMaxChunkBytes) {
          return appended;
        }
        rd_kafka_message_t* message = taken_[taken_pos_++];
        // A kept range's later messages (records, its end, an error) belong
        // to the next batch, which starts where this range ended.
        if (message->rkt != nullptr) {
          const RangeState* state =
              FindPosition(rd_kafka_topic_name(message->rkt), message->partition);
          if (state != nullptr && state->done && state->keep) {
            Hold(message);
            continue;
          }
        }
        hold_current_ = false;
        Status st = internal::HandleMessage(message, *this, out, &appended);
        if (hold_current_) {
          Hold(message);
        } else {
          rd_kafka_message_destroy(message);
        }
        if (!st.ok()) return st;  // (not SILT_RETURN_NOT_OK: no copy per record)
      }
      if (appended >= max_records || remaining_ == 0 ||
          out->bytes() >= RecordColumns::kMaxChunkBytes) {
        break;
      }
      SILT_RETURN_NOT_OK(CheckResponsesFit());
      WakeParkedFetcher();
      // rd_kafka_consume_batch_queue waits until the whole array is filled
      // or the timeout passes, so the first call (the only one that waits)
      // asks for one record; later calls take up to kPollBatch of what is
      // already fetched, one queue lock per call instead of per record.
      const size_t want = timeout > 0 ? 1 : kPollBatch;
      if (taken_.size() < kPollBatch) taken_.resize(kPollBatch);
      const ssize_t got = rd_kafka_consume_batch_queue(queue_, timeout, taken_.data(), want);
      ServeErrors();
      if (got < 0) return KafkaStatus(rd_kafka_last_error(), "reading Kafka records");
      if (got == 0) {
        SILT_RETURN_NOT_OK(CheckResponsesFit());
        break;
      }
      taken_pos_ = 0;
      taken_len_ = static_cast<size_t>(got);
      // Only the first call waits: afterwards take what is already fetched.
      timeout = 0;
    }
    return appended;
  }

  bool AssignmentDone() const override { return remaining_ == 0; }

  Status CommitOffsets(const std::map<TopicPartition, int64_t>& offsets) override {
    if (!has_group_) {
      return Status::InvalidArgument("committing Kafka offsets needs kafka.group.id");
    }
    return CommitGroupOffsets(rk_, offsets);
  }

 private:
  struct RangeState {
    OffsetRange range;
    bool done;
    int64_t next;  // the offset the next record of the range has
    // Set when the range completed while the partition had records past
    // `until`: the partition stays assigned for a next batch starting at
    // `until`, and its later messages are held for it (see ContinuesKept).
    bool keep;
  };

  // Sizes `out`'s chunk once, from the messages taken but not handled yet:
  // the rows it will get (at most `limit`, at most what the ranges have
  // left, at most what kMaxChunkBytes takes) times the sample's mean key,
  // value and topic size, plus an eighth (the sample's mean is below the
  // chunk's about half the time, and one byte over the reservation regrows,
  // copying the whole buffer). Waits for a sample of kSizingSample messages
  // (the first take of a Poll asks for one) unless fewer rows are left.
  void SizeChunk(RecordColumns* out, int64_t limit) {
    int64_t left = 0;
    for (const RangeState& state : ranges_) {
      if (!state.done) left += std::max<int64_t>(0, state.range.until - state.next);
    }
    int64_t rows = std::min(limit, left);
    const size_t sample = taken_len_ - taken_pos_;
    if (rows <= 0 || sample < std::min(kSizingSample, static_cast<size_t>(rows))) return;
    int64_t key_bytes = 0;
    int64_t value_bytes = 0;
    int64_t topic_bytes = 0;
    const rd_kafka_topic_t* topic = nullptr;
    int64_t topic_size = 0;
    for (size_t idx = taken_pos_; idx < taken_len_; ++idx) {
      const rd_kafka_message_t* message = taken_[idx];
      key_bytes += static_cast<int64_t>(message->key_len);
      value_bytes += static_cast<int64_t>(message->len);
      if (message->rkt != topic && message->rkt != nullptr) {
        topic = message->rkt;
        topic_size = static_cast<int64_t>(std::strlen(rd_kafka_topic_name(topic)));
      }
      topic_bytes += topic_size;
    }
    // A chunk stops at kMaxChunkBytes of keys and values.
    const int64_t record_bytes = key_bytes + value_bytes;
    if (record_bytes > 0) {
      rows = std::min(
          rows, RecordColumns::kMaxChunkBytes * static_cast<int64_t>(sample) / record_bytes + 1);
    }
    const auto scale = [&](int64_t bytes) {
      const int64_t estimate = bytes * rows / static_cast<int64_t>(sample);
      return estimate + estimate / 8;
    };
    out->Reserve(rows, scale(key_bytes), scale(value_bytes), scale(topic_bytes));
  }

  // Decision 198 (internal::ParkedFetcherWaker): called before each wait on
  // the queue, once per librdkafka batch call, not per record.
  void WakeParkedFetcher() {
    if (!waker_.Due(static_cast<int64_t>(rd_kafka_queue_length(queue_)))) return;
    PartitionList list(rd_kafka_topic_partition_list_new(static_cast<int>(ranges_.size())));
    for (const RangeState& state : ranges_) {
      if (state.done) continue;
      rd_kafka_topic_partition_list_add(list.get(), state.range.partition.topic.c_str(),
                                        state.range.partition.partition);
    }
    waker_.Wake(rk_, list.get());
  }

  void DropTaken() {
    for (; taken_pos_ < taken_len_; ++taken_pos_) rd_kafka_message_destroy(taken_[taken_pos_]);
    taken_pos_ = taken_len_ = 0;
  }

  void DropHeld() {
    for (rd_kafka_message_t* message : held_) rd_kafka_message_destroy(message);
    held_.clear();
  }

  // Keeps a kept range's message for the next batch. Past max_held_
  // messages the batches fall back to a fresh assignment each (nothing
  // kept), so a range that ends long before the others cannot hold its
  // partition's whole backlog in memory.
  void Hold(rd_kafka_message_t* message) {
    held_.push_back(message);
    if (held_.size() <= max_held_) return;
    DropHeld();
    for (RangeState& state : ranges_) state.keep = false;
  }

  // A next batch that reads on where the previous one stopped: the same
  // partitions, each range starting at the previous range's `until`, after
  // every previous range completed with its partition kept. Then the
  // partitions stay assigned, and the messages librdkafka fetched past the
  // previous ranges (held ones first, then those still taken or queued, in
  // queue order) are this batch's, instead of being dropped with the
  // assignment and fetched and parsed again. Spark's Kafka source keeps
  // its consumer and fetched records across batches the same way.
  bool ContinuesKept(const std::vector<OffsetRange>& ranges) {
    if (!kept_) return false;
    size_t matched = 0;
    for (const OffsetRange& range : ranges) {
      if (range.from >= range.until) continue;
      const RangeState* previous = nullptr;
      for (const RangeState& state : ranges_) {
        if (state.range.partition == range.partition) previous = &state;
      }
      if (previous == nullptr || !previous->keep || previous->range.until != range.from) {
        return false;
      }
      ++matched;
    }
    if (matched == 0 || matched != ranges_.size()) return false;
    std::vector<RangeState> next;
    for (const OffsetRange& range : ranges) {
      if (range.from < range.until) next.push_back({range, false, range.from, false});
    }
    ranges_ = std::move(next);
    ResetLookup();
    remaining_ = static_cast<int64_t>(ranges_.size());
    kept_ = false;
    // The held messages come before those still taken.
    for (; taken_pos_ < taken_len_; ++taken_pos_) held_.push_back(taken_[taken_pos_]);
    taken_.swap(held_);
    held_.clear();
    taken_pos_ = 0;
    taken_len_ = taken_.size();
    return true;
  }

  // Messages come in runs of one partition, so the last answer is checked
  // first (the topic name is librdkafka's pointer, stable per topic handle).
  RangeState* FindPosition(const char* topic, int32_t partition) {
    if (topic == last_topic_ && partition == last_partition_) return last_state_;
    for (RangeState& state : ranges_) {
      if (state.range.partition.partition == partition && state.range.partition.topic == topic) {
        last_topic_ = topic;
        last_partition_ = partition;
        last_state_ = &state;
        return &state;
      }
    }
    return nullptr;
  }
  void ResetLookup() {
    last_topic_ = nullptr;
    last_partition_ = -1;
    last_state_ = nullptr;
  }

  // Whether librdkafka has seen records of the range's partition at or past
  // `until` (the high watermark of its last fetch response; no request).
  bool FetchedPast(const RangeState& state) const {
    int64_t low = 0;
    int64_t high = 0;
    if (rd_kafka_get_watermark_offsets(rk_, state.range.partition.topic.c_str(),
                                       state.range.partition.partition, &low,
                                       &high) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return false;
    }
    return high > state.range.until;
  }

  // Records past the end of a range may still arrive from fetches already
  // under way; TakeRecord drops them, or Poll holds them for the next batch
  // when the range is kept. (Pausing the partition here made a later
  // assignment of the same partition stall with librdkafka 2.0.2.)
  void MarkDone(RangeState* state) {
    if (state->done) return;
    state->done = true;
    state->keep = held_.size() < max_held_ && FetchedPast(*state);
    --remaining_;
    if (remaining_ > 0) return;
    // Every range is read. With records past every range (a backlog the
    // next batch reads on from), the partitions stay assigned. Otherwise
    // fetching stops: a fetch left running at the log end parks at the
    // broker for fetch.wait.max.ms, and the broker answers the next batch's
    // offset lookups on that connection only after it (several waits per
    // batch), and an idle query would fetch without end.
    kept_ = std::all_of(ranges_.begin(), ranges_.end(),
                        [](const RangeState& range) { return range.keep; });
    if (kept_) return;
    for (RangeState& range : ranges_) range.keep = false;
    DropHeld();
    rd_kafka_assign(rk_, nullptr);
  }

  // internal::HandleMessage's hooks: ranges_ is the bookkeeping. A range
  // takes the records in [from, until); an end or a record at or past
  // `until` completes it.
  friend Status internal::HandleMessage<RdKafkaConsumer>(const rd_kafka_message_t*,
                                                         RdKafkaConsumer&, RecordColumns*,
                                                         int64_t*);
  void AtPartitionEnd(RangeState& state, int64_t end_offset) {
    if (end_offset >= state.range.until) MarkDone(&state);
  }
  Status OnConsumerError(const rd_kafka_message_t& message, const char* topic) {
    return KafkaStatus(message.err, "reading Kafka partition ", topic, "-", message.partition,
                       " at offset ", message.offset, " (", rd_kafka_message_errstr(&message), ")");
  }
  bool TakeRecord(RangeState& state, int64_t offset) {
    if (state.done || offset < state.range.from) return false;
    if (offset >= state.range.until) {
      MarkDone(&state);
      // The first record past a kept range is the next batch's.
      hold_current_ = state.keep;
      return false;
    }
    return true;
  }
  void RecordTaken(RangeState& state, int64_t offset) {
    state.next = offset + 1;
    if (offset + 1 >= state.range.until) MarkDone(&state);
  }

  rd_kafka_t* rk_;
  std::unique_ptr<ConnectionErrors> errors_;  // the error callback's opaque
  std::string bootstrap_;
  bool connected_ = false;
  bool has_group_;
  int request_timeout_ms_;
  int retries_;
  int64_t retry_interval_ms_;
  internal::ParkedFetcherWaker waker_;  // WakeParkedFetcher
  // Hold: the messages at most held for the next batch past the current
  // ranges' ends, as many as the queue holds before librdkafka stops
  // fetching (queued.min.messages). librdkafka fetches every partition at
  // the same pace, so a partition with a tenth of the batch (workload A:
  // the seed's two devices put 10:1 of the records on two partitions)
  // completes its range early and its next records pile up here; 32,768
  // overflowed every two or three batches of 100,000, and each overflow
  // dropped the held and the queued records and fetched them again
  // (decision 200).
  size_t max_held_;
  std::vector<RangeState> ranges_;
  int64_t remaining_ = 0;
  rd_kafka_queue_t* queue_;  // the consumer queue (records only)
  // Messages taken off queue_ by the last batch call (or kept from the
  // previous assignment); [taken_pos_, taken_len_) are not handled yet and
  // stay for the next Poll.
  std::vector<rd_kafka_message_t*> taken_ = std::vector<rd_kafka_message_t*>(kPollBatch);
  size_t taken_pos_ = 0;
  size_t taken_len_ = 0;
  // Messages of kept ranges that completed, in queue order, for the next
  // assignment (ContinuesKept); kept_: every range of the last assignment
  // completed and was kept.
  std::vector<rd_kafka_message_t*> held_;
  bool kept_ = false;
  bool hold_current_ = false;  // HandleMessage's record is held, not dropped
  const char* last_topic_ = nullptr;
  int32_t last_partition_ = -1;
  RangeState* last_state_ = nullptr;
};

}  // namespace

Result<std::unique_ptr<Consumer>> MakeRdKafkaConsumer(const ConsumerConfig& config) {
  std::map<std::string, std::string> properties = config.properties;
  const bool has_group = properties.count("group.id") > 0;
  // librdkafka's consumer needs a group even when partitions are assigned
  // by hand; a private one keeps offsets out of anyone's group.
  if (!has_group) properties["group.id"] = "silt-" + NewUuid();
  // The query's checkpoint owns positions: nothing automatic.
  properties["enable.auto.commit"] = "false";
  properties["enable.auto.offset.store"] = "false";
  properties["enable.partition.eof"] = "true";
  properties["auto.offset.reset"] = "error";
  // A fetch still parked at the broker when a batch's ranges are done delays
  // the next batch's requests on that connection by up to fetch.wait.max.ms
  // (librdkafka's 500 ms made every small batch that much slower). Fetches
  // only run while a batch reads (MarkDone unassigns), so a short wait
  // costs an idle query nothing. The user's kafka.fetch.wait.max.ms wins.
  properties.emplace("fetch.wait.max.ms", "10");
  const int64_t queued_min_messages =
      internal::IntProperty(properties, "queued.min.messages", internal::kDefaultQueuedMinMessages);
  ConsumerConfig effective = config;
  // The first contact waits librdkafka's network timeout when the user set
  // it (kafka.socket.timeout.ms), else the request timeout.
  if (properties.count("socket.timeout.ms") > 0) {
    effective.request_timeout_ms = std::max<int64_t>(
        internal::IntProperty(properties, "socket.timeout.ms", config.request_timeout_ms), 1);
  }
  SILT_ASSIGN_OR_RETURN(rd_kafka_conf_t * conf, internal::MakeConf(properties));
  auto errors = std::make_unique<ConnectionErrors>();
  rd_kafka_conf_set_opaque(conf, errors.get());
  rd_kafka_conf_set_error_cb(conf, &OnConsumerError);
  char error[512];
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, error, sizeof(error));
  if (rk == nullptr) {
    rd_kafka_conf_destroy(conf);
    return Status::IOError("creating the Kafka consumer: ", error);
  }
  // The main queue (error callbacks) is not forwarded to the consumer
  // queue: the consumer serves it between requests (ServeErrors), and a
  // poll for records never has to handle anything but records.
  const std::string bootstrap = properties.count("bootstrap.servers") > 0
                                    ? properties.at("bootstrap.servers")
                                    : std::string("(none)");
  return std::unique_ptr<Consumer>(std::make_unique<RdKafkaConsumer>(
      rk, std::move(errors), has_group, effective, bootstrap, queued_min_messages));
}

}  // namespace silt::kafka
