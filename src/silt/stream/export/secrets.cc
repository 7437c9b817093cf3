#include "silt/base/strings.h"
#include "silt/stream/export/python_internal.h"
#include "silt/stream/export/secrets_internal.h"

namespace silt::stream::pyspark {

RawValues::RawValues(const std::string& yaml) {
  if (yaml.empty()) return;
  try {
    root_ = YAML::Load(yaml);
  } catch (const YAML::Exception&) {
    root_ = YAML::Node();  // the parsed JobSpec came from the same text
  }
}

std::optional<std::string> RawValues::Get(const std::vector<std::string>& path) const {
  if (!root_.IsDefined() || root_.IsNull()) return std::nullopt;
  try {
    // Node::operator= would assign through to the tree; reset() rebinds.
    YAML::Node node;
    node.reset(root_);
    for (const std::string& part : path) {
      if (node.IsSequence() && AllDigits(part) && !part.empty()) {
        const size_t index = static_cast<size_t>(std::stoul(part));
        if (index >= node.size()) return std::nullopt;
        node.reset(node[index]);
      } else if (node.IsMap()) {
        bool found = false;
        for (auto it = node.begin(); it != node.end() && !found; ++it) {
          if (it->first.IsScalar() && it->first.Scalar() == part) {
            node.reset(it->second);
            found = true;
          }
        }
        if (!found) return std::nullopt;
      } else {
        return std::nullopt;
      }
      if (!node.IsDefined()) return std::nullopt;
    }
    if (!node.IsScalar()) return std::nullopt;
    return node.Scalar();
  } catch (const YAML::Exception&) {
    return std::nullopt;
  }
}

std::vector<std::string> RawPath(std::string_view key_path) {
  std::vector<std::string> out;
  std::string part;
  for (char c : key_path) {
    if (c == '.' || c == '[' || c == ']') {
      if (!part.empty()) out.push_back(part);
      part.clear();
    } else {
      part += c;
    }
  }
  if (!part.empty()) out.push_back(part);
  return out;
}

std::string SecretExpr(const std::optional<std::string>& raw, const std::string& value) {
  if (raw && raw->size() > 3 && raw->starts_with("${") && raw->ends_with("}") &&
      raw->find('}') == raw->size() - 1) {
    std::string_view inner = std::string_view(*raw).substr(2, raw->size() - 3);
    size_t sep = inner.find(":-");
    std::string_view name = sep == std::string_view::npos ? inner : inner.substr(0, sep);
    if (!name.empty()) {
      if (sep == std::string_view::npos) return "os.environ[" + Py(name) + "]";
      return "os.environ.get(" + Py(name) + ", " + Py(inner.substr(sep + 2)) + ")";
    }
  }
  return Py(value);
}

}  // namespace silt::stream::pyspark
