#include "silt/exec/aggregate.h"

#include <gtest/gtest.h>

#include <cmath>

#include "silt/columnar/builder.h"
#include "silt/testing/gtest_util.h"

namespace silt::exec {
namespace {

using columnar::ColumnBuilder;
using columnar::ColumnPtr;
using columnar::DataType;

ColumnPtr Strings(const std::vector<std::optional<std::string>>& values) {
  ColumnBuilder b(DataType::String());
  for (const auto& v : values) {
    if (v) {
      b.AppendString(*v);
    } else {
      b.AppendNull();
    }
  }
  return b.Finish();
}

ColumnPtr Ints(const std::vector<std::optional<int32_t>>& values) {
  ColumnBuilder b(DataType::Int());
  for (const auto& v : values) {
    if (v) {
      b.Append<int32_t>(*v);
    } else {
      b.AppendNull();
    }
  }
  return b.Finish();
}

TEST(AggregateTest, GroupsWithNullsAndSparkTypes) {
  auto agg =
      HashAggregator::Make({DataType::String()}, {{AggKind::kCountStar, nullptr},
                                                  {AggKind::kCount, DataType::Int()},
                                                  {AggKind::kSum, DataType::Int()},
                                                  {AggKind::kAvg, DataType::Int()},
                                                  {AggKind::kMin, DataType::Int()},
                                                  {AggKind::kMax, DataType::Int()},
                                                  {AggKind::kCountDistinct, DataType::Int()}});
  ASSERT_TRUE(agg.ok()) << agg.status().ToString();
  ColumnPtr keys = Strings({"a", "b", std::nullopt, "a", "b", "a"});
  ColumnPtr x = Ints({1, std::nullopt, 7, 3, std::nullopt, 3});
  std::vector<ColumnPtr> args(7, x);
  args[0] = nullptr;
  ASSERT_TRUE((*agg)->Consume({keys}, args, 6).ok());
  // A second batch adds to existing groups.
  ASSERT_TRUE(
      (*agg)
          ->Consume({Strings({"b"})},
                    {nullptr, Ints({5}), Ints({5}), Ints({5}), Ints({5}), Ints({5}), Ints({5})}, 1)
          .ok());
  auto out = (*agg)->Finish({"k", "c", "cx", "s", "a", "mn", "mx", "d"});
  ASSERT_TRUE(out.ok());
  const auto& b = **out;
  ASSERT_EQ(b.num_rows, 3);
  EXPECT_EQ(b.schema->field(2).type->id(), columnar::TypeId::kLong);
  EXPECT_EQ(b.schema->field(3).type->id(), columnar::TypeId::kLong);
  EXPECT_EQ(b.schema->field(4).type->id(), columnar::TypeId::kDouble);
  EXPECT_EQ(b.schema->field(5).type->id(), columnar::TypeId::kInt);
  // Groups in order of first appearance: a, b, NULL.
  EXPECT_EQ(b.column(0)->StringValue(0), "a");
  EXPECT_TRUE(b.column(0)->IsNull(2));
  EXPECT_EQ(b.column(1)->Value<int64_t>(0), 3);
  EXPECT_EQ(b.column(1)->Value<int64_t>(1), 3);
  EXPECT_EQ(b.column(2)->Value<int64_t>(0), 3);
  EXPECT_EQ(b.column(2)->Value<int64_t>(1), 1);
  EXPECT_EQ(b.column(3)->Value<int64_t>(0), 7);
  EXPECT_DOUBLE_EQ(b.column(4)->Value<double>(0), 7.0 / 3);
  EXPECT_EQ(b.column(5)->Value<int32_t>(0), 1);
  EXPECT_EQ(b.column(6)->Value<int32_t>(0), 3);
  EXPECT_EQ(b.column(7)->Value<int64_t>(0), 2);
  EXPECT_EQ(b.column(7)->Value<int64_t>(1), 1);
  EXPECT_EQ(b.column(6)->Value<int32_t>(2), 7);
}

TEST(AggregateTest, GlobalAggregateOverNoRows) {
  auto agg =
      HashAggregator::Make({}, {{AggKind::kCountStar, nullptr}, {AggKind::kSum, DataType::Long()}});
  ASSERT_TRUE(agg.ok());
  auto out = (*agg)->Finish({"c", "s"});
  ASSERT_TRUE(out.ok());
  ASSERT_EQ((*out)->num_rows, 1);
  EXPECT_EQ((*out)->column(0)->Value<int64_t>(0), 0);
  EXPECT_TRUE((*out)->column(1)->IsNull(0));
}

TEST(AggregateTest, DecimalSumAndAvgTypes) {
  auto sum = AggregateResultType({AggKind::kSum, DataType::Decimal(10, 2)});
  ASSERT_TRUE(sum.ok());
  EXPECT_TRUE((*sum)->Equals(*DataType::Decimal(20, 2)));
  auto avg = AggregateResultType({AggKind::kAvg, DataType::Decimal(10, 2)});
  ASSERT_TRUE(avg.ok());
  EXPECT_TRUE((*avg)->Equals(*DataType::Decimal(14, 6)));
  EXPECT_FALSE(AggregateResultType({AggKind::kSum, DataType::String()}).ok());

  auto agg = HashAggregator::Make({}, {{AggKind::kAvg, DataType::Decimal(10, 2)}});
  ASSERT_TRUE(agg.ok());
  ColumnBuilder b(DataType::Decimal(10, 2));
  b.Append<__int128>(100);  // 1.00
  b.Append<__int128>(200);  // 2.00
  b.Append<__int128>(200);  // 2.00
  ASSERT_TRUE((*agg)->Consume({}, {b.Finish()}, 3).ok());
  auto out = (*agg)->Finish({"a"});
  ASSERT_TRUE(out.ok());
  __int128 v = (*out)->column(0)->Value<__int128>(0);
  EXPECT_TRUE(v == 1666667);  // 1.666667 (HALF_UP)
}

// Spark 3.5: sum/avg of DECIMAL(38,0) over two values of 38 nines -> NULL
// (pyspark: spark.sql("select sum(x), avg(x) from t") with t of
// [10^38 - 10, 10^38 - 10]). The running sum does not fit an __int128 either.
TEST(AggregateTest, DecimalSumOverflowIsNullForGood) {
  auto agg = HashAggregator::Make({}, {{AggKind::kSum, DataType::Decimal(38, 0)},
                                       {AggKind::kAvg, DataType::Decimal(38, 0)},
                                       {AggKind::kSum, DataType::Decimal(28, 0)}});
  ASSERT_TRUE(agg.ok());
  __int128 big = 1;
  for (int i = 0; i < 38; ++i) big *= 10;
  big -= 10;
  __int128 p28 = 1;
  for (int i = 0; i < 28; ++i) p28 *= 10;
  ColumnBuilder b(DataType::Decimal(38, 0));
  ColumnBuilder c(DataType::Decimal(28, 0));
  for (__int128 v : {big, big, -big}) b.Append<__int128>(v);
  for (__int128 v : {p28 - 1, p28 - 1, -(p28 - 1)}) c.Append<__int128>(v);
  ColumnPtr col = b.Finish();
  ASSERT_TRUE((*agg)->Consume({}, {col, col, c.Finish()}, 3).ok());
  auto out = (*agg)->Finish({"s", "a", "s28"});
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE((*out)->column(0)->IsNull(0));
  EXPECT_TRUE((*out)->column(1)->IsNull(0));
  // DECIMAL(28,0) sums in DECIMAL(38,0): no overflow.
  EXPECT_TRUE((*out)->column(2)->Value<__int128>(0) == p28 - 1);
}

TEST(AggregateTest, NaNGroupsTogetherAndIsLargest) {
  auto agg = HashAggregator::Make({DataType::Double()}, {{AggKind::kMax, DataType::Double()}});
  ASSERT_TRUE(agg.ok());
  ColumnBuilder k(DataType::Double());
  for (double v : {std::nan(""), 0.0, -0.0, std::nan("")}) k.Append<double>(v);
  ColumnPtr key = k.Finish();
  ASSERT_TRUE((*agg)->Consume({key}, {key}, 4).ok());
  auto out = (*agg)->Finish({"k", "m"});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)->num_rows, 2);
  EXPECT_TRUE(std::isnan((*out)->column(1)->Value<double>(0)));
}

TEST(AggregateTest, KindsFromSparkNamesAndAliases) {
  auto kind = [](std::string_view name, bool distinct = false) {
    Result<AggKind> k = AggKindFromName(name, distinct);
    EXPECT_TRUE(k.ok()) << name << ": " << k.status().ToString();
    return k.ok() ? *k : AggKind::kCountStar;
  };
  EXPECT_EQ(kind("COUNT"), AggKind::kCount);
  EXPECT_EQ(kind("count", true), AggKind::kCountDistinct);
  EXPECT_EQ(kind("mean"), AggKind::kAvg);
  EXPECT_EQ(kind("first_value"), AggKind::kFirst);
  EXPECT_EQ(kind("last_value"), AggKind::kLast);
  EXPECT_EQ(kind("std"), AggKind::kStddevSamp);
  EXPECT_EQ(kind("stddev"), AggKind::kStddevSamp);
  EXPECT_EQ(kind("stddev_pop"), AggKind::kStddevPop);
  EXPECT_EQ(kind("variance"), AggKind::kVarSamp);
  EXPECT_EQ(kind("var_pop"), AggKind::kVarPop);
  EXPECT_EQ(kind("array_agg"), AggKind::kCollectList);
  EXPECT_EQ(kind("collect_set", true), AggKind::kCollectSet);
  EXPECT_EQ(kind("max", true), AggKind::kMax);
  EXPECT_RAISES(NotSupported, AggKindFromName("sum", true));
  EXPECT_RAISES(NotSupported, AggKindFromName("percentile", false));
  Result<AggKind> typo = AggKindFromName("stdev_samp", false);
  ASSERT_RAISES(NotFound, typo);
  EXPECT_NE(typo.status().ToString().find("did you mean stddev_samp"), std::string::npos)
      << typo.status().ToString();
  EXPECT_RAISES(NotFound, AggKindFromName("upper", false));
}

TEST(AggregateTest, NewFunctionTypesAndNullRules) {
  auto agg = HashAggregator::Make({}, {{AggKind::kFirst, DataType::Int()},
                                       {AggKind::kFirst, DataType::Int(), true},
                                       {AggKind::kLast, DataType::Int()},
                                       {AggKind::kLast, DataType::Int(), true},
                                       {AggKind::kVarSamp, DataType::Int()},
                                       {AggKind::kVarPop, DataType::Int()},
                                       {AggKind::kCollectList, DataType::Int()},
                                       {AggKind::kCollectSet, DataType::Int()}});
  ASSERT_TRUE(agg.ok()) << agg.status().ToString();
  ColumnPtr x = Ints({std::nullopt, 4, 4, std::nullopt});
  ASSERT_TRUE((*agg)->Consume({}, std::vector<ColumnPtr>(8, x), 4).ok());
  auto out = (*agg)->Finish({"f", "fi", "l", "li", "vs", "vp", "cl", "cs"});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const auto& b = **out;
  EXPECT_TRUE(b.column(0)->IsNull(0));
  EXPECT_EQ(b.column(1)->Value<int32_t>(0), 4);
  EXPECT_TRUE(b.column(2)->IsNull(0));
  EXPECT_EQ(b.column(3)->Value<int32_t>(0), 4);
  EXPECT_EQ(b.column(4)->Value<double>(0), 0.0);
  EXPECT_EQ(b.column(5)->Value<double>(0), 0.0);
  EXPECT_TRUE(b.schema->field(6).type->Equals(*DataType::Array(DataType::Int(), false)));
  EXPECT_EQ(b.column(6)->offsets()[1], 2);
  EXPECT_EQ(b.column(7)->offsets()[1], 1);
  // One value: the sample variance is null (Spark 3.5), the population one 0.
  auto one = HashAggregator::Make(
      {}, {{AggKind::kStddevSamp, DataType::Double()}, {AggKind::kStddevPop, DataType::Double()}});
  ASSERT_TRUE(one.ok());
  ColumnBuilder d(DataType::Double());
  d.Append<double>(2.5);
  ColumnPtr dc = d.Finish();
  ASSERT_TRUE((*one)->Consume({}, {dc, dc}, 1).ok());
  auto r = (*one)->Finish({"s", "p"});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE((*r)->column(0)->IsNull(0));
  EXPECT_EQ((*r)->column(1)->Value<double>(0), 0.0);
  EXPECT_FALSE(AggregateResultType({AggKind::kStddevPop, DataType::String()}).ok());
}

}  // namespace
}  // namespace silt::exec
