#include "silt/json/text_parse_internal.h"

#include <cstddef>
#include <cstdint>

#include "silt/base/strings.h"
#include "silt/base/utf8.h"

namespace silt::json::internal {

namespace {

using uint128 = unsigned __int128;

uint128 Pow10(int n) {
  uint128 v = 1;
  for (int i = 0; i < n; ++i) v *= 10;
  return v;
}

}  // namespace

bool ParseDecimalText(std::string_view text, int precision, int scale, __int128* out) {
  size_t pos = 0;
  bool negative = false;
  if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    negative = text[pos] == '-';
    ++pos;
  }
  // The significant digits stay a view into `text` (integer part, then the
  // fraction part); only their positions are tracked, so no allocation.
  size_t int_begin = pos;
  while (pos < text.size() && IsAsciiDigit(text[pos])) ++pos;
  size_t int_end = pos;
  size_t frac_begin = pos;
  size_t frac_end = pos;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    frac_begin = pos;
    while (pos < text.size() && IsAsciiDigit(text[pos])) ++pos;
    frac_end = pos;
  }
  if (int_end == int_begin && frac_end == frac_begin) return false;
  int64_t exponent = 0;
  if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
    ++pos;
    bool exp_negative = false;
    if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
      exp_negative = text[pos] == '-';
      ++pos;
    }
    size_t exp_begin = pos;
    while (pos < text.size() && IsAsciiDigit(text[pos])) {
      exponent = exponent * 10 + (text[pos] - '0');
      // BigDecimal rejects exponents outside int; stop before int64 overflow.
      if (exponent > INT32_MAX) return false;
      ++pos;
    }
    if (pos == exp_begin) return false;
    if (exp_negative) exponent = -exponent;
  }
  if (pos != text.size()) return false;

  // Digit i of the concatenated integer+fraction digit string.
  const size_t int_len = int_end - int_begin;
  const size_t total = int_len + (frac_end - frac_begin);
  auto digit_at = [&](size_t i) -> int {
    return i < int_len ? text[int_begin + i] - '0' : text[frac_begin + (i - int_len)] - '0';
  };
  size_t first = 0;
  while (first < total && digit_at(first) == 0) ++first;
  if (first == total) {
    *out = 0;
    return true;
  }
  const int64_t num_digits = static_cast<int64_t>(total - first);
  // unscaled = digits * 10^shift
  const int64_t shift =
      exponent - static_cast<int64_t>(frac_end - frac_begin) + static_cast<int64_t>(scale);
  uint128 value = 0;
  if (shift >= 0) {
    if (num_digits + shift > precision) return false;
    for (size_t i = first; i < total; ++i) value = value * 10 + static_cast<uint128>(digit_at(i));
    value *= Pow10(static_cast<int>(shift));
  } else {
    const int64_t drop = -shift;
    const int64_t keep = num_digits - drop;
    if (keep > precision) return false;
    if (keep < 0) {
      value = 0;  // every kept digit is zero and so is the first dropped one
    } else {
      for (int64_t i = 0; i < keep; ++i) {
        value = value * 10 + static_cast<uint128>(digit_at(first + static_cast<size_t>(i)));
      }
      if (digit_at(first + static_cast<size_t>(keep)) >= 5) value += 1;
    }
    if (value >= Pow10(precision)) return false;
  }
  *out = negative ? -static_cast<__int128>(value) : static_cast<__int128>(value);
  return true;
}

namespace {

int Base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

}  // namespace

bool DecodeBase64(std::string_view text, std::string* out) {
  out->clear();
  size_t pos = 0;
  while (true) {
    // Like Jackson, white space is allowed between 4-character groups only.
    while (pos < text.size() && static_cast<unsigned char>(text[pos]) <= ' ') ++pos;
    if (pos == text.size()) return true;
    if (text.size() - pos < 4) return false;
    int a = Base64Value(text[pos]);
    int b = Base64Value(text[pos + 1]);
    if (a < 0 || b < 0) return false;
    uint32_t bits = (static_cast<uint32_t>(a) << 18) | (static_cast<uint32_t>(b) << 12);
    char c3 = text[pos + 2];
    char c4 = text[pos + 3];
    pos += 4;
    if (c3 == '=') {
      if (c4 != '=') return false;
      out->push_back(static_cast<char>(bits >> 16));
      continue;
    }
    int c = Base64Value(c3);
    if (c < 0) return false;
    bits |= static_cast<uint32_t>(c) << 6;
    if (c4 == '=') {
      out->push_back(static_cast<char>(bits >> 16));
      out->push_back(static_cast<char>((bits >> 8) & 0xFF));
      continue;
    }
    int d = Base64Value(c4);
    if (d < 0) return false;
    bits |= static_cast<uint32_t>(d);
    out->push_back(static_cast<char>(bits >> 16));
    out->push_back(static_cast<char>((bits >> 8) & 0xFF));
    out->push_back(static_cast<char>(bits & 0xFF));
  }
}

bool ParseJavaInt(std::string_view text, int32_t* out) {
  size_t pos = 0;
  bool negative = false;
  if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    negative = text[pos] == '-';
    ++pos;
  }
  if (pos == text.size()) return false;
  int64_t value = 0;
  for (; pos < text.size(); ++pos) {
    if (!IsAsciiDigit(text[pos])) return false;
    value = value * 10 + (text[pos] - '0');
    if (value > static_cast<int64_t>(INT32_MAX) + 1) return false;
  }
  if (negative) value = -value;
  if (value > INT32_MAX || value < INT32_MIN) return false;
  *out = static_cast<int32_t>(value);
  return true;
}

namespace {

void AppendUnitEscape(uint32_t unit, std::string* out) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  out->append("\\u");
  for (int shift = 12; shift >= 0; shift -= 4) out->push_back(kHex[(unit >> shift) & 0xF]);
}

}  // namespace

void RewriteLaxUtf8(std::string_view text, std::string* out) {
  out->clear();
  size_t pos = 0;
  while (pos < text.size()) {
    const auto lead = static_cast<uint8_t>(text[pos]);
    if (lead < 0x80) {
      out->push_back(static_cast<char>(lead));
      ++pos;
      continue;
    }
    int length = 0;
    uint32_t cp = 0;
    if (lead >= 0xC0 && lead <= 0xDF) {
      length = 2;
      cp = lead & 0x1F;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      cp = lead & 0x0F;
    } else if (lead >= 0xF0 && lead <= 0xF7) {
      length = 4;
      cp = lead & 0x07;
    }
    // The bytes consumed before the parser fails: the lead alone, or up to
    // and including the first bad continuation (or the end of the text).
    size_t consumed = 1;
    bool ok = length > 0;
    for (int k = 1; ok && k < length; ++k) {
      if (pos + static_cast<size_t>(k) >= text.size()) {
        ok = false;
        consumed = static_cast<size_t>(k);
        break;
      }
      const auto cont = static_cast<uint8_t>(text[pos + static_cast<size_t>(k)]);
      if ((cont & 0xC0) != 0x80) {
        ok = false;
        consumed = static_cast<size_t>(k) + 1;
        break;
      }
      cp = (cp << 6) | (cont & 0x3F);
    }
    if (!ok) {
      out->append("\\uZ");
      pos += consumed;
      continue;
    }
    pos += static_cast<size_t>(length);
    const bool overlong =
        (length == 2 && cp < 0x80) || (length == 3 && cp < 0x800) || (length == 4 && cp < 0x10000);
    if (length == 4 && !overlong) {
      // Jackson splits into two UTF-16 units without a range check.
      const uint32_t v = cp - 0x10000;
      const uint32_t high = 0xD800 + (v >> 10);
      const uint32_t low = 0xDC00 + (v & 0x3FF);
      if (cp <= 0x10FFFF) {
        AppendUtf8(cp, out);
      } else {
        AppendUnitEscape(high & 0xFFFF, out);
        AppendUnitEscape(low, out);
      }
    } else if (overlong || (cp >= 0xD800 && cp <= 0xDFFF)) {
      AppendUnitEscape(cp, out);
    } else {
      AppendUtf8(cp, out);
    }
  }
}

}  // namespace silt::json::internal
