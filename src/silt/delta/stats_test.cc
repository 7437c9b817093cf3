#include "silt/delta/stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "silt/columnar/builder.h"
#include "silt/columnar/temporal.h"

namespace silt::delta {
namespace {

using columnar::ColumnBuilder;
using columnar::DataType;
using columnar::Field;

template <typename T>
columnar::ColumnPtr Scalar(const columnar::TypePtr& type, T v) {
  ColumnBuilder b(type);
  if constexpr (std::is_same_v<T, std::string_view>) {
    b.AppendString(v);
  } else {
    b.Append<T>(v);
  }
  return b.Finish();
}

parquet::ColumnStats Stats(std::string name, int64_t nulls, columnar::ColumnPtr min,
                           columnar::ColumnPtr max) {
  return parquet::ColumnStats{std::move(name), nulls, std::move(min), std::move(max)};
}

int64_t Micros(int y, int mo, int d, int h, int mi, int s, int64_t frac_micros) {
  return int64_t{columnar::DaysFromCivil(y, mo, d)} * columnar::kMicrosPerDay +
         (h * 3600 + mi * 60 + s) * columnar::kMicrosPerSecond + frac_micros;
}

TEST(EncodeStatsTest, ExactTextForASmallFile) {
  auto schema = DataType::Struct(
      {Field{"device_id", DataType::String()}, Field{"battery", DataType::Int()},
       Field{"power", DataType::Double()}, Field{"contact", DataType::Boolean()},
       Field{"event_time", DataType::Timestamp()}, Field{"day", DataType::Date()},
       Field{"amount", DataType::Decimal(10, 2)}, Field{"raw", DataType::Binary()}});
  parquet::WriteResult result;
  result.num_rows = 3;
  result.file_size = 1000;
  result.column_stats = {
      Stats("device_id", 0, Scalar<std::string_view>(DataType::String(), "plug-1"),
            Scalar<std::string_view>(DataType::String(), "plug-3")),
      Stats("battery", 1, Scalar<int32_t>(DataType::Int(), 7),
            Scalar<int32_t>(DataType::Int(), 98)),
      Stats("power", 0, Scalar<double>(DataType::Double(), 1.5),
            Scalar<double>(DataType::Double(), 84.3)),
      Stats("contact", 2, nullptr, nullptr),
      Stats("event_time", 0,
            Scalar<int64_t>(DataType::Timestamp(), Micros(2026, 6, 22, 8, 16, 0, 123999)),
            Scalar<int64_t>(DataType::Timestamp(), Micros(2026, 6, 22, 9, 0, 0, 5))),
      Stats("day", 0, Scalar<int32_t>(DataType::Date(), columnar::DaysFromCivil(2026, 6, 22)),
            Scalar<int32_t>(DataType::Date(), columnar::DaysFromCivil(2026, 6, 23))),
      Stats("amount", 0, Scalar<__int128>(DataType::Decimal(10, 2), -150),
            Scalar<__int128>(DataType::Decimal(10, 2), 12345)),
      Stats("raw", 3, nullptr, nullptr),
  };
  EXPECT_EQ(EncodeStats(result, *schema),
            R"({"numRecords":3,)"
            R"("minValues":{"device_id":"plug-1","battery":7,"power":1.5,)"
            R"("event_time":"2026-06-22T08:16:00.123Z","day":"2026-06-22","amount":-1.50},)"
            R"("maxValues":{"device_id":"plug-3","battery":98,"power":84.3,)"
            R"("event_time":"2026-06-22T09:00:00.000Z","day":"2026-06-23","amount":123.45},)"
            R"("nullCount":{"device_id":0,"battery":1,"power":0,"contact":2,"event_time":0,)"
            R"("day":0,"amount":0,"raw":3}})");
}

TEST(EncodeStatsTest, OnlyTheFirstIndexedColumnsAreCovered) {
  auto schema = DataType::Struct(
      {Field{"a", DataType::Long()}, Field{"b", DataType::Long()}, Field{"c", DataType::Long()}});
  parquet::WriteResult result;
  result.num_rows = 1;
  for (const char* name : {"a", "b", "c"}) {
    result.column_stats.push_back(
        Stats(name, 0, Scalar<int64_t>(DataType::Long(), 1), Scalar<int64_t>(DataType::Long(), 2)));
  }
  EXPECT_EQ(EncodeStats(result, *schema, 2),
            R"({"numRecords":1,"minValues":{"a":1,"b":1},"maxValues":{"a":2,"b":2},)"
            R"("nullCount":{"a":0,"b":0}})");
  EXPECT_EQ(EncodeStats(result, *schema, 0),
            R"({"numRecords":1,"minValues":{},"maxValues":{},"nullCount":{}})");
  EXPECT_EQ(EncodeStats(result, *schema, -1).find(R"("c":2)") != std::string::npos, true);
}

TEST(EncodeStatsTest, NestedLeavesCountTowardsTheLimit) {
  auto inner = DataType::Struct({Field{"x", DataType::Int()}, Field{"y", DataType::Int()}});
  auto schema = DataType::Struct(
      {Field{"s", inner}, Field{"a", DataType::Long()}, Field{"b", DataType::Long()}});
  parquet::WriteResult result;
  result.num_rows = 1;
  result.column_stats = {Stats("s", 0, nullptr, nullptr),
                         Stats("a", 0, Scalar<int64_t>(DataType::Long(), 1), nullptr),
                         Stats("b", 0, Scalar<int64_t>(DataType::Long(), 1), nullptr)};
  // s.x and s.y use two of three slots: only `a` remains.
  EXPECT_EQ(EncodeStats(result, *schema, 3),
            R"({"numRecords":1,"minValues":{"a":1},"maxValues":{},"nullCount":{"a":0}})");
}

TEST(EncodeStatsTest, NonFiniteBoundsAreJsonStringsAsDeltaSparkWritesThem) {
  auto schema = DataType::Struct({Field{"d", DataType::Double()}, Field{"f", DataType::Float()}});
  parquet::WriteResult result;
  result.num_rows = 2;
  result.column_stats = {
      Stats("d", 0, Scalar<double>(DataType::Double(), std::nan("")),
            Scalar<double>(DataType::Double(), std::numeric_limits<double>::infinity())),
      Stats("f", 0, Scalar<float>(DataType::Float(), -0.25f),
            Scalar<float>(DataType::Float(), 1e10f))};
  EXPECT_EQ(EncodeStats(result, *schema),
            R"({"numRecords":2,"minValues":{"d":"NaN","f":-0.25},)"
            R"("maxValues":{"d":"Infinity","f":1.0E10},"nullCount":{"d":0,"f":0}})");
}

TEST(EncodeStatsTest, TimestampNtzHasNoZone) {
  auto schema = DataType::Struct({Field{"t", DataType::TimestampNtz()}});
  parquet::WriteResult result;
  result.num_rows = 1;
  int64_t t = Micros(2021, 11, 18, 2, 30, 0, 123456);
  result.column_stats = {Stats("t", 1, Scalar<int64_t>(DataType::TimestampNtz(), t),
                               Scalar<int64_t>(DataType::TimestampNtz(), t))};
  EXPECT_EQ(EncodeStats(result, *schema),
            R"({"numRecords":1,"minValues":{"t":"2021-11-18T02:30:00.123"},)"
            R"("maxValues":{"t":"2021-11-18T02:30:00.123"},"nullCount":{"t":1}})");
}

TEST(EncodeStatsTest, LongStringsAreTruncated) {
  auto schema = DataType::Struct({Field{"s", DataType::String()}});
  std::string min(40, 'a');
  std::string max(40, 'z');
  parquet::WriteResult result;
  result.num_rows = 2;
  result.column_stats = {Stats("s", 0, Scalar<std::string_view>(DataType::String(), min),
                               Scalar<std::string_view>(DataType::String(), max))};
  std::string expected_max = std::string(32, 'z') + "\x7f";
  EXPECT_EQ(EncodeStats(result, *schema), R"({"numRecords":2,"minValues":{"s":")" +
                                              std::string(32, 'a') + R"("},"maxValues":{"s":")" +
                                              expected_max + R"("},"nullCount":{"s":0}})");
}

// Regression (issue #23, point 1): a string that is not valid UTF-8 (a
// corrupt record, a binary-to-string cast) was copied raw into the stats,
// which made the commit invalid UTF-8 and the whole table unreadable. Its
// column has no min/max in that file (delta-spark writes U+FFFD instead, a
// bound that can make readers skip a file holding matching rows); the null
// count stays.
TEST(EncodeStatsTest, StringBoundsThatAreNotUtf8AreLeftOut) {
  auto schema = DataType::Struct({Field{"s", DataType::String()}, Field{"t", DataType::String()},
                                  Field{"i", DataType::Int()}});
  parquet::WriteResult result;
  result.num_rows = 3;
  result.column_stats = {
      Stats("s", 1, Scalar<std::string_view>(DataType::String(), "A"),
            Scalar<std::string_view>(DataType::String(),
                                     "a\xFF"
                                     "b")),
      Stats("t", 0, Scalar<std::string_view>(DataType::String(), "\xC3"),
            Scalar<std::string_view>(DataType::String(), "z")),
      Stats("i", 0, Scalar<int32_t>(DataType::Int(), 1), Scalar<int32_t>(DataType::Int(), 2))};
  EXPECT_EQ(EncodeStats(result, *schema),
            R"({"numRecords":3,"minValues":{"i":1},"maxValues":{"i":2},)"
            R"("nullCount":{"s":1,"t":0,"i":0}})");
}

TEST(EncodeStatsTest, InvalidUtf8PastTheTruncationPointStillDropsTheBounds) {
  // Truncation would cut the bad byte off, but the max's tie-breaker would
  // be U+10FFFF, which sorts below the 0xFF byte it stands for: a value that
  // is not UTF-8 gives no bounds at all.
  auto schema = DataType::Struct({Field{"s", DataType::String()}});
  std::string value = std::string(32, 'a') + "\xFF" + std::string(8, 'b');
  parquet::WriteResult result;
  result.num_rows = 1;
  result.column_stats = {Stats("s", 0, Scalar<std::string_view>(DataType::String(), value),
                               Scalar<std::string_view>(DataType::String(), value))};
  EXPECT_EQ(EncodeStats(result, *schema),
            R"({"numRecords":1,"minValues":{},"maxValues":{},"nullCount":{"s":0}})");
}

TEST(StringTruncationTest, MinCutsAtPrefixWithoutSplittingSurrogatePairs) {
  EXPECT_EQ(TruncateMinString("abcdef", 3), "abc");
  EXPECT_EQ(TruncateMinString("ab", 3), "ab");
  // U+1F600 is two UTF-16 units: at a cut after 'ab' + half of it, keep it whole.
  EXPECT_EQ(TruncateMinString("ab\xF0\x9F\x98\x80z", 3), "ab\xF0\x9F\x98\x80");
  // Multi-byte BMP characters count as one unit each.
  EXPECT_EQ(TruncateMinString("\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9", 2), "\xC3\xA9\xC3\xA9");
}

TEST(StringTruncationTest, MaxAppendsTieBreaker) {
  EXPECT_EQ(TruncateMaxString("abc", 3), "abc");
  EXPECT_EQ(TruncateMaxString("abcd", 3), "abc\x7f");
  // Next char >= U+007F: U+10FFFF is appended.
  EXPECT_EQ(TruncateMaxString("abc\xC3\xA9", 3), "abc\xF4\x8F\xBF\xBF");
  EXPECT_EQ(TruncateMaxString("abc\x7f", 3), "abc\xF4\x8F\xBF\xBF");
  // Embedded U+10FFFF is kept and the cut moves past it.
  EXPECT_EQ(TruncateMaxString("abc\xF4\x8F\xBF\xBFxy", 3), "abc\xF4\x8F\xBF\xBF\x7f");
  // Only U+10FFFF beyond the prefix, within twice the prefix: the original fits.
  EXPECT_EQ(TruncateMaxString("a\xF4\x8F\xBF\xBF", 2), "a\xF4\x8F\xBF\xBF");
  EXPECT_EQ(TruncateMaxString("a\xF4\x8F\xBF\xBF", 1), std::nullopt);
  // Too many U+10FFFF to find a bound within 2 * prefix units: no max.
  EXPECT_EQ(TruncateMaxString("a\xF4\x8F\xBF\xBF\xF4\x8F\xBF\xBFz", 1), std::nullopt);
}

TEST(StatsNumRecordsTest, ReadsNumRecords) {
  EXPECT_EQ(StatsNumRecords(R"({"numRecords":42,"minValues":{}})"), 42);
  EXPECT_EQ(StatsNumRecords(R"({"minValues":{}})"), std::nullopt);
  EXPECT_EQ(StatsNumRecords("not json"), std::nullopt);
}

}  // namespace
}  // namespace silt::delta
