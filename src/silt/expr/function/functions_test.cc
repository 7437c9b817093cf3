// Conditional, predicate and string functions over whole columns: per-row
// NULLs, constants mixed with columns, and the names Spark gives them.
#include <gtest/gtest.h>

#include <cmath>

#include "silt/expr/test_util.h"
#include "silt/testing/gtest_util.h"

namespace silt::expr {
namespace {

using columnar::DataType;
using testing::BoolColumn;
using testing::DoubleColumn;
using testing::EvalRender;
using testing::IntColumn;
using testing::MakeBatch;
using testing::Rows;
using testing::StringColumn;

std::string NameOf(std::string_view text, const columnar::RecordBatch& batch) {
  Result<BoundExpressionPtr> bound = testing::BindText(text, batch);
  EXPECT_TRUE(bound.ok()) << bound.status().ToString();
  return bound.ok() ? (*bound)->name() : "";
}

std::string BindError(std::string_view text, const columnar::RecordBatch& batch) {
  Result<BoundExpressionPtr> bound = testing::BindText(text, batch);
  EXPECT_FALSE(bound.ok()) << text;
  return bound.ok() ? "" : bound.status().message();
}

class FunctionsTest : public ::testing::Test {
 protected:
  columnar::RecordBatchPtr batch_ = MakeBatch({
      {"a", IntColumn({1, std::nullopt, 3, 4, -7})},
      {"b", IntColumn({10, 20, std::nullopt, 4, 3})},
      {"d", DoubleColumn({1.5, NAN, -0.0, 0.0, std::nullopt})},
      {"s", StringColumn({"Spark", "héllo", std::nullopt, "", "spark sql"})},
      {"p", BoolColumn({true, false, std::nullopt, true, false})},
  });
};

TEST_F(FunctionsTest, IfPicksPerRowAndTreatsNullConditionAsFalse) {
  EXPECT_EQ(EvalRender("if(p, a, b)", *batch_), (Rows{"1", "20", "NULL", "4", "3"}));
  EXPECT_EQ(EvalRender("if(p, s, 'no')", *batch_), (Rows{"Spark", "no", "no", "", "no"}));
  EXPECT_EQ(NameOf("if(p, a, b)", *batch_), "(IF(p, a, b))");
  EXPECT_NE(BindError("if(a, 1, 2)", *batch_).find("must be BOOLEAN"), std::string::npos);
}

TEST_F(FunctionsTest, CaseWhenTakesTheFirstTrueBranch) {
  EXPECT_EQ(EvalRender("CASE WHEN a > 2 THEN 'big' WHEN b > 5 THEN 'b' ELSE 'other' END", *batch_),
            (Rows{"b", "b", "big", "big", "other"}));
  EXPECT_EQ(EvalRender("CASE WHEN a > 2 THEN a END", *batch_),
            (Rows{"NULL", "NULL", "3", "4", "NULL"}));
  EXPECT_EQ(EvalRender("CASE a WHEN 1 THEN 'one' WHEN 3 THEN 'three' END", *batch_),
            (Rows{"one", "NULL", "three", "NULL", "NULL"}));
  EXPECT_EQ(NameOf("CASE WHEN a > 2 THEN 1 ELSE 0 END", *batch_),
            "CASE WHEN (a > 2) THEN 1 ELSE 0 END");
  // Branch values widen to their common type.
  EXPECT_EQ(EvalRender("CASE WHEN p THEN a ELSE d END", *batch_),
            (Rows{"1.0", "NaN", "-0.0", "4.0", "NULL"}));
}

TEST_F(FunctionsTest, Nvl2AndNullIf) {
  EXPECT_EQ(EvalRender("nvl2(a, 'set', 'unset')", *batch_),
            (Rows{"set", "unset", "set", "set", "set"}));
  EXPECT_EQ(EvalRender("nullif(a, b)", *batch_), (Rows{"1", "NULL", "3", "NULL", "-7"}));
  // Compared as DOUBLE, typed as the first argument.
  EXPECT_EQ(EvalRender("nullif(a, 4.0)", *batch_), (Rows{"1", "NULL", "3", "NULL", "-7"}));
  EXPECT_EQ(testing::BindText("nullif(a, 4.0)", *batch_).ValueOrDie()->type()->ToDdl(), "INT");
}

TEST_F(FunctionsTest, GreatestAndLeastSkipNulls) {
  EXPECT_EQ(EvalRender("greatest(a, b)", *batch_), (Rows{"10", "20", "3", "4", "3"}));
  EXPECT_EQ(EvalRender("least(a, b, 2)", *batch_), (Rows{"1", "2", "2", "2", "-7"}));
  EXPECT_EQ(EvalRender("greatest(d, 0.5)", *batch_), (Rows{"1.5", "NaN", "0.5", "0.5", "0.5"}));
  EXPECT_EQ(EvalRender("greatest(s, 'm')", *batch_), (Rows{"m", "m", "m", "m", "spark sql"}));
  EXPECT_NE(BindError("greatest(a, s)", *batch_).find("same type"), std::string::npos);
}

TEST_F(FunctionsTest, InListFollowsThreeValuedLogic) {
  EXPECT_EQ(EvalRender("a IN (1, 3)", *batch_), (Rows{"true", "NULL", "true", "false", "false"}));
  EXPECT_EQ(EvalRender("a IN (1, NULL)", *batch_), (Rows{"true", "NULL", "NULL", "NULL", "NULL"}));
  EXPECT_EQ(EvalRender("a NOT IN (1, b)", *batch_),
            (Rows{"false", "NULL", "NULL", "false", "true"}));
  EXPECT_EQ(EvalRender("d IN (0.0, 1.5)", *batch_),
            (Rows{"true", "false", "true", "true", "NULL"}));
  EXPECT_EQ(NameOf("a IN (1, 3)", *batch_), "(a IN (1, 3))");
}

TEST_F(FunctionsTest, BetweenIsInclusive) {
  EXPECT_EQ(EvalRender("a BETWEEN 1 AND 3", *batch_),
            (Rows{"true", "NULL", "true", "false", "false"}));
  EXPECT_EQ(EvalRender("a NOT BETWEEN 1 AND b", *batch_),
            (Rows{"false", "NULL", "NULL", "false", "true"}));
  EXPECT_EQ(NameOf("a BETWEEN 1 AND 3", *batch_), "((a >= 1) AND (a <= 3))");
}

TEST_F(FunctionsTest, LikeMatchesWildcardsAndEscapes) {
  EXPECT_EQ(EvalRender("s LIKE 'S%'", *batch_), (Rows{"true", "false", "NULL", "false", "false"}));
  EXPECT_EQ(EvalRender("s ILIKE 'S%'", *batch_), (Rows{"true", "false", "NULL", "false", "true"}));
  // `_` is one character, even a two-byte one.
  EXPECT_EQ(EvalRender("s LIKE 'h_llo'", *batch_),
            (Rows{"false", "true", "NULL", "false", "false"}));
  EXPECT_EQ(EvalRender("s LIKE '%'", *batch_), (Rows{"true", "true", "NULL", "true", "true"}));
  EXPECT_EQ(EvalRender("s LIKE '%a%k%'", *batch_),
            (Rows{"true", "false", "NULL", "false", "true"}));
  EXPECT_EQ(EvalRender("'50%' LIKE '50\\\\%'", *batch_)[0], "true");
  EXPECT_EQ(EvalRender("'500' LIKE '50\\\\%'", *batch_)[0], "false");
  EXPECT_EQ(EvalRender("s NOT LIKE 'S%'", *batch_)[0], "false");
  EXPECT_NE(BindError("s LIKE 'a\\\\b'", *batch_).find("invalid escape"), std::string::npos);
}

TEST_F(FunctionsTest, StringFunctionsCountCharactersNotBytes) {
  EXPECT_EQ(EvalRender("length(s)", *batch_), (Rows{"5", "5", "NULL", "0", "9"}));
  EXPECT_EQ(EvalRender("reverse(s)", *batch_), (Rows{"krapS", "olléh", "NULL", "", "lqs kraps"}));
  EXPECT_EQ(EvalRender("substring(s, 2, 3)", *batch_), (Rows{"par", "éll", "NULL", "", "par"}));
  EXPECT_EQ(EvalRender("substring(s, -3)", *batch_), (Rows{"ark", "llo", "NULL", "", "sql"}));
  EXPECT_EQ(EvalRender("substring(s, 0, 2)", *batch_), (Rows{"Sp", "hé", "NULL", "", "sp"}));
  EXPECT_EQ(EvalRender("instr(s, 'l')", *batch_), (Rows{"0", "3", "NULL", "0", "9"}));
  Rows upper = EvalRender("upper(s)", *batch_);
  ASSERT_EQ(upper.size(), 5u);
  EXPECT_EQ(upper[0], "SPARK");
  EXPECT_EQ(upper[4], "SPARK SQL");
  EXPECT_EQ(EvalRender("repeat(s, a)", *batch_), (Rows{"Spark", "NULL", "NULL", "", ""}));
  EXPECT_EQ(EvalRender("trim(concat('  ', s, ' '))", *batch_),
            (Rows{"Spark", "héllo", "NULL", "", "spark sql"}));
}

TEST_F(FunctionsTest, StartsEndsContains) {
  EXPECT_EQ(EvalRender("startswith(s, 'sp')", *batch_),
            (Rows{"false", "false", "NULL", "false", "true"}));
  EXPECT_EQ(EvalRender("endswith(s, 'o')", *batch_),
            (Rows{"false", "true", "NULL", "false", "false"}));
  EXPECT_EQ(EvalRender("contains(s, '')", *batch_), (Rows{"true", "true", "NULL", "true", "true"}));
}

TEST_F(FunctionsTest, TypeofNamesSparkTypes) {
  EXPECT_EQ(EvalRender("typeof(a)", *batch_)[0], "int");
  EXPECT_EQ(EvalRender("typeof(a / 2)", *batch_)[0], "double");
  EXPECT_EQ(EvalRender("typeof(CAST(a AS DECIMAL(10,2)))", *batch_)[0], "decimal(10,2)");
  EXPECT_EQ(EvalRender("typeof(from_json(s, 'x INT, y ARRAY<STRING>'))", *batch_)[0],
            "struct<x:int,y:array<string>>");
}

TEST_F(FunctionsTest, MathFunctionsWorkOnDoublesAndKeepAbsTyped) {
  EXPECT_EQ(EvalRender("sqrt(a)", *batch_),
            (Rows{"1.0", "NULL", "1.7320508075688772", "2.0", "NaN"}));
  // Logarithms of values <= 0 are NULL.
  EXPECT_EQ(EvalRender("ln(a)", *batch_),
            (Rows{"0.0", "NULL", "1.0986122886681098", "1.3862943611198906", "NULL"}));
  EXPECT_EQ(EvalRender("log10(d)", *batch_),
            (Rows{"0.17609125905568124", "NaN", "NULL", "NULL", "NULL"}));
  EXPECT_EQ(EvalRender("sign(d)", *batch_), (Rows{"1.0", "NaN", "-0.0", "0.0", "NULL"}));
  EXPECT_EQ(EvalRender("pow(a, 2)", *batch_), (Rows{"1.0", "NULL", "9.0", "16.0", "49.0"}));
  EXPECT_EQ(EvalRender("abs(a)", *batch_), (Rows{"1", "NULL", "3", "4", "7"}));
  EXPECT_EQ(EvalRender("abs(-2147483648)", *batch_)[0], "-2147483648");
  EXPECT_EQ(EvalRender("typeof(abs(a))", *batch_)[0], "int");
}

TEST_F(FunctionsTest, DatePartsAndDayArithmetic) {
  auto dates = MakeBatch({{"t", StringColumn({"2024-02-29 23:59:58", "1969-12-31 00:00:01",
                                              std::nullopt, "2016-04-09 12:30:00"})}});
  EXPECT_EQ(EvalRender("year(t)", *dates), (Rows{"2024", "1969", "NULL", "2016"}));
  EXPECT_EQ(EvalRender("month(t)", *dates), (Rows{"2", "12", "NULL", "4"}));
  EXPECT_EQ(EvalRender("day(t)", *dates), (Rows{"29", "31", "NULL", "9"}));
  EXPECT_EQ(EvalRender("dayofweek(t)", *dates), (Rows{"5", "4", "NULL", "7"}));
  EXPECT_EQ(EvalRender("dayofyear(t)", *dates), (Rows{"60", "365", "NULL", "100"}));
  EXPECT_EQ(EvalRender("quarter(t)", *dates), (Rows{"1", "4", "NULL", "2"}));
  EXPECT_EQ(EvalRender("hour(t)", *dates), (Rows{"23", "0", "NULL", "12"}));
  EXPECT_EQ(EvalRender("minute(t)", *dates), (Rows{"59", "0", "NULL", "30"}));
  EXPECT_EQ(EvalRender("second(t)", *dates), (Rows{"58", "1", "NULL", "0"}));
  EXPECT_EQ(EvalRender("date_add(t, 1)", *dates),
            (Rows{"2024-03-01", "1970-01-01", "NULL", "2016-04-10"}));
  EXPECT_EQ(EvalRender("date_sub(t, 366)", *dates),
            (Rows{"2023-02-28", "1968-12-30", "NULL", "2015-04-09"}));
  EXPECT_EQ(EvalRender("datediff(t, '2024-01-01')", *dates),
            (Rows{"59", "-19724", "NULL", "-2823"}));
}

TEST_F(FunctionsTest, DigestsAndEncodingsOfEachRow) {
  EXPECT_EQ(EvalRender("md5(s)", *batch_)[0], "8cde774d6f7333752ed72cacddb05126");
  EXPECT_EQ(EvalRender("md5(s)", *batch_)[2], "NULL");
  EXPECT_EQ(EvalRender("sha2(s, 224)", *batch_)[3],
            "d14a028c2a3a2bc9476102bb288234c415a2b01f828ea62ac5b3e42f");
  // Unsupported bit lengths give NULL.
  EXPECT_EQ(EvalRender("sha2(s, 100)", *batch_)[0], "NULL");
  EXPECT_EQ(EvalRender("hex(a)", *batch_), (Rows{"1", "NULL", "3", "4", "FFFFFFFFFFFFFFF9"}));
  EXPECT_EQ(EvalRender("base64(s)", *batch_),
            (Rows{"U3Bhcms=", "aMOpbGxv", "NULL", "", "c3Bhcmsgc3Fs"}));
}

}  // namespace
}  // namespace silt::expr

namespace silt::expr {
namespace {

TEST(StrictMathTest, ExpIsJavaStrictMathExp) {
  auto batch = MakeBatch({{"x", DoubleColumn({1.0, 1.04, -740.0, 709.8, NAN})}});
  // StrictMath.exp(1) is one ulp above the correctly rounded e (values from
  // Java 17's StrictMath.exp).
  EXPECT_EQ(EvalRender("exp(x)", *batch),
            Rows({"2.7182818284590455", "2.82921701435156", "4.2E-322", "Infinity", "NaN"}));
}

TEST(SchemaOfJsonTest, InfersSparkDdl) {
  auto batch = MakeBatch({{"x", IntColumn({1})}});
  EXPECT_EQ(EvalRender("schema_of_json('{\"b\":[1,2.5],\"a\":{\"c\":null}}')", *batch),
            Rows({"STRUCT<a: STRUCT<c: STRING>, b: ARRAY<DOUBLE>>"}));
  EXPECT_EQ(EvalRender("schema_of_json('[{\"x\":1},{\"x\":12345678901234567890}]')", *batch),
            Rows({"ARRAY<STRUCT<x: DECIMAL(20,0)>>"}));
  EXPECT_EQ(EvalRender("schema_of_json('{\"a b\":true}')", *batch),
            Rows({"STRUCT<`a b`: BOOLEAN>"}));
  EXPECT_NE(EvalRender("schema_of_json(CAST(x AS STRING))", *batch)[0].find("constant"),
            std::string::npos);
}

TEST(WindowTest, SlidingWindowExpandsTheRowsOfItsProjection) {
  Result<ExpressionPtr> parsed = ParseExpression("window(ts, '10 minutes', '5 minutes').end AS e");
  ASSERT_TRUE(parsed.ok());
  EXPECT_FALSE(AsGenerator(**parsed).has_value());
  auto batch = MakeBatch({{"ts", StringColumn({"2024-01-01 10:07:00", std::nullopt})}});
  Result<std::unique_ptr<WindowExpansion>> windows =
      WindowExpansion::Make({parsed->get()}, batch->schema);
  ASSERT_TRUE(windows.ok()) << windows.status().ToString();
  ASSERT_NE(*windows, nullptr);
  EXPECT_EQ((*windows)->description(), "window(ts, 600000000, 300000000, 0)");
  Result<columnar::RecordBatchPtr> expanded = (*windows)->Expand(*batch, {});
  ASSERT_TRUE(expanded.ok());
  Result<BoundExpressionPtr> bound = Bind(**parsed, (*windows)->schema(), (*windows)->options());
  ASSERT_TRUE(bound.ok()) << bound.status().ToString();
  Result<columnar::ColumnPtr> out = (*bound)->Evaluate(**expanded, {});
  ASSERT_TRUE(out.ok());
  // Two windows for the time (latest first), none for the NULL time.
  EXPECT_EQ(testing::Render(**out), Rows({"2024-01-01 10:15:00", "2024-01-01 10:10:00"}));
  // Outside such a projection (a where predicate) a sliding window has no
  // single value.
  EXPECT_NE(
      EvalRender("window(ts, '10 minutes', '5 minutes').start", *batch)[0].find("select item"),
      std::string::npos);
}

TEST(WindowTest, WindowTimeIsTheEndMinusOneMicrosecond) {
  auto batch = MakeBatch({{"ts", StringColumn({"2024-01-01 10:07:00", std::nullopt})}});
  // A tumbling window outside a projection: one window per row.
  EXPECT_EQ(EvalRender("window_time(window(CAST(ts AS TIMESTAMP), '10 minutes'))", *batch),
            Rows({"2024-01-01 10:09:59.999999", "NULL"}));
  EXPECT_NE(EvalRender("window_time(ts)", *batch)[0].find("window column"), std::string::npos);
}

}  // namespace
}  // namespace silt::expr
