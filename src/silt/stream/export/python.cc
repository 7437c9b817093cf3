#include <cstdio>

#include "silt/stream/export/python_internal.h"

namespace silt::stream::pyspark {

std::string Py(std::string_view text) {
  std::string out = "\"";
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\x%02x", c);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  return out + "\"";
}

std::string PyArgs(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) {
    if (!out.empty()) out += ", ";
    out += Py(item);
  }
  return out;
}

std::string PyList(const std::vector<std::string>& items) { return "[" + PyArgs(items) + "]"; }

std::string PyDict(const std::vector<std::pair<std::string, std::string>>& entries) {
  std::string out = "{";
  for (const auto& [key, value] : entries) {
    if (out.size() > 1) out += ", ";
    out += Py(key) + ": " + Py(value);
  }
  return out + "}";
}

std::string Escaped(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\\' || c == '"') out += '\\';
    out += c;
  }
  return out;
}

std::vector<std::string> Wrap(const std::string& text, size_t width) {
  std::vector<std::string> lines;
  std::string line;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t space = text.find(' ', pos);
    std::string word =
        text.substr(pos, space == std::string::npos ? std::string::npos : space - pos);
    pos = space == std::string::npos ? text.size() : space + 1;
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      lines.push_back(line);
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

std::string SparkInterval(int64_t micros) {
  struct Unit {
    int64_t micros;
    const char* singular;
    const char* plural;
  };
  static constexpr Unit kUnits[] = {{3'600'000'000LL, "hour", "hours"},
                                    {60'000'000LL, "minute", "minutes"},
                                    {1'000'000LL, "second", "seconds"},
                                    {1'000LL, "millisecond", "milliseconds"},
                                    {1LL, "microsecond", "microseconds"}};
  if (micros == 0) return "0 seconds";
  for (const Unit& unit : kUnits) {
    if (micros % unit.micros == 0) {
      const int64_t n = micros / unit.micros;
      return std::to_string(n) + " " + (n == 1 ? unit.singular : unit.plural);
    }
  }
  return std::to_string(micros) + " microseconds";
}

}  // namespace silt::stream::pyspark
