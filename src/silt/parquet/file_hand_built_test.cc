// Parquet files built by hand, page by page: shapes silt does not write
// but must read (INT96, TIMESTAMP MILLIS/NANOS, data page v2, BYTE_ARRAY
// decimals, PLAIN_DICTIONARY, Hadoop-framed LZ4, a required struct without
// levels), and a footer whose row count the pages do not hold.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "silt/columnar/types.h"
#include "silt/parquet/compression.h"
#include "silt/parquet/file_reader.h"
#include "silt/parquet/file_test_util.h"
#include "silt/parquet/parquet_metadata.h"
#include "silt/parquet/plain_encoder.h"
#include "silt/parquet/rle_encoder.h"
#include "silt/testing/gtest_util.h"

namespace silt::parquet {
namespace {

using columnar::Column;
using columnar::DataType;
using columnar::RecordBatchPtr;
using test_util::Group;
using test_util::Leaf;
using test_util::WithRoot;

struct HandColumn {
  SchemaElement element;
  std::string chunk;  // pages
  Encoding encoding = Encoding::kPlain;
  CompressionCodec codec = CompressionCodec::kUncompressed;
};

std::string Page(PageHeader header, const std::string& body) {
  header.uncompressed_page_size = static_cast<int32_t>(body.size());
  header.compressed_page_size = static_cast<int32_t>(body.size());
  return SerializeThrift(header) + body;
}

std::string DataPageV1(int32_t num_values, Encoding encoding, const std::string& body) {
  PageHeader h;
  h.type = PageType::kDataPage;
  h.data_page_header.emplace();
  h.data_page_header->num_values = num_values;
  h.data_page_header->encoding = encoding;
  return Page(h, body);
}

// Ends `file` (the magic and the column chunks) with the footer `md`, its
// length and the closing magic.
void AppendFooter(const FileMetaData& md, std::string* file) {
  std::string footer = SerializeThrift(md);
  uint32_t len = static_cast<uint32_t>(footer.size());
  *file += footer;
  file->append(reinterpret_cast<const char*>(&len), 4);
  *file += kParquetMagic;
}

std::string BuildFile(std::vector<HandColumn> columns, int64_t rows) {
  std::string file(kParquetMagic);
  FileMetaData md;
  SchemaElement root;
  root.name = "schema";
  root.num_children = static_cast<int32_t>(columns.size());
  md.schema.push_back(root);
  md.num_rows = rows;
  RowGroup rg;
  rg.num_rows = rows;
  for (HandColumn& c : columns) {
    md.schema.push_back(c.element);
    ColumnChunk cc;
    cc.meta_data.emplace();
    ColumnMetaData& m = *cc.meta_data;
    m.type = *c.element.type;
    m.encodings = {c.encoding};
    m.path_in_schema = {c.element.name};
    m.codec = c.codec;
    m.num_values = rows;
    m.total_compressed_size = static_cast<int64_t>(c.chunk.size());
    m.total_uncompressed_size = m.total_compressed_size;
    m.data_page_offset = static_cast<int64_t>(file.size());
    file += c.chunk;
    rg.columns.push_back(cc);
  }
  md.row_groups.push_back(rg);
  AppendFooter(md, &file);
  return file;
}

template <typename T>
std::string Plain(const std::vector<T>& values) {
  std::string s;
  PlainEncode(values.data(), static_cast<int64_t>(values.size()), &s);
  return s;
}

TEST(ParquetFileTest, ReadsHadoopFramedLz4Pages) {
  // The deprecated LZ4 codec as parquet-mr writes it: the page body in
  // blocks of [uncompressed size, compressed size] (big-endian) + LZ4 block.
  std::vector<int64_t> values;
  for (int64_t i = 0; i < 3000; ++i) values.push_back(i % 17 * 1000);
  const std::string plain = Plain(values);
  ASSERT_OK_AND_ASSIGN(auto lz4, Compressor::Make(CompressionCodec::kLz4Raw, 0));
  std::string framed;
  for (size_t off = 0; off < plain.size(); off += 10000) {
    const std::string part = plain.substr(off, 10000);
    std::string block;
    ASSERT_OK(lz4->Compress(part, &block));
    for (uint32_t v : {static_cast<uint32_t>(part.size()), static_cast<uint32_t>(block.size())}) {
      for (int shift = 24; shift >= 0; shift -= 8) framed.push_back(static_cast<char>(v >> shift));
    }
    framed += block;
  }
  PageHeader h;
  h.type = PageType::kDataPage;
  h.data_page_header.emplace();
  h.data_page_header->num_values = static_cast<int32_t>(values.size());
  h.uncompressed_page_size = static_cast<int32_t>(plain.size());
  h.compressed_page_size = static_cast<int32_t>(framed.size());
  HandColumn c;
  c.element = Leaf("x", PhysicalType::kInt64, Repetition::kRequired);
  c.codec = CompressionCodec::kLz4;
  c.chunk = SerializeThrift(h) + framed;
  auto fs = fs::MakeMemoryFileSystem();
  ASSERT_OK(fs->WriteFile("/lz4.parquet", BuildFile({c}, static_cast<int64_t>(values.size()))));
  ASSERT_OK_AND_ASSIGN(auto reader, ParquetFileReader::Open(fs.get(), "/lz4.parquet"));
  ASSERT_OK_AND_ASSIGN(RecordBatchPtr batch, reader->ReadRowGroup(0));
  ASSERT_EQ(batch->num_rows, static_cast<int64_t>(values.size()));
  for (size_t i = 0; i < values.size(); ++i) {
    ASSERT_EQ(batch->column(0)->Value<int64_t>(static_cast<int64_t>(i)), values[i]);
  }
}

TEST(ParquetFileTest, HugeRowCountInTheFooterIsCorruptionNotAnAllocation) {
  // A footer claiming 2^30 rows over a chunk whose one page holds 10 values:
  // the reader must refuse before sizing buffers by the claim.
  HandColumn c;
  c.element = Leaf("x", PhysicalType::kInt64, Repetition::kRequired);
  std::vector<int64_t> values(10, 7);
  c.chunk = DataPageV1(10, Encoding::kPlain, Plain(values));
  const std::string file = BuildFile({c}, int64_t{1} << 30);
  auto fs = fs::MakeMemoryFileSystem();
  ASSERT_OK(fs->WriteFile("/huge.parquet", file));
  ASSERT_OK_AND_ASSIGN(auto reader, ParquetFileReader::Open(fs.get(), "/huge.parquet"));
  Result<RecordBatchPtr> batch = reader->ReadRowGroup(0);
  ASSERT_RAISES(Corruption, batch);
  EXPECT_NE(batch.status().message().find("fewer than"), std::string::npos)
      << batch.status().ToString();
}

TEST(ParquetFileTest, ReadsLegacyAndForeignEncodings) {
  // INT96: (nanos of day, Julian day). 2440588 = 1970-01-01.
  std::string int96;
  auto add96 = [&](int64_t nanos, int32_t day) {
    int96.append(reinterpret_cast<const char*>(&nanos), 8);
    int96.append(reinterpret_cast<const char*>(&day), 4);
  };
  add96(1500, 2440588);            // 1 micro (floor of 1.5)
  add96(86399999999999, 2440587);  // last microsecond before the epoch... day -1
  add96(0, 2440588 + 19000);       // 2022-01-08
  HandColumn c96;
  c96.chunk = DataPageV1(3, Encoding::kPlain, int96);
  c96.element = Leaf("i96", PhysicalType::kInt96, Repetition::kRequired);

  // TIMESTAMP(MILLIS, UTC) via the legacy converted type.
  HandColumn cms;
  cms.chunk = DataPageV1(3, Encoding::kPlain, Plain<int64_t>({-1, 0, 1700000000123}));
  cms.element = Leaf("ms", PhysicalType::kInt64, Repetition::kRequired);
  cms.element.converted_type = ConvertedType::kTimestampMillis;

  // TIMESTAMP(NANOS, local) in a v2 page with a null in the middle.
  RleEncoder levels(1);
  levels.Put(1);
  levels.Put(0);
  levels.Put(1);
  std::string lv(levels.Finish());
  PageHeader v2;
  v2.type = PageType::kDataPageV2;
  v2.data_page_header_v2.emplace();
  v2.data_page_header_v2->num_values = 3;
  v2.data_page_header_v2->num_nulls = 1;
  v2.data_page_header_v2->num_rows = 3;
  v2.data_page_header_v2->encoding = Encoding::kPlain;
  v2.data_page_header_v2->definition_levels_byte_length = static_cast<int32_t>(lv.size());
  v2.data_page_header_v2->is_compressed = false;
  HandColumn cns;
  cns.chunk = Page(v2, lv + Plain<int64_t>({-1001, 2000000999}));
  cns.element = Leaf("ns", PhysicalType::kInt64, Repetition::kOptional);
  cns.element.logical_type = LogicalType::Timestamp(false, TimeUnit::kNanos);

  // DECIMAL(30,2) in BYTE_ARRAY with minimal big-endian bytes, dictionary
  // encoded the old way (PLAIN_DICTIONARY).
  std::string dict;
  auto add_bytes = [&](const std::string& b) {
    uint32_t n = static_cast<uint32_t>(b.size());
    dict.append(reinterpret_cast<const char*>(&n), 4);
    dict += b;
  };
  add_bytes(std::string("\x01\x00", 2));  // 256
  add_bytes(std::string("\xff", 1));      // -1
  PageHeader dict_header;
  dict_header.type = PageType::kDictionaryPage;
  dict_header.dictionary_page_header.emplace();
  dict_header.dictionary_page_header->num_values = 2;
  dict_header.dictionary_page_header->encoding = Encoding::kPlainDictionary;
  RleEncoder idx(1);
  idx.Put(1);
  idx.Put(0);
  idx.Put(1);
  std::string indices = std::string(1, '\x01') + std::string(idx.Finish());
  HandColumn cdec;
  cdec.chunk = Page(dict_header, dict) + DataPageV1(3, Encoding::kPlainDictionary, indices);
  cdec.encoding = Encoding::kPlainDictionary;
  cdec.element = Leaf("dec", PhysicalType::kByteArray, Repetition::kRequired);
  cdec.element.converted_type = ConvertedType::kDecimal;
  cdec.element.precision = 30;
  cdec.element.scale = 2;

  auto fs = fs::MakeMemoryFileSystem();
  ASSERT_OK(fs->WriteFile("/t/hand.parquet", BuildFile({c96, cms, cns, cdec}, 3)));
  ASSERT_OK_AND_ASSIGN(auto reader, ParquetFileReader::Open(fs.get(), "/t/hand.parquet"));
  EXPECT_EQ(reader->schema()->ToDdl(), DataType::Struct({{"i96", DataType::Timestamp(), false},
                                                         {"ms", DataType::Timestamp(), false},
                                                         {"ns", DataType::TimestampNtz(), true},
                                                         {"dec", DataType::Decimal(30, 2), false}})
                                           ->ToDdl());
  ASSERT_OK_AND_ASSIGN(RecordBatchPtr b, reader->ReadRowGroup(0));
  const Column& ts = *b->column(0);
  EXPECT_EQ(ts.Value<int64_t>(0), 1);
  EXPECT_EQ(ts.Value<int64_t>(1), -1);
  EXPECT_EQ(ts.Value<int64_t>(2), int64_t{19000} * 86400 * 1000000);
  const Column& ms = *b->column(1);
  EXPECT_EQ(ms.Value<int64_t>(0), -1000);
  EXPECT_EQ(ms.Value<int64_t>(2), int64_t{1700000000123} * 1000);
  const Column& ns = *b->column(2);
  EXPECT_EQ(ns.null_count, 1);
  EXPECT_TRUE(ns.IsNull(1));
  EXPECT_EQ(ns.Value<int64_t>(0), -2);  // floor(-1001 / 1000)
  EXPECT_EQ(ns.Value<int64_t>(2), 2000000);
  const Column& dec = *b->column(3);
  EXPECT_TRUE(dec.Value<__int128>(0) == -1);
  EXPECT_TRUE(dec.Value<__int128>(1) == 256);
  EXPECT_TRUE(dec.Value<__int128>(2) == -1);
}

TEST(ParquetFileTest, RequiredStructWithoutLevelsReads) {
  // required group s { required int32 a; }, then a flat column: no level
  // is stored at all.
  std::string file(kParquetMagic);
  FileMetaData md;
  md.schema = WithRoot(
      {Group("s", 1, Repetition::kRequired), Leaf("a", PhysicalType::kInt32, Repetition::kRequired),
       Leaf("flat", PhysicalType::kInt32, Repetition::kRequired)},
      2);
  md.num_rows = 2;
  RowGroup rg;
  rg.num_rows = 2;
  for (const char* name : {"a", "flat"}) {
    ColumnChunk cc;
    cc.meta_data.emplace();
    cc.meta_data->type = PhysicalType::kInt32;
    cc.meta_data->encodings = {Encoding::kPlain};
    cc.meta_data->path_in_schema = {name};
    cc.meta_data->num_values = 2;
    cc.meta_data->data_page_offset = static_cast<int64_t>(file.size());
    std::string chunk = DataPageV1(2, Encoding::kPlain, Plain<int32_t>({10, 20}));
    cc.meta_data->total_compressed_size = static_cast<int64_t>(chunk.size());
    file += chunk;
    rg.columns.push_back(cc);
  }
  md.row_groups = {rg};
  AppendFooter(md, &file);
  auto fs = fs::MakeMemoryFileSystem();
  ASSERT_OK(fs->WriteFile("/t/nested.parquet", file));
  ASSERT_OK_AND_ASSIGN(auto reader, ParquetFileReader::Open(fs.get(), "/t/nested.parquet"));
  ASSERT_OK_AND_ASSIGN(RecordBatchPtr nested, reader->ReadRowGroup(0, {"s"}));
  EXPECT_EQ(nested->schema->ToDdl(), "STRUCT<s: STRUCT<a: INT NOT NULL> NOT NULL>");
  EXPECT_EQ(nested->column(0)->children[0]->Value<int32_t>(1), 20);
  ASSERT_OK_AND_ASSIGN(RecordBatchPtr ok, reader->ReadRowGroup(0, {"flat"}));
  EXPECT_EQ(ok->column(0)->Value<int32_t>(1), 20);
}

}  // namespace
}  // namespace silt::parquet
