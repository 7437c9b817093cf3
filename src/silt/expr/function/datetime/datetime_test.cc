#include <gtest/gtest.h>

#include "silt/columnar/temporal.h"
#include "silt/expr/function/datetime/datetime_format.h"
#include "silt/expr/test_util.h"
#include "silt/expr/value/time_zone.h"
#include "silt/testing/gtest_util.h"

namespace silt::expr {
namespace {

using columnar::kMicrosPerSecond;
using testing::EvalRender;
using testing::MakeBatch;
using testing::Rows;
using testing::StringColumn;

std::optional<std::string> ParseWith(std::string_view pattern, std::string_view text,
                                     int64_t offset_micros = 0) {
  Result<DateTimeFormat> format = DateTimeFormat::Compile(pattern);
  EXPECT_TRUE(format.ok()) << format.status().ToString();
  if (!format.ok()) return std::nullopt;
  std::optional<int64_t> micros = format->ParseTimestamp(text, offset_micros);
  if (!micros) return std::nullopt;
  return columnar::FormatTimestampPlain(*micros, 6);
}

TEST(DateTimeFormatTest, CommonPatternsParse) {
  EXPECT_EQ(ParseWith("yyyy-MM-dd HH:mm:ss", "2026-06-22 09:15:30"), "2026-06-22 09:15:30.000000");
  EXPECT_EQ(ParseWith("dd/MM/yyyy", "22/06/2026"), "2026-06-22 00:00:00.000000");
  EXPECT_EQ(ParseWith("yyyyMMddHHmmss", "20260622091530"), "2026-06-22 09:15:30.000000");
  EXPECT_EQ(ParseWith("yyyy-MM-dd'T'HH:mm:ss.SSSXXX", "2026-06-22T09:15:30.123+02:00"),
            "2026-06-22 07:15:30.123000");
  EXPECT_EQ(ParseWith("yyyy-MM-dd'T'HH:mm:ss.SSSSSSX", "2026-06-22T09:15:30.123456Z"),
            "2026-06-22 09:15:30.123456");
  EXPECT_EQ(ParseWith("yyyy-MM-dd HH:mm:ss Z", "2026-06-22 09:15:30 -0130"),
            "2026-06-22 10:45:30.000000");
  EXPECT_EQ(ParseWith("d MMM yyyy h:mm a", "2 jun 2026 9:05 PM"), "2026-06-02 21:05:00.000000");
  EXPECT_EQ(ParseWith("EEEE, MMMM d, yy", "Monday, June 22, 26"), "2026-06-22 00:00:00.000000");
  EXPECT_EQ(ParseWith("yyyy-MM-dd''HH", "2026-06-22'07"), "2026-06-22 07:00:00.000000");
}

TEST(DateTimeFormatTest, FractionsAcceptOneToNDigits) {
  EXPECT_EQ(ParseWith("HH:mm:ss.SSS", "01:02:03.4"), "1970-01-01 01:02:03.400000");
  EXPECT_EQ(ParseWith("HH:mm:ss.SSS", "01:02:03.456"), "1970-01-01 01:02:03.456000");
  EXPECT_EQ(ParseWith("HH:mm:ss.SSS", "01:02:03.4567"), std::nullopt);
  EXPECT_EQ(ParseWith("ss.SSSSSSSSS", "03.123456789"), "1970-01-01 00:00:03.123456");
}

TEST(DateTimeFormatTest, OptionalSectionsMayBeAbsent) {
  EXPECT_EQ(ParseWith("yyyy-MM-dd[ HH:mm[:ss]]", "2026-06-22"), "2026-06-22 00:00:00.000000");
  EXPECT_EQ(ParseWith("yyyy-MM-dd[ HH:mm[:ss]]", "2026-06-22 10:11"), "2026-06-22 10:11:00.000000");
  EXPECT_EQ(ParseWith("yyyy-MM-dd[ HH:mm[:ss]]", "2026-06-22 10:11:12"),
            "2026-06-22 10:11:12.000000");
}

TEST(DateTimeFormatTest, MismatchesAndInvalidDatesAreNull) {
  EXPECT_EQ(ParseWith("yyyy-MM-dd", "2026-06-22 10:00"), std::nullopt);  // trailing text
  EXPECT_EQ(ParseWith("yyyy-MM-dd", "2026-02-30"), std::nullopt);
  EXPECT_EQ(ParseWith("yyyy-MM-dd", "2026-13-01"), std::nullopt);
  EXPECT_EQ(ParseWith("HH:mm", "24:00"), std::nullopt);
  EXPECT_EQ(ParseWith("yyyy-MM-dd", "2026-6-22"), std::nullopt);  // MM is two digits
  EXPECT_EQ(ParseWith("yyyy-M-d", "2026-6-22"), "2026-06-22 00:00:00.000000");
}

TEST(DateTimeFormatTest, ZonelessTextUsesTheDefaultOffset) {
  EXPECT_EQ(ParseWith("yyyy-MM-dd HH:mm", "2026-06-22 10:00", 2 * 3600 * kMicrosPerSecond),
            "2026-06-22 08:00:00.000000");
}

TEST(DateTimeFormatTest, UnsupportedLettersAndBadPatternsAreRejected) {
  Result<DateTimeFormat> zone = DateTimeFormat::Compile("yyyy-MM-dd z");
  ASSERT_FALSE(zone.ok());
  EXPECT_TRUE(zone.status().IsNotSupported());
  EXPECT_NE(zone.status().message().find("Datetime pattern letter 'z'"), std::string::npos);
  EXPECT_TRUE(DateTimeFormat::Compile("yyyy 'T").status().IsInvalidArgument());
  EXPECT_TRUE(DateTimeFormat::Compile("yyyy]").status().IsInvalidArgument());
  EXPECT_TRUE(DateTimeFormat::Compile("[yyyy").status().IsInvalidArgument());
}

class DatetimeFunctionsTest : public ::testing::Test {
 protected:
  columnar::RecordBatchPtr batch_ = MakeBatch({{"s", StringColumn({
                                                         "2026-06-22T09:15:30.123456+00:00",
                                                         "2026-06-22 08:16:00",
                                                         "garbage",
                                                         std::nullopt,
                                                     })}});
};

TEST_F(DatetimeFunctionsTest, ToTimestampWithoutPatternIsACast) {
  EXPECT_EQ(EvalRender("to_timestamp(s)", *batch_),
            (Rows{"2026-06-22 09:15:30.123456", "2026-06-22 08:16:00", "NULL", "NULL"}));
  ASSERT_OK_AND_ASSIGN(BoundExpressionPtr bound, testing::BindText("to_timestamp(s)", *batch_));
  EXPECT_TRUE(bound->type()->Equals(*columnar::DataType::Timestamp()));
  EXPECT_EQ(bound->name(), "to_timestamp(s)");
}

TEST_F(DatetimeFunctionsTest, ToTimestampWithPattern) {
  auto batch = MakeBatch({{"s", StringColumn({"22/06/2026 09:15", "bad", std::nullopt})}});
  EXPECT_EQ(EvalRender("to_timestamp(s, 'dd/MM/yyyy HH:mm')", *batch),
            (Rows{"2026-06-22 09:15:00", "NULL", "NULL"}));
  EvalOptions ansi;
  ansi.ansi = true;
  Rows error = EvalRender("to_timestamp(s, 'dd/MM/yyyy HH:mm')", *batch, ansi);
  ASSERT_EQ(error.size(), 1u);
  EXPECT_NE(error[0].find("Cannot parse 'bad' with pattern 'dd/MM/yyyy HH:mm' (row 1)"),
            std::string::npos)
      << error[0];
  Rows unsupported = EvalRender("to_timestamp(s, 'yyyy z')", *batch);
  EXPECT_NE(unsupported[0].find("Not supported"), std::string::npos) << unsupported[0];
}

TEST_F(DatetimeFunctionsTest, ToDateFromStringsAndTimestamps) {
  EXPECT_EQ(EvalRender("to_date(s)", *batch_), (Rows{"2026-06-22", "2026-06-22", "NULL", "NULL"}));
  EXPECT_EQ(EvalRender("to_date(to_timestamp(s))", *batch_),
            (Rows{"2026-06-22", "2026-06-22", "NULL", "NULL"}));
  auto batch = MakeBatch({{"s", StringColumn({"06/22/2026"})}});
  EXPECT_EQ(EvalRender("to_date(s, 'MM/dd/yyyy')", *batch), (Rows{"2026-06-22"}));
}

TEST_F(DatetimeFunctionsTest, ToDateUsesTheSessionZone) {
  EvalOptions minus_two;
  minus_two.session_zone_offset_micros = -2 * 3600 * kMicrosPerSecond;
  auto batch = MakeBatch({{"s", StringColumn({"2026-06-22T01:00:00Z"})}});
  // 01:00 UTC is 23:00 the previous day at -02:00.
  EXPECT_EQ(EvalRender("to_date(to_timestamp(s))", *batch, minus_two), (Rows{"2026-06-21"}));
}

TEST_F(DatetimeFunctionsTest, CurrentTimestampComesFromTheEvalContext) {
  EvalContext ctx;
  ctx.current_timestamp_micros = *columnar::ParseTimestamp("2026-06-22 09:16:01.5");
  EXPECT_EQ(EvalRender("current_timestamp()", *batch_, {}, ctx),
            (Rows{"2026-06-22 09:16:01.5", "2026-06-22 09:16:01.5", "2026-06-22 09:16:01.5",
                  "2026-06-22 09:16:01.5"}));
  EXPECT_EQ(EvalRender("now()", *testing::EmptyBatch(1), {}, ctx), (Rows{"2026-06-22 09:16:01.5"}));
  EXPECT_EQ(EvalRender("current_date", *testing::EmptyBatch(1), {}, ctx), (Rows{"2026-06-22"}));
  ASSERT_OK_AND_ASSIGN(BoundExpressionPtr bound, testing::BindText("current_timestamp()", *batch_));
  EXPECT_FALSE(bound->nullable());
  // Not folded at bind time: each batch sees its own value.
  EvalContext later;
  later.current_timestamp_micros = ctx.current_timestamp_micros + 60 * kMicrosPerSecond;
  ASSERT_OK_AND_ASSIGN(columnar::ColumnPtr first, bound->Evaluate(*batch_, ctx));
  ASSERT_OK_AND_ASSIGN(columnar::ColumnPtr second, bound->Evaluate(*batch_, later));
  EXPECT_EQ(second->Value<int64_t>(0) - first->Value<int64_t>(0), 60 * kMicrosPerSecond);
}

TEST_F(DatetimeFunctionsTest, TimestampLiteralsUseTheSessionZone) {
  EvalOptions plus_one;
  plus_one.session_zone_offset_micros = 3600 * kMicrosPerSecond;
  ASSERT_OK_AND_ASSIGN(columnar::ColumnPtr out, testing::Eval("TIMESTAMP '2026-06-22 10:00:00'",
                                                              *testing::EmptyBatch(1), plus_one));
  EXPECT_EQ(out->Value<int64_t>(0), *columnar::ParseTimestamp("2026-06-22 09:00:00"));
}

}  // namespace
}  // namespace silt::expr

namespace silt::expr {
namespace {

// The session zone's DST rules apply to hour/minute/second, casts and
// zone-less literals (America/Los_Angeles: PST -8 until 2021-03-14 10:00
// UTC, then PDT -7; back to PST at 2021-11-07 09:00 UTC).
class SessionZoneDstTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<TimeZonePtr> zone = TimeZone::Load("America/Los_Angeles");
    ASSERT_TRUE(zone.ok()) << zone.status().ToString();
    options_.session_zone = *zone;
    // A fixed offset that is wrong half of the year must not be used.
    options_.session_zone_offset_micros = -8 * 3600 * kMicrosPerSecond;
  }
  Rows Run(std::string_view text) {
    Result<columnar::ColumnPtr> out = testing::Eval(text, *batch_, options_);
    if (!out.ok()) return {"ERROR: " + out.status().ToString()};
    return testing::Render(**out);
  }
  columnar::RecordBatchPtr batch_ = MakeBatch({{"x", StringColumn({"a"})}});
  EvalOptions options_;
};

TEST_F(SessionZoneDstTest, TimePartsFollowTheOffsetAtEachInstant) {
  EXPECT_EQ(Run("hour(TIMESTAMP '2021-03-14 09:30:00Z')"), Rows({"1"}));
  EXPECT_EQ(Run("hour(TIMESTAMP '2021-03-14 10:30:00Z')"), Rows({"3"}));
  EXPECT_EQ(Run("hour(TIMESTAMP '2021-11-07 08:30:00Z')"), Rows({"1"}));
  EXPECT_EQ(Run("hour(TIMESTAMP '2021-11-07 09:30:00Z')"), Rows({"1"}));
  EXPECT_EQ(Run("minute(TIMESTAMP '2021-07-01 12:34:56Z')"), Rows({"34"}));
}

TEST_F(SessionZoneDstTest, ZonelessTextIsLocalTimeWithGapsMovedForward) {
  // 02:30 does not exist on 2021-03-14: java.time moves it to 03:30 PDT.
  EXPECT_EQ(Run("CAST(CAST('2021-03-14 02:30:00' AS TIMESTAMP) AS BIGINT)"), Rows({"1615717800"}));
  // 01:30 happens twice on 2021-11-07: the earlier offset (PDT).
  EXPECT_EQ(Run("CAST(TIMESTAMP '2021-11-07 01:30:00' AS BIGINT)"), Rows({"1636273800"}));
  EXPECT_EQ(Run("CAST(CAST(DATE '2021-07-01' AS TIMESTAMP) AS BIGINT)"), Rows({"1625122800"}));
  EXPECT_EQ(Run("CAST(TIMESTAMP '2021-03-14 10:30:00Z' AS DATE)"), Rows({"2021-03-14"}));
  EXPECT_EQ(Run("CAST(TIMESTAMP '2021-03-14 07:30:00Z' AS DATE)"), Rows({"2021-03-13"}));
  EXPECT_EQ(Run("CAST(to_timestamp('2021-07-01 01:30', 'yyyy-MM-dd HH:mm') AS BIGINT)"),
            Rows({"1625128200"}));
  // Text with its own offset keeps it.
  EXPECT_EQ(Run("CAST(TIMESTAMP '2021-03-14 12:00:00+01:00' AS BIGINT)"), Rows({"1615719600"}));
}

}  // namespace
}  // namespace silt::expr

namespace silt::expr {
namespace {

TEST(DateTimeFormatTest, LegacyParserCheckAsSpark) {
  auto accepts = [](std::string_view pattern, std::string_view text) {
    Result<DateTimeFormat> format = DateTimeFormat::Compile(pattern);
    EXPECT_TRUE(format.ok()) << format.status().ToString();
    return format.ok() && format->LegacyParserAccepts(text);
  };
  // SimpleDateFormat reads numbers of any width and ignores trailing text.
  EXPECT_TRUE(accepts("yyyy", "1"));
  EXPECT_TRUE(accepts("yyyy-MM-dd", "2024-1-5"));
  EXPECT_TRUE(accepts("yyyy-MM-dd", "2024-01-05 garbage"));
  // Adjacent numeric fields keep their width.
  EXPECT_TRUE(accepts("yyyyMMdd", "2024015"));
  // Invalid dates and mismatched literals fail in both parsers.
  EXPECT_FALSE(accepts("yyyy-MM-dd", "2024-02-30"));
  EXPECT_FALSE(accepts("yyyy-MM-dd", "2024-13-05"));
  EXPECT_FALSE(accepts("yyyy-MM-dd HH:mm", "2024-01-05T10:00"));
  EXPECT_FALSE(accepts("yyyy-MM-dd", "x2024-01-05"));
  // Text fields are not checked.
  EXPECT_FALSE(accepts("dd MMM yyyy", "5 Jan 2024"));

  auto batch = MakeBatch({{"s", StringColumn({"2024-1-5"})}});
  Rows out = EvalRender("to_date(s, 'yyyy-MM-dd')", *batch);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_NE(out[0].find("INCONSISTENT_BEHAVIOR_CROSS_VERSION"), std::string::npos) << out[0];
}

}  // namespace
}  // namespace silt::expr
