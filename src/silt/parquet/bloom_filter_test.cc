#include "silt/parquet/bloom_filter.h"

#include <gtest/gtest.h>

#include <string>

namespace silt::parquet {
namespace {

TEST(BloomFilter, OptimalBytesIsPowerOfTwoWithinBounds) {
  EXPECT_EQ(SplitBlockBloomFilter::OptimalBytes(1, 0.01), SplitBlockBloomFilter::kMinBytes);
  const int64_t b = SplitBlockBloomFilter::OptimalBytes(1'000'000, 0.01);
  EXPECT_EQ(b & (b - 1), 0);
  EXPECT_GE(b, 1'000'000);  // ~9.6 bits per value at 1%
  EXPECT_EQ(SplitBlockBloomFilter::OptimalBytes(1LL << 40, 0.001),
            SplitBlockBloomFilter::kMaxBytes);
}

TEST(BloomFilter, InsertedValuesAreFoundAndFewOthers) {
  SplitBlockBloomFilter f(SplitBlockBloomFilter::OptimalBytes(1000, 0.01));
  for (int64_t i = 0; i < 1000; ++i) f.Insert(SplitBlockBloomFilter::HashInt64(i * 7));
  for (int64_t i = 0; i < 1000; ++i) {
    EXPECT_TRUE(f.MightContain(SplitBlockBloomFilter::HashInt64(i * 7)));
  }
  int false_positives = 0;
  for (int64_t i = 0; i < 10000; ++i) {
    false_positives += f.MightContain(SplitBlockBloomFilter::HashInt64(-1 - i));
  }
  EXPECT_LT(false_positives, 300);  // 1% expected; generous bound
}

TEST(BloomFilter, SerializeParseRoundTrip) {
  SplitBlockBloomFilter f(64);
  f.Insert(SplitBlockBloomFilter::Hash("hello"));
  std::string bytes;
  f.Serialize(&bytes);
  Result<SplitBlockBloomFilter> back = SplitBlockBloomFilter::Parse(bytes);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->num_bytes(), 64);
  EXPECT_TRUE(back->MightContain(SplitBlockBloomFilter::Hash("hello")));
}

TEST(BloomFilter, XxHashMatchesSpecVector) {
  // XXH64("", seed 0), the reference implementation's known value.
  EXPECT_EQ(SplitBlockBloomFilter::Hash(""), 0xEF46DB3751D8E999ULL);
}

TEST(BloomFilter, CorruptHeadersAreErrors) {
  SplitBlockBloomFilter f(64);
  std::string bytes;
  f.Serialize(&bytes);
  // Truncated bitset.
  EXPECT_FALSE(SplitBlockBloomFilter::Parse(bytes.substr(0, bytes.size() - 1)).ok());
  // Truncated header.
  EXPECT_FALSE(SplitBlockBloomFilter::Parse(bytes.substr(0, 3)).ok());
  // Garbage.
  EXPECT_FALSE(SplitBlockBloomFilter::Parse(std::string(100, '\xff')).ok());
  // A huge numBytes never allocates: the header is rejected first.
  EXPECT_FALSE(SplitBlockBloomFilter::Parse(std::string("\x15\xfe\xff\xff\xff\x0f", 6)).ok());
}

}  // namespace
}  // namespace silt::parquet
