#include "silt/base/buffer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace silt {
namespace {

// Distinct bytes, so a copy from the wrong offset shows.
std::string Pattern(size_t n, int seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i)
    s[i] = static_cast<char>((i * 131 + static_cast<size_t>(seed)) & 0xff);
  return s;
}

TEST(BufferTest, AppendCopiesEveryLengthAroundTheInlinePaths) {
  // Appends of 0..70 bytes one after another (the inline moves cover up to
  // 32 bytes, memcpy beyond), at every alignment the previous ones leave.
  Buffer buffer;
  std::string expected;
  for (size_t n = 0; n <= 70; ++n) {
    const std::string piece = Pattern(n, static_cast<int>(n));
    buffer.Append(piece.data(), static_cast<int64_t>(n));
    expected += piece;
    ASSERT_EQ(buffer.view(), expected) << "after appending " << n << " bytes";
  }
}

TEST(BufferTest, AppendWritesNoByteBeyondTheAppendedRange) {
  for (int64_t n = 1; n <= 40; ++n) {
    Buffer buffer;
    buffer.Resize(64);  // zeros
    buffer.Resize(3);
    const std::string piece = Pattern(static_cast<size_t>(n), 7);
    buffer.Append(piece.data(), n);
    ASSERT_EQ(buffer.size(), 3 + n);
    // Bytes past the end are still the zeros Resize wrote.
    for (int64_t i = 3 + n; i < 64; ++i) ASSERT_EQ(buffer.data()[i], 0) << n << " " << i;
  }
}

TEST(BufferTest, ResizeZeroFillsAndResizeUninitializedKeepsContents) {
  Buffer buffer;
  buffer.Append("abcd", 4);
  buffer.Resize(10);
  EXPECT_EQ(buffer.view(), std::string("abcd\0\0\0\0\0\0", 10));
  buffer.ResizeUninitialized(5000);  // grows: contents move along
  EXPECT_EQ(buffer.size(), 5000);
  EXPECT_GE(buffer.capacity(), 5000);
  EXPECT_EQ(buffer.view().substr(0, 10), std::string("abcd\0\0\0\0\0\0", 10));
  buffer.ResizeUninitialized(2);
  EXPECT_EQ(buffer.view(), "ab");
}

}  // namespace
}  // namespace silt
