#include "silt/base/json_writer.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace silt {

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!need_comma_.empty()) {
    if (need_comma_.back()) out_ += ',';
    need_comma_.back() = true;
  }
}

void JsonWriter::BeginObject() {
  BeforeValue();
  out_ += '{';
  need_comma_.push_back(false);
}

void JsonWriter::EndObject() {
  out_ += '}';
  need_comma_.pop_back();
}

void JsonWriter::BeginArray() {
  BeforeValue();
  out_ += '[';
  need_comma_.push_back(false);
}

void JsonWriter::EndArray() {
  out_ += ']';
  need_comma_.pop_back();
}

void JsonWriter::Key(std::string_view key) {
  BeforeValue();
  out_ += '"';
  AppendJsonEscaped(&out_, key);
  out_ += "\":";
  after_key_ = true;
}

void JsonWriter::String(std::string_view value) {
  BeforeValue();
  out_ += '"';
  AppendJsonEscaped(&out_, value);
  out_ += '"';
}

void JsonWriter::Int(int64_t value) {
  BeforeValue();
  char buf[24];
  auto res = std::to_chars(buf, buf + sizeof(buf), value);
  out_.append(buf, res.ptr);
}

void JsonWriter::UInt(uint64_t value) {
  BeforeValue();
  char buf[24];
  auto res = std::to_chars(buf, buf + sizeof(buf), value);
  out_.append(buf, res.ptr);
}

void JsonWriter::Double(double value) {
  if (std::isnan(value)) {
    String("NaN");
  } else if (std::isinf(value)) {
    String(value > 0 ? "Infinity" : "-Infinity");
  } else {
    BeforeValue();
    out_ += FormatDoubleJava(value);
  }
}

void JsonWriter::Bool(bool value) {
  BeforeValue();
  out_ += value ? "true" : "false";
}

void JsonWriter::Null() {
  BeforeValue();
  out_ += "null";
}

void JsonWriter::Raw(std::string_view json) {
  BeforeValue();
  out_.append(json);
}

void AppendJsonEscaped(std::string* out, std::string_view s) {
  static const char kHex[] = "0123456789ABCDEF";  // Jackson writes uppercase
  size_t run_start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out->append(s.data() + run_start, i - run_start);
    run_start = i + 1;
    switch (c) {
      case '"': *out += "\\\""; break;
      case '\\': *out += "\\\\"; break;
      case '\n': *out += "\\n"; break;
      case '\r': *out += "\\r"; break;
      case '\t': *out += "\\t"; break;
      case '\b': *out += "\\b"; break;
      case '\f': *out += "\\f"; break;
      default:
        *out += "\\u00";
        *out += kHex[c >> 4];
        *out += kHex[c & 0xF];
    }
  }
  out->append(s.data() + run_start, s.size() - run_start);
}

namespace {

// Java's Double.toString: plain notation with at least one fraction digit for
// 1e-3 <= |v| < 1e7, otherwise computerized scientific notation "d.dddE±n".
// Digits are the shortest that round-trip (std::to_chars), which matches
// Java 19+ and, for the values seen in practice, earlier JDKs.
template <typename T>
std::string FormatJava(T v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  std::string sci(buf, res.ptr);  // "d.ddde±XX"
  size_t e_pos = sci.find('e');
  std::string mantissa = sci.substr(0, e_pos);
  int exponent = std::atoi(sci.c_str() + e_pos + 1);
  bool negative = mantissa[0] == '-';
  if (negative) mantissa.erase(0, 1);
  std::string digits;
  for (char c : mantissa) {
    if (c != '.') digits += c;
  }
  std::string out = negative ? "-" : "";
  T abs = v < 0 ? -v : v;
  if (abs >= static_cast<T>(1e-3) && abs < static_cast<T>(1e7)) {
    if (exponent >= 0) {
      std::string int_part = digits.substr(0, std::min<size_t>(digits.size(), exponent + 1));
      while (static_cast<int>(int_part.size()) < exponent + 1) int_part += '0';
      std::string frac =
          digits.size() > static_cast<size_t>(exponent + 1) ? digits.substr(exponent + 1) : "0";
      out += int_part + "." + frac;
    } else {
      out += "0.";
      out.append(static_cast<size_t>(-exponent - 1), '0');
      out += digits;
    }
  } else {
    out += digits.substr(0, 1);
    out += '.';
    out += digits.size() > 1 ? digits.substr(1) : "0";
    out += 'E';
    out += std::to_string(exponent);
  }
  return out;
}

}  // namespace

std::string FormatDoubleJava(double v) { return FormatJava(v); }
std::string FormatFloatJava(float v) { return FormatJava(v); }

}  // namespace silt
