#include "silt/query/predicate_extractor.h"

#include <gtest/gtest.h>

#include "silt/expr/parse/parser.h"

namespace silt::query {
namespace {

using columnar::DataType;
using columnar::PredicateOp;

columnar::SchemaPtr Schema() {
  return DataType::Struct({{"id", DataType::Long()},
                           {"n", DataType::Int()},
                           {"name", DataType::String()},
                           {"day", DataType::Date()},
                           {"ts", DataType::Timestamp()},
                           {"price", DataType::Decimal(10, 2)}});
}

columnar::Conjunction Extract(const std::string& text) {
  Result<expr::NodePtr> node = expr::ParseNode(text);
  EXPECT_TRUE(node.ok()) << node.status().ToString();
  Result<columnar::Conjunction> c = ExtractConjunction(**node, Schema());
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return *c;
}

std::string Describe(const std::string& text) {
  std::string out;
  for (const auto& p : Extract(text)) {
    if (!out.empty()) out += " AND ";
    out += DescribePredicate(p);
  }
  return out;
}

TEST(PredicateExtractorTest, ColumnOpLiteral) {
  EXPECT_EQ(Describe("id = 5"), "id = 5");
  EXPECT_EQ(Describe("5 < id"), "id > 5");
  // != binds as NOT (=): not a shape storage can use.
  EXPECT_EQ(Describe("ID >= 5 AND name <> 'x'"), "id >= 5");
  EXPECT_EQ(Describe("day = '2024-03-02'"), "day = DATE '2024-03-02'");
  EXPECT_EQ(Describe("ts > '2024-01-01 00:00:00'"), "ts > TIMESTAMP '2024-01-01T00:00:00.000000Z'");
  EXPECT_EQ(Describe("price <= 1.5"), "price <= 1.50");
  // A literal expression folds to a constant.
  EXPECT_EQ(Describe("id = 2 + 3"), "id = 5");
}

TEST(PredicateExtractorTest, InBetweenNull) {
  EXPECT_EQ(Describe("id IN (1, 2, NULL)"), "id IN (1, 2)");
  EXPECT_EQ(Describe("n BETWEEN 1 AND 3"), "n >= 1 AND n <= 3");
  EXPECT_EQ(Describe("name IS NULL AND day IS NOT NULL"), "name IS NULL AND day IS NOT NULL");
}

TEST(PredicateExtractorTest, LeavesOutWhatItCannotUse) {
  EXPECT_EQ(Describe("id = 1 OR id = 2"), "");
  EXPECT_EQ(Describe("NOT (id = 1)"), "");
  EXPECT_EQ(Describe("id + 1 = 2"), "");
  EXPECT_EQ(Describe("id = n"), "");
  EXPECT_EQ(Describe("id NOT IN (1, 2)"), "");
  EXPECT_EQ(Describe("id = NULL"), "");
  // The INT column is cast to DECIMAL for this comparison: left out.
  EXPECT_EQ(Describe("n < 2.5"), "");
  EXPECT_EQ(Describe("upper(name) = 'X' AND id = 3"), "id = 3");
  EXPECT_EQ(Describe("nope = 1 AND id = 3"), "id = 3");
}

}  // namespace
}  // namespace silt::query
