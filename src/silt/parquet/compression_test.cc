#include "silt/parquet/compression.h"

#include <gtest/gtest.h>

#include <string>

#include "silt/testing/gtest_util.h"

namespace silt::parquet {
namespace {

std::string SampleData() {
  std::string s;
  for (int i = 0; i < 5000; ++i) s += "row " + std::to_string(i % 97) + ";";
  return s;
}

class CodecTest : public ::testing::TestWithParam<CompressionCodec> {};

TEST_P(CodecTest, CompressedPageDecompressesToTheOriginal) {
  ASSERT_OK_AND_ASSIGN(auto c, Compressor::Make(GetParam(), 3));
  ASSERT_OK_AND_ASSIGN(auto d, Decompressor::Make(GetParam()));
  for (const std::string& input : {SampleData(), std::string(), std::string("x")}) {
    std::string compressed;
    ASSERT_OK(c->Compress(input, &compressed));
    if (GetParam() != CompressionCodec::kUncompressed && input.size() > 1000) {
      EXPECT_LT(compressed.size(), input.size() / 4);
    }
    std::string out(input.size(), '\0');
    ASSERT_OK(d->Decompress(compressed, reinterpret_cast<uint8_t*>(out.data()),
                            static_cast<int64_t>(out.size())));
    EXPECT_EQ(out, input);
  }
}

TEST_P(CodecTest, WrongDecompressedSizeIsCorruption) {
  ASSERT_OK_AND_ASSIGN(auto c, Compressor::Make(GetParam(), 3));
  ASSERT_OK_AND_ASSIGN(auto d, Decompressor::Make(GetParam()));
  const std::string input = SampleData();
  std::string compressed;
  ASSERT_OK(c->Compress(input, &compressed));
  std::string out(input.size() + 10, '\0');
  ASSERT_RAISES(Corruption, d->Decompress(compressed, reinterpret_cast<uint8_t*>(out.data()),
                                          static_cast<int64_t>(out.size())));
}

INSTANTIATE_TEST_SUITE_P(AllCodecs, CodecTest,
                         ::testing::Values(CompressionCodec::kUncompressed,
                                           CompressionCodec::kSnappy, CompressionCodec::kGzip,
                                           CompressionCodec::kZstd, CompressionCodec::kLz4Raw));

TEST(CompressionTest, GarbageInputIsCorruption) {
  const std::string garbage = "\xff\xfe\xfd this is not compressed data at all \x01\x02";
  for (CompressionCodec codec : {CompressionCodec::kSnappy, CompressionCodec::kGzip,
                                 CompressionCodec::kZstd, CompressionCodec::kLz4Raw}) {
    ASSERT_OK_AND_ASSIGN(auto d, Decompressor::Make(codec));
    std::string out(1000, '\0');
    Status s = d->Decompress(garbage, reinterpret_cast<uint8_t*>(out.data()), 1000);
    EXPECT_TRUE(s.IsCorruption()) << CodecName(codec) << ": " << s.ToString();
  }
}

TEST(CompressionTest, GzipPagesCarryTheGzipHeader) {
  ASSERT_OK_AND_ASSIGN(auto c, Compressor::Make(CompressionCodec::kGzip, 6));
  std::string compressed;
  ASSERT_OK(c->Compress(SampleData(), &compressed));
  ASSERT_GE(compressed.size(), 2u);
  EXPECT_EQ(static_cast<uint8_t>(compressed[0]), 0x1f);
  EXPECT_EQ(static_cast<uint8_t>(compressed[1]), 0x8b);
}

TEST(CompressionTest, GzipPageWithSeveralMembersDecompresses) {
  ASSERT_OK_AND_ASSIGN(auto c, Compressor::Make(CompressionCodec::kGzip, 6));
  std::string a;
  std::string b;
  ASSERT_OK(c->Compress("first member|", &a));
  ASSERT_OK(c->Compress("second member", &b));
  ASSERT_OK_AND_ASSIGN(auto d, Decompressor::Make(CompressionCodec::kGzip));
  std::string out(26, '\0');
  ASSERT_OK(d->Decompress(a + b, reinterpret_cast<uint8_t*>(out.data()), 26));
  EXPECT_EQ(out, "first member|second member");
}

TEST(CompressionTest, ImplausibleSizesAreRejectedBeforeAllocating) {
  const std::string input = SampleData();
  for (CompressionCodec codec : {CompressionCodec::kSnappy, CompressionCodec::kGzip,
                                 CompressionCodec::kZstd, CompressionCodec::kLz4Raw}) {
    ASSERT_OK_AND_ASSIGN(auto c, Compressor::Make(codec, 3));
    ASSERT_OK_AND_ASSIGN(auto d, Decompressor::Make(codec));
    std::string compressed;
    ASSERT_OK(c->Compress(input, &compressed));
    EXPECT_OK(d->CheckUncompressedSize(compressed, static_cast<int64_t>(input.size())));
    Status s = d->CheckUncompressedSize(compressed, int64_t{1} << 40);
    EXPECT_TRUE(s.IsCorruption()) << CodecName(codec) << ": " << s.ToString();
  }
}

TEST(CompressionTest, UnsupportedCodecsAreNamed) {
  Result<std::unique_ptr<Decompressor>> r = Decompressor::Make(CompressionCodec::kBrotli);
  ASSERT_RAISES(NotSupported, r);
  EXPECT_NE(r.status().message().find("BROTLI"), std::string::npos);
  ASSERT_RAISES(NotSupported, Compressor::Make(CompressionCodec::kLzo, 0));
}

}  // namespace
}  // namespace silt::parquet
