// Small ASCII string helpers shared by every module. Only the
// ASCII letters A-Z/a-z fold: option keys, column names, SQL keywords and
// HTTP header names compare this way in Spark and on the wire, and bytes of
// UTF-8 sequences must never change.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace silt {

inline char AsciiLower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}
inline char AsciiUpper(char c) {
  return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
}

inline void AsciiLowerInPlace(std::string* s) {
  for (char& c : *s) c = AsciiLower(c);
}
inline std::string AsciiLower(std::string_view s) {
  std::string out(s);
  AsciiLowerInPlace(&out);
  return out;
}
inline void AsciiUpperInPlace(std::string* s) {
  for (char& c : *s) c = AsciiUpper(c);
}
inline std::string AsciiUpper(std::string_view s) {
  std::string out(s);
  AsciiUpperInPlace(&out);
  return out;
}

// ASCII case-insensitive equality: how Spark resolves column names and
// option keys (spark.sql.caseSensitive=false), and how HTTP header names
// compare.
inline bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (AsciiLower(a[i]) != AsciiLower(b[i])) return false;
  }
  return true;
}

inline bool StartsWithIgnoreCase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && EqualsIgnoreCase(s.substr(0, prefix.size()), prefix);
}

inline bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }

// True when `s` is one or more of '0'-'9' (no sign, no space): a log or
// checkpoint file's version, a partition number.
inline bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!IsAsciiDigit(c)) return false;
  }
  return true;
}

// What std::isspace accepts in the C locale.
inline constexpr std::string_view kAsciiWhitespace = " \t\n\v\f\r";

// `s` without the leading and trailing characters that are in `chars`.
inline std::string_view TrimAscii(std::string_view s, std::string_view chars = kAsciiWhitespace) {
  size_t begin = s.find_first_not_of(chars);
  if (begin == std::string_view::npos) return {};
  size_t end = s.find_last_not_of(chars);
  return s.substr(begin, end - begin + 1);
}

// java.lang.String.trim: every byte <= ' ' (space and the ASCII controls)
// goes from both ends; how Spark trims before parsing a date or a number.
inline std::string_view JavaTrim(std::string_view s) {
  while (!s.empty() && static_cast<unsigned char>(s.front()) <= ' ') s.remove_prefix(1);
  while (!s.empty() && static_cast<unsigned char>(s.back()) <= ' ') s.remove_suffix(1);
  return s;
}

// Edit distance between `a` and `b`, ASCII case-insensitive: insertions,
// deletions, substitutions and swaps of two adjacent letters count one each
// (optimal string alignment), so "startingOffset" is 1 from
// "startingOffsets" and "sbuscribe" 1 from "subscribe".
size_t EditDistanceIgnoreCase(std::string_view a, std::string_view b);

// The candidate closest to `name` when it is a plausible typo of it: at most
// max(1, name.size() / 3) edits away (ties: the first). Empty when none is.
std::string_view ClosestName(std::string_view name, std::span<const std::string_view> candidates);
std::string_view ClosestName(std::string_view name, std::span<const std::string> candidates);

}  // namespace silt
