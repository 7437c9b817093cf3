#include "silt/delta/type_widening.h"

#include <gtest/gtest.h>

#include "silt/columnar/builder.h"
#include "silt/delta/field_metadata.h"
#include "silt/delta/protocol.h"
#include "silt/delta/schema_evolution.h"
#include "silt/testing/gtest_util.h"

namespace silt::delta {
namespace {

using columnar::DataType;

columnar::SchemaPtr Ddl(std::string_view ddl) {
  auto schema = columnar::ParseDdlSchema(ddl);
  EXPECT_TRUE(schema.ok()) << schema.status().ToString();
  return *schema;
}

TEST(TypeWideningTest, SupportedChangesAreDeltaSparksList) {
  EXPECT_TRUE(IsTypeChangeSupported(*DataType::Byte(), *DataType::Short()));
  EXPECT_TRUE(IsTypeChangeSupported(*DataType::Short(), *DataType::Long()));
  EXPECT_TRUE(IsTypeChangeSupported(*DataType::Int(), *DataType::Long()));
  EXPECT_TRUE(IsTypeChangeSupported(*DataType::Float(), *DataType::Double()));
  EXPECT_TRUE(IsTypeChangeSupported(*DataType::Int(), *DataType::Double()));
  EXPECT_TRUE(IsTypeChangeSupported(*DataType::Date(), *DataType::TimestampNtz()));
  EXPECT_TRUE(IsTypeChangeSupported(*DataType::Decimal(5, 2), *DataType::Decimal(7, 4)));
  EXPECT_TRUE(IsTypeChangeSupported(*DataType::Decimal(5, 2), *DataType::Decimal(20, 2)));
  EXPECT_TRUE(IsTypeChangeSupported(*DataType::Byte(), *DataType::Decimal(10, 0)));
  EXPECT_TRUE(IsTypeChangeSupported(*DataType::Long(), *DataType::Decimal(22, 2)));

  EXPECT_FALSE(IsTypeChangeSupported(*DataType::Long(), *DataType::Int()));
  EXPECT_FALSE(IsTypeChangeSupported(*DataType::Int(), *DataType::Int()));
  EXPECT_FALSE(IsTypeChangeSupported(*DataType::Long(), *DataType::Double()));
  EXPECT_FALSE(IsTypeChangeSupported(*DataType::Int(), *DataType::Float()));
  EXPECT_FALSE(IsTypeChangeSupported(*DataType::Date(), *DataType::Timestamp()));
  // Integer digits or scale lost.
  EXPECT_FALSE(IsTypeChangeSupported(*DataType::Decimal(5, 2), *DataType::Decimal(6, 4)));
  EXPECT_FALSE(IsTypeChangeSupported(*DataType::Decimal(5, 2), *DataType::Decimal(5, 1)));
  // byte/short count as INT32: 10 integer digits, as delta-spark asks.
  EXPECT_FALSE(IsTypeChangeSupported(*DataType::Byte(), *DataType::Decimal(9, 0)));
  EXPECT_FALSE(IsTypeChangeSupported(*DataType::Long(), *DataType::Decimal(21, 2)));
  EXPECT_FALSE(IsTypeChangeSupported(*DataType::String(), *DataType::String()));
}

TEST(TypeWideningTest, WidensValuesKeepingNulls) {
  columnar::ColumnBuilder ints(DataType::Int());
  ints.Append<int32_t>(-7);
  ints.AppendNull();
  ints.Append<int32_t>(2147483647);
  columnar::ColumnPtr in = ints.Finish();
  columnar::ColumnPtr longs = WidenColumn(*in, DataType::Long());
  EXPECT_EQ(longs->Value<int64_t>(0), -7);
  EXPECT_TRUE(longs->IsNull(1));
  EXPECT_EQ(longs->Value<int64_t>(2), 2147483647);
  columnar::ColumnPtr decimals = WidenColumn(*in, DataType::Decimal(12, 2));
  EXPECT_EQ(decimals->Value<__int128>(0), static_cast<__int128>(-700));
  EXPECT_TRUE(decimals->IsNull(1));
}

TEST(TypeWideningTest, TypeChangesAreAppendedAsDeltaSparkWritesThem) {
  columnar::Field field{"e", DataType::Long(), true, R"j({"comment":"x"})j"};
  ASSERT_OK_AND_ASSIGN(field, AppendTypeChanges(field, {{DataType::Short(), DataType::Int(), ""}}));
  ASSERT_OK_AND_ASSIGN(field, AppendTypeChanges(field, {{DataType::Int(), DataType::Long(), ""}}));
  EXPECT_EQ(field.metadata_json,
            R"j({"comment":"x","delta.typeChanges":[{"toType":"integer","fromType":"short"},)j"
            R"j({"toType":"long","fromType":"integer"}]})j");
  columnar::Field nested{"m", DataType::Map(DataType::Double(), DataType::Int()), true, "{}"};
  ASSERT_OK_AND_ASSIGN(nested,
                       AppendTypeChanges(nested, {{DataType::Float(), DataType::Double(), "key"}}));
  EXPECT_EQ(
      nested.metadata_json,
      R"j({"delta.typeChanges":[{"toType":"double","fromType":"float","fieldPath":"key"}]})j");
}

TEST(TypeWideningTest, FieldMetadataMembersAreReadAndReplaced) {
  columnar::Field field{
      "id", DataType::Long(), true,
      R"j({"delta.identity.start":10,"delta.identity.allowExplicitInsert":false,)j"
      R"j("delta.generationExpression":"CAST(t AS DATE)"})j"};
  ASSERT_OK_AND_ASSIGN(auto start, FieldMetadataLong(field, "delta.identity.start"));
  EXPECT_EQ(start, 10);
  ASSERT_OK_AND_ASSIGN(auto explicit_insert,
                       FieldMetadataBool(field, "delta.identity.allowExplicitInsert"));
  EXPECT_EQ(explicit_insert, false);
  ASSERT_OK_AND_ASSIGN(auto expression, FieldMetadataString(field, "delta.generationExpression"));
  EXPECT_EQ(expression, "CAST(t AS DATE)");
  ASSERT_OK_AND_ASSIGN(auto missing, FieldMetadataLong(field, "delta.identity.highWaterMark"));
  EXPECT_FALSE(missing.has_value());
  ASSERT_RAISES(Corruption, FieldMetadataLong(field, "delta.generationExpression"));
  ASSERT_OK_AND_ASSIGN(field, WithFieldMetadata(field, "delta.identity.start", "11"));
  ASSERT_OK_AND_ASSIGN(field, WithFieldMetadata(field, "delta.identity.highWaterMark", "25"));
  EXPECT_EQ(
      field.metadata_json,
      R"j({"delta.identity.start":11,"delta.identity.allowExplicitInsert":false,)j"
      R"j("delta.generationExpression":"CAST(t AS DATE)","delta.identity.highWaterMark":25})j");
}

TEST(TypeWideningTest, MergeSchemaWidensColumnsAtEveryDepthWhenEnabled) {
  auto table =
      Ddl("a INT, d DATE, x DECIMAL(5,2), arr ARRAY<FLOAT>, s STRUCT<b: SHORT>, "
          "m MAP<STRING, ARRAY<INT>>");
  auto data =
      Ddl("a BIGINT, d TIMESTAMP_NTZ, x DECIMAL(8,3), arr ARRAY<DOUBLE>, "
          "s STRUCT<b: INT>, m MAP<STRING, ARRAY<BIGINT>>");
  ASSERT_OK_AND_ASSIGN(auto merged, MergeSchemaForAppend(table, *data, true, true));
  EXPECT_EQ(merged->ToDdl(), data->ToDdl());
  EXPECT_EQ(merged->field(0).metadata_json,
            R"j({"delta.typeChanges":[{"toType":"long","fromType":"integer"}]})j");
  EXPECT_EQ(merged->field(1).metadata_json,
            R"j({"delta.typeChanges":[{"toType":"timestamp_ntz","fromType":"date"}]})j");
  EXPECT_EQ(merged->field(2).metadata_json,
            R"j({"delta.typeChanges":[{"toType":"decimal(8,3)","fromType":"decimal(5,2)"}]})j");
  EXPECT_EQ(merged->field(3).metadata_json,
            R"j({"delta.typeChanges":[{"toType":"double","fromType":"float",)j"
            R"j("fieldPath":"element"}]})j");
  // Recorded on the nested struct field, not on `s`.
  EXPECT_EQ(merged->field(4).metadata_json, "{}");
  EXPECT_EQ(merged->field(4).type->field(0).metadata_json,
            R"j({"delta.typeChanges":[{"toType":"integer","fromType":"short"}]})j");
  EXPECT_EQ(merged->field(5).metadata_json,
            R"j({"delta.typeChanges":[{"toType":"long","fromType":"integer",)j"
            R"j("fieldPath":"value.element"}]})j");
}

TEST(TypeWideningTest, WideningNeedsMergeSchemaAndTheTableProperty) {
  auto table = Ddl("a INT");
  auto data = Ddl("a BIGINT");
  auto no_property = MergeSchemaForAppend(table, *data, true, false);
  ASSERT_RAISES(InvalidArgument, no_property);
  EXPECT_NE(no_property.status().message().find("delta.enableTypeWidening"), std::string::npos);
  auto no_merge = MergeSchemaForAppend(table, *data, false, true);
  ASSERT_RAISES(InvalidArgument, no_merge);
  EXPECT_NE(no_merge.status().message().find("mergeSchema"), std::string::npos);
  // Not a widening: refused whatever the settings.
  ASSERT_RAISES(InvalidArgument,
                MergeSchemaForAppend(Ddl("a BIGINT"), *Ddl("a DOUBLE"), true, true));
  // Narrower data fits the column as it is.
  ASSERT_OK_AND_ASSIGN(auto kept, MergeSchemaForAppend(data, *table, false, false));
  EXPECT_EQ(kept, data);
}

TEST(TypeWideningTest, EnabledNeedsTheFeature) {
  Metadata metadata;
  metadata.configuration = {{"delta.enableTypeWidening", "true"}};
  Protocol protocol;
  protocol.min_reader_version = 3;
  protocol.min_writer_version = 7;
  protocol.reader_features = std::vector<std::string>{"typeWidening"};
  protocol.writer_features = std::vector<std::string>{"typeWidening"};
  ASSERT_OK_AND_ASSIGN(bool on, TypeWideningEnabled(protocol, metadata));
  EXPECT_TRUE(on);
  protocol.writer_features = std::vector<std::string>{"typeWidening-preview"};
  ASSERT_RAISES(NotSupported, TypeWideningEnabled(protocol, metadata));
  protocol.writer_features = std::vector<std::string>{};
  ASSERT_RAISES(NotSupported, TypeWideningEnabled(protocol, metadata));
  metadata.configuration.clear();
  ASSERT_OK_AND_ASSIGN(on, TypeWideningEnabled(protocol, metadata));
  EXPECT_FALSE(on);
  // Appends to either feature's tables pass the write gate.
  protocol.writer_features = std::vector<std::string>{"typeWidening-preview"};
  protocol.reader_features = std::vector<std::string>{"typeWidening-preview"};
  ASSERT_OK(CheckWriteSupported(protocol, metadata));
}

TEST(TypeWideningTest, NewTablesWithThePropertyGetTheFeature) {
  ASSERT_OK_AND_ASSIGN(Protocol protocol,
                       ProtocolForNewTable({{"delta.enableTypeWidening", "true"}}));
  EXPECT_EQ(protocol.min_reader_version, 3);
  EXPECT_EQ(protocol.min_writer_version, 7);
  EXPECT_EQ(*protocol.reader_features, std::vector<std::string>{"typeWidening"});
  EXPECT_EQ(*protocol.writer_features,
            (std::vector<std::string>{"appendOnly", "invariants", "typeWidening"}));
  Protocol legacy;
  EXPECT_TRUE(AddTableFeature(&legacy, "timestampNtz"));
  EXPECT_EQ(legacy.min_reader_version, 3);
  EXPECT_EQ(*legacy.writer_features,
            (std::vector<std::string>{"appendOnly", "invariants", "timestampNtz"}));
  EXPECT_FALSE(AddTableFeature(&legacy, "timestampNtz"));
}

}  // namespace
}  // namespace silt::delta
