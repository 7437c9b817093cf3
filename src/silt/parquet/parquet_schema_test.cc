#include "silt/parquet/parquet_schema.h"

#include <gtest/gtest.h>

#include "silt/parquet/file_test_util.h"
#include "silt/testing/gtest_util.h"

namespace silt::parquet {
namespace {

using columnar::DataType;
using columnar::TypeId;

using test_util::Group;
using test_util::Leaf;
using test_util::WithRoot;

TEST(ParquetSchemaTest, DecimalWidthsMatchSpark) {
  EXPECT_EQ(DecimalFlbaWidth(1), 1);
  EXPECT_EQ(DecimalFlbaWidth(2), 1);
  EXPECT_EQ(DecimalFlbaWidth(3), 2);
  EXPECT_EQ(DecimalFlbaWidth(18), 8);
  EXPECT_EQ(DecimalFlbaWidth(19), 9);
  EXPECT_EQ(DecimalFlbaWidth(25), 11);
  EXPECT_EQ(DecimalFlbaWidth(38), 16);
}

TEST(ParquetSchemaTest, WriterUsesSparksPhysicalTypes) {
  auto element = [](columnar::TypePtr t, bool nullable = true) {
    columnar::Field f;
    f.name = "c";
    f.type = std::move(t);
    f.nullable = nullable;
    Result<SchemaElement> r = ParquetElementForField(f);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ValueOrDie();
  };
  EXPECT_EQ(element(DataType::Decimal(9, 2)).type, PhysicalType::kInt32);
  EXPECT_EQ(element(DataType::Decimal(18, 2)).type, PhysicalType::kInt64);
  SchemaElement wide = element(DataType::Decimal(30, 5));
  EXPECT_EQ(wide.type, PhysicalType::kFixedLenByteArray);
  EXPECT_EQ(wide.type_length, 13);
  EXPECT_EQ(wide.precision, 30);
  EXPECT_EQ(wide.scale, 5);
  EXPECT_EQ(element(DataType::Byte()).logical_type->bit_width, 8);
  EXPECT_EQ(element(DataType::String()).converted_type, ConvertedType::kUtf8);
  EXPECT_FALSE(element(DataType::Binary()).logical_type.has_value());
  SchemaElement ntz = element(DataType::TimestampNtz());
  EXPECT_FALSE(ntz.logical_type->is_adjusted_to_utc);
  EXPECT_FALSE(ntz.converted_type.has_value());
  EXPECT_EQ(element(DataType::Timestamp()).converted_type, ConvertedType::kTimestampMicros);
  EXPECT_EQ(element(DataType::Int(), false).repetition_type, Repetition::kRequired);
  EXPECT_EQ(element(DataType::Int()).repetition_type, Repetition::kOptional);
}

TEST(ParquetSchemaTest, WriterRejectsNestedTypesNamingTheColumn) {
  columnar::Field f;
  f.name = "tags";
  f.type = DataType::Array(DataType::String());
  Result<SchemaElement> r = ParquetElementForField(f);
  ASSERT_RAISES(NotSupported, r);
  EXPECT_NE(r.status().message().find("tags"), std::string::npos);
}

TEST(ParquetSchemaTest, ReaderMapsAnnotationsToSparkTypes) {
  std::vector<SchemaElement> els;
  auto add = [&](SchemaElement el) { els.push_back(std::move(el)); };
  SchemaElement i8 = Leaf("i8", PhysicalType::kInt32);
  i8.logical_type = LogicalType::Integer(8, true);
  add(i8);
  SchemaElement legacy_i16 = Leaf("i16", PhysicalType::kInt32);
  legacy_i16.converted_type = ConvertedType::kInt16;
  add(legacy_i16);
  add(Leaf("i32", PhysicalType::kInt32));
  SchemaElement u32 = Leaf("u32", PhysicalType::kInt32);
  u32.logical_type = LogicalType::Integer(32, false);
  add(u32);
  add(Leaf("i64", PhysicalType::kInt64));
  SchemaElement ntz = Leaf("ntz", PhysicalType::kInt64);
  ntz.logical_type = LogicalType::Timestamp(false, TimeUnit::kNanos);
  add(ntz);
  SchemaElement ts_ms = Leaf("ts_ms", PhysicalType::kInt64);
  ts_ms.converted_type = ConvertedType::kTimestampMillis;
  add(ts_ms);
  add(Leaf("i96", PhysicalType::kInt96));
  SchemaElement str = Leaf("s", PhysicalType::kByteArray);
  str.converted_type = ConvertedType::kUtf8;
  add(str);
  SchemaElement json = Leaf("j", PhysicalType::kByteArray);
  json.logical_type = LogicalType();
  json.logical_type->kind = LogicalType::Kind::kJson;
  add(json);
  add(Leaf("bin", PhysicalType::kByteArray));
  SchemaElement dec = Leaf("dec", PhysicalType::kFixedLenByteArray);
  dec.type_length = 9;
  dec.converted_type = ConvertedType::kDecimal;
  dec.precision = 20;
  dec.scale = 3;
  add(dec);
  SchemaElement date = Leaf("date", PhysicalType::kInt32, Repetition::kRequired);
  date.logical_type = LogicalType::Date();
  add(date);

  const int n = static_cast<int>(els.size());
  ASSERT_OK_AND_ASSIGN(auto descs, BuildColumnDescriptors(WithRoot(els, n)));
  ASSERT_EQ(descs.size(), els.size());
  std::vector<std::string> ddl;
  for (const auto& d : descs) {
    EXPECT_TRUE(d.flat);
    EXPECT_OK(d.unsupported);
    ddl.push_back(d.field.type->ToDdl());
  }
  EXPECT_EQ(descs[0].field.type->id(), TypeId::kByte);
  EXPECT_EQ(descs[1].field.type->id(), TypeId::kShort);
  EXPECT_EQ(descs[2].field.type->id(), TypeId::kInt);
  EXPECT_EQ(descs[3].field.type->id(), TypeId::kLong);
  EXPECT_EQ(descs[4].field.type->id(), TypeId::kLong);
  EXPECT_EQ(descs[5].field.type->id(), TypeId::kTimestampNtz);
  EXPECT_EQ(descs[6].field.type->id(), TypeId::kTimestamp);
  EXPECT_EQ(descs[7].field.type->id(), TypeId::kTimestamp);
  EXPECT_EQ(descs[8].field.type->id(), TypeId::kString);
  EXPECT_EQ(descs[9].field.type->id(), TypeId::kString);
  EXPECT_EQ(descs[10].field.type->id(), TypeId::kBinary);
  EXPECT_TRUE(descs[11].field.type->Equals(*DataType::Decimal(20, 3)));
  EXPECT_EQ(descs[12].field.type->id(), TypeId::kDate);
  EXPECT_FALSE(descs[12].field.nullable);
  EXPECT_EQ(descs[12].max_definition_level, 0);
  EXPECT_EQ(descs[11].max_definition_level, 1);
  EXPECT_EQ(descs[12].first_leaf, 12);
}

TEST(ParquetSchemaTest, UnsupportedLeafKeepsTheFileReadable) {
  SchemaElement time = Leaf("t", PhysicalType::kInt64);
  time.logical_type = LogicalType::Timestamp(true, TimeUnit::kMicros);
  time.logical_type->kind = LogicalType::Kind::kTime;
  ASSERT_OK_AND_ASSIGN(
      auto descs, BuildColumnDescriptors(WithRoot({time, Leaf("x", PhysicalType::kInt32)}, 2)));
  ASSERT_EQ(descs.size(), 2u);
  EXPECT_EQ(descs[0].unsupported.code(), StatusCode::kNotSupported);
  EXPECT_NE(descs[0].unsupported.message().find("'t'"), std::string::npos);
  EXPECT_OK(descs[1].unsupported);
  EXPECT_EQ(descs[1].first_leaf, 1);
}

TEST(ParquetSchemaTest, NestedGroupsMapToStructListAndMap) {
  // optional group s { required int32 a; optional binary b (STRING); }
  SchemaElement s = Group("s", 2);
  SchemaElement b = Leaf("b", PhysicalType::kByteArray);
  b.logical_type = LogicalType::String();
  // optional group l (LIST) { repeated group list { optional int64 element; } }
  SchemaElement l = Group("l", 1);
  l.converted_type = ConvertedType::kList;
  // optional group m (MAP) { repeated group key_value { required binary key (STRING);
  //                                                     optional int32 value; } }
  SchemaElement m = Group("m", 1);
  m.logical_type = LogicalType();
  m.logical_type->kind = LogicalType::Kind::kMap;
  SchemaElement key = Leaf("key", PhysicalType::kByteArray, Repetition::kRequired);
  key.logical_type = LogicalType::String();
  std::vector<SchemaElement> els = {s,
                                    Leaf("a", PhysicalType::kInt32, Repetition::kRequired),
                                    b,
                                    l,
                                    Group("list", 1, Repetition::kRepeated),
                                    Leaf("element", PhysicalType::kInt64),
                                    m,
                                    Group("key_value", 2, Repetition::kRepeated),
                                    key,
                                    Leaf("value", PhysicalType::kInt32),
                                    Leaf("r", PhysicalType::kInt32, Repetition::kRepeated)};
  ASSERT_OK_AND_ASSIGN(auto descs, BuildColumnDescriptors(WithRoot(els, 4)));
  ASSERT_EQ(descs.size(), 4u);
  EXPECT_EQ(
      descs[0].field.type->ToDdl(),
      DataType::Struct({{"a", DataType::Int(), false}, {"b", DataType::String(), true}})->ToDdl());
  EXPECT_FALSE(descs[0].flat);
  EXPECT_EQ(descs[0].num_leaves, 2);
  EXPECT_TRUE(descs[1].field.type->Equals(*DataType::Array(DataType::Long(), true)));
  EXPECT_EQ(descs[1].first_leaf, 2);
  EXPECT_TRUE(
      descs[2].field.type->Equals(*DataType::Map(DataType::String(), DataType::Int(), true)));
  EXPECT_TRUE(descs[3].field.type->Equals(*DataType::Array(DataType::Int(), false)));
  EXPECT_FALSE(descs[3].flat);
  EXPECT_EQ(descs[3].first_leaf, 5);
}

TEST(ParquetSchemaTest, MalformedTreesAreCorruption) {
  ASSERT_RAISES(Corruption, BuildColumnDescriptors({}));
  // Root claims 3 children, only 1 follows.
  ASSERT_RAISES(Corruption, BuildColumnDescriptors(WithRoot({Leaf("a", PhysicalType::kInt32)}, 3)));
  // Leaf without a type.
  SchemaElement untyped;
  untyped.name = "u";
  ASSERT_RAISES(Corruption, BuildColumnDescriptors(WithRoot({untyped}, 1)));
  // FIXED_LEN_BYTE_ARRAY without a length.
  ASSERT_RAISES(Corruption,
                BuildColumnDescriptors(WithRoot({Leaf("f", PhysicalType::kFixedLenByteArray)}, 1)));
}

}  // namespace
}  // namespace silt::parquet
