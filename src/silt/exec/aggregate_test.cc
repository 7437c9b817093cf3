#include "silt/exec/aggregate.h"

#include <gtest/gtest.h>

#include <cmath>

#include "silt/columnar/builder.h"

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

}  // namespace
}  // namespace silt::exec
