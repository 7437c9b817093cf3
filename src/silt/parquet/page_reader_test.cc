#include "silt/parquet/page_reader.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>
#include <string>
#include <vector>

#include "silt/testing/gtest_util.h"

namespace silt::parquet {
namespace {

std::string LengthPrefixed(std::string_view runs) {
  const uint32_t len = static_cast<uint32_t>(runs.size());
  std::string out(reinterpret_cast<const char*>(&len), 4);
  out += runs;
  return out;
}

std::string PlainStrings(const std::vector<std::string>& values) {
  std::string out;
  for (const std::string& v : values) out += LengthPrefixed(v);
  return out;
}

// Appends a page (header + body) to *chunk; the body is compressed with
// `codec` unless it is UNCOMPRESSED.
void AppendPage(PageHeader header, std::string_view body, CompressionCodec codec,
                std::string* chunk) {
  std::string stored(body);
  if (codec != CompressionCodec::kUncompressed) {
    auto compressor = Compressor::Make(codec, 1);
    ASSERT_TRUE(compressor.ok());
    ASSERT_TRUE((*compressor)->Compress(body, &stored).ok());
  }
  header.uncompressed_page_size = static_cast<int32_t>(body.size());
  header.compressed_page_size = static_cast<int32_t>(stored.size());
  *chunk += SerializeThrift(header);
  *chunk += stored;
}

// A dictionary page of three strings, a v1 page of 4 values (levels
// 1,0,1,1; dictionary indices 2,0,1) and a v2 page of 2 PLAIN values (levels
// 1,1), for a column of maximum definition level 1.
std::string ThreePageChunk(CompressionCodec codec) {
  std::string chunk;
  PageHeader dict;
  dict.type = PageType::kDictionaryPage;
  dict.dictionary_page_header = DictionaryPageHeader{};
  dict.dictionary_page_header->num_values = 3;
  AppendPage(dict, PlainStrings({"a", "bb", "ccc"}), codec, &chunk);

  PageHeader v1;
  v1.type = PageType::kDataPage;
  v1.data_page_header = DataPageHeader{};
  v1.data_page_header->num_values = 4;
  v1.data_page_header->encoding = Encoding::kRleDictionary;
  // Levels: one bit-packed group of 8 (1,0,1,1,0,0,0,0). Indices: bit
  // width 2, one bit-packed group (2,0,1,0,...).
  const std::string levels("\x03\x0d", 2);
  const std::string indices("\x02\x03\x12\x00", 4);
  AppendPage(v1, LengthPrefixed(levels) + indices, codec, &chunk);

  PageHeader v2;
  v2.type = PageType::kDataPageV2;
  v2.data_page_header_v2 = DataPageHeaderV2{};
  v2.data_page_header_v2->num_values = 2;
  v2.data_page_header_v2->num_rows = 2;
  v2.data_page_header_v2->encoding = Encoding::kPlain;
  v2.data_page_header_v2->is_compressed = codec != CompressionCodec::kUncompressed;
  // Levels stay uncompressed: RLE run of 2 ones.
  const std::string v2_levels("\x04\x01", 2);
  const std::string values = PlainStrings({"x", "yz"});
  std::string stored = values;
  if (codec != CompressionCodec::kUncompressed) {
    auto compressor = Compressor::Make(codec, 1);
    EXPECT_TRUE(compressor.ok() && (*compressor)->Compress(values, &stored).ok());
  }
  v2.data_page_header_v2->definition_levels_byte_length = static_cast<int32_t>(v2_levels.size());
  v2.uncompressed_page_size = static_cast<int32_t>(v2_levels.size() + values.size());
  v2.compressed_page_size = static_cast<int32_t>(v2_levels.size() + stored.size());
  chunk += SerializeThrift(v2);
  chunk += v2_levels;
  chunk += stored;
  return chunk;
}

PageReader MakeReader(CompressionCodec codec, int max_rep, int max_def) {
  auto d = Decompressor::Make(codec);
  EXPECT_TRUE(d.ok());
  return PageReader(std::move(*d), max_rep, max_def);
}

// Reads the chunk's three pages and checks them; the dictionary is checked
// again after the data pages (it must outlive them).
void CheckThreePages(PageReader* reader) {
  ASSERT_FALSE(reader->at_end());
  ASSERT_OK(reader->Next());
  EXPECT_EQ(reader->page_offset(), 0);
  ASSERT_EQ(reader->header().type, PageType::kDictionaryPage);
  ASSERT_OK_AND_ASSIGN(DictionaryPage dict, reader->ReadDictionary());
  EXPECT_EQ(dict.num_values, 3);
  std::vector<std::string_view> entries(3);
  ASSERT_OK(ParsePlainByteArrays(reinterpret_cast<const uint8_t*>(dict.values.data()),
                                 static_cast<int64_t>(dict.values.size()), 3, 0, entries.data()));
  EXPECT_EQ(entries[2], "ccc");

  ASSERT_OK(reader->Next());
  EXPECT_GT(reader->page_offset(), 0);
  ASSERT_OK_AND_ASSIGN(DataPage v1, reader->ReadDataPage());
  EXPECT_EQ(v1.num_values, 4);
  EXPECT_FALSE(v1.num_nulls.has_value());
  EXPECT_EQ(v1.encoding, Encoding::kRleDictionary);
  EXPECT_TRUE(v1.repetition_levels.empty());
  RleDecoder levels(reinterpret_cast<const uint8_t*>(v1.definition_levels.data()),
                    static_cast<int64_t>(v1.definition_levels.size()), LevelBitWidth(1));
  std::vector<int16_t> defs;
  ASSERT_TRUE(AppendLevels(&levels, 4, &defs));
  EXPECT_EQ(defs, (std::vector<int16_t>{1, 0, 1, 1}));
  RleDecoder indices;
  ASSERT_OK(StartDictionaryIndices(v1.values, &indices));
  uint32_t ids[3];
  ASSERT_EQ(indices.GetBatch(ids, 3), 3);
  EXPECT_EQ(entries[ids[0]], "ccc");
  EXPECT_EQ(entries[ids[1]], "a");
  EXPECT_EQ(entries[ids[2]], "bb");

  ASSERT_OK(reader->Next());
  ASSERT_OK_AND_ASSIGN(DataPage v2, reader->ReadDataPage());
  EXPECT_EQ(v2.num_values, 2);
  EXPECT_EQ(v2.num_nulls, 0);
  EXPECT_EQ(v2.definition_levels, std::string_view("\x04\x01", 2));
  std::string_view values = v2.values;
  std::string_view value;
  ASSERT_OK(NextPlainByteArray(&values, &value));
  EXPECT_EQ(value, "x");
  ASSERT_OK(NextPlainByteArray(&values, &value));
  EXPECT_EQ(value, "yz");
  EXPECT_TRUE(values.empty());
  ASSERT_RAISES(Corruption, NextPlainByteArray(&values, &value));
  EXPECT_TRUE(reader->at_end());

  // Still the dictionary's bytes, though the source moved on.
  EXPECT_EQ(dict.values, PlainStrings({"a", "bb", "ccc"}));
}

class PageReaderTest : public ::testing::TestWithParam<CompressionCodec> {};

TEST_P(PageReaderTest, MemoryAndFileSourcesReadTheSamePages) {
  const std::string chunk = ThreePageChunk(GetParam());
  PageReader memory = MakeReader(GetParam(), 0, 1);
  memory.Reset(chunk);
  CheckThreePages(&memory);

  auto fs = fs::MakeMemoryFileSystem();
  ASSERT_OK(fs->WriteFile("/f", "PAR1" + chunk + "tail"));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<fs::RandomAccessFile> file, fs->OpenForRead("/f"));
  PageReader from_file = MakeReader(GetParam(), 0, 1);
  from_file.Reset(file.get(), 4, static_cast<int64_t>(chunk.size()));
  CheckThreePages(&from_file);
}

INSTANTIATE_TEST_SUITE_P(Codecs, PageReaderTest,
                         ::testing::Values(CompressionCodec::kUncompressed,
                                           CompressionCodec::kSnappy, CompressionCodec::kZstd));

TEST(PageReaderCorruptionTest, PageRunningPastTheChunk) {
  std::string chunk = ThreePageChunk(CompressionCodec::kUncompressed);
  chunk.resize(chunk.size() - 1);
  PageReader reader = MakeReader(CompressionCodec::kUncompressed, 0, 1);
  reader.Reset(chunk);
  ASSERT_OK(reader.Next());
  ASSERT_OK(reader.Next());
  Status st = reader.Next();
  ASSERT_TRUE(st.IsCorruption()) << st.ToString();
  EXPECT_TRUE(reader.has_header());
  EXPECT_NE(st.message().find("runs past the end of the column chunk"), std::string::npos);
}

TEST(PageReaderCorruptionTest, MalformedHeaderHasNoHeader) {
  PageReader reader = MakeReader(CompressionCodec::kUncompressed, 0, 1);
  reader.Reset(std::string_view("\xff\xff\xff", 3));
  EXPECT_TRUE(reader.Next().IsCorruption());
  EXPECT_FALSE(reader.has_header());
}

TEST(PageReaderCorruptionTest, LevelsClaimingMoreThanThePage) {
  PageHeader v1;
  v1.type = PageType::kDataPage;
  v1.data_page_header = DataPageHeader{};
  v1.data_page_header->num_values = 4;
  std::string body("\xff\x00\x00\x00\x01", 5);  // claims 255 bytes of levels
  std::string chunk;
  AppendPage(v1, body, CompressionCodec::kUncompressed, &chunk);
  PageReader reader = MakeReader(CompressionCodec::kUncompressed, 0, 1);
  reader.Reset(chunk);
  ASSERT_OK(reader.Next());
  Result<DataPage> page = reader.ReadDataPage();
  ASSERT_RAISES(Corruption, page);
  EXPECT_NE(page.status().message().find("definition levels claim 255 bytes"), std::string::npos)
      << page.status().ToString();
}

TEST(PageReaderCorruptionTest, V2LevelLengthsBeyondThePage) {
  PageHeader v2;
  v2.type = PageType::kDataPageV2;
  v2.data_page_header_v2 = DataPageHeaderV2{};
  v2.data_page_header_v2->num_values = 1;
  v2.data_page_header_v2->definition_levels_byte_length = 100;
  std::string chunk;
  AppendPage(v2, "abc", CompressionCodec::kUncompressed, &chunk);
  PageReader reader = MakeReader(CompressionCodec::kUncompressed, 0, 1);
  reader.Reset(chunk);
  ASSERT_OK(reader.Next());
  ASSERT_RAISES(Corruption, reader.ReadDataPage());
}

TEST(PageReaderCorruptionTest, UncompressedSizeMustMatchAndCompressedSizeIsCapped) {
  PageHeader v1;
  v1.type = PageType::kDataPage;
  v1.data_page_header = DataPageHeader{};
  v1.data_page_header->num_values = 1;
  v1.uncompressed_page_size = 1 << 30;
  v1.compressed_page_size = 4;
  const std::string chunk = SerializeThrift(v1) + "abcd";
  for (CompressionCodec codec : {CompressionCodec::kUncompressed, CompressionCodec::kSnappy}) {
    PageReader reader = MakeReader(codec, 0, 1);
    reader.Reset(chunk);
    ASSERT_OK(reader.Next());
    // Corruption before anything is sized by the claimed gigabyte.
    ASSERT_RAISES(Corruption, reader.ReadDataPage());
  }
}

TEST(PageReaderCorruptionTest, PageChecksumsAreVerified) {
  PageHeader v2;
  v2.type = PageType::kDataPageV2;
  v2.data_page_header_v2 = DataPageHeaderV2{};
  v2.data_page_header_v2->num_values = 2;
  v2.data_page_header_v2->num_rows = 2;
  v2.data_page_header_v2->is_compressed = false;
  const std::string body = PlainStrings({"x", "y"});
  v2.crc = static_cast<int32_t>(
      crc32(0L, reinterpret_cast<const Bytef*>(body.data()), static_cast<uInt>(body.size())));
  std::string good;
  AppendPage(v2, body, CompressionCodec::kUncompressed, &good);
  PageReader reader = MakeReader(CompressionCodec::kUncompressed, 0, 0);
  reader.Reset(good);
  ASSERT_OK(reader.Next());
  ASSERT_OK_AND_ASSIGN(DataPage page, reader.ReadDataPage());
  EXPECT_EQ(page.values, body);

  std::string flipped = good;
  flipped.back() ^= 0x01;
  reader.Reset(flipped);
  ASSERT_OK(reader.Next());
  Result<DataPage> bad = reader.ReadDataPage();
  ASSERT_RAISES(Corruption, bad);
  EXPECT_NE(bad.status().message().find("page checksum mismatch"), std::string::npos)
      << bad.status().ToString();
}

TEST(PageReaderLevelsTest, ClaimedCountsGrowOnlyAsFarAsTheRuns) {
  // One RLE run of 8 ones, then nothing: a claim of 2^28 levels.
  const std::string runs("\x10\x01", 2);
  RleDecoder decoder(reinterpret_cast<const uint8_t*>(runs.data()), 2, 1);
  std::vector<int16_t> levels;
  EXPECT_FALSE(AppendLevels(&decoder, int64_t{1} << 28, &levels));
  EXPECT_LE(levels.capacity(), size_t{1} << 17);
  EXPECT_EQ(levels.size(), 8u);
}

TEST(PageReaderValuesTest, DictionaryIndicesAndPlainByteArrays) {
  RleDecoder decoder;
  ASSERT_RAISES(Corruption, StartDictionaryIndices(std::string_view("\x21\x00", 2), &decoder));
  ASSERT_OK(StartDictionaryIndices(std::string_view(), &decoder));
  uint32_t id;
  EXPECT_EQ(decoder.GetBatch(&id, 1), 0);

  const std::string plain = PlainStrings({"abc"});
  std::string_view views[2];
  ASSERT_RAISES(Corruption,
                ParsePlainByteArrays(reinterpret_cast<const uint8_t*>(plain.data()),
                                     static_cast<int64_t>(plain.size()) - 1, 1, 0, views));
  ASSERT_RAISES(Corruption, ParsePlainByteArrays(reinterpret_cast<const uint8_t*>(plain.data()),
                                                 static_cast<int64_t>(plain.size()), 2, 0, views));
  ASSERT_OK(ParsePlainByteArrays(reinterpret_cast<const uint8_t*>("abcdef"), 6, 2, 3, views));
  EXPECT_EQ(views[1], "def");
  ASSERT_RAISES(Corruption,
                ParsePlainByteArrays(reinterpret_cast<const uint8_t*>("abcde"), 5, 2, 3, views));
}

}  // namespace
}  // namespace silt::parquet
