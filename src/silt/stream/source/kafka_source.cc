// KafkaSource's construction, the partitions its options select, group
// commits and row descriptions. The rest of the source, by job:
// kafka_source_options.cc (the options), kafka_source_offsets.cc (offset
// JSON), kafka_source_start.cc (the starting offsets),
// kafka_source_planning.cc (each batch's end offsets and ranges) and
// kafka_source_read.cc (reading a batch).
#include "silt/stream/source/kafka_source.h"

#include <re2/re2.h>

#include <algorithm>

#include "silt/base/logging.h"

namespace silt::stream {

KafkaSource::KafkaSource(KafkaSourceOptions options, SourceContext context,
                         std::unique_ptr<kafka::Consumer> consumer)
    : options_(std::move(options)),
      context_(std::move(context)),
      consumer_(std::move(consumer)),
      schema_(kafka::RecordSchema(options_.include_headers)) {}

KafkaSource::~KafkaSource() = default;

Result<std::unique_ptr<KafkaSource>> KafkaSource::Make(KafkaSourceOptions options,
                                                       const SourceContext& context,
                                                       std::unique_ptr<kafka::Consumer> consumer) {
  if (consumer == nullptr) return Status::InvalidArgument("Kafka source: no consumer");
  std::unique_ptr<re2::RE2> pattern;
  if (options.strategy == KafkaSourceOptions::Strategy::kSubscribePattern) {
    re2::RE2::Options re2_options;
    re2_options.set_log_errors(false);
    pattern = std::make_unique<re2::RE2>(options.pattern, re2_options);
    if (!pattern->ok()) {
      return Status::InvalidArgument(options.key_path, ".subscribePattern: invalid pattern '",
                                     options.pattern, "': ", pattern->error());
    }
  }
  std::unique_ptr<KafkaSource> source(
      new KafkaSource(std::move(options), context, std::move(consumer)));
  source->pattern_ = std::move(pattern);
  return source;
}

std::string KafkaSource::Description() const {
  switch (options_.strategy) {
    case KafkaSourceOptions::Strategy::kSubscribe: {
      std::string topics;
      for (const std::string& t : options_.topics) topics += (topics.empty() ? "" : ",") + t;
      return "KafkaV2[Subscribe[" + topics + "]]";
    }
    case KafkaSourceOptions::Strategy::kSubscribePattern:
      return "KafkaV2[SubscribePattern[" + options_.pattern + "]]";
    case KafkaSourceOptions::Strategy::kAssign: {
      std::string parts;
      for (const kafka::TopicPartition& tp : options_.assigned) {
        parts += (parts.empty() ? "" : ", ") + tp.ToString();
      }
      return "KafkaV2[Assign[" + parts + "]]";
    }
  }
  return "KafkaV2";
}

Result<std::vector<kafka::TopicPartition>> KafkaSource::DiscoverPartitions() {
  if (options_.strategy == KafkaSourceOptions::Strategy::kAssign) return options_.assigned;
  SILT_ASSIGN_OR_RETURN(std::vector<kafka::TopicInfo> topics, consumer_->ListTopics());
  std::vector<kafka::TopicPartition> out;
  for (const kafka::TopicInfo& topic : topics) {
    bool selected = false;
    if (options_.strategy == KafkaSourceOptions::Strategy::kSubscribe) {
      selected = std::find(options_.topics.begin(), options_.topics.end(), topic.name) !=
                 options_.topics.end();
    } else {
      selected = re2::RE2::FullMatch(topic.name, *pattern_);
    }
    if (!selected) continue;
    for (int32_t p = 0; p < topic.num_partitions; ++p) out.push_back({topic.name, p});
  }
  return out;
}

Result<KafkaOffsets> KafkaSource::FetchWatermarks(
    const std::vector<kafka::TopicPartition>& partitions, bool high) {
  // One query for all partitions (one round trip per broker, not one per
  // partition).
  return consumer_->ListOffsets(partitions, high ? kafka::Consumer::OffsetSpec::kLatest
                                                 : kafka::Consumer::OffsetSpec::kEarliest);
}

Status KafkaSource::Restore(const std::optional<std::string>&) { return Status::OK(); }

void KafkaSource::OnBatchCommitted(const std::string& end_offset_json) {
  if (!options_.properties.count("group.id")) return;
  Result<KafkaOffsets> offsets = KafkaOffsetsFromJson(end_offset_json, "Kafka offset", false);
  if (!offsets.ok()) return;
  // Best effort: the checkpoint, not the group, is the authority.
  Status st = consumer_->CommitOffsets(*offsets);
  if (!st.ok()) {
    SILT_LOG_WARN("stream", "committing offsets to Kafka group ",
                  options_.properties.at("group.id"),
                  " failed (the checkpoint is unaffected): ", st.ToString());
  }
}

std::string KafkaSource::DescribeRow(const columnar::RecordBatch& chunk, int64_t row) const {
  columnar::ColumnPtr topic = chunk.GetColumn("topic");
  columnar::ColumnPtr partition = chunk.GetColumn("partition");
  columnar::ColumnPtr offset = chunk.GetColumn("offset");
  if (topic == nullptr || partition == nullptr || offset == nullptr || row < 0 ||
      row >= chunk.num_rows) {
    return {};
  }
  return Status::Concat("Kafka topic ", topic->StringValue(row), " partition ",
                        partition->Value<int32_t>(row), " offset ", offset->Value<int64_t>(row));
}

}  // namespace silt::stream
