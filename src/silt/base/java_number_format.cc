// Java's Double.toString / Float.toString as shipped with JDK 8..18 (the
// JDKs Spark 3.5 runs on). Those JDKs do not always print the shortest
// round-trip digits (JDK-4511638, fixed only in JDK 19):
//   - an integral value below 2^63 is printed from its exact integer
//     digits, less floor(log10(2^(e - p - 1))) low digits rounded half up
//     (e = binary exponent, p = significand bits; for doubles one digit from
//     2^58 on, two from 2^61): exp(42) = 1739274941520500992 prints as
//     1.73927494152050099E18.
//   - otherwise digits are generated one at a time from exact integers
//     B / S (the value) and M (half an ulp), stopping once the remainder is
//     within M of either neighbour. The margin is the same on both sides (at
//     an exact power of two the narrower lower one, a quarter ulp, is used
//     for both), so some values get an extra digit; E-notation results get
//     at least two digits; and the "within M" test is strict or not
//     depending on whether the numbers fit in 32/64-bit integers (which
//     also wrap on overflow there).
// This file reproduces that arithmetic exactly; the differential check
// against JDK 17 is described in docs/decisions.md.
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "silt/base/json_writer.h"

namespace silt {
namespace {

// Decimal digits d1 d2 ... dn with value 0.d1d2...dn * 10^dec_exponent.
struct JavaDigits {
  char digits[24];
  int count = 0;
  int dec_exponent = 0;
};

// Bit length of 5^i for i < 27 (5^26 is the largest power below 2^63).
constexpr int kPow5Bits[27] = {0,  3,  5,  7,  10, 12, 14, 17, 19, 21, 24, 26, 28, 31,
                               33, 35, 38, 40, 42, 45, 47, 49, 52, 54, 56, 59, 61};

constexpr uint64_t Pow5(int i) {
  uint64_t p = 1;
  for (int k = 0; k < i; ++k) p *= 5;
  return p;
}

constexpr uint64_t kPow10[20] = {1ULL,
                                 10ULL,
                                 100ULL,
                                 1000ULL,
                                 10000ULL,
                                 100000ULL,
                                 1000000ULL,
                                 10000000ULL,
                                 100000000ULL,
                                 1000000000ULL,
                                 10000000000ULL,
                                 100000000000ULL,
                                 1000000000000ULL,
                                 10000000000000ULL,
                                 100000000000000ULL,
                                 1000000000000000ULL,
                                 10000000000000000ULL,
                                 100000000000000000ULL,
                                 1000000000000000000ULL,
                                 10000000000000000000ULL};

int ApproxPow5Bits(int i) { return i < 27 ? kPow5Bits[i] : i * 3; }

// floor(log10(value)) estimated the way the JDK does it, including its
// double rounding (so the digit loop below sees the same first quotient).
int EstimateDecimalExponent(uint64_t significand, int bin_exp) {
  uint64_t bits = (uint64_t{1023} << 52) | (significand & ((uint64_t{1} << 52) - 1));
  double d2 = std::bit_cast<double>(bits);  // in [1, 2)
  // Separate statements with volatile stores keep the compiler from fusing
  // the multiply-adds, which would change the rounding.
  volatile double t = (d2 - 1.5) * 0.289529654;
  volatile double u = t + 0.176091259;
  volatile double v = static_cast<double>(bin_exp) * 0.301029995663981;
  double d = u + v;
  double f = static_cast<double>(static_cast<int64_t>(d));  // |d| < 400
  int r = static_cast<int>(f);
  return (d < 0 && f != d) ? r - 1 : r;
}

// Integral value below 2^63: exact digits, minus `insignificant` low digits
// rounded half up; trailing zeros are not digits.
void IntegerDigits(uint64_t value, int insignificant, JavaDigits* out) {
  int exponent = 0;
  if (insignificant != 0) {
    uint64_t pow10 = kPow10[insignificant];
    uint64_t residue = value % pow10;
    value /= pow10;
    exponent = insignificant;
    if (residue >= pow10 / 2) ++value;
  }
  while (value % 10 == 0) {
    value /= 10;
    ++exponent;
  }
  char tmp[24];
  int n = 0;
  while (value != 0) {
    tmp[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  }
  for (int i = 0; i < n; ++i) out->digits[i] = tmp[n - 1 - i];
  out->count = n;
  out->dec_exponent = n + exponent;
}

// Adds one to the last digit; a carry out of the first digit turns it into
// "1" with the remaining digits zero (the digit count stays as it was).
void RoundUp(JavaDigits* out) {
  int i = out->count - 1;
  while (i > 0 && out->digits[i] == '9') out->digits[i--] = '0';
  if (out->digits[i] == '9') {
    out->digits[0] = '1';
    ++out->dec_exponent;
    return;
  }
  ++out->digits[i];
}

// The scaled quantities of the digit loop: value = B / S * 10^dec_exp,
// M = the stopping margin scaled like B.
struct Scaled {
  uint64_t significand;  // odd (trailing zero bits removed)
  int b2, b5, s2, s5, m2, m5;
};

// Signed `Int` arithmetic that wraps like Java's int/long. The JDK uses this
// when B and 10*S fit; its "near the upper neighbour" test is strict here.
template <typename Int>
struct Wrapping {
  using U = std::make_unsigned_t<Int>;
  static Int Mul(Int a, Int b) { return static_cast<Int>(static_cast<U>(a) * static_cast<U>(b)); }
  static Int Add(Int a, Int b) { return static_cast<Int>(static_cast<U>(a) + static_cast<U>(b)); }
  static Int Sub(Int a, Int b) { return static_cast<Int>(static_cast<U>(a) - static_cast<U>(b)); }
  static Int Shl(Int a, int n) { return static_cast<Int>(static_cast<U>(a) << n); }
};

template <typename Int>
void SmallDigits(const Scaled& sc, int dec_exp, JavaDigits* out) {
  using W = Wrapping<Int>;
  Int b = W::Shl(W::Mul(static_cast<Int>(sc.significand), static_cast<Int>(Pow5(sc.b5))), sc.b2);
  Int s = W::Shl(static_cast<Int>(Pow5(sc.s5)), sc.s2);
  Int m = W::Shl(static_cast<Int>(Pow5(sc.m5)), sc.m2);
  Int tens = W::Mul(s, 10);
  int n = 0;
  int q = static_cast<int>(b / s);
  b = W::Mul(b % s, 10);
  m = W::Mul(m, 10);
  bool low = b < m;
  bool high = W::Add(b, m) > tens;
  if (q == 0 && !high) {
    --dec_exp;
  } else {
    out->digits[n++] = static_cast<char>('0' + q);
  }
  if ((dec_exp < -3 || dec_exp >= 8)) low = high = false;
  while (!low && !high) {
    q = static_cast<int>(b / s);
    b = W::Mul(b % s, 10);
    m = W::Mul(m, 10);
    if (m > 0) {
      low = b < m;
      high = W::Add(b, m) > tens;
    } else {
      low = high = true;  // the JDK treats an overflowed margin as huge
    }
    out->digits[n++] = static_cast<char>('0' + q);
  }
  Int low_diff = W::Sub(W::Shl(b, 1), tens);
  out->count = n;
  out->dec_exponent = dec_exp + 1;
  if (high) {
    if (!low) {
      RoundUp(out);
    } else if (low_diff > 0 || (low_diff == 0 && ((out->digits[n - 1] - '0') & 1) != 0)) {
      RoundUp(out);
    }
  }
}

// Unsigned multi-word integer, enough for 10 * 2^1074 scaled values.
class BigNum {
 public:
  static constexpr int kWords = 40;  // 1280 bits
  explicit BigNum(uint64_t v = 0) {
    w_[0] = static_cast<uint32_t>(v);
    w_[1] = static_cast<uint32_t>(v >> 32);
    n_ = w_[1] != 0 ? 2 : (w_[0] != 0 ? 1 : 0);
  }
  void MulSmall(uint32_t k) {
    uint64_t carry = 0;
    for (int i = 0; i < n_; ++i) {
      uint64_t p = uint64_t{w_[i]} * k + carry;
      w_[i] = static_cast<uint32_t>(p);
      carry = p >> 32;
    }
    if (carry != 0) w_[n_++] = static_cast<uint32_t>(carry);
  }
  void MulPow5(int e) {
    for (; e >= 13; e -= 13) MulSmall(1220703125u);  // 5^13
    if (e > 0) MulSmall(static_cast<uint32_t>(Pow5(e)));
  }
  void Shl(int bits) {
    if (n_ == 0 || bits == 0) return;
    int words = bits / 32, rem = bits % 32;
    if (rem != 0) {
      w_[n_] = 0;
      for (int i = n_; i > 0; --i) w_[i] = (w_[i] << rem) | (w_[i - 1] >> (32 - rem));
      w_[0] <<= rem;
      if (w_[n_] != 0) ++n_;
    }
    if (words != 0) {
      for (int i = n_ - 1; i >= 0; --i) w_[i + words] = w_[i];
      for (int i = 0; i < words; ++i) w_[i] = 0;
      n_ += words;
    }
  }
  static int Cmp(const BigNum& a, const BigNum& b) {
    if (a.n_ != b.n_) return a.n_ < b.n_ ? -1 : 1;
    for (int i = a.n_ - 1; i >= 0; --i) {
      if (a.w_[i] != b.w_[i]) return a.w_[i] < b.w_[i] ? -1 : 1;
    }
    return 0;
  }
  // Sign of a + b - c, in one pass.
  static int CmpSum(const BigNum& a, const BigNum& b, const BigNum& c) {
    int n = a.n_ > b.n_ ? a.n_ : b.n_;
    n = n > c.n_ ? n : c.n_;
    int64_t carry = 0;
    bool nonzero = false;
    for (int i = 0; i < n; ++i) {
      int64_t acc = carry + (i < a.n_ ? a.w_[i] : 0) + (i < b.n_ ? b.w_[i] : 0) -
                    static_cast<int64_t>(i < c.n_ ? c.w_[i] : 0);
      nonzero |= (acc & 0xFFFFFFFF) != 0;
      carry = acc >> 32;  // arithmetic shift: floor division by 2^32
    }
    if (carry != 0) return carry < 0 ? -1 : 1;
    return nonzero ? 1 : 0;
  }
  // this -= b * k, requires this >= b * k.
  void SubMul(const BigNum& b, uint32_t k) {
    uint64_t mul_carry = 0;
    int64_t borrow = 0;
    for (int i = 0; i < n_; ++i) {
      uint64_t p = (i < b.n_ ? uint64_t{b.w_[i]} * k : 0) + mul_carry;
      mul_carry = p >> 32;
      int64_t d = int64_t{w_[i]} - static_cast<int64_t>(p & 0xFFFFFFFF) - borrow;
      borrow = d < 0 ? 1 : 0;
      w_[i] = static_cast<uint32_t>(d);
    }
    while (n_ > 0 && w_[n_ - 1] == 0) --n_;
  }
  // this -= b, requires this >= b.
  void Sub(const BigNum& b) {
    int64_t borrow = 0;
    for (int i = 0; i < n_; ++i) {
      int64_t d = int64_t{w_[i]} - (i < b.n_ ? b.w_[i] : 0) - borrow;
      borrow = d < 0 ? 1 : 0;
      w_[i] = static_cast<uint32_t>(d);
    }
    while (n_ > 0 && w_[n_ - 1] == 0) --n_;
  }
  // Returns this / d (known to be < 10) and leaves the remainder. The
  // quotient is estimated from the leading bits, then corrected.
  int DivSmallQuotient(const BigNum& d) {
    if (Cmp(*this, d) < 0) return 0;
    int q = static_cast<int>(Leading(d.n_) / d.Leading(d.n_));
    q = q > 1 ? q - 1 : 0;  // a safe lower bound
    if (q > 0) SubMul(d, static_cast<uint32_t>(q));
    while (Cmp(*this, d) >= 0) {
      Sub(d);
      ++q;
    }
    return q;
  }

 private:
  // Approximate value / 2^(32 * (words - 3)) from the top three words.
  double Leading(int words) const {
    double r = 0;
    for (int i = words; i >= words - 3 && i >= 0; --i) {
      r = r * 4294967296.0 + (i < n_ ? w_[i] : 0);
    }
    for (int i = words - 3; i < 0; ++i) r *= 4294967296.0;
    return r;
  }
  uint32_t w_[kWords + 1];  // words at and above n_ are unset
  int n_ = 0;
};

// BigNum's interface on a native 128-bit integer, for scaled values that
// stay below 2^124 (the digit loop keeps every quantity under 16 * 10*S).
class Num128 {
 public:
  explicit Num128(unsigned __int128 v = 0) : v_(v) {}
  void MulSmall(uint32_t k) { v_ *= k; }
  void MulPow5(int e) {
    for (; e >= 27; e -= 27) v_ *= Pow5(27);
    v_ *= Pow5(e);
  }
  void Shl(int bits) { v_ <<= bits; }
  static int Cmp(const Num128& a, const Num128& b) {
    return a.v_ < b.v_ ? -1 : (a.v_ > b.v_ ? 1 : 0);
  }
  static int CmpSum(const Num128& a, const Num128& b, const Num128& c) {
    return Cmp(Num128(a.v_ + b.v_), c);
  }
  int DivSmallQuotient(const Num128& d) {
    int q = static_cast<int>(v_ / d.v_);
    v_ -= d.v_ * static_cast<unsigned>(q);
    return q;
  }

 private:
  unsigned __int128 v_;
};

// Exact arithmetic (no overflow); here the JDK's "near the upper neighbour"
// test is B + M >= 10*S.
template <typename Num>
void ExactDigits(const Scaled& sc, int dec_exp, JavaDigits* out) {
  Num b(sc.significand);
  b.MulPow5(sc.b5);
  b.Shl(sc.b2);
  Num s(1);
  s.MulPow5(sc.s5);
  s.Shl(sc.s2);
  Num m(1);
  m.MulPow5(sc.m5);
  m.Shl(sc.m2);
  Num tens = s;
  tens.MulSmall(10);
  auto step = [&]() {
    int q = b.DivSmallQuotient(s);
    b.MulSmall(10);
    m.MulSmall(10);
    return q;
  };
  auto is_low = [&]() { return Num::Cmp(b, m) < 0; };
  auto is_high = [&]() { return Num::CmpSum(b, m, tens) >= 0; };
  int n = 0;
  int q = step();
  bool low = is_low();
  bool high = is_high();
  if (q == 0 && !high) {
    --dec_exp;
  } else {
    out->digits[n++] = static_cast<char>('0' + q);
  }
  if ((dec_exp < -3 || dec_exp >= 8)) low = high = false;
  while (!low && !high) {
    q = step();
    low = is_low();
    high = is_high();
    out->digits[n++] = static_cast<char>('0' + q);
  }
  out->count = n;
  out->dec_exponent = dec_exp + 1;
  if (high) {
    if (!low) {
      RoundUp(out);
    } else {
      Num twice_b = b;
      twice_b.Shl(1);
      int c = Num::Cmp(twice_b, tens);
      if (c > 0 || (c == 0 && ((out->digits[n - 1] - '0') & 1) != 0)) RoundUp(out);
    }
  }
}

// significand: normalized so bit 52 is set; value = significand * 2^(bin_exp-52).
// significant_bits: precision of the source type at this exponent (53 or 24
// for normal numbers, fewer for subnormals).
void JavaDigitsOf(uint64_t significand, int bin_exp, int significant_bits, JavaDigits* out) {
  const int tail_zeros = std::countr_zero(significand);
  const int fract_bits = 53 - tail_zeros;
  const int tiny_bits = fract_bits - bin_exp - 1 > 0 ? fract_bits - bin_exp - 1 : 0;
  if (tiny_bits == 0 && bin_exp <= 62) {
    // An integer below 2^63.
    int insignificant = 0;
    if (bin_exp > significant_bits) {
      int p2 = bin_exp - significant_bits - 1;
      // floor(log10(2^p2)) for 2 <= p2 < 64.
      if (p2 > 1 && p2 < 64) {
        for (uint64_t x = uint64_t{1} << p2; x >= 10; x /= 10) ++insignificant;
      }
    }
    uint64_t value = bin_exp >= 52 ? significand << (bin_exp - 52) : significand >> (52 - bin_exp);
    IntegerDigits(value, insignificant, out);
    return;
  }
  int dec_exp = EstimateDecimalExponent(significand, bin_exp);
  Scaled sc;
  sc.significand = significand >> tail_zeros;
  sc.b5 = dec_exp < 0 ? -dec_exp : 0;
  sc.b2 = sc.b5 + tiny_bits + bin_exp;
  sc.s5 = dec_exp > 0 ? dec_exp : 0;
  sc.s2 = sc.s5 + tiny_bits;
  sc.m5 = sc.b5;
  sc.m2 = sc.b2 - significant_bits;
  sc.b2 -= fract_bits - 1;
  int common = sc.b2 < sc.s2 ? sc.b2 : sc.s2;
  sc.b2 -= common;
  sc.s2 -= common;
  sc.m2 -= common;
  if (fract_bits == 1) sc.m2 -= 1;  // power of two: the lower gap is half as wide
  if (sc.m2 < 0) {
    sc.b2 -= sc.m2;
    sc.s2 -= sc.m2;
    sc.m2 = 0;
  }
  const int b_bits = fract_bits + sc.b2 + ApproxPow5Bits(sc.b5);
  const int ten_s_bits = sc.s2 + 1 + ApproxPow5Bits(sc.s5 + 1);
  if (b_bits < 32 && ten_s_bits < 32) {
    SmallDigits<int32_t>(sc, dec_exp, out);
  } else if (b_bits < 64 && ten_s_bits < 64) {
    SmallDigits<int64_t>(sc, dec_exp, out);
  } else if (b_bits <= 120 && ten_s_bits <= 120) {
    ExactDigits<Num128>(sc, dec_exp, out);
  } else {
    ExactDigits<BigNum>(sc, dec_exp, out);
  }
}

// Java's layout: plain "ddd.ddd" for 10^-3 <= |v| < 10^7, else "d.dddE[-]n".
size_t WriteJavaLayout(bool negative, const JavaDigits& d, char* buf) {
  char* p = buf;
  if (negative) *p++ = '-';
  const int e = d.dec_exponent;
  const int n = d.count;
  if (e > 0 && e < 8) {
    int int_digits = n < e ? n : e;
    std::memcpy(p, d.digits, int_digits);
    p += int_digits;
    if (int_digits < e) {
      std::memset(p, '0', e - int_digits);
      p += e - int_digits;
      *p++ = '.';
      *p++ = '0';
    } else {
      *p++ = '.';
      if (int_digits < n) {
        std::memcpy(p, d.digits + int_digits, n - int_digits);
        p += n - int_digits;
      } else {
        *p++ = '0';
      }
    }
  } else if (e <= 0 && e > -3) {
    *p++ = '0';
    *p++ = '.';
    std::memset(p, '0', -e);
    p += -e;
    std::memcpy(p, d.digits, n);
    p += n;
  } else {
    *p++ = d.digits[0];
    *p++ = '.';
    if (n > 1) {
      std::memcpy(p, d.digits + 1, n - 1);
      p += n - 1;
    } else {
      *p++ = '0';
    }
    *p++ = 'E';
    int x = e - 1;
    if (x < 0) {
      *p++ = '-';
      x = -x;
    }
    if (x >= 100) *p++ = static_cast<char>('0' + x / 100);
    if (x >= 10) *p++ = static_cast<char>('0' + x / 10 % 10);
    *p++ = static_cast<char>('0' + x % 10);
  }
  return static_cast<size_t>(p - buf);
}

size_t WriteNonFinite(bool nan, bool negative, char* buf) {
  const char* text = nan ? "NaN" : (negative ? "-Infinity" : "Infinity");
  size_t len = std::strlen(text);
  std::memcpy(buf, text, len);
  return len;
}

size_t WriteZero(bool negative, char* buf) {
  const char* text = negative ? "-0.0" : "0.0";
  size_t len = negative ? 4 : 3;
  std::memcpy(buf, text, len);
  return len;
}

// Writes Java's text for the value; returns its length (at most 32).
size_t JavaDoubleChars(uint64_t bits, char* buf) {
  const bool negative = (bits >> 63) != 0;
  const int biased = static_cast<int>((bits >> 52) & 0x7FF);
  uint64_t fraction = bits & ((uint64_t{1} << 52) - 1);
  if (biased == 0x7FF) {
    return WriteNonFinite(fraction != 0, negative, buf);
  }
  int bin_exp;
  int significant_bits;
  if (biased == 0) {
    if (fraction == 0) return WriteZero(negative, buf);
    int shift = std::countl_zero(fraction) - 11;
    fraction <<= shift;
    bin_exp = 1 - shift - 1023;
    significant_bits = 64 - std::countl_zero(bits & ((uint64_t{1} << 52) - 1));
  } else {
    fraction |= uint64_t{1} << 52;
    bin_exp = biased - 1023;
    significant_bits = 53;
  }
  JavaDigits d;
  JavaDigitsOf(fraction, bin_exp, significant_bits, &d);
  return WriteJavaLayout(negative, d, buf);
}

size_t JavaFloatChars(uint32_t bits, char* buf) {
  const bool negative = (bits >> 31) != 0;
  const int biased = static_cast<int>((bits >> 23) & 0xFF);
  uint32_t fraction = bits & ((uint32_t{1} << 23) - 1);
  if (biased == 0xFF) {
    return WriteNonFinite(fraction != 0, negative, buf);
  }
  int bin_exp;
  int significant_bits;
  if (biased == 0) {
    if (fraction == 0) return WriteZero(negative, buf);
    int leading = std::countl_zero(fraction);
    int shift = leading - 8;
    fraction <<= shift;
    bin_exp = 1 - shift - 127;
    significant_bits = 32 - leading;
  } else {
    fraction |= uint32_t{1} << 23;
    bin_exp = biased - 127;
    significant_bits = 24;
  }
  JavaDigits d;
  JavaDigitsOf(uint64_t{fraction} << 29, bin_exp, significant_bits, &d);
  return WriteJavaLayout(negative, d, buf);
}

}  // namespace

std::string FormatDoubleJava(double v) {
  char buf[40];
  return std::string(buf, JavaDoubleChars(std::bit_cast<uint64_t>(v), buf));
}

std::string FormatFloatJava(float v) {
  char buf[40];
  return std::string(buf, JavaFloatChars(std::bit_cast<uint32_t>(v), buf));
}

void AppendDoubleJava(std::string* out, double v) {
  char buf[40];
  out->append(buf, JavaDoubleChars(std::bit_cast<uint64_t>(v), buf));
}

}  // namespace silt
