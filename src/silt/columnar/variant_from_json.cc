// JSON text to a variant (variant.h), as Spark's parse_json.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "silt/base/utf8.h"
#include "silt/columnar/variant.h"

namespace silt::columnar {

namespace {

constexpr int kMaxDecimalPrecision = 38;
// Nesting Spark's JSON parser (Jackson's StreamReadConstraints) accepts.
constexpr int kMaxJsonDepth = 1000;
// Jackson's limit on a number's length.
constexpr size_t kMaxNumberLength = 1000;

}  // namespace

// JSON -> variant, following Jackson's strict parser as Spark configures it.

class JsonVariantParser {
 public:
  JsonVariantParser(std::string_view text, bool allow_duplicate_keys, VariantBuilder* builder,
                    JsonToVariantError* error)
      : text_(text), allow_dup_(allow_duplicate_keys), b_(builder), error_(error) {}

  bool Run() {
    SkipSpace();
    if (pos_ >= text_.size()) return Fail("no JSON value (empty input)");
    const char c = text_[pos_];
    if (!Value(0)) return false;
    // Jackson reads no further after a root value, except that a number or
    // literal must be followed by whitespace / a delimiter.
    if (c == '-' || (c >= '0' && c <= '9')) {
      if (pos_ < text_.size() && !IsSpace(text_[pos_])) {
        return Fail("expected space separating root-level values");
      }
    }
    return true;
  }

 private:
  static bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

  void SkipSpace() {
    while (pos_ < text_.size() && IsSpace(text_[pos_])) ++pos_;
  }

  bool Fail(std::string_view what) {
    error_->kind = JsonToVariantError::Kind::kMalformed;
    error_->message = Status::Concat(what, " at offset ", pos_);
    return false;
  }

  bool Value(int depth) {
    if (pos_ >= text_.size()) return Fail("unexpected end of input");
    const char c = text_[pos_];
    switch (c) {
      case '{': return Object(depth + 1);
      case '[': return Array(depth + 1);
      case '"': {
        ++pos_;
        if (!String(&scratch_)) return false;
        b_->AppendString(scratch_);
        return true;
      }
      case 't': return Literal("true", [this] { b_->AppendBoolean(true); });
      case 'f': return Literal("false", [this] { b_->AppendBoolean(false); });
      case 'n': return Literal("null", [this] { b_->AppendNull(); });
      default:
        if (c == '-' || (c >= '0' && c <= '9')) return Number();
        return Fail("unexpected character");
    }
  }

  template <typename Append>
  bool Literal(std::string_view word, Append append) {
    if (text_.substr(pos_, word.size()) != word) return Fail("unrecognized token");
    pos_ += word.size();
    if (pos_ < text_.size()) {
      // Jackson's _matchToken: a following identifier character makes the
      // token unrecognized ("truex", "null1").
      const unsigned char next = static_cast<unsigned char>(text_[pos_]);
      const bool ident = next >= 0x80 || (next >= '0' && next <= '9') ||
                         (next >= 'a' && next <= 'z') || (next >= 'A' && next <= 'Z') ||
                         next == '_' || next == '$';
      if (ident) return Fail("unrecognized token");
    }
    append();
    return true;
  }

  bool Object(int depth) {
    if (depth > kMaxJsonDepth) return Fail("document nesting depth exceeds the maximum (1000)");
    ++pos_;
    if (stack_.size() < static_cast<size_t>(depth)) stack_.resize(static_cast<size_t>(depth));
    std::vector<VariantBuilder::FieldEntry>& fields = Fields(depth);
    fields.clear();
    const size_t start = b_->position();
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == '}') {
      ++pos_;
      return FinishObject(depth, start);
    }
    while (true) {
      SkipSpace();
      if (pos_ >= text_.size()) return Fail("unexpected end of input in an object");
      if (text_[pos_] != '"') return Fail("expected a double-quoted field name");
      ++pos_;
      if (!String(&scratch_)) return false;
      const uint32_t id = b_->AddKey(scratch_);
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != ':')
        return Fail("expected ':' after a field name");
      ++pos_;
      SkipSpace();
      Fields(depth).push_back(
          VariantBuilder::FieldEntry{id, static_cast<uint32_t>(b_->position() - start)});
      if (!Value(depth)) return false;
      SkipSpace();
      if (pos_ >= text_.size()) return Fail("unexpected end of input in an object");
      if (text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (text_[pos_] == '}') {
        ++pos_;
        return FinishObject(depth, start);
      }
      return Fail("expected ',' or '}' in an object");
    }
  }

  bool FinishObject(int depth, size_t start) {
    Status st = b_->FinishObject(start, &Fields(depth), allow_dup_);
    if (!st.ok()) {
      error_->kind = JsonToVariantError::Kind::kDuplicateKey;
      error_->message = st.message();
      return false;
    }
    return CheckSize();
  }

  bool Array(int depth) {
    if (depth > kMaxJsonDepth) return Fail("document nesting depth exceeds the maximum (1000)");
    ++pos_;
    Offsets(depth).clear();
    const size_t start = b_->position();
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == ']') {
      ++pos_;
      b_->FinishArray(start, Offsets(depth));
      return CheckSize();
    }
    while (true) {
      SkipSpace();
      Offsets(depth).push_back(static_cast<uint32_t>(b_->position() - start));
      if (!Value(depth)) return false;
      SkipSpace();
      if (pos_ >= text_.size()) return Fail("unexpected end of input in an array");
      if (text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (text_[pos_] == ']') {
        ++pos_;
        b_->FinishArray(start, Offsets(depth));
        return CheckSize();
      }
      return Fail("expected ',' or ']' in an array");
    }
  }

  bool CheckSize() {
    if (static_cast<int64_t>(b_->value_size()) > kVariantSizeLimit) {
      error_->kind = JsonToVariantError::Kind::kSizeLimit;
      error_->message = Status::Concat("[VARIANT_SIZE_LIMIT] Cannot build variant bigger than ",
                                       kVariantSizeLimit, " bytes");
      return false;
    }
    return true;
  }

  std::vector<VariantBuilder::FieldEntry>& Fields(int depth) {
    if (stack_.size() < static_cast<size_t>(depth)) stack_.resize(static_cast<size_t>(depth));
    return stack_[static_cast<size_t>(depth) - 1];
  }
  std::vector<uint32_t>& Offsets(int depth) {
    if (offsets_.size() < static_cast<size_t>(depth)) offsets_.resize(static_cast<size_t>(depth));
    return offsets_[static_cast<size_t>(depth) - 1];
  }

  static int Hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  bool Hex4(uint32_t* out) {
    if (text_.size() - pos_ < 4) return Fail("unexpected end of input in a \\u escape");
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      const int h = Hex(text_[pos_ + static_cast<size_t>(i)]);
      if (h < 0) return Fail("expected a hex digit in a \\u escape");
      v = (v << 4) | static_cast<uint32_t>(h);
    }
    pos_ += 4;
    *out = v;
    return true;
  }

  // After the opening quote; leaves pos_ after the closing one.
  bool String(std::string* out) {
    out->clear();
    size_t run = pos_;
    while (true) {
      if (pos_ >= text_.size()) return Fail("unexpected end of input in a string");
      const unsigned char c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"') {
        out->append(text_.substr(run, pos_ - run));
        ++pos_;
        return true;
      }
      if (c < 0x20) return Fail("illegal unquoted control character in a string");
      if (c != '\\') {
        ++pos_;
        continue;
      }
      out->append(text_.substr(run, pos_ - run));
      ++pos_;
      if (pos_ >= text_.size()) return Fail("unexpected end of input in an escape");
      const char e = text_[pos_++];
      switch (e) {
        case '"': out->push_back('"'); break;
        case '\\': out->push_back('\\'); break;
        case '/': out->push_back('/'); break;
        case 'b': out->push_back('\b'); break;
        case 'f': out->push_back('\f'); break;
        case 'n': out->push_back('\n'); break;
        case 'r': out->push_back('\r'); break;
        case 't': out->push_back('\t'); break;
        case 'u': {
          uint32_t cp = 0;
          if (!Hex4(&cp)) return false;
          if (cp >= 0xD800 && cp <= 0xDBFF && text_.size() - pos_ >= 6 && text_[pos_] == '\\' &&
              text_[pos_ + 1] == 'u') {
            const size_t save = pos_;
            pos_ += 2;
            uint32_t low = 0;
            if (!Hex4(&low)) return false;
            if (low >= 0xDC00 && low <= 0xDFFF) {
              AppendUtf8(0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00), out);
              break;
            }
            pos_ = save;
          }
          // Spark 4 validates the text: a lone surrogate is malformed.
          if (cp >= 0xD800 && cp <= 0xDFFF) return Fail("invalid Unicode (a lone surrogate)");
          AppendUtf8(cp, out);
          break;
        }
        default: return Fail("unrecognized character escape");
      }
      run = pos_;
    }
  }

  bool Number() {
    const size_t start = pos_;
    bool negative = false;
    if (text_[pos_] == '-') {
      negative = true;
      ++pos_;
    }
    const size_t int_start = pos_;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
    const size_t int_digits = pos_ - int_start;
    if (int_digits == 0) return Fail("expected a digit after '-'");
    if (int_digits > 1 && text_[int_start] == '0') return Fail("leading zeroes not allowed");
    bool is_float = false;
    bool has_exponent = false;
    if (pos_ < text_.size() && text_[pos_] == '.') {
      is_float = true;
      ++pos_;
      const size_t frac_start = pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
      if (pos_ == frac_start) return Fail("decimal point not followed by a digit");
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      is_float = true;
      has_exponent = true;
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      const size_t exp_start = pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
      if (pos_ == exp_start) return Fail("exponent indicator not followed by a digit");
    }
    const std::string_view number = text_.substr(start, pos_ - start);
    if (number.size() > kMaxNumberLength) return Fail("number longer than 1000 characters");
    if (!is_float && int_digits <= 18) {
      int64_t v = 0;
      for (size_t i = int_start; i < pos_; ++i) v = v * 10 + (text_[i] - '0');
      b_->AppendLong(negative ? -v : v);
      return true;
    }
    if (!is_float && int_digits == 19) {
      // Fits a long unless above 9223372036854775807 (…808 when negative).
      unsigned __int128 v = 0;
      for (size_t i = int_start; i < pos_; ++i) v = v * 10 + static_cast<unsigned>(text_[i] - '0');
      const unsigned __int128 limit =
          static_cast<unsigned __int128>(INT64_MAX) + (negative ? 1 : 0);
      if (v <= limit) {
        b_->AppendLong(negative ? static_cast<int64_t>(-static_cast<__int128>(v))
                                : static_cast<int64_t>(v));
        return true;
      }
    }
    if (!has_exponent) {
      // Spark's tryParseDecimal: digits with an optional point, as a
      // BigDecimal, when precision and scale are at most 38.
      int scale = 0;
      unsigned __int128 unscaled = 0;
      int digits = 0;  // significant digits (precision) so far
      bool fraction = false;
      bool overflow = false;
      for (size_t i = int_start; i < pos_; ++i) {
        const char c = text_[i];
        if (c == '.') {
          fraction = true;
          continue;
        }
        if (fraction) ++scale;
        if (digits > 0 || c != '0') ++digits;
        if (digits > kMaxDecimalPrecision) {
          overflow = true;
          continue;
        }
        unscaled = unscaled * 10 + static_cast<unsigned>(c - '0');
      }
      if (!overflow && scale <= kMaxDecimalPrecision) {
        const __int128 value = static_cast<__int128>(unscaled);
        b_->AppendDecimal(negative ? -value : value, scale);
        return true;
      }
    }
    // Double.parseDouble: correctly rounded; overflow gives Infinity.
    char buf[kMaxNumberLength + 1];
    std::memcpy(buf, number.data(), number.size());
    buf[number.size()] = '\0';
    const double d = std::strtod(buf, nullptr);
    b_->AppendDouble(d);
    return true;
  }

  std::string_view text_;
  size_t pos_ = 0;
  bool allow_dup_;
  VariantBuilder* b_;
  JsonToVariantError* error_;
  std::string scratch_;
  std::vector<std::vector<VariantBuilder::FieldEntry>> stack_;
  std::vector<std::vector<uint32_t>> offsets_;
};

bool JsonToVariant(std::string_view json, bool allow_duplicate_keys, VariantBuilder* builder,
                   JsonToVariantError* error) {
  builder->Reset();
  // Spark hands Jackson a Java string: ill-formed UTF-8 reads as U+FFFD.
  std::string repaired;
  if (!IsValidUtf8(json)) {
    repaired = ReplaceInvalidUtf8(json);
    json = repaired;
  }
  JsonVariantParser parser(json, allow_duplicate_keys, builder, error);
  return parser.Run();
}

}  // namespace silt::columnar
