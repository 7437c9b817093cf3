#include "silt/delta/deletion_vector.h"

#include <gtest/gtest.h>

#include <cstring>

#include "silt/testing/gtest_util.h"

namespace silt::delta {
namespace {

void PutU32(std::string* out, uint32_t v) { out->append(reinterpret_cast<const char*>(&v), 4); }
void PutU16(std::string* out, uint16_t v) { out->append(reinterpret_cast<const char*>(&v), 2); }

TEST(Z85Test, DecodesTheSpecExample) {
  ASSERT_OK_AND_ASSIGN(std::string bytes, DecodeZ85("HelloWorld"));
  EXPECT_EQ(bytes, std::string("\x86\x4F\xD2\x6F\xB5\x59\xF7\x5B", 8));
  ASSERT_RAISES(Corruption, DecodeZ85("Hello"
                                      "Wor"));
  ASSERT_RAISES(Corruption, DecodeZ85("Hell~"));
}

TEST(RoaringBitmapArrayTest, ReadsArrayRunAndMultipleHighKeys) {
  std::string bytes;
  PutU32(&bytes, 1681511377);
  uint64_t count = 2;
  bytes.append(reinterpret_cast<const char*>(&count), 8);
  // Bitmap for high key 0: no-run format, one array container {3, 7}.
  PutU32(&bytes, 0);
  PutU32(&bytes, 12346);
  PutU32(&bytes, 1);
  PutU16(&bytes, 0);
  PutU16(&bytes, 1);
  PutU32(&bytes, 0);  // offsets
  PutU16(&bytes, 3);
  PutU16(&bytes, 7);
  // Bitmap for high key 1: run format, one run container [10, 12].
  PutU32(&bytes, 1);
  PutU32(&bytes, 12347);  // (1 container - 1) << 16 | cookie
  bytes.push_back(1);     // container 0 is a run container
  PutU16(&bytes, 0);
  PutU16(&bytes, 2);
  PutU16(&bytes, 1);  // one run
  PutU16(&bytes, 10);
  PutU16(&bytes, 2);
  ASSERT_OK_AND_ASSIGN(auto rows, ParseRoaringBitmapArray(bytes));
  const uint64_t high = 1ull << 32;
  EXPECT_EQ(rows, (std::vector<uint64_t>{3, 7, high + 10, high + 11, high + 12}));
  ASSERT_RAISES(Corruption, ParseRoaringBitmapArray(bytes.substr(0, bytes.size() - 1)));
  ASSERT_RAISES(Corruption, ParseRoaringBitmapArray("nope"));
}

TEST(DeletionVectorTest, LoadsInlineVectors) {
  // Z85 of the array {3, 7} above (high key 0) padded to a multiple of 4.
  std::string bytes;
  PutU32(&bytes, 1681511377);
  uint64_t count = 1;
  bytes.append(reinterpret_cast<const char*>(&count), 8);
  PutU32(&bytes, 0);
  PutU32(&bytes, 12346);
  PutU32(&bytes, 1);
  PutU16(&bytes, 0);
  PutU16(&bytes, 1);
  PutU32(&bytes, 0);
  PutU16(&bytes, 3);
  PutU16(&bytes, 7);
  const int64_t size = static_cast<int64_t>(bytes.size());
  while (bytes.size() % 4 != 0) bytes.push_back('\0');
  static constexpr std::string_view kAlphabet =
      "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";
  std::string z85;
  for (size_t pos = 0; pos < bytes.size(); pos += 4) {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v = (v << 8) | static_cast<uint8_t>(bytes[pos + i]);
    char group[5];
    for (int i = 4; i >= 0; --i) {
      group[i] = kAlphabet[v % 85];
      v /= 85;
    }
    z85.append(group, 5);
  }
  DeletionVectorDescriptor dv;
  dv.storage_type = "i";
  dv.path_or_inline_dv = z85;
  dv.size_in_bytes = size;
  dv.cardinality = 2;
  ASSERT_OK_AND_ASSIGN(auto rows, LoadDeletionVector(nullptr, "/t", dv));
  EXPECT_EQ(rows, (std::vector<uint64_t>{3, 7}));
  dv.storage_type = "x";
  ASSERT_RAISES(NotSupported, LoadDeletionVector(nullptr, "/t", dv));
}

}  // namespace
}  // namespace silt::delta
