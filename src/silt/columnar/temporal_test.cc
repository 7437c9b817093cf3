#include "silt/columnar/temporal.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace silt::columnar {
namespace {

constexpr int64_t kSummerMicros = 1782116160123456LL;   // 2026-06-22T08:16:00.123456Z
constexpr int64_t kNewYearMicros = 1577934245000000LL;  // 2020-01-02T03:04:05Z
constexpr int64_t kHour = 3600 * kMicrosPerSecond;

TEST(CivilDateTest, KnownDates) {
  EXPECT_EQ(DaysFromCivil(1970, 1, 1), 0);
  EXPECT_EQ(DaysFromCivil(2026, 6, 22), 20626);
  EXPECT_EQ(DaysFromCivil(2000, 2, 29), 11016);
  EXPECT_EQ(DaysFromCivil(1, 1, 1), -719162);
  EXPECT_EQ(DaysFromCivil(9999, 12, 31), 2932896);
  EXPECT_EQ(DaysFromCivil(1969, 12, 31), -1);
}

TEST(CivilDateTest, RoundTripsEveryDayOverCenturiesIncludingNegativeYears) {
  int32_t previous_year = -1000;
  for (int32_t days = DaysFromCivil(-1000, 1, 1); days <= DaysFromCivil(3000, 12, 31); ++days) {
    CivilDate date = CivilFromDays(days);
    ASSERT_EQ(DaysFromCivil(date.year, date.month, date.day), days);
    ASSERT_GE(date.month, 1);
    ASSERT_LE(date.month, 12);
    ASSERT_GE(date.day, 1);
    ASSERT_LE(date.day, 31);
    ASSERT_TRUE(date.year == previous_year || date.year == previous_year + 1);
    previous_year = date.year;
  }
}

TEST(FormatTest, FormatsDates) {
  EXPECT_EQ(FormatDate(0), "1970-01-01");
  EXPECT_EQ(FormatDate(20626), "2026-06-22");
  EXPECT_EQ(FormatDate(-1), "1969-12-31");
  EXPECT_EQ(FormatDate(-719162), "0001-01-01");
  EXPECT_EQ(FormatDate(DaysFromCivil(0, 12, 31)), "0000-12-31");
  EXPECT_EQ(FormatDate(DaysFromCivil(-1, 12, 31)), "-0001-12-31");
  EXPECT_EQ(FormatDate(DaysFromCivil(10000, 1, 1)), "+10000-01-01");
}

TEST(FormatTest, FormatsUtcTimestampsWithChosenPrecision) {
  EXPECT_EQ(FormatTimestampUtc(kSummerMicros), "2026-06-22T08:16:00.123456Z");
  EXPECT_EQ(FormatTimestampUtc(kSummerMicros, 3), "2026-06-22T08:16:00.123Z");
  EXPECT_EQ(FormatTimestampUtc(kSummerMicros, 0), "2026-06-22T08:16:00Z");
  EXPECT_EQ(FormatTimestampUtc(kSummerMicros, -1), "2026-06-22T08:16:00.123456Z");
  EXPECT_EQ(FormatTimestampUtc(kNewYearMicros, -1), "2020-01-02T03:04:05Z");
  EXPECT_EQ(FormatTimestampUtc(kNewYearMicros + 120000, -1), "2020-01-02T03:04:05.120Z");
  EXPECT_EQ(FormatTimestampUtc(kNewYearMicros, 6, false), "2020-01-02T03:04:05.000000+00:00");
  EXPECT_EQ(FormatTimestampUtc(0, 3), "1970-01-01T00:00:00.000Z");
}

TEST(FormatTest, FormatsNegativeTimestamps) {
  EXPECT_EQ(FormatTimestampUtc(-1), "1969-12-31T23:59:59.999999Z");
  EXPECT_EQ(FormatTimestampPlain(-1500000), "1969-12-31 23:59:58.500");
  EXPECT_EQ(FormatTimestampPlain(-2203613632110000LL), "1900-03-04 05:06:07.890");
  EXPECT_EQ(FormatTimestampPlain(-kMicrosPerDay), "1969-12-31 00:00:00");
  EXPECT_EQ(DaysFromMicros(-1), -1);
  EXPECT_EQ(DaysFromMicros(-kMicrosPerDay), -1);
  EXPECT_EQ(DaysFromMicros(-kMicrosPerDay - 1), -2);
}

TEST(FormatTest, PlainFormIsShortestExactByDefault) {
  EXPECT_EQ(FormatTimestampPlain(kNewYearMicros), "2020-01-02 03:04:05");
  EXPECT_EQ(FormatTimestampPlain(kSummerMicros), "2026-06-22 08:16:00.123456");
  EXPECT_EQ(FormatTimestampPlain(kNewYearMicros, 6), "2020-01-02 03:04:05.000000");
}

TEST(FormatTest, TimestampTextDropsTrailingFractionZeros) {
  auto text = [](int64_t micros) {
    std::string out = "<";
    AppendTimestampText(micros, &out);
    return out;
  };
  EXPECT_EQ(text(kNewYearMicros), "<2020-01-02 03:04:05");
  EXPECT_EQ(text(kNewYearMicros + 120000), "<2020-01-02 03:04:05.12");
  EXPECT_EQ(text(kNewYearMicros + 1), "<2020-01-02 03:04:05.000001");
  EXPECT_EQ(text(kSummerMicros), "<2026-06-22 08:16:00.123456");
  EXPECT_EQ(text(-1), "<1969-12-31 23:59:59.999999");
  EXPECT_EQ(text(-1500000), "<1969-12-31 23:59:58.5");
  EXPECT_EQ(text(int64_t{DaysFromCivil(10000, 1, 1)} * kMicrosPerDay), "<+10000-01-01 00:00:00");
}

TEST(ParseDateTest, AcceptsSparkDateForms) {
  EXPECT_EQ(ParseDate("2026-06-22"), 20626);
  EXPECT_EQ(ParseDate("2026-6-22"), 20626);
  EXPECT_EQ(ParseDate("  2026-06-22 \n"), 20626);
  EXPECT_EQ(ParseDate("2026-06-22T08:16:00Z"), 20626);
  EXPECT_EQ(ParseDate("2026-06-22 anything"), 20626);
  EXPECT_EQ(ParseDate("2026"), DaysFromCivil(2026, 1, 1));
  EXPECT_EQ(ParseDate("2026-06"), DaysFromCivil(2026, 6, 1));
  EXPECT_EQ(ParseDate("2000-1-1"), DaysFromCivil(2000, 1, 1));
  EXPECT_EQ(ParseDate("-0001-12-31"), DaysFromCivil(-1, 12, 31));
  EXPECT_EQ(ParseDate("+10000-01-01"), DaysFromCivil(10000, 1, 1));
}

TEST(ParseDateTest, RejectsNonDates) {
  EXPECT_EQ(ParseDate(""), std::nullopt);
  EXPECT_EQ(ParseDate("   "), std::nullopt);
  EXPECT_EQ(ParseDate("26-06-22"), std::nullopt);
  EXPECT_EQ(ParseDate("2026-13-01"), std::nullopt);
  EXPECT_EQ(ParseDate("2026-02-29"), std::nullopt);
  EXPECT_EQ(ParseDate("2026-06-31"), std::nullopt);
  EXPECT_EQ(ParseDate("2026-06-22x"), std::nullopt);
  EXPECT_EQ(ParseDate("2026-06 01"), std::nullopt);
  EXPECT_EQ(ParseDate("2026-006-01"), std::nullopt);
  EXPECT_EQ(ParseDate("hello"), std::nullopt);
  EXPECT_EQ(ParseDate("2026/06/22"), std::nullopt);
}

TEST(ParseTimestampTest, AcceptsSparkCastForms) {
  EXPECT_EQ(ParseTimestamp("2020-01-02 03:04:05"), kNewYearMicros);
  EXPECT_EQ(ParseTimestamp("2020-01-02T03:04:05"), kNewYearMicros);
  EXPECT_EQ(ParseTimestamp("2020-1-2 3:4:5"), kNewYearMicros);
  EXPECT_EQ(ParseTimestamp("  2020-01-02 03:04:05  "), kNewYearMicros);
  EXPECT_EQ(ParseTimestamp("2020-01-02T03:04:05Z"), kNewYearMicros);
  EXPECT_EQ(ParseTimestamp("2020-01-02 03:04:05 UTC"), kNewYearMicros);
  EXPECT_EQ(ParseTimestamp("2020-01-02 03:04:05UTC"), kNewYearMicros);
  EXPECT_EQ(ParseTimestamp("2026-06-22T08:16:00.123456Z"), kSummerMicros);
  EXPECT_EQ(ParseTimestamp("2026-06-22T08:16:00.123456789Z"), kSummerMicros);
  EXPECT_EQ(ParseTimestamp("2026-06-22T08:16:00.1Z"), kSummerMicros - 23456);
  EXPECT_EQ(ParseTimestamp("2020-01-02 03:04"), kNewYearMicros - 5 * kMicrosPerSecond);
  EXPECT_EQ(ParseTimestamp("2020-01-02"),
            kNewYearMicros - (3 * 3600 + 4 * 60 + 5) * kMicrosPerSecond);
  EXPECT_EQ(ParseTimestamp("2020-01-02T"), ParseTimestamp("2020-01-02"));
  EXPECT_EQ(ParseTimestamp("2020"), ParseTimestamp("2020-01-01 00:00:00"));
  EXPECT_EQ(ParseTimestamp("2020-03"), ParseTimestamp("2020-03-01 00:00:00"));
}

TEST(ParseTimestampTest, AppliesZoneOffsets) {
  EXPECT_EQ(ParseTimestamp("2020-01-02T05:04:05+02:00"), kNewYearMicros);
  EXPECT_EQ(ParseTimestamp("2020-01-02T05:04:05+0200"), kNewYearMicros);
  EXPECT_EQ(ParseTimestamp("2020-01-02T05:04:05+02"), kNewYearMicros);
  EXPECT_EQ(ParseTimestamp("2020-01-02T05:04:05+2"), kNewYearMicros);
  EXPECT_EQ(ParseTimestamp("2020-01-02T01:34:05-01:30"), kNewYearMicros);
  EXPECT_EQ(ParseTimestamp("2020-01-02T05:04:05 UTC+02:00"), kNewYearMicros);
  EXPECT_EQ(ParseTimestamp("2020-01-02T05:04:05GMT+2"), kNewYearMicros);
  EXPECT_EQ(ParseTimestamp("2020-01-02T05:04:05.000+02:00"), kNewYearMicros);
}

TEST(ParseTimestampTest, StringsWithoutZoneUseTheSessionOffset) {
  EXPECT_EQ(ParseTimestamp("2020-01-02 05:04:05", 2 * kHour), kNewYearMicros);
  // An explicit zone wins over the session offset.
  EXPECT_EQ(ParseTimestamp("2020-01-02 03:04:05Z", 2 * kHour), kNewYearMicros);
}

TEST(ParseTimestampTest, HandlesTimestampsBeforeTheEpoch) {
  EXPECT_EQ(ParseTimestamp("1969-12-31 23:59:59.999999"), -1);
  EXPECT_EQ(ParseTimestamp("1900-03-04 05:06:07.89"), -2203613632110000LL);
  std::optional<int64_t> ancient = ParseTimestamp("-0044-03-15 12:00:00");
  ASSERT_TRUE(ancient.has_value());
  EXPECT_EQ(FormatTimestampPlain(*ancient), "-0044-03-15 12:00:00");
}

TEST(ParseTimestampTest, RejectsNonTimestamps) {
  EXPECT_EQ(ParseTimestamp(""), std::nullopt);
  EXPECT_EQ(ParseTimestamp("not a time"), std::nullopt);
  EXPECT_EQ(ParseTimestamp("2020-01-02 24:00:00"), std::nullopt);
  EXPECT_EQ(ParseTimestamp("2020-01-02 03:60:00"), std::nullopt);
  EXPECT_EQ(ParseTimestamp("2020-01-02 03:04:60"), std::nullopt);
  EXPECT_EQ(ParseTimestamp("2020-01-02 03:04:05."), std::nullopt);
  EXPECT_EQ(ParseTimestamp("2020-01-02 03:04:05.1234567890"), std::nullopt);
  EXPECT_EQ(ParseTimestamp("2020-01-02 03:04:05 Mars/Base"), std::nullopt);
  EXPECT_EQ(ParseTimestamp("2020-01-02 03:04:05+19:00"), std::nullopt);
  EXPECT_EQ(ParseTimestamp("2020-02-30 00:00:00"), std::nullopt);
  EXPECT_EQ(ParseTimestamp("2020-01-02 123:04:05"), std::nullopt);
  EXPECT_EQ(ParseTimestamp("2020-01 03:04:05"), std::nullopt);
  EXPECT_EQ(ParseTimestamp("9999999-12-31 23:59:59"), std::nullopt);  // overflows int64 micros
  // Near misses of the fixed-width "yyyy-mm-dd hh:mm:ss" fast path.
  EXPECT_EQ(ParseTimestamp("2020-01-02 03:04:051"), std::nullopt);
  EXPECT_EQ(ParseTimestamp("2020-01-02T0a:04:05"), std::nullopt);
  EXPECT_EQ(ParseTimestamp("2020-01-02T03:04:05.5x"), std::nullopt);
  EXPECT_EQ(ParseTimestamp("2020-13-02T03:04:05"), std::nullopt);
  EXPECT_EQ(ParseTimestamp("2020-01-02X03:04:05"), std::nullopt);
}

TEST(ParseTimestampTest, FormatThenParseRoundTrips) {
  for (int64_t micros : {int64_t{0}, int64_t{-1}, kSummerMicros, -kSummerMicros,
                         int64_t{253402300799999999}, int64_t{-62135596800000000}}) {
    EXPECT_EQ(ParseTimestamp(FormatTimestampUtc(micros)), micros) << micros;
    EXPECT_EQ(ParseTimestamp(FormatTimestampPlain(micros)), micros) << micros;
  }
}

TEST(TimestampParserTest, GivesParseTimestampsResultForEveryText) {
  // One parser over a sequence that repeats, changes and breaks the
  // remembered "yyyy-mm-ddThh:mm:ss" start: every text reads as
  // ParseTimestamp reads it alone, under two default offsets.
  const std::vector<std::string> texts = {
      "2026-06-22T08:16:00.123Z",
      "2026-06-22T08:16:00.456Z",
      "2026-06-22T08:16:00",
      "2026-06-22T08:16:00 ",
      "2026-06-22T08:16:001",
      "2026-06-22T08:16:00+02:00",
      "2026-06-22 08:16:00.5 UTC",
      "2026-06-22T08:16:00x",
      "2026-06-22T08:16:01.000001Z",
      "  2026-06-22T08:16:01Z",
      "2026-02-30T08:16:01Z",
      "2026-02-30T08:16:01Z",
      "2026-02-30T09:16:01Z",
      "2026-06-22T24:16:01Z",
      "2026-06-22T24:16:01Z",
      "2026-06-22T08:16:01.1234567891Z",
      "2026-06-22",
      "2026-06-22T08:16:01",
      "2026-06-22X08:16:01",
      "2026-6-22T08:16:01",
      "2026-06-22T08:16:01",
      // Same date as the remembered start, other times, good and broken.
      "2026-06-22T09:00:59.9Z",
      "2026-06-22 09:00:58",
      "2026-06-22T0x:00:58Z",
      "2026-06-22T09-00-58Z",
      "2026-06-22T23:59:59.999999999Z",
      "2026-06-22T09:60:00Z",
      "2026-06-23T00:00:00Z",
      "2026-06-22T09:00:59.9Z",
      "",
  };
  for (int64_t offset : {int64_t{0}, int64_t{-3600} * kMicrosPerSecond}) {
    TimestampParser parser;
    for (int round = 0; round < 2; ++round) {
      for (const std::string& text : texts) {
        EXPECT_EQ(parser.Parse(text, offset), ParseTimestamp(text, offset))
            << "'" << text << "' at offset " << offset;
      }
    }
  }
  TimestampParser parser;
  EXPECT_EQ(parser.Parse("2026-06-22T08:16:00.123456Z"), kSummerMicros);
  EXPECT_EQ(parser.Parse("2026-06-22T08:16:00.123457Z"), kSummerMicros + 1);
  EXPECT_EQ(parser.Parse("2026-06-22T08:16:60.123457Z"), std::nullopt);
}

TEST(TimestampParserTest, CanonicalShapeReadsAsTheGeneralReaderReadsIt) {
  // The same instants without leading zeros are not the canonical shape,
  // so ParseTimestamp reads them with its general reader; the parser's
  // canonical path (with and without a remembered date) must agree.
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"2026-06-02T08:06:00.123Z", "2026-6-2T8:6:0.123Z"},
      {"2026-06-02T09:06:05.5Z", "2026-6-2T9:6:5.5Z"},
      {"2026-06-02T09:06:05.123456789Z", "2026-6-2T9:6:5.123456789Z"},
      {"2026-06-02 23:59:59+02:00", "2026-6-2 23:59:59+02:00"},
      {"2024-02-29T00:00:01.000001Z", "2024-2-29T0:0:1.000001Z"},
      {"2024-02-29T00:00:02 UTC", "2024-2-29T0:0:2 UTC"},
      {"1969-12-01T03:04:05.9-01:00", "1969-12-1T3:4:5.9-01:00"},
  };
  TimestampParser parser;
  for (const auto& [canonical, general] : pairs) {
    const std::optional<int64_t> expected = ParseTimestamp(general);
    ASSERT_TRUE(expected.has_value()) << general;
    EXPECT_EQ(parser.Parse(canonical), expected) << canonical;
    EXPECT_EQ(ParseTimestamp(canonical), expected) << canonical;
  }
}

}  // namespace
}  // namespace silt::columnar
