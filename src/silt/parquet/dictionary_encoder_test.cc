#include "silt/parquet/dictionary_encoder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "silt/parquet/scratch_internal.h"

namespace silt::parquet {
namespace {

TEST(DictionaryEncoderTest, AssignsIndicesInArrivalOrder) {
  DictionaryEncoder<int64_t> dict;
  std::vector<int64_t> values = {7, -3, 7, 7, 100, -3};
  std::vector<uint32_t> indices;
  dict.Encode(values.data(), static_cast<int64_t>(values.size()), &indices);
  EXPECT_EQ(indices, (std::vector<uint32_t>{0, 1, 0, 0, 2, 1}));
  ASSERT_EQ(dict.size(), 3);
  EXPECT_EQ(dict.entries()[0], 7);
  EXPECT_EQ(dict.entries()[1], -3);
  EXPECT_EQ(dict.entries()[2], 100);
  EXPECT_EQ(dict.plain_size(8), 24);
}

TEST(DictionaryEncoderTest, GrowsPastItsInitialTable) {
  DictionaryEncoder<int32_t> dict;
  std::vector<int32_t> values;
  for (int i = 0; i < 100000; ++i) values.push_back(i * 7919 % 50000);
  std::vector<uint32_t> indices;
  dict.Encode(values.data(), static_cast<int64_t>(values.size()), &indices);
  EXPECT_EQ(dict.size(), 50000);
  for (size_t i = 0; i < values.size(); ++i) {
    ASSERT_EQ(dict.entries()[indices[i]], values[i]) << i;
  }
}

TEST(DictionaryEncoderTest, FloatsAreKeyedByTheirBits) {
  DictionaryEncoder<double> dict;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> values = {0.0, -0.0, nan, nan, 1.5, 0.0};
  std::vector<uint32_t> indices;
  dict.Encode(values.data(), static_cast<int64_t>(values.size()), &indices);
  EXPECT_EQ(indices, (std::vector<uint32_t>{0, 1, 2, 2, 3, 0}));
  EXPECT_TRUE(std::signbit(dict.entries()[1]));
}

TEST(DictionaryEncoderTest, StringsAreCopiedAndOutliveTheirSource) {
  DictionaryEncoder<std::string_view> dict;
  std::vector<uint32_t> indices;
  {
    std::vector<std::string> owned = {"apple", "", "banana", "apple", std::string(300000, 'z')};
    std::vector<std::string_view> views(owned.begin(), owned.end());
    dict.Encode(views.data(), static_cast<int64_t>(views.size()), &indices);
  }
  EXPECT_EQ(indices, (std::vector<uint32_t>{0, 1, 2, 0, 3}));
  ASSERT_EQ(dict.size(), 4);
  EXPECT_EQ(dict.entries()[0], "apple");
  EXPECT_EQ(dict.entries()[1], "");
  EXPECT_EQ(dict.entries()[2], "banana");
  EXPECT_EQ(dict.entries()[3], std::string(300000, 'z'));
  EXPECT_EQ(dict.plain_size(4), 4 * 4 + 5 + 6 + 300000);
}

TEST(DictionaryEncoderTest, StringsOfEveryLengthDifferingInOneByteGetTheirOwnIndex) {
  // HashBytes reads 16-byte steps and a tail of two overlapping words (or
  // three bytes): strings of lengths around those steps that differ in any
  // one byte, or only in length, are distinct entries, and each reads back
  // to its first index.
  std::vector<std::string> owned;
  for (size_t len = 0; len <= 40; ++len) {
    const std::string base(len, 'k');
    owned.push_back(base);
    for (size_t pos = 0; pos < len; ++pos) {
      std::string v = base;
      v[pos] = '\xff';
      owned.push_back(v);
    }
  }
  std::vector<std::string_view> views(owned.begin(), owned.end());
  DictionaryEncoder<std::string_view> dict;
  std::vector<uint32_t> indices;
  dict.Encode(views.data(), static_cast<int64_t>(views.size()), &indices);
  dict.Encode(views.data(), static_cast<int64_t>(views.size()), &indices);
  ASSERT_EQ(dict.size(), static_cast<int64_t>(views.size()));
  for (size_t i = 0; i < views.size(); ++i) {
    EXPECT_EQ(indices[i], i);
    EXPECT_EQ(indices[views.size() + i], i);
    EXPECT_EQ(dict.entries()[i], views[i]);
  }
}

TEST(DictionaryEncoderTest, ScratchVectorIndicesMatchStdVectorIndices) {
  // The column writer encodes into a ScratchVector, whose resize leaves the
  // new elements unwritten; Encode must still fill every one, including
  // after earlier contents and after a shrink.
  std::vector<int64_t> values;
  for (int64_t i = 0; i < 3000; ++i) values.push_back((i * 7919) % 257 - 100);
  DictionaryEncoder<int64_t> plain_dict;
  DictionaryEncoder<int64_t> scratch_dict;
  std::vector<uint32_t> expected;
  internal::ScratchVector<uint32_t> got;
  for (int64_t start : {0, 1000, 2999, 500}) {
    const int64_t count = static_cast<int64_t>(values.size()) - start;
    plain_dict.Encode(values.data() + start, count, &expected);
    scratch_dict.Encode(values.data() + start, count, &got);
    if (start == 2999) {
      expected.resize(expected.size() / 2);
      got.resize(got.size() / 2);
    }
  }
  ASSERT_EQ(got.size(), expected.size());
  EXPECT_TRUE(std::equal(got.begin(), got.end(), expected.begin()));
}

TEST(BytesInternalTest, EqualAgreesWithStringViewAtEveryLength) {
  // Lengths around the 4-, 8- and 16-byte word paths, equal or differing
  // in one byte anywhere; ShortEqual decides everything up to 16 bytes.
  for (size_t len = 0; len <= 24; ++len) {
    const std::string a(len, 'q');
    for (size_t pos = 0; pos <= len; ++pos) {
      std::string b = a;
      if (pos < len) b[pos] = 'r';
      EXPECT_EQ(short_bytes::Equal(a, b), a == b) << len << " " << pos;
      bool decided = false;
      const bool equal = short_bytes::ShortEqual(a, b, &decided);
      EXPECT_EQ(decided, len <= 16) << len;
      if (decided) {
        EXPECT_EQ(equal, a == b) << len << " " << pos;
      }
    }
    EXPECT_FALSE(short_bytes::Equal(a, a + "q"));
  }
}

TEST(DictionaryEncoderTest, ClearForgetsEntries) {
  DictionaryEncoder<std::string_view> dict;
  std::vector<std::string_view> values = {"a", "b"};
  std::vector<uint32_t> indices;
  dict.Encode(values.data(), 2, &indices);
  dict.Clear();
  indices.clear();
  std::vector<std::string_view> more = {"b"};
  dict.Encode(more.data(), 1, &indices);
  EXPECT_EQ(indices, (std::vector<uint32_t>{0}));
  EXPECT_EQ(dict.size(), 1);
}

TEST(DictionaryEncoderTest, WideDecimalsAreDistinguishedByHighBits) {
  DictionaryEncoder<__int128> dict;
  const __int128 big = static_cast<__int128>(1) << 100;
  std::vector<__int128> values = {1, big + 1, -big, 1, big + 1};
  std::vector<uint32_t> indices;
  dict.Encode(values.data(), 5, &indices);
  EXPECT_EQ(indices, (std::vector<uint32_t>{0, 1, 2, 0, 1}));
}

}  // namespace
}  // namespace silt::parquet
