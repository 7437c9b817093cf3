// JobParser: typed values off YAML nodes, with the key path in every error;
// and the duplicate-key check the whole document passes first.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <map>

#include "silt/base/strings.h"
#include "silt/stream/job/parser_internal.h"

namespace silt::stream::job_internal {

Status JobParser::CheckKeys(const YAML::Node& map, std::string_view path,
                            std::initializer_list<std::string_view> allowed) const {
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (!it->first.IsScalar()) return Error(it->first, path, "keys must be plain names");
    const std::string& key = it->first.Scalar();
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    auto by_prefix = [&](std::string_view a) {
      return a.ends_with(".*") && key.size() > a.size() - 1 &&
             std::string_view(key).starts_with(a.substr(0, a.size() - 1));
    };
    if (std::any_of(allowed.begin(), allowed.end(), by_prefix)) continue;
    std::string expected;
    for (std::string_view a : allowed) {
      if (!expected.empty()) expected += ", ";
      expected += a;
    }
    return Error(it->first, Join(path, key), "unknown key; expected one of ", expected);
  }
  return Status::OK();
}

Result<std::string> JobParser::Scalar(const YAML::Node& node, std::string_view path) const {
  if (node.IsNull()) return Error(node, path, "a value is required");
  if (!node.IsScalar()) return Error(node, path, "expected a single value, not a list or mapping");
  Result<std::string> expanded = ExpandEnv(node.Scalar());
  if (!expanded.ok()) return Error(node, path, expanded.status().message());
  return expanded;
}

Result<int64_t> JobParser::Integer(const YAML::Node& node, std::string_view path) const {
  SILT_ASSIGN_OR_RETURN(std::string text, Scalar(node, path));
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || end != text.c_str() + text.size() || errno != 0) {
    return Error(node, path, "expected an integer, got '", text, "'");
  }
  return static_cast<int64_t>(v);
}

Result<bool> JobParser::Boolean(const YAML::Node& node, std::string_view path) const {
  SILT_ASSIGN_OR_RETURN(std::string text, Scalar(node, path));
  std::string lower = AsciiLower(text);
  if (lower == "true") return true;
  if (lower == "false") return false;
  return Error(node, path, "expected true or false, got '", text, "'");
}

Result<std::vector<std::string>> JobParser::ScalarList(const YAML::Node& node,
                                                       std::string_view path) const {
  std::vector<std::string> out;
  if (node.IsScalar()) {
    SILT_ASSIGN_OR_RETURN(std::string v, Scalar(node, path));
    out.push_back(std::move(v));
    return out;
  }
  if (!node.IsSequence()) return Error(node, path, "expected a list");
  for (size_t i = 0; i < node.size(); ++i) {
    SILT_ASSIGN_OR_RETURN(std::string v, Scalar(node[i], Index(path, i)));
    out.push_back(std::move(v));
  }
  return out;
}

Result<std::vector<std::pair<std::string, std::string>>> JobParser::ScalarMap(
    const YAML::Node& node, std::string_view path) const {
  std::vector<std::pair<std::string, std::string>> out;
  if (!node.IsMap()) return Error(node, path, "expected a mapping of names to values");
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (!it->first.IsScalar()) return Error(it->first, path, "keys must be plain names");
    std::string key = it->first.Scalar();
    SILT_ASSIGN_OR_RETURN(std::string value, Scalar(it->second, Join(path, key)));
    out.emplace_back(std::move(key), std::move(value));
  }
  return out;
}

Status CheckNoDuplicateKeys(const YAML::Node& node, const std::string& path,
                            std::string_view source) {
  if (node.IsSequence()) {
    for (size_t i = 0; i < node.size(); ++i) {
      SILT_RETURN_NOT_OK(
          CheckNoDuplicateKeys(node[i], path + "[" + std::to_string(i) + "]", source));
    }
    return Status::OK();
  }
  if (!node.IsMap()) return Status::OK();
  std::map<std::string, int> first_line;
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (!it->first.IsScalar()) continue;
    const std::string& key = it->first.Scalar();
    const std::string key_path = path.empty() ? key : path + "." + key;
    const int line = it->first.Mark().is_null() ? 0 : it->first.Mark().line + 1;
    auto [seen, inserted] = first_line.emplace(key, line);
    if (!inserted) {
      return Status::InvalidArgument(source, ":", line, ": ", key_path,
                                     ": duplicate key (first set at line ", seen->second, ")");
    }
    SILT_RETURN_NOT_OK(CheckNoDuplicateKeys(it->second, key_path, source));
  }
  return Status::OK();
}

}  // namespace silt::stream::job_internal
