#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "silt/columnar/column.h"
#include "silt/parquet/rle_decoder.h"
#include "silt/parquet/rle_encoder.h"

namespace silt::parquet {
namespace {

std::vector<uint32_t> Decode(std::string_view bytes, int bit_width, int64_t n) {
  RleDecoder d(reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int64_t>(bytes.size()),
               bit_width);
  std::vector<uint32_t> out(static_cast<size_t>(n));
  int64_t got = d.GetBatch(out.data(), n);
  EXPECT_FALSE(d.corrupt());
  out.resize(static_cast<size_t>(got));
  return out;
}

std::string Encode(const std::vector<uint32_t>& values, int bit_width) {
  RleEncoder e(bit_width);
  for (uint32_t v : values) e.Put(v);
  EXPECT_EQ(e.num_values(), static_cast<int64_t>(values.size()));
  return std::string(e.Finish());
}

uint32_t MaxFor(int bit_width) { return bit_width == 32 ? 0xFFFFFFFFu : (1u << bit_width) - 1; }

// Mixed data: random literals, runs of 1..40, runs of thousands.
std::vector<uint32_t> MixedValues(int bit_width, uint32_t seed) {
  std::mt19937 rng(seed);
  const uint32_t max = MaxFor(bit_width);
  std::uniform_int_distribution<uint32_t> value(0, max);
  std::vector<uint32_t> v;
  for (int block = 0; block < 60; ++block) {
    int kind = static_cast<int>(rng() % 3);
    if (kind == 0) {
      int n = static_cast<int>(rng() % 30);
      for (int i = 0; i < n; ++i) v.push_back(value(rng));
    } else if (kind == 1) {
      v.insert(v.end(), rng() % 40 + 1, value(rng));
    } else {
      v.insert(v.end(), rng() % 3000 + 100, value(rng));
    }
  }
  v.push_back(max);
  return v;
}

class RleBitWidthTest : public ::testing::TestWithParam<int> {};

TEST_P(RleBitWidthTest, MixedRunsAndLiteralsRoundTrip) {
  const int bw = GetParam();
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    std::vector<uint32_t> values = MixedValues(bw, seed);
    std::string bytes = Encode(values, bw);
    EXPECT_EQ(Decode(bytes, bw, static_cast<int64_t>(values.size())), values);
  }
}

TEST_P(RleBitWidthTest, EveryLengthUpToThreeGroupsRoundTrips) {
  const int bw = GetParam();
  std::mt19937 rng(static_cast<uint32_t>(bw));
  for (int n = 1; n <= 24; ++n) {
    std::vector<uint32_t> values;
    for (int i = 0; i < n; ++i) values.push_back(static_cast<uint32_t>(rng()) & MaxFor(bw));
    EXPECT_EQ(Decode(Encode(values, bw), bw, n), values) << "n=" << n;
  }
}

TEST_P(RleBitWidthTest, LongRunTakesAFewBytes) {
  const int bw = GetParam();
  std::vector<uint32_t> values(1000000, MaxFor(bw));
  std::string bytes = Encode(values, bw);
  EXPECT_LE(bytes.size(), 4u + 4u);  // varint header + value
  EXPECT_EQ(Decode(bytes, bw, 1000000), values);
}

INSTANTIATE_TEST_SUITE_P(AllWidths, RleBitWidthTest, ::testing::Range(0, 33));

TEST(RleEncoderTest, BitPackedGroupMatchesTheSpecExample) {
  // Encodings.md: 0..7 at width 3 pack to 10001000 11000110 11111010.
  std::string bytes = Encode({0, 1, 2, 3, 4, 5, 6, 7}, 3);
  EXPECT_EQ(bytes, std::string("\x03\x88\xc6\xfa", 4));
}

TEST(RleEncoderTest, RepeatedRunHeaderAndValue) {
  // 100 copies of 5 at width 3: header varint(100 << 1) = 0xC8 0x01, value 1 byte.
  std::string bytes = Encode(std::vector<uint32_t>(100, 5), 3);
  EXPECT_EQ(bytes, std::string("\xc8\x01\x05", 3));
}

TEST(RleEncoderTest, PutRunEqualsRepeatedPut) {
  std::vector<uint32_t> values;
  RleEncoder bulk(2);
  auto add = [&](uint32_t v, int64_t n) {
    bulk.PutRun(v, n);
    values.insert(values.end(), static_cast<size_t>(n), v);
  };
  add(1, 3);
  add(2, 20);
  add(2, 5);
  add(0, 1);
  add(3, 7);
  add(3, 100000);
  add(1, 2);
  std::string bytes(bulk.Finish());
  EXPECT_EQ(bulk.num_values(), static_cast<int64_t>(values.size()));
  EXPECT_EQ(Decode(bytes, 2, static_cast<int64_t>(values.size())), values);
}

TEST_P(RleBitWidthTest, PutManyEqualsPutOneByOne) {
  // Runs of every length around the group size, literals, and a run
  // pending or values buffered when PutMany starts: the bytes equal those
  // of Put() value by value.
  const int width = GetParam();
  const uint32_t mask = width == 32 ? ~uint32_t{0} : (uint32_t{1} << width) - 1;
  std::mt19937 rng(static_cast<uint32_t>(183 + width));
  for (int trial = 0; trial < 40; ++trial) {
    std::vector<uint32_t> values;
    while (values.size() < 300) {
      const uint32_t v = static_cast<uint32_t>(rng()) & mask;
      const int repeat = (rng() % 3 == 0) ? static_cast<int>(rng() % 20) + 1 : 1;
      for (int r = 0; r < repeat; ++r) values.push_back(v);
    }
    const size_t split = rng() % values.size();
    RleEncoder one_by_one(width);
    for (uint32_t v : values) one_by_one.Put(v);
    RleEncoder many(width);
    for (size_t i = 0; i < split; ++i) many.Put(values[i]);
    many.PutMany(values.data() + split, static_cast<int64_t>(values.size() - split));
    EXPECT_EQ(many.num_values(), one_by_one.num_values());
    EXPECT_EQ(std::string(many.Finish()), std::string(one_by_one.Finish()))
        << "width " << width << " trial " << trial << " split " << split;
  }
}

TEST(RleEncoderTest, ResetStartsAFreshEncoding) {
  RleEncoder e(4);
  e.PutRun(9, 50);
  std::string first(e.Finish());
  e.Reset(4);
  e.PutRun(9, 50);
  EXPECT_EQ(std::string(e.Finish()), first);
}

TEST(RleDecoderTest, DecodesInSmallBatches) {
  std::vector<uint32_t> values = MixedValues(5, 11);
  std::string bytes = Encode(values, 5);
  RleDecoder d(reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int64_t>(bytes.size()),
               5);
  std::vector<uint32_t> out;
  uint8_t buf[3];
  while (true) {
    int64_t got = d.GetBatch(buf, 3);
    out.insert(out.end(), buf, buf + got);
    if (got < 3) break;
  }
  EXPECT_EQ(out, values);
}

TEST(RleDecoderTest, GetBitsBuildsAValidityBitmap) {
  std::vector<uint32_t> levels;
  for (int i = 0; i < 1000; ++i) levels.push_back(i % 7 == 0 || (i > 300 && i < 600) ? 1 : 0);
  std::string bytes = Encode(levels, 1);
  std::vector<uint8_t> bits(200, 0xAA);
  RleDecoder d(reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int64_t>(bytes.size()),
               1);
  int64_t ones = 0;
  ASSERT_EQ(d.GetBits(bits.data(), 5, 1000, &ones), 1000);
  int64_t expected_ones = 0;
  for (int i = 0; i < 1000; ++i) {
    EXPECT_EQ(columnar::GetBit(bits.data(), 5 + i), levels[static_cast<size_t>(i)] != 0) << i;
    expected_ones += levels[static_cast<size_t>(i)];
  }
  EXPECT_EQ(ones, expected_ones);
}

TEST(RleDecoderTest, TruncatedInputStopsAndFlagsCorruption) {
  std::string bytes = Encode(std::vector<uint32_t>(100, 5), 3);
  bytes.pop_back();  // drop the run's value byte
  RleDecoder d(reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int64_t>(bytes.size()),
               3);
  uint32_t out[100];
  EXPECT_EQ(d.GetBatch(out, 100), 0);
  EXPECT_TRUE(d.corrupt());
}

TEST(RleDecoderTest, RunValueWiderThanBitWidthIsCorrupt) {
  std::string bytes("\x08\x09", 2);  // run of 4 copies of 9 at width 3
  RleDecoder d(reinterpret_cast<const uint8_t*>(bytes.data()), 2, 3);
  uint32_t out[4];
  EXPECT_EQ(d.GetBatch(out, 4), 0);
  EXPECT_TRUE(d.corrupt());
}

TEST(RleDecoderTest, ShortStreamReturnsWhatItHas) {
  std::string bytes = Encode(std::vector<uint32_t>(10, 1), 1);
  RleDecoder d(reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int64_t>(bytes.size()),
               1);
  uint32_t out[20];
  EXPECT_EQ(d.GetBatch(out, 20), 10);
  EXPECT_FALSE(d.corrupt());
}

}  // namespace
}  // namespace silt::parquet
