#include "silt/json/flat_object_internal.h"

#include <bit>
#include <charconv>
#include <cstring>
#include <system_error>

#include "silt/json/plain_run_internal.h"

namespace silt::json::internal {

namespace {

constexpr double kPowersOfTen[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

// n bytes from src to dst, for the short runs between escapes without a
// library call: two overlapping loads never read outside [src, src + n).
void CopyRun(char* dst, const char* src, size_t n) {
  if (n >= 8) {
    if (n > 16) {
      std::memcpy(dst, src, n);
      return;
    }
    uint64_t head = 0;
    uint64_t tail = 0;
    std::memcpy(&head, src, 8);
    std::memcpy(&tail, src + n - 8, 8);
    std::memcpy(dst, &head, 8);
    std::memcpy(dst + n - 8, &tail, 8);
  } else if (n >= 4) {
    uint32_t head = 0;
    uint32_t tail = 0;
    std::memcpy(&head, src, 4);
    std::memcpy(&tail, src + n - 4, 4);
    std::memcpy(dst, &head, 4);
    std::memcpy(dst + n - 4, &tail, 4);
  } else if (n > 0) {
    dst[0] = src[0];
    dst[n / 2] = src[n / 2];
    dst[n - 1] = src[n - 1];
  }
}

// JSON white space: ' ', '\t', '\n', '\r' (any byte above ' ' is not, one
// test for the usual byte).
bool IsSpace(char c) {
  const auto byte = static_cast<unsigned char>(c);
  return byte <= ' ' &&
         ((1ULL << byte) & ((1ULL << ' ') | (1ULL << '\t') | (1ULL << '\n') | (1ULL << '\r'))) != 0;
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Reads an object whose last byte but white space, `last`, is its closing
// brace (Scan() checks that first). Until that brace is consumed, pos_ <=
// last_, so *pos_ is in the text, and a loop over white space or digits
// stops at last_ without testing for the end. Strings, which may contain
// '}', test for the end of the text instead.
class Cursor {
 public:
  Cursor(std::string_view text, const char* last)
      : begin_(text.data()), pos_(text.data()), last_(last), end_(text.data() + text.size()) {}

  char peek() const { return *pos_; }
  void SkipSpace() {
    while (IsSpace(*pos_)) ++pos_;
  }
  bool Consume(char c) {
    if (*pos_ != c) return false;
    ++pos_;
    return true;
  }
  // After a consumed '}': true when it was the closing brace at last_.
  bool ClosedAtLast() const { return pos_ == last_ + 1; }
  // White space, then `c`: compact JSON has none, so `c` is tried first.
  bool SkipSpaceAndConsume(char c) {
    if (Consume(c)) return true;
    SkipSpace();
    return Consume(c);
  }
  bool ConsumeWord(std::string_view word) {
    if (static_cast<size_t>(end_ - pos_) < word.size() ||
        std::string_view(pos_, word.size()) != word) {
      return false;
    }
    pos_ += word.size();
    return true;
  }

  // After the opening quote: the string's value up to the closing quote.
  // Without an escape it is a view of the text; with one, it is decoded
  // into the buffer at *write (advanced past it) in the same pass, or,
  // when write is null (keys), refused.
  bool String(std::string_view* value, bool* escaped, char** write) {
    const char* start = pos_;
    *escaped = false;
    if (!PlainRun()) return false;
    if (*pos_ == '"') {
      *value = std::string_view(start, static_cast<size_t>(pos_ - start));
      ++pos_;
      return true;
    }
    if (write == nullptr) return false;
    *escaped = true;
    char* const out = *write;
    CopyRun(out, start, static_cast<size_t>(pos_ - start));
    char* w = out + (pos_ - start);
    while (*pos_ == '\\') {
      if (!Escape(&w)) return false;
      if (!CopyPlainRun(&w)) return false;
    }
    if (*pos_ != '"') return false;
    *value = std::string_view(out, static_cast<size_t>(w - out));
    *write = w;
    ++pos_;
    return true;
  }

  // RFC 8259's number grammar, classified as simdjson's DOM does.
  bool Number(FlatMember* member) {
    const char* start = pos_;
    if (*pos_ == '-') ++pos_;
    const char* digits = pos_;
    if (!IsDigit(*pos_)) return false;
    // The digits as an integer; it wraps past 19 of them, and is then not
    // used (the checks on int_digits and fraction_digits below).
    uint64_t mantissa = 0;
    if (*pos_ == '0') {
      ++pos_;
    } else {
      while (IsDigit(*pos_)) mantissa = mantissa * 10 + static_cast<uint64_t>(*pos_++ - '0');
    }
    const size_t int_digits = static_cast<size_t>(pos_ - digits);
    if (int_digits > 19) return false;
    bool is_float = false;
    int64_t fraction_digits = 0;
    if (*pos_ == '.') {
      is_float = true;
      ++pos_;
      if (!IsDigit(*pos_)) return false;
      const char* fraction = pos_;
      while (IsDigit(*pos_)) mantissa = mantissa * 10 + static_cast<uint64_t>(*pos_++ - '0');
      fraction_digits = pos_ - fraction;
    }
    int64_t exponent = 0;
    bool small_exponent = true;
    if (*pos_ == 'e' || *pos_ == 'E') {
      is_float = true;
      ++pos_;
      bool negative = false;
      if (*pos_ == '+' || *pos_ == '-') negative = *pos_++ == '-';
      if (!IsDigit(*pos_)) return false;
      const char* exponent_digits = pos_;
      // Only a short exponent's value is used (small_exponent below): a
      // long one is not accumulated, so it cannot overflow.
      while (IsDigit(*pos_)) {
        if (pos_ - exponent_digits < 4) exponent = exponent * 10 + (*pos_ - '0');
        ++pos_;
      }
      small_exponent = pos_ - exponent_digits <= 3;
      if (negative) exponent = -exponent;
    }
    const size_t length = static_cast<size_t>(pos_ - start);
    if (length > FlatObjectScanner::kMaxNumberLength) return false;
    member->text = std::string_view(start, length);
    const bool negative = start != digits;
    if (!is_float) {
      // 18 digits always fit int64; "-0" is left to the DOM path.
      if (int_digits > 18 || (negative && *digits == '0')) return false;
      member->kind = FlatKind::kInt64;
      const auto value = static_cast<int64_t>(mantissa);
      member->int_value = negative ? -value : value;
      return true;
    }
    member->kind = FlatKind::kDouble;
    // Clinger's fast path: a mantissa below 2^53 and a power of ten up to
    // 1e22 are both exact doubles, so one IEEE multiplication or division
    // rounds correctly, as simdjson's parser does.
    const int64_t scale = exponent - fraction_digits;
    if (small_exponent && int_digits + static_cast<size_t>(fraction_digits) <= 15 && scale >= -22 &&
        scale <= 22) {
      double value = static_cast<double>(mantissa);
      value = scale >= 0 ? value * kPowersOfTen[scale] : value / kPowersOfTen[-scale];
      member->double_value = negative ? -value : value;
      return true;
    }
    // Otherwise libstdc++'s from_chars, which also rounds correctly; out of
    // range values are left to the DOM path.
    const std::from_chars_result result = std::from_chars(start, pos_, member->double_value);
    return result.ec == std::errc() && result.ptr == pos_;
  }

 private:
  // Moves to the first byte that is not plain; false at the end of the
  // text.
  bool PlainRun() {
    pos_ = FindPlainRunEnd(begin_, pos_, end_);
    return pos_ != end_;
  }

  // As PlainRun(), copying the plain bytes to *write (advanced past them).
  // With SIMD, whole blocks of 16 are stored, up to 15 bytes past the run:
  // the buffer has room (see Scan()), and what follows overwrites them.
  bool CopyPlainRun(char** write) {
#if SILT_PLAIN_RUN_SIMD
    using plain_run::kBitsPerByte;
    while (end_ - pos_ >= 16) {
      std::memcpy(*write, pos_, 16);
      const uint64_t special = plain_run::SpecialBits16(pos_);
      if (special != 0) {
        const int plain = std::countr_zero(special) / kBitsPerByte;
        pos_ += plain;
        *write += plain;
        // An escaped quote, the usual escape of a JSON text inside a
        // string, without leaving the loop.
        if (pos_[0] == '\\' && end_ - pos_ >= 2 && pos_[1] == '"') {
          *(*write)++ = '"';
          pos_ += 2;
          continue;
        }
        return true;
      }
      pos_ += 16;
      *write += 16;
    }
#endif
    const char* start = pos_;
    pos_ = FindPlainRunEnd(begin_, pos_, end_);
    const auto plain = static_cast<size_t>(pos_ - start);
    CopyRun(*write, start, plain);
    *write += plain;
    return pos_ != end_;
  }

  // At a backslash: validates one escape and writes its UTF-8 bytes.
  // Surrogates (paired or not) are refused: the DOM path reads them.
  bool Escape(char** write) {
    if (end_ - pos_ < 2) return false;
    const char c = pos_[1];
    char*& w = *write;
    // An escaped quote first: a JSON document inside a string has two per
    // key (the seed's payload inside its envelope).
    if (c == '"') {
      *w++ = c;
      pos_ += 2;
      return true;
    }
    switch (c) {
      case '"':
      case '\\':
      case '/': *w++ = c; break;
      case 'b': *w++ = '\b'; break;
      case 'f': *w++ = '\f'; break;
      case 'n': *w++ = '\n'; break;
      case 'r': *w++ = '\r'; break;
      case 't': *w++ = '\t'; break;
      case 'u': {
        if (end_ - pos_ < 6) return false;
        int unit = 0;
        for (int digit = 2; digit < 6; ++digit) {
          const int value = HexValue(pos_[digit]);
          if (value < 0) return false;
          unit = unit * 16 + value;
        }
        if (unit >= 0xD800 && unit <= 0xDFFF) return false;
        if (unit < 0x80) {
          *w++ = static_cast<char>(unit);
        } else if (unit < 0x800) {
          *w++ = static_cast<char>(0xC0 | (unit >> 6));
          *w++ = static_cast<char>(0x80 | (unit & 0x3F));
        } else {
          *w++ = static_cast<char>(0xE0 | (unit >> 12));
          *w++ = static_cast<char>(0x80 | ((unit >> 6) & 0x3F));
          *w++ = static_cast<char>(0x80 | (unit & 0x3F));
        }
        pos_ += 6;
        return true;
      }
      default: return false;
    }
    pos_ += 2;
    return true;
  }

  const char* begin_;
  const char* pos_;
  const char* last_;
  const char* end_;
};

}  // namespace

bool FlatObjectScanner::Scan(std::string_view text) {
  members_.clear();
  // Decoded strings are never longer than their text; the slack takes the
  // whole blocks CopyPlainRun() stores past a run.
  if (decoded_.size() < text.size() + 16) decoded_.resize(text.size() * 2 + 16);
  char* write = decoded_.data();
  // The closing brace first: it bounds the Cursor's loops (see there).
  const char* last = text.data() + text.size();
  while (last != text.data() && IsSpace(last[-1])) --last;
  if (last == text.data() || *--last != '}') return false;
  Cursor cursor(text, last);
  cursor.SkipSpace();
  if (!cursor.Consume('{')) return false;
  cursor.SkipSpace();
  if (!cursor.Consume('}')) {
    while (true) {
      FlatMember& member = members_.emplace_back();
      bool escaped = false;
      if (!cursor.Consume('"') || !cursor.String(&member.key, &escaped, nullptr)) return false;
      if (!cursor.SkipSpaceAndConsume(':')) return false;
      cursor.SkipSpace();
      switch (cursor.peek()) {
        case '"':
          cursor.Consume('"');
          if (!cursor.String(&member.text, &member.escaped, &write)) return false;
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
      if (cursor.SkipSpaceAndConsume(',')) {
        cursor.SkipSpace();
        continue;
      }
      if (cursor.Consume('}')) break;
      return false;
    }
  }
  return cursor.ClosedAtLast();
}

}  // namespace silt::json::internal
