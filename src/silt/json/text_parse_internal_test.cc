#include "silt/json/text_parse_internal.h"

#include <gtest/gtest.h>

#include <string>

namespace silt::json::internal {
namespace {

// Unscaled value of `text` at DECIMAL(precision, scale), or "null".
std::string Dec(std::string_view text, int precision, int scale) {
  __int128 v = 0;
  if (!ParseDecimalText(text, precision, scale, &v)) return "null";
  bool negative = v < 0;
  unsigned __int128 u = negative ? -static_cast<unsigned __int128>(v) : v;
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  } while (u != 0);
  return negative ? "-" + digits : digits;
}

TEST(ParseDecimalTextTest, RoundsHalfUpAwayFromZero) {
  EXPECT_EQ(Dec("2.675", 5, 2), "268");
  EXPECT_EQ(Dec("-2.675", 5, 2), "-268");
  EXPECT_EQ(Dec("2.674999", 5, 2), "267");
  EXPECT_EQ(Dec("0.005", 5, 2), "1");
  EXPECT_EQ(Dec("0.004", 5, 2), "0");
  EXPECT_EQ(Dec("0.0000001", 5, 2), "0");
}

TEST(ParseDecimalTextTest, AcceptsBigDecimalGrammar) {
  EXPECT_EQ(Dec("+1.5", 5, 1), "15");
  EXPECT_EQ(Dec(".5", 5, 1), "5");
  EXPECT_EQ(Dec("5.", 5, 1), "50");
  EXPECT_EQ(Dec("1e2", 5, 0), "100");
  EXPECT_EQ(Dec("1.25E-1", 5, 3), "125");
  EXPECT_EQ(Dec("0000.10", 5, 2), "10");
  EXPECT_EQ(Dec("-0", 5, 2), "0");
}

TEST(ParseDecimalTextTest, RejectsNonNumbers) {
  for (std::string_view bad : {"", "-", ".", "1e", "1e+", "abc", " 1", "1 ", "1.2.3", "0x10", "NaN",
                               "1,000", "1e99999999999"}) {
    EXPECT_EQ(Dec(bad, 10, 2), "null") << bad;
  }
}

TEST(ParseDecimalTextTest, OverflowsPrecisionAfterRounding) {
  EXPECT_EQ(Dec("999.99", 5, 2), "99999");
  EXPECT_EQ(Dec("999.995", 5, 2), "null");  // rounds to 1000.00: 6 digits
  EXPECT_EQ(Dec("1000", 5, 2), "null");
  EXPECT_EQ(Dec("1e3", 5, 2), "null");
  EXPECT_EQ(Dec("99999999999999999999999999999999999999", 38, 0),
            "99999999999999999999999999999999999999");
  EXPECT_EQ(Dec("100000000000000000000000000000000000000", 38, 0), "null");
  EXPECT_EQ(Dec("-12345678901234567890.123456789012345678", 38, 18),
            "-12345678901234567890123456789012345678");
}

TEST(DecodeBase64Test, DecodesPaddedGroupsAndSkipsSpaceBetweenGroups) {
  std::string out;
  ASSERT_TRUE(DecodeBase64("aGVsbG8=", &out));
  EXPECT_EQ(out, "hello");
  ASSERT_TRUE(DecodeBase64("aGk=", &out));
  EXPECT_EQ(out, "hi");
  ASSERT_TRUE(DecodeBase64("aGVs bG8h", &out));
  EXPECT_EQ(out, "hello!");
  ASSERT_TRUE(DecodeBase64("", &out));
  EXPECT_EQ(out, "");
  ASSERT_TRUE(DecodeBase64("AP8=", &out));
  EXPECT_EQ(out, std::string("\x00\xff", 2));
}

TEST(DecodeBase64Test, RejectsBadCharactersAndMissingPadding) {
  std::string out;
  EXPECT_FALSE(DecodeBase64("aGVsbG8", &out));
  EXPECT_FALSE(DecodeBase64("aG=s", &out));
  EXPECT_FALSE(DecodeBase64("a!==", &out));
  EXPECT_FALSE(DecodeBase64("aG Vs", &out));
}

TEST(ParseJavaIntTest, FollowsIntegerParseInt) {
  int32_t v = 0;
  ASSERT_TRUE(ParseJavaInt("19000", &v));
  EXPECT_EQ(v, 19000);
  ASSERT_TRUE(ParseJavaInt("-2147483648", &v));
  EXPECT_EQ(v, INT32_MIN);
  ASSERT_TRUE(ParseJavaInt("+7", &v));
  EXPECT_EQ(v, 7);
  EXPECT_FALSE(ParseJavaInt("2147483648", &v));
  EXPECT_FALSE(ParseJavaInt("", &v));
  EXPECT_FALSE(ParseJavaInt("-", &v));
  EXPECT_FALSE(ParseJavaInt("1.0", &v));
}

}  // namespace
}  // namespace silt::json::internal

namespace silt::json::internal {
namespace {

TEST(RewriteLaxUtf8Test, ReadsUtf8AsJacksonsByteParserDoes) {
  std::string out;
  // Valid text is kept.
  RewriteLaxUtf8("caf\xc3\xa9 \xf0\x9f\x98\x80", &out);
  EXPECT_EQ(out, "caf\xc3\xa9 \xf0\x9f\x98\x80");
  // Overlong forms decode; encoded surrogates become UTF-16 units.
  RewriteLaxUtf8("a\xc0\xafz", &out);
  EXPECT_EQ(out, "a\\u002Fz");
  RewriteLaxUtf8("\xed\xa0\x80", &out);
  EXPECT_EQ(out, "\\uD800");
  // What the byte parser fails on becomes a bad escape: a byte that starts
  // no sequence, a sequence with its bad continuation (here the quote), a
  // sequence cut by the end.
  RewriteLaxUtf8("ab\xffz", &out);
  EXPECT_EQ(out, "ab\\uZz");
  RewriteLaxUtf8("x\xc3\"y", &out);
  EXPECT_EQ(out, "x\\uZy");
  RewriteLaxUtf8("caf\xc3", &out);
  EXPECT_EQ(out, "caf\\uZ");
}

}  // namespace
}  // namespace silt::json::internal
