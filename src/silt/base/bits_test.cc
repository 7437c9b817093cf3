#include "silt/base/bits.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace silt {
namespace {

// One bit at a time: the definition CountSetBits must agree with.
int64_t NaiveCount(const uint8_t* bits, int64_t length) {
  int64_t count = 0;
  for (int64_t bit_idx = 0; bit_idx < length; ++bit_idx) {
    count += (bits[bit_idx / 8] >> (bit_idx % 8)) & 1;
  }
  return count;
}

TEST(BitsTest, CountsLikeANaiveLoopOnRandomBitmapsOfEveryLength) {
  std::mt19937_64 rng(20261207);
  // Every length up to 3 words and a few long ones, each at every byte
  // offset into the buffer (no alignment assumed), with densities from
  // sparse to dense so that whole words of zeros and ones occur.
  std::vector<int64_t> lengths;
  for (int64_t length = 0; length <= 200; ++length) lengths.push_back(length);
  for (int64_t length : {511, 512, 513, 4095, 4096, 4097, 65537}) lengths.push_back(length);
  for (int64_t length : lengths) {
    for (int density : {0, 1, 50, 99, 100}) {
      std::bernoulli_distribution set_bit(density / 100.0);
      for (int64_t offset = 0; offset < 8; ++offset) {
        std::vector<uint8_t> buffer(static_cast<size_t>(offset + (length + 7) / 8 + 8));
        for (auto& byte : buffer) byte = static_cast<uint8_t>(rng());
        uint8_t* bits = buffer.data() + offset;
        for (int64_t bit_idx = 0; bit_idx < length; ++bit_idx) {
          const auto mask = static_cast<uint8_t>(1u << (bit_idx % 8));
          if (set_bit(rng)) {
            bits[bit_idx / 8] |= mask;
          } else {
            bits[bit_idx / 8] &= static_cast<uint8_t>(~mask);
          }
        }
        // The bytes around the bitmap, and its bits past `length`, stay
        // random: they must not count.
        ASSERT_EQ(CountSetBits(bits, length), NaiveCount(bits, length))
            << "length " << length << ", density " << density << "%, offset " << offset;
      }
    }
  }
}

TEST(BitsTest, IgnoresBitsPastTheLengthAndReadsNoFurther) {
  // An exact-size heap buffer (ASan reports any read past it) with every
  // bit set, including the unused high bits of the last byte.
  for (int64_t length = 1; length <= 130; ++length) {
    std::vector<uint8_t> bitmap(static_cast<size_t>((length + 7) / 8), 0xFF);
    EXPECT_EQ(CountSetBits(bitmap.data(), length), length) << "length " << length;
  }
  EXPECT_EQ(CountSetBits(nullptr, 0), 0);
}

}  // namespace
}  // namespace silt
