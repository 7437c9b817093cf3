#include "silt/json/dom_internal.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <system_error>

#include "silt/base/json_writer.h"
#include "silt/base/strings.h"

namespace silt::json::internal {

namespace dom = simdjson::dom;

namespace {}  // namespace

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

DomReader::DomReader(const JacksonFeatures& features) : lexer_(features) {
  // Documents nested deeper than simdjson takes here go to the Jackson path,
  // which applies Jackson's limit (1000) exactly; what it writes out is
  // never deeper than that, and a second parser takes it.
  constexpr size_t kStrictMaxDepth = 990;
  constexpr size_t kNormalizedMaxDepth = 1100;
  // On failure (out of memory) a parser allocates on first use instead.
  simdjson::error_code error = parser_.allocate(4096, kStrictMaxDepth);
  error = normalized_parser_.allocate(4096, kNormalizedMaxDepth);
  static_cast<void>(error);
}

ParseOutcome DomReader::Parse(std::string_view text, dom::element* root) {
  has_markers_ = false;
  lone_surrogates_ = false;
  jackson_input_ = {};
  const char* buf = Padded(text);
  if (parser_.parse(buf, text.size(), false).get(*root) == simdjson::SUCCESS) {
    return ParseOutcome::kValue;
  }
  jackson_input_ = SanitizeUtf8(text, &sanitized_) ? std::string_view(sanitized_) : text;
  try {
    const bool any = NormalizeFirstValue(&lexer_, jackson_input_, &normalized_, &has_markers_);
    lone_surrogates_ = lexer_.saw_lone_surrogates();
    if (!any) return ParseOutcome::kEmpty;
  } catch (const JacksonError&) {
    lone_surrogates_ = lexer_.saw_lone_surrogates();
    return ParseOutcome::kMalformed;
  }
  return ParseNormalized(normalized_, has_markers_, root) ? ParseOutcome::kValue
                                                          : ParseOutcome::kMalformed;
}

bool DomReader::ParseNormalized(std::string_view json, bool markers, dom::element* root) {
  has_markers_ = markers;
  const char* buf = Padded(json);
  return normalized_parser_.parse(buf, json.size(), false).get(*root) == simdjson::SUCCESS;
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

bool IsIntegerText(std::string_view text) {
  size_t pos = !text.empty() && text[0] == '-' ? 1 : 0;
  if (pos == text.size()) return false;
  for (; pos < text.size(); ++pos) {
    if (!IsAsciiDigit(text[pos])) return false;
  }
  return true;
}

double TextToDouble(std::string_view text) {
  if (text == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (text == "Infinity" || text == "+Infinity" || text == "+INF") {
    return std::numeric_limits<double>::infinity();
  }
  if (text == "-Infinity" || text == "-INF") return -std::numeric_limits<double>::infinity();
  double d = 0;
  auto res = std::from_chars(text.data(), text.data() + text.size(), d);
  if (res.ec == std::errc()) return d;
  // Out of range (overflow, underflow, or a subnormal result): strtod rounds
  // these as Java does (+-Infinity, +-0, the nearest subnormal).
  std::string copy(text);
  return std::strtod(copy.c_str(), nullptr);
}

void AppendJacksonEscaped(std::string* out, std::string_view s, bool lone_surrogates) {
  static const char kHex[] = "0123456789ABCDEF";
  const auto escape_unit = [out](uint32_t unit) {
    out->append("\\u");
    for (int shift = 12; shift >= 0; shift -= 4) out->push_back(kHex[(unit >> shift) & 0xF]);
  };
  size_t run = 0;
  for (size_t pos = 0; pos < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[pos]);
    if (c >= 0x20 && c != '"' && c != '\\' && c < 0xF0) {
      ++pos;
      continue;
    }
    out->append(s.substr(run, pos - run));
    if (c < 0xF0) {
      switch (c) {
        case '"': out->append("\\\""); break;
        case '\\': out->append("\\\\"); break;
        case '\b': out->append("\\b"); break;
        case '\t': out->append("\\t"); break;
        case '\n': out->append("\\n"); break;
        case '\f': out->append("\\f"); break;
        case '\r': out->append("\\r"); break;
        default: escape_unit(c);
      }
      ++pos;
    } else {
      // Outside the BMP (valid UTF-8: four bytes): a surrogate pair.
      uint32_t unit = 0;
      if (lone_surrogates && StandInAt(s, pos, &unit) != 0) {
        escape_unit(unit);
      } else {
        const uint32_t cp = ((c & 0x07u) << 18) |
                            ((static_cast<unsigned char>(s[pos + 1]) & 0x3Fu) << 12) |
                            ((static_cast<unsigned char>(s[pos + 2]) & 0x3Fu) << 6) |
                            (static_cast<unsigned char>(s[pos + 3]) & 0x3Fu);
        escape_unit(0xD800 + ((cp - 0x10000) >> 10));
        escape_unit(0xDC00 + ((cp - 0x10000) & 0x3FF));
      }
      pos += 4;
    }
    run = pos;
  }
  out->append(s.substr(run));
}

void JsonGen::FieldName(std::string_view name) {
  if (stack_.back()++ > 0) out_->push_back(',');
  out_->push_back('"');
  AppendJacksonEscaped(out_, name, lone_surrogates_);
  out_->append("\":");
  after_name_ = true;
}

void JsonGen::String(std::string_view value) {
  BeforeValue();
  out_->push_back('"');
  AppendJacksonEscaped(out_, value, lone_surrogates_);
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
  if (IsIntegerText(text)) {
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
