#include "silt/json/flat_object_internal.h"

#include <array>
#include <charconv>
#include <system_error>

namespace silt::json::internal {

namespace {

// Bytes that may appear unescaped inside a string of the subset: printable
// ASCII but '"' and '\\'.
constexpr std::array<bool, 256> MakePlainTable() {
  std::array<bool, 256> table{};
  for (int c = 0x20; c < 0x7F; ++c) table[static_cast<size_t>(c)] = c != '"' && c != '\\';
  return table;
}
constexpr std::array<bool, 256> kPlain = MakePlainTable();

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class Cursor {
 public:
  explicit Cursor(std::string_view text) : pos_(text.data()), end_(text.data() + text.size()) {}

  bool at_end() const { return pos_ == end_; }
  char peek() const { return *pos_; }
  void SkipSpace() {
    while (pos_ != end_ && IsSpace(*pos_)) ++pos_;
  }
  bool Consume(char c) {
    if (pos_ == end_ || *pos_ != c) return false;
    ++pos_;
    return true;
  }
  bool ConsumeWord(std::string_view word) {
    if (static_cast<size_t>(end_ - pos_) < word.size() ||
        std::string_view(pos_, word.size()) != word) {
      return false;
    }
    pos_ += word.size();
    return true;
  }

  // After the opening quote: the string's raw bytes up to the closing quote.
  bool String(std::string_view* raw, bool* escaped) {
    const char* start = pos_;
    *escaped = false;
    while (true) {
      while (pos_ != end_ && kPlain[static_cast<unsigned char>(*pos_)]) ++pos_;
      if (pos_ == end_) return false;
      if (*pos_ == '"') break;
      if (*pos_ != '\\' || end_ - pos_ < 2) return false;
      *escaped = true;
      switch (pos_[1]) {
        case '"':
        case '\\':
        case '/':
        case 'b':
        case 'f':
        case 'n':
        case 'r':
        case 't': pos_ += 2; break;
        case 'u': {
          if (end_ - pos_ < 6) return false;
          int unit = 0;
          for (int digit = 2; digit < 6; ++digit) {
            const int value = HexValue(pos_[digit]);
            if (value < 0) return false;
            unit = unit * 16 + value;
          }
          // Surrogates (paired or not) are left to the DOM path.
          if (unit >= 0xD800 && unit <= 0xDFFF) return false;
          pos_ += 6;
          break;
        }
        default: return false;
      }
    }
    *raw = std::string_view(start, static_cast<size_t>(pos_ - start));
    ++pos_;
    return true;
  }

  // RFC 8259's number grammar, classified as simdjson's DOM does.
  bool Number(FlatMember* member) {
    const char* start = pos_;
    if (pos_ != end_ && *pos_ == '-') ++pos_;
    const char* digits = pos_;
    if (pos_ == end_ || !IsDigit(*pos_)) return false;
    if (*pos_ == '0') {
      ++pos_;
    } else {
      while (pos_ != end_ && IsDigit(*pos_)) ++pos_;
    }
    const size_t int_digits = static_cast<size_t>(pos_ - digits);
    bool is_float = false;
    if (pos_ != end_ && *pos_ == '.') {
      is_float = true;
      ++pos_;
      if (pos_ == end_ || !IsDigit(*pos_)) return false;
      while (pos_ != end_ && IsDigit(*pos_)) ++pos_;
    }
    if (pos_ != end_ && (*pos_ == 'e' || *pos_ == 'E')) {
      is_float = true;
      ++pos_;
      if (pos_ != end_ && (*pos_ == '+' || *pos_ == '-')) ++pos_;
      if (pos_ == end_ || !IsDigit(*pos_)) return false;
      while (pos_ != end_ && IsDigit(*pos_)) ++pos_;
    }
    const size_t length = static_cast<size_t>(pos_ - start);
    if (length > FlatObjectScanner::kMaxNumberLength) return false;
    member->text = std::string_view(start, length);
    if (!is_float) {
      // 18 digits always fit int64; "-0" is left to the DOM path.
      if (int_digits > 18 || (start != digits && *digits == '0')) return false;
      int64_t value = 0;
      for (const char* p = digits; p != pos_; ++p) value = value * 10 + (*p - '0');
      member->kind = FlatKind::kInt64;
      member->int_value = start != digits ? -value : value;
      return true;
    }
    // libstdc++'s from_chars rounds correctly, as simdjson does; out of
    // range values are left to the DOM path.
    const std::from_chars_result result = std::from_chars(start, pos_, member->double_value);
    if (result.ec != std::errc() || result.ptr != pos_) return false;
    member->kind = FlatKind::kDouble;
    return true;
  }

 private:
  const char* pos_;
  const char* end_;
};

}  // namespace

bool FlatObjectScanner::Scan(std::string_view text) {
  members_.clear();
  Cursor cursor(text);
  cursor.SkipSpace();
  if (!cursor.Consume('{')) return false;
  cursor.SkipSpace();
  if (!cursor.Consume('}')) {
    while (true) {
      FlatMember& member = members_.emplace_back();
      bool escaped = false;
      if (!cursor.Consume('"') || !cursor.String(&member.key, &escaped) || escaped) return false;
      cursor.SkipSpace();
      if (!cursor.Consume(':')) return false;
      cursor.SkipSpace();
      if (cursor.at_end()) return false;
      switch (cursor.peek()) {
        case '"':
          cursor.Consume('"');
          if (!cursor.String(&member.text, &member.escaped)) return false;
          member.kind = FlatKind::kString;
          break;
        case 't':
          if (!cursor.ConsumeWord("true")) return false;
          member.kind = FlatKind::kTrue;
          break;
        case 'f':
          if (!cursor.ConsumeWord("false")) return false;
          member.kind = FlatKind::kFalse;
          break;
        case 'n':
          if (!cursor.ConsumeWord("null")) return false;
          member.kind = FlatKind::kNull;
          break;
        default:
          if (!cursor.Number(&member)) return false;
          break;
      }
      cursor.SkipSpace();
      if (cursor.Consume('}')) break;
      if (!cursor.Consume(',')) return false;
      cursor.SkipSpace();
    }
  }
  cursor.SkipSpace();
  return cursor.at_end();
}

void AppendUnescaped(std::string_view raw, std::string* out) {
  size_t pos = 0;
  while (pos < raw.size()) {
    const size_t slash = raw.find('\\', pos);
    if (slash == std::string_view::npos) {
      out->append(raw.substr(pos));
      return;
    }
    out->append(raw.substr(pos, slash - pos));
    const char c = raw[slash + 1];
    pos = slash + 2;
    switch (c) {
      case 'b': out->push_back('\b'); break;
      case 'f': out->push_back('\f'); break;
      case 'n': out->push_back('\n'); break;
      case 'r': out->push_back('\r'); break;
      case 't': out->push_back('\t'); break;
      case 'u': {
        int unit = 0;
        for (size_t digit = 0; digit < 4; ++digit) unit = unit * 16 + HexValue(raw[pos + digit]);
        pos += 4;
        if (unit < 0x80) {
          out->push_back(static_cast<char>(unit));
        } else if (unit < 0x800) {
          out->push_back(static_cast<char>(0xC0 | (unit >> 6)));
          out->push_back(static_cast<char>(0x80 | (unit & 0x3F)));
        } else {
          out->push_back(static_cast<char>(0xE0 | (unit >> 12)));
          out->push_back(static_cast<char>(0x80 | ((unit >> 6) & 0x3F)));
          out->push_back(static_cast<char>(0x80 | (unit & 0x3F)));
        }
        break;
      }
      default: out->push_back(c); break;  // '"', '\\', '/'
    }
  }
}

}  // namespace silt::json::internal
