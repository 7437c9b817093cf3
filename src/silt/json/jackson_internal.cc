#include "silt/json/jackson_internal.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <system_error>

#include "silt/base/json_writer.h"
#include "silt/base/strings.h"
#include "silt/base/utf8.h"

namespace silt::json::internal {

namespace {

constexpr uint32_t kReplacement = 0xFFFD;

bool IsLetter(uint32_t c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Length of the valid UTF-8 sequence at text[pos], or 0 with *bad set to the
// number of bytes Java's UTF-8 decoder replaces with one U+FFFD there
// (sun.nio.cs.UTF_8: a surrogate's encoding is one malformed unit of 3 bytes;
// a sequence cut short by the end of input is one unit).
size_t ValidSequence(std::string_view text, size_t pos, size_t* bad) {
  const size_t remaining = text.size() - pos;
  const auto at = [&](size_t i) { return static_cast<unsigned char>(text[pos + i]); };
  const auto cont = [](unsigned char c) { return (c & 0xC0) == 0x80; };
  const unsigned char b1 = at(0);
  if (b1 < 0x80) return 1;
  *bad = 1;
  if (b1 >= 0xC2 && b1 <= 0xDF) {
    if (remaining < 2) return 0;
    return cont(at(1)) ? 2 : 0;
  }
  if (b1 >= 0xE0 && b1 <= 0xEF) {
    const auto malformed_2 = [&](unsigned char b2) {
      return (b1 == 0xE0 && (b2 & 0xE0) == 0x80) || !cont(b2);
    };
    if (remaining < 3) {
      if (remaining > 1 && malformed_2(at(1))) return 0;
      *bad = remaining;
      return 0;
    }
    const unsigned char b2 = at(1);
    if (malformed_2(b2)) return 0;
    if (!cont(at(2))) {
      *bad = 2;
      return 0;
    }
    if (b1 == 0xED && b2 >= 0xA0) {  // a surrogate
      *bad = 3;
      return 0;
    }
    return 3;
  }
  if (b1 >= 0xF0 && b1 <= 0xF7) {
    const auto malformed_2 = [&](unsigned char b2) {
      return b1 > 0xF4 || (b1 == 0xF0 && (b2 < 0x90 || b2 > 0xBF)) ||
             (b1 == 0xF4 && (b2 & 0xF0) != 0x80) || !cont(b2);
    };
    if (remaining < 4) {
      if (b1 > 0xF4 || (remaining > 1 && malformed_2(at(1)))) return 0;
      if (remaining > 2 && !cont(at(2))) {
        *bad = 2;
        return 0;
      }
      *bad = remaining;
      return 0;
    }
    if (malformed_2(at(1))) return 0;
    if (!cont(at(2))) {
      *bad = 2;
      return 0;
    }
    if (!cont(at(3))) {
      *bad = 3;
      return 0;
    }
    return 4;
  }
  return 0;
}

// Character.isJavaIdentifierPart for the Latin-1 range, and an approximation
// above it (letters and marks are; spaces, punctuation and symbols of the
// General Punctuation block, U+FFFD and surrogates are not).
bool IsJavaIdentifierPart(uint32_t cp) {
  // Java sees a character outside the BMP as a surrogate pair; its first
  // unit is not an identifier character.
  if (cp > 0xFFFF) return false;
  if (cp < 0x80) {
    return IsLetter(cp) || IsAsciiDigit(static_cast<char>(cp)) || cp == '$' || cp == '_' ||
           cp <= 0x08 || (cp >= 0x0E && cp <= 0x1B) || cp == 0x7F;
  }
  if (cp <= 0x9F) return true;  // identifier-ignorable controls
  if (cp <= 0xFF) {
    return (cp >= 0xA2 && cp <= 0xA5) || cp == 0xAA || cp == 0xAD || cp == 0xB5 || cp == 0xBA ||
           (cp >= 0xC0 && cp != 0xD7 && cp != 0xF7);
  }
  if (cp >= 0x2000 && cp <= 0x206F) return cp >= 0x200B && cp <= 0x200F;
  if (cp == kReplacement || cp == 0x3000 || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
  return true;
}

bool IsJavaIdentifierStart(uint32_t cp) {
  if (cp < 0x80) return IsLetter(cp) || cp == '$' || cp == '_';
  if (cp <= 0xFF) {
    return (cp >= 0xA2 && cp <= 0xA5) || cp == 0xAA || cp == 0xB5 || cp == 0xBA ||
           (cp >= 0xC0 && cp != 0xD7 && cp != 0xF7);
  }
  if (cp >= 0x2000 && cp <= 0x206F) return false;
  return IsJavaIdentifierPart(cp);
}

// CharTypes.getInputCodeLatin1JsNames: the characters of an unquoted name.
bool IsUnquotedNameChar(uint32_t cp) {
  if (cp < 256) {
    if (cp == '@' || cp == '#' || cp == '*' || cp == '-' || cp == '+') return true;
    return cp >= 33 && IsJavaIdentifierPart(cp);
  }
  return IsJavaIdentifierPart(cp);
}

int HexDigit(uint32_t c) {
  if (c >= '0' && c <= '9') return static_cast<int>(c - '0');
  if (c >= 'a' && c <= 'f') return static_cast<int>(c - 'a' + 10);
  if (c >= 'A' && c <= 'F') return static_cast<int>(c - 'A' + 10);
  return -1;
}

// Appends UTF-16 code units as UTF-8, pairing surrogates; an unpaired one
// becomes its stand-in (kStandInBase + unit - 0xD800).
class Utf16Sink {
 public:
  Utf16Sink(std::string* out, bool* lone) : out_(out), lone_(lone) {}
  void Unit(uint32_t unit) {
    if (unit >= 0xD800 && unit <= 0xDBFF) {
      Flush();
      high_ = unit;
      return;
    }
    if (unit >= 0xDC00 && unit <= 0xDFFF) {
      if (high_ != 0) {
        AppendUtf8(0x10000 + ((high_ - 0xD800) << 10) + (unit - 0xDC00), out_);
        high_ = 0;
      } else {
        StandIn(unit);
      }
      return;
    }
    Flush();
    AppendUtf8(unit, out_);
  }
  // A literal character of the input (any code point).
  void Bytes(std::string_view utf8) {
    Flush();
    out_->append(utf8);
  }
  void Flush() {
    if (high_ != 0) {
      StandIn(high_);
      high_ = 0;
    }
  }

 private:
  void StandIn(uint32_t unit) {
    AppendUtf8(kStandInBase + (unit - 0xD800), out_);
    *lone_ = true;
  }

  std::string* out_;
  bool* lone_;
  uint32_t high_ = 0;
};

int64_t SignificantDigits(std::string_view text) {
  int64_t digits = 0;
  bool leading = true;
  for (char c : text) {
    if (c == 'e' || c == 'E') break;
    if (!IsAsciiDigit(c)) continue;
    if (leading && c == '0') continue;
    leading = false;
    ++digits;
  }
  return digits;
}

// Whether simdjson reads this Jackson number text to the same value Jackson
// gives each of its accessors (else it is written as a marker).
bool SimdjsonHoldsExactly(std::string_view text, bool is_int) {
  const char* first = text.data();
  const char* last = first + text.size();
  if (is_int) {
    int64_t i64;
    if (std::from_chars(first, last, i64).ec == std::errc()) return true;
    uint64_t u64;
    return std::from_chars(first, last, u64).ec == std::errc();
  }
  if (SignificantDigits(text) > 15) return false;
  double d;
  auto res = std::from_chars(first, last, d);
  return res.ec == std::errc() && std::isfinite(d) && (d != 0 || SignificantDigits(text) == 0);
}

}  // namespace

void AppendWithoutStandIns(std::string_view text, std::string* out) {
  size_t run = 0;
  for (size_t pos = 0; pos < text.size();) {
    uint32_t unit = 0;
    size_t length = StandInAt(text, pos, &unit);
    if (length == 0) {
      ++pos;
      continue;
    }
    out->append(text.substr(run, pos - run));
    out->push_back('?');
    pos += length;
    run = pos;
  }
  out->append(text.substr(run));
}

size_t StandInAt(std::string_view text, size_t pos, uint32_t* unit) {
  // U+F0000..U+F07FF is F3 B0 80 80 .. F3 B0 9F BF.
  if (pos + 3 >= text.size() || static_cast<unsigned char>(text[pos]) != 0xF3 ||
      static_cast<unsigned char>(text[pos + 1]) != 0xB0 ||
      (static_cast<unsigned char>(text[pos + 2]) & 0xE0) != 0x80) {
    return 0;
  }
  *unit = 0xD800 + ((static_cast<uint32_t>(static_cast<unsigned char>(text[pos + 2]) & 0x1F) << 6) |
                    (static_cast<uint32_t>(static_cast<unsigned char>(text[pos + 3])) & 0x3F));
  return 4;
}

bool SanitizeUtf8(std::string_view text, std::string* out) {
  size_t pos = 0;
  // Fast scan: nothing to do for valid text.
  while (pos < text.size()) {
    size_t bad = 0;
    size_t len = ValidSequence(text, pos, &bad);
    if (len == 0) break;
    pos += len;
  }
  if (pos == text.size()) return false;
  out->assign(text.substr(0, pos));
  while (pos < text.size()) {
    size_t bad = 0;
    size_t len = ValidSequence(text, pos, &bad);
    if (len == 0) {
      AppendUtf8(kReplacement, out);
      pos += bad;
    } else {
      out->append(text.substr(pos, len));
      pos += len;
    }
  }
  return true;
}

void JacksonLexer::Reset(std::string_view text) {
  text_ = text;
  pos_ = 0;
  token_start_ = 0;
  current_ = JToken::kNone;
  next_ = JToken::kNone;
  string_pending_ = false;
  contexts_.clear();
  contexts_.push_back(Context{Ctx::kRoot});
  is_non_numeric_ = false;
  lone_surrogates_ = false;
}

uint32_t JacksonLexer::CodePointAt(size_t pos, size_t* length) const {
  const unsigned char c0 = static_cast<unsigned char>(text_[pos]);
  if (c0 < 0x80) {
    *length = 1;
    return c0;
  }
  // Valid UTF-8 (sanitized input).
  if (c0 < 0xE0) {
    *length = 2;
    return ((c0 & 0x1Fu) << 6) | (static_cast<unsigned char>(text_[pos + 1]) & 0x3Fu);
  }
  if (c0 < 0xF0) {
    *length = 3;
    return ((c0 & 0x0Fu) << 12) | ((static_cast<unsigned char>(text_[pos + 1]) & 0x3Fu) << 6) |
           (static_cast<unsigned char>(text_[pos + 2]) & 0x3Fu);
  }
  *length = 4;
  return ((c0 & 0x07u) << 18) | ((static_cast<unsigned char>(text_[pos + 1]) & 0x3Fu) << 12) |
         ((static_cast<unsigned char>(text_[pos + 2]) & 0x3Fu) << 6) |
         (static_cast<unsigned char>(text_[pos + 3]) & 0x3Fu);
}

void JacksonLexer::PushContext(Ctx type) {
  contexts_.push_back(Context{type});
  if (depth() > features_.max_nesting_depth) Fail("nesting depth exceeds the maximum");
}

void JacksonLexer::CloseScope(int c) {
  const Ctx want = c == ']' ? Ctx::kArray : Ctx::kObject;
  token_start_ = char_start_;
  if (contexts_.back().type != want) Fail("mismatched end marker");
  contexts_.pop_back();
  current_ = c == ']' ? JToken::kEndArray : JToken::kEndObject;
}

void JacksonLexer::InvalidSpace(int c) {
  if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
    Fail("illegal character: only regular white space is allowed between tokens");
  }
}

void JacksonLexer::SkipLine() {
  while (pos_ < text_.size()) {
    const int c = static_cast<unsigned char>(text_[pos_++]);
    if (c < 0x20) {
      if (c == '\n') return;
      if (c == '\r') {
        if (Peek() == '\n') ++pos_;
        return;
      }
      if (c != '\t') InvalidSpace(c);
    }
  }
}

void JacksonLexer::SkipCComment() {
  while (pos_ < text_.size()) {
    const int c = static_cast<unsigned char>(text_[pos_++]);
    if (c == '*') {
      if (pos_ >= text_.size()) break;
      if (text_[pos_] == '/') {
        ++pos_;
        return;
      }
      continue;
    }
    if (c < 0x20 && c != '\n' && c != '\r' && c != '\t') InvalidSpace(c);
  }
  Fail("unexpected end of input in a comment");
}

void JacksonLexer::SkipComment() {
  if (!features_.allow_comments) Fail("unexpected character '/' (comments are not enabled)");
  if (pos_ >= text_.size()) Fail("unexpected end of input in a comment");
  const char c = text_[pos_++];
  if (c == '/') {
    SkipLine();
  } else if (c == '*') {
    SkipCComment();
  } else {
    Fail("unexpected character: was expecting either '*' or '/' for a comment");
  }
}

int JacksonLexer::SkipWsOrEnd() {
  while (pos_ < text_.size()) {
    char_start_ = pos_;
    const int c = static_cast<unsigned char>(text_[pos_++]);
    if (c > 0x20) {
      if (c == '/') {
        SkipComment();
        continue;
      }
      if (c < 0x80) return c;
      size_t length = 0;
      const uint32_t cp = CodePointAt(char_start_, &length);
      pos_ = char_start_ + length;
      return static_cast<int>(cp);
    }
    if (c != ' ') InvalidSpace(c);
  }
  return -1;
}

int JacksonLexer::SkipWsInValue() {
  const int c = SkipWsOrEnd();
  if (c < 0) Fail("unexpected end of input within/between entries");
  return c;
}

int JacksonLexer::SkipComma(int c) {
  if (c != ',') Fail("unexpected character: was expecting comma to separate entries");
  return SkipWsInValue();
}

int JacksonLexer::SkipColon() {
  if (SkipWsInValue() != ':') {
    Fail("unexpected character: was expecting a colon to separate field name and value");
  }
  return SkipWsInValue();
}

void JacksonLexer::ReportInvalidToken(size_t matched) {
  // Jackson reads on over what looks like the rest of the token (Java
  // identifier characters, at most 256 in all) before it fails.
  while (pos_ < text_.size() && matched < 256) {
    size_t length = 0;
    const uint32_t cp = CodePointAt(pos_, &length);
    if (!IsJavaIdentifierPart(cp)) {
      // The byte parser consumes the character that ends the token too.
      if (features_.byte_parser) pos_ += length;
      break;
    }
    pos_ += length;
    ++matched;
  }
  Fail("unrecognized token");
}

void JacksonLexer::MatchToken(std::string_view word, size_t matched) {
  for (size_t i = matched; i < word.size(); ++i) {
    if (pos_ >= text_.size() || text_[pos_] != word[i]) ReportInvalidToken(i);
    ++pos_;
  }
  if (pos_ >= text_.size()) return;
  const unsigned char c = static_cast<unsigned char>(text_[pos_]);
  if (c >= '0' && c != ']' && c != '}') {
    size_t length = 0;
    if (IsJavaIdentifierPart(CodePointAt(pos_, &length))) ReportInvalidToken(word.size());
  }
}

JToken JacksonLexer::NonNumeric(std::string_view token, double value) {
  number_text_.assign(token);
  non_numeric_ = value;
  is_non_numeric_ = true;
  return JToken::kFloat;
}

bool JacksonLexer::IsNonNumeric(double* value) const {
  if (!is_non_numeric_) return false;
  *value = non_numeric_;
  return true;
}

void JacksonLexer::VerifyRootSpace(int c) {
  // The separator after a root-level number: white space (consumed, except
  // CR) or the end.
  if (c == ' ' || c == '\t' || c == '\n') {
    ++pos_;
    return;
  }
  if (c == '\r') return;
  Fail("expected space separating root-level values");
}

JToken JacksonLexer::HandleInvalidNumberStart(int c, bool negative, bool has_sign) {
  if (c == 'I') {
    if (pos_ >= text_.size()) Fail("unexpected end of input in a number");
    const char next = text_[pos_++];
    std::string_view match;
    if (next == 'N') {
      match = negative ? "-INF" : "+INF";
    } else if (next == 'n') {
      match = negative ? "-Infinity" : "+Infinity";
    }
    if (!match.empty()) {
      MatchToken(match, 3);
      if (!features_.allow_non_numeric_numbers) Fail("non-standard token (NaN/Infinity)");
      return NonNumeric(match, negative ? -std::numeric_limits<double>::infinity()
                                        : std::numeric_limits<double>::infinity());
    }
  }
  if (has_sign && !negative) Fail("JSON does not allow numbers to have plus signs");
  Fail("expected digit (0-9) for a valid numeric value");
}

JToken JacksonLexer::ParseNumber(bool negative) {
  is_non_numeric_ = false;
  number_text_.clear();
  if (negative) {
    number_text_.push_back('-');
    if (pos_ >= text_.size()) Fail("unexpected end of input: no digit following minus sign");
    const int c = static_cast<unsigned char>(text_[pos_]);
    if (!IsAsciiDigit(static_cast<char>(c))) {
      ++pos_;
      if (c == '.') return HandleOddValue('.');
      return HandleInvalidNumberStart(c, true, true);
    }
  }
  // The integer part (pos_ is at its first digit). Jackson reads a number
  // that starts with 0 on its slower path, which counts an absent fraction
  // or exponent as length -1 in the number-length limit.
  int64_t int_len = 0;
  const int64_t absent = text_[pos_] == '0' && !features_.byte_parser ? -1 : 0;
  if (text_[pos_] == '0') {
    ++pos_;
    if (pos_ < text_.size() && IsAsciiDigit(text_[pos_])) {
      if (!features_.allow_leading_zeros) Fail("leading zeroes not allowed");
      while (pos_ < text_.size() && text_[pos_] == '0') ++pos_;
      if (pos_ >= text_.size() || !IsAsciiDigit(text_[pos_])) {
        number_text_.push_back('0');
        int_len = 1;
      }
    } else {
      number_text_.push_back('0');
      int_len = 1;
    }
  }
  while (pos_ < text_.size() && IsAsciiDigit(text_[pos_])) {
    number_text_.push_back(text_[pos_++]);
    ++int_len;
  }
  bool is_float = false;
  int64_t fract_len = absent;
  int64_t exp_len = absent;
  if (pos_ < text_.size() && text_[pos_] == '.') {
    is_float = true;
    fract_len = 0;
    number_text_.push_back(text_[pos_++]);
    while (pos_ < text_.size() && IsAsciiDigit(text_[pos_])) {
      number_text_.push_back(text_[pos_++]);
      ++fract_len;
    }
    if (fract_len == 0) {
      Fail("decimal point not followed by a digit");
    }
  }
  if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
    is_float = true;
    exp_len = 0;
    number_text_.push_back(text_[pos_++]);
    if (pos_ >= text_.size()) Fail("unexpected end of input: expected a digit for number exponent");
    if (text_[pos_] == '+' || text_[pos_] == '-') {
      number_text_.push_back(text_[pos_++]);
      if (pos_ >= text_.size()) {
        Fail("unexpected end of input: expected a digit for number exponent");
      }
    }
    while (pos_ < text_.size() && IsAsciiDigit(text_[pos_])) {
      number_text_.push_back(text_[pos_++]);
      ++exp_len;
    }
    if (exp_len == 0) {
      Fail("exponent indicator not followed by a digit");
    }
  }
  if (pos_ < text_.size() && contexts_.back().type == Ctx::kRoot) {
    VerifyRootSpace(static_cast<unsigned char>(text_[pos_]));
  }
  if (!is_float) {
    if (int_len > features_.max_number_length) Fail("number length exceeds the maximum");
    return JToken::kInt;
  }
  if (int_len + fract_len + exp_len > features_.max_number_length) {
    Fail("number length exceeds the maximum");
  }
  return JToken::kFloat;
}

uint32_t JacksonLexer::DecodeEscape() {
  if (pos_ >= text_.size()) Fail("unexpected end of input in a character escape sequence");
  size_t length = 0;
  const uint32_t c = CodePointAt(pos_, &length);
  pos_ += length;
  switch (c) {
    case 'b': return '\b';
    case 't': return '\t';
    case 'n': return '\n';
    case 'f': return '\f';
    case 'r': return '\r';
    case '"':
    case '/':
    case '\\': return c;
    case 'u': break;
    default:
      if (features_.allow_backslash_escaping_any) return c;
      if (c == '\'' && features_.allow_single_quotes) return c;
      Fail("unrecognized character escape");
  }
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i) {
    if (pos_ >= text_.size()) Fail("unexpected end of input in a character escape sequence");
    size_t hex_length = 0;
    const int digit = HexDigit(CodePointAt(pos_, &hex_length));
    pos_ += hex_length;
    if (digit < 0) Fail("unexpected character: expected a hex digit for a character escape");
    value = (value << 4) | static_cast<uint32_t>(digit);
  }
  return value;
}

void JacksonLexer::ReadString(char quote, std::string* out) {
  if (out != nullptr) out->clear();
  std::string discard;
  Utf16Sink sink(out != nullptr ? out : &discard, &lone_surrogates_);
  while (true) {
    if (pos_ >= text_.size()) Fail("unexpected end of input: was expecting a closing quote");
    const unsigned char c = static_cast<unsigned char>(text_[pos_]);
    if (c == static_cast<unsigned char>(quote)) {
      ++pos_;
      sink.Flush();
      return;
    }
    if (c == '\\') {
      ++pos_;
      const uint32_t unit = DecodeEscape();
      if (out != nullptr) {
        if (unit <= 0xFFFF) {
          sink.Unit(unit);
        } else {
          std::string utf8;
          AppendUtf8(unit, &utf8);
          sink.Bytes(utf8);
        }
      }
      continue;
    }
    if (c < 0x20 && !features_.allow_unquoted_control_chars) {
      ++pos_;
      Fail("illegal unquoted character: must be escaped");
    }
    size_t length = 1;
    if (c >= 0x80) CodePointAt(pos_, &length);
    if (out != nullptr) sink.Bytes(text_.substr(pos_, length));
    pos_ += length;
  }
}

std::string_view JacksonLexer::StringValue() {
  if (string_pending_) {
    string_pending_ = false;
    ReadString('"', &string_value_);
  }
  return string_value_;
}

void JacksonLexer::ParseName(int quote) {
  Context& ctx = contexts_.back();
  // Jackson stores the name before it reads the value, and keeps it when the
  // value fails.
  ctx.name.clear();
  ctx.has_name = true;
  ReadString(static_cast<char>(quote), &ctx.name);
}

void JacksonLexer::ParseOddName(int c) {
  if (c == '\'' && features_.allow_single_quotes) {
    ParseName('\'');
    return;
  }
  if (!features_.allow_unquoted_field_names) {
    Fail("unexpected character: was expecting double-quote to start field name");
  }
  if (!IsUnquotedNameChar(static_cast<uint32_t>(c))) {
    Fail("unexpected character: was expecting a valid name character or double-quote");
  }
  const size_t start = char_start_;
  while (pos_ < text_.size()) {
    size_t length = 0;
    const uint32_t cp = CodePointAt(pos_, &length);
    if (!IsUnquotedNameChar(cp)) break;
    pos_ += length;
  }
  Context& ctx = contexts_.back();
  ctx.name.assign(text_.substr(start, pos_ - start));
  ctx.has_name = true;
}

JToken JacksonLexer::HandleOddValue(int c) {
  switch (c) {
    case '\'':
      if (features_.allow_single_quotes) {
        string_pending_ = false;
        ReadString('\'', &string_value_);
        return JToken::kString;
      }
      break;
    case 'N':
      MatchToken("NaN", 1);
      if (!features_.allow_non_numeric_numbers) Fail("non-standard token 'NaN'");
      return NonNumeric("NaN", std::numeric_limits<double>::quiet_NaN());
    case 'I':
      MatchToken("Infinity", 1);
      if (!features_.allow_non_numeric_numbers) Fail("non-standard token 'Infinity'");
      return NonNumeric("Infinity", std::numeric_limits<double>::infinity());
    case '+': {
      if (pos_ >= text_.size()) Fail("unexpected end of input in a number");
      size_t length = 0;
      const uint32_t next = CodePointAt(pos_, &length);
      pos_ += length;
      return HandleInvalidNumberStart(static_cast<int>(next), false, true);
    }
    default: break;
  }
  if (IsJavaIdentifierStart(static_cast<uint32_t>(c))) ReportInvalidToken(1);
  Fail("unexpected character: expected a valid value");
}

JToken JacksonLexer::ParseValue(int c, bool in_object) {
  token_start_ = char_start_;
  switch (c) {
    case '"': string_pending_ = true; return JToken::kString;
    case '[':
      if (!in_object) PushContext(Ctx::kArray);
      return JToken::kStartArray;
    case '{':
      if (!in_object) PushContext(Ctx::kObject);
      return JToken::kStartObject;
    case '}': Fail("unexpected close marker '}': expected a value");
    case 't': MatchToken("true", 1); return JToken::kTrue;
    case 'f': MatchToken("false", 1); return JToken::kFalse;
    case 'n': MatchToken("null", 1); return JToken::kNull;
    case '-': return ParseNumber(true);
    case '+':
    case '.': return HandleOddValue(c);
    default:
      if (c >= '0' && c <= '9') {
        --pos_;
        return ParseNumber(false);
      }
      return HandleOddValue(c);
  }
}

JToken JacksonLexer::NextToken() {
  if (current_ == JToken::kFieldName) {
    // The value was read with the name; its container opens now.
    const JToken t = next_;
    next_ = JToken::kNone;
    current_ = t;
    if (t == JToken::kStartArray) {
      PushContext(Ctx::kArray);
    } else if (t == JToken::kStartObject) {
      PushContext(Ctx::kObject);
    }
    return t;
  }
  if (string_pending_) {
    string_pending_ = false;
    ReadString('"', nullptr);
  }
  int c = SkipWsOrEnd();
  if (c < 0) {
    if (contexts_.back().type != Ctx::kRoot) {
      Fail("unexpected end of input: expected close marker");
    }
    current_ = JToken::kNone;
    return current_;
  }
  if (c == ']' || c == '}') {
    CloseScope(c);
    return current_;
  }
  Context& ctx = contexts_.back();
  if (ctx.type != Ctx::kRoot && ++ctx.index > 0) {
    c = SkipComma(c);
  } else if (ctx.type == Ctx::kRoot) {
    ++ctx.index;
  }
  const bool in_object = contexts_.back().type == Ctx::kObject;
  if (in_object) {
    if (c == '"') {
      ParseName('"');
    } else {
      ParseOddName(c);
    }
    current_ = JToken::kFieldName;
    c = SkipColon();
  }
  const JToken t = ParseValue(c, in_object);
  if (in_object) {
    next_ = t;
    return current_;
  }
  current_ = t;
  return t;
}

void JacksonLexer::SkipChildren() {
  if (current_ != JToken::kStartObject && current_ != JToken::kStartArray) return;
  int open = 1;
  while (true) {
    const JToken t = NextToken();
    if (t == JToken::kNone) return;  // at the root: SkipWsOrEnd failed otherwise
    if (t == JToken::kStartObject || t == JToken::kStartArray) {
      ++open;
    } else if (t == JToken::kEndObject || t == JToken::kEndArray) {
      if (--open == 0) return;
    }
  }
}

bool JacksonLexer::CurrentName(std::string_view* name) const {
  size_t index = contexts_.size() - 1;
  if ((current_ == JToken::kStartObject || current_ == JToken::kStartArray) && index > 0) --index;
  const Context& ctx = contexts_[index];
  if (!ctx.has_name) return false;
  *name = ctx.name;
  return true;
}

void AppendNormalizedValue(JacksonLexer* lexer, std::string* out, bool* has_markers) {
  switch (lexer->current()) {
    case JToken::kStartObject: {
      out->push_back('{');
      bool first = true;
      while (lexer->NextToken() != JToken::kEndObject) {
        if (!first) out->push_back(',');
        first = false;
        out->push_back('"');
        AppendJsonEscaped(out, lexer->FieldName());
        out->append("\":");
        lexer->NextToken();
        AppendNormalizedValue(lexer, out, has_markers);
      }
      out->push_back('}');
      return;
    }
    case JToken::kStartArray: {
      out->push_back('[');
      bool first = true;
      while (lexer->NextToken() != JToken::kEndArray) {
        if (!first) out->push_back(',');
        first = false;
        AppendNormalizedValue(lexer, out, has_markers);
      }
      out->push_back(']');
      return;
    }
    case JToken::kString:
      out->push_back('"');
      AppendJsonEscaped(out, lexer->StringValue());
      out->push_back('"');
      return;
    case JToken::kInt:
    case JToken::kFloat: {
      std::string_view text = lexer->NumberText();
      double special = 0;
      const bool is_int = lexer->current() == JToken::kInt;
      if (is_int && text == "-0") text = "0";
      if (!lexer->IsNonNumeric(&special) && SimdjsonHoldsExactly(text, is_int)) {
        out->append(text);
      } else {
        out->append("\"\\u0000#");
        out->append(text);
        out->push_back('"');
        *has_markers = true;
      }
      return;
    }
    case JToken::kTrue: out->append("true"); return;
    case JToken::kFalse: out->append("false"); return;
    case JToken::kNull: out->append("null"); return;
    default: throw JacksonError{"unexpected token"};
  }
}

bool NormalizeFirstValue(JacksonLexer* lexer, std::string_view text, std::string* out,
                         bool* has_markers) {
  out->clear();
  *has_markers = false;
  lexer->Reset(text);
  if (lexer->NextToken() == JToken::kNone) return false;
  AppendNormalizedValue(lexer, out, has_markers);
  return true;
}

}  // namespace silt::json::internal
