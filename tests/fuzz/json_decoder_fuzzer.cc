// libFuzzer target for silt's JSON record decoder (json::JsonDecoder), the
// parser behind from_json and the JSON-lines file and Kafka sources: the
// input, split at newlines, is decoded row by row against a schema that
// reaches every conversion (numbers, decimals, dates, timestamps, base64,
// nested structs, arrays and maps). Any bytes must decode to a column that
// passes ValidateColumn, never a crash, hang or sanitizer report. Built only
// with clang (SILT_BUILD_FUZZERS=ON); see README.md in this directory.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string_view>
#include <vector>

#include "silt/columnar/column.h"
#include "silt/columnar/types.h"
#include "silt/json/json_decoder.h"

namespace {

using silt::columnar::DataType;

silt::columnar::SchemaPtr FuzzSchema() {
  auto inner = DataType::Struct({{"x", DataType::Long(), true},
                                 {"y", DataType::String(), true},
                                 {"z", DataType::Array(DataType::Double()), true}});
  return DataType::Struct({
      {"s", DataType::String(), true},
      {"b", DataType::Byte(), true},
      {"sh", DataType::Short(), true},
      {"i", DataType::Int(), true},
      {"l", DataType::Long(), true},
      {"f", DataType::Float(), true},
      {"d", DataType::Double(), true},
      {"dec", DataType::Decimal(10, 2), true},
      {"big", DataType::Decimal(38, 10), true},
      {"ok", DataType::Boolean(), true},
      {"day", DataType::Date(), true},
      {"ts", DataType::Timestamp(), true},
      {"ntz", DataType::TimestampNtz(), true},
      {"bin", DataType::Binary(), true},
      {"v", DataType::Null(), true},
      {"e", inner, true},
      {"arr", DataType::Array(inner), true},
      {"m", DataType::Map(DataType::String(), DataType::Array(DataType::Int())), true},
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const silt::columnar::SchemaPtr schema = FuzzSchema();
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> rows;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    rows.push_back(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  // A fresh decoder per input: the decoder keeps scratch state across calls,
  // and a finding must replay from its input alone.
  auto decoder = silt::json::JsonDecoder::Make(schema);
  if (!decoder.ok()) std::abort();
  silt::columnar::ColumnPtr corrupt;
  silt::json::DecodeStats stats;
  auto decoded =
      (*decoder)->DecodeViews(rows.data(), static_cast<int64_t>(rows.size()), &corrupt, &stats);
  if (!decoded.ok()) std::abort();  // bad rows are never an error
  if (!silt::columnar::ValidateColumn(**decoded).ok()) std::abort();
  if (corrupt != nullptr && !silt::columnar::ValidateColumn(*corrupt).ok()) std::abort();
  return 0;
}
