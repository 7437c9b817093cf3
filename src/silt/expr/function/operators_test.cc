#include <gtest/gtest.h>

#include <cmath>

#include "silt/expr/test_util.h"
#include "silt/testing/gtest_util.h"

namespace silt::expr {
namespace {

using columnar::DataType;
using columnar::TypePtr;
using testing::BoolColumn;
using testing::DoubleColumn;
using testing::EvalRender;
using testing::IntColumn;
using testing::LongColumn;
using testing::MakeBatch;
using testing::Rows;
using testing::StringColumn;

TypePtr TypeOf(std::string_view text, const columnar::RecordBatch& batch) {
  Result<BoundExpressionPtr> bound = testing::BindText(text, batch);
  EXPECT_TRUE(bound.ok()) << bound.status().ToString();
  return bound.ok() ? (*bound)->type() : nullptr;
}

class OperatorsTest : public ::testing::Test {
 protected:
  columnar::RecordBatchPtr batch_ = MakeBatch({
      {"a", IntColumn({1, std::nullopt, 3, 2147483647, -7})},
      {"b", IntColumn({10, 20, std::nullopt, 1, 3})},
      {"z", IntColumn({0, 0, 0, 0, 0})},
      {"l", LongColumn({100, 200, 300, 400, 500})},
      {"d", DoubleColumn({1.5, 2.5, NAN, -0.0, 0.0})},
      {"s", StringColumn({"10", "x", std::nullopt, "2.5", "-7"})},
      {"p", BoolColumn({true, true, true, std::nullopt, std::nullopt})},
      {"q", BoolColumn({true, false, std::nullopt, false, std::nullopt})},
  });
};

TEST_F(OperatorsTest, ArithmeticPropagatesNulls) {
  EXPECT_EQ(EvalRender("a + b", *batch_), (Rows{"11", "NULL", "NULL", "-2147483648", "-4"}));
  EXPECT_EQ(EvalRender("a - b", *batch_), (Rows{"-9", "NULL", "NULL", "2147483646", "-10"}));
  EXPECT_EQ(EvalRender("a * b", *batch_), (Rows{"10", "NULL", "NULL", "2147483647", "-21"}));
}

TEST_F(OperatorsTest, IntegerOverflowIsAnErrorWithAnsi) {
  EvalOptions ansi;
  ansi.ansi = true;
  Rows r = EvalRender("a + b", *batch_, ansi);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_NE(r[0].find("Arithmetic overflow in '(a + b)' (row 3)"), std::string::npos) << r[0];
}

TEST_F(OperatorsTest, DivisionIsDoubleAndNullOnZero) {
  EXPECT_EQ(EvalRender("a / b", *batch_),
            (Rows{"0.1", "NULL", "NULL", "2.147483647E9", "-2.3333333333333335"}));
  EXPECT_EQ(EvalRender("a / z", *batch_), (Rows{"NULL", "NULL", "NULL", "NULL", "NULL"}));
  EXPECT_TRUE(TypeOf("a / b", *batch_)->Equals(*DataType::Double()));
  EvalOptions ansi;
  ansi.ansi = true;
  Rows r = EvalRender("a / z", *batch_, ansi);
  EXPECT_NE(r[0].find("Division by zero in '(a / z)' (row 0)"), std::string::npos) << r[0];
}

TEST_F(OperatorsTest, IntegralDivideAndRemainder) {
  EXPECT_EQ(EvalRender("a div b", *batch_), (Rows{"0", "NULL", "NULL", "2147483647", "-2"}));
  EXPECT_TRUE(TypeOf("a div b", *batch_)->Equals(*DataType::Long()));
  EXPECT_EQ(EvalRender("a % b", *batch_), (Rows{"1", "NULL", "NULL", "0", "-1"}));
  EXPECT_EQ(EvalRender("a % z", *batch_), (Rows{"NULL", "NULL", "NULL", "NULL", "NULL"}));
  EXPECT_EQ(EvalRender("d % 1.0D", *batch_), (Rows{"0.5", "0.5", "NaN", "-0.0", "0.0"}));
}

TEST_F(OperatorsTest, TypesPromoteLikeSpark) {
  EXPECT_TRUE(TypeOf("a + l", *batch_)->Equals(*DataType::Long()));
  EXPECT_TRUE(TypeOf("a + d", *batch_)->Equals(*DataType::Double()));
  EXPECT_TRUE(TypeOf("s + 1", *batch_)->Equals(*DataType::Double()));
  EXPECT_TRUE(TypeOf("1Y + 1Y", *batch_)->Equals(*DataType::Byte()));
  EXPECT_TRUE(TypeOf("a + 1.5", *batch_)->Equals(*DataType::Decimal(12, 1)));
  EXPECT_TRUE(TypeOf("1.5 * 2", *batch_)->Equals(*DataType::Decimal(4, 1)));
  EXPECT_TRUE(TypeOf("10.0 / 4", *batch_)->Equals(*DataType::Decimal(8, 6)));
  EXPECT_TRUE(TypeOf("1.5 + 1.0D", *batch_)->Equals(*DataType::Double()));
  EXPECT_EQ(EvalRender("s + 1", *batch_), (Rows{"11.0", "NULL", "NULL", "3.5", "-6.0"}));
}

TEST_F(OperatorsTest, DecimalArithmeticIsExact) {
  auto one = testing::EmptyBatch(1);
  EXPECT_EQ(EvalRender("0.1 + 0.2", *one), (Rows{"0.3"}));
  EXPECT_EQ(EvalRender("10.0 / 4", *one), (Rows{"2.500000"}));
  EXPECT_EQ(EvalRender("1.0 / 3", *one), (Rows{"0.333333"}));
  EXPECT_EQ(EvalRender("2.0 / 3", *one), (Rows{"0.666667"}));
  EXPECT_EQ(EvalRender("-7.5 % 2", *one), (Rows{"-1.5"}));
  EXPECT_EQ(EvalRender("1.25 * -4", *one), (Rows{"-5.00"}));
  EXPECT_EQ(EvalRender("1.5 - 2.25", *one), (Rows{"-0.75"}));
  EXPECT_EQ(EvalRender("1.0 / 0", *one), (Rows{"NULL"}));
  EXPECT_EQ(EvalRender("7.9 div 2", *one), (Rows{"3"}));
  // 38-digit operands use 256-bit intermediates.
  EXPECT_EQ(
      EvalRender("CAST('99999999999999999999999999999999999999' AS DECIMAL(38,0)) * 1.0", *one),
      (Rows{"NULL"}));
  EXPECT_EQ(EvalRender("CAST('12345678901234567890' AS DECIMAL(38,0)) + "
                       "CAST('0.123456789' AS DECIMAL(38,30))",
                       *one),
            (Rows{"12345678901234567890.123457"}));
  EXPECT_EQ(EvalRender("CAST(12345 AS DECIMAL(38,0)) / CAST(0.5 AS DECIMAL(38,30))", *one),
            (Rows{"24690.000000"}));
}

TEST_F(OperatorsTest, UnaryMinusAndBitwise) {
  EXPECT_EQ(EvalRender("-a", *batch_), (Rows{"-1", "NULL", "-3", "-2147483647", "7"}));
  EXPECT_EQ(EvalRender("+a", *batch_), (Rows{"1", "NULL", "3", "2147483647", "-7"}));
  EXPECT_EQ(EvalRender("a & 6", *batch_), (Rows{"0", "NULL", "2", "6", "0"}));
  EXPECT_EQ(EvalRender("a | 8", *batch_), (Rows{"9", "NULL", "11", "2147483647", "-7"}));
  EXPECT_EQ(EvalRender("~a", *batch_), (Rows{"-2", "NULL", "-4", "-2147483648", "6"}));
}

TEST_F(OperatorsTest, ComparisonsWithNulls) {
  EXPECT_EQ(EvalRender("a < b", *batch_), (Rows{"true", "NULL", "NULL", "false", "true"}));
  EXPECT_EQ(EvalRender("a = 3", *batch_), (Rows{"false", "NULL", "true", "false", "false"}));
  EXPECT_EQ(EvalRender("a != 3", *batch_), (Rows{"true", "NULL", "false", "true", "true"}));
  EXPECT_EQ(EvalRender("a >= 3", *batch_), (Rows{"false", "NULL", "true", "true", "false"}));
  EXPECT_EQ(EvalRender("a <=> b", *batch_), (Rows{"false", "false", "false", "false", "false"}));
  EXPECT_EQ(EvalRender("NULL <=> NULL", *batch_), (Rows{"true", "true", "true", "true", "true"}));
  EXPECT_EQ(EvalRender("a <=> NULL", *batch_), (Rows{"false", "true", "false", "false", "false"}));
}

TEST_F(OperatorsTest, ComparisonsCoerceStringsToTheOtherType) {
  // '2.5' compared with an INT is read as INT 2, as Spark does.
  EXPECT_EQ(EvalRender("s = a", *batch_), (Rows{"false", "NULL", "NULL", "false", "true"}));
  EXPECT_EQ(EvalRender("s = '10'", *batch_), (Rows{"true", "false", "NULL", "false", "false"}));
  EXPECT_EQ(EvalRender("s < 'y'", *batch_), (Rows{"true", "true", "NULL", "true", "true"}));
  auto one = testing::EmptyBatch(1);
  EXPECT_EQ(EvalRender("DATE '2026-06-22' = '2026-06-22'", *one), (Rows{"true"}));
  EXPECT_EQ(EvalRender("TIMESTAMP '2026-06-22 00:00:00' = DATE '2026-06-22'", *one),
            (Rows{"true"}));
}

TEST_F(OperatorsTest, DoubleComparisonsTreatNanAsLargestAndZerosEqual) {
  EXPECT_EQ(EvalRender("d = d", *batch_), (Rows{"true", "true", "true", "true", "true"}));
  EXPECT_EQ(EvalRender("d > 1e300D", *batch_), (Rows{"false", "false", "true", "false", "false"}));
  EXPECT_EQ(EvalRender("d = 0.0D", *batch_), (Rows{"false", "false", "false", "true", "true"}));
}

TEST_F(OperatorsTest, ThreeValuedLogic) {
  // p: T T T N N ; q: T F N F N
  EXPECT_EQ(EvalRender("p AND q", *batch_), (Rows{"true", "false", "NULL", "false", "NULL"}));
  EXPECT_EQ(EvalRender("p OR q", *batch_), (Rows{"true", "true", "true", "NULL", "NULL"}));
  EXPECT_EQ(EvalRender("NOT q", *batch_), (Rows{"false", "true", "NULL", "true", "NULL"}));
  EXPECT_EQ(EvalRender("q OR NULL", *batch_), (Rows{"true", "NULL", "NULL", "NULL", "NULL"}));
  EXPECT_EQ(EvalRender("q AND NULL", *batch_), (Rows{"NULL", "false", "NULL", "false", "NULL"}));
}

TEST_F(OperatorsTest, IsNullPredicatesAreNeverNull) {
  EXPECT_EQ(EvalRender("a IS NULL", *batch_), (Rows{"false", "true", "false", "false", "false"}));
  EXPECT_EQ(EvalRender("b IS NOT NULL", *batch_), (Rows{"true", "true", "false", "true", "true"}));
  ASSERT_OK_AND_ASSIGN(BoundExpressionPtr bound, testing::BindText("a IS NULL", *batch_));
  EXPECT_FALSE(bound->nullable());
}

TEST_F(OperatorsTest, CoalescePicksTheFirstNonNull) {
  EXPECT_EQ(EvalRender("coalesce(b, a, -1)", *batch_), (Rows{"10", "20", "3", "1", "3"}));
  EXPECT_EQ(EvalRender("coalesce(NULL, a)", *batch_), (Rows{"1", "NULL", "3", "2147483647", "-7"}));
  EXPECT_EQ(EvalRender("coalesce(s, 'none')", *batch_), (Rows{"10", "x", "none", "2.5", "-7"}));
  EXPECT_EQ(EvalRender("coalesce(q, false)", *batch_),
            (Rows{"true", "false", "false", "false", "false"}));
  EXPECT_TRUE(TypeOf("coalesce(a, l)", *batch_)->Equals(*DataType::Long()));
  ASSERT_OK_AND_ASSIGN(BoundExpressionPtr bound, testing::BindText("coalesce(a, 0)", *batch_));
  EXPECT_FALSE(bound->nullable());
}

TEST_F(OperatorsTest, ConcatOperator) {
  EXPECT_EQ(EvalRender("s || '!'", *batch_), (Rows{"10!", "x!", "NULL", "2.5!", "-7!"}));
  EXPECT_EQ(EvalRender("concat(s, '-', a)", *batch_),
            (Rows{"10-1", "NULL", "NULL", "2.5-2147483647", "-7--7"}));
}

TEST_F(OperatorsTest, ConstantsAreFoldedAndRepeated) {
  EXPECT_EQ(EvalRender("1 + 2 * 3", *batch_), (Rows{"7", "7", "7", "7", "7"}));
  EXPECT_EQ(EvalRender("a + (1 + 1)", *batch_), (Rows{"3", "NULL", "5", "-2147483647", "-5"}));
  EXPECT_EQ(EvalRender("'ab' || 'c'", *batch_), (Rows{"abc", "abc", "abc", "abc", "abc"}));
  EXPECT_EQ(EvalRender("''", *batch_), (Rows{"", "", "", "", ""}));
  EXPECT_EQ(EvalRender("NOT false", *batch_), (Rows{"true", "true", "true", "true", "true"}));
  EXPECT_EQ(EvalRender("CAST(NULL AS STRING)", *batch_),
            (Rows{"NULL", "NULL", "NULL", "NULL", "NULL"}));
  EXPECT_EQ(EvalRender("2.50", *batch_), (Rows{"2.50", "2.50", "2.50", "2.50", "2.50"}));
}

TEST_F(OperatorsTest, OperatorsRejectWrongTypes) {
  Rows r = EvalRender("p + 1", *batch_);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_NE(r[0].find("argument 1 (p) must be numeric but is BOOLEAN"), std::string::npos) << r[0];
  Rows c = EvalRender("p = DATE '2026-01-01'", *batch_);
  EXPECT_NE(c[0].find("Cannot compare p (BOOLEAN) with DATE '2026-01-01' (DATE)"),
            std::string::npos)
      << c[0];
}

TEST(OperatorsEdgeTest, EmptyBatchesEvaluateToEmptyColumns) {
  auto batch = MakeBatch({{"a", IntColumn({})}, {"s", StringColumn({})}, {"p", BoolColumn({})}});
  for (const char* text :
       {"a + 1", "a + NULL", "s || 'x'", "coalesce(a, 1)", "a IS NULL", "'x'", "true",
        "CAST(s AS INT)", "a = NULL", "p AND NULL", "NOT p", "current_timestamp()", "1.5 * a",
        "from_json(s, 'x INT')", "get_json_object(s, '$.x')", "to_timestamp(s, 'yyyy')"}) {
    SCOPED_TRACE(text);
    Result<columnar::ColumnPtr> out = testing::Eval(text, *batch);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ((*out)->length, 0);
  }
}

TEST(OperatorsEdgeTest, NarrowIntegralArithmeticWraps) {
  auto batch =
      MakeBatch({{"s", testing::FixedColumn<int16_t>(DataType::Short(), {300, -32768, 7})}});
  // 300 * 300 = 90000 wraps to 24464 in SMALLINT, as in Java.
  EXPECT_EQ(EvalRender("s * 300S", *batch), (Rows{"24464", "0", "2100"}));
  EXPECT_EQ(EvalRender("-s", *batch), (Rows{"-300", "-32768", "-7"}));
  EXPECT_TRUE(TypeOf("s * 300S", *batch)->Equals(*DataType::Short()));
}

}  // namespace
}  // namespace silt::expr
