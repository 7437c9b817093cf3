#include "silt/stream/stateful/stateful_operator.h"

namespace silt::stream {

Result<OutputMode> ParseOutputMode(const std::string& text) {
  if (text == "append") return OutputMode::kAppend;
  if (text == "complete") return OutputMode::kComplete;
  if (text == "update") return OutputMode::kUpdate;
  return Status::InvalidArgument("sink.outputMode: expected append, complete or update, got '",
                                 text, "'");
}

const char* OutputModeName(OutputMode mode) {
  switch (mode) {
    case OutputMode::kAppend: return "Append";
    case OutputMode::kComplete: return "Complete";
    case OutputMode::kUpdate: return "Update";
  }
  return "Append";
}

std::string EventTimeKeyPrefix(int64_t micros) {
  uint64_t bits = static_cast<uint64_t>(micros) ^ (uint64_t{1} << 63);
  std::string out(kEventTimeKeyPrefixBytes, '\0');
  for (size_t i = 0; i < kEventTimeKeyPrefixBytes; ++i) {
    out[kEventTimeKeyPrefixBytes - 1 - i] = static_cast<char>(bits & 0xff);
    bits >>= 8;
  }
  return out;
}

int64_t DecodeEventTimeKeyPrefix(std::string_view key) {
  uint64_t bits = 0;
  for (size_t i = 0; i < kEventTimeKeyPrefixBytes; ++i) {
    bits = (bits << 8) | static_cast<unsigned char>(key[i]);
  }
  return static_cast<int64_t>(bits ^ (uint64_t{1} << 63));
}

}  // namespace silt::stream
