#include "silt/stream/stateful/event_time.h"

#include <cctype>

#include "silt/base/strings.h"

namespace silt::stream {

namespace {

constexpr std::string_view kWatermarkDelayKey = "\"spark.watermarkDelayMs\"";

}  // namespace

std::optional<int64_t> WatermarkDelayOf(std::string_view metadata) {
  const size_t key = metadata.find(kWatermarkDelayKey);
  if (key == std::string_view::npos) return std::nullopt;
  size_t value = metadata.find(':', key + kWatermarkDelayKey.size());
  if (value == std::string_view::npos) return std::nullopt;
  value = metadata.find_first_not_of(" \t\n", value + 1);
  if (value == std::string_view::npos) return std::nullopt;
  int64_t delay = 0;
  bool any = false;
  for (; value < metadata.size() && std::isdigit(static_cast<unsigned char>(metadata[value]));
       ++value) {
    delay = delay * 10 + (metadata[value] - '0');
    any = true;
  }
  if (!any) return std::nullopt;
  return delay;
}

std::string WithWatermarkDelay(const std::string& metadata_json, std::optional<int64_t> delay_ms) {
  const size_t key = metadata_json.find(kWatermarkDelayKey);
  std::string rest = metadata_json;
  if (key != std::string::npos) {
    // Remove `"spark.watermarkDelayMs":<digits>` and one adjacent comma.
    size_t end = metadata_json.find_first_of(",}", key);
    if (end == std::string::npos) return metadata_json;
    size_t begin = key;
    if (metadata_json[end] == ',') {
      ++end;
    } else {
      const size_t comma = metadata_json.find_last_not_of(" \t\n", key == 0 ? 0 : key - 1);
      if (comma != std::string::npos && metadata_json[comma] == ',') begin = comma;
    }
    rest = metadata_json.substr(0, begin) + metadata_json.substr(end);
  }
  if (!delay_ms) return rest;
  std::string entry = std::string(kWatermarkDelayKey) + ":" + std::to_string(*delay_ms);
  const size_t open = rest.find('{');
  if (open == std::string::npos) return "{" + entry + "}";
  const size_t next = rest.find_first_not_of(" \t\n", open + 1);
  const bool empty = next == std::string::npos || rest[next] == '}';
  return rest.substr(0, open + 1) + entry + (empty ? "" : ",") + rest.substr(open + 1);
}

std::optional<WatermarkColumn> EventTimeColumn(const columnar::Schema& schema) {
  for (const columnar::Field& field : schema.fields()) {
    if (std::optional<int64_t> delay = WatermarkDelayOf(field.metadata_json)) {
      return WatermarkColumn{field.name, *delay};
    }
  }
  return std::nullopt;
}

std::optional<int64_t> ExpressionWatermarkDelay(const expr::Node& node,
                                                const columnar::Schema& input) {
  switch (node.kind()) {
    case expr::NodeKind::kAlias:
      return ExpressionWatermarkDelay(*static_cast<const expr::AliasNode&>(node).child(), input);
    case expr::NodeKind::kColumnRef: {
      const auto& parts = static_cast<const expr::ColumnRefNode&>(node).parts();
      if (parts.size() != 1) return std::nullopt;
      const int index = input.FieldIndex(parts[0]);
      if (index < 0) return std::nullopt;
      return WatermarkDelayOf(input.field(index).metadata_json);
    }
    case expr::NodeKind::kCall: {
      // Spark's TimeWindowing and SessionWindowing give the window column
      // the time column's metadata; ResolveWindowTime gives window_time's
      // result the window column's.
      const auto& call = static_cast<const expr::CallNode&>(node);
      if (call.args().empty()) return std::nullopt;
      if (EqualsIgnoreCase(call.name(), "window") ||
          EqualsIgnoreCase(call.name(), "session_window") ||
          EqualsIgnoreCase(call.name(), "window_time")) {
        return ExpressionWatermarkDelay(*call.args()[0], input);
      }
      return std::nullopt;
    }
    default: return std::nullopt;
  }
}

}  // namespace silt::stream
