#include "silt/columnar/types.h"

#include <gtest/gtest.h>

#include <string>

#include "silt/testing/gtest_util.h"

namespace silt::columnar {
namespace {

// Expects `expr` (a Status or Result) to fail with StatusCode::k<code_name>.

TEST(DdlParserTest, ParsesTheSeedJobSchema) {
  ASSERT_OK_AND_ASSIGN(SchemaPtr schema,
                       ParseDdlSchema("device_id STRING NOT NULL, device_type STRING NOT NULL, "
                                      "ingested_at STRING NOT NULL, payload STRING"));
  ASSERT_EQ(schema->id(), TypeId::kStruct);
  ASSERT_EQ(schema->num_fields(), 4);
  EXPECT_EQ(schema->field(0).name, "device_id");
  EXPECT_EQ(schema->field(0).type->id(), TypeId::kString);
  EXPECT_FALSE(schema->field(0).nullable);
  EXPECT_EQ(schema->field(1).name, "device_type");
  EXPECT_FALSE(schema->field(1).nullable);
  EXPECT_EQ(schema->field(2).name, "ingested_at");
  EXPECT_FALSE(schema->field(2).nullable);
  EXPECT_EQ(schema->field(3).name, "payload");
  EXPECT_TRUE(schema->field(3).nullable);
  EXPECT_EQ(schema->field(3).metadata_json, "{}");
}

TEST(DdlParserTest, AcceptsSparkAliasesCaseInsensitively) {
  struct Case {
    const char* ddl;
    TypeId id;
  };
  const Case cases[] = {
      {"boolean", TypeId::kBoolean},
      {"TINYINT", TypeId::kByte},
      {"byte", TypeId::kByte},
      {"SMALLINT", TypeId::kShort},
      {"Short", TypeId::kShort},
      {"INT", TypeId::kInt},
      {"integer", TypeId::kInt},
      {"BIGINT", TypeId::kLong},
      {"long", TypeId::kLong},
      {"FLOAT", TypeId::kFloat},
      {"real", TypeId::kFloat},
      {"DOUBLE", TypeId::kDouble},
      {"string", TypeId::kString},
      {"VARCHAR(20)", TypeId::kString},
      {"char(3)", TypeId::kString},
      {"BINARY", TypeId::kBinary},
      {"DATE", TypeId::kDate},
      {"TIMESTAMP", TypeId::kTimestamp},
      {"timestamp_ltz", TypeId::kTimestamp},
      {"TIMESTAMP_NTZ", TypeId::kTimestampNtz},
  };
  for (const Case& c : cases) {
    ASSERT_OK_AND_ASSIGN(TypePtr type, ParseDdlType(c.ddl));
    EXPECT_EQ(type->id(), c.id) << c.ddl;
  }
}

TEST(DdlParserTest, ParsesDecimalsWithDefaultsAndAliases) {
  ASSERT_OK_AND_ASSIGN(TypePtr plain, ParseDdlType("DECIMAL"));
  EXPECT_EQ(plain->precision(), 10);
  EXPECT_EQ(plain->scale(), 0);
  ASSERT_OK_AND_ASSIGN(TypePtr dec, ParseDdlType("dec(38, 18)"));
  EXPECT_EQ(dec->precision(), 38);
  EXPECT_EQ(dec->scale(), 18);
  ASSERT_OK_AND_ASSIGN(TypePtr numeric, ParseDdlType("NUMERIC(5)"));
  EXPECT_EQ(numeric->precision(), 5);
  EXPECT_EQ(numeric->scale(), 0);
  EXPECT_EQ(numeric->byte_width(), 16);
  EXPECT_RAISES(InvalidArgument, ParseDdlType("DECIMAL(39,0)"));
  EXPECT_RAISES(InvalidArgument, ParseDdlType("DECIMAL(5,6)"));
  EXPECT_RAISES(InvalidArgument, ParseDdlType("DECIMAL(0,0)"));
}

TEST(DdlParserTest, ParsesNestedTypes) {
  ASSERT_OK_AND_ASSIGN(SchemaPtr schema,
                       ParseDdlSchema("a STRUCT<x: INT, `y z` DOUBLE NOT NULL>, b ARRAY<BIGINT>, "
                                      "c MAP<STRING, ARRAY<STRUCT<k:DECIMAL(10,2)>>>"));
  ASSERT_EQ(schema->num_fields(), 3);
  const DataType& a = *schema->field(0).type;
  ASSERT_EQ(a.id(), TypeId::kStruct);
  ASSERT_EQ(a.num_fields(), 2);
  EXPECT_EQ(a.field(0).name, "x");
  EXPECT_TRUE(a.field(0).nullable);
  EXPECT_EQ(a.field(1).name, "y z");
  EXPECT_FALSE(a.field(1).nullable);
  EXPECT_EQ(a.field(1).type->id(), TypeId::kDouble);
  const DataType& b = *schema->field(1).type;
  ASSERT_EQ(b.id(), TypeId::kArray);
  EXPECT_EQ(b.element_type()->id(), TypeId::kLong);
  EXPECT_TRUE(b.contains_null());
  const DataType& c = *schema->field(2).type;
  ASSERT_EQ(c.id(), TypeId::kMap);
  EXPECT_EQ(c.key_type()->id(), TypeId::kString);
  EXPECT_EQ(c.value_type()->element_type()->field(0).type->scale(), 2);
  EXPECT_EQ(schema->ToDdl(),
            "STRUCT<a: STRUCT<x: INT, `y z`: DOUBLE NOT NULL>, b: ARRAY<BIGINT>, "
            "c: MAP<STRING, ARRAY<STRUCT<k: DECIMAL(10,2)>>>>");
}

TEST(DdlParserTest, ToDdlOutputParsesBackToAnEqualType) {
  ASSERT_OK_AND_ASSIGN(TypePtr type,
                       ParseDdlType("STRUCT<`a``b`: MAP<INT, BOOLEAN>, c: ARRAY<DATE> NOT NULL, "
                                    "d: TIMESTAMP_NTZ, e: BINARY, f: TINYINT, g: SMALLINT>"));
  ASSERT_OK_AND_ASSIGN(TypePtr again, ParseDdlType(type->ToDdl()));
  EXPECT_TRUE(type->Equals(*again)) << type->ToDdl() << " vs " << again->ToDdl();
  EXPECT_EQ(type->field(0).name, "a`b");
}

TEST(DdlParserTest, AcceptsAWholeStructTypeAsSchema) {
  ASSERT_OK_AND_ASSIGN(SchemaPtr schema, ParseDdlSchema("struct<a: int, b string not null>"));
  ASSERT_EQ(schema->num_fields(), 2);
  EXPECT_FALSE(schema->field(1).nullable);
  // A column that happens to be called "struct" is still a column.
  ASSERT_OK_AND_ASSIGN(SchemaPtr named, ParseDdlSchema("struct INT"));
  ASSERT_EQ(named->num_fields(), 1);
  EXPECT_EQ(named->field(0).name, "struct");
}

TEST(DdlParserTest, StoresCommentsAsFieldMetadata) {
  ASSERT_OK_AND_ASSIGN(
      SchemaPtr schema,
      ParseDdlSchema("id BIGINT NOT NULL COMMENT 'the \"key\"', v INT COMMENT 'x'"));
  EXPECT_FALSE(schema->field(0).nullable);
  EXPECT_EQ(schema->field(0).metadata_json, R"({"comment":"the \"key\""})");
  EXPECT_EQ(schema->field(1).metadata_json, R"({"comment":"x"})");
}

TEST(DdlParserTest, ErrorsNameThePositionAndTheInput) {
  Result<SchemaPtr> bad_type = ParseDdlSchema("a INT, b FOO");
  EXPECT_RAISES(InvalidArgument, bad_type);
  EXPECT_NE(bad_type.status().message().find("unknown data type 'FOO'"), std::string::npos)
      << bad_type.status().message();
  EXPECT_NE(bad_type.status().message().find("at position 9 in 'a INT, b FOO'"), std::string::npos)
      << bad_type.status().message();

  Result<SchemaPtr> unclosed = ParseDdlSchema("a ARRAY<INT");
  EXPECT_RAISES(InvalidArgument, unclosed);
  EXPECT_NE(unclosed.status().message().find("position 11"), std::string::npos)
      << unclosed.status().message();

  Result<SchemaPtr> missing_type = ParseDdlSchema("a");
  EXPECT_RAISES(InvalidArgument, missing_type);
  EXPECT_NE(missing_type.status().message().find("expected a data type at position 1"),
            std::string::npos)
      << missing_type.status().message();

  EXPECT_RAISES(InvalidArgument, ParseDdlSchema(""));
  EXPECT_RAISES(InvalidArgument, ParseDdlSchema("a INT,"));
  EXPECT_RAISES(InvalidArgument, ParseDdlSchema("a INT NOT"));
  EXPECT_RAISES(InvalidArgument, ParseDdlSchema("a INT b INT"));
  EXPECT_RAISES(InvalidArgument, ParseDdlSchema("`a INT"));
  EXPECT_RAISES(InvalidArgument, ParseDdlSchema("a INT COMMENT 'open"));
  EXPECT_RAISES(InvalidArgument, ParseDdlSchema("a MAP<INT>"));
  EXPECT_RAISES(InvalidArgument, ParseDdlType("INT INT"));
}

TEST(DdlParserTest, RejectsDuplicateColumnNamesIgnoringCase) {
  Result<SchemaPtr> dup = ParseDdlSchema("Id INT, id STRING");
  EXPECT_RAISES(InvalidArgument, dup);
  EXPECT_NE(dup.status().message().find("duplicate column name 'id'"), std::string::npos);
}

TEST(DataTypeTest, FieldIndexIgnoresCase) {
  ASSERT_OK_AND_ASSIGN(SchemaPtr schema, ParseDdlSchema("Device_Id STRING, payload STRING"));
  EXPECT_EQ(schema->FieldIndex("device_id"), 0);
  EXPECT_EQ(schema->FieldIndex("PAYLOAD"), 1);
  EXPECT_EQ(schema->FieldIndex("missing"), -1);
}

TEST(DataTypeTest, EqualsComparesStructureNotIdentity) {
  EXPECT_TRUE(DataType::Decimal(10, 2)->Equals(*DataType::Decimal(10, 2)));
  EXPECT_FALSE(DataType::Decimal(10, 2)->Equals(*DataType::Decimal(10, 3)));
  EXPECT_FALSE(DataType::Int()->Equals(*DataType::Long()));
  EXPECT_FALSE(
      DataType::Array(DataType::Int(), true)->Equals(*DataType::Array(DataType::Int(), false)));
  EXPECT_TRUE(DataType::Map(DataType::String(), DataType::Int())
                  ->Equals(*DataType::Map(DataType::String(), DataType::Int())));
  ASSERT_OK_AND_ASSIGN(SchemaPtr a, ParseDdlSchema("x INT NOT NULL, y STRING"));
  ASSERT_OK_AND_ASSIGN(SchemaPtr b, ParseDdlSchema("X INT NOT NULL, y STRING COMMENT 'c'"));
  ASSERT_OK_AND_ASSIGN(SchemaPtr c, ParseDdlSchema("x INT, y STRING"));
  EXPECT_TRUE(a->Equals(*b));
  EXPECT_FALSE(a->Equals(*c));
}

TEST(DataTypeTest, ByteWidthsFollowTheArrowLayout) {
  EXPECT_EQ(DataType::Byte()->byte_width(), 1);
  EXPECT_EQ(DataType::Short()->byte_width(), 2);
  EXPECT_EQ(DataType::Int()->byte_width(), 4);
  EXPECT_EQ(DataType::Date()->byte_width(), 4);
  EXPECT_EQ(DataType::Float()->byte_width(), 4);
  EXPECT_EQ(DataType::Long()->byte_width(), 8);
  EXPECT_EQ(DataType::Double()->byte_width(), 8);
  EXPECT_EQ(DataType::Timestamp()->byte_width(), 8);
  EXPECT_EQ(DataType::TimestampNtz()->byte_width(), 8);
  EXPECT_EQ(DataType::Boolean()->byte_width(), 0);
  EXPECT_EQ(DataType::String()->byte_width(), 0);
}

TEST(DataTypeTest, MapEntriesTypeHasKeyAndValueFields) {
  TypePtr map = DataType::Map(DataType::String(), DataType::Long(), false);
  const DataType& entries = *map->map_entries_type();
  ASSERT_EQ(entries.num_fields(), 2);
  EXPECT_EQ(entries.field(0).name, "key");
  EXPECT_FALSE(entries.field(0).nullable);
  EXPECT_EQ(entries.field(1).name, "value");
  EXPECT_FALSE(entries.field(1).nullable);
  EXPECT_EQ(entries.field(1).type->id(), TypeId::kLong);
}

TEST(SchemaJsonTest, WritesDeltaSchemaString) {
  ASSERT_OK_AND_ASSIGN(SchemaPtr schema,
                       ParseDdlSchema("device_id STRING NOT NULL, n BIGINT, d DECIMAL(10,2)"));
  EXPECT_EQ(SchemaToJson(*schema),
            R"({"type":"struct","fields":[)"
            R"({"name":"device_id","type":"string","nullable":false,"metadata":{}},)"
            R"({"name":"n","type":"long","nullable":true,"metadata":{}},)"
            R"j({"name":"d","type":"decimal(10,2)","nullable":true,"metadata":{}}]})j");
}

// A schemaString as delta-spark writes it, with column mapping metadata.
constexpr const char* kDeltaSchemaString =
    R"({"type":"struct","fields":[)"
    R"({"name":"id","type":"long","nullable":true,"metadata":{"delta.columnMapping.id":1,)"
    R"("delta.columnMapping.physicalName":"col-5f422f40-de70-45b2-88ab-1d5c90e94db1"}},)"
    R"({"name":"name","type":"string","nullable":false,"metadata":{"comment":"who"}},)"
    R"({"name":"score","type":"double","nullable":true,"metadata":{}},)"
    R"({"name":"tags","type":{"type":"array","elementType":"string","containsNull":true},)"
    R"("nullable":true,"metadata":{}},)"
    R"({"name":"attrs","type":{"type":"map","keyType":"string","valueType":"integer",)"
    R"("valueContainsNull":false},"nullable":true,"metadata":{}},)"
    R"({"name":"loc","type":{"type":"struct","fields":[)"
    R"({"name":"lat","type":"float","nullable":true,"metadata":{}},)"
    R"({"name":"ts","type":"timestamp","nullable":true,"metadata":{}}]},)"
    R"("nullable":true,"metadata":{}},)"
    R"({"name":"day","type":"date","nullable":true,"metadata":{}},)"
    R"({"name":"ntz","type":"timestamp_ntz","nullable":true,"metadata":{}},)"
    R"j({"name":"amount","type":"decimal(38,18)","nullable":true,"metadata":{}},)j"
    R"({"name":"flag","type":"boolean","nullable":true,"metadata":{}},)"
    R"({"name":"raw","type":"binary","nullable":true,"metadata":{}},)"
    R"({"name":"s","type":"short","nullable":true,"metadata":{}},)"
    R"({"name":"b","type":"byte","nullable":true,"metadata":{}},)"
    R"({"name":"nothing","type":"void","nullable":true,"metadata":{}}]})";

TEST(SchemaJsonTest, DeltaSchemaStringRoundTripsExactly) {
  ASSERT_OK_AND_ASSIGN(SchemaPtr schema, SchemaFromJson(kDeltaSchemaString));
  ASSERT_EQ(schema->num_fields(), 14);
  EXPECT_EQ(schema->field(0).metadata_json,
            R"({"delta.columnMapping.id":1,)"
            R"("delta.columnMapping.physicalName":"col-5f422f40-de70-45b2-88ab-1d5c90e94db1"})");
  EXPECT_FALSE(schema->field(1).nullable);
  EXPECT_EQ(schema->field(3).type->element_type()->id(), TypeId::kString);
  EXPECT_FALSE(schema->field(4).type->value_contains_null());
  EXPECT_EQ(schema->field(5).type->field(1).type->id(), TypeId::kTimestamp);
  EXPECT_EQ(schema->field(8).type->precision(), 38);
  EXPECT_EQ(schema->field(13).type->id(), TypeId::kNull);
  EXPECT_EQ(SchemaToJson(*schema), kDeltaSchemaString);
}

TEST(SchemaJsonTest, DdlAndJsonDescribeTheSameSchema) {
  ASSERT_OK_AND_ASSIGN(SchemaPtr from_ddl,
                       ParseDdlSchema("a ARRAY<STRUCT<x: INT>>, m MAP<STRING, DATE> NOT NULL"));
  ASSERT_OK_AND_ASSIGN(SchemaPtr from_json, SchemaFromJson(SchemaToJson(*from_ddl)));
  EXPECT_TRUE(from_ddl->Equals(*from_json));
}

TEST(SchemaJsonTest, RejectsMalformedSchemas) {
  EXPECT_RAISES(Corruption, SchemaFromJson("not json"));
  EXPECT_RAISES(Corruption, SchemaFromJson(R"("string")"));
  EXPECT_RAISES(Corruption, SchemaFromJson(R"({"type":"struct"})"));
  Result<SchemaPtr> unknown = SchemaFromJson(
      R"({"type":"struct","fields":[{"name":"a","type":"uuid","nullable":true,"metadata":{}}]})");
  EXPECT_RAISES(Corruption, unknown);
  EXPECT_NE(unknown.status().message().find("unknown type 'uuid' at schema.a"), std::string::npos)
      << unknown.status().message();
  EXPECT_RAISES(Corruption,
                SchemaFromJson(R"j({"type":"struct","fields":[{"name":"a","type":"decimal(40,2)",)j"
                               R"("nullable":true,"metadata":{}}]})"));
  EXPECT_RAISES(Corruption,
                SchemaFromJson(R"({"type":"struct","fields":[{"name":"a","type":"long"},)"
                               R"({"name":"A","type":"long"}]})"));
  EXPECT_RAISES(NotSupported,
                SchemaFromJson(R"({"type":"struct","fields":[{"name":"v","type":{"type":"udt"},)"
                               R"("nullable":true,"metadata":{}}]})"));
}

TEST(SchemaJsonTest, MissingNullableAndMetadataDefaultAsSparkDoes) {
  ASSERT_OK_AND_ASSIGN(
      SchemaPtr schema,
      SchemaFromJson(R"({"type":"struct","fields":[{"name":"a","type":"integer"}]})"));
  EXPECT_TRUE(schema->field(0).nullable);
  EXPECT_EQ(schema->field(0).metadata_json, "{}");
}

}  // namespace
}  // namespace silt::columnar
