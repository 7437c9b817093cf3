#include "silt/stream/source/kafka_source.h"

#include <re2/re2.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "silt/base/json_writer.h"
#include "silt/base/logging.h"
#include "silt/base/strings.h"
#include "silt/stream/json_internal.h"
#include "silt/stream/options_internal.h"

namespace silt::stream {

namespace {

// Spark's special offsets in startingOffsets JSON.
constexpr int64_t kEarliest = -2;
constexpr int64_t kLatest = -1;
// Spark's KafkaSourceInitialOffsetWriter: a NUL byte (SPARK-19517), the
// version line, then the offsets JSON.
constexpr std::string_view kInitialOffsetsHeader("\0v1\n", 4);

std::optional<int32_t> ParsePartition(std::string_view key) {
  if (key.empty() || key.size() > 9) return std::nullopt;
  int32_t v = 0;
  for (char c : key) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

// Spark's KafkaMicroBatchStream.rateLimit: `limit` records split over the
// partitions in proportion to their backlog; a partition whose share is below
// one record still gets one, so small partitions are not starved.
KafkaOffsets RateLimit(int64_t limit, const KafkaOffsets& from, const KafkaOffsets& until) {
  std::map<kafka::TopicPartition, int64_t> sizes;
  double total = 0;
  for (const auto& [tp, end] : until) {
    auto begin = from.find(tp);
    if (begin == from.end()) continue;
    int64_t size = end - begin->second;
    if (size > 0) {
      sizes[tp] = size;
      total += static_cast<double>(size);
    }
  }
  if (total < 1) return until;
  KafkaOffsets out;
  for (const auto& [tp, end] : until) {
    auto size = sizes.find(tp);
    if (size == sizes.end()) {
      out[tp] = end;
      continue;
    }
    const int64_t begin = from.at(tp);
    const double prorate = static_cast<double>(limit) * (static_cast<double>(size->second) / total);
    const int64_t prorate_long =
        static_cast<int64_t>(prorate < 1 ? std::ceil(prorate) : std::floor(prorate));
    const int64_t off = prorate_long > std::numeric_limits<int64_t>::max() - begin
                            ? std::numeric_limits<int64_t>::max()
                            : begin + prorate_long;
    out[tp] = std::min(end, off);
  }
  // Spark's rounding can overshoot the limit (every partition with a share
  // below one record still gets one); silt promises that no batch exceeds
  // maxOffsetsPerTrigger, so the excess comes off the largest shares.
  int64_t planned = 0;
  for (const auto& [tp, end] : out) {
    auto begin = from.find(tp);
    if (begin != from.end() && end > begin->second) planned += end - begin->second;
  }
  while (planned > limit) {
    int64_t* largest = nullptr;
    int64_t largest_size = 0;
    for (auto& [tp, end] : out) {
      auto begin = from.find(tp);
      if (begin == from.end()) continue;
      const int64_t size = end - begin->second;
      if (size > largest_size) {
        largest_size = size;
        largest = &end;
      }
    }
    if (largest == nullptr) break;
    const int64_t cut = std::min(planned - limit, std::max<int64_t>(1, largest_size / 2));
    *largest -= cut;
    planned -= cut;
  }
  return out;
}

class KafkaBatchReader final : public BatchReader {
 public:
  KafkaBatchReader(kafka::Consumer* consumer, bool include_headers, int64_t poll_timeout_ms,
                   std::string description)
      : consumer_(consumer),
        columns_(include_headers),
        poll_timeout_ms_(poll_timeout_ms),
        description_(std::move(description)) {}

  Result<columnar::RecordBatchPtr> Next() override {
    // Waits in short polls so a stalled broker is reported after
    // kafkaConsumer.pollTimeoutMs without progress, like Spark's
    // "Cannot fetch record ... after polling for" error.
    constexpr int64_t kPollSliceMs = 200;
    int64_t idle_ms = 0;
    while (!consumer_->AssignmentDone() && columns_.num_rows() < columnar::kTargetBatchRows &&
           columns_.bytes() < kafka::RecordColumns::kMaxChunkBytes) {
      SILT_ASSIGN_OR_RETURN(
          int64_t n, consumer_->Poll(&columns_, columnar::kTargetBatchRows - columns_.num_rows(),
                                     kPollSliceMs));
      if (n > 0) {
        idle_ms = 0;
        continue;
      }
      idle_ms += kPollSliceMs;
      if (idle_ms >= poll_timeout_ms_) {
        return Status::IOError("reading ", description_, ": no records after polling for ",
                               poll_timeout_ms_, " ms (kafkaConsumer.pollTimeoutMs)")
            .WithRetryable(true);
      }
    }
    if (columns_.num_rows() == 0) return columnar::RecordBatchPtr();
    return columns_.Finish();
  }

 private:
  kafka::Consumer* consumer_;
  kafka::RecordColumns columns_;
  int64_t poll_timeout_ms_;
  std::string description_;
};

}  // namespace

std::string KafkaOffsetsToJson(const KafkaOffsets& offsets) {
  JsonWriter w;
  w.BeginObject();
  const std::string* current = nullptr;
  for (const auto& [tp, offset] : offsets) {
    if (current == nullptr || *current != tp.topic) {
      if (current != nullptr) w.EndObject();
      w.Key(tp.topic);
      w.BeginObject();
      current = &tp.topic;
    }
    w.Member(std::to_string(tp.partition), offset);
  }
  if (current != nullptr) w.EndObject();
  w.EndObject();
  return w.Take();
}

Result<KafkaOffsets> KafkaOffsetsFromJson(std::string_view json, std::string_view where,
                                          bool allow_special) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  simdjson::dom::object topics;
  if (parser.parse(json.data(), json.size(), true).get(root) || root.get_object().get(topics)) {
    return Status::InvalidArgument(where,
                                   ": expected Kafka offsets like {\"topicA\":{\"0\":23,"
                                   "\"1\":-1}}, got '",
                                   json.substr(0, 200), "'");
  }
  KafkaOffsets out;
  for (auto topic : topics) {
    simdjson::dom::object partitions;
    if (topic.value.get_object().get(partitions)) {
      return Status::InvalidArgument(where, ": topic \"", topic.key,
                                     "\" must map partitions to offsets");
    }
    for (auto partition : partitions) {
      std::optional<int32_t> p = ParsePartition(partition.key);
      int64_t offset = 0;
      if (!p || partition.value.get_int64().get(offset) ||
          offset < (allow_special ? kEarliest : 0)) {
        return Status::InvalidArgument(where, ": bad entry \"", partition.key, "\" of topic \"",
                                       topic.key, "\" (expected \"<partition>\":",
                                       allow_special ? "<offset, -2 or -1>" : "<offset>", ")");
      }
      out[{std::string(topic.key), *p}] = offset;
    }
  }
  return out;
}

Result<KafkaSourceOptions> KafkaSourceOptions::FromSpec(const SourceSpec& spec) {
  internal::OptionReader reader(spec.options, spec.key_path + ".options");
  // Spark 3.5's Kafka source options (structured-streaming-kafka-integration).
  SILT_RETURN_NOT_OK(reader.CheckNames({
      .what = "Kafka source",
      .honoured = {"subscribe", "subscribePattern", "assign", "startingOffsets",
                   "startingTimestamp", "startingOffsetsByTimestamp",
                   "startingOffsetsByTimestampStrategy", "endingOffsets", "maxOffsetsPerTrigger",
                   "minOffsetsPerTrigger", "maxTriggerDelay", "failOnDataLoss", "includeHeaders",
                   "kafkaConsumer.pollTimeoutMs", "fetchOffset.numRetries",
                   "fetchOffset.retryIntervalMs"},
      // How Spark splits partitions into tasks, and the prefix of the group
      // id Spark generates: neither changes the records read.
      .inert = {"minPartitions", "groupIdPrefix"},
      .unsupported = {{"endingTimestamp", ""}, {"endingOffsetsByTimestamp", ""}},
      .pass_through = {"kafka."},
  }));
  KafkaSourceOptions out;
  out.key_path = spec.key_path + ".options";
  if (!spec.schema_ddl.empty()) {
    return Status::InvalidArgument(spec.key_path,
                                   ".schema: the Kafka source has a fixed schema; remove it");
  }
  std::optional<std::string> subscribe = reader.Get("subscribe");
  std::optional<std::string> pattern = reader.Get("subscribePattern");
  std::optional<std::string> assign = reader.Get("assign");
  const int strategies = (subscribe ? 1 : 0) + (pattern ? 1 : 0) + (assign ? 1 : 0);
  if (strategies != 1) {
    return Status::InvalidArgument(out.key_path,
                                   ": set exactly one of subscribe, subscribePattern, assign");
  }
  if (subscribe) {
    out.strategy = Strategy::kSubscribe;
    size_t pos = 0;
    while (pos <= subscribe->size()) {
      size_t comma = subscribe->find(',', pos);
      if (comma == std::string::npos) comma = subscribe->size();
      std::string topic(TrimAscii(std::string_view(*subscribe).substr(pos, comma - pos)));
      if (!topic.empty()) out.topics.push_back(topic);
      pos = comma + 1;
    }
    if (out.topics.empty()) {
      return Status::InvalidArgument(reader.KeyPath("subscribe"), ": no topics to subscribe to");
    }
  } else if (pattern) {
    out.strategy = Strategy::kSubscribePattern;
    out.pattern = *pattern;
    if (TrimAscii(*pattern).empty()) {
      return Status::InvalidArgument(reader.KeyPath("subscribePattern"), ": pattern is empty");
    }
  } else {
    out.strategy = Strategy::kAssign;
    simdjson::dom::parser parser;
    simdjson::dom::element root;
    simdjson::dom::object topics;
    std::string where = reader.KeyPath("assign");
    if (parser.parse(assign->data(), assign->size(), true).get(root) ||
        root.get_object().get(topics)) {
      return Status::InvalidArgument(where, ": expected JSON like {\"topicA\":[0,1]}, got '",
                                     *assign, "'");
    }
    for (auto topic : topics) {
      simdjson::dom::array partitions;
      if (topic.value.get_array().get(partitions)) {
        return Status::InvalidArgument(where, ": topic \"", topic.key,
                                       "\" must map to an array of partitions");
      }
      for (auto p : partitions) {
        int64_t partition = 0;
        if (p.get_int64().get(partition) || partition < 0 ||
            partition > std::numeric_limits<int32_t>::max()) {
          return Status::InvalidArgument(where, ": bad partition in topic \"", topic.key, "\"");
        }
        out.assigned.push_back({std::string(topic.key), static_cast<int32_t>(partition)});
      }
    }
    if (out.assigned.empty()) {
      return Status::InvalidArgument(where, ": no partitions to assign");
    }
  }

  // kafka.* options go to the client; Spark rejects those that would break
  // its ownership of offsets or its byte-array records.
  for (const auto& [key, value] : spec.options) {
    if (key.size() <= 6 || !internal::EqualsIgnoreCase(key.substr(0, 6), "kafka.")) continue;
    std::string name = key.substr(6);
    std::string lower = AsciiLower(name);
    if (lower == "auto.offset.reset") {
      return Status::InvalidArgument(
          out.key_path, ".", key,
          ": Kafka option 'auto.offset.reset' is not supported. Instead set the source option "
          "'startingOffsets' to 'earliest' or 'latest' to specify where to start");
    }
    if (lower == "key.deserializer" || lower == "value.deserializer") {
      return Status::InvalidArgument(out.key_path, ".", key, ": Kafka option '", lower,
                                     "' is not supported, as keys and values are read as byte "
                                     "arrays. Use CAST(value AS STRING) or from_json in the "
                                     "transform instead");
    }
    if (lower == "enable.auto.commit") {
      return Status::InvalidArgument(out.key_path, ".", key,
                                     ": Kafka option 'enable.auto.commit' is not supported: the "
                                     "checkpoint tracks offsets (set kafka.group.id to also "
                                     "commit them to a consumer group)");
    }
    if (lower == "interceptor.classes") {
      return Status::InvalidArgument(out.key_path, ".", key,
                                     ": Kafka option 'interceptor.classes' is not supported");
    }
    out.properties[lower] = value;
  }
  if (!out.properties.count("bootstrap.servers")) {
    return Status::InvalidArgument(out.key_path,
                                   ": option 'kafka.bootstrap.servers' must be specified");
  }

  std::optional<std::string> starting = reader.Get("startingOffsets");
  std::optional<std::string> starting_ts = reader.Get("startingTimestamp");
  std::optional<std::string> starting_by_ts = reader.Get("startingOffsetsByTimestamp");
  if (starting_ts) {
    SILT_ASSIGN_OR_RETURN(std::optional<int64_t> ts, reader.GetInt("startingTimestamp", 0));
    out.start = Start::kTimestamp;
    out.starting_timestamp_ms = *ts;
  } else if (starting_by_ts) {
    out.start = Start::kTimestampPerPartition;
    SILT_ASSIGN_OR_RETURN(
        out.starting_timestamps,
        KafkaOffsetsFromJson(*starting_by_ts, reader.KeyPath("startingOffsetsByTimestamp"), false));
  } else if (starting) {
    std::string value(TrimAscii(*starting));
    if (internal::EqualsIgnoreCase(value, "earliest")) {
      out.start = Start::kEarliest;
    } else if (internal::EqualsIgnoreCase(value, "latest")) {
      out.start = Start::kLatest;
    } else {
      out.start = Start::kOffsets;
      SILT_ASSIGN_OR_RETURN(out.starting_offsets,
                            KafkaOffsetsFromJson(value, reader.KeyPath("startingOffsets"), true));
    }
  }
  if (std::optional<std::string> strategy = reader.Get("startingOffsetsByTimestampStrategy")) {
    if (internal::EqualsIgnoreCase(*strategy, "latest")) {
      out.starting_timestamp_strategy_latest = true;
    } else if (!internal::EqualsIgnoreCase(*strategy, "error")) {
      return Status::InvalidArgument(reader.KeyPath("startingOffsetsByTimestampStrategy"),
                                     ": expected error or latest, got '", *strategy, "'");
    }
  }
  if (std::optional<std::string> ending = reader.Get("endingOffsets")) {
    std::string value(TrimAscii(*ending));
    if (internal::EqualsIgnoreCase(value, "earliest")) {
      return Status::InvalidArgument(reader.KeyPath("endingOffsets"),
                                     ": earliest is not allowed (use latest or JSON)");
    }
    if (!internal::EqualsIgnoreCase(value, "latest")) {
      SILT_ASSIGN_OR_RETURN(KafkaOffsets ending_offsets,
                            KafkaOffsetsFromJson(value, reader.KeyPath("endingOffsets"), true));
      for (const auto& [tp, offset] : ending_offsets) {
        if (offset == kEarliest) {
          return Status::InvalidArgument(reader.KeyPath("endingOffsets"), ": partition ",
                                         tp.ToString(), " cannot end at earliest (-2)");
        }
      }
      out.ending_offsets = std::move(ending_offsets);
    }
  }
  SILT_ASSIGN_OR_RETURN(out.max_offsets_per_trigger, reader.GetInt("maxOffsetsPerTrigger", 1));
  SILT_ASSIGN_OR_RETURN(out.min_offsets_per_trigger, reader.GetInt("minOffsetsPerTrigger", 1));
  if (std::optional<std::string> delay = reader.Get("maxTriggerDelay")) {
    if (!out.min_offsets_per_trigger) {
      SILT_LOG_WARN("stream", reader.KeyPath("maxTriggerDelay"),
                    ": has no effect without minOffsetsPerTrigger");
    }
    // Spark's timeStringAsMs: a bare number is milliseconds.
    std::string text(TrimAscii(*delay));
    if (AllDigits(text)) {
      text += " ms";
    }
    Result<int64_t> micros = ParseDurationMicros(text);
    if (!micros.ok()) {
      return Status::InvalidArgument(reader.KeyPath("maxTriggerDelay"), ": ",
                                     micros.status().message());
    }
    out.max_trigger_delay_ms = *micros / 1000;
  }
  if (out.min_offsets_per_trigger && out.max_offsets_per_trigger &&
      *out.min_offsets_per_trigger > *out.max_offsets_per_trigger) {
    return Status::InvalidArgument(
        out.key_path, ": minOffsetsPerTrigger (", *out.min_offsets_per_trigger,
        ") must not exceed maxOffsetsPerTrigger (", *out.max_offsets_per_trigger, ")");
  }
  SILT_ASSIGN_OR_RETURN(std::optional<bool> fail, reader.GetBool("failOnDataLoss"));
  if (fail) out.fail_on_data_loss = *fail;
  SILT_ASSIGN_OR_RETURN(std::optional<bool> headers, reader.GetBool("includeHeaders"));
  if (headers) out.include_headers = *headers;
  SILT_ASSIGN_OR_RETURN(std::optional<int64_t> poll,
                        reader.GetInt("kafkaConsumer.pollTimeoutMs", 1));
  if (poll) out.poll_timeout_ms = *poll;
  SILT_ASSIGN_OR_RETURN(std::optional<int64_t> retries, reader.GetInt("fetchOffset.numRetries", 0));
  if (retries) out.fetch_offset_num_retries = static_cast<int>(std::min<int64_t>(*retries, 1000));
  SILT_ASSIGN_OR_RETURN(std::optional<int64_t> interval,
                        reader.GetInt("fetchOffset.retryIntervalMs", 0));
  if (interval) out.fetch_offset_retry_interval_ms = *interval;
  return out;
}

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

Status KafkaSource::ReportDataLoss(const std::string& message) {
  if (options_.fail_on_data_loss) {
    return Status::NotFound(
        message,
        ". Some data may have been lost because they are not available in Kafka any more; "
        "either the data was aged out by Kafka or the topic may have been deleted before all "
        "the data in the topic was processed. If you don't want the query to fail on such "
        "cases, set the source option failOnDataLoss to false");
  }
  SILT_LOG_WARN("stream", message, " (failOnDataLoss=false: continuing)");
  return Status::OK();
}

Result<KafkaOffsets> KafkaSource::ResolveStartingOffsets() {
  SILT_ASSIGN_OR_RETURN(std::vector<kafka::TopicPartition> partitions, DiscoverPartitions());
  switch (options_.start) {
    case KafkaSourceOptions::Start::kEarliest: return FetchWatermarks(partitions, false);
    case KafkaSourceOptions::Start::kLatest: return FetchWatermarks(partitions, true);
    case KafkaSourceOptions::Start::kOffsets: {
      // Spark requires the JSON to cover exactly the selected partitions.
      std::set<kafka::TopicPartition> given;
      for (const auto& [tp, offset] : options_.starting_offsets) given.insert(tp);
      std::set<kafka::TopicPartition> selected(partitions.begin(), partitions.end());
      if (options_.strategy != KafkaSourceOptions::Strategy::kSubscribePattern &&
          given != selected) {
        std::string missing;
        for (const kafka::TopicPartition& tp : selected) {
          if (!given.count(tp)) missing += (missing.empty() ? "" : ", ") + tp.ToString();
        }
        for (const kafka::TopicPartition& tp : given) {
          if (!selected.count(tp)) missing += (missing.empty() ? "" : ", ") + tp.ToString();
        }
        return Status::InvalidArgument(options_.key_path,
                                       ".startingOffsets: the partitions in the JSON do not "
                                       "match the subscribed partitions (differing: ",
                                       missing, ")");
      }
      KafkaOffsets out;
      for (const auto& [tp, offset] : options_.starting_offsets) {
        if (offset >= 0) {
          out[tp] = offset;
          continue;
        }
        SILT_ASSIGN_OR_RETURN(kafka::Watermarks marks, consumer_->QueryWatermarks(tp));
        out[tp] = offset == kLatest ? marks.high : marks.low;
      }
      // Partitions a pattern selects but the JSON omits start at latest.
      for (const kafka::TopicPartition& tp : partitions) {
        if (out.count(tp)) continue;
        SILT_ASSIGN_OR_RETURN(kafka::Watermarks marks, consumer_->QueryWatermarks(tp));
        out[tp] = marks.high;
      }
      return out;
    }
    case KafkaSourceOptions::Start::kResolver:
      if (!options_.resolve_start) return Status::Internal("Kafka source: no start resolver");
      return options_.resolve_start(consumer_.get(), partitions);
    case KafkaSourceOptions::Start::kTimestamp:
    case KafkaSourceOptions::Start::kTimestampPerPartition: {
      KafkaOffsets out;
      for (const kafka::TopicPartition& tp : partitions) {
        int64_t ts = options_.starting_timestamp_ms;
        if (options_.start == KafkaSourceOptions::Start::kTimestampPerPartition) {
          auto it = options_.starting_timestamps.find(tp);
          if (it == options_.starting_timestamps.end()) {
            return Status::InvalidArgument(options_.key_path,
                                           ".startingOffsetsByTimestamp: no timestamp for "
                                           "partition ",
                                           tp.ToString());
          }
          ts = it->second;
        }
        SILT_ASSIGN_OR_RETURN(std::vector<std::optional<int64_t>> found,
                              consumer_->OffsetsForTimes({tp}, ts));
        if (!found.empty() && found[0]) {
          out[tp] = *found[0];
          continue;
        }
        if (!options_.starting_timestamp_strategy_latest) {
          return Status::InvalidArgument(
              options_.key_path, ": no offset in partition ", tp.ToString(),
              " has a timestamp at or after ", ts,
              " (set startingOffsetsByTimestampStrategy to latest to start at the end)");
        }
        SILT_ASSIGN_OR_RETURN(kafka::Watermarks marks, consumer_->QueryWatermarks(tp));
        out[tp] = marks.high;
      }
      return out;
    }
  }
  return Status::Internal("unknown Kafka starting offsets mode");
}

Result<KafkaOffsets> KafkaSource::InitialOffsets() {
  if (initial_offsets_) return *initial_offsets_;
  fs::FileSystem* cfs = context_.checkpoint_fs.get();
  const std::string file = fs::JoinPath(context_.metadata_dir, "0");
  if (cfs != nullptr) {
    SILT_ASSIGN_OR_RETURN(bool exists, cfs->Exists(file));
    if (exists) {
      SILT_ASSIGN_OR_RETURN(std::string content, cfs->ReadFile(file));
      std::string_view text = content;
      // Spark writes a leading NUL byte; tolerate files without it.
      if (!text.empty() && text[0] == '\0') text.remove_prefix(1);
      if (!text.starts_with("v1\n")) {
        return Status::Corruption(file, ": expected Kafka initial offsets starting with v1");
      }
      text.remove_prefix(3);
      SILT_ASSIGN_OR_RETURN(KafkaOffsets offsets, KafkaOffsetsFromJson(text, file, false));
      initial_offsets_ = offsets;
      return offsets;
    }
  }
  SILT_ASSIGN_OR_RETURN(KafkaOffsets offsets, ResolveStartingOffsets());
  if (cfs != nullptr) {
    std::string content(kInitialOffsetsHeader);
    content += KafkaOffsetsToJson(offsets);
    SILT_RETURN_NOT_OK(cfs->CreateDir(context_.metadata_dir));
    Status put = cfs->PutIfAbsent(file, content);
    if (put.IsAlreadyExists()) {
      // Another start won the race; its offsets are the query's.
      initial_offsets_.reset();
      return InitialOffsets();
    }
    SILT_RETURN_NOT_OK_CTX(put, "writing the Kafka initial offsets ", file);
  }
  SILT_LOG_INFO("stream", "Kafka initial offsets: ", KafkaOffsetsToJson(offsets));
  initial_offsets_ = offsets;
  return offsets;
}

Result<KafkaOffsets> KafkaSource::ParseStart(const std::optional<std::string>& start) {
  if (!start || start->empty() || *start == "-") return InitialOffsets();
  return KafkaOffsetsFromJson(*start, "Kafka source offset", false);
}

Status KafkaSource::Restore(const std::optional<std::string>&) { return Status::OK(); }

Status KafkaSource::PrepareForAvailableNow() {
  SILT_ASSIGN_OR_RETURN(std::vector<kafka::TopicPartition> partitions, DiscoverPartitions());
  SILT_ASSIGN_OR_RETURN(KafkaOffsets latest, FetchWatermarks(partitions, true));
  available_now_end_ = std::move(latest);
  return Status::OK();
}

Result<std::optional<std::string>> KafkaSource::LatestOffset(
    const std::optional<std::string>& start, const ReadLimit& limit) {
  SILT_ASSIGN_OR_RETURN(KafkaOffsets from, ParseStart(start));
  KafkaOffsets latest;
  if (available_now_end_) {
    latest = *available_now_end_;
  } else {
    SILT_ASSIGN_OR_RETURN(std::vector<kafka::TopicPartition> partitions, DiscoverPartitions());
    SILT_ASSIGN_OR_RETURN(latest, FetchWatermarks(partitions, true));
  }
  if (options_.ending_offsets) {
    for (auto& [tp, offset] : latest) {
      auto it = options_.ending_offsets->find(tp);
      if (it != options_.ending_offsets->end() && it->second >= 0) {
        offset = std::min(offset, it->second);
      }
    }
  }
  reported_latest_ = KafkaOffsetsToJson(latest);

  // New partitions start at their earliest offset; partitions that vanished
  // (topic deleted) are data loss.
  KafkaOffsets begin = from;
  for (const auto& [tp, offset] : latest) {
    if (begin.count(tp)) continue;
    SILT_ASSIGN_OR_RETURN(kafka::Watermarks marks, consumer_->QueryWatermarks(tp));
    begin[tp] = marks.low;
    SILT_LOG_INFO("stream", "Kafka partition ", tp.ToString(), " is new; reading it from offset ",
                  marks.low);
  }
  KafkaOffsets until = latest;
  for (const auto& [tp, offset] : from) {
    if (!latest.count(tp)) {
      if (available_now_end_) {
        until[tp] = offset;  // not part of the availableNow snapshot: no progress
        continue;
      }
      SILT_RETURN_NOT_OK(
          ReportDataLoss("Kafka partition " + tp.ToString() + " is gone (was the topic deleted?)"));
      continue;
    }
    if (latest.at(tp) < offset) {
      // The end moved backwards (topic re-created): keep the position
      // rather than re-reading, and report it as Spark does.
      SILT_RETURN_NOT_OK(ReportDataLoss("Kafka partition " + tp.ToString() + " offset was " +
                                        std::to_string(offset) + " but the latest is now " +
                                        std::to_string(latest.at(tp))));
      until[tp] = latest.at(tp);
    }
  }
  // Spark's ReadMinRows: wait for minOffsetsPerTrigger new records, but no
  // longer than maxTriggerDelay since the last batch this process planned.
  // Not under once / availableNow, which must finish with what is there.
  if (options_.min_offsets_per_trigger && !limit.all_available && !available_now_end_) {
    const int64_t now_ms = context_.clock->NowMicros() / 1000;
    if (now_ms - last_trigger_ms_ >= options_.max_trigger_delay_ms) {
      last_trigger_ms_ = now_ms;
    } else {
      int64_t available = 0;
      for (const auto& [tp, end] : until) {
        auto it = begin.find(tp);
        available += end - (it == begin.end() ? 0 : it->second);
      }
      if (available < *options_.min_offsets_per_trigger) return std::optional<std::string>();
      last_trigger_ms_ = now_ms;
    }
  }
  std::optional<int64_t> cap = options_.max_offsets_per_trigger;
  if (!cap && options_.default_max_offsets_per_partition) {
    cap = *options_.default_max_offsets_per_partition * static_cast<int64_t>(until.size());
  }
  if (cap && *cap > 0 && !limit.all_available) until = RateLimit(*cap, begin, until);
  bool progressed = false;
  for (auto& [tp, end] : until) {
    auto it = from.find(tp);
    if (it == from.end()) {
      progressed = true;
    } else if (end != it->second) {
      progressed = true;
    }
  }
  if (!progressed) return std::optional<std::string>();
  return std::optional<std::string>(KafkaOffsetsToJson(until));
}

Result<std::unique_ptr<BatchReader>> KafkaSource::GetBatch(const std::optional<std::string>& start,
                                                           const std::string& end) {
  SILT_ASSIGN_OR_RETURN(std::vector<kafka::OffsetRange> ranges, BatchRanges(start, end));
  SILT_RETURN_NOT_OK(consumer_->Assign(ranges));
  return std::unique_ptr<BatchReader>(std::make_unique<KafkaBatchReader>(
      consumer_.get(), options_.include_headers, options_.poll_timeout_ms, Description()));
}

Result<std::vector<std::unique_ptr<BatchReader>>> KafkaSource::GetBatchParts(
    const std::optional<std::string>& start, const std::string& end, int max_parts) {
  SILT_ASSIGN_OR_RETURN(std::vector<kafka::OffsetRange> ranges, BatchRanges(start, end));
  int64_t total = 0;
  for (const kafka::OffsetRange& range : ranges) total += range.until - range.from;
  int64_t num_parts = make_consumer_ ? std::min<int64_t>(max_parts, total / kMinRecordsPerPart) : 1;
  num_parts =
      std::max<int64_t>(1, std::min<int64_t>(num_parts, static_cast<int64_t>(ranges.size())));
  std::vector<std::vector<kafka::OffsetRange>> groups(static_cast<size_t>(num_parts));
  std::vector<int64_t> load(groups.size(), 0);
  std::stable_sort(ranges.begin(), ranges.end(), [](const auto& a, const auto& b) {
    return a.until - a.from > b.until - b.from;
  });
  for (kafka::OffsetRange& range : ranges) {
    const size_t part =
        static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    load[part] += range.until - range.from;
    groups[part].push_back(std::move(range));
  }
  while (part_consumers_.size() + 1 < groups.size()) {
    SILT_ASSIGN_OR_RETURN(std::unique_ptr<kafka::Consumer> consumer, make_consumer_());
    part_consumers_.push_back(std::move(consumer));
  }
  std::vector<std::unique_ptr<BatchReader>> parts;
  for (size_t part = 0; part < groups.size(); ++part) {
    kafka::Consumer* consumer = part == 0 ? consumer_.get() : part_consumers_[part - 1].get();
    SILT_RETURN_NOT_OK(consumer->Assign(groups[part]));
    parts.push_back(std::make_unique<KafkaBatchReader>(consumer, options_.include_headers,
                                                       options_.poll_timeout_ms, Description()));
  }
  return parts;
}

Result<std::vector<kafka::OffsetRange>> KafkaSource::BatchRanges(
    const std::optional<std::string>& start, const std::string& end) {
  SILT_ASSIGN_OR_RETURN(KafkaOffsets from, ParseStart(start));
  SILT_ASSIGN_OR_RETURN(KafkaOffsets until,
                        KafkaOffsetsFromJson(end, "Kafka source end offset", false));
  // The earliest offsets now, asked once for every partition of the batch
  // (LatestOffset asked for the latest ones only): what retention deleted
  // since the batch was planned is data loss, handled per failOnDataLoss
  // before anything is read.
  std::vector<kafka::TopicPartition> partitions;
  partitions.reserve(until.size());
  for (const auto& [tp, until_offset] : until) partitions.push_back(tp);
  SILT_ASSIGN_OR_RETURN(KafkaOffsets earliest, FetchWatermarks(partitions, false));
  std::vector<kafka::OffsetRange> ranges;
  for (const auto& [tp, until_offset] : until) {
    auto low_it = earliest.find(tp);
    if (low_it == earliest.end()) {
      return Status::NotFound("Kafka partition ", tp.ToString(), ": no earliest offset returned");
    }
    const int64_t low = low_it->second;
    auto it = from.find(tp);
    // A partition first seen in this batch starts at its earliest offset.
    int64_t from_offset = it != from.end() ? it->second : low;
    if (it == from.end() && low > 0) {
      SILT_LOG_INFO("stream", "Kafka partition ", tp.ToString(), " is new; reading from offset ",
                    low);
    }
    if (from_offset < low && from_offset < until_offset) {
      const int64_t lost_until = std::min(low, until_offset);
      SILT_RETURN_NOT_OK(ReportDataLoss(
          "Kafka partition " + tp.ToString() + ": offsets " + std::to_string(from_offset) + " to " +
          std::to_string(lost_until - 1) + " (" + std::to_string(lost_until - from_offset) +
          " records) were deleted before they were read"));
      from_offset = lost_until;
    }
    if (from_offset < until_offset) ranges.push_back({tp, from_offset, until_offset});
  }
  return ranges;
}

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
