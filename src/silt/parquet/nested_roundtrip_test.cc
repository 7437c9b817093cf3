#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "silt/base/buffer.h"
#include "silt/columnar/builder.h"
#include "silt/parquet/file_reader.h"
#include "silt/parquet/file_test_util.h"
#include "silt/parquet/file_writer.h"
#include "silt/parquet/parquet_metadata.h"
#include "silt/parquet/parquet_schema.h"
#include "silt/parquet/thrift_compact.h"
#include "silt/testing/gtest_util.h"

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
using test_util::Group;
using test_util::Leaf;
using test_util::ReadAll;
using test_util::WithRoot;

// Random values of any type; nested values get 0-4 elements, and nulls and
// empty lists appear often so every definition level occurs.
void AppendRandom(ColumnBuilder* b, const DataType& type, bool nullable, std::mt19937_64* rng) {
  std::uniform_int_distribution<int> pct(0, 99);
  if (nullable && pct(*rng) < 20) {
    b->AppendNull();
    return;
  }
  const int64_t x = static_cast<int64_t>((*rng)() % 1000003) - 500000;
  switch (type.id()) {
    case TypeId::kBoolean: b->AppendBool(x % 2 == 0); break;
    case TypeId::kByte: b->Append<int8_t>(static_cast<int8_t>(x)); break;
    case TypeId::kShort: b->Append<int16_t>(static_cast<int16_t>(x)); break;
    case TypeId::kInt:
    case TypeId::kDate: b->Append<int32_t>(static_cast<int32_t>(x)); break;
    case TypeId::kLong:
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: b->Append<int64_t>(x * 1000003); break;
    case TypeId::kFloat: b->Append<float>(static_cast<float>(x) / 8); break;
    case TypeId::kDouble: b->Append<double>(static_cast<double>(x) / 16); break;
    case TypeId::kDecimal: b->Append<__int128>(static_cast<__int128>(x) * 12345); break;
    case TypeId::kString:
    case TypeId::kBinary:
      b->AppendString(std::string(static_cast<size_t>(x % 7 + 6), 'a' + x % 5));
      break;
    case TypeId::kStruct:
      for (int i = 0; i < type.num_fields(); ++i) {
        AppendRandom(b->child(i), *type.field(i).type, type.field(i).nullable, rng);
      }
      b->AppendValid();
      break;
    case TypeId::kArray: {
      const int n = pct(*rng) % 5;
      for (int i = 0; i < n; ++i) {
        AppendRandom(b->child(0), *type.element_type(), type.contains_null(), rng);
      }
      b->CloseList();
      break;
    }
    case TypeId::kMap: {
      const int n = pct(*rng) % 4;
      ColumnBuilder* entries = b->child(0);
      for (int i = 0; i < n; ++i) {
        AppendRandom(entries->child(0), *type.key_type(), false, rng);
        AppendRandom(entries->child(1), *type.value_type(), type.value_contains_null(), rng);
        entries->AppendValid();
      }
      b->CloseList();
      break;
    }
    default: b->AppendNull(); break;
  }
}

// A row rendered as text, for comparing nested values.
std::string Render(const Column& c, int64_t row) {
  if (c.IsNull(row)) return "null";
  switch (c.type->id()) {
    case TypeId::kBoolean: return c.BoolValue(row) ? "true" : "false";
    case TypeId::kByte: return std::to_string(c.Value<int8_t>(row));
    case TypeId::kShort: return std::to_string(c.Value<int16_t>(row));
    case TypeId::kInt:
    case TypeId::kDate: return std::to_string(c.Value<int32_t>(row));
    case TypeId::kLong:
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: return std::to_string(c.Value<int64_t>(row));
    case TypeId::kFloat: return std::to_string(c.Value<float>(row));
    case TypeId::kDouble: return std::to_string(c.Value<double>(row));
    case TypeId::kDecimal: return std::to_string(static_cast<int64_t>(c.Value<__int128>(row)));
    case TypeId::kString:
    case TypeId::kBinary: return "'" + std::string(c.StringValue(row)) + "'";
    case TypeId::kStruct: {
      std::string s = "{";
      for (size_t i = 0; i < c.children.size(); ++i) {
        s += (i ? "," : "") + Render(*c.children[i], row);
      }
      return s + "}";
    }
    case TypeId::kArray:
    case TypeId::kMap: {
      std::string s = "[";
      for (int32_t k = c.offsets()[row]; k < c.offsets()[row + 1]; ++k) {
        s += (k > c.offsets()[row] ? "," : "") + Render(*c.children[0], k);
      }
      return s + "]";
    }
    default: return "?";
  }
}

SchemaPtr NestedSchema() {
  std::vector<Field> point = {{"x", DataType::Double(), true, "{}"},
                              {"tags", DataType::Array(DataType::String(), true), true, "{}"}};
  TypePtr point_t = DataType::Struct(point);
  return DataType::Struct({
      {"id", DataType::Long(), false, "{}"},
      {"s",
       DataType::Struct({{"a", DataType::Int(), true, "{}"},
                         {"b", DataType::String(), false, "{}"},
                         {"inner", DataType::Struct({{"d", DataType::Decimal(20, 2), true, "{}"}}),
                          true, "{}"}}),
       true, "{}"},
      {"req_s", DataType::Struct({{"v", DataType::Boolean(), true, "{}"}}), false, "{}"},
      {"ints", DataType::Array(DataType::Int(), true), true, "{}"},
      {"req_ints", DataType::Array(DataType::Long(), false), false, "{}"},
      {"nested_lists",
       DataType::Array(DataType::Array(DataType::Array(DataType::Short(), true), true), true), true,
       "{}"},
      {"points", DataType::Array(point_t, true), true, "{}"},
      {"m", DataType::Map(DataType::String(), DataType::Array(DataType::Date(), true), true), true,
       "{}"},
      {"mm",
       DataType::Map(DataType::Int(), DataType::Map(DataType::String(), point_t, true), false),
       true, "{}"},
      {"ts", DataType::Timestamp(), true, "{}"},
  });
}

RecordBatchPtr RandomBatch(const SchemaPtr& schema, int64_t rows, uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto batch = std::make_shared<RecordBatch>();
  batch->schema = schema;
  batch->num_rows = rows;
  for (const Field& f : schema->fields()) {
    ColumnBuilder b(f.type);
    for (int64_t row = 0; row < rows; ++row) AppendRandom(&b, *f.type, f.nullable, &rng);
    batch->columns.push_back(b.Finish());
  }
  return batch;
}

void ExpectSameRows(const RecordBatch& expected, const RecordBatch& actual) {
  ASSERT_EQ(expected.num_rows, actual.num_rows);
  ASSERT_EQ(expected.num_columns(), actual.num_columns());
  for (int col_idx = 0; col_idx < expected.num_columns(); ++col_idx) {
    const Column& e = *expected.column(col_idx);
    const Column& a = *actual.column(col_idx);
    ASSERT_TRUE(e.type->Equals(*a.type)) << e.type->ToDdl() << " vs " << a.type->ToDdl();
    ASSERT_OK(columnar::ValidateColumn(a));
    for (int64_t row = 0; row < expected.num_rows; ++row) {
      ASSERT_EQ(Render(e, row), Render(a, row))
          << expected.schema->field(col_idx).name << " row " << row;
    }
  }
}

class NestedRoundTripTest : public ::testing::TestWithParam<std::tuple<bool, int64_t>> {};

TEST_P(NestedRoundTripTest, StructsListsAndMapsThreeLevelsDeepReadBackIdentical) {
  auto fs = fs::MakeMemoryFileSystem();
  SchemaPtr schema = NestedSchema();
  WriterOptions options;
  options.enable_dictionary = std::get<0>(GetParam());
  options.page_bytes = std::get<1>(GetParam());
  options.row_group_bytes = 64 * 1024;
  std::vector<RecordBatchPtr> batches = {RandomBatch(schema, 3000, 1), RandomBatch(schema, 1, 2),
                                         RandomBatch(schema, 2000, 3)};
  {
    ASSERT_OK_AND_ASSIGN(auto writer,
                         ParquetFileWriter::Open(fs.get(), "/t/n.parquet", schema, options));
    for (const auto& b : batches) ASSERT_OK(writer->WriteBatch(*b));
    ASSERT_OK_AND_ASSIGN(WriteResult result, writer->Close());
    EXPECT_EQ(result.num_rows, 5001);
    ASSERT_EQ(result.column_stats.size(), static_cast<size_t>(schema->num_fields()));
  }
  RecordBatchPtr actual = ReadAll(fs.get(), "/t/n.parquet");
  ASSERT_NE(actual, nullptr);
  EXPECT_TRUE(actual->schema->Equals(*schema)) << actual->schema->ToDdl();
  ExpectSameRows(*columnar::ConcatBatches(batches), *actual);

  // Projection of nested top-level columns, in the order asked.
  RecordBatchPtr projected = ReadAll(fs.get(), "/t/n.parquet", {"MM", "points"});
  ASSERT_NE(projected, nullptr);
  RecordBatchPtr all = columnar::ConcatBatches(batches);
  auto expected = std::make_shared<RecordBatch>();
  expected->schema = projected->schema;
  expected->num_rows = all->num_rows;
  expected->columns = {all->GetColumn("mm"), all->GetColumn("points")};
  ExpectSameRows(*expected, *projected);
}

TEST(NestedProjectionTest, StructFieldPathsReadOnlyTheirLeaves) {
  auto fs = fs::MakeMemoryFileSystem();
  SchemaPtr schema = NestedSchema();
  RecordBatchPtr batch = RandomBatch(schema, 1500, 9);
  {
    ASSERT_OK_AND_ASSIGN(auto writer,
                         ParquetFileWriter::Open(fs.get(), "/t/p.parquet", schema, {}));
    ASSERT_OK(writer->WriteBatch(*batch));
    ASSERT_OK(writer->Close().status());
  }
  RecordBatchPtr got = ReadAll(fs.get(), "/t/p.parquet", {"S.inner.d", "s.b", "s.inner"});
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(got->schema->ToDdl(),
            "STRUCT<`S.inner.d`: DECIMAL(20,2), `s.b`: STRING, "
            "`s.inner`: STRUCT<d: DECIMAL(20,2)>>");
  const Column& s = *batch->GetColumn("s");
  const Column& inner = *s.children[2];
  for (int64_t row = 0; row < batch->num_rows; ++row) {
    const bool s_null = s.IsNull(row);
    const bool inner_null = s_null || inner.IsNull(row);
    ASSERT_EQ(Render(*got->column(0), row), inner_null ? "null" : Render(*inner.children[0], row))
        << row;
    ASSERT_EQ(Render(*got->column(1), row), s_null ? "null" : Render(*s.children[1], row)) << row;
    ASSERT_EQ(Render(*got->column(2), row), inner_null ? "null" : Render(inner, row)) << row;
  }
  ASSERT_OK_AND_ASSIGN(auto reader, ParquetFileReader::Open(fs.get(), "/t/p.parquet"));
  ASSERT_RAISES(InvalidArgument, reader->ReadRowGroup(0, {"ints.element"}));
  ASSERT_RAISES(InvalidArgument, reader->ReadRowGroup(0, {"s.nope"}));
  ASSERT_RAISES(InvalidArgument, reader->ReadRowGroup(0, {"nope.a"}));
}

INSTANTIATE_TEST_SUITE_P(DictionaryAndPageSizes, NestedRoundTripTest,
                         ::testing::Combine(::testing::Bool(),
                                            ::testing::Values(int64_t{512}, int64_t{1} << 20)));

TEST(NestedSchemaTest, WriterUsesSparkListAndMapLayout) {
  Field f{"m", DataType::Map(DataType::String(), DataType::Array(DataType::Int(), false), true),
          true, "{}"};
  ASSERT_OK_AND_ASSIGN(std::vector<SchemaElement> els, ParquetElementsForField(f));
  std::vector<std::string> names;
  for (const SchemaElement& el : els) names.push_back(el.name);
  EXPECT_EQ(names, (std::vector<std::string>{"m", "key_value", "key", "value", "list", "element"}));
  EXPECT_EQ(els[0].converted_type, ConvertedType::kMap);
  EXPECT_EQ(els[1].repetition_type, Repetition::kRepeated);
  EXPECT_EQ(els[2].repetition_type, Repetition::kRequired);
  EXPECT_EQ(els[3].converted_type, ConvertedType::kList);
  EXPECT_EQ(els[5].repetition_type, Repetition::kRequired);
}

TEST(NestedSchemaTest, FieldIdsFromMetadataGoOnEveryFieldAndReadBack) {
  // Delta column mapping's physical schema: every struct field carries
  // {"parquet.field.id": N}; list and map groups carry their field's id.
  TypePtr inner = DataType::Struct({Field{"x", DataType::Long(), true, R"({"parquet.field.id":3})"},
                                    Field{"y", DataType::Array(DataType::Int(), true), true,
                                          R"({"parquet.field.id": 4, "other": 1})"}});
  SchemaPtr schema =
      DataType::Struct({Field{"a", DataType::Int(), true, R"({"parquet.field.id":1})"},
                        Field{"s", inner, true, R"({"parquet.field.id":2})"},
                        Field{"n", DataType::String(), true, "{}"}});
  auto fs = fs::MakeMemoryFileSystem();
  ASSERT_OK_AND_ASSIGN(auto writer, ParquetFileWriter::Open(fs.get(), "/ids.parquet", schema, {}));
  RecordBatchPtr batch = RandomBatch(schema, 10, 3);
  ASSERT_OK(writer->WriteBatch(*batch));
  ASSERT_OK(writer->Close().status());
  ASSERT_OK_AND_ASSIGN(auto reader, ParquetFileReader::Open(fs.get(), "/ids.parquet"));
  const SchemaPtr& back = reader->schema();
  EXPECT_EQ(back->field(0).metadata_json, R"({"parquet.field.id":1})");
  EXPECT_EQ(back->field(1).metadata_json, R"({"parquet.field.id":2})");
  EXPECT_EQ(back->field(1).type->field(0).metadata_json, R"({"parquet.field.id":3})");
  EXPECT_EQ(back->field(1).type->field(1).metadata_json, R"({"parquet.field.id":4})");
  EXPECT_EQ(back->field(2).metadata_json, "{}");
}

TEST(NestedSchemaTest, LevelsFollowTheSchemaTree) {
  // optional group a (LIST) { repeated group list { optional int32 element; } }
  Field f{"a", DataType::Array(DataType::Int(), true), true, "{}"};
  ASSERT_OK_AND_ASSIGN(std::vector<SchemaElement> els, ParquetElementsForField(f));
  ASSERT_OK_AND_ASSIGN(auto descs, BuildColumnDescriptors(WithRoot(std::move(els), 1)));
  ASSERT_EQ(descs.size(), 1u);
  ASSERT_EQ(descs[0].leaves.size(), 1u);
  const ColumnDescriptor& leaf = descs[0].leaves[0];
  EXPECT_EQ(leaf.max_definition_level, 3);
  EXPECT_EQ(leaf.max_repetition_level, 1);
  EXPECT_EQ(leaf.slot_definition_level, 2);
  EXPECT_EQ(leaf.path, (std::vector<std::string>{"a", "list", "element"}));
}

TEST(NestedSchemaTest, LegacyTwoLevelListsReadAsArrays) {
  // optional group a (LIST) { repeated int32 array; } and an unannotated
  // repeated group b { required int32 x; }.
  SchemaElement a = Group("a", 1);
  a.converted_type = ConvertedType::kList;
  ASSERT_OK_AND_ASSIGN(auto descs,
                       BuildColumnDescriptors(
                           WithRoot({a, Leaf("array", PhysicalType::kInt32, Repetition::kRepeated),
                                     Group("b", 1, Repetition::kRepeated),
                                     Leaf("x", PhysicalType::kInt32, Repetition::kRequired)},
                                    2)));
  ASSERT_EQ(descs.size(), 2u);
  EXPECT_EQ(descs[0].field.type->ToDdl(), "ARRAY<INT>");
  EXPECT_FALSE(descs[0].field.type->contains_null());
  EXPECT_EQ(descs[0].leaves[0].max_definition_level, 2);
  EXPECT_EQ(descs[1].field.type->ToDdl(), "ARRAY<STRUCT<x: INT NOT NULL>>");
  EXPECT_FALSE(descs[1].field.nullable);
  EXPECT_EQ(descs[1].leaves[0].max_definition_level, 1);
  EXPECT_EQ(descs[1].leaves[0].max_repetition_level, 1);
}

// Parses a thrift structure stored at [offset, offset + length) of `file`.
template <typename T>
T ParseAt(const std::string& file, int64_t offset, int32_t length) {
  thrift::CompactReader r(reinterpret_cast<const uint8_t*>(file.data()) + offset, length);
  T value;
  value.Read(&r);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return value;
}

class EncodingsTest : public ::testing::TestWithParam<bool /*page v2*/> {};

TEST_P(EncodingsTest, ChosenEncodingsRoundTripInFlatAndNestedColumns) {
  auto fs = fs::MakeMemoryFileSystem();
  SchemaPtr schema = DataType::Struct({
      {"i32", DataType::Int(), true, "{}"},
      {"i64", DataType::Long(), false, "{}"},
      {"i8", DataType::Byte(), true, "{}"},
      {"date", DataType::Date(), true, "{}"},
      {"f32", DataType::Float(), true, "{}"},
      {"f64", DataType::Double(), false, "{}"},
      {"dec_long", DataType::Decimal(12, 2), true, "{}"},
      {"dec_flba", DataType::Decimal(25, 3), true, "{}"},
      {"dec_flba2", DataType::Decimal(30, 3), true, "{}"},
      {"str_len", DataType::String(), true, "{}"},
      {"str_inc", DataType::String(), false, "{}"},
      {"bin", DataType::Binary(), true, "{}"},
      {"ints", DataType::Array(DataType::Int(), true), true, "{}"},
      {"m", DataType::Map(DataType::String(), DataType::Double(), true), true, "{}"},
  });
  WriterOptions options;
  options.data_page_v2 = GetParam();
  options.page_bytes = 1024;
  options.compression = Compression::kZstd;
  options.column_encodings = {
      {"i32", ColumnEncoding::kDeltaBinaryPacked},
      {"i64", ColumnEncoding::kDeltaBinaryPacked},
      {"i8", ColumnEncoding::kDeltaBinaryPacked},
      {"date", ColumnEncoding::kByteStreamSplit},
      {"f32", ColumnEncoding::kByteStreamSplit},
      {"f64", ColumnEncoding::kByteStreamSplit},
      {"dec_long", ColumnEncoding::kDeltaBinaryPacked},
      {"dec_flba", ColumnEncoding::kByteStreamSplit},
      {"dec_flba2", ColumnEncoding::kDeltaByteArray},
      {"str_len", ColumnEncoding::kDeltaLengthByteArray},
      {"str_inc", ColumnEncoding::kDeltaByteArray},
      {"bin", ColumnEncoding::kPlain},
      {"ints.list.element", ColumnEncoding::kDeltaBinaryPacked},
      {"m.key_value.key", ColumnEncoding::kDeltaByteArray},
      {"m.key_value.value", ColumnEncoding::kByteStreamSplit},
  };
  std::vector<RecordBatchPtr> batches = {RandomBatch(schema, 2500, 11),
                                         RandomBatch(schema, 700, 12)};
  {
    ASSERT_OK_AND_ASSIGN(auto writer,
                         ParquetFileWriter::Open(fs.get(), "/t/e.parquet", schema, options));
    for (const auto& b : batches) ASSERT_OK(writer->WriteBatch(*b));
    ASSERT_OK(writer->Close().status());
  }
  ASSERT_OK_AND_ASSIGN(std::string file, fs->ReadFile("/t/e.parquet"));
  uint32_t len;
  std::memcpy(&len, file.data() + file.size() - 8, 4);
  ASSERT_OK_AND_ASSIGN(FileMetaData md, ParseFileMetaData(std::string_view(file).substr(
                                            file.size() - 8 - len, len)));
  for (const ColumnChunk& cc : md.row_groups[0].columns) {
    std::string path;
    for (const std::string& p : cc.meta_data->path_in_schema) path += (path.empty() ? "" : ".") + p;
    auto it = options.column_encodings.find(path);
    ASSERT_NE(it, options.column_encodings.end()) << path;
    const std::vector<Encoding>& encodings = cc.meta_data->encodings;
    EXPECT_EQ(std::count(encodings.begin(), encodings.end(), Encoding::kRleDictionary), 0) << path;
    if (it->second == ColumnEncoding::kByteStreamSplit) {
      EXPECT_EQ(std::count(encodings.begin(), encodings.end(), Encoding::kByteStreamSplit), 1)
          << path;
    }
    for (const PageEncodingStats& st : cc.meta_data->encoding_stats) {
      EXPECT_EQ(st.page_type, GetParam() ? PageType::kDataPageV2 : PageType::kDataPage);
    }
  }
  RecordBatchPtr actual = ReadAll(fs.get(), "/t/e.parquet");
  ASSERT_NE(actual, nullptr);
  ExpectSameRows(*columnar::ConcatBatches(batches), *actual);
}

INSTANTIATE_TEST_SUITE_P(PageVersions, EncodingsTest, ::testing::Bool());

TEST(EncodingsTest, EncodingThatDoesNotFitOrNamesNoColumnIsRejected) {
  auto fs = fs::MakeMemoryFileSystem();
  SchemaPtr schema = DataType::Struct({{"s", DataType::String(), true, "{}"},
                                       {"l", DataType::Array(DataType::Int(), true), true, "{}"}});
  WriterOptions options;
  options.column_encodings = {{"s", ColumnEncoding::kDeltaBinaryPacked}};
  Result<std::unique_ptr<ParquetFileWriter>> w =
      ParquetFileWriter::Open(fs.get(), "/t/x.parquet", schema, options);
  ASSERT_RAISES(InvalidArgument, w);
  EXPECT_NE(w.status().message().find("DELTA_BINARY_PACKED"), std::string::npos);
  options.column_encodings = {{"l.element", ColumnEncoding::kDeltaBinaryPacked}};
  w = ParquetFileWriter::Open(fs.get(), "/t/x.parquet", schema, options);
  ASSERT_RAISES(InvalidArgument, w);
  EXPECT_NE(w.status().message().find("l.element"), std::string::npos);
  ASSERT_OK_AND_ASSIGN(ColumnEncoding e, ParseColumnEncoding("Byte_Stream_Split"));
  EXPECT_EQ(e, ColumnEncoding::kByteStreamSplit);
  ASSERT_RAISES(InvalidArgument, ParseColumnEncoding("rle"));
}

// A file with one list<int> column (100 rows, one data page) whose page
// header claims `claimed` values (< 0: the true count), rebuilt around the
// patched header.
std::string ListFileClaimingValues(int32_t claimed) {
  auto fs = fs::MakeMemoryFileSystem();
  SchemaPtr schema = DataType::Struct({{"l", DataType::Array(DataType::Int(), true), true}});
  WriterOptions options;
  options.compression = Compression::kUncompressed;
  options.enable_dictionary = false;
  options.write_page_index = false;
  auto writer = ParquetFileWriter::Open(fs.get(), "/l.parquet", schema, options);
  EXPECT_TRUE(writer.ok());
  if (!writer.ok()) return "";
  EXPECT_TRUE((*writer)->WriteBatch(*RandomBatch(schema, 100, 11)).ok());
  EXPECT_TRUE((*writer)->Close().ok());
  auto bytes = fs->ReadFile("/l.parquet");
  EXPECT_TRUE(bytes.ok());
  if (!bytes.ok()) return "";
  const std::string& file = *bytes;
  uint32_t len;
  std::memcpy(&len, file.data() + file.size() - 8, 4);
  auto md = ParseFileMetaData(std::string_view(file).substr(file.size() - 8 - len, len));
  EXPECT_TRUE(md.ok());
  if (!md.ok()) return "";
  ColumnMetaData& m = *md->row_groups[0].columns[0].meta_data;
  const std::string chunk = file.substr(static_cast<size_t>(m.data_page_offset),
                                        static_cast<size_t>(m.total_compressed_size));
  thrift::CompactReader r(reinterpret_cast<const uint8_t*>(chunk.data()),
                          static_cast<int64_t>(chunk.size()));
  PageHeader h;
  h.Read(&r);
  EXPECT_TRUE(r.ok() && h.data_page_header.has_value());
  if (!r.ok() || !h.data_page_header) return "";
  if (claimed >= 0) h.data_page_header->num_values = claimed;
  const std::string patched = SerializeThrift(h) + chunk.substr(static_cast<size_t>(r.position()));
  m.data_page_offset = static_cast<int64_t>(kParquetMagic.size());
  m.total_compressed_size = static_cast<int64_t>(patched.size());
  const std::string footer = SerializeThrift(*md);
  const uint32_t footer_len = static_cast<uint32_t>(footer.size());
  std::string out(kParquetMagic);
  out += patched;
  out += footer;
  out.append(reinterpret_cast<const char*>(&footer_len), 4);
  out += kParquetMagic;
  return out;
}

TEST(NestedCorruptionTest, PageClaimingMoreValuesThanItsLevelsIsCorruptionNotAnAllocation) {
  // A fuzzer finding: a nested leaf's page header claiming 2^28 values
  // made the reader size levels, validity and values for all of them
  // (gigabytes) before decoding the few bytes of levels the page holds.
  const std::string file = ListFileClaimingValues(1 << 28);
  ASSERT_FALSE(file.empty());
  auto fs = fs::MakeMemoryFileSystem();
  ASSERT_OK(fs->WriteFile("/corrupt.parquet", file));
  ASSERT_OK_AND_ASSIGN(auto reader, ParquetFileReader::Open(fs.get(), "/corrupt.parquet"));
  const int64_t peak_before = DefaultMemoryPool()->max_memory();
  Result<RecordBatchPtr> batch = reader->ReadRowGroup(0);
  ASSERT_RAISES(Corruption, batch);
  const std::string message = batch.status().ToString();
  EXPECT_NE(message.find("/corrupt.parquet"), std::string::npos) << message;
  EXPECT_NE(message.find("column 'l"), std::string::npos) << message;
  EXPECT_NE(message.find("at file offset 4"), std::string::npos) << message;
  EXPECT_NE(message.find("levels end before the 268435456 values"), std::string::npos) << message;
  EXPECT_LT(DefaultMemoryPool()->max_memory() - peak_before, int64_t{64} << 20);

  // The same file rebuilt with the true count reads.
  ASSERT_OK(fs->WriteFile("/ok.parquet", ListFileClaimingValues(-1)));
  ASSERT_OK_AND_ASSIGN(auto ok_reader, ParquetFileReader::Open(fs.get(), "/ok.parquet"));
  ASSERT_OK_AND_ASSIGN(RecordBatchPtr ok_batch, ok_reader->ReadRowGroup(0));
  EXPECT_EQ(ok_batch->num_rows, 100);
}

TEST(PageIndexTest, OffsetAndColumnIndexesDescribeEveryDataPage) {
  auto fs = fs::MakeMemoryFileSystem();
  SchemaPtr schema = DataType::Struct({{"i", DataType::Int(), true, "{}"},
                                       {"s", DataType::String(), false, "{}"},
                                       {"l", DataType::Array(DataType::Long(), true), true, "{}"}});
  WriterOptions options;
  options.page_bytes = 512;
  options.row_group_bytes = 16 * 1024;
  options.enable_dictionary = false;
  RecordBatchPtr batch = RandomBatch(schema, 4000, 5);
  {
    ASSERT_OK_AND_ASSIGN(auto writer,
                         ParquetFileWriter::Open(fs.get(), "/t/pi.parquet", schema, options));
    ASSERT_OK(writer->WriteBatch(*batch));
    ASSERT_OK(writer->Close().status());
  }
  ASSERT_OK_AND_ASSIGN(std::string file, fs->ReadFile("/t/pi.parquet"));
  uint32_t len;
  std::memcpy(&len, file.data() + file.size() - 8, 4);
  ASSERT_OK_AND_ASSIGN(FileMetaData md, ParseFileMetaData(std::string_view(file).substr(
                                            file.size() - 8 - len, len)));
  ASSERT_GT(md.row_groups.size(), 1u);
  int multi_page_chunks = 0;
  for (const RowGroup& rg : md.row_groups) {
    for (const ColumnChunk& cc : rg.columns) {
      ASSERT_TRUE(cc.offset_index_offset && cc.offset_index_length);
      ASSERT_TRUE(cc.column_index_offset && cc.column_index_length);
      const OffsetIndex oi =
          ParseAt<OffsetIndex>(file, *cc.offset_index_offset, *cc.offset_index_length);
      const ColumnIndex ci =
          ParseAt<ColumnIndex>(file, *cc.column_index_offset, *cc.column_index_length);
      ASSERT_GE(oi.page_locations.size(), 1u);
      multi_page_chunks += oi.page_locations.size() > 1;
      ASSERT_EQ(ci.null_pages.size(), oi.page_locations.size());
      ASSERT_EQ(ci.min_values.size(), oi.page_locations.size());
      ASSERT_EQ(ci.null_counts.size(), oi.page_locations.size());
      int64_t end = cc.meta_data->data_page_offset;
      int64_t values = 0;
      int64_t nulls = 0;
      for (size_t page = 0; page < oi.page_locations.size(); ++page) {
        const PageLocation& loc = oi.page_locations[page];
        EXPECT_EQ(loc.offset, end) << "pages are contiguous";
        ASSERT_OK_AND_ASSIGN(
            ParsedPageHeader h,
            ParsePageHeader(std::string_view(file).substr(static_cast<size_t>(loc.offset))));
        EXPECT_EQ(loc.compressed_page_size, h.header_size + h.header.compressed_page_size);
        values += h.header.data_page_header->num_values;
        if (page > 0) {
          EXPECT_GT(loc.first_row_index, oi.page_locations[page - 1].first_row_index);
        } else {
          EXPECT_EQ(loc.first_row_index, 0);
        }
        nulls += ci.null_counts[page];
        end = loc.offset + loc.compressed_page_size;
      }
      EXPECT_EQ(end, cc.meta_data->data_page_offset + cc.meta_data->total_compressed_size);
      EXPECT_EQ(values, cc.meta_data->num_values);
      EXPECT_EQ(nulls, cc.meta_data->statistics->null_count.value_or(-1));
    }
  }
  EXPECT_GT(multi_page_chunks, 3);
  // The page bounds of column "i" hold every value of the page.
  const ColumnChunk& cc = md.row_groups[0].columns[0];
  const ColumnIndex ci =
      ParseAt<ColumnIndex>(file, *cc.column_index_offset, *cc.column_index_length);
  const OffsetIndex oi =
      ParseAt<OffsetIndex>(file, *cc.offset_index_offset, *cc.offset_index_length);
  const Column& col = *batch->column(0);
  for (size_t page = 0; page < oi.page_locations.size(); ++page) {
    const int64_t first = oi.page_locations[page].first_row_index;
    const int64_t last = page + 1 < oi.page_locations.size()
                             ? oi.page_locations[page + 1].first_row_index
                             : md.row_groups[0].num_rows;
    if (ci.null_pages[page]) continue;
    int32_t lo;
    int32_t hi;
    std::memcpy(&lo, ci.min_values[page].data(), 4);
    std::memcpy(&hi, ci.max_values[page].data(), 4);
    for (int64_t row = first; row < last; ++row) {
      if (col.IsNull(row)) continue;
      EXPECT_LE(lo, col.Value<int32_t>(row));
      EXPECT_GE(hi, col.Value<int32_t>(row));
    }
  }
}

}  // namespace
}  // namespace silt::parquet
