#include <gtest/gtest.h>

#include <cmath>

#include "silt/columnar/temporal.h"
#include "silt/expr/test_util.h"
#include "silt/testing/gtest_util.h"

namespace silt::expr {
namespace {

using testing::EvalRender;
using testing::MakeBatch;
using testing::Rows;
using testing::StringColumn;

// Casts a STRING column holding `values` with CAST(s AS <type>).
Rows CastStrings(std::initializer_list<std::optional<std::string>> values, std::string_view type,
                 const EvalOptions& options = {}) {
  auto batch = MakeBatch({{"s", StringColumn(values)}});
  return EvalRender("CAST(s AS " + std::string(type) + ")", *batch, options);
}

TEST(CastTest, StringToIntTrimsAndTruncatesLikeSpark) {
  EXPECT_EQ(CastStrings({" 12 ", "12.5", "-7", "+3", "\t42\n", std::nullopt}, "INT"),
            (Rows{"12", "12", "-7", "3", "42", "NULL"}));
}

TEST(CastTest, StringToIntIsNullWhenNotAnInteger) {
  EXPECT_EQ(CastStrings({"abc", "", "1e2", "12.5x", "2147483648", "-", "1 2"}, "INT"),
            (Rows{"NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL"}));
}

TEST(CastTest, StringToIntegralRangesPerType) {
  EXPECT_EQ(CastStrings({"-2147483648", "2147483647"}, "INT"), (Rows{"-2147483648", "2147483647"}));
  EXPECT_EQ(CastStrings({"127", "128", "-128"}, "TINYINT"), (Rows{"127", "NULL", "-128"}));
  EXPECT_EQ(CastStrings({"32767", "32768"}, "SMALLINT"), (Rows{"32767", "NULL"}));
  EXPECT_EQ(
      CastStrings({"9223372036854775807", "9223372036854775808", "-9223372036854775808"}, "BIGINT"),
      (Rows{"9223372036854775807", "NULL", "-9223372036854775808"}));
}

TEST(CastTest, AnsiStringToIntRejectsFractionsAndNamesValueAndRow) {
  EvalOptions ansi;
  ansi.ansi = true;
  Rows ok = CastStrings({"12", " 7 "}, "INT", ansi);
  EXPECT_EQ(ok, (Rows{"12", "7"}));
  Rows fraction = CastStrings({"1", "12.5"}, "INT", ansi);
  ASSERT_EQ(fraction.size(), 1u);
  EXPECT_NE(fraction[0].find("Cannot cast '12.5' of type STRING to INT"), std::string::npos)
      << fraction[0];
  EXPECT_NE(fraction[0].find("(row 1)"), std::string::npos) << fraction[0];
  EXPECT_NE(fraction[0].find("CAST(s AS INT)"), std::string::npos) << fraction[0];
}

TEST(CastTest, StringToBooleanAcceptsSparkSpellings) {
  EXPECT_EQ(
      CastStrings({"t", "TRUE", " yes ", "Y", "1", "f", "False", "no", "N", "0", "maybe", "2", ""},
                  "BOOLEAN"),
      (Rows{"true", "true", "true", "true", "true", "false", "false", "false", "false", "false",
            "NULL", "NULL", "NULL"}));
}

TEST(CastTest, StringToDoubleParsesLikeJava) {
  EXPECT_EQ(CastStrings({"84.3", "1e10", " 1.5 ", "1.5d", "-0.0", ".5", "0x1p3", "abc", "1.2.3"},
                        "DOUBLE"),
            (Rows{"84.3", "1.0E10", "1.5", "1.5", "-0.0", "0.5", "8.0", "NULL", "NULL"}));
}

TEST(CastTest, StringToDoubleAcceptsInfinityAndNanSpellings) {
  EXPECT_EQ(CastStrings({"Infinity", "-Infinity", "inf", "+INF", "-inf", "NaN", "nan"}, "DOUBLE"),
            (Rows{"Infinity", "-Infinity", "Infinity", "Infinity", "-Infinity", "NaN", "NaN"}));
}

TEST(CastTest, StringToFloatRoundsToFloat) {
  EXPECT_EQ(CastStrings({"0.1", "3.4028236E38"}, "FLOAT"), (Rows{"0.1", "Infinity"}));
}

TEST(CastTest, StringToDecimalRoundsHalfUpAndOverflowsToNull) {
  EXPECT_EQ(CastStrings({"12.345", "-12.345", "1e2", "999.994", "999.995", "abc", " 0.5 "},
                        "DECIMAL(5,2)"),
            (Rows{"12.35", "-12.35", "100.00", "999.99", "NULL", "NULL", "0.50"}));
}

TEST(CastTest, StringToDateAndTimestamp) {
  EXPECT_EQ(CastStrings({"2026-06-22", "2026-06-22 08:16:00", "2026-6-2", "22/06/2026"}, "DATE"),
            (Rows{"2026-06-22", "2026-06-22", "2026-06-02", "NULL"}));
  EXPECT_EQ(CastStrings({"2026-06-22T09:15:30.123456+00:00", "2026-06-22 08:16:00",
                         "2026-06-22T10:00:00+02:00", "2026-06-22", "not a time"},
                        "TIMESTAMP"),
            (Rows{"2026-06-22 09:15:30.123456", "2026-06-22 08:16:00", "2026-06-22 08:00:00",
                  "2026-06-22 00:00:00", "NULL"}));
}

TEST(CastTest, ZonelessTimestampStringsUseTheSessionZone) {
  EvalOptions plus_two;
  plus_two.session_zone_offset_micros = 2 * 3600 * columnar::kMicrosPerSecond;
  auto batch = MakeBatch({{"s", StringColumn({"2026-06-22 10:00:00", "2026-06-22T10:00:00Z"})}});
  ASSERT_OK_AND_ASSIGN(columnar::ColumnPtr out,
                       testing::Eval("CAST(s AS TIMESTAMP)", *batch, plus_two));
  // 10:00 at +02:00 is 08:00 UTC.
  EXPECT_EQ(testing::Render(*out), (Rows{"2026-06-22 08:00:00", "2026-06-22 10:00:00"}));
  // Printed back in the session zone.
  EXPECT_EQ(EvalRender("CAST(CAST(s AS TIMESTAMP) AS STRING)", *batch, plus_two),
            (Rows{"2026-06-22 10:00:00", "2026-06-22 12:00:00"}));
}

TEST(CastTest, NumbersToStringPrintLikeJava) {
  auto batch =
      MakeBatch({{"d", testing::DoubleColumn({84.3, 1e10, 0.1 + 0.2, 100.0, 1e-5, std::nullopt})},
                 {"i", testing::IntColumn({-5, 0, 7, 2147483647, -2147483647 - 1, std::nullopt})}});
  EXPECT_EQ(EvalRender("CAST(d AS STRING)", *batch),
            (Rows{"84.3", "1.0E10", "0.30000000000000004", "100.0", "1.0E-5", "NULL"}));
  EXPECT_EQ(EvalRender("CAST(i AS STRING)", *batch),
            (Rows{"-5", "0", "7", "2147483647", "-2147483648", "NULL"}));
}

TEST(CastTest, DecimalToStringUsesJavaBigDecimalForm) {
  auto batch = testing::EmptyBatch(1);
  EXPECT_EQ(EvalRender("CAST(CAST(0 AS DECIMAL(38,18)) AS STRING)", *batch), (Rows{"0E-18"}));
  EXPECT_EQ(EvalRender("CAST(CAST(0.00000001 AS DECIMAL(20,10)) AS STRING)", *batch),
            (Rows{"1.00E-8"}));
  EXPECT_EQ(EvalRender("CAST(CAST(12.5 AS DECIMAL(10,3)) AS STRING)", *batch), (Rows{"12.500"}));
  EvalOptions ansi;
  ansi.ansi = true;
  EXPECT_EQ(EvalRender("CAST(CAST(0 AS DECIMAL(38,18)) AS STRING)", *batch, ansi),
            (Rows{"0.000000000000000000"}));
}

TEST(CastTest, IntegralNarrowingWrapsUnlessAnsi) {
  auto batch = MakeBatch({{"i", testing::IntColumn({300, -129, 100})}});
  EXPECT_EQ(EvalRender("CAST(i AS TINYINT)", *batch), (Rows{"44", "127", "100"}));
  EvalOptions ansi;
  ansi.ansi = true;
  Rows error = EvalRender("CAST(i AS TINYINT)", *batch, ansi);
  ASSERT_EQ(error.size(), 1u);
  EXPECT_NE(error[0].find("Cannot cast 300 of type INT to TINYINT"), std::string::npos) << error[0];
  EXPECT_NE(error[0].find("(row 0)"), std::string::npos);
}

TEST(CastTest, DoubleToIntegralTruncatesAndSaturatesLikeJava) {
  auto batch = MakeBatch({{"d", testing::DoubleColumn({-1.9, 2.9, 1e20, -1e20, NAN, 70000.7})}});
  EXPECT_EQ(EvalRender("CAST(d AS INT)", *batch),
            (Rows{"-1", "2", "2147483647", "-2147483648", "0", "70000"}));
  EXPECT_EQ(EvalRender("CAST(d AS BIGINT)", *batch),
            (Rows{"-1", "2", "9223372036854775807", "-9223372036854775808", "0", "70000"}));
  // Through int, then narrowed: 70000 -> 4464.
  EXPECT_EQ(EvalRender("CAST(d AS SMALLINT)", *batch), (Rows{"-1", "2", "-1", "0", "0", "4464"}));
}

TEST(CastTest, DecimalConversionsRoundOrTruncate) {
  auto batch = testing::EmptyBatch(1);
  EXPECT_EQ(EvalRender("CAST(12.345 AS DECIMAL(4,2))", *batch), (Rows{"12.35"}));
  EXPECT_EQ(EvalRender("CAST(-12.345 AS DECIMAL(4,2))", *batch), (Rows{"-12.35"}));
  EXPECT_EQ(EvalRender("CAST(123.4 AS DECIMAL(3,1))", *batch), (Rows{"NULL"}));
  EXPECT_EQ(EvalRender("CAST(-12.9 AS INT)", *batch), (Rows{"-12"}));
  EXPECT_EQ(EvalRender("CAST(12.5 AS DOUBLE)", *batch), (Rows{"12.5"}));
  EXPECT_EQ(EvalRender("CAST(0.1D AS DECIMAL(10,5))", *batch), (Rows{"0.10000"}));
  EXPECT_EQ(EvalRender("CAST(CAST('NaN' AS DOUBLE) AS DECIMAL(10,2))", *batch), (Rows{"NULL"}));
  EXPECT_EQ(EvalRender("CAST(true AS DECIMAL(3,1))", *batch), (Rows{"1.0"}));
}

TEST(CastTest, BooleanConversions) {
  auto batch = MakeBatch({{"i", testing::IntColumn({0, 5, std::nullopt})}});
  EXPECT_EQ(EvalRender("CAST(i AS BOOLEAN)", *batch), (Rows{"false", "true", "NULL"}));
  EXPECT_EQ(EvalRender("CAST(CAST(i AS BOOLEAN) AS INT)", *batch), (Rows{"0", "1", "NULL"}));
  EXPECT_EQ(EvalRender("CAST(CAST(i AS BOOLEAN) AS STRING)", *batch),
            (Rows{"false", "true", "NULL"}));
}

TEST(CastTest, TimestampNumericConversions) {
  auto batch = testing::EmptyBatch(1);
  EXPECT_EQ(EvalRender("CAST(TIMESTAMP '1969-12-31 23:59:59.5' AS BIGINT)", *batch), (Rows{"-1"}));
  EXPECT_EQ(EvalRender("CAST(TIMESTAMP '1970-01-01 00:00:01.5' AS DOUBLE)", *batch), (Rows{"1.5"}));
  EXPECT_EQ(EvalRender("CAST(1 AS TIMESTAMP)", *batch), (Rows{"1970-01-01 00:00:01"}));
  EXPECT_EQ(EvalRender("CAST(1.25D AS TIMESTAMP)", *batch), (Rows{"1970-01-01 00:00:01.25"}));
  EXPECT_EQ(EvalRender("CAST(CAST('NaN' AS DOUBLE) AS TIMESTAMP)", *batch), (Rows{"NULL"}));
  EXPECT_EQ(EvalRender("CAST(TIMESTAMP '2026-06-22 23:30:00' AS DATE)", *batch),
            (Rows{"2026-06-22"}));
  EXPECT_EQ(EvalRender("CAST(DATE '2026-06-22' AS TIMESTAMP)", *batch),
            (Rows{"2026-06-22 00:00:00"}));
  EXPECT_EQ(EvalRender("CAST(DATE '2026-06-22' AS INT)", *batch), (Rows{"NULL"}));
}

TEST(CastTest, BinaryAndStringRoundTrip) {
  auto batch = MakeBatch({{"s", StringColumn({"abc", "", std::nullopt})}});
  EXPECT_EQ(EvalRender("CAST(CAST(s AS BINARY) AS STRING)", *batch), (Rows{"abc", "", "NULL"}));
  ASSERT_OK_AND_ASSIGN(columnar::ColumnPtr bytes,
                       testing::Eval("CAST(258 AS BINARY)", *testing::EmptyBatch(1)));
  EXPECT_EQ(bytes->StringValue(0), std::string("\x00\x00\x01\x02", 4));
}

TEST(CastTest, NestedValuesPrintLikeSpark) {
  auto batch = testing::EmptyBatch(1);
  EXPECT_EQ(EvalRender("CAST(from_json('{\"a\": 1, \"b\": [1, null]}', 'a INT, b ARRAY<INT>, "
                       "c STRING') AS STRING)",
                       *batch),
            (Rows{"{1, [1, null], null}"}));
}

TEST(CastTest, TryCastGivesNullEvenWithAnsi) {
  EvalOptions ansi;
  ansi.ansi = true;
  auto batch = MakeBatch({{"s", StringColumn({"1", "x", std::nullopt})}});
  EXPECT_EQ(EvalRender("TRY_CAST(s AS INT)", *batch, ansi), (Rows{"1", "NULL", "NULL"}));
  ASSERT_OK_AND_ASSIGN(BoundExpressionPtr bound,
                       testing::BindText("TRY_CAST(s AS INT) + 1", *batch, ansi));
  EXPECT_EQ(bound->name(), "(TRY_CAST(s AS INT) + 1)");
}

TEST(CastTest, NullLiteralCastsToAnyType) {
  auto batch = testing::EmptyBatch(2);
  EXPECT_EQ(EvalRender("CAST(NULL AS INT)", *batch), (Rows{"NULL", "NULL"}));
  EXPECT_EQ(EvalRender("CAST(NULL AS STRUCT<a: INT>)", *batch), (Rows{"NULL", "NULL"}));
}

TEST(CastTest, DisallowedCastsAreBindErrors) {
  auto batch = testing::EmptyBatch(1);
  Rows r = EvalRender("CAST(DATE '2026-01-01' AS BINARY)", *batch);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_NE(r[0].find("Cannot cast DATE '2026-01-01' of type DATE to BINARY"), std::string::npos)
      << r[0];
  EvalOptions ansi;
  ansi.ansi = true;
  Rows a = EvalRender("CAST(DATE '2026-01-01' AS INT)", *batch, ansi);
  EXPECT_NE(a[0].find("with ANSI on"), std::string::npos) << a[0];
}

TEST(CastTest, StructCastsFieldWise) {
  auto batch = testing::EmptyBatch(1);
  EXPECT_EQ(EvalRender("CAST(from_json('{\"a\": \"7\"}', 'a STRING') AS STRUCT<x: INT>)", *batch),
            (Rows{"{7}"}));
}

}  // namespace
}  // namespace silt::expr
