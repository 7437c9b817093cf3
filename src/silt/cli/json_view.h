// Read-only access to small JSON documents (commitInfo, checkpoint offsets)
// for display in `silt log` and `silt checkpoint`. Wraps simdjson so that no
// exception crosses into the commands.
//
// Thread safety: one JsonView per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace silt::cli {

// True when `text` is one valid JSON value.
bool IsValidJson(std::string_view text);

// A parsed JSON object; lookups of top-level members.
class JsonObjectView {
 public:
  // nullopt when `text` is not a JSON object.
  static std::optional<JsonObjectView> Parse(std::string_view text);
  ~JsonObjectView();
  JsonObjectView(JsonObjectView&&) noexcept;
  JsonObjectView& operator=(JsonObjectView&&) noexcept;

  std::optional<int64_t> GetInt(std::string_view key) const;
  std::optional<std::string> GetString(std::string_view key) const;
  // Member `key` as compact JSON text.
  std::optional<std::string> GetJson(std::string_view key) const;
  // Members of object member `key`, each value as display text (strings
  // unquoted, everything else as compact JSON), in document order.
  std::vector<std::pair<std::string, std::string>> GetObjectEntries(std::string_view key) const;

 private:
  JsonObjectView();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace silt::cli
