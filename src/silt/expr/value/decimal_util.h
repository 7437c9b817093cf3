// Decimal helpers for expressions: unscaled __int128 values with a
// precision/scale held by the type (Spark's DecimalType, Arrow decimal128).
//
// Covers what Spark's org.apache.spark.sql.types.Decimal does for casts and
// arithmetic: parsing text like java.math.BigDecimal, printing like
// BigDecimal.toString / toPlainString, rescaling with ROUND_HALF_UP and the
// precision check, and 256-bit intermediates so +, -, *, /, % are exact
// before the final rounding.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace silt::expr {

using int128 = __int128;
inline constexpr int kMaxDecimalPrecision = 38;

// 10^k for 0 <= k <= 38.
int128 Pow10(int k);

// True when |value| < 10^precision.
bool FitsPrecision(int128 value, int precision);

// Number of decimal digits of |value| (1 for 0).
int DecimalDigits(int128 value);

// Rescales `value` from scale `from_scale` to `to_scale`, rounding half up
// (away from zero) when digits are dropped. False when the result does not
// fit `precision` digits.
bool RescaleDecimal(int128 value, int from_scale, int to_scale, int precision, int128* out);

// Parses decimal text as java.math.BigDecimal does ([+-]digits[.digits]
// [(e|E)[+-]digits], surrounding whitespace trimmed) and converts it to
// DECIMAL(precision, scale) with ROUND_HALF_UP. Returns false for malformed
// text and sets *overflow (when non-null) when the text is a number that
// does not fit.
bool ParseDecimal(std::string_view text, int precision, int scale, int128* out,
                  bool* overflow = nullptr);

// Appends the value as java.math.BigDecimal.toString prints it (what Spark's
// non-ANSI CAST(decimal AS STRING) produces): plain unless the adjusted
// exponent is below -6, then scientific ("0E-18", "1.00E-8").
void AppendDecimalJava(int128 unscaled, int scale, std::string* out);
// Appends the plain form ("0.000000000000000000"), as toPlainString.
void AppendDecimalPlain(int128 unscaled, int scale, std::string* out);

// Unsigned 256-bit magnitude for exact decimal intermediates.
struct U256 {
  uint64_t limb[4] = {0, 0, 0, 0};  // little-endian limbs

  static U256 FromU128(unsigned __int128 v);
  bool IsZero() const { return (limb[0] | limb[1] | limb[2] | limb[3]) == 0; }
  // True when the value fits in 127 bits (a non-negative int128).
  bool FitsInt128() const { return limb[2] == 0 && limb[3] == 0 && (limb[1] >> 63) == 0; }
  unsigned __int128 ToU128() const {
    return (static_cast<unsigned __int128>(limb[1]) << 64) | limb[0];
  }
};

int CompareU256(const U256& a, const U256& b);
// a + b; false on overflow.
bool AddU256(const U256& a, const U256& b, U256* out);
// a - b; REQUIRES: a >= b.
U256 SubU256(const U256& a, const U256& b);
// a * b; false on overflow.
bool MulU256(const U256& a, const U256& b, U256* out);
// a / b and a % b; REQUIRES: b != 0.
void DivModU256(const U256& a, const U256& b, U256* quotient, U256* remainder);
// 10^k as U256 for 0 <= k <= 76.
U256 Pow10U256(int k);

// A signed exact intermediate: sign and magnitude.
struct WideDecimal {
  bool negative = false;
  U256 magnitude;
};

WideDecimal ToWide(int128 v);
// Rounds wide / 10^digits half up; digits in [0, 76].
WideDecimal DivPow10HalfUp(const WideDecimal& v, int digits);
// Converts to int128 if it fits `precision` digits.
bool WideToDecimal(const WideDecimal& v, int precision, int128* out);

}  // namespace silt::expr
