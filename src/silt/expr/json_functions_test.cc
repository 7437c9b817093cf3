#include <gtest/gtest.h>

#include "silt/expr/test_util.h"
#include "silt/testing/gtest_util.h"

namespace silt::expr {
namespace {

using columnar::DataType;
using columnar::Field;
using testing::EvalRender;
using testing::MakeBatch;
using testing::Rows;
using testing::StringColumn;

class JsonFunctionsTest : public ::testing::Test {
 protected:
  columnar::RecordBatchPtr batch_ = MakeBatch({{"j", StringColumn({
                                                         R"({"a": 1, "b": "x", "n": {"c": 2.5}})",
                                                         R"({"a": "oops", "b": null})",
                                                         "not json",
                                                         std::nullopt,
                                                         R"({"A": 7})",
                                                     })}});
};

TEST_F(JsonFunctionsTest, FromJsonDecodesADdlSchemaIntoANullableStruct) {
  ASSERT_OK_AND_ASSIGN(BoundExpressionPtr bound,
                       testing::BindText("from_json(j, 'a INT NOT NULL, b STRING') AS e", *batch_));
  EXPECT_EQ(bound->name(), "e");
  // from_json makes every field nullable, as Spark's asNullable does.
  EXPECT_TRUE(bound->type()->Equals(*DataType::Struct(
      {Field{"a", DataType::Int(), true}, Field{"b", DataType::String(), true}})));
  EXPECT_TRUE(bound->nullable());
  EXPECT_EQ(EvalRender("from_json(j, 'a INT, b STRING')", *batch_),
            (Rows{"{1, x}", "{null, null}", "{null, null}", "NULL", "{7, null}"}));
}

TEST_F(JsonFunctionsTest, MalformedTextGivesAStructOfNullsNotANullStruct) {
  EXPECT_EQ(EvalRender("from_json(j, 'a INT') IS NULL", *batch_),
            (Rows{"false", "false", "false", "true", "false"}));
  EXPECT_EQ(EvalRender("from_json(j, 'a INT').a", *batch_),
            (Rows{"1", "NULL", "NULL", "NULL", "7"}));
}

TEST_F(JsonFunctionsTest, CorruptRecordFieldKeepsTheRawText) {
  // A value of the wrong type makes the record bad too (Spark keeps the
  // fields it could convert and sets the corrupt-record field).
  const std::string bad_row = R"({"a": "oops", "b": null})";
  EXPECT_EQ(EvalRender("from_json(j, 'a INT, _corrupt_record STRING')._corrupt_record", *batch_),
            (Rows{"NULL", bad_row, "not json", "NULL", "NULL"}));
  EXPECT_EQ(EvalRender("from_json(j, 'a INT, bad STRING', map('columnNameOfCorruptRecord', "
                       "'bad')).bad",
                       *batch_),
            (Rows{"NULL", bad_row, "not json", "NULL", "NULL"}));
}

TEST_F(JsonFunctionsTest, FailFastModeStopsAtTheFirstBadRecord) {
  Rows r = EvalRender("from_json(j, 'b STRING', map('mode', 'FAILFAST'))", *batch_);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_NE(r[0].find("Malformed JSON in from_json with mode FAILFAST (row 2): not json"),
            std::string::npos)
      << r[0];
  Rows mismatch = EvalRender("from_json(j, 'a INT', map('mode', 'FAILFAST'))", *batch_);
  EXPECT_NE(mismatch[0].find("(row 1)"), std::string::npos) << mismatch[0];
  auto good = MakeBatch({{"j", StringColumn({R"({"a": 1})", std::nullopt})}});
  EXPECT_EQ(EvalRender("from_json(j, 'a INT', map('mode', 'failfast')).a", *good),
            (Rows{"1", "NULL"}));
}

TEST_F(JsonFunctionsTest, FromJsonAcceptsSchemaJsonAndNestedStructs) {
  EXPECT_EQ(EvalRender("from_json(j, 'n STRUCT<c: DOUBLE>').n.c", *batch_),
            (Rows{"2.5", "NULL", "NULL", "NULL", "NULL"}));
  EXPECT_EQ(EvalRender(R"(from_json(j, '{"type":"struct","fields":[{"name":"b","type":"string",)"
                       R"("nullable":true,"metadata":{}}]}').b)",
                       *batch_),
            (Rows{"x", "NULL", "NULL", "NULL", "NULL"}));
}

TEST_F(JsonFunctionsTest, FromJsonRejectsBadSchemasAndOptions) {
  Rows schema = EvalRender("from_json(j, 'a NOPE')", *batch_);
  EXPECT_NE(schema[0].find("Cannot parse the from_json schema 'a NOPE'"), std::string::npos)
      << schema[0];
  Rows column_schema = EvalRender("from_json(j, j)", *batch_);
  EXPECT_NE(column_schema[0].find("the schema (argument 2) must be a constant"), std::string::npos)
      << column_schema[0];
  Rows option = EvalRender("from_json(j, 'a INT', map('allowComments', 'true'))", *batch_);
  EXPECT_NE(option[0].find("Not supported: from_json option 'allowComments'"), std::string::npos)
      << option[0];
  Rows mode = EvalRender("from_json(j, 'a INT', map('mode', 'DROPMALFORMED'))", *batch_);
  EXPECT_NE(mode[0].find("supports modes PERMISSIVE and FAILFAST"), std::string::npos) << mode[0];
}

TEST_F(JsonFunctionsTest, GetJsonObjectReturnsTextOrNull) {
  EXPECT_EQ(EvalRender("get_json_object(j, '$.a')", *batch_),
            (Rows{"1", "oops", "NULL", "NULL", "NULL"}));
  EXPECT_EQ(EvalRender("get_json_object(j, '$.n')", *batch_),
            (Rows{R"({"c":2.5})", "NULL", "NULL", "NULL", "NULL"}));
  EXPECT_EQ(EvalRender("get_json_object(j, '$.n.c')", *batch_),
            (Rows{"2.5", "NULL", "NULL", "NULL", "NULL"}));
  EXPECT_EQ(EvalRender("get_json_object(j, NULL)", *batch_),
            (Rows{"NULL", "NULL", "NULL", "NULL", "NULL"}));
}

TEST_F(JsonFunctionsTest, GetJsonObjectWithAMalformedPathIsNullAsInSpark) {
  // Spark's JsonPathParser gives up on a path not starting with '$' (or
  // otherwise malformed) and get_json_object is NULL for every row.
  EXPECT_EQ(EvalRender("get_json_object(j, 'a.b')", *batch_),
            (Rows{"NULL", "NULL", "NULL", "NULL", "NULL"}));
  EXPECT_EQ(EvalRender("get_json_object(j, '$[')", *batch_),
            (Rows{"NULL", "NULL", "NULL", "NULL", "NULL"}));
}

TEST_F(JsonFunctionsTest, ConstantInputIsDecodedOnceAndRepeated) {
  EXPECT_EQ(EvalRender(R"(get_json_object('{"k": [1, 2]}', '$.k[1]'))", *batch_),
            (Rows{"2", "2", "2", "2", "2"}));
}

}  // namespace
}  // namespace silt::expr
