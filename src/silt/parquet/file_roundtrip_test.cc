#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "silt/columnar/builder.h"
#include "silt/parquet/compression.h"
#include "silt/parquet/file_reader.h"
#include "silt/parquet/file_writer.h"
#include "silt/parquet/parquet_metadata.h"
#include "silt/parquet/plain_encoder.h"
#include "silt/parquet/rle_encoder.h"
#include "silt/testing/gtest_util.h"
#include "silt/testing/temp_dir.h"

namespace silt::parquet {
namespace {

using columnar::Column;
using columnar::ColumnBuilder;
using columnar::ColumnPtr;
using columnar::DataType;
using columnar::Field;
using columnar::RecordBatch;
using columnar::RecordBatchPtr;
using columnar::SchemaPtr;
using columnar::TypeId;
using columnar::TypePtr;

// ---------------------------------------------------------------------------
// Data generation and comparison.

__int128 Pow10(int n) {
  __int128 v = 1;
  for (int i = 0; i < n; ++i) v *= 10;
  return v;
}

// Deterministic value for row `row` of a column of `type`; null when
// `nullable` and the row falls on the null pattern (every 3rd row, plus a
// run of 40 rows to exercise runs in the levels).
void AppendValue(ColumnBuilder* b, const DataType& type, bool nullable, int64_t row, int64_t salt) {
  if (nullable && (row % 3 == 1 || (row % 500 >= 100 && row % 500 < 140))) {
    b->AppendNull();
    return;
  }
  const int64_t x = row * 7919 + salt;
  switch (type.id()) {
    case TypeId::kBoolean: b->AppendBool((x / 3) % 2 == 0); break;
    case TypeId::kByte: b->Append<int8_t>(static_cast<int8_t>(x % 256 - 128)); break;
    case TypeId::kShort: b->Append<int16_t>(static_cast<int16_t>(x % 65536 - 32768)); break;
    case TypeId::kInt: b->Append<int32_t>(static_cast<int32_t>((x % 2000) - 1000) * 1000003); break;
    case TypeId::kLong:
      b->Append<int64_t>((x % 100) * (int64_t{1} << 40) - (int64_t{1} << 45));
      break;
    case TypeId::kFloat: {
      static const float special[] = {0.0f, -0.0f, std::numeric_limits<float>::infinity(),
                                      std::numeric_limits<float>::quiet_NaN(), -1.5e30f};
      b->Append<float>(row % 50 < 5 ? special[row % 50] : static_cast<float>(x % 1000) / 7.0f);
      break;
    }
    case TypeId::kDouble: {
      static const double special[] = {0.0, -0.0, -std::numeric_limits<double>::infinity(),
                                       std::numeric_limits<double>::quiet_NaN(), 1e300};
      b->Append<double>(row % 50 < 5 ? special[row % 50] : static_cast<double>(x % 100000) / 3.0);
      break;
    }
    case TypeId::kDecimal: {
      // Spread over the full precision, both signs.
      __int128 limit = Pow10(type.precision()) - 1;
      __int128 v = (static_cast<__int128>(x) * 1000000007 * 998244353) % limit;
      if (row % 2 == 1) v = -v;
      if (row % 97 == 0) v = row % 194 == 0 ? limit : -limit;
      b->Append<__int128>(v);
      break;
    }
    case TypeId::kString: {
      // Low cardinality (dictionary friendly) with multi-byte UTF-8.
      static const char* words[] = {"alpha", "β-beta", "", "gamma γ", "delta", "\xf0\x9f\x98\x80"};
      b->AppendString(std::string(words[x % 6]) + std::to_string(x % 13));
      break;
    }
    case TypeId::kBinary: {
      std::string s;
      for (int64_t i = 0; i < x % 9; ++i) s.push_back(static_cast<char>((x + i * 31) % 256));
      b->AppendString(s);
      break;
    }
    case TypeId::kDate: b->Append<int32_t>(static_cast<int32_t>(x % 40000 - 20000)); break;
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz:
      b->Append<int64_t>((x % 100000 - 50000) * int64_t{86400000000} / 7 + x % 1000);
      break;
    default: FAIL() << "unexpected type";
  }
}

RecordBatchPtr MakeBatch(const SchemaPtr& schema, int64_t first_row, int64_t rows) {
  auto batch = std::make_shared<RecordBatch>();
  batch->schema = schema;
  batch->num_rows = rows;
  for (int col_idx = 0; col_idx < schema->num_fields(); ++col_idx) {
    const Field& f = schema->field(col_idx);
    ColumnBuilder b(f.type);
    for (int64_t row = first_row; row < first_row + rows; ++row) {
      AppendValue(&b, *f.type, f.nullable, row, col_idx);
    }
    batch->columns.push_back(b.Finish());
  }
  return batch;
}

template <typename T>
bool SameBits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// Compares row values (not buffer layouts).
void ExpectColumnsEqual(const Column& expected, const Column& actual, const std::string& what) {
  ASSERT_TRUE(expected.type->Equals(*actual.type))
      << what << ": " << expected.type->ToDdl() << " vs " << actual.type->ToDdl();
  ASSERT_EQ(expected.length, actual.length) << what;
  EXPECT_EQ(expected.null_count, actual.null_count) << what;
  ASSERT_OK(columnar::ValidateColumn(actual));
  for (int64_t i = 0; i < expected.length; ++i) {
    ASSERT_EQ(expected.IsValid(i), actual.IsValid(i)) << what << " row " << i;
    if (!expected.IsValid(i)) continue;
    bool same = false;
    switch (expected.type->id()) {
      case TypeId::kBoolean: same = expected.BoolValue(i) == actual.BoolValue(i); break;
      case TypeId::kByte: same = expected.Value<int8_t>(i) == actual.Value<int8_t>(i); break;
      case TypeId::kShort: same = expected.Value<int16_t>(i) == actual.Value<int16_t>(i); break;
      case TypeId::kInt:
      case TypeId::kDate: same = expected.Value<int32_t>(i) == actual.Value<int32_t>(i); break;
      case TypeId::kLong:
      case TypeId::kTimestamp:
      case TypeId::kTimestampNtz:
        same = expected.Value<int64_t>(i) == actual.Value<int64_t>(i);
        break;
      case TypeId::kFloat: same = SameBits(expected.Value<float>(i), actual.Value<float>(i)); break;
      case TypeId::kDouble:
        same = SameBits(expected.Value<double>(i), actual.Value<double>(i));
        break;
      case TypeId::kDecimal: same = expected.Value<__int128>(i) == actual.Value<__int128>(i); break;
      case TypeId::kString:
      case TypeId::kBinary: same = expected.StringValue(i) == actual.StringValue(i); break;
      default: FAIL() << "unexpected type";
    }
    ASSERT_TRUE(same) << what << " row " << i;
  }
}

SchemaPtr AllTypesSchema() {
  std::vector<Field> fields;
  const std::vector<std::pair<std::string, TypePtr>> types = {
      {"bool", DataType::Boolean()},
      {"byte", DataType::Byte()},
      {"short", DataType::Short()},
      {"int", DataType::Int()},
      {"long", DataType::Long()},
      {"float", DataType::Float()},
      {"double", DataType::Double()},
      {"dec5_2", DataType::Decimal(5, 2)},
      {"dec15_3", DataType::Decimal(15, 3)},
      {"dec25_4", DataType::Decimal(25, 4)},
      {"dec38_0", DataType::Decimal(38, 0)},
      {"string", DataType::String()},
      {"binary", DataType::Binary()},
      {"date", DataType::Date()},
      {"ts", DataType::Timestamp()},
      {"ts_ntz", DataType::TimestampNtz()},
  };
  for (const auto& [name, type] : types) {
    fields.push_back(Field{name, type, true});
    fields.push_back(Field{name + "_req", type, false});
  }
  return DataType::Struct(std::move(fields));
}

std::string WriteFile(fs::FileSystem* fs, const std::string& path, const SchemaPtr& schema,
                      const std::vector<RecordBatchPtr>& batches, const WriterOptions& options,
                      WriteResult* result = nullptr) {
  auto writer = ParquetFileWriter::Open(fs, path, schema, options);
  EXPECT_TRUE(writer.ok()) << writer.status().ToString();
  if (!writer.ok()) return "";
  for (const auto& b : batches) {
    Status s = (*writer)->WriteBatch(*b);
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  auto r = (*writer)->Close();
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (r.ok() && result != nullptr) *result = *r;
  auto bytes = fs->ReadFile(path);
  EXPECT_TRUE(bytes.ok());
  return bytes.ok() ? *bytes : "";
}

FileMetaData Footer(const std::string& file) {
  uint32_t len;
  std::memcpy(&len, file.data() + file.size() - 8, 4);
  auto md = ParseFileMetaData(std::string_view(file).substr(file.size() - 8 - len, len));
  EXPECT_TRUE(md.ok()) << md.status().ToString();
  return md.ok() ? *md : FileMetaData();
}

// Reads every row group and concatenates them.
RecordBatchPtr ReadAll(fs::FileSystem* fs, const std::string& path,
                       const std::vector<std::string>& columns = {}) {
  auto reader = ParquetFileReader::Open(fs, path);
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  if (!reader.ok()) return nullptr;
  std::vector<RecordBatchPtr> parts;
  for (int rg = 0; rg < (*reader)->num_row_groups(); ++rg) {
    auto batch = (*reader)->ReadRowGroup(rg, columns);
    EXPECT_TRUE(batch.ok()) << batch.status().ToString();
    if (!batch.ok()) return nullptr;
    parts.push_back(*batch);
  }
  if (parts.empty()) return nullptr;
  return columnar::ConcatBatches(parts);
}

// ---------------------------------------------------------------------------

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

// Opening and reading a damaged file fails with Corruption naming the path.
Status OpenAndReadAll(fs::FileSystem* fs, const std::string& path) {
  SILT_ASSIGN_OR_RETURN(auto reader, ParquetFileReader::Open(fs, path));
  for (int rg = 0; rg < reader->num_row_groups(); ++rg) {
    SILT_RETURN_NOT_OK(reader->ReadRowGroup(rg).status());
  }
  return Status::OK();
}

TEST(ParquetFileTest, TruncatedOrDamagedFilesAreCorruptionNamingThePath) {
  auto fs = fs::MakeMemoryFileSystem();
  SchemaPtr schema = AllTypesSchema();
  const std::string file =
      WriteFile(fs.get(), "/t/good.parquet", schema, {MakeBatch(schema, 0, 500)}, WriterOptions());
  const std::string path = "/t/bad.parquet";
  auto expect_corruption = [&](const std::string& bytes, const std::string& what) {
    ASSERT_OK(fs->WriteFile(path, bytes));
    Status s = OpenAndReadAll(fs.get(), path);
    EXPECT_EQ(s.code(), StatusCode::kCorruption) << what << ": " << s.ToString();
    EXPECT_NE(s.message().find(path), std::string::npos) << what << ": " << s.ToString();
  };
  for (size_t len : {size_t{0}, size_t{3}, size_t{11}, file.size() / 2, file.size() - 1}) {
    expect_corruption(file.substr(0, len), "truncated to " + std::to_string(len));
  }
  expect_corruption("this is definitely not a parquet file, not at all", "text");
  // Damage the footer's length word.
  std::string bad_len = file;
  bad_len[bad_len.size() - 7] = '\x7f';
  expect_corruption(bad_len, "footer length");
  // Garbage inside the footer.
  std::string bad_footer = file;
  uint32_t footer_len;
  std::memcpy(&footer_len, file.data() + file.size() - 8, 4);
  for (size_t i = file.size() - 8 - footer_len; i < file.size() - 8; i += 3) bad_footer[i] = '\xee';
  expect_corruption(bad_footer, "footer bytes");
  // Garbage across the column chunks (page headers and bodies).
  std::string bad_pages = file;
  for (size_t i = 4; i < 4 + 64; ++i) bad_pages[i] = '\x99';
  expect_corruption(bad_pages, "page bytes");
}

TEST(ParquetFileTest, RandomDamageNeverCrashes) {
  auto fs = fs::MakeMemoryFileSystem();
  SchemaPtr schema = AllTypesSchema();
  WriterOptions options;
  options.page_bytes = 1024;
  const std::string file =
      WriteFile(fs.get(), "/t/good.parquet", schema, {MakeBatch(schema, 0, 300)}, options);
  std::mt19937 rng(1234);
  for (int iteration = 0; iteration < 300; ++iteration) {
    std::string damaged = file;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < flips; ++i) {
      damaged[rng() % damaged.size()] = static_cast<char>(rng());
    }
    ASSERT_OK(fs->WriteFile("/t/damaged.parquet", damaged));
    Status s = OpenAndReadAll(fs.get(), "/t/damaged.parquet");
    // Damage to value bytes may go unnoticed; anything noticed is reported
    // as Corruption (or NotSupported when a type/encoding id was hit).
    EXPECT_TRUE(s.ok() || s.IsCorruption() || s.IsNotSupported()) << s.ToString();
  }
}

// ---------------------------------------------------------------------------
// Files built by hand: shapes silt does not write but must read (INT96,
// TIMESTAMP MILLIS/NANOS, data page v2, BYTE_ARRAY decimals,
// PLAIN_DICTIONARY).

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
  std::string footer = SerializeThrift(md);
  uint32_t len = static_cast<uint32_t>(footer.size());
  file += footer;
  file.append(reinterpret_cast<const char*>(&len), 4);
  file += kParquetMagic;
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
  c.element.name = "x";
  c.element.type = PhysicalType::kInt64;
  c.element.repetition_type = Repetition::kRequired;
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
  c.element.name = "x";
  c.element.type = PhysicalType::kInt64;
  c.element.repetition_type = Repetition::kRequired;
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
  c96.element.name = "i96";
  c96.element.type = PhysicalType::kInt96;
  c96.element.repetition_type = Repetition::kRequired;

  // TIMESTAMP(MILLIS, UTC) via the legacy converted type.
  HandColumn cms;
  cms.chunk = DataPageV1(3, Encoding::kPlain, Plain<int64_t>({-1, 0, 1700000000123}));
  cms.element.name = "ms";
  cms.element.type = PhysicalType::kInt64;
  cms.element.repetition_type = Repetition::kRequired;
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
  cns.element.name = "ns";
  cns.element.type = PhysicalType::kInt64;
  cns.element.repetition_type = Repetition::kOptional;
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
  cdec.element.name = "dec";
  cdec.element.type = PhysicalType::kByteArray;
  cdec.element.repetition_type = Repetition::kRequired;
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
  SchemaElement s;
  s.name = "s";
  s.num_children = 1;
  s.repetition_type = Repetition::kRequired;
  SchemaElement a;
  a.name = "a";
  a.type = PhysicalType::kInt32;
  a.repetition_type = Repetition::kRequired;
  SchemaElement flat = a;
  flat.name = "flat";
  std::string file(kParquetMagic);
  FileMetaData md;
  SchemaElement root;
  root.name = "schema";
  root.num_children = 2;
  md.schema = {root, s, a, flat};
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
  std::string footer = SerializeThrift(md);
  uint32_t len = static_cast<uint32_t>(footer.size());
  file += footer;
  file.append(reinterpret_cast<const char*>(&len), 4);
  file += kParquetMagic;
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
