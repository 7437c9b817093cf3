// Unit tests of the variant functions over a column of JSON texts; the
// values are Spark 4.2's (checked by tests/integration/test_variant_spark4.py).
#include <gtest/gtest.h>

#include "silt/expr/test_util.h"

namespace silt::expr {
namespace {

using testing::EvalRender;
using testing::MakeBatch;
using testing::RecordBatchPtr;
using testing::Rows;
using testing::StringColumn;

RecordBatchPtr Docs() {
  return MakeBatch({{"j", StringColumn({R"({"a":1,"b":[1,"x",{"c":2.50}]})", "[10,20]", R"("text")",
                                        "null", std::nullopt, "{bad"})}});
}

TEST(VariantFunctionsTest, ParseJsonAndToJson) {
  EXPECT_EQ(
      EvalRender("to_json(try_parse_json(j))", *Docs()),
      (Rows{R"({"a":1,"b":[1,"x",{"c":2.5}]})", "[10,20]", R"("text")", "null", "NULL", "NULL"}));
  Rows failed = EvalRender("parse_json(j)", *Docs());
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_NE(failed[0].find("MALFORMED_RECORD_IN_PARSING"), std::string::npos) << failed[0];
  EXPECT_NE(failed[0].find("{bad"), std::string::npos) << failed[0];
}

TEST(VariantFunctionsTest, VariantGetPathsAndTypes) {
  EXPECT_EQ(EvalRender("try_variant_get(try_parse_json(j), '$.b[2].c', 'string')", *Docs()),
            (Rows{"2.5", "NULL", "NULL", "NULL", "NULL", "NULL"}));
  EXPECT_EQ(EvalRender("try_variant_get(try_parse_json(j), '$[1]', 'int')", *Docs()),
            (Rows{"NULL", "20", "NULL", "NULL", "NULL", "NULL"}));
  EXPECT_EQ(EvalRender("try_variant_get(try_parse_json(j), '$.b', 'array<int>')", *Docs()),
            (Rows{"[1, null, null]", "NULL", "NULL", "NULL", "NULL", "NULL"}));
  EXPECT_EQ(EvalRender("try_variant_get(try_parse_json(j), '$', 'string')", *Docs()),
            (Rows{R"({"a":1,"b":[1,"x",{"c":2.5}]})", "[10,20]", "text", "NULL", "NULL", "NULL"}));
  Rows strict = EvalRender("variant_get(try_parse_json(j), '$', 'int')", *Docs());
  ASSERT_EQ(strict.size(), 1u);
  EXPECT_NE(strict[0].find("INVALID_VARIANT_CAST"), std::string::npos) << strict[0];
  Rows bad_path = EvalRender("variant_get(try_parse_json(j), '$..a')", *Docs());
  ASSERT_EQ(bad_path.size(), 1u);
  EXPECT_NE(bad_path[0].find("INVALID_VARIANT_GET_PATH"), std::string::npos) << bad_path[0];
}

TEST(VariantFunctionsTest, SchemaAndNullChecks) {
  EXPECT_EQ(EvalRender("schema_of_variant(try_parse_json(j))", *Docs()),
            (Rows{"OBJECT<a: BIGINT, b: ARRAY<VARIANT>>", "ARRAY<BIGINT>", "STRING", "VOID", "NULL",
                  "NULL"}));
  EXPECT_EQ(EvalRender("is_variant_null(try_parse_json(j))", *Docs()),
            (Rows{"false", "false", "false", "true", "false", "false"}));
}

TEST(VariantFunctionsTest, CastsToAndFromVariant) {
  EXPECT_EQ(EvalRender("to_json(CAST(array(1, 2) AS VARIANT))", *Docs()).front(), "[1,2]");
  EXPECT_EQ(EvalRender("TRY_CAST(try_parse_json(j) AS INT)", *Docs()),
            (Rows{"NULL", "NULL", "NULL", "NULL", "NULL", "NULL"}));
  EXPECT_EQ(EvalRender("CAST(try_parse_json(j) AS STRING)", *Docs())[1], "[10,20]");
  Rows struct_cast = EvalRender("CAST(named_struct('a', 1) AS VARIANT)", *Docs());
  EXPECT_NE(struct_cast[0].find("ERROR"), std::string::npos);
  EXPECT_EQ(
      EvalRender("to_json(to_variant_object(named_struct('b', 1, 'a', 'x')))", *Docs()).front(),
      R"({"a":"x","b":1})");
}

}  // namespace
}  // namespace silt::expr
