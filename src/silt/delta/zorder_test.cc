#include "silt/delta/zorder.h"

#include <gtest/gtest.h>

#include <vector>

#include "silt/columnar/builder.h"
#include "silt/testing/gtest_util.h"

namespace silt::delta {
namespace {

using columnar::ColumnBuilder;
using columnar::DataType;
using columnar::Field;

TEST(ZOrderTest, InterleavesMostSignificantBitsFirstAndFirstColumnFirst) {
  std::vector<uint32_t> two = {0b10, 0b01};
  EXPECT_EQ(InterleaveBits(two, 2), 0b1001u);
  std::vector<uint32_t> three = {0b1, 0b0, 0b1};
  EXPECT_EQ(InterleaveBits(three, 1), 0b101u);
  std::vector<uint32_t> xy = {0b111, 0b000};
  EXPECT_EQ(InterleaveBits(xy, 3), 0b101010u);
  std::vector<uint32_t> full = {0xFFFFFFFFu, 0xFFFFFFFFu};
  EXPECT_EQ(InterleaveBits(full, 32), ~uint64_t{0});
}

TEST(ZOrderTest, BitsPerColumnFillSixtyFourBits) {
  EXPECT_EQ(ZOrderBitsPerColumn(1), 32);
  EXPECT_EQ(ZOrderBitsPerColumn(2), 32);
  EXPECT_EQ(ZOrderBitsPerColumn(3), 21);
  EXPECT_EQ(ZOrderBitsPerColumn(4), 16);
}

TEST(ZOrderTest, RankNormalizationIsOrderPreservingWithTiesAndNullsFirst) {
  ColumnBuilder b(DataType::Long());
  b.Append<int64_t>(1000000);
  b.AppendNull();
  b.Append<int64_t>(5);
  b.Append<int64_t>(5);
  b.Append<int64_t>(-7);
  ASSERT_OK_AND_ASSIGN(std::vector<uint32_t> ranks, RankNormalize(*b.Finish(), 8));
  // Sorted: null, -7, 5, 5, 1000000 -> ranks 0, 1, 2, 2, 4 scaled by 256/5.
  EXPECT_EQ(ranks[1], 0u);
  EXPECT_EQ(ranks[4], 51u);
  EXPECT_EQ(ranks[2], ranks[3]);
  EXPECT_EQ(ranks[2], 102u);
  EXPECT_EQ(ranks[0], 204u);
}

TEST(ZOrderTest, StringsRankInByteOrder) {
  ColumnBuilder b(DataType::String());
  for (const char* s : {"pear", "apple", "zebra", "apple"}) b.AppendString(s);
  ASSERT_OK_AND_ASSIGN(std::vector<uint32_t> ranks, RankNormalize(*b.Finish(), 4));
  EXPECT_EQ(ranks[1], ranks[3]);
  EXPECT_LT(ranks[1], ranks[0]);
  EXPECT_LT(ranks[0], ranks[2]);
}

TEST(ZOrderTest, PermutationClustersBothColumns) {
  // A 4x4 grid in row-major order; Z-order visits it quadrant by quadrant.
  ColumnBuilder x(DataType::Int());
  ColumnBuilder y(DataType::Int());
  for (int row = 0; row < 4; ++row) {
    for (int col = 0; col < 4; ++col) {
      x.Append<int32_t>(col);
      y.Append<int32_t>(row);
    }
  }
  columnar::RecordBatch batch;
  batch.schema = DataType::Struct({Field{"x", DataType::Int()}, Field{"y", DataType::Int()}});
  batch.num_rows = 16;
  batch.columns = {x.Finish(), y.Finish()};
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> order, ZOrderPermutation(batch, {"x", "y"}));
  ASSERT_EQ(order.size(), 16u);
  // The first four rows are the top-left quadrant (x < 2, y < 2).
  for (size_t i = 0; i < 4; ++i) {
    int64_t row = order[i];
    EXPECT_LT(batch.column(0)->Value<int32_t>(row), 2) << i;
    EXPECT_LT(batch.column(1)->Value<int32_t>(row), 2) << i;
  }
  // The last four are the bottom-right quadrant.
  for (size_t i = 12; i < 16; ++i) {
    int64_t row = order[i];
    EXPECT_GE(batch.column(0)->Value<int32_t>(row), 2) << i;
    EXPECT_GE(batch.column(1)->Value<int32_t>(row), 2) << i;
  }
  auto missing = ZOrderPermutation(batch, {"nope"});
  EXPECT_TRUE(missing.status().IsInvalidArgument());
}

}  // namespace
}  // namespace silt::delta
