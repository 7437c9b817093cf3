#include "silt/parquet/compression.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

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

// A page body in two buffers (levels, values) compresses to what the joined
// body compresses to, byte for byte, wherever the split falls: snappy reads
// the pieces in place, across its 64 KiB blocks too.
TEST_P(CodecTest, PiecesCompressLikeTheJoinedInput) {
  ASSERT_OK_AND_ASSIGN(auto c, Compressor::Make(GetParam(), 3));
  std::string input;
  while (input.size() < 200000) input += SampleData();
  for (size_t split : {size_t{0}, size_t{1}, size_t{7}, size_t{65536}, size_t{65540},
                       input.size() - 3, input.size()}) {
    std::string joined;
    ASSERT_OK(c->Compress(input, &joined));
    ASSERT_OK_AND_ASSIGN(std::string_view pieces,
                         c->CompressPieces(std::string_view(input).substr(0, split),
                                           std::string_view(input).substr(split)));
    EXPECT_EQ(std::string(pieces), joined) << "split at " << split;
  }
}

INSTANTIATE_TEST_SUITE_P(AllCodecs, CodecTest,
                         ::testing::Values(CompressionCodec::kUncompressed,
                                           CompressionCodec::kSnappy, CompressionCodec::kGzip,
                                           CompressionCodec::kZstd, CompressionCodec::kLz4Raw));

TEST(CompressionTest, GarbageInputIsCorruption) {
  const std::string garbage = "\xff\xfe\xfd this is not compressed data at all \x01\x02";
  for (CompressionCodec codec :
       {CompressionCodec::kSnappy, CompressionCodec::kGzip, CompressionCodec::kZstd,
        CompressionCodec::kLz4Raw, CompressionCodec::kLz4, CompressionCodec::kBrotli}) {
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
  Result<std::unique_ptr<Decompressor>> r = Decompressor::Make(CompressionCodec::kLzo);
  ASSERT_RAISES(NotSupported, r);
  EXPECT_NE(r.status().message().find("LZO"), std::string::npos);
  ASSERT_RAISES(NotSupported, Compressor::Make(CompressionCodec::kLzo, 0));
  ASSERT_RAISES(NotSupported, Compressor::Make(CompressionCodec::kBrotli, 0));
}

// pa.compress(b"brotli page: " + b"abcabcabc" * 20, codec="brotli").
const char kBrotliPage[] =
    "\x1b\xc0\x00\x00\x44\x6f\x78\xbd\x7b\x6e\xdf\xb7\x49\x52\x8a\x24\x14\x0c\xc2\x55\x37"
    "\xdf\x85\x65\x86\x81\x72";

std::string BrotliPlain() {
  std::string s = "brotli page: ";
  for (int i = 0; i < 20; ++i) s += "abcabcabc";
  return s;
}

TEST(CompressionTest, BrotliPagesDecompress) {
  const std::string page(kBrotliPage, sizeof(kBrotliPage) - 1);
  const std::string plain = BrotliPlain();
  ASSERT_OK_AND_ASSIGN(auto d, Decompressor::Make(CompressionCodec::kBrotli));
  ASSERT_OK(d->CheckUncompressedSize(page, static_cast<int64_t>(plain.size())));
  std::string out(plain.size(), '\0');
  ASSERT_OK(d->Decompress(page, reinterpret_cast<uint8_t*>(out.data()),
                          static_cast<int64_t>(out.size())));
  EXPECT_EQ(out, plain);
  // Wrong size, truncated stream, garbage: Corruption.
  std::string big(plain.size() + 5, '\0');
  ASSERT_RAISES(Corruption, d->Decompress(page, reinterpret_cast<uint8_t*>(big.data()),
                                          static_cast<int64_t>(big.size())));
  std::string small(plain.size() - 5, '\0');
  ASSERT_RAISES(Corruption, d->Decompress(page, reinterpret_cast<uint8_t*>(small.data()),
                                          static_cast<int64_t>(small.size())));
  ASSERT_RAISES(Corruption, d->Decompress(page.substr(0, page.size() / 2),
                                          reinterpret_cast<uint8_t*>(out.data()),
                                          static_cast<int64_t>(out.size())));
  ASSERT_RAISES(Corruption,
                d->Decompress("\xff\xfe\xfd garbage", reinterpret_cast<uint8_t*>(out.data()),
                              static_cast<int64_t>(out.size())));
  ASSERT_RAISES(Corruption, d->CheckUncompressedSize(page, int64_t{1} << 40));
}

std::string BigEndian32(uint32_t v) {
  std::string s(4, '\0');
  for (int i = 0; i < 4; ++i) s[static_cast<size_t>(i)] = static_cast<char>(v >> (24 - 8 * i));
  return s;
}

TEST(CompressionTest, HadoopFramedLz4Decompresses) {
  // Two Hadoop blocks: [raw size][compressed size] big-endian, LZ4 block.
  ASSERT_OK_AND_ASSIGN(auto c, Compressor::Make(CompressionCodec::kLz4Raw, 0));
  const std::string a = SampleData();
  const std::string b = "a second, short block";
  std::string ca, cb;
  ASSERT_OK(c->Compress(a, &ca));
  ASSERT_OK(c->Compress(b, &cb));
  const std::string framed = BigEndian32(static_cast<uint32_t>(a.size())) +
                             BigEndian32(static_cast<uint32_t>(ca.size())) + ca +
                             BigEndian32(static_cast<uint32_t>(b.size())) +
                             BigEndian32(static_cast<uint32_t>(cb.size())) + cb;
  ASSERT_OK_AND_ASSIGN(auto d, Decompressor::Make(CompressionCodec::kLz4));
  std::string out(a.size() + b.size(), '\0');
  ASSERT_OK(d->CheckUncompressedSize(framed, static_cast<int64_t>(out.size())));
  ASSERT_OK(d->Decompress(framed, reinterpret_cast<uint8_t*>(out.data()),
                          static_cast<int64_t>(out.size())));
  EXPECT_EQ(out, a + b);

  // Without framing (one raw LZ4 block, as some older writers made): the
  // fallback reads it.
  std::string raw_out(a.size(), '\0');
  ASSERT_OK(d->Decompress(ca, reinterpret_cast<uint8_t*>(raw_out.data()),
                          static_cast<int64_t>(raw_out.size())));
  EXPECT_EQ(raw_out, a);

  // A frame whose compressed size runs past the page, and a truncated one.
  std::string lying = BigEndian32(static_cast<uint32_t>(a.size())) +
                      BigEndian32(static_cast<uint32_t>(ca.size() + 100)) + ca;
  std::string out_a(a.size(), '\0');
  ASSERT_RAISES(Corruption, d->Decompress(lying, reinterpret_cast<uint8_t*>(out_a.data()),
                                          static_cast<int64_t>(out_a.size())));
  ASSERT_RAISES(Corruption, d->Decompress(framed.substr(0, framed.size() - 3),
                                          reinterpret_cast<uint8_t*>(out.data()),
                                          static_cast<int64_t>(out.size())));
}

}  // namespace
}  // namespace silt::parquet
