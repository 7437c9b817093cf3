#include "silt/delta/schema_evolution.h"

#include <gtest/gtest.h>

#include "silt/testing/gtest_util.h"

namespace silt::delta {
namespace {

columnar::SchemaPtr Ddl(std::string_view ddl) {
  auto schema = columnar::ParseDdlSchema(ddl);
  EXPECT_TRUE(schema.ok()) << schema.status().ToString();
  return *schema;
}

TEST(SchemaEvolutionTest, SameOrFewerColumnsKeepTheTableSchema) {
  auto table = Ddl("id BIGINT NOT NULL, name STRING");
  ASSERT_OK_AND_ASSIGN(auto same,
                       MergeSchemaForAppend(table, *Ddl("ID BIGINT, name STRING"), false));
  EXPECT_EQ(same, table);
  ASSERT_OK_AND_ASSIGN(auto fewer, MergeSchemaForAppend(table, *Ddl("name STRING"), false));
  EXPECT_EQ(fewer, table);
}

TEST(SchemaEvolutionTest, TypeMismatchNamesTheColumnAndBothTypes) {
  auto table = Ddl("id BIGINT, s STRUCT<a: INT, b: STRING>");
  auto r = MergeSchemaForAppend(table, *Ddl("id STRING"), true);
  ASSERT_RAISES(InvalidArgument, r);
  EXPECT_NE(r.status().message().find("'id' is BIGINT in the table but STRING"), std::string::npos)
      << r.status().ToString();
  r = MergeSchemaForAppend(table, *Ddl("s STRUCT<a: DOUBLE>"), true);
  ASSERT_RAISES(InvalidArgument, r);
  EXPECT_NE(r.status().message().find("'s.a' is INT in the table but DOUBLE"), std::string::npos)
      << r.status().ToString();
}

TEST(SchemaEvolutionTest, NewColumnsNeedMergeSchemaAndArriveNullable) {
  auto table = Ddl("id BIGINT, s STRUCT<a: INT>");
  auto incoming = Ddl("id BIGINT, extra INT NOT NULL, s STRUCT<a: INT, b: STRING>");
  auto refused = MergeSchemaForAppend(table, *incoming, false);
  ASSERT_RAISES(InvalidArgument, refused);
  EXPECT_NE(refused.status().message().find("mergeSchema"), std::string::npos);
  EXPECT_NE(refused.status().message().find("'extra'"), std::string::npos);
  ASSERT_OK_AND_ASSIGN(auto merged, MergeSchemaForAppend(table, *incoming, true));
  ASSERT_EQ(merged->num_fields(), 3);
  EXPECT_EQ(merged->field(0).name, "id");
  EXPECT_EQ(merged->field(2).name, "extra");
  EXPECT_TRUE(merged->field(2).nullable);
  EXPECT_TRUE(merged->field(1).type->Equals(*Ddl("a INT, b STRING")))
      << merged->field(1).type->ToDdl();
}

}  // namespace
}  // namespace silt::delta
