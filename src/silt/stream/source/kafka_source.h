// KafkaSource (format: kafka): Spark's Kafka micro-batch source over a
// kafka::Consumer.
//
// Options follow Spark's kafka-0-10-sql names and meanings (FORMATS.md C2):
// exactly one of subscribe / subscribePattern / assign; kafka.* passed to the
// client with the prefix stripped (kafka.bootstrap.servers required; the
// options Spark rejects are rejected); startingOffsets earliest | latest |
// JSON with -2 = earliest, -1 = latest; startingTimestamp /
// startingOffsetsByTimestamp; endingOffsets (latest | JSON) caps what any
// trigger reads; maxOffsetsPerTrigger split across partitions in proportion
// to their backlog, as Spark's rateLimit does, but never more in total (Spark's
// rounding can exceed it by a record per partition); minOffsetsPerTrigger with
// maxTriggerDelay (default 15m): a trigger with fewer new records plans no
// batch until the delay since the last planned batch has passed (ignored by
// once / availableNow, which drain what is there); failOnDataLoss;
// includeHeaders; kafkaConsumer.pollTimeoutMs.
//
// Offsets are Spark's JSON {"topic":{"0":15,"1":12}} (the next offset to
// read per partition). The offsets resolved at first start are written once
// to <checkpoint>/sources/<i>/0 in Spark's layout (a 0x00 byte, "v1\n", the
// JSON) and win over startingOffsets on restart. A batch reads exactly the
// recorded [start, end) ranges by assigning them to the consumer: the
// checkpoint, not the consumer group, owns positions. With kafka.group.id the
// end offsets of each committed batch are also committed to that group (best
// effort) so that lag tools show progress.
//
// Partitions that appear later (more partitions, or new topics matching the
// pattern) start at their earliest offset.
//
// subscribePattern is an RE2 regular expression matched against the whole
// topic name, as Spark matches its java.util.regex.Pattern. RE2 has no
// backreferences, lookahead/lookbehind or possessive quantifiers (Java has);
// a pattern using them is rejected when the query starts. The patterns topic
// subscriptions use in practice (`events-.*`, `a|b`, character classes)
// mean the same in both.
//
// Thread safety: one query thread.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "silt/kafka/consumer.h"

namespace re2 {
class RE2;
}
#include "silt/stream/source/source.h"

namespace silt::stream {

using KafkaOffsets = std::map<kafka::TopicPartition, int64_t>;

// Spark's offset JSON for `offsets` (topics and partitions sorted).
std::string KafkaOffsetsToJson(const KafkaOffsets& offsets);
// Parses Spark's offset JSON; `allow_special` admits -2/-1 (earliest/latest)
// as in startingOffsets. Errors: InvalidArgument naming `where`.
Result<KafkaOffsets> KafkaOffsetsFromJson(std::string_view json, std::string_view where,
                                          bool allow_special);

struct KafkaSourceOptions {
  enum class Strategy { kSubscribe, kSubscribePattern, kAssign };
  enum class Start { kEarliest, kLatest, kOffsets, kTimestamp, kTimestampPerPartition, kResolver };
  // kResolver: the starting offsets of `partitions` (all selected ones),
  // computed by the caller with the source's own consumer (the Event Hubs
  // source translates its EventPosition JSON this way).
  using StartResolver = std::function<Result<KafkaOffsets>(
      kafka::Consumer* consumer, const std::vector<kafka::TopicPartition>& partitions)>;

  Strategy strategy = Strategy::kSubscribe;
  std::vector<std::string> topics;                // subscribe
  std::string pattern;                            // subscribePattern
  std::vector<kafka::TopicPartition> assigned;    // assign
  std::map<std::string, std::string> properties;  // kafka.* without the prefix
  Start start = Start::kLatest;
  KafkaOffsets starting_offsets;                    // kOffsets (may hold -2/-1)
  int64_t starting_timestamp_ms = 0;                // kTimestamp
  KafkaOffsets starting_timestamps;                 // kTimestampPerPartition
  bool starting_timestamp_strategy_latest = false;  // startingOffsetsByTimestampStrategy
  std::optional<KafkaOffsets> ending_offsets;       // absent or JSON (-1 = latest)
  StartResolver resolve_start;                      // kResolver
  std::optional<int64_t> max_offsets_per_trigger;
  // Without max_offsets_per_trigger: a cap of this many records per
  // partition of the batch (the Event Hubs connector's default
  // maxEventsPerTrigger is partitionCount * 1000); unset = no cap.
  std::optional<int64_t> default_max_offsets_per_partition;
  std::optional<int64_t> min_offsets_per_trigger;
  int64_t max_trigger_delay_ms = 15 * 60 * 1000;  // Spark's default "15m"
  bool fail_on_data_loss = true;
  bool include_headers = false;
  int64_t poll_timeout_ms = 120'000;
  int fetch_offset_num_retries = 3;               // fetchOffset.numRetries
  int64_t fetch_offset_retry_interval_ms = 1000;  // fetchOffset.retryIntervalMs
  std::string key_path;                           // "source.options", for messages

  // Reads Spark's Kafka options from `spec`. Errors: InvalidArgument naming
  // the job-file key.
  static Result<KafkaSourceOptions> FromSpec(const SourceSpec& spec);
};

class KafkaSource final : public Source {
 public:
  // `consumer` reads the cluster (librdkafka in production, a scripted
  // double in tests).
  static Result<std::unique_ptr<KafkaSource>> Make(KafkaSourceOptions options,
                                                   const SourceContext& context,
                                                   std::unique_ptr<kafka::Consumer> consumer);
  ~KafkaSource() override;

  const columnar::SchemaPtr& schema() const override { return schema_; }
  std::string Description() const override;
  Status Restore(const std::optional<std::string>& last_planned) override;
  Status PrepareForAvailableNow() override;
  Result<std::optional<std::string>> LatestOffset(const std::optional<std::string>& start,
                                                  const ReadLimit& limit) override;
  std::string ReportLatestOffset() const override { return reported_latest_; }
  Result<std::unique_ptr<BatchReader>> GetBatch(const std::optional<std::string>& start,
                                                const std::string& end) override;
  // Partitions spread over up to `max_parts` consumers (the first is the
  // source's own; the others come from the consumer factory), largest ranges
  // first onto the least loaded part, and threads for up to `max_parts`
  // parts of kMinRecordsPerPart records: more threads than consumers when
  // there are fewer partitions than threads (a one-partition topic) or no
  // factory. One consumer without a factory. An extra consumer a batch does not
  // use gives up its partitions at once (an assignment left in place would
  // go on prefetching the topic into its client's queue), and one unused for
  // kReleaseIdleMicros is closed, with its threads and whatever it had
  // fetched; the factory makes it again when a batch splits again.
  Result<BatchParts> GetBatchParts(const std::optional<std::string>& start, const std::string& end,
                                   int max_parts) override;
  // Makes the extra consumers of GetBatchParts (production: librdkafka with
  // the source's configuration).
  using ConsumerFactory = std::function<Result<std::unique_ptr<kafka::Consumer>>()>;
  void set_consumer_factory(ConsumerFactory factory) { make_consumer_ = std::move(factory); }
  // Records a part must get at least for a batch to be split.
  static constexpr int64_t kMinRecordsPerPart = 8192;
  // How long an extra consumer stays open unused (monotonic clock), so that
  // batches alternating around the split size do not make and close a
  // client each time.
  static constexpr int64_t kReleaseIdleMicros = 2'000'000;
  // Extra consumers open now (for tests).
  int64_t part_consumers() const { return static_cast<int64_t>(part_consumers_.size()); }
  void OnBatchCommitted(const std::string& end_offset_json) override;
  std::string DescribeRow(const columnar::RecordBatch& chunk, int64_t row) const override;

 private:
  KafkaSource(KafkaSourceOptions options, SourceContext context,
              std::unique_ptr<kafka::Consumer> consumer);
  // The partitions the options select right now.
  Result<std::vector<kafka::TopicPartition>> DiscoverPartitions();
  // High (or low) watermarks of `partitions`.
  Result<KafkaOffsets> FetchWatermarks(const std::vector<kafka::TopicPartition>& partitions,
                                       bool high);
  // The offsets of a fresh query: sources/<i>/0 when present, else resolved
  // from the starting options and written there.
  Result<KafkaOffsets> InitialOffsets();
  Result<KafkaOffsets> ResolveStartingOffsets();
  Result<KafkaOffsets> ParseStart(const std::optional<std::string>& start);
  // Data-loss handling per failOnDataLoss: an error naming the partition and
  // lost range, or a warning and the adjusted offset.
  Status ReportDataLoss(const std::string& message);
  // The offset ranges of the batch (start, end], data loss handled.
  Result<std::vector<kafka::OffsetRange>> BatchRanges(const std::optional<std::string>& start,
                                                      const std::string& end);
  // Unassigns the extra consumers from index `used` on, and closes those
  // unused for kReleaseIdleMicros or that fail to unassign (logged).
  void ReleaseUnusedConsumers(size_t used);

  KafkaSourceOptions options_;
  SourceContext context_;
  std::unique_ptr<kafka::Consumer> consumer_;
  ConsumerFactory make_consumer_;
  // GetBatchParts' consumers beyond consumer_.
  struct PartConsumer {
    std::unique_ptr<kafka::Consumer> consumer;
    int64_t last_used_micros = 0;  // monotonic time of the last batch that used it
    bool assigned = false;         // holds the partitions of that batch
  };
  std::vector<PartConsumer> part_consumers_;
  columnar::SchemaPtr schema_;
  // subscribePattern, compiled; null for the other strategies.
  std::unique_ptr<re2::RE2> pattern_;
  std::optional<KafkaOffsets> initial_offsets_;
  std::optional<KafkaOffsets> available_now_end_;
  std::string reported_latest_;
  // Wall time of the last batch planned under minOffsetsPerTrigger; 0 at
  // start, so (as in Spark) the first trigger after a start never waits.
  int64_t last_trigger_ms_ = 0;
};

}  // namespace silt::stream
