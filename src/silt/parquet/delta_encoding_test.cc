#include "silt/parquet/delta_encoding.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "silt/testing/gtest_util.h"

namespace silt::parquet {
namespace {

template <typename T>
class DeltaBinaryPackedTest : public ::testing::Test {};
using IntTypes = ::testing::Types<int32_t, int64_t>;
TYPED_TEST_SUITE(DeltaBinaryPackedTest, IntTypes);

template <typename T>
std::vector<std::vector<T>> Cases() {
  std::mt19937_64 rng(7);
  std::vector<std::vector<T>> cases = {{}, {42}, {1, 2}, {5, 5, 5, 5}};
  std::vector<T> extremes;
  for (int i = 0; i < 300; ++i) {
    extremes.push_back(i % 2 ? std::numeric_limits<T>::max() : std::numeric_limits<T>::min());
  }
  cases.push_back(extremes);
  for (int64_t n : {127, 128, 129, 1000, 4097}) {
    std::vector<T> random;
    std::vector<T> sorted;
    for (int64_t i = 0; i < n; ++i) {
      random.push_back(static_cast<T>(rng()));
      sorted.push_back(static_cast<T>(i * 3 - 100 + static_cast<int64_t>(rng() % 4)));
    }
    cases.push_back(random);
    cases.push_back(sorted);
  }
  return cases;
}

TYPED_TEST(DeltaBinaryPackedTest, RoundTripsEveryShape) {
  using T = TypeParam;
  for (const std::vector<T>& values : Cases<T>()) {
    std::string encoded;
    DeltaBinaryPackedEncode<T>(values.data(), static_cast<int64_t>(values.size()), &encoded);
    encoded += "tail";  // data that follows (DELTA_LENGTH_BYTE_ARRAY bytes)
    std::vector<T> decoded(values.size());
    int64_t consumed = 0;
    ASSERT_OK(DeltaBinaryPackedDecode<T>(
        reinterpret_cast<const uint8_t*>(encoded.data()), static_cast<int64_t>(encoded.size()),
        static_cast<int64_t>(values.size()), decoded.data(), &consumed));
    EXPECT_EQ(decoded, values);
    EXPECT_EQ(encoded.substr(static_cast<size_t>(consumed)), "tail") << values.size();
  }
}

TYPED_TEST(DeltaBinaryPackedTest, TruncatedOrMalformedInputIsCorruption) {
  using T = TypeParam;
  std::vector<T> values;
  for (int i = 0; i < 500; ++i) values.push_back(static_cast<T>(i * i * 7919));
  std::string encoded;
  DeltaBinaryPackedEncode<T>(values.data(), 500, &encoded);
  std::vector<T> out(500);
  int64_t consumed = 0;
  // Cuts within the data (the zero padding of the last miniblock may go).
  for (size_t cut = 0; cut < encoded.size() / 2; cut += 7) {
    ASSERT_RAISES(Corruption, DeltaBinaryPackedDecode<T>(
                                  reinterpret_cast<const uint8_t*>(encoded.data()),
                                  static_cast<int64_t>(cut), 500, out.data(), &consumed));
  }
  // More values asked for than the stream holds.
  std::vector<T> more(501);
  ASSERT_RAISES(Corruption, DeltaBinaryPackedDecode<T>(
                                reinterpret_cast<const uint8_t*>(encoded.data()),
                                static_cast<int64_t>(encoded.size()), 501, more.data(), &consumed));
  // A block size that is not a multiple of 128.
  const uint8_t bad_block[] = {100, 4, 1, 0};
  ASSERT_RAISES(Corruption, DeltaBinaryPackedDecode<T>(bad_block, 4, 1, out.data(), &consumed));
  // A bit width wider than the type.
  const uint8_t wide[] = {0x80, 0x01, 4, 3, 0, 0, 65, 0, 0, 0};
  ASSERT_RAISES(Corruption,
                DeltaBinaryPackedDecode<T>(wide, sizeof(wide), 3, out.data(), &consumed));
}

std::vector<std::string> Strings() {
  std::vector<std::string> v = {"", "a", "apple", "applesauce", "apply", "banana", "", "b"};
  for (int i = 0; i < 400; ++i) {
    v.push_back("prefix/" + std::to_string(i * 37) + std::string(i % 9, 'z'));
  }
  return v;
}

std::vector<std::string_view> Views(const std::vector<std::string>& s) {
  return std::vector<std::string_view>(s.begin(), s.end());
}

TEST(DeltaByteArrayTest, LengthAndIncrementalEncodingsRoundTrip) {
  const std::vector<std::string> strings = Strings();
  const std::vector<std::string_view> views = Views(strings);
  const int64_t n = static_cast<int64_t>(views.size());
  std::vector<int32_t> scratch;
  {
    std::string encoded;
    DeltaLengthByteArrayEncode(views.data(), n, &encoded);
    std::vector<std::string_view> out(views.size());
    ASSERT_OK(DeltaLengthByteArrayDecode(reinterpret_cast<const uint8_t*>(encoded.data()),
                                         static_cast<int64_t>(encoded.size()), n, out.data(),
                                         &scratch));
    EXPECT_EQ(out, views);
    ASSERT_RAISES(Corruption,
                  DeltaLengthByteArrayDecode(reinterpret_cast<const uint8_t*>(encoded.data()),
                                             static_cast<int64_t>(encoded.size()) - 1, n,
                                             out.data(), &scratch));
  }
  {
    std::string encoded;
    DeltaByteArrayEncode(views.data(), n, &encoded);
    std::vector<std::string_view> out(views.size());
    std::string storage;
    ASSERT_OK(DeltaByteArrayDecode(reinterpret_cast<const uint8_t*>(encoded.data()),
                                   static_cast<int64_t>(encoded.size()), n, out.data(), &storage,
                                   &scratch));
    EXPECT_EQ(out, views);
    ASSERT_RAISES(Corruption, DeltaByteArrayDecode(reinterpret_cast<const uint8_t*>(encoded.data()),
                                                   static_cast<int64_t>(encoded.size()) / 2, n,
                                                   out.data(), &storage, &scratch));
  }
}

TEST(DeltaByteArrayTest, PrefixLongerThanThePreviousValueIsCorruption) {
  // Prefix lengths {0, 5}: the second value reuses 5 bytes of a 1-byte one.
  std::string encoded;
  const int32_t prefixes[] = {0, 5};
  DeltaBinaryPackedEncode<int32_t>(prefixes, 2, &encoded);
  const std::string_view suffixes[] = {"a", "b"};
  DeltaLengthByteArrayEncode(suffixes, 2, &encoded);
  std::vector<std::string_view> out(2);
  std::string storage;
  std::vector<int32_t> scratch;
  ASSERT_RAISES(Corruption, DeltaByteArrayDecode(reinterpret_cast<const uint8_t*>(encoded.data()),
                                                 static_cast<int64_t>(encoded.size()), 2,
                                                 out.data(), &storage, &scratch));
}

TEST(ByteStreamSplitTest, RoundTripsEachWidthAndRejectsShortInput) {
  for (int width : {4, 8, 12, 16}) {
    std::vector<uint8_t> values(static_cast<size_t>(width * 101));
    for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<uint8_t>(i * 31 + 7);
    std::string encoded;
    ByteStreamSplitEncode(values.data(), 101, width, &encoded);
    ASSERT_EQ(encoded.size(), values.size());
    // Byte 1 of value 0 sits at the start of the second stream.
    EXPECT_EQ(static_cast<uint8_t>(encoded[101]), values[1]);
    std::vector<uint8_t> decoded(values.size());
    ASSERT_OK(ByteStreamSplitDecode(reinterpret_cast<const uint8_t*>(encoded.data()),
                                    static_cast<int64_t>(encoded.size()), 101, width,
                                    decoded.data()));
    EXPECT_EQ(decoded, values);
    ASSERT_RAISES(Corruption,
                  ByteStreamSplitDecode(reinterpret_cast<const uint8_t*>(encoded.data()),
                                        static_cast<int64_t>(encoded.size()) - 1, 101, width,
                                        decoded.data()));
  }
}

}  // namespace
}  // namespace silt::parquet
