// Secrets in the PySpark export: the job file's raw text (before environment
// expansion) and the Python expression that reads a secret from the
// environment when the job file did. Private to src/silt/stream/export/.
//
// Thread safety: RawValues is immutable after construction; the functions
// are pure.
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace silt::stream::pyspark {

// The job file before environment expansion, to write secrets that came
// from the environment as environment lookups.
class RawValues {
 public:
  // `yaml` may be empty or unparsable: then every Get finds nothing.
  explicit RawValues(const std::string& yaml);

  // The raw scalar at `path` ("sinks", "1", "options", "kafka.sasl.password").
  std::optional<std::string> Get(const std::vector<std::string>& path) const;

 private:
  YAML::Node root_;
};

// "sinks[2]" -> {"sinks", "2"}; "sink" -> {"sink"}.
std::vector<std::string> RawPath(std::string_view key_path);

// A Python expression for a secret: os.environ lookups when the raw value is
// exactly one ${NAME} / ${NAME:-default} reference, else the literal.
std::string SecretExpr(const std::optional<std::string>& raw, const std::string& value);

}  // namespace silt::stream::pyspark
