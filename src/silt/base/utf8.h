// UTF-8 encoding of one Unicode code point, for the places that turn escapes
// (\uXXXX in SQL literals and JSON, XML entities) into text; and validation
// and repair of byte strings that should be UTF-8 but may not be (data that
// came in through a binary-to-string cast or a corrupt record), for the
// places that must only ever write valid UTF-8 (the Delta log, JSON output).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace silt {

// Appends the UTF-8 bytes of `cp` to `out`. REQUIRES: cp <= 0x10FFFF.
inline void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// U+FFFD REPLACEMENT CHARACTER, UTF-8 encoded.
inline constexpr std::string_view kUtf8ReplacementChar = "\xEF\xBF\xBD";

// Whether `s` is well-formed UTF-8 (Unicode Table 3-7: no overlong forms, no
// surrogates, nothing above U+10FFFF, no truncated sequence).
bool IsValidUtf8(std::string_view s);

// `s` with each ill-formed sequence replaced by U+FFFD, one per maximal
// subpart (Unicode's recommended practice, which is what Java's UTF-8
// decoder and so Spark's UTF8String.toString do: "a\xFFb" -> "a\uFFFDb",
// "\xE2\x82" -> one U+FFFD), except that an encoded surrogate (ED A0..BF
// 80..BF) is one U+FFFD as Java reads it. Valid input comes back unchanged.
std::string ReplaceInvalidUtf8(std::string_view s);

}  // namespace silt
