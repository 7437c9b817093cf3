// The job file's value syntax (job.h): ${ENV} expansion, byte sizes and
// durations.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>

#include "silt/base/strings.h"
#include "silt/stream/job.h"

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

}  // namespace silt::stream
