#include <gtest/gtest.h>

#include "silt/expr/test_util.h"
#include "silt/testing/gtest_util.h"

namespace silt::expr {
namespace {

using columnar::DataType;
using columnar::Field;
using testing::Rows;

columnar::SchemaPtr TestSchema() {
  return DataType::Struct({
      Field{"id", DataType::Int(), false},
      Field{"Name", DataType::String(), true},
      Field{"e",
            DataType::Struct({Field{"device_id", DataType::String(), false},
                              Field{"Payload", DataType::String(), true},
                              Field{"inner", DataType::Struct({Field{"x", DataType::Long()}})}}),
            true},
      Field{"value", DataType::Binary(), true},
  });
}

Result<BoundExpressionPtr> BindTo(std::string_view text,
                                  columnar::SchemaPtr schema = TestSchema()) {
  return BindText(text, schema);
}

std::string BindError(std::string_view text, columnar::SchemaPtr schema = TestSchema()) {
  Result<BoundExpressionPtr> bound = BindTo(text, schema);
  EXPECT_FALSE(bound.ok()) << text;
  return bound.ok() ? "" : bound.status().message();
}

std::string NameOf(std::string_view text) {
  Result<BoundExpressionPtr> bound = BindTo(text);
  EXPECT_TRUE(bound.ok()) << bound.status().ToString();
  return bound.ok() ? (*bound)->name() : "";
}

TEST(BinderTest, UnknownColumnListsTheAvailableOnes) {
  EXPECT_EQ(BindError("nope + 1"),
            "Cannot resolve column nope in '(nope + 1)'; available columns: id, Name, e, value");
}

TEST(BinderTest, BindTextReportsParseErrorsAsParseExpressionDoes) {
  Result<ExpressionPtr> parsed = ParseExpression("id +");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(BindError("id +"), parsed.status().message());
}

TEST(BinderTest, UnknownFunctionIsNamed) {
  EXPECT_EQ(BindError("frobnicate(id)"), "Unknown function frobnicate in 'frobnicate(id)'");
}

TEST(BinderTest, MisspelledNamesSuggestTheClosestOne) {
  EXPECT_EQ(BindError("valeu + 1"),
            "Cannot resolve column valeu in '(valeu + 1)'; did you mean value?; "
            "available columns: id, Name, e, value");
  EXPECT_EQ(BindError("get_jsn_object(Name, '$.a')"),
            "Unknown function get_jsn_object in 'get_jsn_object(Name, '$.a')'; did you mean "
            "get_json_object?");
  EXPECT_EQ(BindError("e.payloda"),
            "No field payloda in e in 'e.payloda'; did you mean Payload?; available fields: "
            "device_id, Payload, inner");
}

TEST(BinderTest, ColumnsResolveIgnoringCaseAndKeepTheirSchemaName) {
  ASSERT_OK_AND_ASSIGN(BoundExpressionPtr bound, BindTo("NAME"));
  EXPECT_EQ(bound->name(), "Name");
  EXPECT_TRUE(bound->type()->Equals(*DataType::String()));
  EXPECT_TRUE(bound->nullable());
  ASSERT_OK_AND_ASSIGN(BoundExpressionPtr id, BindTo("ID"));
  EXPECT_FALSE(id->nullable());
}

TEST(BinderTest, AmbiguousColumnsDifferingInCaseAreRejected) {
  auto exact = DataType::Struct({Field{"a", DataType::Int()}, Field{"A", DataType::Long()}});
  ASSERT_OK_AND_ASSIGN(BoundExpressionPtr bound, BindTo("A", exact));  // an exact match wins
  EXPECT_TRUE(bound->type()->Equals(*DataType::Long()));
  auto schema = DataType::Struct({Field{"ab", DataType::Int()}, Field{"aB", DataType::Int()}});
  EXPECT_EQ(BindError("AB + 1", schema),
            "Reference AB is ambiguous, could be: ab, aB in '(AB + 1)'");
}

TEST(BinderTest, NestedFieldsResolveAndNameAsWritten) {
  ASSERT_OK_AND_ASSIGN(BoundExpressionPtr bound, BindTo("e.PAYLOAD"));
  EXPECT_EQ(bound->name(), "PAYLOAD");
  EXPECT_TRUE(bound->type()->Equals(*DataType::String()));
  ASSERT_OK_AND_ASSIGN(BoundExpressionPtr deep, BindTo("E.inner.x"));
  EXPECT_EQ(deep->name(), "x");
  EXPECT_TRUE(deep->type()->Equals(*DataType::Long()));
  // A non-null field of a nullable struct is nullable.
  ASSERT_OK_AND_ASSIGN(BoundExpressionPtr device, BindTo("e.device_id"));
  EXPECT_TRUE(device->nullable());
}

TEST(BinderTest, UnknownFieldListsTheStructFields) {
  EXPECT_EQ(BindError("e.missing"),
            "No field missing in e in 'e.missing'; available fields: device_id, Payload, inner");
  EXPECT_EQ(BindError("id.x"), "Cannot extract field x from id of type INT in 'id.x'");
}

TEST(BinderTest, OutputNamesFollowSpark) {
  EXPECT_EQ(NameOf("CAST(value AS STRING)"), "value");
  EXPECT_EQ(NameOf("CAST(e.Payload AS INT)"), "CAST(e.Payload AS INT)");
  EXPECT_EQ(NameOf("id + 1"), "(id + 1)");
  EXPECT_EQ(NameOf("id + 1.5"), "(id + 1.5)");  // the implicit cast is hidden
  EXPECT_EQ(NameOf("to_timestamp(e.Payload)"), "to_timestamp(e.Payload)");
  EXPECT_EQ(NameOf("get_json_object(e.payload, '$.a')"), "get_json_object(e.payload, $.a)");
  EXPECT_EQ(NameOf("current_timestamp()"), "current_timestamp()");
  EXPECT_EQ(NameOf("current_date"), "current_date()");
  EXPECT_EQ(NameOf("NOW()"), "now()");
  EXPECT_EQ(NameOf("id AS renamed"), "renamed");
  EXPECT_EQ(NameOf("from_json(CAST(value AS STRING), 'a INT')"),
            "from_json(CAST(value AS STRING))");
  EXPECT_EQ(NameOf("1 + 2"), "(1 + 2)");
  EXPECT_EQ(NameOf("'x'"), "x");
}

TEST(BinderTest, WrongArgumentCountsAndTypesAreNamed) {
  EXPECT_EQ(BindError("to_timestamp()"),
            "Function to_timestamp takes 1 to 2 argument(s) but 0 were given in 'to_timestamp()'");
  EXPECT_EQ(BindError("coalesce()"),
            "Function coalesce takes at least 1 argument(s) but 0 were given in 'coalesce()'");
  EXPECT_EQ(BindError("NOT id"),
            "Cannot resolve '(NOT id)': argument 1 (id) must be BOOLEAN but is INT");
  EXPECT_NE(BindError("get_json_object(Name, Name)").find("a path that varies per row"),
            std::string::npos);
}

TEST(BinderTest, StarIsOnlyASelectItem) {
  EXPECT_NE(BindError("*").find("can only be used as a whole select item"), std::string::npos);
}

TEST(BinderTest, SelectItemExpandsStars) {
  ASSERT_OK_AND_ASSIGN(ExpressionPtr star, ParseExpression("*"));
  ASSERT_OK_AND_ASSIGN(std::vector<BoundExpressionPtr> all, BindSelectItem(*star, TestSchema()));
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0]->name(), "id");
  EXPECT_EQ(all[3]->name(), "value");

  ASSERT_OK_AND_ASSIGN(ExpressionPtr fields, ParseExpression("e.*"));
  ASSERT_OK_AND_ASSIGN(std::vector<BoundExpressionPtr> expanded,
                       BindSelectItem(*fields, TestSchema()));
  ASSERT_EQ(expanded.size(), 3u);
  EXPECT_EQ(expanded[0]->name(), "device_id");
  EXPECT_EQ(expanded[1]->name(), "Payload");
  EXPECT_TRUE(expanded[2]->type()->Equals(*DataType::Struct({Field{"x", DataType::Long()}})));

  ASSERT_OK_AND_ASSIGN(ExpressionPtr bad, ParseExpression("id.*"));
  Result<std::vector<BoundExpressionPtr>> error = BindSelectItem(*bad, TestSchema());
  ASSERT_FALSE(error.ok());
  EXPECT_NE(error.status().message().find("not a struct"), std::string::npos);

  ASSERT_OK_AND_ASSIGN(ExpressionPtr plain, ParseExpression("id + 1 AS x"));
  ASSERT_OK_AND_ASSIGN(std::vector<BoundExpressionPtr> one, BindSelectItem(*plain, TestSchema()));
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0]->name(), "x");
}

TEST(BinderTest, StarExpansionEvaluatesStructFields) {
  columnar::ColumnBuilder builder(
      DataType::Struct({Field{"a", DataType::Int()}, Field{"b", DataType::String()}}));
  builder.child(0)->Append<int32_t>(1);
  builder.child(1)->AppendString("x");
  builder.AppendValid();
  builder.AppendNull();
  auto batch = testing::MakeBatch({{"s", builder.Finish()}});
  ASSERT_OK_AND_ASSIGN(ExpressionPtr fields, ParseExpression("s.*"));
  ASSERT_OK_AND_ASSIGN(std::vector<BoundExpressionPtr> bound,
                       BindSelectItem(*fields, batch->schema));
  ASSERT_OK_AND_ASSIGN(columnar::ColumnPtr a, bound[0]->Evaluate(*batch, {}));
  ASSERT_OK_AND_ASSIGN(columnar::ColumnPtr b, bound[1]->Evaluate(*batch, {}));
  EXPECT_EQ(testing::Render(*a), (Rows{"1", "NULL"}));
  EXPECT_EQ(testing::Render(*b), (Rows{"x", "NULL"}));
}

TEST(BinderTest, ExpressionsNotFromTheParserAreRejected) {
  class Foreign : public Expression {
   public:
    std::string OutputName() const override { return "f"; }
    std::string ToString() const override { return "f"; }
  };
  Foreign foreign;
  Result<BoundExpressionPtr> bound = Bind(foreign, TestSchema());
  ASSERT_FALSE(bound.ok());
  EXPECT_TRUE(bound.status().IsInvalidArgument());
}

}  // namespace
}  // namespace silt::expr
