// KafkaSourceOptions::FromSpec: Spark's Kafka source options from a job
// file's source spec.
#include <algorithm>
#include <limits>

#include "silt/base/logging.h"
#include "silt/base/strings.h"
#include "silt/stream/json_internal.h"
#include "silt/stream/options_internal.h"
#include "silt/stream/source/kafka_source.h"
#include "silt/stream/source/kafka_source_internal.h"

namespace silt::stream {

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
        if (offset == internal::kKafkaEarliest) {
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

}  // namespace silt::stream
