// The sketches behind approx_count_distinct and percentile_approx against
// numbers computed by Spark 3.5.3 (xxhash64(), approx_count_distinct() and
// percentile_approx() over spark.range), and their state round trips.

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "silt/columnar/builder.h"
#include "silt/exec/accumulator_internal.h"
#include "silt/exec/aggregate.h"
#include "silt/exec/hyperloglog.h"
#include "silt/exec/quantile_summary.h"
#include "silt/exec/spark_hash.h"
#include "silt/testing/gtest_util.h"

namespace silt::exec {
namespace {

using columnar::ColumnBuilder;
using columnar::ColumnPtr;
using columnar::DataType;
using columnar::TypePtr;

template <typename T>
ColumnPtr Column1(TypePtr type, T v) {
  ColumnBuilder b(std::move(type));
  b.Append<T>(v);
  return b.Finish();
}

int64_t Hash(const ColumnPtr& c) {
  uint64_t h = 0;
  SparkXxHash64(*c, 42, 1, &h);
  return static_cast<int64_t>(h);
}

TEST(SparkHashTest, MatchesSparkXxHash64) {
  // SELECT xxhash64(...) in Spark 3.5.3.
  EXPECT_EQ(Hash(Column1<int32_t>(DataType::Int(), 1)), -6698625589789238999LL);
  EXPECT_EQ(Hash(Column1<int64_t>(DataType::Long(), 1)), -7001672635703045582LL);
  EXPECT_EQ(Hash(Column1<double>(DataType::Double(), 1.5)), 7738255526519901366LL);
  EXPECT_EQ(Hash(Column1<__int128>(DataType::Decimal(20, 2), 1234)), 804797035677707363LL);
  EXPECT_EQ(Hash(Column1<__int128>(DataType::Decimal(30, 2), -1234)), -5902959860576184235LL);
  EXPECT_EQ(Hash(Column1<int32_t>(DataType::Date(), 18262)), 2299834470729022467LL);
  EXPECT_EQ(Hash(Column1<int64_t>(DataType::Timestamp(), 1577836800000000LL)),
            7881863312764026046LL);
  ColumnBuilder s(DataType::String());
  s.AppendString("abc");
  EXPECT_EQ(Hash(s.Finish()), 1423657621850124518LL);
  // -0.0 hashes as 0.0, every NaN alike.
  EXPECT_EQ(Hash(Column1<double>(DataType::Double(), -0.0)),
            Hash(Column1<double>(DataType::Double(), 0.0)));
  EXPECT_EQ(Hash(Column1<double>(DataType::Double(), -std::nan("1"))),
            Hash(Column1<double>(DataType::Double(), std::nan(""))));
}

// approx_count_distinct over the values 0..n-1 of `type`.
int64_t CountDistinct(int64_t n, double rsd, TypePtr type = DataType::Long()) {
  auto p = HyperLogLogPlusPlus::PrecisionFor(rsd);
  EXPECT_TRUE(p.ok());
  HyperLogLogPlusPlus hll(*p);
  ColumnBuilder b(type);
  for (int64_t i = 0; i < n; ++i) {
    if (type->id() == columnar::TypeId::kString) {
      b.AppendString(std::to_string(i));
    } else if (type->id() == columnar::TypeId::kDouble) {
      b.Append<double>(static_cast<double>(i));
    } else {
      b.Append<int64_t>(i);
    }
  }
  ColumnPtr c = b.Finish();
  std::vector<uint64_t> hashes(static_cast<size_t>(n));
  SparkXxHash64(*c, 42, n, hashes.data());
  for (uint64_t h : hashes) hll.Add(h);
  return hll.Estimate();
}

TEST(HyperLogLogTest, MatchesSparkInEveryRange) {
  // Linear counting, bias-corrected and raw ranges; values from Spark 3.5.3
  // (SELECT approx_count_distinct(id[, rsd]) FROM range(n)).
  EXPECT_EQ(CountDistinct(10, 0.05), 10);
  EXPECT_EQ(CountDistinct(1000, 0.05), 1026);
  EXPECT_EQ(CountDistinct(100000, 0.05), 95546);
  EXPECT_EQ(CountDistinct(100000, 0.01), 100425);
  EXPECT_EQ(CountDistinct(50, 0.2), 54);
  EXPECT_EQ(CountDistinct(1000, 0.2), 748);
  EXPECT_EQ(CountDistinct(1000, 0.05, DataType::String()), 1034);
  EXPECT_EQ(CountDistinct(1000, 0.05, DataType::Double()), 1115);
  EXPECT_EQ(CountDistinct(0, 0.05), 0);
}

TEST(HyperLogLogTest, PrecisionAndErrors) {
  EXPECT_EQ(*HyperLogLogPlusPlus::PrecisionFor(0.05), 9);
  EXPECT_EQ(*HyperLogLogPlusPlus::PrecisionFor(0.01), 14);
  EXPECT_EQ(*HyperLogLogPlusPlus::PrecisionFor(0.39), 4);
  EXPECT_RAISES(InvalidArgument, HyperLogLogPlusPlus::PrecisionFor(0.5));
  EXPECT_RAISES(InvalidArgument, HyperLogLogPlusPlus::PrecisionFor(-0.1));
  EXPECT_RAISES(InvalidArgument, HyperLogLogPlusPlus::PrecisionFor(1e-9));
}

TEST(HyperLogLogTest, MergeAndRegistersRoundTrip) {
  HyperLogLogPlusPlus all(9), left(9), right(9);
  std::mt19937_64 rng(7);
  for (int i = 0; i < 5000; ++i) {
    uint64_t h = rng();
    all.Add(h);
    (i % 3 == 0 ? left : right).Add(h);
  }
  std::string bytes;
  right.AppendRegisters(&bytes);
  ASSERT_EQ(bytes.size(), 512u);
  ASSERT_OK(left.MergeRegisters(bytes));
  EXPECT_EQ(left.Estimate(), all.Estimate());
  EXPECT_RAISES(Corruption, left.MergeRegisters(bytes.substr(1)));
  bytes[3] = 60;  // above 64 - 9 + 1
  EXPECT_RAISES(Corruption, left.MergeRegisters(bytes));
}

TEST(QuantileSummaryTest, ExactBelowTheHeadBuffer) {
  // Fewer than 50,000 values: one sort and compression; with eps = 1e-4
  // every rank is exact.
  QuantileSummary s(1.0 / 10000);
  for (int i = 999; i >= 0; --i) s.Insert(i);
  auto q = s.Query({0.5, 0.0, 1.0, 0.25});
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ((*q)[0], 499);
  EXPECT_EQ((*q)[1], 0);
  EXPECT_EQ((*q)[2], 999);
  EXPECT_EQ((*q)[3], 249);
  QuantileSummary empty(0.01);
  EXPECT_FALSE(empty.Query({0.5}).has_value());
}

TEST(QuantileSummaryTest, MatchesSparkAcrossHeadBufferFlushes) {
  // Spark 3.5.3, one task over range(200000):
  //   percentile_approx(id, array(0.1, 0.5, 0.99), 100) WHERE id < 100000
  //     = [10504, 49999, 99999]  (two head-buffer flushes)
  //   percentile_approx(id * 7 % 1000, array(0.1, 0.5, 0.99), 100)
  //     = [92, 498, 999]          (four flushes, compressions between)
  QuantileSummary a(1.0 / 100);
  for (int i = 0; i < 100000; ++i) a.Insert(i);
  EXPECT_EQ(*a.Query({0.1, 0.5, 0.99}), (std::vector<double>{10504, 49999, 99999}));
  QuantileSummary b(1.0 / 100);
  for (int64_t i = 0; i < 200000; ++i) b.Insert(static_cast<double>(i * 7 % 1000));
  EXPECT_EQ(*b.Query({0.1, 0.5, 0.99}), (std::vector<double>{92, 498, 999}));
}

TEST(QuantileSummaryTest, ErrorBoundAcrossHeadBuffersAndMerges) {
  // 120,000 values through two head-buffer flushes, and the same values as
  // three merged summaries: every answer within eps * n ranks.
  const double eps = 0.01;
  QuantileSummary one(eps);
  std::vector<QuantileSummary> parts(3, QuantileSummary(eps));
  std::mt19937_64 rng(3);
  std::vector<int> values(120000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int>(i);
  std::shuffle(values.begin(), values.end(), rng);
  for (size_t i = 0; i < values.size(); ++i) {
    one.Insert(values[i]);
    parts[i % 3].Insert(values[i]);
  }
  for (auto& p : parts) p.Compress();
  QuantileSummary merged = parts[0];
  merged.Merge(parts[1]);
  merged.Merge(parts[2]);
  EXPECT_EQ(merged.count(), 120000);
  for (QuantileSummary* s : {&one, &merged}) {
    auto q = s->Query({0.1, 0.5, 0.9});
    ASSERT_TRUE(q.has_value());
    const double n = 120000;
    EXPECT_NEAR((*q)[0], 0.1 * n, 2 * eps * n);
    EXPECT_NEAR((*q)[1], 0.5 * n, 2 * eps * n);
    EXPECT_NEAR((*q)[2], 0.9 * n, 2 * eps * n);
  }
}

TEST(QuantileSummaryTest, StateRoundTrip) {
  QuantileSummary s(0.001);
  for (int i = 0; i < 3000; ++i) s.Insert(std::sin(i) * 100);
  s.Compress();
  std::string state;
  s.AppendState(&state);
  QuantileSummary back(0.001);
  std::string_view in = state;
  ASSERT_OK(back.ReadState(&in));
  EXPECT_TRUE(in.empty());
  EXPECT_EQ(back.count(), 3000);
  EXPECT_EQ(*back.Query({0.3, 0.7}), *s.Query({0.3, 0.7}));
  std::string_view truncated = std::string_view(state).substr(0, state.size() - 1);
  EXPECT_RAISES(Corruption, back.ReadState(&truncated));
}

TEST(ApproxAggregateTest, StreamingStatesMergeAndFinish) {
  // Two "batches" of one group: the second merges the first's stored state,
  // as the streaming aggregation does, and finishes like one aggregate over
  // all rows for HLL (register maxima) and within the bound for GK.
  AggregateSpec hll{AggKind::kApproxCountDistinct, DataType::Int()};
  AggregateSpec pct{AggKind::kPercentileApprox, DataType::Int()};
  pct.percentages = {0.5, 0.9};
  pct.percentages_array = true;
  pct.accuracy = 100;
  for (const AggregateSpec& spec : {hll, pct}) {
    ASSERT_OK_AND_ASSIGN(internal::Accumulator first, internal::Accumulator::Make(spec));
    ASSERT_OK_AND_ASSIGN(internal::Accumulator second, internal::Accumulator::Make(spec));
    ASSERT_OK_AND_ASSIGN(internal::Accumulator whole, internal::Accumulator::Make(spec));
    first.Resize(1);
    second.Resize(1);
    whole.Resize(1);
    ColumnBuilder a(DataType::Int()), b(DataType::Int());
    for (int i = 0; i < 700; ++i) a.Append<int32_t>(i);
    a.AppendNull();  // ignored
    for (int i = 700; i < 1000; ++i) b.Append<int32_t>(i);
    ColumnPtr ca = a.Finish(), cb = b.Finish();
    std::vector<int32_t> gids(701, 0);
    first.Update(ca.get(), gids.data(), 701);
    whole.Update(ca.get(), gids.data(), 701);
    second.Update(cb.get(), gids.data(), 300);
    whole.Update(cb.get(), gids.data(), 300);
    std::string stored;
    first.Serialize(0, &stored);
    std::string_view in = stored;
    ASSERT_OK(second.Merge(0, &in));
    EXPECT_TRUE(in.empty());
    ASSERT_OK_AND_ASSIGN(ColumnPtr merged, second.Finish(1));
    ASSERT_OK_AND_ASSIGN(ColumnPtr all, whole.Finish(1));
    if (spec.kind == AggKind::kApproxCountDistinct) {
      EXPECT_EQ(merged->Value<int64_t>(0), all->Value<int64_t>(0));
    } else {
      const columnar::Column& e = *merged->children[0];
      ASSERT_EQ(e.length, 2);
      EXPECT_NEAR(e.Value<int32_t>(0), 500, 20);
      EXPECT_NEAR(e.Value<int32_t>(1), 900, 20);
    }
  }
}

TEST(ApproxAggregateTest, NamesAndTypes) {
  EXPECT_EQ(*AggKindFromName("APPROX_COUNT_DISTINCT", false), AggKind::kApproxCountDistinct);
  EXPECT_EQ(*AggKindFromName("approx_percentile", false), AggKind::kPercentileApprox);
  AggregateSpec pct{AggKind::kPercentileApprox, DataType::Date()};
  pct.percentages = {0.5};
  EXPECT_EQ((*AggregateResultType(pct))->id(), columnar::TypeId::kDate);
  pct.percentages_array = true;
  EXPECT_EQ((*AggregateResultType(pct))->id(), columnar::TypeId::kArray);
  pct.arg_type = DataType::String();
  EXPECT_RAISES(InvalidArgument, AggregateResultType(pct));
  AggregateSpec bad{AggKind::kPercentileApprox, DataType::Int()};
  bad.percentages = {1.5};
  EXPECT_RAISES(InvalidArgument, internal::Accumulator::Make(bad));
  AggregateSpec bad_sd{AggKind::kApproxCountDistinct, DataType::Int()};
  bad_sd.relative_sd = 0.5;
  EXPECT_RAISES(InvalidArgument, internal::Accumulator::Make(bad_sd));
}

}  // namespace
}  // namespace silt::exec
