#include "silt/stream/job.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <limits>

#include "silt/base/strings.h"
#include "silt/fs/file_system.h"

namespace silt::stream {

namespace {

bool IsNameStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Microseconds per unit, for every spelling Spark's interval parser accepts
// plus the common abbreviations people write in job files.
std::optional<double> UnitMicros(std::string_view unit) {
  std::string u = AsciiLower(unit);
  if (u == "us" || u == "usec" || u == "usecs" || u == "microsecond" || u == "microseconds") {
    return 1.0;
  }
  if (u == "ms" || u == "msec" || u == "msecs" || u == "milli" || u == "millis" ||
      u == "millisecond" || u == "milliseconds") {
    return 1e3;
  }
  if (u == "s" || u == "sec" || u == "secs" || u == "second" || u == "seconds") return 1e6;
  if (u == "m" || u == "min" || u == "mins" || u == "minute" || u == "minutes") return 60e6;
  if (u == "h" || u == "hr" || u == "hrs" || u == "hour" || u == "hours") return 3600e6;
  if (u == "d" || u == "day" || u == "days") return 86400e6;
  if (u == "w" || u == "week" || u == "weeks") return 7 * 86400e6;
  return std::nullopt;
}

}  // namespace

Result<std::string> ExpandEnv(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    size_t start = text.find("${", pos);
    if (start == std::string_view::npos) {
      out.append(text.substr(pos));
      break;
    }
    out.append(text.substr(pos, start - pos));
    size_t end = text.find('}', start + 2);
    if (end == std::string_view::npos) {
      return Status::InvalidArgument("unterminated '${' at position ", static_cast<int64_t>(start),
                                     " in '", text, "'");
    }
    std::string_view inner = text.substr(start + 2, end - start - 2);
    std::string_view name = inner;
    std::optional<std::string_view> fallback;
    size_t sep = inner.find(":-");
    if (sep != std::string_view::npos) {
      name = inner.substr(0, sep);
      fallback = inner.substr(sep + 2);
    }
    bool valid =
        !name.empty() && IsNameStart(name[0]) && std::all_of(name.begin(), name.end(), IsNameChar);
    if (!valid) {
      return Status::InvalidArgument("invalid variable reference '${", inner, "}' in '", text,
                                     "' (expected ${NAME} or ${NAME:-default})");
    }
    const char* value = std::getenv(std::string(name).c_str());
    // `:-` follows the shell: the default also replaces an empty value.
    if (value != nullptr && (*value != '\0' || !fallback)) {
      out.append(value);
    } else if (fallback) {
      out.append(*fallback);
    } else {
      return Status::InvalidArgument("environment variable ", name, " is not set (referenced as ${",
                                     name, "}; write ${", name, ":-default} to give a default)");
    }
    pos = end + 1;
  }
  return out;
}

Result<int64_t> ParseByteSize(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
  size_t number_start = pos;
  while (pos < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[pos])) || text[pos] == '.')) {
    ++pos;
  }
  std::string number(text.substr(number_start, pos - number_start));
  std::string unit;
  for (size_t i = pos; i < text.size(); ++i) {
    if (!std::isspace(static_cast<unsigned char>(text[i]))) unit.push_back(text[i]);
  }
  unit = AsciiLower(unit);
  double scale = -1;
  if (unit.empty() || unit == "b") scale = 1;
  if (unit == "k" || unit == "kb" || unit == "kib") scale = 1024.0;
  if (unit == "m" || unit == "mb" || unit == "mib") scale = 1024.0 * 1024;
  if (unit == "g" || unit == "gb" || unit == "gib") scale = 1024.0 * 1024 * 1024;
  if (unit == "t" || unit == "tb" || unit == "tib") scale = 1024.0 * 1024 * 1024 * 1024;
  char* end = nullptr;
  double value = number.empty() ? -1 : std::strtod(number.c_str(), &end);
  if (number.empty() || end != number.c_str() + number.size() || !(value > 0) || scale < 0 ||
      value * scale > 9e18) {
    return Status::InvalidArgument("invalid size '", text,
                                   "' (expected a positive size such as 128MB, 1GB or 512k)");
  }
  return static_cast<int64_t>(std::llround(value * scale));
}

Result<int64_t> ParseDurationMicros(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return Status::InvalidArgument("invalid duration '", text, "': ", why,
                                   " (examples: \"60 seconds\", \"5 minutes\", \"500 ms\")");
  };
  // Tokenize into numbers and unit words; "2s" splits into "2" and "s".
  std::vector<std::string> tokens;
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    size_t j = i;
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '+') {
      ++j;
      while (j < text.size() &&
             (std::isdigit(static_cast<unsigned char>(text[j])) || text[j] == '.')) {
        ++j;
      }
    } else if (std::isalpha(static_cast<unsigned char>(c))) {
      while (j < text.size() && std::isalpha(static_cast<unsigned char>(text[j]))) ++j;
    } else {
      return bad(std::string("unexpected character '") + c + "'");
    }
    tokens.emplace_back(text.substr(i, j - i));
    i = j;
  }
  size_t t = 0;
  if (t < tokens.size() && AsciiLower(tokens[t]) == "interval") ++t;
  if (t >= tokens.size()) return bad("empty");
  double total = 0;
  while (t < tokens.size()) {
    const std::string& number = tokens[t];
    char* end = nullptr;
    double value = std::strtod(number.c_str(), &end);
    if (number.empty() || end != number.c_str() + number.size() || !std::isfinite(value)) {
      return bad("expected a number, got '" + number + "'");
    }
    if (value < 0) return bad("must not be negative");
    if (t + 1 >= tokens.size()) return bad("missing unit after " + number);
    std::optional<double> unit = UnitMicros(tokens[t + 1]);
    if (!unit) return bad("unknown unit '" + tokens[t + 1] + "'");
    total += value * *unit;
    t += 2;
  }
  if (total > static_cast<double>(std::numeric_limits<int64_t>::max() / 2)) {
    return bad("too large");
  }
  return static_cast<int64_t>(std::llround(total));
}

namespace {

// Converts a YAML document to a JobSpec, tracking the key path of every node
// so that errors read "job.yaml:12: sink.partitonBy: unknown key; ...".
class JobParser {
 public:
  explicit JobParser(std::string_view source_name) : source_(source_name) {}

  Result<JobSpec> Parse(const YAML::Node& root) {
    JobSpec job;
    if (!root.IsDefined() || root.IsNull()) return Error(root, "", "the job file is empty");
    if (!root.IsMap()) return Error(root, "", "the job file must be a YAML mapping of keys");
    if (YAML::Node type = root["type"]) {
      SILT_ASSIGN_OR_RETURN(std::string kind, Scalar(type, "type"));
      if (AsciiLower(kind) == "maintenance") return ParseMaintenanceJob(root);
      if (AsciiLower(kind) != "stream" && AsciiLower(kind) != "streaming") {
        return Error(type, "type", "expected stream or maintenance, got '", kind, "'");
      }
    }
    SILT_RETURN_NOT_OK(
        CheckKeys(root, "",
                  {"name", "type", "source", "transform", "sink", "sinks", "checkpointLocation",
                   "trigger", "maxBatches", "parallelism", "storage", "ansi", "metrics",
                   "deadLetter", "scaleOut", "spark.sql.*"}));
    SILT_RETURN_NOT_OK(ParseSparkConf(root, &job));
    if (YAML::Node n = root["ansi"]) {
      SILT_ASSIGN_OR_RETURN(std::string ansi, Scalar(n, "ansi"));
      if (AsciiLower(ansi) != "true" && AsciiLower(ansi) != "false") {
        return Error(n, "ansi", "expected true or false, got '", ansi, "'");
      }
      job.ansi = AsciiLower(ansi) == "true";
    }
    if (YAML::Node n = root["name"]) {
      SILT_ASSIGN_OR_RETURN(job.name, Scalar(n, "name"));
    }
    YAML::Node source = root["source"];
    if (!source) return Error(root, "source", "required key is missing");
    SILT_RETURN_NOT_OK(ParseSource(source, &job.source));
    if (YAML::Node n = root["transform"]) {
      SILT_RETURN_NOT_OK(ParseTransforms(n, &job.transforms));
    }
    YAML::Node sink = root["sink"];
    YAML::Node sinks = root["sinks"];
    if (sink && sinks) return Error(sinks, "sinks", "write either sink or sinks, not both");
    if (!sink && !sinks) return Error(root, "sink", "required key is missing (or sinks: [...])");
    if (sink) SILT_RETURN_NOT_OK(ParseSink(sink, "sink", false, &job.sink));
    if (sinks) SILT_RETURN_NOT_OK(ParseSinks(sinks, &job));
    YAML::Node checkpoint = root["checkpointLocation"];
    if (!checkpoint) {
      return Error(root, "checkpointLocation",
                   "required key is missing (the directory that keeps offsets and commits)");
    }
    SILT_ASSIGN_OR_RETURN(job.checkpoint_location, Scalar(checkpoint, "checkpointLocation"));
    if (job.checkpoint_location.empty()) {
      return Error(checkpoint, "checkpointLocation", "must not be empty");
    }
    if (YAML::Node n = root["trigger"]) {
      SILT_RETURN_NOT_OK(ParseTrigger(n, &job.trigger));
    }
    if (YAML::Node n = root["maxBatches"]) {
      SILT_ASSIGN_OR_RETURN(int64_t max, Integer(n, "maxBatches"));
      if (max < 1) return Error(n, "maxBatches", "must be at least 1");
      job.max_batches = max;
    }
    if (YAML::Node n = root["parallelism"]) {
      SILT_ASSIGN_OR_RETURN(int64_t threads, Integer(n, "parallelism"));
      if (threads < 1 || threads > 256) {
        return Error(n, "parallelism", "must be between 1 and 256, got ", threads);
      }
      job.parallelism = static_cast<int>(threads);
    }
    if (YAML::Node n = root["storage"]) {
      SILT_RETURN_NOT_OK(ParseStorage(n, &job));
    }
    if (YAML::Node n = root["metrics"]) {
      SILT_RETURN_NOT_OK(ParseMetrics(n, &job));
    }
    if (YAML::Node n = root["deadLetter"]) {
      SILT_RETURN_NOT_OK(ParseDeadLetter(n, &job));
    }
    if (YAML::Node n = root["scaleOut"]) {
      SILT_RETURN_NOT_OK(ParseScaleOut(n, &job));
    }
    return job;
  }

 private:
  // scaleOut: {mode: consumerGroup, groupId, appId, workerId}, and the
  // refusal of what several workers on one table cannot do exactly once.
  Status ParseScaleOut(const YAML::Node& node, JobSpec* job) const {
    if (!node.IsMap()) {
      return Error(node, "scaleOut", "expected a mapping such as {mode: consumerGroup}");
    }
    SILT_RETURN_NOT_OK(CheckKeys(node, "scaleOut", {"mode", "groupId", "appId", "workerId"}));
    ScaleOutSpec spec;
    YAML::Node mode = node["mode"];
    if (!mode) return Error(node, "scaleOut.mode", "required key is missing (consumerGroup)");
    SILT_ASSIGN_OR_RETURN(spec.mode, Scalar(mode, "scaleOut.mode"));
    if (spec.mode != "consumerGroup") {
      return Error(mode, "scaleOut.mode", "expected consumerGroup, got '", spec.mode, "'");
    }
    auto optional = [&](const char* key, std::string* out) -> Status {
      YAML::Node n = node[key];
      if (!n) return Status::OK();
      const std::string path = std::string("scaleOut.") + key;
      SILT_ASSIGN_OR_RETURN(*out, Scalar(n, path));
      if (out->empty()) return Error(n, path, "must not be empty");
      return Status::OK();
    };
    SILT_RETURN_NOT_OK(optional("groupId", &spec.group_id));
    SILT_RETURN_NOT_OK(optional("appId", &spec.app_id));
    SILT_RETURN_NOT_OK(optional("workerId", &spec.worker_id));
    if (spec.app_id.empty()) spec.app_id = job->name;
    if (spec.app_id.empty()) {
      return Error(node, "scaleOut.appId",
                   "required when the job has no name: every worker must record its offsets in "
                   "the table under the same application id");
    }
    // What each worker must be able to commit on its own, exactly once, as
    // a blind append of the rows of its partitions.
    const std::string why =
        " (scaleOut: each worker commits the rows of its own Kafka "
        "partitions to one Delta table as a blind append)";
    if (job->source.format != "kafka") {
      return Error(node, "scaleOut", "needs a kafka source, not '", job->source.format,
                   "': only Kafka partitions can be shared through a consumer group");
    }
    for (const auto& [key, value] : job->source.options) {
      if (key == "assign") {
        return Error(node, "scaleOut",
                     "source.options.assign pins partitions to one process; use subscribe or "
                     "subscribePattern so the group can share them");
      }
      if (key == "endingOffsets" || key == "minOffsetsPerTrigger" || key == "maxTriggerDelay") {
        return Error(node, "scaleOut", "source.options.", key,
                     " is not supported: a worker sees only its own partitions");
      }
    }
    if (!job->sinks.empty()) {
      return Error(node, "scaleOut",
                   "several sinks cannot be committed together by independent workers; use one "
                   "sink:",
                   why);
    }
    if (job->sink.format != "delta") {
      return Error(node, "scaleOut", "needs a delta sink, not '", job->sink.format, "'", why);
    }
    if (job->sink.mode != "append" || job->sink.output_mode != "append") {
      return Error(node, "scaleOut", "needs sink.outputMode append and sink.mode append", why);
    }
    if (job->dead_letter) {
      return Error(node, "scaleOut",
                   "deadLetter is not supported: its commit could not be made atomic with the "
                   "sink's",
                   why);
    }
    for (const TransformStep& step : job->transforms) {
      if (step.kind == "groupBy" || step.kind == "dropDuplicates" ||
          step.kind == "dropDuplicatesWithinWatermark") {
        return Error(node, "scaleOut", step.key_path, " (", step.kind,
                     ") is stateful: its state would be split between the workers; scale-out "
                     "runs stateless transforms only");
      }
    }
    if (job->trigger.kind == TriggerKind::kOnce ||
        job->trigger.kind == TriggerKind::kAvailableNow) {
      return Error(node, "scaleOut",
                   "trigger once and availableNow are not supported: a worker cannot tell when "
                   "the whole group has drained the topic");
    }
    job->scale_out = std::move(spec);
    return Status::OK();
  }

  // deadLetter: {path: <Delta table>, options: {...}}: an append-only Delta
  // sink of the fixed dead-letter schema (stream/sink/dead_letter.h).
  Status ParseDeadLetter(const YAML::Node& node, JobSpec* job) const {
    if (!node.IsMap()) {
      return Error(node, "deadLetter", "expected a mapping such as {path: /data/dead_letters}");
    }
    SILT_RETURN_NOT_OK(CheckKeys(node, "deadLetter", {"path", "options"}));
    SinkSpec spec;
    spec.format = "delta";
    spec.name = "deadLetter";
    spec.key_path = "deadLetter";
    YAML::Node table = node["path"];
    if (!table)
      return Error(node, "deadLetter.path", "required key is missing (the table location)");
    SILT_ASSIGN_OR_RETURN(spec.path, Scalar(table, "deadLetter.path"));
    if (spec.path.empty()) return Error(table, "deadLetter.path", "must not be empty");
    if (YAML::Node n = node["options"]) {
      SILT_ASSIGN_OR_RETURN(auto entries, ScalarMap(n, "deadLetter.options"));
      for (auto& [key, value] : entries) spec.options[key] = value;
    }
    job->dead_letter = std::move(spec);
    return Status::OK();
  }

  Status ParseMetrics(const YAML::Node& node, JobSpec* job) const {
    if (!node.IsMap()) {
      return Error(node, "metrics", "expected a mapping such as {port: 9108, host: 127.0.0.1}");
    }
    SILT_RETURN_NOT_OK(
        CheckKeys(node, "metrics", {"port", "host", "healthTimeout", "lagInterval", "stopGrace"}));
    MetricsSpec spec;
    YAML::Node port = node["port"];
    if (!port) return Error(node, "metrics.port", "required key is missing");
    SILT_ASSIGN_OR_RETURN(int64_t number, Integer(port, "metrics.port"));
    if (number < 0 || number > 65535) {
      return Error(port, "metrics.port", "expected a port from 0 to 65535, got ", number);
    }
    spec.port = static_cast<int>(number);
    if (YAML::Node n = node["host"]) {
      SILT_ASSIGN_OR_RETURN(spec.host, Scalar(n, "metrics.host"));
      if (spec.host.empty()) return Error(n, "metrics.host", "must not be empty");
    }
    auto duration = [&](const char* key, int64_t* out, bool zero_ok = false) -> Status {
      YAML::Node n = node[key];
      if (!n) return Status::OK();
      const std::string path = std::string("metrics.") + key;
      SILT_ASSIGN_OR_RETURN(std::string text, Scalar(n, path));
      Result<int64_t> micros = ParseDurationMicros(text);
      if (!micros.ok()) return Error(n, path, micros.status().message());
      if (*micros < 0 || (*micros == 0 && !zero_ok)) {
        return Error(n, path, zero_ok ? "must not be negative" : "must be more than 0");
      }
      *out = *micros;
      return Status::OK();
    };
    SILT_RETURN_NOT_OK(duration("healthTimeout", &spec.health_timeout_micros));
    SILT_RETURN_NOT_OK(duration("lagInterval", &spec.lag_interval_micros));
    SILT_RETURN_NOT_OK(duration("stopGrace", &spec.stop_grace_micros, true));
    job->metrics = spec;
    return Status::OK();
  }

  template <typename... Args>
  Status Error(const YAML::Node& node, std::string_view key_path, Args&&... args) const {
    std::string where(source_);
    YAML::Mark mark = node.Mark();
    if (!mark.is_null()) where += ":" + std::to_string(mark.line + 1);
    std::string message = Status::Concat(std::forward<Args>(args)...);
    if (key_path.empty()) return Status::InvalidArgument(where, ": ", message);
    return Status::InvalidArgument(where, ": ", key_path, ": ", message);
  }

  static std::string Join(std::string_view path, std::string_view key) {
    if (path.empty()) return std::string(key);
    return std::string(path) + "." + std::string(key);
  }
  static std::string Index(std::string_view path, size_t i) {
    return std::string(path) + "[" + std::to_string(i) + "]";
  }

  // An entry "prefix.*" of `allowed` admits every key with that prefix.
  Status CheckKeys(const YAML::Node& map, std::string_view path,
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

  // A scalar of any YAML kind (string, number, boolean) as text, with
  // environment variables expanded.
  Result<std::string> Scalar(const YAML::Node& node, std::string_view path) const {
    if (node.IsNull()) return Error(node, path, "a value is required");
    if (!node.IsScalar())
      return Error(node, path, "expected a single value, not a list or mapping");
    Result<std::string> expanded = ExpandEnv(node.Scalar());
    if (!expanded.ok()) return Error(node, path, expanded.status().message());
    return expanded;
  }

  Result<int64_t> Integer(const YAML::Node& node, std::string_view path) const {
    SILT_ASSIGN_OR_RETURN(std::string text, Scalar(node, path));
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || end != text.c_str() + text.size() || errno != 0) {
      return Error(node, path, "expected an integer, got '", text, "'");
    }
    return static_cast<int64_t>(v);
  }

  Result<bool> Boolean(const YAML::Node& node, std::string_view path) const {
    SILT_ASSIGN_OR_RETURN(std::string text, Scalar(node, path));
    std::string lower = AsciiLower(text);
    if (lower == "true") return true;
    if (lower == "false") return false;
    return Error(node, path, "expected true or false, got '", text, "'");
  }

  // A list of scalars; a single scalar counts as a one-element list.
  Result<std::vector<std::string>> ScalarList(const YAML::Node& node, std::string_view path) const {
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

  // A mapping of names to scalars, in file order.
  Result<std::vector<std::pair<std::string, std::string>>> ScalarMap(const YAML::Node& node,
                                                                     std::string_view path) const {
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

  // The `spark.sql.*` keys: SparkSession confs of a ported job.
  Status ParseSparkConf(const YAML::Node& root, JobSpec* job) const {
    for (auto it = root.begin(); it != root.end(); ++it) {
      const std::string& key = it->first.Scalar();
      if (!key.starts_with("spark.sql.")) continue;
      SILT_ASSIGN_OR_RETURN(std::string value, Scalar(it->second, key));
      if (key == "spark.sql.session.timeZone") {
        job->session_time_zone = value;
      } else if (key == "spark.sql.ansi.enabled") {
        if (AsciiLower(value) != "true" && AsciiLower(value) != "false") {
          return Error(it->second, key, "expected true or false, got '", value, "'");
        }
        if (root["ansi"]) {
          return Error(it->first, key, "set either ansi or spark.sql.ansi.enabled, not both");
        }
        job->ansi = AsciiLower(value) == "true";
      } else if (key == "spark.sql.shuffle.partitions") {
        SILT_ASSIGN_OR_RETURN(int64_t n, Integer(it->second, key));
        if (n < 1) return Error(it->second, key, "must be at least 1");
        value = std::to_string(n);
      }
      job->spark_conf[key] = value;
    }
    return Status::OK();
  }

  Status ParseSource(const YAML::Node& node, SourceSpec* spec) const {
    if (!node.IsMap()) return Error(node, "source", "expected a mapping");
    SILT_RETURN_NOT_OK(CheckKeys(node, "source", {"format", "options", "schema"}));
    YAML::Node format = node["format"];
    if (!format) {
      return Error(node, "source.format",
                   "required key is missing (generator, json, text, kafka, delta)");
    }
    SILT_ASSIGN_OR_RETURN(std::string f, Scalar(format, "source.format"));
    spec->format = AsciiLower(f);
    spec->key_path = "source";
    if (YAML::Node options = node["options"]) {
      SILT_ASSIGN_OR_RETURN(auto entries, ScalarMap(options, "source.options"));
      for (auto& [key, value] : entries) {
        if (key == "schema") {
          spec->schema_ddl = value;
          continue;
        }
        spec->options[key] = value;
      }
    }
    if (YAML::Node schema = node["schema"]) {
      if (!spec->schema_ddl.empty()) {
        return Error(schema, "source.schema",
                     "the schema is given twice (source.schema and source.options.schema)");
      }
      SILT_ASSIGN_OR_RETURN(spec->schema_ddl, Scalar(schema, "source.schema"));
    }
    return Status::OK();
  }

  Status ParseTransforms(const YAML::Node& node, std::vector<TransformStep>* steps) const {
    if (node.IsNull()) return Status::OK();
    if (!node.IsSequence()) return Error(node, "transform", "expected a list of steps");
    for (size_t i = 0; i < node.size(); ++i) {
      std::string path = Index("transform", i);
      const YAML::Node item = node[i];
      if (!item.IsMap() || item.size() != 1) {
        return Error(item, path,
                     "each step is a mapping with exactly one key (select, where, filter, "
                     "withColumn, withColumnRenamed, drop, withWatermark, sql, join, "
                     "groupBy, dropDuplicates, dropDuplicatesWithinWatermark)");
      }
      auto it = item.begin();
      if (!it->first.IsScalar()) return Error(it->first, path, "keys must be plain names");
      std::string kind = it->first.Scalar();
      const YAML::Node body = it->second;
      std::string body_path = Join(path, kind);
      TransformStep step;
      step.key_path = path;
      if (kind == "select") {
        step.kind = "select";
        SILT_ASSIGN_OR_RETURN(step.exprs, ScalarList(body, body_path));
        if (step.exprs.empty()) return Error(body, body_path, "select needs at least one column");
      } else if (kind == "where" || kind == "filter") {
        step.kind = "where";
        SILT_ASSIGN_OR_RETURN(std::string predicate, Scalar(body, body_path));
        step.exprs.push_back(std::move(predicate));
      } else if (kind == "withColumn") {
        step.kind = "withColumn";
        SILT_ASSIGN_OR_RETURN(step.named, ScalarMap(body, body_path));
        if (step.named.empty()) return Error(body, body_path, "needs at least one name: expr");
      } else if (kind == "withColumnRenamed") {
        step.kind = "withColumnRenamed";
        SILT_ASSIGN_OR_RETURN(step.named, ScalarMap(body, body_path));
        if (step.named.empty()) return Error(body, body_path, "needs at least one old: new");
      } else if (kind == "sql") {
        step.kind = "sql";
        SILT_ASSIGN_OR_RETURN(std::string query, Scalar(body, body_path));
        step.exprs.push_back(std::move(query));
      } else if (kind == "drop") {
        step.kind = "drop";
        SILT_ASSIGN_OR_RETURN(step.exprs, ScalarList(body, body_path));
      } else if (kind == "withWatermark") {
        step.kind = "withWatermark";
        if (!body.IsMap()) {
          return Error(body, body_path,
                       "expected {eventTime: <column>, delayThreshold: <duration>}");
        }
        SILT_RETURN_NOT_OK(CheckKeys(body, body_path, {"eventTime", "delayThreshold"}));
        YAML::Node event_time = body["eventTime"];
        YAML::Node delay = body["delayThreshold"];
        if (!event_time)
          return Error(body, Join(body_path, "eventTime"), "required key is missing");
        if (!delay)
          return Error(body, Join(body_path, "delayThreshold"), "required key is missing");
        SILT_ASSIGN_OR_RETURN(step.event_time, Scalar(event_time, Join(body_path, "eventTime")));
        SILT_ASSIGN_OR_RETURN(step.delay_threshold,
                              Scalar(delay, Join(body_path, "delayThreshold")));
        Result<int64_t> micros = ParseDurationMicros(step.delay_threshold);
        if (!micros.ok()) {
          return Error(delay, Join(body_path, "delayThreshold"), micros.status().message());
        }
      } else if (kind == "groupBy") {
        step.kind = "groupBy";
        if (!body.IsMap()) {
          return Error(body, body_path, "expected {keys: [<expr>, ...], agg: [<aggregate>, ...]}");
        }
        SILT_RETURN_NOT_OK(CheckKeys(body, body_path, {"keys", "agg"}));
        if (YAML::Node keys = body["keys"]) {
          SILT_ASSIGN_OR_RETURN(step.exprs, ScalarList(keys, Join(body_path, "keys")));
        }
        YAML::Node agg = body["agg"];
        if (!agg) return Error(body, Join(body_path, "agg"), "required key is missing");
        SILT_ASSIGN_OR_RETURN(step.aggs, ScalarList(agg, Join(body_path, "agg")));
        if (step.aggs.empty()) {
          return Error(agg, Join(body_path, "agg"), "needs at least one aggregate");
        }
      } else if (kind == "join") {
        step.kind = "join";
        SILT_RETURN_NOT_OK(ParseJoin(body, body_path, &step));
      } else if (kind == "dropDuplicates" || kind == "dropDuplicatesWithinWatermark") {
        step.kind = kind;
        if (!body.IsNull()) {
          SILT_ASSIGN_OR_RETURN(step.exprs, ScalarList(body, body_path));
        }
      } else {
        return Error(it->first, body_path,
                     "unknown step; expected one of select, where, filter, withColumn, "
                     "withColumnRenamed, drop, withWatermark, sql, join, groupBy, "
                     "dropDuplicates, dropDuplicatesWithinWatermark");
      }
      steps->push_back(std::move(step));
    }
    return Status::OK();
  }

  // join: {with: {format: delta, path: P, where: ..., select: [...]},
  //        on: <column> | [<column>, ...], how: inner|left|left_semi|left_anti}
  Status ParseJoin(const YAML::Node& body, const std::string& path, TransformStep* step) const {
    if (!body.IsMap()) {
      return Error(body, path, "expected {with: {format: delta, path: ...}, on: [<column>, ...]}");
    }
    SILT_RETURN_NOT_OK(CheckKeys(body, path, {"with", "on", "how"}));
    YAML::Node with = body["with"];
    const std::string with_path = Join(path, "with");
    if (!with) return Error(body, with_path, "required key is missing (the static table)");
    if (!with.IsMap()) return Error(with, with_path, "expected {format: delta, path: ...}");
    SILT_RETURN_NOT_OK(CheckKeys(with, with_path, {"format", "path", "where", "select"}));
    StaticTableSpec& table = step->join_with;
    if (YAML::Node n = with["format"]) {
      SILT_ASSIGN_OR_RETURN(std::string format, Scalar(n, Join(with_path, "format")));
      table.format = AsciiLower(format);
      if (table.format != "delta") {
        return Error(n, Join(with_path, "format"), "expected delta, got '", format, "'");
      }
    }
    YAML::Node table_path = with["path"];
    if (!table_path) return Error(with, Join(with_path, "path"), "required key is missing");
    SILT_ASSIGN_OR_RETURN(table.path, Scalar(table_path, Join(with_path, "path")));
    if (table.path.empty()) return Error(table_path, Join(with_path, "path"), "must not be empty");
    if (YAML::Node n = with["where"]) {
      SILT_ASSIGN_OR_RETURN(table.where, Scalar(n, Join(with_path, "where")));
    }
    if (YAML::Node n = with["select"]) {
      SILT_ASSIGN_OR_RETURN(table.select, ScalarList(n, Join(with_path, "select")));
    }
    YAML::Node on = body["on"];
    const std::string on_path = Join(path, "on");
    if (!on) return Error(body, on_path, "required key is missing (the join columns)");
    SILT_ASSIGN_OR_RETURN(step->exprs, ScalarList(on, on_path));
    if (step->exprs.empty()) return Error(on, on_path, "needs at least one column");
    if (YAML::Node n = body["how"]) {
      SILT_ASSIGN_OR_RETURN(step->join_how, Scalar(n, Join(path, "how")));
    }
    return Status::OK();
  }

  Status ParseSinks(const YAML::Node& node, JobSpec* job) const {
    if (!node.IsSequence() || node.size() == 0) {
      return Error(node, "sinks", "expected a non-empty list of sinks");
    }
    for (size_t i = 0; i < node.size(); ++i) {
      SinkSpec spec;
      SILT_RETURN_NOT_OK(ParseSink(node[i], Index("sinks", i), true, &spec));
      for (const SinkSpec& other : job->sinks) {
        if (other.name == spec.name) {
          return Error(node[i], Index("sinks", i) + ".name", "'", spec.name, "' names two sinks (",
                       other.key_path, " and ", spec.key_path, ")");
        }
        if (other.output_mode != spec.output_mode) {
          return Error(node[i], Index("sinks", i) + ".outputMode", "'", spec.output_mode,
                       "' differs from ", other.key_path, "'s '", other.output_mode,
                       "' (the output mode is the query's: one for all sinks)");
        }
      }
      job->sinks.push_back(std::move(spec));
    }
    job->sink = job->sinks[0];
    return Status::OK();
  }

  // `sink:` (path "sink") or one entry of `sinks:` (path "sinks[i]", which
  // may also have name, where and select).
  Status ParseSink(const YAML::Node& node, const std::string& path, bool routed,
                   SinkSpec* spec) const {
    if (!node.IsMap()) return Error(node, path, "expected a mapping");
    if (routed) {
      SILT_RETURN_NOT_OK(CheckKeys(
          node, path,
          {"name", "where", "select", "format", "outputMode", "path", "partitionBy", "clusterBy",
           "options", "mode", "merge", "dedupBy", "generatedColumns", "identityColumns"}));
    } else {
      SILT_RETURN_NOT_OK(
          CheckKeys(node, path,
                    {"format", "outputMode", "path", "partitionBy", "clusterBy", "options", "mode",
                     "merge", "dedupBy", "generatedColumns", "identityColumns"}));
    }
    spec->key_path = path;
    spec->name = path;
    const std::string p = path;
    if (YAML::Node n = node["name"]) {
      SILT_ASSIGN_OR_RETURN(spec->name, Scalar(n, Join(p, "name")));
      if (spec->name.empty()) return Error(n, Join(p, "name"), "must not be empty");
    }
    if (YAML::Node n = node["where"]) {
      SILT_ASSIGN_OR_RETURN(spec->where, Scalar(n, Join(p, "where")));
    }
    if (YAML::Node n = node["select"]) {
      SILT_ASSIGN_OR_RETURN(spec->select, ScalarList(n, Join(p, "select")));
      if (spec->select.empty()) {
        return Error(n, Join(p, "select"), "needs at least one column");
      }
    }
    if (YAML::Node n = node["format"]) {
      SILT_ASSIGN_OR_RETURN(std::string f, Scalar(n, Join(p, "format")));
      spec->format = AsciiLower(f);
    }
    if (YAML::Node n = node["outputMode"]) {
      SILT_ASSIGN_OR_RETURN(std::string mode, Scalar(n, Join(p, "outputMode")));
      spec->output_mode = AsciiLower(mode);
      if (spec->output_mode != "append" && spec->output_mode != "complete" &&
          spec->output_mode != "update") {
        return Error(n, Join(p, "outputMode"), "expected append, complete or update, got '", mode,
                     "'");
      }
    }
    YAML::Node table = node["path"];
    // The Kafka sink writes to topics (options.topic), the console to
    // stdout: neither has a path.
    if (!table && spec->format != "kafka" && spec->format != "console") {
      return Error(node, Join(p, "path"), "required key is missing (the table location)");
    }
    if (table) {
      SILT_ASSIGN_OR_RETURN(spec->path, Scalar(table, Join(p, "path")));
      if (spec->path.empty()) return Error(table, Join(p, "path"), "must not be empty");
    }
    if (YAML::Node n = node["partitionBy"]) {
      SILT_ASSIGN_OR_RETURN(spec->partition_by, ScalarList(n, Join(p, "partitionBy")));
    }
    if (YAML::Node n = node["clusterBy"]) {
      SILT_ASSIGN_OR_RETURN(spec->cluster_by, ScalarList(n, Join(p, "clusterBy")));
      if (!spec->partition_by.empty() && !spec->cluster_by.empty()) {
        return Error(n, Join(p, "clusterBy"),
                     "a Delta table is either partitioned or clustered: drop partitionBy or "
                     "clusterBy");
      }
    }
    for (const char* key : {"generatedColumns", "identityColumns"}) {
      YAML::Node n = node[key];
      if (!n) continue;
      SILT_ASSIGN_OR_RETURN(auto entries, ScalarMap(n, Join(p, key)));
      if (spec->format != "delta") {
        return Error(n, Join(p, key), "applies to format delta, not ", spec->format);
      }
      (std::string_view(key) == "generatedColumns" ? spec->generated_columns
                                                   : spec->identity_columns) = std::move(entries);
    }
    if (YAML::Node n = node["options"]) {
      SILT_ASSIGN_OR_RETURN(auto entries, ScalarMap(n, Join(p, "options")));
      for (auto& [key, value] : entries) spec->options[key] = value;
    }
    if (YAML::Node n = node["mode"]) {
      SILT_ASSIGN_OR_RETURN(std::string mode, Scalar(n, Join(p, "mode")));
      spec->mode = AsciiLower(mode);
      if (spec->mode != "append" && spec->mode != "merge") {
        return Error(n, Join(p, "mode"), "expected append or merge, got '", mode, "'");
      }
      if (spec->mode == "merge" &&
          (!spec->generated_columns.empty() || !spec->identity_columns.empty())) {
        return Error(n, Join(p, "mode"),
                     "generatedColumns and identityColumns are computed by appends only, not "
                     "by the merge sink");
      }
      if (spec->mode == "merge" && spec->format != "delta") {
        return Error(n, Join(p, "mode"), "merge needs format delta (got ", spec->format, ")");
      }
    }
    if (YAML::Node n = node["merge"]) {
      if (spec->mode != "merge") {
        return Error(n, Join(p, "merge"), "set mode: merge to merge batches into the table");
      }
      MergeSinkSpec merge;
      SILT_RETURN_NOT_OK(ParseMerge(n, Join(p, "merge"), &merge));
      spec->merge = std::move(merge);
    } else if (spec->mode == "merge") {
      return Error(node, Join(p, "merge"),
                   "required with mode: merge ({on: <condition>, whenMatched: [...], "
                   "whenNotMatched: [...]})");
    }
    if (YAML::Node n = node["dedupBy"]) {
      const std::string dp = Join(p, "dedupBy");
      if (spec->mode != "merge") {
        return Error(n, dp, "only a merge sink (mode: merge) deduplicates its batches");
      }
      if (!n.IsMap()) return Error(n, dp, "expected {keys: [<expr>, ...], orderBy: [<expr>]}");
      SILT_RETURN_NOT_OK(CheckKeys(n, dp, {"keys", "orderBy"}));
      DedupSpec dedup;
      YAML::Node keys = n["keys"];
      if (!keys) return Error(n, Join(dp, "keys"), "required key is missing");
      SILT_ASSIGN_OR_RETURN(dedup.keys, ScalarList(keys, Join(dp, "keys")));
      if (dedup.keys.empty()) return Error(keys, Join(dp, "keys"), "needs at least one key");
      if (YAML::Node o = n["orderBy"]) {
        SILT_ASSIGN_OR_RETURN(dedup.order_by, ScalarList(o, Join(dp, "orderBy")));
      }
      spec->dedup_by = std::move(dedup);
    }
    return Status::OK();
  }

  Status ParseMerge(const YAML::Node& node, const std::string& path, MergeSinkSpec* merge) const {
    if (!node.IsMap()) {
      return Error(node, path, "expected {on: <condition>, whenMatched: [...], ...}");
    }
    SILT_RETURN_NOT_OK(CheckKeys(node, path,
                                 {"on", "targetAlias", "sourceAlias", "whenMatched",
                                  "whenNotMatched", "whenNotMatchedBySource"}));
    YAML::Node on = node["on"];
    if (!on) {
      return Error(node, Join(path, "on"), "required key is missing (e.g. \"t.id = s.id\")");
    }
    SILT_ASSIGN_OR_RETURN(merge->on, Scalar(on, Join(path, "on")));
    if (YAML::Node n = node["targetAlias"]) {
      SILT_ASSIGN_OR_RETURN(merge->target_alias, Scalar(n, Join(path, "targetAlias")));
    }
    if (YAML::Node n = node["sourceAlias"]) {
      SILT_ASSIGN_OR_RETURN(merge->source_alias, Scalar(n, Join(path, "sourceAlias")));
    }
    if (merge->target_alias.empty() || merge->source_alias.empty() ||
        AsciiLower(merge->target_alias) == AsciiLower(merge->source_alias)) {
      return Error(node, path, "targetAlias and sourceAlias must be two different names");
    }
    struct Kind {
      const char* key;
      std::vector<MergeClauseSpec>* out;
      std::initializer_list<std::string_view> actions;
    };
    const Kind kinds[] = {
        {"whenMatched", &merge->when_matched, {"update", "updateAll", "delete"}},
        {"whenNotMatched", &merge->when_not_matched, {"insert", "insertAll"}},
        {"whenNotMatchedBySource", &merge->when_not_matched_by_source, {"update", "delete"}},
    };
    for (const Kind& kind : kinds) {
      YAML::Node list = node[kind.key];
      if (!list) continue;
      const std::string lp = Join(path, kind.key);
      if (!list.IsSequence()) {
        return Error(list, lp, "expected a list of clauses ({condition: ..., action: ...})");
      }
      for (size_t i = 0; i < list.size(); ++i) {
        const std::string cp = Index(lp, i);
        const YAML::Node c = list[i];
        if (!c.IsMap()) return Error(c, cp, "expected {condition: <expr>, action: <action>, ...}");
        SILT_RETURN_NOT_OK(CheckKeys(c, cp, {"condition", "action", "set", "values"}));
        MergeClauseSpec clause;
        clause.key_path = cp;
        if (YAML::Node v = c["condition"]) {
          SILT_ASSIGN_OR_RETURN(clause.condition, Scalar(v, Join(cp, "condition")));
        }
        YAML::Node action = c["action"];
        std::string expected;
        for (std::string_view a : kind.actions) {
          if (!expected.empty()) expected += ", ";
          expected += a;
        }
        if (!action)
          return Error(c, Join(cp, "action"), "required key is missing (", expected, ")");
        SILT_ASSIGN_OR_RETURN(clause.action, Scalar(action, Join(cp, "action")));
        auto known = std::find(kind.actions.begin(), kind.actions.end(), clause.action);
        if (known == kind.actions.end()) {
          return Error(action, Join(cp, "action"), "expected one of ", expected, ", got '",
                       clause.action, "'");
        }
        const bool assigns = clause.action == "update" || clause.action == "insert";
        const char* list_key = clause.action == "insert" ? "values" : "set";
        const char* other_key = clause.action == "insert" ? "set" : "values";
        if (c[other_key]) {
          return Error(c[other_key], Join(cp, other_key), "not used by action ", clause.action,
                       assigns ? std::string(" (write ") + list_key + ")" : std::string());
        }
        if (YAML::Node v = c[list_key]) {
          if (!assigns) {
            return Error(v, Join(cp, list_key), "not used by action ", clause.action);
          }
          SILT_ASSIGN_OR_RETURN(clause.assignments, ScalarMap(v, Join(cp, list_key)));
        }
        if (assigns && clause.assignments.empty()) {
          return Error(c, Join(cp, list_key), "required for action ", clause.action,
                       " (or use action ", clause.action, "All)");
        }
        // Spark's rule: in each WHEN kind only the last clause may be
        // unconditional (a later one could never act).
        if (clause.condition.empty() && i + 1 < list.size()) {
          return Error(c, Join(cp, "condition"),
                       "only the last clause of a list may omit its condition");
        }
        kind.out->push_back(std::move(clause));
      }
    }
    if (merge->when_matched.empty() && merge->when_not_matched.empty() &&
        merge->when_not_matched_by_source.empty()) {
      return Error(node, path,
                   "needs at least one of whenMatched, whenNotMatched, whenNotMatchedBySource");
    }
    return Status::OK();
  }

  Status ParseTrigger(const YAML::Node& node, TriggerSpec* trigger) const {
    if (!node.IsMap() || node.size() != 1) {
      return Error(node, "trigger",
                   "expected one of {processingTime: <duration>}, {once: true}, "
                   "{availableNow: true}");
    }
    SILT_RETURN_NOT_OK(CheckKeys(node, "trigger", {"processingTime", "once", "availableNow"}));
    if (YAML::Node n = node["processingTime"]) {
      SILT_ASSIGN_OR_RETURN(std::string text, Scalar(n, "trigger.processingTime"));
      Result<int64_t> micros = ParseDurationMicros(text);
      if (!micros.ok()) return Error(n, "trigger.processingTime", micros.status().message());
      // processingTime 0 is Spark's default trigger: batches back to back.
      trigger->kind = *micros > 0 ? TriggerKind::kProcessingTime : TriggerKind::kDefault;
      trigger->interval_micros = *micros;
    } else if (YAML::Node n = node["once"]) {
      SILT_ASSIGN_OR_RETURN(bool once, Boolean(n, "trigger.once"));
      if (!once) return Error(n, "trigger.once", "must be true (omit the trigger for the default)");
      trigger->kind = TriggerKind::kOnce;
    } else if (YAML::Node n = node["availableNow"]) {
      SILT_ASSIGN_OR_RETURN(bool now, Boolean(n, "trigger.availableNow"));
      if (!now) {
        return Error(n, "trigger.availableNow", "must be true (omit the trigger for the default)");
      }
      trigger->kind = TriggerKind::kAvailableNow;
    }
    return Status::OK();
  }

  // `type: maintenance` (MaintenanceSpec in job.h).
  Result<JobSpec> ParseMaintenanceJob(const YAML::Node& root) const {
    SILT_RETURN_NOT_OK(CheckKeys(
        root, "", {"name", "type", "tables", "optimize", "vacuum", "schedule", "storage"}));
    JobSpec job;
    MaintenanceSpec spec;
    if (YAML::Node n = root["name"]) {
      SILT_ASSIGN_OR_RETURN(job.name, Scalar(n, "name"));
    }
    YAML::Node tables = root["tables"];
    if (!tables)
      return Error(root, "tables", "required key is missing (the Delta tables to maintain)");
    SILT_ASSIGN_OR_RETURN(spec.tables, ScalarList(tables, "tables"));
    if (spec.tables.empty()) return Error(tables, "tables", "needs at least one table path");
    auto size_value = [&](const YAML::Node& n, const std::string& path) -> Result<int64_t> {
      SILT_ASSIGN_OR_RETURN(std::string text, Scalar(n, path));
      Result<int64_t> bytes = ParseByteSize(text);
      if (!bytes.ok()) return Error(n, path, bytes.status().message());
      return bytes;
    };
    if (YAML::Node n = root["optimize"]) {
      if (n.IsScalar()) {
        SILT_ASSIGN_OR_RETURN(spec.optimize, Boolean(n, "optimize"));
      } else if (n.IsMap()) {
        SILT_RETURN_NOT_OK(
            CheckKeys(n, "optimize", {"where", "targetSize", "minInputFiles", "zorderBy"}));
        if (YAML::Node v = n["where"]) {
          SILT_ASSIGN_OR_RETURN(spec.optimize_where, Scalar(v, "optimize.where"));
        }
        if (YAML::Node v = n["targetSize"]) {
          SILT_ASSIGN_OR_RETURN(spec.target_file_bytes, size_value(v, "optimize.targetSize"));
        }
        if (YAML::Node v = n["minInputFiles"]) {
          SILT_ASSIGN_OR_RETURN(spec.min_input_files, Integer(v, "optimize.minInputFiles"));
          if (spec.min_input_files < 1)
            return Error(v, "optimize.minInputFiles", "must be at least 1");
        }
        if (YAML::Node v = n["zorderBy"]) {
          SILT_ASSIGN_OR_RETURN(spec.zorder_by, ScalarList(v, "optimize.zorderBy"));
        }
      } else {
        return Error(n, "optimize", "expected false or a mapping of options");
      }
    }
    if (YAML::Node n = root["vacuum"]) {
      if (n.IsScalar()) {
        SILT_ASSIGN_OR_RETURN(spec.vacuum, Boolean(n, "vacuum"));
      } else if (n.IsMap()) {
        SILT_RETURN_NOT_OK(
            CheckKeys(n, "vacuum", {"retain", "retentionDurationCheck", "dryRun", "lite"}));
        if (YAML::Node v = n["retain"]) {
          SILT_ASSIGN_OR_RETURN(std::string text, Scalar(v, "vacuum.retain"));
          Result<int64_t> micros = ParseDurationMicros(text);
          if (!micros.ok()) return Error(v, "vacuum.retain", micros.status().message());
          spec.vacuum_retention_ms = *micros / 1000;
        }
        if (YAML::Node v = n["retentionDurationCheck"]) {
          SILT_ASSIGN_OR_RETURN(spec.vacuum_retention_check,
                                Boolean(v, "vacuum.retentionDurationCheck"));
        }
        if (YAML::Node v = n["dryRun"]) {
          SILT_ASSIGN_OR_RETURN(spec.vacuum_dry_run, Boolean(v, "vacuum.dryRun"));
        }
        if (YAML::Node v = n["lite"]) {
          SILT_ASSIGN_OR_RETURN(spec.vacuum_lite, Boolean(v, "vacuum.lite"));
        }
      } else {
        return Error(n, "vacuum", "expected false or a mapping of options");
      }
    }
    if (YAML::Node n = root["schedule"]) {
      if (!n.IsMap()) return Error(n, "schedule", "expected {interval: <duration>, maxRuns: <n>}");
      SILT_RETURN_NOT_OK(CheckKeys(n, "schedule", {"interval", "maxRuns"}));
      if (YAML::Node v = n["interval"]) {
        SILT_ASSIGN_OR_RETURN(std::string text, Scalar(v, "schedule.interval"));
        Result<int64_t> micros = ParseDurationMicros(text);
        if (!micros.ok()) return Error(v, "schedule.interval", micros.status().message());
        spec.interval_micros = *micros;
      }
      if (YAML::Node v = n["maxRuns"]) {
        SILT_ASSIGN_OR_RETURN(int64_t runs, Integer(v, "schedule.maxRuns"));
        if (runs < 1) return Error(v, "schedule.maxRuns", "must be at least 1");
        spec.max_runs = runs;
      }
    }
    if (!spec.optimize && !spec.vacuum) {
      return Error(root, "",
                   "a maintenance job with optimize: false and vacuum: false does nothing");
    }
    if (YAML::Node n = root["storage"]) {
      SILT_RETURN_NOT_OK(ParseStorage(n, &job));
    }
    job.maintenance = std::move(spec);
    return job;
  }

  Status ParseStorage(const YAML::Node& node, JobSpec* job) const {
    if (node.IsNull()) return Status::OK();
    if (!node.IsMap()) return Error(node, "storage", "expected a mapping");
    SILT_RETURN_NOT_OK(CheckKeys(node, "storage", {"s3"}));
    if (YAML::Node s3 = node["s3"]) {
      SILT_ASSIGN_OR_RETURN(auto entries, ScalarMap(s3, "storage.s3"));
      for (auto& [key, value] : entries) job->storage_s3[key] = value;
    }
    return Status::OK();
  }

  std::string source_;
};

// YAML says a mapping's keys are unique, but yaml-cpp keeps both entries of
// a repeated key and lookups find the first: a second `startingOffsets`
// further down would be silently ignored. Errors: InvalidArgument naming
// both lines and the key path.
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

}  // namespace

Result<JobSpec> ParseJobYaml(std::string_view yaml_text, std::string_view source_name) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    std::string where(source_name);
    if (!e.mark.is_null()) {
      where += ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1);
    }
    return Status::InvalidArgument(where, ": invalid YAML: ", e.msg);
  }
  // yaml-cpp reports type errors on node access by exception as well; the
  // parser checks node kinds first, so this only guards against surprises.
  try {
    SILT_RETURN_NOT_OK(CheckNoDuplicateKeys(root, "", source_name));
    return JobParser(source_name).Parse(root);
  } catch (const YAML::Exception& e) {
    std::string where(source_name);
    if (!e.mark.is_null()) where += ":" + std::to_string(e.mark.line + 1);
    return Status::InvalidArgument(where, ": ", e.msg);
  }
}

Result<JobSpec> LoadJobFile(const std::string& path) {
  SILT_ASSIGN_OR_RETURN(fs::FileSystemPtr fs, fs::FileSystemForPath(path));
  Result<std::string> text = fs->ReadFile(fs::NormalizePath(path));
  if (!text.ok()) return text.status().WithContextParts("cannot read job file '", path, "'");
  return ParseJobYaml(*text, path);
}

}  // namespace silt::stream
