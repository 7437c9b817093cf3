#include "silt/expr/value/decimal_util.h"

#include <gtest/gtest.h>

namespace silt::expr {
namespace {

std::string Java(int128 v, int scale) {
  std::string out;
  AppendDecimalJava(v, scale, &out);
  return out;
}

std::string Plain(int128 v, int scale) {
  std::string out;
  AppendDecimalPlain(v, scale, &out);
  return out;
}

std::string Parsed(std::string_view text, int precision, int scale) {
  int128 v = 0;
  bool overflow = false;
  if (!ParseDecimal(text, precision, scale, &v, &overflow)) {
    return overflow ? "overflow" : "invalid";
  }
  return Plain(v, scale);
}

TEST(DecimalUtilTest, PrintsLikeJavaBigDecimal) {
  EXPECT_EQ(Java(0, 18), "0E-18");
  EXPECT_EQ(Java(100, 10), "1.00E-8");
  EXPECT_EQ(Java(1, 6), "0.000001");
  EXPECT_EQ(Java(1, 7), "1E-7");
  EXPECT_EQ(Java(-12345, 2), "-123.45");
  EXPECT_EQ(Java(42, 0), "42");
  EXPECT_EQ(Plain(0, 18), "0.000000000000000000");
  EXPECT_EQ(Plain(-5, 3), "-0.005");
}

TEST(DecimalUtilTest, ParsesLikeBigDecimalAndRoundsHalfUp) {
  EXPECT_EQ(Parsed("12.345", 5, 2), "12.35");
  EXPECT_EQ(Parsed("12.344", 5, 2), "12.34");
  EXPECT_EQ(Parsed("-12.345", 5, 2), "-12.35");
  EXPECT_EQ(Parsed("1e2", 5, 2), "100.00");
  EXPECT_EQ(Parsed("1.5E-1", 5, 2), "0.15");
  EXPECT_EQ(Parsed("  .5 ", 3, 1), "0.5");
  EXPECT_EQ(Parsed("5.", 3, 1), "5.0");
  EXPECT_EQ(Parsed("0.0000000000000000000000000000000000000000001", 10, 2), "0.00");
  EXPECT_EQ(Parsed("00012", 2, 0), "12");
  EXPECT_EQ(Parsed("999.995", 5, 2), "overflow");
  EXPECT_EQ(Parsed("1e40", 38, 0), "overflow");
  EXPECT_EQ(Parsed("", 5, 2), "invalid");
  EXPECT_EQ(Parsed("1e", 5, 2), "invalid");
  EXPECT_EQ(Parsed("abc", 5, 2), "invalid");
  EXPECT_EQ(Parsed("Infinity", 5, 2), "invalid");
}

TEST(DecimalUtilTest, RescaleRoundsHalfAwayFromZero) {
  int128 out = 0;
  ASSERT_TRUE(RescaleDecimal(125, 2, 1, 5, &out));
  EXPECT_EQ(Plain(out, 1), "1.3");
  ASSERT_TRUE(RescaleDecimal(-125, 2, 1, 5, &out));
  EXPECT_EQ(Plain(out, 1), "-1.3");
  ASSERT_TRUE(RescaleDecimal(5, 0, 3, 5, &out));
  EXPECT_EQ(Plain(out, 3), "5.000");
  EXPECT_FALSE(RescaleDecimal(100, 0, 3, 5, &out));  // 100.000 needs 6 digits
}

TEST(DecimalUtilTest, WideArithmeticCarriesPast128Bits) {
  U256 big = Pow10U256(70);
  U256 product;
  ASSERT_TRUE(MulU256(Pow10U256(35), Pow10U256(35), &product));
  EXPECT_EQ(CompareU256(big, product), 0);
  U256 q;
  U256 r;
  DivModU256(product, Pow10U256(33), &q, &r);
  EXPECT_EQ(CompareU256(q, Pow10U256(37)), 0);
  EXPECT_TRUE(r.IsZero());
  U256 overflow;
  EXPECT_FALSE(MulU256(Pow10U256(40), Pow10U256(40), &overflow));
  WideDecimal w = ToWide(-15);
  WideDecimal rounded = DivPow10HalfUp(w, 1);
  int128 out = 0;
  ASSERT_TRUE(WideToDecimal(rounded, 5, &out));
  EXPECT_EQ(static_cast<int64_t>(out), -2);
}

}  // namespace
}  // namespace silt::expr
