#include "silt/json/dom_internal.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <system_error>

#include "silt/base/json_writer.h"
#include "silt/base/strings.h"

namespace silt::json::internal {

namespace dom = simdjson::dom;

namespace {

bool IsNumberChar(char c) {
  return IsAsciiDigit(c) || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

// JSON number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
bool IsJsonNumber(std::string_view tok, bool* is_integer) {
  size_t pos = 0;
  if (pos < tok.size() && tok[pos] == '-') ++pos;
  if (pos == tok.size() || !IsAsciiDigit(tok[pos])) return false;
  if (tok[pos] == '0') {
    ++pos;
  } else {
    while (pos < tok.size() && IsAsciiDigit(tok[pos])) ++pos;
  }
  *is_integer = true;
  if (pos < tok.size() && tok[pos] == '.') {
    *is_integer = false;
    ++pos;
    size_t begin = pos;
    while (pos < tok.size() && IsAsciiDigit(tok[pos])) ++pos;
    if (pos == begin) return false;
  }
  if (pos < tok.size() && (tok[pos] == 'e' || tok[pos] == 'E')) {
    *is_integer = false;
    ++pos;
    if (pos < tok.size() && (tok[pos] == '+' || tok[pos] == '-')) ++pos;
    size_t begin = pos;
    while (pos < tok.size() && IsAsciiDigit(tok[pos])) ++pos;
    if (pos == begin) return false;
  }
  return pos == tok.size();
}

bool FitsSimdjson(std::string_view tok, bool is_integer) {
  const char* first = tok.data();
  const char* last = tok.data() + tok.size();
  if (is_integer) {
    int64_t i64;
    if (std::from_chars(first, last, i64).ec == std::errc()) return true;
    uint64_t u64;
    return std::from_chars(first, last, u64).ec == std::errc();
  }
  double d;
  auto res = std::from_chars(first, last, d);
  return res.ec == std::errc() && std::isfinite(d);
}

// Copies `text` to *out with every valid JSON number token outside strings
// that simdjson cannot represent replaced by the marker string
// "\u0000#<token>". Returns how many tokens were replaced.
int64_t RewriteUnrepresentableNumbers(std::string_view text, std::string* out) {
  out->clear();
  int64_t rewritten = 0;
  bool in_string = false;
  size_t run_start = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    char c = text[pos];
    if (in_string) {
      if (c == '\\') {
        pos += 2;
        continue;
      }
      if (c == '"') in_string = false;
      ++pos;
      continue;
    }
    if (c == '"') {
      in_string = true;
      ++pos;
      continue;
    }
    if (c != '-' && !IsAsciiDigit(c)) {
      ++pos;
      continue;
    }
    size_t end = pos;
    while (end < text.size() && IsNumberChar(text[end])) ++end;
    std::string_view tok = text.substr(pos, end - pos);
    bool is_integer = false;
    if (IsJsonNumber(tok, &is_integer) && !FitsSimdjson(tok, is_integer)) {
      out->append(text.substr(run_start, pos - run_start));
      out->append("\"\\u0000#");
      out->append(tok);
      out->push_back('"');
      run_start = end;
      ++rewritten;
    }
    pos = end;
  }
  out->append(text.substr(run_start));
  return rewritten;
}

}  // namespace

const char* DomReader::Padded(std::string_view text) {
  size_t needed = text.size() + simdjson::SIMDJSON_PADDING;
  if (needed > padded_capacity_) {
    size_t capacity = padded_capacity_ < 4096 ? 4096 : padded_capacity_;
    while (capacity < needed) capacity *= 2;
    padded_ = std::make_unique<char[]>(capacity);  // zero-filled
    padded_capacity_ = capacity;
  }
  if (!text.empty()) std::memcpy(padded_.get(), text.data(), text.size());
  return padded_.get();
}

bool DomReader::Parse(std::string_view text, dom::element* root) {
  has_markers_ = false;
  const char* buf = Padded(text);
  if (parser_.parse(buf, text.size(), false).get(*root) == simdjson::SUCCESS) return true;
  // simdjson rejects numbers Jackson accepts; retry with those as markers.
  if (RewriteUnrepresentableNumbers(text, &rewritten_) == 0) return false;
  buf = Padded(rewritten_);
  if (parser_.parse(buf, rewritten_.size(), false).get(*root) != simdjson::SUCCESS) return false;
  has_markers_ = true;
  return true;
}

std::string_view StringOf(dom::element value) {
  std::string_view s;
  if (value.get_string().get(s) != simdjson::SUCCESS) return {};
  return s;
}

ValueKind KindOf(dom::element value, bool has_markers) {
  switch (value.type()) {
    case dom::element_type::ARRAY: return ValueKind::kArray;
    case dom::element_type::OBJECT: return ValueKind::kObject;
    case dom::element_type::INT64: return ValueKind::kInt64;
    case dom::element_type::UINT64: return ValueKind::kUint64;
    case dom::element_type::DOUBLE: return ValueKind::kDouble;
    case dom::element_type::BOOL: return ValueKind::kBool;
    case dom::element_type::NULL_VALUE: return ValueKind::kNull;
    case dom::element_type::STRING:
      if (has_markers) {
        std::string_view s = StringOf(value);
        if (s.size() > 2 && s[0] == '\0' && s[1] == '#') return ValueKind::kBigNumber;
      }
      return ValueKind::kString;
  }
  return ValueKind::kNull;
}

std::string_view BigNumberText(dom::element value) { return StringOf(value).substr(2); }

double TextToDouble(std::string_view text) {
  double d = 0;
  auto res = std::from_chars(text.data(), text.data() + text.size(), d);
  if (res.ec == std::errc()) return d;
  // Out of range: decide overflow vs underflow from the decimal magnitude.
  bool negative = !text.empty() && text[0] == '-';
  size_t pos = negative ? 1 : 0;
  int64_t magnitude = 0;  // position of the leading non-zero digit vs the point
  bool seen_nonzero = false;
  bool in_fraction = false;
  for (; pos < text.size() && text[pos] != 'e' && text[pos] != 'E'; ++pos) {
    if (text[pos] == '.') {
      in_fraction = true;
    } else if (!in_fraction) {
      if (seen_nonzero || text[pos] != '0') {
        seen_nonzero = true;
        ++magnitude;
      }
    } else if (!seen_nonzero) {
      if (text[pos] == '0') {
        --magnitude;
      } else {
        seen_nonzero = true;
      }
    }
  }
  int64_t exponent = 0;
  if (pos < text.size()) {
    std::string_view exp_text = text.substr(pos + 1);
    if (!exp_text.empty() && exp_text[0] == '+') exp_text.remove_prefix(1);
    auto exp_res = std::from_chars(exp_text.data(), exp_text.data() + exp_text.size(), exponent);
    if (exp_res.ec == std::errc::result_out_of_range) {
      exponent = exp_text[0] == '-' ? std::numeric_limits<int32_t>::min()
                                    : std::numeric_limits<int32_t>::max();
    }
  }
  double result = magnitude + exponent > 0 ? std::numeric_limits<double>::infinity() : 0.0;
  return negative ? -result : result;
}

void JsonGen::FieldName(std::string_view name) {
  if (stack_.back()++ > 0) out_->push_back(',');
  out_->push_back('"');
  AppendJsonEscaped(out_, name);
  out_->append("\":");
  after_name_ = true;
}

void JsonGen::String(std::string_view value) {
  BeforeValue();
  out_->push_back('"');
  AppendJsonEscaped(out_, value);
  out_->push_back('"');
}

void JsonGen::Int64(int64_t value) {
  BeforeValue();
  char buf[24];
  auto res = std::to_chars(buf, buf + sizeof(buf), value);
  out_->append(buf, res.ptr);
}

void JsonGen::Uint64(uint64_t value) {
  BeforeValue();
  char buf[24];
  auto res = std::to_chars(buf, buf + sizeof(buf), value);
  out_->append(buf, res.ptr);
}

void JsonGen::Double(double value) {
  if (!std::isfinite(value)) {
    String(FormatDoubleJava(value));
    return;
  }
  BeforeValue();
  double magnitude = std::fabs(value);
  if (magnitude >= 1e-3 && magnitude < 1e7) {
    // Java prints this range in plain notation with the shortest round-trip
    // digits, which is to_chars' shortest fixed form plus ".0" when integral.
    // This is the common case (sensor readings) and avoids FormatDoubleJava's
    // string building.
    char buf[64];
    auto res = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::fixed);
    out_->append(buf, res.ptr);
    if (std::find(buf, res.ptr, '.') == res.ptr) out_->append(".0");
    return;
  }
  out_->append(FormatDoubleJava(value));
}

void JsonGen::NumberText(std::string_view text) {
  bool is_integer = text.find_first_of(".eE") == std::string_view::npos;
  if (is_integer) {
    RawValue(text);
  } else {
    Double(TextToDouble(text));
  }
}

void CopyValue(dom::element value, bool has_markers, JsonGen* gen) {
  switch (KindOf(value, has_markers)) {
    case ValueKind::kNull: gen->Null(); return;
    case ValueKind::kBool: gen->Bool(value.get_bool().value_unsafe()); return;
    case ValueKind::kInt64: gen->Int64(value.get_int64().value_unsafe()); return;
    case ValueKind::kUint64: gen->Uint64(value.get_uint64().value_unsafe()); return;
    case ValueKind::kDouble: gen->Double(value.get_double().value_unsafe()); return;
    case ValueKind::kBigNumber: gen->NumberText(BigNumberText(value)); return;
    case ValueKind::kString: gen->String(StringOf(value)); return;
    case ValueKind::kArray: {
      gen->StartArray();
      // A named local: ranging over value_unsafe() of a temporary dangles.
      dom::array elements = value.get_array().value_unsafe();
      for (dom::element element : elements) {
        CopyValue(element, has_markers, gen);
      }
      gen->EndArray();
      return;
    }
    case ValueKind::kObject: {
      gen->StartObject();
      dom::object members = value.get_object().value_unsafe();
      for (dom::key_value_pair member : members) {
        gen->FieldName(member.key);
        CopyValue(member.value, has_markers, gen);
      }
      gen->EndObject();
      return;
    }
  }
}

}  // namespace silt::json::internal
