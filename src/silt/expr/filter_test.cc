// BoundFilter: WHERE semantics (TRUE keeps, FALSE and NULL drop) with the
// conjuncts evaluated cheapest first and only where the earlier ones held,
// and the select list bound with the same session reusing the JSON parses
// of the kept rows — always with the results of evaluating each expression
// on its own.
#include "silt/expr/filter.h"

#include <gtest/gtest.h>

#include "silt/expr/test_util.h"
#include "silt/testing/gtest_util.h"

namespace silt::expr {
namespace {

using columnar::RecordBatchPtr;
using testing::Render;
using testing::Rows;

RecordBatchPtr Events() {
  return testing::MakeBatch({
      {"kind", testing::StringColumn(
                   {"plug", "door", "plug", std::nullopt, "plug", "plug", "plug", "door"})},
      {"payload", testing::StringColumn(
                      {R"({"power": 84.5, "state": "ON"})", R"({"power": "x", "contact": true})",
                       R"({"power": 1.5, "state": "OFF"})", R"({"power": 99})", "not json",
                       std::nullopt, R"({"power": 7, "state": null})", R"({"power": 50})"})},
  });
}

// The predicate's kept rows, rendered column by column.
Result<std::vector<Rows>> FilterAndSelect(const RecordBatchPtr& batch, const std::string& where,
                                          const std::vector<std::string>& select,
                                          const EvalOptions& options, bool shared) {
  BindSession session;
  SILT_ASSIGN_OR_RETURN(ExpressionPtr predicate, ParseExpression(where));
  SILT_ASSIGN_OR_RETURN(
      std::unique_ptr<BoundFilter> filter,
      BoundFilter::Make(*predicate, batch->schema, options, shared ? &session : nullptr));
  std::vector<BoundExpressionPtr> items;
  for (const std::string& text : select) {
    SILT_ASSIGN_OR_RETURN(ExpressionPtr parsed, ParseExpression(text));
    SILT_ASSIGN_OR_RETURN(BoundExpressionPtr item,
                          Bind(*parsed, batch->schema, options, shared ? &session : nullptr));
    items.push_back(std::move(item));
  }
  SILT_ASSIGN_OR_RETURN(RecordBatchPtr kept, filter->Filter(batch, {}));
  std::vector<Rows> out;
  for (BoundExpressionPtr& item : items) {
    SILT_ASSIGN_OR_RETURN(columnar::ColumnPtr column, item->Evaluate(*kept, {}));
    out.push_back(Render(*column));
  }
  return out;
}

TEST(BoundFilterTest, KeepsTrueRowsWithConjunctsReorderedAndParsesShared) {
  const std::string where =
      "CAST(get_json_object(payload, '$.power') AS DOUBLE) > 5 AND kind = 'plug'";
  const std::vector<std::string> select = {
      "kind", "get_json_object(payload, '$.state')",
      "CAST(get_json_object(payload, '$.power') AS DOUBLE) * 2"};
  ASSERT_OK_AND_ASSIGN(std::vector<Rows> shared,
                       FilterAndSelect(Events(), where, select, {}, /*shared=*/true));
  // Row 3 (NULL kind) and row 7 (a door) pass the JSON test but not the
  // kind test; "x", "not json" and a NULL payload give NULL: dropped.
  EXPECT_EQ(shared[0], (Rows{"plug", "plug"}));
  EXPECT_EQ(shared[1], (Rows{"ON", "NULL"}));
  EXPECT_EQ(shared[2], (Rows{"169.0", "14.0"}));
  ASSERT_OK_AND_ASSIGN(std::vector<Rows> apart,
                       FilterAndSelect(Events(), where, select, {}, /*shared=*/false));
  EXPECT_EQ(apart, shared);
}

TEST(BoundFilterTest, NullAndFalseDropAndAnAllTrueBatchIsPassedThrough) {
  RecordBatchPtr batch = Events();
  ASSERT_OK_AND_ASSIGN(ExpressionPtr none, ParseExpression("kind = 'plug' AND kind = 'door'"));
  ASSERT_OK_AND_ASSIGN(auto filter_none, BoundFilter::Make(*none, batch->schema));
  ASSERT_OK_AND_ASSIGN(RecordBatchPtr kept_none, filter_none->Filter(batch, {}));
  EXPECT_EQ(kept_none->num_rows, 0);

  ASSERT_OK_AND_ASSIGN(ExpressionPtr all, ParseExpression("true AND 1 = 1"));
  ASSERT_OK_AND_ASSIGN(auto filter_all, BoundFilter::Make(*all, batch->schema));
  ASSERT_OK_AND_ASSIGN(RecordBatchPtr kept_all, filter_all->Filter(batch, {}));
  EXPECT_EQ(kept_all, batch);

  ASSERT_OK_AND_ASSIGN(ExpressionPtr plugs, ParseExpression("kind <=> 'plug' OR kind IS NULL"));
  ASSERT_OK_AND_ASSIGN(auto filter_plugs, BoundFilter::Make(*plugs, batch->schema));
  ASSERT_OK_AND_ASSIGN(RecordBatchPtr kept_plugs, filter_plugs->Filter(batch, {}));
  EXPECT_EQ(kept_plugs->num_rows, 6);
}

TEST(BoundFilterTest, AnsiSkipsLaterConjunctsWhereAnEarlierOneIsFalse) {
  // Spark's AND does not evaluate its right side where the left is false:
  // the door's non-numeric power never reaches the ANSI cast.
  EvalOptions ansi;
  ansi.ansi = true;
  ASSERT_OK_AND_ASSIGN(
      std::vector<Rows> out,
      FilterAndSelect(Events(),
                      "kind = 'plug' AND payload IS NOT NULL AND "
                      "CAST(get_json_object(payload, '$.power') AS DOUBLE) > 5",
                      {"get_json_object(payload, '$.power')"}, ansi, /*shared=*/true));
  EXPECT_EQ(out[0], (Rows{"84.5", "7"}));
  // Where the malformed value is reached, ANSI still fails.
  Result<std::vector<Rows>> failing = FilterAndSelect(
      Events(), "kind = 'door' AND CAST(get_json_object(payload, '$.power') AS DOUBLE) > 5", {},
      ansi, /*shared=*/true);
  EXPECT_FALSE(failing.ok());
}

TEST(BoundFilterTest, SharedSelectOverOtherRowsIsNotConfusedWithTheKeptRows) {
  // The select list bound with the filter's session, evaluated over a batch
  // that has the kept rows' length but other values, parses that batch.
  RecordBatchPtr batch = Events();
  BindSession session;
  ASSERT_OK_AND_ASSIGN(
      ExpressionPtr predicate,
      ParseExpression("kind = 'plug' AND get_json_object(payload, '$.power') > 5"));
  ASSERT_OK_AND_ASSIGN(auto filter, BoundFilter::Make(*predicate, batch->schema, {}, &session));
  ASSERT_OK_AND_ASSIGN(ExpressionPtr item, ParseExpression("get_json_object(payload, '$.power')"));
  ASSERT_OK_AND_ASSIGN(BoundExpressionPtr bound, Bind(*item, batch->schema, {}, &session));
  ASSERT_OK_AND_ASSIGN(RecordBatchPtr kept, filter->Filter(batch, {}));
  ASSERT_EQ(kept->num_rows, 2);
  RecordBatchPtr other = testing::MakeBatch({
      {"kind", testing::StringColumn({"plug", "plug"})},
      {"payload", testing::StringColumn({R"({"power": 1})", std::nullopt})},
  });
  ASSERT_OK_AND_ASSIGN(columnar::ColumnPtr from_other, bound->Evaluate(*other, {}));
  EXPECT_EQ(Render(*from_other), (Rows{"1", "NULL"}));
  ASSERT_OK_AND_ASSIGN(RecordBatchPtr kept_again, filter->Filter(batch, {}));
  ASSERT_OK_AND_ASSIGN(columnar::ColumnPtr from_kept, bound->Evaluate(*kept_again, {}));
  EXPECT_EQ(Render(*from_kept), (Rows{"84.5", "7"}));
}

TEST(BoundFilterTest, BindErrorsAndTypeAreTheWholePredicates) {
  RecordBatchPtr batch = Events();
  ASSERT_OK_AND_ASSIGN(ExpressionPtr unknown, ParseExpression("kind = 'plug' AND nope > 1"));
  Result<std::unique_ptr<BoundFilter>> bad = BoundFilter::Make(*unknown, batch->schema);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("nope"), std::string::npos);
  ASSERT_OK_AND_ASSIGN(ExpressionPtr text, ParseExpression("kind"));
  ASSERT_OK_AND_ASSIGN(auto not_boolean, BoundFilter::Make(*text, batch->schema));
  EXPECT_EQ(not_boolean->type()->id(), columnar::TypeId::kString);
  EXPECT_FALSE(not_boolean->Filter(batch, {}).ok());
}

}  // namespace
}  // namespace silt::expr
