// Small helpers over simdjson's DOM API for the stream module's metadata
// files (checkpoint logs, offsets, file-source log entries). Private to
// src/silt/stream/*.cc: simdjson is a private dependency of silt_stream.
//
// Thread safety: a dom::parser and the elements it returned belong to one
// thread; the returned elements are valid until the parser parses again.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "silt/base/result.h"

namespace silt::stream::internal {

// Parses `text`. Errors: Corruption "<source>: invalid JSON (<reason>)".
inline Result<simdjson::dom::element> ParseJson(simdjson::dom::parser& parser,
                                                std::string_view text, std::string_view source) {
  simdjson::dom::element element;
  auto error = parser.parse(text.data(), text.size(), true).get(element);
  if (error) {
    return Status::Corruption(source, ": invalid JSON (", simdjson::error_message(error), "): '",
                              text.substr(0, 200), "'");
  }
  return element;
}

// Parses `text` as a JSON object. Errors: Corruption naming `source`.
inline Result<simdjson::dom::object> ParseJsonObject(simdjson::dom::parser& parser,
                                                     std::string_view text,
                                                     std::string_view source) {
  SILT_ASSIGN_OR_RETURN(simdjson::dom::element element, ParseJson(parser, text, source));
  simdjson::dom::object object;
  if (element.get_object().get(object)) {
    return Status::Corruption(source, ": expected a JSON object, got '", text.substr(0, 200), "'");
  }
  return object;
}

// The integer at `key`; nullopt when absent. Errors: Corruption when present
// but not an integer.
inline Result<std::optional<int64_t>> GetOptionalInt(const simdjson::dom::object& object,
                                                     std::string_view key,
                                                     std::string_view source) {
  simdjson::dom::element value;
  if (object.at_key(key).get(value)) return std::optional<int64_t>();
  int64_t v = 0;
  if (value.get_int64().get(v)) {
    return Status::Corruption(source, ": \"", key, "\" must be an integer");
  }
  return std::optional<int64_t>(v);
}

inline Result<std::optional<std::string>> GetOptionalString(const simdjson::dom::object& object,
                                                            std::string_view key,
                                                            std::string_view source) {
  simdjson::dom::element value;
  if (object.at_key(key).get(value)) return std::optional<std::string>();
  std::string_view v;
  if (value.get_string().get(v)) {
    return Status::Corruption(source, ": \"", key, "\" must be a string");
  }
  return std::optional<std::string>(std::string(v));
}

}  // namespace silt::stream::internal
