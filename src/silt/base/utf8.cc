#include "silt/base/utf8.h"

namespace silt {

namespace {

// The length of the well-formed sequence starting at s[pos] (> 0), or minus
// the length of the maximal subpart of an ill-formed one (< 0).
int SequenceAt(std::string_view s, size_t pos) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char lead = byte(pos);
  if (lead < 0x80) return 1;
  int length = 0;
  unsigned char second_lo = 0x80;
  unsigned char second_hi = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) second_lo = 0xA0;  // overlong
    if (lead == 0xED) second_hi = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) second_lo = 0x90;  // overlong
    if (lead == 0xF4) second_hi = 0x8F;  // above U+10FFFF
  } else {
    return -1;
  }
  if (lead == 0xED && pos + 2 < s.size() && byte(pos + 1) >= 0xA0 && byte(pos + 1) <= 0xBF &&
      byte(pos + 2) >= 0x80 && byte(pos + 2) <= 0xBF) {
    return -3;  // an encoded surrogate: one character to Java's decoder
  }
  for (int k = 1; k < length; ++k) {
    if (pos + static_cast<size_t>(k) >= s.size()) return -k;
    const unsigned char c = byte(pos + static_cast<size_t>(k));
    const unsigned char lo = k == 1 ? second_lo : 0x80;
    const unsigned char hi = k == 1 ? second_hi : 0xBF;
    if (c < lo || c > hi) return -k;
  }
  return length;
}

}  // namespace

bool IsValidUtf8(std::string_view s) {
  for (size_t pos = 0; pos < s.size();) {
    if (static_cast<unsigned char>(s[pos]) < 0x80) {
      ++pos;
      continue;
    }
    const int n = SequenceAt(s, pos);
    if (n < 0) return false;
    pos += static_cast<size_t>(n);
  }
  return true;
}

std::string ReplaceInvalidUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t run_start = 0;
  for (size_t pos = 0; pos < s.size();) {
    if (static_cast<unsigned char>(s[pos]) < 0x80) {
      ++pos;
      continue;
    }
    const int n = SequenceAt(s, pos);
    if (n > 0) {
      pos += static_cast<size_t>(n);
      continue;
    }
    out.append(s.data() + run_start, pos - run_start);
    out += kUtf8ReplacementChar;
    pos += static_cast<size_t>(-n);
    run_start = pos;
  }
  out.append(s.data() + run_start, s.size() - run_start);
  return out;
}

}  // namespace silt
