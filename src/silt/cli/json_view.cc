#include "silt/cli/json_view.h"

#include <simdjson.h>

namespace silt::cli {

bool IsValidJson(std::string_view text) {
  simdjson::dom::parser parser;
  simdjson::padded_string padded(text);
  simdjson::dom::element element;
  return parser.parse(padded).get(element) == simdjson::SUCCESS;
}

struct JsonObjectView::Impl {
  simdjson::dom::parser parser;
  simdjson::dom::object object;
};

JsonObjectView::JsonObjectView() : impl_(std::make_unique<Impl>()) {}
JsonObjectView::~JsonObjectView() = default;
JsonObjectView::JsonObjectView(JsonObjectView&&) noexcept = default;
JsonObjectView& JsonObjectView::operator=(JsonObjectView&&) noexcept = default;

std::optional<JsonObjectView> JsonObjectView::Parse(std::string_view text) {
  JsonObjectView view;
  // The dom parser keeps its own padded copy of the input, so the view does
  // not depend on the lifetime of `text`.
  simdjson::padded_string padded(text);
  simdjson::dom::element element;
  if (view.impl_->parser.parse(padded).get(element) != simdjson::SUCCESS) return std::nullopt;
  if (element.get_object().get(view.impl_->object) != simdjson::SUCCESS) return std::nullopt;
  return view;
}

std::optional<int64_t> JsonObjectView::GetInt(std::string_view key) const {
  int64_t value;
  if (impl_->object[key].get_int64().get(value) != simdjson::SUCCESS) return std::nullopt;
  return value;
}

std::optional<std::string> JsonObjectView::GetString(std::string_view key) const {
  std::string_view value;
  if (impl_->object[key].get_string().get(value) != simdjson::SUCCESS) return std::nullopt;
  return std::string(value);
}

std::optional<std::string> JsonObjectView::GetJson(std::string_view key) const {
  simdjson::dom::element element;
  if (impl_->object[key].get(element) != simdjson::SUCCESS) return std::nullopt;
  return simdjson::minify(element);
}

std::vector<std::pair<std::string, std::string>> JsonObjectView::GetObjectEntries(
    std::string_view key) const {
  std::vector<std::pair<std::string, std::string>> out;
  simdjson::dom::object members;
  if (impl_->object[key].get_object().get(members) != simdjson::SUCCESS) return out;
  for (auto field : members) {
    std::string_view text;
    if (field.value.get_string().get(text) == simdjson::SUCCESS) {
      out.emplace_back(std::string(field.key), std::string(text));
    } else {
      out.emplace_back(std::string(field.key), simdjson::minify(field.value));
    }
  }
  return out;
}

}  // namespace silt::cli
