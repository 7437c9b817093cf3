#include "silt/base/json_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "silt/base/clock.h"

namespace silt {
namespace {

TEST(JsonWriterTest, WritesCompactNestedJsonWithCommas) {
  JsonWriter w;
  w.BeginObject();
  w.Key("txn");
  w.BeginObject();
  w.Key("appId");
  w.String("q1");
  w.Key("version");
  w.Int(7);
  w.EndObject();
  w.Key("list");
  w.BeginArray();
  w.Int(1);
  w.Bool(false);
  w.Null();
  w.Raw("{\"a\":1}");
  w.EndArray();
  w.EndObject();
  EXPECT_EQ(w.str(), R"({"txn":{"appId":"q1","version":7},"list":[1,false,null,{"a":1}]})");
}

TEST(JsonWriterTest, MemberWritesKeyAndValueAsKeyThenValueDoes) {
  const std::string text = "s\"1";
  const uint64_t big = std::numeric_limits<uint64_t>::max();
  JsonWriter pairs;
  pairs.BeginObject();
  pairs.Key("a");
  pairs.String(text);
  pairs.Key("b");
  pairs.String("lit");
  pairs.Key("c");
  pairs.Int(-3);
  pairs.Key("d");
  pairs.UInt(big);
  pairs.Key("e");
  pairs.Bool(true);
  pairs.Key("f");
  pairs.Double(1.0);
  pairs.Key("g");
  pairs.Null();
  pairs.Key("h");
  pairs.Int(int32_t{7});
  pairs.EndObject();

  JsonWriter members;
  members.BeginObject();
  members.Member("a", text);
  members.Member("b", "lit");
  members.Member("c", -3);
  members.Member("d", big);
  members.Member("e", true);
  members.Member("f", 1.0);
  members.Member("g", nullptr);
  members.Member("h", int32_t{7});
  members.EndObject();
  EXPECT_EQ(members.str(), pairs.str());
  EXPECT_EQ(members.str(),
            "{\"a\":\"s\\\"1\",\"b\":\"lit\",\"c\":-3,\"d\":18446744073709551615,"
            "\"e\":true,\"f\":1.0,\"g\":null,\"h\":7}");
}

TEST(JsonWriterTest, EscapesQuotesBackslashesAndControlCharacters) {
  JsonWriter w;
  w.String(std::string("a\"b\\c\nd\x01\xc3\xa9", 10));
  EXPECT_EQ(w.str(), "\"a\\\"b\\\\c\\nd\\u0001\xc3\xa9\"");
}

TEST(JsonWriterTest, NonFiniteDoublesBecomeStrings) {
  JsonWriter w;
  w.BeginArray();
  w.Double(std::numeric_limits<double>::quiet_NaN());
  w.Double(-std::numeric_limits<double>::infinity());
  w.Double(2.5);
  w.EndArray();
  EXPECT_EQ(w.str(), R"(["NaN","-Infinity",2.5])");
}

TEST(FormatDoubleJavaTest, MatchesJavaDoubleToString) {
  EXPECT_EQ(FormatDoubleJava(84.3), "84.3");
  EXPECT_EQ(FormatDoubleJava(1.0), "1.0");
  EXPECT_EQ(FormatDoubleJava(-0.0), "-0.0");
  EXPECT_EQ(FormatDoubleJava(230.0), "230.0");
  EXPECT_EQ(FormatDoubleJava(0.001), "0.001");
  EXPECT_EQ(FormatDoubleJava(0.0001), "1.0E-4");
  EXPECT_EQ(FormatDoubleJava(1e7), "1.0E7");
  EXPECT_EQ(FormatDoubleJava(1234567.5), "1234567.5");
  EXPECT_EQ(FormatDoubleJava(1.5e300), "1.5E300");
  EXPECT_EQ(FormatDoubleJava(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(FormatFloatJava(0.1f), "0.1");
  EXPECT_EQ(FormatDoubleJava(std::nan("")), "NaN");
}

TEST(ClockTest, FormatsMillisUtcAndManualClockAdvances) {
  EXPECT_EQ(FormatTimestampMillisUtc(1750580160123456), "2025-06-22T08:16:00.123Z");
  EXPECT_EQ(FormatTimestampMillisUtc(-1), "1969-12-31T23:59:59.999Z");
  ManualClock clock(1000);
  clock.SleepMicros(500);
  EXPECT_EQ(clock.NowMicros(), 1500);
}

}  // namespace
}  // namespace silt
