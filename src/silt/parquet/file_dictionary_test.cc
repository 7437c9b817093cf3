// The writer's dictionary encoding: falling back to PLAIN past the
// dictionary's limit, PLAIN for distinct values (decided on a chunk's first
// values), and index widths per page; each file read back.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "silt/columnar/builder.h"
#include "silt/parquet/file_test_util.h"
#include "silt/parquet/file_writer.h"
#include "silt/parquet/parquet_metadata.h"
#include "silt/parquet/rle_encoder.h"
#include "silt/testing/gtest_util.h"

namespace silt::parquet {
namespace {

using columnar::ColumnBuilder;
using columnar::DataType;
using columnar::RecordBatch;
using columnar::RecordBatchPtr;
using columnar::SchemaPtr;
using test_util::ExpectColumnsEqual;
using test_util::Footer;
using test_util::ReadAll;
using test_util::WriteFile;

TEST(ParquetFileTest, DictionaryFallsBackToPlainPastItsLimit) {
  auto fs = fs::MakeMemoryFileSystem();
  SchemaPtr schema =
      DataType::Struct({{"unique", DataType::String(), true}, {"few", DataType::Int(), true}});
  auto batch = std::make_shared<RecordBatch>();
  batch->schema = schema;
  batch->num_rows = 20000;
  ColumnBuilder unique(DataType::String());
  ColumnBuilder few(DataType::Int());
  for (int i = 0; i < 20000; ++i) {
    // Each value twice in a row: the dictionary pays off until it outgrows
    // its limit.
    if (i % 11 == 0)
      unique.AppendNull();
    else
      unique.AppendString("value-" + std::to_string(i / 2 * 31));
    few.Append<int32_t>(i % 5);
  }
  batch->columns = {unique.Finish(), few.Finish()};
  WriterOptions options;
  options.dictionary_page_bytes_limit = 4096;
  options.page_bytes = 8192;
  const std::string file = WriteFile(fs.get(), "/t/fallback.parquet", schema, {batch}, options);
  FileMetaData md = Footer(file);
  ASSERT_EQ(md.row_groups.size(), 1u);
  auto page_counts = [](const ColumnMetaData& m) {
    std::pair<int, int> dict_plain{0, 0};
    for (const auto& s : m.encoding_stats) {
      if (s.page_type != PageType::kDataPage) continue;
      if (s.encoding == Encoding::kRleDictionary) dict_plain.first += s.count;
      if (s.encoding == Encoding::kPlain) dict_plain.second += s.count;
    }
    return dict_plain;
  };
  auto [unique_dict, unique_plain] = page_counts(*md.row_groups[0].columns[0].meta_data);
  EXPECT_GE(unique_dict, 1);
  EXPECT_GE(unique_plain, 1);
  auto [few_dict, few_plain] = page_counts(*md.row_groups[0].columns[1].meta_data);
  EXPECT_GE(few_dict, 1);
  EXPECT_EQ(few_plain, 0);

  RecordBatchPtr actual = ReadAll(fs.get(), "/t/fallback.parquet");
  ASSERT_NE(actual, nullptr);
  ExpectColumnsEqual(*batch->column(0), *actual->column(0), "unique");
  ExpectColumnsEqual(*batch->column(1), *actual->column(1), "few");
}

// The page headers of a column chunk of an uncompressed file, with each
// page's body.
std::vector<std::pair<PageHeader, std::string_view>> ChunkPages(const std::string& file,
                                                                const ColumnMetaData& md) {
  std::vector<std::pair<PageHeader, std::string_view>> pages;
  int64_t pos = md.dictionary_page_offset.value_or(md.data_page_offset);
  const int64_t end = pos + md.total_compressed_size;
  while (pos < end) {
    thrift::CompactReader r(reinterpret_cast<const uint8_t*>(file.data()) + pos, end - pos);
    PageHeader h;
    h.Read(&r);
    EXPECT_TRUE(r.ok()) << r.error();
    if (!r.ok()) break;
    pos += r.position();
    pages.emplace_back(h,
                       std::string_view(file).substr(static_cast<size_t>(pos),
                                                     static_cast<size_t>(h.compressed_page_size)));
    pos += h.compressed_page_size;
  }
  return pages;
}

TEST(ParquetFileTest, DistinctValuesAreWrittenPlainNotThroughADictionary) {
  // Event times are (nearly) all distinct: a dictionary would hold every
  // value plus an index per row, so the writer keeps them PLAIN; the
  // repeating column keeps its dictionary.
  auto fs = fs::MakeMemoryFileSystem();
  SchemaPtr schema = DataType::Struct(
      {{"event_time", DataType::Timestamp(), false}, {"kind", DataType::Int(), true}});
  auto batch = std::make_shared<RecordBatch>();
  batch->schema = schema;
  batch->num_rows = 50000;
  ColumnBuilder ts(DataType::Timestamp());
  ColumnBuilder kind(DataType::Int());
  int64_t t = 1782115200000000;
  for (int i = 0; i < 50000; ++i) {
    t += 1000 * ((i * 7919) % 20);
    ts.Append<int64_t>(t);
    if (i % 4 == 0) {
      kind.AppendNull();
    } else {
      kind.Append<int32_t>(i % 7);
    }
  }
  batch->columns = {ts.Finish(), kind.Finish()};
  const std::string file =
      WriteFile(fs.get(), "/t/distinct.parquet", schema, {batch}, WriterOptions());
  FileMetaData md = Footer(file);
  ASSERT_EQ(md.row_groups.size(), 1u);
  const ColumnMetaData& times = *md.row_groups[0].columns[0].meta_data;
  EXPECT_FALSE(times.dictionary_page_offset.has_value());
  EXPECT_EQ(times.encodings, (std::vector<Encoding>{Encoding::kPlain, Encoding::kRle}));
  for (const PageEncodingStats& st : times.encoding_stats) {
    EXPECT_EQ(st.encoding, Encoding::kPlain);
  }
  const ColumnMetaData& kinds = *md.row_groups[0].columns[1].meta_data;
  EXPECT_TRUE(kinds.dictionary_page_offset.has_value());
  EXPECT_EQ(kinds.encodings,
            (std::vector<Encoding>{Encoding::kPlain, Encoding::kRle, Encoding::kRleDictionary}));

  RecordBatchPtr actual = ReadAll(fs.get(), "/t/distinct.parquet");
  ASSERT_NE(actual, nullptr);
  ExpectColumnsEqual(*batch->column(0), *actual->column(0), "event_time");
  ExpectColumnsEqual(*batch->column(1), *actual->column(1), "kind");
}

TEST(ParquetFileTest, AChunkWhoseFirstValuesAreDistinctStartsPlain) {
  // The first 512 values decide before the rest of the first page is
  // hashed (decision 163): `payload` opens with 600 distinct strings and
  // then repeats three, so its whole first page would favour a dictionary,
  // but the sample starts it PLAIN. `mostly` repeats within the sample
  // (one value in eight is new) and keeps its dictionary.
  auto fs = fs::MakeMemoryFileSystem();
  SchemaPtr schema = DataType::Struct(
      {{"payload", DataType::String(), true}, {"mostly", DataType::String(), false}});
  auto batch = std::make_shared<RecordBatch>();
  batch->schema = schema;
  batch->num_rows = 20000;
  ColumnBuilder payload(DataType::String());
  ColumnBuilder mostly(DataType::String());
  for (int i = 0; i < 20000; ++i) {
    payload.AppendString(i < 600 ? "{\"n\":" + std::to_string(i * 7) + "}"
                                 : std::string(i % 3 == 0 ? "{}" : "{\"on\":true}"));
    mostly.AppendString("value-" + std::to_string(i % 8 == 0 ? i : i % 5));
  }
  batch->columns = {payload.Finish(), mostly.Finish()};
  const std::string file =
      WriteFile(fs.get(), "/t/sample.parquet", schema, {batch}, WriterOptions());
  FileMetaData md = Footer(file);
  ASSERT_EQ(md.row_groups.size(), 1u);
  const ColumnMetaData& p = *md.row_groups[0].columns[0].meta_data;
  EXPECT_FALSE(p.dictionary_page_offset.has_value());
  for (const PageEncodingStats& st : p.encoding_stats) EXPECT_EQ(st.encoding, Encoding::kPlain);
  const ColumnMetaData& m = *md.row_groups[0].columns[1].meta_data;
  EXPECT_TRUE(m.dictionary_page_offset.has_value());

  RecordBatchPtr actual = ReadAll(fs.get(), "/t/sample.parquet");
  ASSERT_NE(actual, nullptr);
  ExpectColumnsEqual(*batch->column(0), *actual->column(0), "payload");
  ExpectColumnsEqual(*batch->column(1), *actual->column(1), "mostly");
}

TEST(ParquetFileTest, DictionaryPagesStoreIndicesAtTheirOwnWidth) {
  // Each value twice, in growing order: the dictionary grows all along, so
  // early pages need fewer bits per index than late ones. The writer closes
  // a page when its indices would need a wider width, and each page stores
  // the width of its own largest index.
  auto fs = fs::MakeMemoryFileSystem();
  SchemaPtr schema = DataType::Struct({{"v", DataType::Long(), false}});
  constexpr int kRows = 240000;
  auto batch = std::make_shared<RecordBatch>();
  batch->schema = schema;
  batch->num_rows = kRows;
  ColumnBuilder v(DataType::Long());
  for (int i = 0; i < kRows; ++i) v.Append<int64_t>(int64_t{1000003} * (i / 2));
  batch->columns = {v.Finish()};
  WriterOptions options;
  options.compression = Compression::kUncompressed;
  const std::string file = WriteFile(fs.get(), "/t/width.parquet", schema, {batch}, options);
  FileMetaData md = Footer(file);
  ASSERT_EQ(md.row_groups.size(), 1u);
  const ColumnMetaData& chunk = *md.row_groups[0].columns[0].meta_data;
  ASSERT_TRUE(chunk.dictionary_page_offset.has_value());
  std::vector<int> widths;
  for (const auto& [header, body] : ChunkPages(file, chunk)) {
    if (header.type != PageType::kDataPage) continue;
    ASSERT_TRUE(header.data_page_header.has_value());
    ASSERT_EQ(header.data_page_header->encoding, Encoding::kRleDictionary);
    ASSERT_FALSE(body.empty());
    widths.push_back(static_cast<uint8_t>(body[0]));  // required column: no levels
  }
  ASSERT_GE(widths.size(), 2u);
  EXPECT_TRUE(std::is_sorted(widths.begin(), widths.end()));
  EXPECT_LT(widths.front(), widths.back());
  EXPECT_EQ(widths.back(), BitWidthFor(kRows / 2 - 1));

  RecordBatchPtr actual = ReadAll(fs.get(), "/t/width.parquet");
  ASSERT_NE(actual, nullptr);
  ExpectColumnsEqual(*batch->column(0), *actual->column(0), "v");
}

}  // namespace
}  // namespace silt::parquet
