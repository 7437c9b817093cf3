#include "silt/parquet/statistics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace silt::parquet {
namespace {

template <typename T>
T FromLittleEndian(const std::string& bytes) {
  T v;
  EXPECT_EQ(bytes.size(), sizeof(T));
  std::memcpy(&v, bytes.data(), sizeof(T));
  return v;
}

TEST(StatisticsTest, SignedIntegersOrderNegativesFirst) {
  TypedStatistics<int32_t> s;
  std::vector<int32_t> values = {5, -7, 0, std::numeric_limits<int32_t>::min() + 1, 12};
  s.Update(values.data(), 5);
  s.AddNulls(2);
  Statistics t = s.ToThrift(PhysicalType::kInt32, 0);
  EXPECT_EQ(FromLittleEndian<int32_t>(*t.min_value), std::numeric_limits<int32_t>::min() + 1);
  EXPECT_EQ(FromLittleEndian<int32_t>(*t.max_value), 12);
  // Legacy fields agree with signed order for INT32, so they are written too.
  EXPECT_EQ(t.min, t.min_value);
  EXPECT_EQ(t.max, t.max_value);
  EXPECT_EQ(t.null_count, 2);
}

TEST(StatisticsTest, FloatingPointWithNaNHasNoBoundsAndZerosWiden) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  TypedStatistics<double> s;
  std::vector<double> values = {nan, 0.0, -3.5, nan, 2.25};
  s.Update(values.data(), 5);
  EXPECT_EQ(s.nan_count(), 2);
  // The NaN-free extremes are kept (Delta's stats use them)...
  EXPECT_EQ(s.min(), -3.5);
  EXPECT_EQ(s.max(), 2.25);
  // ...but the footer gets none: parquet-mr would skip the NaN rows by them.
  Statistics t = s.ToThrift(PhysicalType::kDouble, 0);
  EXPECT_FALSE(t.min_value.has_value());
  EXPECT_FALSE(t.max_value.has_value());
  EXPECT_FALSE(t.min.has_value());
  EXPECT_EQ(t.nan_count, 2);
  TypedStatistics<double> finite;
  std::vector<double> f = {1.0, -3.5};
  finite.Update(f.data(), 2);
  Statistics tf = finite.ToThrift(PhysicalType::kDouble, 0);
  EXPECT_EQ(FromLittleEndian<double>(*tf.min_value), -3.5);
  EXPECT_EQ(FromLittleEndian<double>(*tf.max_value), 1.0);

  TypedStatistics<float> zeros;
  std::vector<float> z = {0.0f, -0.0f, 0.0f};
  zeros.Update(z.data(), 3);
  Statistics tz = zeros.ToThrift(PhysicalType::kFloat, 0);
  EXPECT_TRUE(std::signbit(FromLittleEndian<float>(*tz.min_value)));
  EXPECT_FALSE(std::signbit(FromLittleEndian<float>(*tz.max_value)));
}

TEST(StatisticsTest, AllNaNHasNoMinMax) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  TypedStatistics<float> s;
  std::vector<float> values = {nan, nan};
  s.Update(values.data(), 2);
  EXPECT_FALSE(s.has_min_max());
  Statistics t = s.ToThrift(PhysicalType::kFloat, 0);
  EXPECT_FALSE(t.min_value.has_value());
  EXPECT_FALSE(t.max_value.has_value());
  EXPECT_EQ(t.nan_count, 2);
}

TEST(StatisticsTest, StringsCompareAsUnsignedBytes) {
  TypedStatistics<std::string_view> s;
  // "\xc3\xa9" (é) sorts after ASCII under unsigned order, before it under
  // signed char order.
  std::vector<std::string_view> values = {"zebra", "\xc3\xa9t\xc3\xa9", "apple", "Zoo", ""};
  s.Update(values.data(), 3);
  s.Update(values.data() + 3, 2);
  Statistics t = s.ToThrift(PhysicalType::kByteArray, 0);
  EXPECT_EQ(*t.min_value, "");
  EXPECT_EQ(*t.max_value, "\xc3\xa9t\xc3\xa9");
  // The legacy signed order disagrees for BYTE_ARRAY: not written.
  EXPECT_FALSE(t.min.has_value());
  EXPECT_FALSE(t.max.has_value());
}

TEST(StatisticsTest, StringExtremaAreThoseOfStringViewOrder) {
  // Values that repeat the extrema, differ in high and low bytes at every
  // position, and are prefixes of each other, in several orders: Update's
  // extrema are std::min_element's and std::max_element's.
  std::mt19937 rng(183);
  std::vector<std::string> owned;
  for (int len = 0; len <= 20; ++len) {
    for (int variant = 0; variant < 12; ++variant) {
      std::string v(static_cast<size_t>(len), 'a');
      for (char& c : v) c = static_cast<char>("a\x7f\x80\xff"[rng() % 4]);
      owned.push_back(v);
      owned.push_back(v);
    }
  }
  std::vector<std::string_view> views(owned.begin(), owned.end());
  for (int round = 0; round < 4; ++round) {
    std::shuffle(views.begin(), views.end(), rng);
    TypedStatistics<std::string_view> s;
    s.Update(views.data(), static_cast<int64_t>(views.size()) / 2);
    s.Update(views.data() + views.size() / 2,
             static_cast<int64_t>(views.size() - views.size() / 2));
    EXPECT_EQ(s.min(), *std::min_element(views.begin(), views.end()));
    EXPECT_EQ(s.max(), *std::max_element(views.begin(), views.end()));
  }
}

TEST(StatisticsTest, StringExtremaOutliveTheBatch) {
  TypedStatistics<std::string_view> s;
  {
    std::vector<std::string> owned = {"m", "b", "y"};
    std::vector<std::string_view> views(owned.begin(), owned.end());
    s.Update(views.data(), 3);
  }
  EXPECT_EQ(s.min(), "b");
  EXPECT_EQ(s.max(), "y");
}

TEST(StatisticsTest, OversizedStringsKeepOnlyTheNullCount) {
  TypedStatistics<std::string_view> s;
  std::string big(kMaxStatisticsValueBytes + 1, 'q');
  std::string_view v = big;
  s.Update(&v, 1);
  s.AddNulls(1);
  Statistics t = s.ToThrift(PhysicalType::kByteArray, 0);
  EXPECT_FALSE(t.max_value.has_value());
  EXPECT_EQ(t.null_count, 1);
}

TEST(StatisticsTest, WideDecimalsAreSignedAndBigEndian) {
  TypedStatistics<__int128> s;
  std::vector<__int128> values = {static_cast<__int128>(-1), 255,
                                  -(static_cast<__int128>(1) << 70)};
  s.Update(values.data(), 3);
  Statistics t = s.ToThrift(PhysicalType::kFixedLenByteArray, 11);
  std::string expected_min(11, '\0');
  // -(2^70) in 11 bytes big-endian: 0xFF.. with byte 2 = 0xC0 (bits 70+).
  expected_min[0] = '\xff';
  expected_min[1] = '\xff';
  expected_min[2] = '\xc0';
  EXPECT_EQ(*t.min_value, expected_min);
  std::string expected_max(11, '\0');
  expected_max[10] = '\xff';
  EXPECT_EQ(*t.max_value, expected_max);
  EXPECT_FALSE(t.min.has_value());  // FIXED_LEN_BYTE_ARRAY: no legacy fields
}

TEST(StatisticsTest, MergeCombinesChunks) {
  TypedStatistics<int64_t> a;
  TypedStatistics<int64_t> b;
  std::vector<int64_t> va = {3, 9};
  std::vector<int64_t> vb = {-4, 5};
  a.Update(va.data(), 2);
  a.AddNulls(1);
  b.Update(vb.data(), 2);
  b.AddNulls(2);
  TypedStatistics<int64_t> total;
  total.Merge(a);
  total.Merge(b);
  EXPECT_EQ(total.min(), -4);
  EXPECT_EQ(total.max(), 9);
  EXPECT_EQ(total.null_count(), 3);
}

TEST(StatisticsTest, BooleansOrderFalseBeforeTrue) {
  TypedStatistics<uint8_t> s;
  std::vector<uint8_t> values = {1, 1, 0};
  s.Update(values.data(), 3);
  Statistics t = s.ToThrift(PhysicalType::kBoolean, 0);
  EXPECT_EQ(*t.min_value, std::string(1, '\0'));
  EXPECT_EQ(*t.max_value, std::string(1, '\1'));
}

}  // namespace
}  // namespace silt::parquet
