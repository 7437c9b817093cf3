#include "silt/expr/value/decimal_util.h"

#include <array>

namespace silt::expr {

namespace {

using uint128 = unsigned __int128;

constexpr std::array<int128, kMaxDecimalPrecision + 1> MakePow10Table() {
  std::array<int128, kMaxDecimalPrecision + 1> table{};
  int128 v = 1;
  for (int i = 0; i <= kMaxDecimalPrecision; ++i) {
    table[static_cast<size_t>(i)] = v;
    if (i < kMaxDecimalPrecision) v *= 10;
  }
  return table;
}

constexpr std::array<int128, kMaxDecimalPrecision + 1> kPow10 = MakePow10Table();

uint128 Abs128(int128 v) { return v < 0 ? -static_cast<uint128>(v) : static_cast<uint128>(v); }

// Appends the decimal digits of `v`.
void AppendU128(uint128 v, std::string* out) {
  char buf[48];
  int n = 0;
  do {
    buf[n++] = static_cast<char>('0' + static_cast<int>(v % 10));
    v /= 10;
  } while (v != 0);
  while (n > 0) out->push_back(buf[--n]);
}

}  // namespace

int128 Pow10(int k) { return kPow10[static_cast<size_t>(k)]; }

bool FitsPrecision(int128 value, int precision) {
  return Abs128(value) < static_cast<uint128>(kPow10[static_cast<size_t>(precision)]);
}

int DecimalDigits(int128 value) {
  uint128 v = Abs128(value);
  int digits = 1;
  while (digits <= kMaxDecimalPrecision &&
         v >= static_cast<uint128>(kPow10[static_cast<size_t>(digits)])) {
    ++digits;
  }
  return digits;
}

bool RescaleDecimal(int128 value, int from_scale, int to_scale, int precision, int128* out) {
  if (to_scale == from_scale) {
    if (!FitsPrecision(value, precision)) return false;
    *out = value;
    return true;
  }
  if (to_scale > from_scale) {
    int k = to_scale - from_scale;
    if (k > kMaxDecimalPrecision) return value == 0 ? (*out = 0, true) : false;
    int128 scaled = 0;
    if (__builtin_mul_overflow(value, kPow10[static_cast<size_t>(k)], &scaled)) return false;
    if (!FitsPrecision(scaled, precision)) return false;
    *out = scaled;
    return true;
  }
  int k = from_scale - to_scale;
  if (k > kMaxDecimalPrecision) {
    *out = 0;
    return true;
  }
  uint128 magnitude = Abs128(value);
  uint128 divisor = static_cast<uint128>(kPow10[static_cast<size_t>(k)]);
  uint128 q = magnitude / divisor;
  uint128 r = magnitude % divisor;
  if (r * 2 >= divisor) ++q;
  int128 result = value < 0 ? -static_cast<int128>(q) : static_cast<int128>(q);
  if (!FitsPrecision(result, precision)) return false;
  *out = result;
  return true;
}

bool ParseDecimal(std::string_view text, int precision, int scale, int128* out, bool* overflow) {
  if (overflow != nullptr) *overflow = false;
  // java.lang.String.trim, as Spark's Decimal.fromString applies it.
  while (!text.empty() && static_cast<unsigned char>(text.front()) <= ' ') text.remove_prefix(1);
  while (!text.empty() && static_cast<unsigned char>(text.back()) <= ' ') text.remove_suffix(1);
  size_t pos = 0;
  bool negative = false;
  if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    negative = text[pos] == '-';
    ++pos;
  }
  // The digits (without the point), and how many stand before the point.
  size_t digits_begin = pos;
  int64_t num_digits = 0;
  int64_t int_digits = 0;
  bool seen_point = false;
  for (; pos < text.size(); ++pos) {
    char c = text[pos];
    if (c >= '0' && c <= '9') {
      ++num_digits;
      if (!seen_point) ++int_digits;
    } else if (c == '.' && !seen_point) {
      seen_point = true;
    } else {
      break;
    }
  }
  size_t digits_end = pos;
  if (num_digits == 0) return false;
  int64_t exponent = 0;
  if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
    ++pos;
    bool exp_negative = false;
    if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
      exp_negative = text[pos] == '-';
      ++pos;
    }
    size_t exp_begin = pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      // Exponents this large cannot give a 38-digit value either way; cap to
      // keep the arithmetic below in range.
      if (exponent < 1000000000) exponent = exponent * 10 + (text[pos] - '0');
      ++pos;
    }
    if (pos == exp_begin) return false;
    if (exp_negative) exponent = -exponent;
  }
  if (pos != text.size()) return false;

  auto set_overflow = [&]() {
    if (overflow != nullptr) *overflow = true;
    return false;
  };
  // value = D * 10^last_exp, with D the digit string; the unscaled result at
  // `scale` is D * 10^(last_exp + scale), rounded half up when negative.
  int64_t last_exp = int_digits + exponent - num_digits;
  int64_t shift = last_exp + scale;
  int64_t keep = shift >= 0 ? num_digits : num_digits + shift;  // leading digits kept
  int128 result = 0;
  int64_t digit_index = 0;
  int first_dropped = 0;
  for (size_t i = digits_begin; i < digits_end; ++i) {
    if (text[i] == '.') continue;
    int d = text[i] - '0';
    if (digit_index < keep) {
      if (__builtin_mul_overflow(result, 10, &result) ||
          __builtin_add_overflow(result, d, &result)) {
        return set_overflow();
      }
    } else if (digit_index == keep) {
      first_dropped = d;
    }
    ++digit_index;
  }
  if (shift > 0 && result != 0) {
    if (shift > kMaxDecimalPrecision) return set_overflow();
    if (__builtin_mul_overflow(result, kPow10[static_cast<size_t>(shift)], &result)) {
      return set_overflow();
    }
  }
  if (keep >= 0 && keep < num_digits && first_dropped >= 5) ++result;
  if (!FitsPrecision(result, precision)) return set_overflow();
  *out = negative ? -result : result;
  return true;
}

void AppendDecimalPlain(int128 unscaled, int scale, std::string* out) {
  if (unscaled < 0) out->push_back('-');
  std::string digits;
  AppendU128(Abs128(unscaled), &digits);
  if (scale <= 0) {
    out->append(digits);
    return;
  }
  size_t s = static_cast<size_t>(scale);
  if (digits.size() <= s) {
    out->append("0.");
    out->append(s - digits.size(), '0');
    out->append(digits);
  } else {
    out->append(digits, 0, digits.size() - s);
    out->push_back('.');
    out->append(digits, digits.size() - s, s);
  }
}

void AppendDecimalJava(int128 unscaled, int scale, std::string* out) {
  std::string digits;
  AppendU128(Abs128(unscaled), &digits);
  int64_t adjusted = -static_cast<int64_t>(scale) + static_cast<int64_t>(digits.size()) - 1;
  if (scale >= 0 && adjusted >= -6) {
    AppendDecimalPlain(unscaled, scale, out);
    return;
  }
  if (unscaled < 0) out->push_back('-');
  out->push_back(digits[0]);
  if (digits.size() > 1) {
    out->push_back('.');
    out->append(digits, 1, std::string::npos);
  }
  out->push_back('E');
  if (adjusted >= 0) out->push_back('+');
  out->append(std::to_string(adjusted));
}

U256 U256::FromU128(unsigned __int128 v) {
  U256 r;
  r.limb[0] = static_cast<uint64_t>(v);
  r.limb[1] = static_cast<uint64_t>(v >> 64);
  return r;
}

int CompareU256(const U256& a, const U256& b) {
  for (int i = 3; i >= 0; --i) {
    if (a.limb[i] != b.limb[i]) return a.limb[i] < b.limb[i] ? -1 : 1;
  }
  return 0;
}

bool AddU256(const U256& a, const U256& b, U256* out) {
  uint128 carry = 0;
  U256 r;
  for (int i = 0; i < 4; ++i) {
    uint128 sum = static_cast<uint128>(a.limb[i]) + b.limb[i] + carry;
    r.limb[i] = static_cast<uint64_t>(sum);
    carry = sum >> 64;
  }
  if (carry != 0) return false;
  *out = r;
  return true;
}

U256 SubU256(const U256& a, const U256& b) {
  U256 r;
  uint64_t borrow = 0;
  for (int i = 0; i < 4; ++i) {
    uint128 lhs = a.limb[i];
    uint128 rhs = static_cast<uint128>(b.limb[i]) + borrow;
    if (lhs >= rhs) {
      r.limb[i] = static_cast<uint64_t>(lhs - rhs);
      borrow = 0;
    } else {
      r.limb[i] = static_cast<uint64_t>((lhs + (static_cast<uint128>(1) << 64)) - rhs);
      borrow = 1;
    }
  }
  return r;
}

bool MulU256(const U256& a, const U256& b, U256* out) {
  uint64_t result[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int i = 0; i < 4; ++i) {
    if (a.limb[i] == 0) continue;
    uint128 carry = 0;
    for (int j = 0; j < 4; ++j) {
      uint128 cur = static_cast<uint128>(a.limb[i]) * b.limb[j] + result[i + j] + carry;
      result[i + j] = static_cast<uint64_t>(cur);
      carry = cur >> 64;
    }
    int k = i + 4;
    while (carry != 0 && k < 8) {
      uint128 cur = static_cast<uint128>(result[k]) + carry;
      result[k] = static_cast<uint64_t>(cur);
      carry = cur >> 64;
      ++k;
    }
  }
  if ((result[4] | result[5] | result[6] | result[7]) != 0) return false;
  for (int i = 0; i < 4; ++i) out->limb[i] = result[i];
  return true;
}

void DivModU256(const U256& a, const U256& b, U256* quotient, U256* remainder) {
  if (a.FitsInt128() && b.FitsInt128()) {
    uint128 x = a.ToU128();
    uint128 y = b.ToU128();
    *quotient = U256::FromU128(x / y);
    *remainder = U256::FromU128(x % y);
    return;
  }
  // Shift-subtract long division; only reached for values beyond 127 bits.
  U256 q;
  U256 r;
  for (int bit = 255; bit >= 0; --bit) {
    // r = (r << 1) | bit_of_a
    for (int i = 3; i > 0; --i) r.limb[i] = (r.limb[i] << 1) | (r.limb[i - 1] >> 63);
    r.limb[0] = (r.limb[0] << 1) | ((a.limb[bit / 64] >> (bit % 64)) & 1);
    if (CompareU256(r, b) >= 0) {
      r = SubU256(r, b);
      q.limb[bit / 64] |= static_cast<uint64_t>(1) << (bit % 64);
    }
  }
  *quotient = q;
  *remainder = r;
}

U256 Pow10U256(int k) {
  U256 r = U256::FromU128(1);
  U256 ten = U256::FromU128(10);
  for (int i = 0; i < k; ++i) MulU256(r, ten, &r);
  return r;
}

WideDecimal ToWide(int128 v) {
  WideDecimal w;
  w.negative = v < 0;
  w.magnitude = U256::FromU128(Abs128(v));
  return w;
}

WideDecimal DivPow10HalfUp(const WideDecimal& v, int digits) {
  if (digits <= 0) return v;
  U256 divisor = Pow10U256(digits);
  U256 q;
  U256 r;
  DivModU256(v.magnitude, divisor, &q, &r);
  U256 twice_r;
  bool round_up = !AddU256(r, r, &twice_r) || CompareU256(twice_r, divisor) >= 0;
  if (round_up) AddU256(q, U256::FromU128(1), &q);
  WideDecimal out;
  out.negative = v.negative && !q.IsZero();
  out.magnitude = q;
  return out;
}

bool WideToDecimal(const WideDecimal& v, int precision, int128* out) {
  if (!v.magnitude.FitsInt128()) return false;
  uint128 m = v.magnitude.ToU128();
  if (m >= static_cast<uint128>(kPow10[static_cast<size_t>(precision)])) return false;
  *out = v.negative ? -static_cast<int128>(m) : static_cast<int128>(m);
  return true;
}

}  // namespace silt::expr
