#include "silt/base/json_writer.h"

#include <charconv>
#include <cmath>

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
    AppendDoubleJava(&out_, value);
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

}  // namespace silt
