// Parquet files written and read back: every primitive type under every
// codec, row group and page limits, the footer as Spark writes it,
// statistics, projection, and the writer's checks on its input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "silt/columnar/builder.h"
#include "silt/parquet/compression.h"
#include "silt/parquet/file_reader.h"
#include "silt/parquet/file_test_util.h"
#include "silt/parquet/file_writer.h"
#include "silt/parquet/parquet_metadata.h"
#include "silt/parquet/plain_encoder.h"
#include "silt/testing/gtest_util.h"
#include "silt/testing/temp_dir.h"

namespace silt::parquet {
namespace {

using columnar::ColumnBuilder;
using columnar::DataType;
using columnar::RecordBatch;
using columnar::RecordBatchPtr;
using columnar::SchemaPtr;
using test_util::AllTypesSchema;
using test_util::ExpectColumnsEqual;
using test_util::Footer;
using test_util::MakeBatch;
using test_util::ReadAll;
using test_util::WriteFile;

class RoundTripTest
    : public ::testing::TestWithParam<std::tuple<Compression, bool /*dictionary*/>> {};

TEST_P(RoundTripTest, EveryPrimitiveTypeWithAndWithoutNullsReadsBackIdentical) {
  auto fs = fs::MakeMemoryFileSystem();
  SchemaPtr schema = AllTypesSchema();
  WriterOptions options;
  options.compression = std::get<0>(GetParam());
  options.enable_dictionary = std::get<1>(GetParam());
  std::vector<RecordBatchPtr> batches = {MakeBatch(schema, 0, 3000), MakeBatch(schema, 3000, 1),
                                         MakeBatch(schema, 3001, 2500)};
  WriteResult result;
  WriteFile(fs.get(), "/t/all.parquet", schema, batches, options, &result);
  EXPECT_EQ(result.num_rows, 5501);

  RecordBatchPtr expected = columnar::ConcatBatches(batches);
  RecordBatchPtr actual = ReadAll(fs.get(), "/t/all.parquet");
  ASSERT_NE(actual, nullptr);
  ASSERT_TRUE(actual->schema->Equals(*schema)) << actual->schema->ToDdl();
  ASSERT_EQ(actual->num_rows, expected->num_rows);
  for (int col_idx = 0; col_idx < schema->num_fields(); ++col_idx) {
    ExpectColumnsEqual(*expected->column(col_idx), *actual->column(col_idx),
                       schema->field(col_idx).name);
  }
}

INSTANTIATE_TEST_SUITE_P(
    CodecsAndDictionary, RoundTripTest,
    ::testing::Combine(::testing::Values(Compression::kUncompressed, Compression::kSnappy,
                                         Compression::kGzip, Compression::kZstd,
                                         Compression::kLz4Raw),
                       ::testing::Bool()));

class SmallLimitsTest : public ::testing::TestWithParam<bool /*dictionary*/> {};

TEST_P(SmallLimitsTest, SmallLimitsMakeManyRowGroupsAndPages) {
  auto fs = fs::MakeMemoryFileSystem();
  SchemaPtr schema = AllTypesSchema();
  WriterOptions options;
  options.enable_dictionary = GetParam();
  options.row_group_bytes = 256 * 1024;
  options.page_bytes = 2 * 1024;
  std::vector<RecordBatchPtr> batches = {MakeBatch(schema, 0, 8192), MakeBatch(schema, 8192, 8192)};
  const std::string file = WriteFile(fs.get(), "/t/many.parquet", schema, batches, options);
  FileMetaData md = Footer(file);
  EXPECT_GT(md.row_groups.size(), 2u);
  int64_t rows = 0;
  for (const RowGroup& rg : md.row_groups) rows += rg.num_rows;
  EXPECT_EQ(rows, 16384);
  EXPECT_EQ(md.num_rows, 16384);
  // Wide PLAIN columns fill several pages per chunk.
  if (!GetParam()) {
    for (const char* name : {"double", "ts", "dec38_0_req"}) {
      const int index = schema->FieldIndex(name);
      const ColumnMetaData& m = *md.row_groups[0].columns[static_cast<size_t>(index)].meta_data;
      ASSERT_EQ(m.path_in_schema, std::vector<std::string>{name});
      int32_t data_pages = 0;
      for (const auto& s : m.encoding_stats) {
        if (s.page_type == PageType::kDataPage) data_pages += s.count;
      }
      EXPECT_GT(data_pages, 2) << name;
    }
  }

  RecordBatchPtr expected = columnar::ConcatBatches(batches);
  RecordBatchPtr actual = ReadAll(fs.get(), "/t/many.parquet");
  ASSERT_NE(actual, nullptr);
  for (int col_idx = 0; col_idx < schema->num_fields(); ++col_idx) {
    ExpectColumnsEqual(*expected->column(col_idx), *actual->column(col_idx),
                       schema->field(col_idx).name);
  }
}

INSTANTIATE_TEST_SUITE_P(DictionaryOnOff, SmallLimitsTest, ::testing::Bool());

// A partition's rows written by their indices (out of order, as a batch
// interleaves partitions) make the file that taking them into a batch of
// their own and writing that makes, byte for byte, across many pages and
// row groups.
TEST_P(SmallLimitsTest, ListedRowsWriteTheFileTheirTakenBatchWrites) {
  auto fs = fs::MakeMemoryFileSystem();
  SchemaPtr schema = AllTypesSchema();
  WriterOptions options;
  options.enable_dictionary = GetParam();
  options.row_group_bytes = 256 * 1024;
  options.page_bytes = 2 * 1024;
  RecordBatchPtr batch = MakeBatch(schema, 0, 8192);
  std::vector<int64_t> rows;
  for (int64_t i = 0; i < 6000; ++i) rows.push_back(i * 7 % 8192);

  RecordBatchPtr taken = columnar::TakeBatch(*batch, rows);
  const std::string expected_file =
      WriteFile(fs.get(), "/t/taken.parquet", schema, {taken}, options);
  ASSERT_OK_AND_ASSIGN(auto listed,
                       ParquetFileWriter::Open(fs.get(), "/t/listed.parquet", schema, options));
  ASSERT_OK(listed->WriteRows(*batch, rows));
  ASSERT_OK(listed->Close().status());
  ASSERT_OK_AND_ASSIGN(std::string listed_file, fs->ReadFile("/t/listed.parquet"));
  EXPECT_TRUE(listed_file == expected_file);

  // Over several calls (slices, hence pages, fall elsewhere) the rows read
  // back the same.
  ASSERT_OK_AND_ASSIGN(auto split,
                       ParquetFileWriter::Open(fs.get(), "/t/split.parquet", schema, options));
  ASSERT_OK(split->WriteRows(*batch, std::span<const int64_t>(rows).subspan(0, 100)));
  ASSERT_OK(split->WriteRows(*batch, std::span<const int64_t>(rows).subspan(100)));
  ASSERT_OK(split->Close().status());
  for (const char* path : {"/t/listed.parquet", "/t/split.parquet"}) {
    RecordBatchPtr actual = ReadAll(fs.get(), path);
    ASSERT_NE(actual, nullptr);
    ASSERT_EQ(actual->num_rows, 6000);
    for (int col_idx = 0; col_idx < schema->num_fields(); ++col_idx) {
      ExpectColumnsEqual(*taken->column(col_idx), *actual->column(col_idx),
                         std::string(path) + " " + schema->field(col_idx).name);
    }
  }
}

TEST(ParquetFileTest, FooterFollowsSparkConventions) {
  auto fs = fs::MakeMemoryFileSystem();
  SchemaPtr schema = DataType::Struct({{"id", DataType::Long(), false},
                                       {"name", DataType::String(), true},
                                       {"amount", DataType::Decimal(25, 4), true}});
  WriterOptions options;
  options.key_value_metadata = {{"org.apache.spark.version", "3.5.0"}};
  // 1000 rows: id and name repeat (dictionary-encoded), amount does not
  // (PLAIN: its dictionary would be larger than the values).
  const std::string file =
      WriteFile(fs.get(), "/t/f.parquet", schema, {MakeBatch(schema, 0, 1000)}, options);
  ASSERT_EQ(file.substr(0, 4), "PAR1");
  ASSERT_EQ(file.substr(file.size() - 4), "PAR1");
  FileMetaData md = Footer(file);
  EXPECT_EQ(md.version, 1);
  EXPECT_EQ(md.created_by, "silt version 0.1.0 (build silt)");
  ASSERT_EQ(md.schema.size(), 4u);
  EXPECT_EQ(md.schema[0].name, "spark_schema");
  EXPECT_EQ(md.schema[0].num_children, 3);
  EXPECT_EQ(md.schema[1].repetition_type, Repetition::kRequired);
  EXPECT_EQ(md.schema[2].repetition_type, Repetition::kOptional);
  EXPECT_EQ(md.schema[3].type, PhysicalType::kFixedLenByteArray);
  EXPECT_EQ(md.schema[3].type_length, 11);
  ASSERT_EQ(md.key_value_metadata.size(), 1u);
  EXPECT_EQ(md.key_value_metadata[0].key, "org.apache.spark.version");
  EXPECT_EQ(md.column_orders.size(), 3u);
  const ColumnMetaData& id = *md.row_groups[0].columns[0].meta_data;
  ASSERT_TRUE(id.dictionary_page_offset.has_value());
  EXPECT_EQ(*id.dictionary_page_offset, 4);
  const ColumnMetaData& name = *md.row_groups[0].columns[1].meta_data;
  EXPECT_EQ(name.codec, CompressionCodec::kSnappy);
  ASSERT_TRUE(name.dictionary_page_offset.has_value());
  EXPECT_EQ(*name.dictionary_page_offset, 4 + id.total_compressed_size);
  EXPECT_GT(name.data_page_offset, *name.dictionary_page_offset);
  EXPECT_EQ(name.encodings,
            (std::vector<Encoding>{Encoding::kPlain, Encoding::kRle, Encoding::kRleDictionary}));
  EXPECT_EQ(name.num_values, 1000);
  // Chunks tile the data region without gaps.
  const ColumnMetaData& amount = *md.row_groups[0].columns[2].meta_data;
  EXPECT_FALSE(amount.dictionary_page_offset.has_value());
  EXPECT_EQ(amount.encodings, (std::vector<Encoding>{Encoding::kPlain, Encoding::kRle}));
  EXPECT_EQ(amount.data_page_offset, *name.dictionary_page_offset + name.total_compressed_size);
  EXPECT_EQ(md.row_groups[0].file_offset, 4);
}

TEST(ParquetFileTest, StatisticsFollowParquetOrdering) {
  auto fs = fs::MakeMemoryFileSystem();
  SchemaPtr schema = DataType::Struct({{"i", DataType::Int(), true},
                                       {"d", DataType::Double(), true},
                                       {"s", DataType::String(), true},
                                       {"dec", DataType::Decimal(20, 2), true},
                                       {"all_null", DataType::Long(), true}});
  ColumnBuilder i(DataType::Int());
  ColumnBuilder d(DataType::Double());
  ColumnBuilder s(DataType::String());
  ColumnBuilder dec(DataType::Decimal(20, 2));
  ColumnBuilder all_null(DataType::Long());
  const int32_t ints[] = {5, -17, 3, 0};
  const double doubles[] = {std::numeric_limits<double>::quiet_NaN(), -2.5, 7.0, 0.5};
  const char* strings[] = {"zz", "\xc3\xa9", "A", "m"};
  const __int128 decs[] = {-(static_cast<__int128>(1) << 64), 12345, 0, -1};
  for (int row = 0; row < 4; ++row) {
    i.Append<int32_t>(ints[row]);
    d.Append<double>(doubles[row]);
    s.AppendString(strings[row]);
    dec.Append<__int128>(decs[row]);
    all_null.AppendNull();
  }
  i.AppendNull();
  d.AppendNull();
  s.AppendNull();
  dec.AppendNull();
  all_null.AppendNull();
  auto batch = std::make_shared<RecordBatch>();
  batch->schema = schema;
  batch->num_rows = 5;
  batch->columns = {i.Finish(), d.Finish(), s.Finish(), dec.Finish(), all_null.Finish()};
  WriteResult result;
  const std::string file =
      WriteFile(fs.get(), "/t/stats.parquet", schema, {batch}, WriterOptions(), &result);
  FileMetaData md = Footer(file);
  const auto& cols = md.row_groups[0].columns;

  const Statistics& si = *cols[0].meta_data->statistics;
  int32_t v;
  std::memcpy(&v, si.min_value->data(), 4);
  EXPECT_EQ(v, -17);
  std::memcpy(&v, si.max_value->data(), 4);
  EXPECT_EQ(v, 5);
  EXPECT_EQ(si.min, si.min_value);
  EXPECT_EQ(si.null_count, 1);

  // A chunk holding NaN has no bounds: parquet-mr (Spark's reader) does not
  // know nan_count and would drop the NaN rows by NaN-free bounds.
  const Statistics& sd = *cols[1].meta_data->statistics;
  EXPECT_FALSE(sd.min_value.has_value());
  EXPECT_FALSE(sd.max_value.has_value());
  EXPECT_FALSE(sd.min.has_value());
  EXPECT_EQ(sd.nan_count, 1);
  EXPECT_EQ(sd.null_count, 1);

  const Statistics& ss = *cols[2].meta_data->statistics;
  EXPECT_EQ(*ss.min_value, "A");
  EXPECT_EQ(*ss.max_value, "\xc3\xa9");
  EXPECT_FALSE(ss.max.has_value());

  const Statistics& sdec = *cols[3].meta_data->statistics;
  EXPECT_EQ(*sdec.min_value, DecimalToBigEndian(-(static_cast<__int128>(1) << 64), 9));
  EXPECT_EQ(*sdec.max_value, DecimalToBigEndian(12345, 9));

  const Statistics& snull = *cols[4].meta_data->statistics;
  EXPECT_FALSE(snull.min_value.has_value());
  EXPECT_EQ(snull.null_count, 5);

  // Typed statistics for Delta.
  ASSERT_EQ(result.column_stats.size(), 5u);
  EXPECT_EQ(result.column_stats[0].name, "i");
  EXPECT_EQ(result.column_stats[0].min->Value<int32_t>(0), -17);
  EXPECT_EQ(result.column_stats[0].max->Value<int32_t>(0), 5);
  EXPECT_EQ(result.column_stats[0].null_count, 1);
  // Spark orders NaN last, so the max Delta sees is NaN.
  EXPECT_TRUE(std::isnan(result.column_stats[1].max->Value<double>(0)));
  EXPECT_EQ(result.column_stats[1].min->Value<double>(0), -2.5);
  EXPECT_EQ(result.column_stats[2].min->StringValue(0), "A");
  EXPECT_EQ(result.column_stats[2].max->StringValue(0), "\xc3\xa9");
  EXPECT_TRUE(result.column_stats[3].min->type->Equals(*DataType::Decimal(20, 2)));
  EXPECT_TRUE(result.column_stats[3].min->Value<__int128>(0) == -(static_cast<__int128>(1) << 64));
  EXPECT_EQ(result.column_stats[4].min, nullptr);
  EXPECT_EQ(result.column_stats[4].null_count, 5);
}

TEST(ParquetFileTest, ProjectionIsCaseInsensitiveAndOrdered) {
  auto fs = fs::MakeMemoryFileSystem();
  SchemaPtr schema = AllTypesSchema();
  RecordBatchPtr batch = MakeBatch(schema, 0, 100);
  WriteFile(fs.get(), "/t/p.parquet", schema, {batch}, WriterOptions());
  ASSERT_OK_AND_ASSIGN(auto reader, ParquetFileReader::Open(fs.get(), "/t/p.parquet"));
  ASSERT_OK_AND_ASSIGN(RecordBatchPtr out, reader->ReadRowGroup(0, {"STRING", "Long"}));
  ASSERT_EQ(out->num_columns(), 2);
  EXPECT_EQ(out->schema->field(0).name, "string");
  EXPECT_EQ(out->schema->field(1).name, "long");
  ExpectColumnsEqual(*batch->GetColumn("string"), *out->column(0), "string");
  ExpectColumnsEqual(*batch->GetColumn("long"), *out->column(1), "long");

  Result<RecordBatchPtr> missing = reader->ReadRowGroup(0, {"nope"});
  ASSERT_RAISES(InvalidArgument, missing);
  EXPECT_NE(missing.status().message().find("nope"), std::string::npos);
  ASSERT_RAISES(InvalidArgument, reader->ReadRowGroup(5));
}

TEST(ParquetFileTest, EmptyFileHasSchemaAndNoRowGroups) {
  auto fs = fs::MakeMemoryFileSystem();
  SchemaPtr schema = AllTypesSchema();
  WriteFile(fs.get(), "/t/empty.parquet", schema, {}, WriterOptions());
  ASSERT_OK_AND_ASSIGN(auto reader, ParquetFileReader::Open(fs.get(), "/t/empty.parquet"));
  EXPECT_EQ(reader->num_rows(), 0);
  EXPECT_EQ(reader->num_row_groups(), 0);
  EXPECT_TRUE(reader->schema()->Equals(*schema));
}

TEST(ParquetFileTest, LocalFileSystemRoundTrip) {
  testing::TempDir dir;
  auto fs = fs::MakeLocalFileSystem();
  SchemaPtr schema = AllTypesSchema();
  RecordBatchPtr batch = MakeBatch(schema, 0, 1000);
  const std::string path = dir.path() + "/part-00000.snappy.parquet";
  WriteResult result;
  WriteFile(fs.get(), path, schema, {batch}, WriterOptions(), &result);
  ASSERT_OK_AND_ASSIGN(fs::FileInfo info, fs->GetFileInfo(path));
  EXPECT_EQ(info.size, result.file_size);
  RecordBatchPtr actual = ReadAll(fs.get(), path);
  ASSERT_NE(actual, nullptr);
  for (int col_idx = 0; col_idx < schema->num_fields(); ++col_idx) {
    ExpectColumnsEqual(*batch->column(col_idx), *actual->column(col_idx),
                       schema->field(col_idx).name);
  }
}

TEST(ParquetFileTest, WriterRejectsBadInput) {
  auto fs = fs::MakeMemoryFileSystem();
  SchemaPtr with_void = DataType::Struct(
      {{"a", DataType::Int(), true},
       {"tags", DataType::Array(DataType::Struct({{"v", DataType::Null(), true}})), true}});
  Result<std::unique_ptr<ParquetFileWriter>> w =
      ParquetFileWriter::Open(fs.get(), "/t/n.parquet", with_void);
  ASSERT_RAISES(NotSupported, w);
  EXPECT_NE(w.status().message().find("tags"), std::string::npos);

  SchemaPtr schema = DataType::Struct({{"a", DataType::Int(), false}});
  ASSERT_OK_AND_ASSIGN(auto writer, ParquetFileWriter::Open(fs.get(), "/t/x.parquet", schema));
  ColumnBuilder b(DataType::Int());
  b.Append<int32_t>(1);
  b.AppendNull();
  RecordBatch with_null{schema, 2, {b.Finish()}};
  ASSERT_RAISES(InvalidArgument, writer->WriteBatch(with_null));
  ColumnBuilder l(DataType::Long());
  l.Append<int64_t>(1);
  RecordBatch wrong_type{schema, 1, {l.Finish()}};
  ASSERT_RAISES(InvalidArgument, writer->WriteBatch(wrong_type));
  ASSERT_OK(writer->Abort());
  EXPECT_FALSE(*fs->Exists("/t/x.parquet"));

  ASSERT_RAISES(InvalidArgument, ParseCompression("brotli"));
  ASSERT_OK_AND_ASSIGN(Compression c, ParseCompression("LZ4"));
  EXPECT_EQ(c, Compression::kLz4Raw);
  EXPECT_EQ(CompressionFileExtension(Compression::kGzip), "gz");
}

TEST(ParquetFileTest, MissingFileIsNotFound) {
  auto fs = fs::MakeMemoryFileSystem();
  ASSERT_RAISES(NotFound, ParquetFileReader::Open(fs.get(), "/t/none.parquet"));
}

}  // namespace
}  // namespace silt::parquet
