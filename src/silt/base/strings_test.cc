#include "silt/base/strings.h"

#include <gtest/gtest.h>

namespace silt {
namespace {

TEST(StringsTest, CaseFoldsAsciiLettersOnly) {
  EXPECT_EQ(AsciiLower('Q'), 'q');
  EXPECT_EQ(AsciiLower('['), '[');
  EXPECT_EQ(AsciiUpper('q'), 'Q');
  EXPECT_EQ(AsciiUpper('{'), '{');
  // "ÄB" in UTF-8: the multi-byte letter stays as it is.
  EXPECT_EQ(AsciiLower("\xC3\x84"
                       "B-1_z"),
            "\xC3\x84"
            "b-1_z");
  EXPECT_EQ(AsciiUpper("\xC3\xA4"
                       "b-1_Z"),
            "\xC3\xA4"
            "B-1_Z");
  std::string s = "Delta.AppendOnly";
  AsciiLowerInPlace(&s);
  EXPECT_EQ(s, "delta.appendonly");
}

TEST(StringsTest, ComparesIgnoringAsciiCase) {
  EXPECT_TRUE(EqualsIgnoreCase("Content-Length", "content-LENGTH"));
  EXPECT_TRUE(EqualsIgnoreCase("", ""));
  EXPECT_FALSE(EqualsIgnoreCase("abc", "abcd"));
  EXPECT_FALSE(EqualsIgnoreCase("\xC3\x84", "\xC3\xA4"));
  EXPECT_FALSE(EqualsIgnoreCase("a@", "a`"));
  EXPECT_TRUE(StartsWithIgnoreCase("FILE:///tmp", "file:/"));
  EXPECT_TRUE(StartsWithIgnoreCase("s3", ""));
  EXPECT_FALSE(StartsWithIgnoreCase("fil", "file"));
}

TEST(StringsTest, AllDigitsNeedsAtLeastOneDigit) {
  EXPECT_TRUE(AllDigits("00000000000000000012"));
  EXPECT_TRUE(AllDigits("7"));
  EXPECT_FALSE(AllDigits(""));
  EXPECT_FALSE(AllDigits("-1"));
  EXPECT_FALSE(AllDigits("1 "));
  EXPECT_FALSE(AllDigits("12a"));
}

TEST(StringsTest, TrimsTheGivenCharacters) {
  EXPECT_EQ(TrimAscii(" \t\v\f\r\nx y\n "), "x y");
  EXPECT_EQ(TrimAscii(" \t \n"), "");
  EXPECT_EQ(TrimAscii(""), "");
  EXPECT_EQ(TrimAscii("\vx\v", " \t"), "\vx\v");
  EXPECT_EQ(TrimAscii("--x-", "-"), "x");
}

TEST(StringsTest, JavaTrimStripsSpaceAndControls) {
  EXPECT_EQ(JavaTrim(std::string_view("\x01 \t2024-01-01\x1f\0", 15)), "2024-01-01");
  EXPECT_EQ(JavaTrim("\xC2\xA0x"), "\xC2\xA0x");
  EXPECT_EQ(JavaTrim(" \x7f "), "\x7f");
  EXPECT_EQ(JavaTrim("  "), "");
}

}  // namespace
TEST(StringsTest, EditDistanceCountsSwapsAsOneEditAndIgnoresCase) {
  EXPECT_EQ(EditDistanceIgnoreCase("", ""), 0u);
  EXPECT_EQ(EditDistanceIgnoreCase("abc", ""), 3u);
  EXPECT_EQ(EditDistanceIgnoreCase("startingOffset", "startingOffsets"), 1u);
  EXPECT_EQ(EditDistanceIgnoreCase("sbuscribe", "subscribe"), 1u);
  EXPECT_EQ(EditDistanceIgnoreCase("MaxOffsetsPerTrigger", "maxoffsetspertrigger"), 0u);
  EXPECT_EQ(EditDistanceIgnoreCase("kitten", "sitting"), 3u);
}

TEST(StringsTest, ClosestNameSuggestsOnlyPlausibleTypos) {
  const std::string_view names[] = {"subscribe", "subscribePattern", "startingOffsets"};
  EXPECT_EQ(ClosestName("startingOffset", names), "startingOffsets");
  EXPECT_EQ(ClosestName("subscrbe", names), "subscribe");
  EXPECT_EQ(ClosestName("topic", names), "");
  EXPECT_EQ(ClosestName("", names), "");
  const std::string owned[] = {"count", "concat"};
  EXPECT_EQ(ClosestName("cout", owned), "count");
}

}  // namespace silt
