// Spark's Kafka offset JSON, {"topic":{"0":15,"1":12}}, both ways.
#include <optional>
#include <string>
#include <string_view>

#include "silt/base/json_writer.h"
#include "silt/stream/json_internal.h"
#include "silt/stream/source/kafka_source.h"
#include "silt/stream/source/kafka_source_internal.h"

namespace silt::stream {

namespace {

std::optional<int32_t> ParsePartition(std::string_view key) {
  if (key.empty() || key.size() > 9) return std::nullopt;
  int32_t v = 0;
  for (char c : key) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

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
          offset < (allow_special ? internal::kKafkaEarliest : 0)) {
        return Status::InvalidArgument(where, ": bad entry \"", partition.key, "\" of topic \"",
                                       topic.key, "\" (expected \"<partition>\":",
                                       allow_special ? "<offset, -2 or -1>" : "<offset>", ")");
      }
      out[{std::string(topic.key), *p}] = offset;
    }
  }
  return out;
}

}  // namespace silt::stream
