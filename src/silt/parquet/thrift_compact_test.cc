#include "silt/parquet/thrift_compact.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "silt/parquet/parquet_metadata.h"
#include "silt/testing/gtest_util.h"

namespace silt::parquet {
namespace {

using thrift::CompactReader;
using thrift::CompactWriter;
using thrift::CType;

CompactReader ReaderOf(const std::string& s) {
  return CompactReader(reinterpret_cast<const uint8_t*>(s.data()), static_cast<int64_t>(s.size()));
}

TEST(ThriftCompactTest, SmallFieldIdDeltaFitsInTheHeaderByte) {
  std::string out;
  CompactWriter w(&out);
  w.StructBegin();
  w.FieldI32(1, 1);   // delta 1, type i32 (5), zigzag(1) = 2
  w.FieldI64(3, -1);  // delta 2, type i64 (6), zigzag(-1) = 1
  w.StructEnd();
  EXPECT_EQ(out, std::string("\x15\x02\x26\x01\x00", 5));
}

TEST(ThriftCompactTest, LargeFieldIdDeltaUsesTheLongForm) {
  std::string out;
  CompactWriter w(&out);
  w.StructBegin();
  w.FieldI32(20, 7);
  w.StructEnd();
  // type byte, zigzag varint id (40 = 0x28), value zigzag(7) = 14
  EXPECT_EQ(out, std::string("\x05\x28\x0e\x00", 4));
  CompactReader r = ReaderOf(out);
  r.StructBegin();
  int16_t id;
  CType t;
  ASSERT_TRUE(r.NextField(&id, &t));
  EXPECT_EQ(id, 20);
  EXPECT_EQ(r.ReadI32(t), 7);
  EXPECT_FALSE(r.NextField(&id, &t));
  EXPECT_TRUE(r.ok());
}

TEST(ThriftCompactTest, IntegersRoundTripAtTheirLimits) {
  const int64_t values[] = {0,
                            1,
                            -1,
                            63,
                            -64,
                            64,
                            std::numeric_limits<int32_t>::max(),
                            std::numeric_limits<int32_t>::min(),
                            std::numeric_limits<int64_t>::max(),
                            std::numeric_limits<int64_t>::min()};
  std::string out;
  CompactWriter w(&out);
  w.StructBegin();
  int16_t id = 1;
  for (int64_t v : values) w.FieldI64(id++, v);
  w.FieldI32(id++, std::numeric_limits<int32_t>::min());
  w.FieldI16(id++, -300);
  w.FieldI8(id++, -5);
  w.FieldDouble(id++, -2.5);
  w.StructEnd();

  CompactReader r = ReaderOf(out);
  r.StructBegin();
  int16_t fid;
  CType t;
  for (int64_t v : values) {
    ASSERT_TRUE(r.NextField(&fid, &t));
    EXPECT_EQ(r.ReadI64(t), v);
  }
  ASSERT_TRUE(r.NextField(&fid, &t));
  EXPECT_EQ(r.ReadI32(t), std::numeric_limits<int32_t>::min());
  ASSERT_TRUE(r.NextField(&fid, &t));
  EXPECT_EQ(r.ReadI16(t), -300);
  ASSERT_TRUE(r.NextField(&fid, &t));
  EXPECT_EQ(r.ReadI8(t), -5);
  ASSERT_TRUE(r.NextField(&fid, &t));
  EXPECT_EQ(r.ReadDouble(t), -2.5);
  EXPECT_FALSE(r.NextField(&fid, &t));
  EXPECT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.position(), static_cast<int64_t>(out.size()));
}

TEST(ThriftCompactTest, BooleansLiveInFieldHeadersAndAsListBytes) {
  std::string out;
  CompactWriter w(&out);
  w.StructBegin();
  w.FieldBool(1, true);
  w.FieldBool(2, false);
  w.FieldListBegin(3, CType::kBoolTrue, 3);
  w.Bool(true);
  w.Bool(false);
  w.Bool(true);
  w.StructEnd();
  EXPECT_EQ(static_cast<uint8_t>(out[0]), 0x11);
  EXPECT_EQ(static_cast<uint8_t>(out[1]), 0x12);

  CompactReader r = ReaderOf(out);
  r.StructBegin();
  int16_t id;
  CType t;
  ASSERT_TRUE(r.NextField(&id, &t));
  EXPECT_TRUE(r.ReadBool(t));
  ASSERT_TRUE(r.NextField(&id, &t));
  EXPECT_FALSE(r.ReadBool(t));
  ASSERT_TRUE(r.NextField(&id, &t));
  CType elem;
  ASSERT_EQ(r.ReadListBegin(t, &elem), 3);
  EXPECT_TRUE(r.ReadBoolElement());
  EXPECT_FALSE(r.ReadBoolElement());
  EXPECT_TRUE(r.ReadBoolElement());
  EXPECT_FALSE(r.NextField(&id, &t));
  EXPECT_TRUE(r.ok()) << r.error();
}

TEST(ThriftCompactTest, LongListsAndBinaryRoundTrip) {
  std::string out;
  CompactWriter w(&out);
  w.StructBegin();
  w.FieldListBegin(1, CType::kBinary, 20);
  for (int i = 0; i < 20; ++i) w.Binary(std::string(static_cast<size_t>(i), 'a' + i % 26));
  w.FieldBinary(2, std::string(300, '\xff'));
  w.StructEnd();

  CompactReader r = ReaderOf(out);
  r.StructBegin();
  int16_t id;
  CType t;
  ASSERT_TRUE(r.NextField(&id, &t));
  CType elem;
  ASSERT_EQ(r.ReadListBegin(t, &elem), 20);
  EXPECT_EQ(elem, CType::kBinary);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(r.ReadBinary(elem), std::string(static_cast<size_t>(i), 'a' + i % 26));
  }
  ASSERT_TRUE(r.NextField(&id, &t));
  EXPECT_EQ(r.ReadBinary(t), std::string(300, '\xff'));
  EXPECT_TRUE(r.ok()) << r.error();
}

TEST(ThriftCompactTest, SkipsUnknownNestedFields) {
  std::string out;
  CompactWriter w(&out);
  w.StructBegin();
  w.FieldStructBegin(1);
  w.FieldListBegin(1, CType::kStruct, 2);
  for (int i = 0; i < 2; ++i) {
    w.StructBegin();
    w.FieldDouble(1, 1.0);
    w.FieldBool(2, true);
    w.StructEnd();
  }
  w.FieldBinary(9, "x");
  w.StructEnd();
  w.FieldI32(2, 42);
  w.StructEnd();

  CompactReader r = ReaderOf(out);
  r.StructBegin();
  int16_t id;
  CType t;
  ASSERT_TRUE(r.NextField(&id, &t));
  r.Skip(t);
  ASSERT_TRUE(r.NextField(&id, &t));
  EXPECT_EQ(id, 2);
  EXPECT_EQ(r.ReadI32(t), 42);
  EXPECT_TRUE(r.ok()) << r.error();
}

TEST(ThriftCompactTest, TruncatedInputIsAnErrorNotACrash) {
  FileMetaData md;
  md.schema.resize(2);
  md.schema[0].name = "spark_schema";
  md.schema[0].num_children = 1;
  md.schema[1].name = "a";
  md.schema[1].type = PhysicalType::kInt32;
  md.num_rows = 5;
  const std::string bytes = SerializeThrift(md);
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    Result<FileMetaData> r = ParseFileMetaData(std::string_view(bytes).substr(0, cut));
    EXPECT_TRUE(r.status().IsCorruption()) << "cut at " << cut;
  }
  ASSERT_OK(ParseFileMetaData(bytes));
}

TEST(ThriftCompactTest, HugeListCountIsRejected) {
  // List header claiming 2^30 i32 elements with 3 bytes of data.
  std::string bytes("\x19\xf5\x80\x80\x80\x80\x04\x00\x00\x00", 10);
  CompactReader r = ReaderOf(bytes);
  r.StructBegin();
  int16_t id;
  CType t;
  ASSERT_TRUE(r.NextField(&id, &t));
  CType elem;
  EXPECT_EQ(r.ReadListBegin(t, &elem), 0);
  EXPECT_FALSE(r.ok());
}

TEST(ThriftCompactTest, DeepNestingIsRejected) {
  std::string bytes;
  for (int i = 0; i < 200; ++i) bytes.push_back('\x1c');  // field 1, struct, nested
  CompactReader r = ReaderOf(bytes);
  r.Skip(CType::kStruct);
  EXPECT_FALSE(r.ok());
}

TEST(ParquetMetadataTest, FileMetaDataRoundTripsEveryModelledField) {
  FileMetaData md;
  md.version = 1;
  SchemaElement root;
  root.name = "spark_schema";
  root.num_children = 2;
  SchemaElement dec;
  dec.name = "d";
  dec.type = PhysicalType::kFixedLenByteArray;
  dec.type_length = 11;
  dec.repetition_type = Repetition::kOptional;
  dec.converted_type = ConvertedType::kDecimal;
  dec.precision = 25;
  dec.scale = 4;
  dec.field_id = 7;
  dec.logical_type = LogicalType::Decimal(25, 4);
  SchemaElement ts;
  ts.name = "t";
  ts.type = PhysicalType::kInt64;
  ts.repetition_type = Repetition::kRequired;
  ts.logical_type = LogicalType::Timestamp(false, TimeUnit::kNanos);
  md.schema = {root, dec, ts};
  md.num_rows = 123;
  RowGroup rg;
  rg.num_rows = 123;
  rg.total_byte_size = 1000;
  rg.file_offset = 4;
  rg.total_compressed_size = 900;
  rg.ordinal = 0;
  ColumnChunk cc;
  cc.file_offset = 4;
  ColumnMetaData cmd;
  cmd.type = PhysicalType::kInt64;
  cmd.encodings = {Encoding::kPlain, Encoding::kRle, Encoding::kRleDictionary};
  cmd.path_in_schema = {"t"};
  cmd.codec = CompressionCodec::kZstd;
  cmd.num_values = 123;
  cmd.total_uncompressed_size = 500;
  cmd.total_compressed_size = 400;
  cmd.data_page_offset = 40;
  cmd.dictionary_page_offset = 4;
  Statistics st;
  st.null_count = 3;
  st.min_value = std::string("\x01\x00\x00\x00\x00\x00\x00\x00", 8);
  st.max_value = std::string("\x09\x00\x00\x00\x00\x00\x00\x00", 8);
  st.min = st.min_value;
  st.max = st.max_value;
  cmd.statistics = st;
  cmd.encoding_stats = {{PageType::kDictionaryPage, Encoding::kPlain, 1},
                        {PageType::kDataPage, Encoding::kRleDictionary, 2}};
  cc.meta_data = cmd;
  rg.columns = {cc, cc};
  md.row_groups = {rg};
  md.key_value_metadata = {{"k", "v"}, {"no_value", std::nullopt}};
  md.created_by = "silt version 0.1.0 (build silt)";
  md.column_orders = {ColumnOrder::kTypeDefinedOrder, ColumnOrder::kTypeDefinedOrder};

  ASSERT_OK_AND_ASSIGN(FileMetaData back, ParseFileMetaData(SerializeThrift(md)));
  ASSERT_EQ(back.schema.size(), 3u);
  EXPECT_EQ(back.schema[0].num_children, 2);
  EXPECT_EQ(back.schema[1].type_length, 11);
  EXPECT_EQ(back.schema[1].field_id, 7);
  EXPECT_EQ(back.schema[1].converted_type, ConvertedType::kDecimal);
  ASSERT_TRUE(back.schema[1].logical_type.has_value());
  EXPECT_EQ(back.schema[1].logical_type->kind, LogicalType::Kind::kDecimal);
  EXPECT_EQ(back.schema[1].logical_type->precision, 25);
  EXPECT_EQ(back.schema[1].logical_type->scale, 4);
  ASSERT_TRUE(back.schema[2].logical_type.has_value());
  EXPECT_EQ(back.schema[2].logical_type->kind, LogicalType::Kind::kTimestamp);
  EXPECT_FALSE(back.schema[2].logical_type->is_adjusted_to_utc);
  EXPECT_EQ(back.schema[2].logical_type->unit, TimeUnit::kNanos);
  EXPECT_EQ(back.num_rows, 123);
  ASSERT_EQ(back.row_groups.size(), 1u);
  EXPECT_EQ(back.row_groups[0].ordinal, 0);
  ASSERT_EQ(back.row_groups[0].columns.size(), 2u);
  const ColumnMetaData& m = *back.row_groups[0].columns[1].meta_data;
  EXPECT_EQ(m.encodings, cmd.encodings);
  EXPECT_EQ(m.codec, CompressionCodec::kZstd);
  EXPECT_EQ(m.dictionary_page_offset, 4);
  EXPECT_EQ(m.statistics->null_count, 3);
  EXPECT_EQ(m.statistics->min_value, st.min_value);
  EXPECT_EQ(m.statistics->max, st.max);
  ASSERT_EQ(m.encoding_stats.size(), 2u);
  EXPECT_EQ(m.encoding_stats[1].count, 2);
  ASSERT_EQ(back.key_value_metadata.size(), 2u);
  EXPECT_EQ(back.key_value_metadata[0].value, "v");
  EXPECT_FALSE(back.key_value_metadata[1].value.has_value());
  EXPECT_EQ(back.created_by, md.created_by);
  EXPECT_EQ(back.column_orders, md.column_orders);
}

TEST(ParquetMetadataTest, PageHeaderReportsItsOwnSize) {
  PageHeader h;
  h.type = PageType::kDataPageV2;
  h.uncompressed_page_size = 100;
  h.compressed_page_size = 60;
  h.data_page_header_v2.emplace();
  h.data_page_header_v2->num_values = 10;
  h.data_page_header_v2->num_nulls = 2;
  h.data_page_header_v2->num_rows = 10;
  h.data_page_header_v2->encoding = Encoding::kRleDictionary;
  h.data_page_header_v2->definition_levels_byte_length = 3;
  h.data_page_header_v2->is_compressed = false;
  std::string bytes = SerializeThrift(h);
  const size_t header_size = bytes.size();
  bytes += "page body follows";
  ASSERT_OK_AND_ASSIGN(ParsedPageHeader parsed, ParsePageHeader(bytes));
  EXPECT_EQ(parsed.header_size, static_cast<int64_t>(header_size));
  ASSERT_TRUE(parsed.header.data_page_header_v2.has_value());
  EXPECT_EQ(parsed.header.data_page_header_v2->num_nulls, 2);
  EXPECT_FALSE(parsed.header.data_page_header_v2->is_compressed);
  EXPECT_EQ(parsed.header.data_page_header_v2->encoding, Encoding::kRleDictionary);
}

TEST(ParquetMetadataTest, MissingRequiredFieldIsCorruption) {
  std::string out;
  CompactWriter w(&out);
  w.StructBegin();
  w.FieldI32(1, 0);  // PageHeader.type only
  w.StructEnd();
  Result<ParsedPageHeader> r = ParsePageHeader(out);
  ASSERT_RAISES(Corruption, r);
  EXPECT_NE(r.status().message().find("uncompressed_page_size"), std::string::npos);
}

}  // namespace
}  // namespace silt::parquet
