// Typed access to source/sink option maps (Spark option names, looked up
// case-insensitively as Spark's CaseInsensitiveMap does), with errors that
// name the job-file key ("source.options.maxFilesPerTrigger: ...").
// Private to src/silt/stream/*.cc.
//
// Thread safety: plain functions over values.
#pragma once

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "silt/base/logging.h"
#include "silt/base/result.h"
#include "silt/base/strings.h"

namespace silt::stream::internal {

// "[a, b, c]", for error messages that list column names.
inline std::string BracketedList(const std::vector<std::string>& names) {
  std::string out = "[";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ", ";
    out += names[i];
  }
  return out + "]";
}

using silt::EqualsIgnoreCase;

class OptionReader {
 public:
  OptionReader(const std::map<std::string, std::string>& options, std::string key_path)
      : options_(options), key_path_(std::move(key_path)) {}

  // The job-file key of option `name` ("source.options.path").
  std::string KeyPath(std::string_view name) const { return key_path_ + "." + std::string(name); }

  std::optional<std::string> Get(std::string_view name) const {
    for (const auto& [key, value] : options_) {
      if (EqualsIgnoreCase(key, name)) return value;
    }
    return std::nullopt;
  }

  Result<std::optional<int64_t>> GetInt(std::string_view name, int64_t min_value) const {
    std::optional<std::string> text = Get(name);
    if (!text) return std::optional<int64_t>();
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(text->c_str(), &end, 10);
    if (text->empty() || end != text->c_str() + text->size() || errno != 0) {
      return Status::InvalidArgument(KeyPath(name), ": expected an integer, got '", *text, "'");
    }
    if (v < min_value) {
      return Status::InvalidArgument(KeyPath(name), ": must be at least ", min_value, ", got ", v);
    }
    return std::optional<int64_t>(v);
  }

  Result<std::optional<double>> GetDouble(std::string_view name) const {
    std::optional<std::string> text = Get(name);
    if (!text) return std::optional<double>();
    char* end = nullptr;
    double v = std::strtod(text->c_str(), &end);
    if (text->empty() || end != text->c_str() + text->size() || !std::isfinite(v)) {
      return Status::InvalidArgument(KeyPath(name), ": expected a number, got '", *text, "'");
    }
    return std::optional<double>(v);
  }

  Result<std::optional<bool>> GetBool(std::string_view name) const {
    std::optional<std::string> text = Get(name);
    if (!text) return std::optional<bool>();
    if (EqualsIgnoreCase(*text, "true")) return std::optional<bool>(true);
    if (EqualsIgnoreCase(*text, "false")) return std::optional<bool>(false);
    return Status::InvalidArgument(KeyPath(name), ": expected true or false, got '", *text, "'");
  }

  // Checks every option name against what `known` says of it, so that a
  // typo never passes silently (a misspelled `startingOffsets` would start
  // the query at `latest` and skip the backlog):
  //  - honoured options are read by the caller;
  //  - inert options (Spark options that do not change what silt reads or
  //    writes) are accepted and logged once, here;
  //  - unsupported options (Spark options that would change the data, which
  //    silt does not implement) are InvalidArgument (a job silt cannot run as
  //    written: exit code 2), unless set to Spark's
  //    default value, which is harmless;
  //  - any other name is InvalidArgument naming the closest known option.
  // Keys starting with a `pass_through` prefix (e.g. "kafka.") are skipped:
  // the caller hands them on. Names compare case-insensitively, as Spark's.
  struct KnownOptions {
    std::string_view what;  // "Kafka source", for messages
    std::initializer_list<std::string_view> honoured;
    std::initializer_list<std::string_view> inert = {};
    // {name, Spark's default value} ("" when no value is harmless).
    std::initializer_list<std::pair<std::string_view, std::string_view>> unsupported = {};
    std::initializer_list<std::string_view> pass_through = {};
  };
  Status CheckNames(const KnownOptions& known) const {
    for (const auto& [key, value] : options_) {
      if (IsKnown(key, known.honoured)) continue;
      bool passed = false;
      for (std::string_view prefix : known.pass_through) {
        passed = passed || StartsWithIgnoreCase(key, prefix);
      }
      if (passed) continue;
      if (IsKnown(key, known.inert)) {
        SILT_LOG_WARN("stream", KeyPath(key), ": Spark option without effect in silt; ignored");
        continue;
      }
      for (const auto& [name, default_value] : known.unsupported) {
        if (!EqualsIgnoreCase(name, key)) continue;
        if (!default_value.empty() && EqualsIgnoreCase(value, default_value)) break;
        return Status::InvalidArgument(
            KeyPath(key), ": the ", known.what, " option ", name, " is not supported by silt",
            default_value.empty() ? std::string()
                                  : " (only its default, " + std::string(default_value) + ")");
      }
      if (IsUnsupported(key, known.unsupported)) continue;
      std::vector<std::string_view> names(known.honoured);
      names.insert(names.end(), known.inert.begin(), known.inert.end());
      std::string_view closest = ClosestName(key, names);
      std::string hint =
          closest.empty() ? std::string() : "; did you mean " + std::string(closest) + "?";
      return Status::InvalidArgument(KeyPath(key), ": unknown option of the ", known.what, hint,
                                     " (known: ", JoinNames(known.honoured),
                                     known.pass_through.size() == 0
                                         ? std::string()
                                         : ", and " + JoinNames(known.pass_through) + "*",
                                     ")");
    }
    return Status::OK();
  }

 private:
  static bool IsKnown(std::string_view key, std::initializer_list<std::string_view> known) {
    for (std::string_view k : known) {
      if (EqualsIgnoreCase(k, key)) return true;
    }
    return false;
  }
  static bool IsUnsupported(
      std::string_view key,
      std::initializer_list<std::pair<std::string_view, std::string_view>> unsupported) {
    for (const auto& [name, default_value] : unsupported) {
      if (EqualsIgnoreCase(name, key)) return true;
    }
    return false;
  }
  static std::string JoinNames(std::initializer_list<std::string_view> names) {
    std::string out;
    for (std::string_view n : names) {
      if (!out.empty()) out += ", ";
      out += n;
    }
    return out;
  }

  const std::map<std::string, std::string>& options_;
  std::string key_path_;
};

}  // namespace silt::stream::internal
