// Text-to-value conversions the JSON decoder needs beyond what simdjson
// parses itself, each following the Java/Jackson routine Spark calls so that
// silt accepts and rejects the same texts:
//   - ParseDecimalText: java.math.BigDecimal(String) then Spark's
//     Decimal.set(value, precision, scale) (round half-up, precision check).
//   - DecodeBase64: Jackson's JsonParser.getBinaryValue() with its default
//     MIME-no-linefeeds variant (padding required).
//   - ParseJavaInt: Integer.parseInt.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace silt::json::internal {

// Parses `text` with BigDecimal's grammar ([+-] digits [. digits] [e[+-]digits],
// at least one digit, no spaces) and rounds it half-up (ties away from zero)
// to `scale` fraction digits. Writes the unscaled value to *out and returns
// true when the rounded value has at most `precision` digits; false when the
// text is not a number or the value overflows the precision.
// REQUIRES: 1 <= precision <= 38, 0 <= scale <= precision.
bool ParseDecimalText(std::string_view text, int precision, int scale, __int128* out);

// Decodes standard base64 (A-Z a-z 0-9 + /, '=' padding required on the last
// group of a run; ASCII whitespace is skipped) into *out (cleared first).
// Returns false on any other character or a missing/misplaced pad.
bool DecodeBase64(std::string_view text, std::string* out);

// Java's Integer.parseInt: optional sign then decimal digits, within int32.
bool ParseJavaInt(std::string_view text, int32_t* out);

// `text` as Jackson's byte parser (UTF8StreamJsonParser) decodes UTF-8,
// written to *out for the char-based lexer (jackson_internal.h) so that it
// fails where the byte parser fails: a lead byte's top bits alone decide the
// sequence length (C0-DF two bytes, E0-EF three, F0-F7 four) and only the
// continuation bytes' 10xxxxxx form is checked, so overlong forms decode
// (C0 AF is '/', written as a \u00XX escape so that it stays content) and
// encoded surrogates or values past U+10FFFF become the UTF-16 units Jackson
// makes of them (\uXXXX escapes). The bytes it fails on (a byte that starts
// no sequence, or a sequence up to its bad continuation byte, which the
// byte parser consumes) become "\uZ", a bad escape the lexer consumes the
// same way.
void RewriteLaxUtf8(std::string_view text, std::string* out);

}  // namespace silt::json::internal
