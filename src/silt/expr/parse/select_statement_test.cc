#include "silt/expr/parse/select_statement.h"

#include <gtest/gtest.h>

namespace silt::expr {
namespace {

TEST(SelectStatementTest, AllClauses) {
  Result<SelectStatement> s = ParseSelectStatement(
      "SELECT device_type AS t, count(*) AS n, sum(x) FROM delta.`/tmp/t` VERSION AS OF 3 "
      "WHERE x > 1 AND f(a, b) GROUP BY device_type HAVING count(*) > 2 "
      "ORDER BY n DESC, t ASC NULLS LAST, 1 LIMIT 5;");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->select.size(), 3u);
  EXPECT_EQ(s->select[0]->OutputName(), "t");
  EXPECT_EQ(s->select[2]->OutputName(), "sum(x)");
  EXPECT_EQ(s->table_path, "/tmp/t");
  EXPECT_EQ(s->version, 3);
  EXPECT_FALSE(s->timestamp);
  ASSERT_NE(s->where, nullptr);
  ASSERT_EQ(s->group_by.size(), 1u);
  ASSERT_NE(s->having, nullptr);
  ASSERT_EQ(s->order_by.size(), 3u);
  EXPECT_FALSE(s->order_by[0].ascending);
  EXPECT_FALSE(s->order_by[0].nulls_first);
  EXPECT_TRUE(s->order_by[1].ascending);
  EXPECT_FALSE(s->order_by[1].nulls_first);
  EXPECT_TRUE(s->order_by[2].nulls_first);
  EXPECT_EQ(s->limit, 5);
}

TEST(SelectStatementTest, TimestampAndMinimal) {
  Result<SelectStatement> s =
      ParseSelectStatement("select * from delta.`s3://b/t` timestamp as of '2024-01-01 10:00:00'");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->timestamp, "2024-01-01 10:00:00");
  EXPECT_EQ(s->table_path, "s3://b/t");
  EXPECT_TRUE(s->select[0]->IsStar());
  EXPECT_EQ(s->where, nullptr);
}

TEST(SelectStatementTest, ClauseWordsInsideParenthesesAndStrings) {
  Result<SelectStatement> s = ParseSelectStatement(
      "SELECT concat('from ', `where`) FROM delta.`p` WHERE x IN (1, 2) ORDER BY (x)");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->select.size(), 1u);
  EXPECT_EQ(s->order_by.size(), 1u);
}

TEST(SelectStatementTest, Errors) {
  EXPECT_FALSE(ParseSelectStatement("SELECT x").ok());
  EXPECT_FALSE(ParseSelectStatement("SELECT x FROM t").ok());
  EXPECT_FALSE(ParseSelectStatement("SELECT x FROM delta.`p` LIMIT x").ok());
  EXPECT_FALSE(ParseSelectStatement("SELECT x FROM delta.`p` WHERE").ok());
  EXPECT_FALSE(ParseSelectStatement("SELECT x FROM delta.`p` ORDER BY x WHERE y").ok());
  Result<SelectStatement> distinct = ParseSelectStatement("SELECT DISTINCT x FROM delta.`p`");
  EXPECT_EQ(distinct.status().code(), StatusCode::kNotSupported);
}

TEST(SelectStatementTest, ExpressionList) {
  Result<std::vector<NodePtr>> list = ParseExpressionList("a, f(b, c) AS d, e + 1");
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  ASSERT_EQ(list->size(), 3u);
  EXPECT_EQ((*list)[1]->OutputName(), "d");
}

TEST(SelectStatementTest, ClausesAsSpans) {
  const std::string sql = "SELECT id * 10 AS tens, f(a, 'x, y') , FROM  input WHERE id >= 2";
  Result<SelectClauses> c = SplitSelectStatement(sql, "a sql step");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->select_items.size(), 3u);
  auto text = [&](TextSpan span) { return sql.substr(span.begin, span.end - span.begin); };
  EXPECT_EQ(text(c->select_items[0]), " id * 10 AS tens");
  EXPECT_EQ(text(c->select_items[1]), " f(a, 'x, y') ");
  EXPECT_EQ(text(c->select_items[2]), " ");
  const SelectClauseSpan* from = c->Find(SelectClause::kFrom);
  ASSERT_NE(from, nullptr);
  EXPECT_EQ(text(from->body), "input ");
  const SelectClauseSpan* where = c->Find(SelectClause::kWhere);
  ASSERT_NE(where, nullptr);
  EXPECT_EQ(sql.substr(where->keyword, 5), "WHERE");
  EXPECT_EQ(text(where->body), "id >= 2");
  EXPECT_EQ(c->Find(SelectClause::kLimit), nullptr);

  // FROM and empty bodies are the caller's to check; order and joins are not.
  EXPECT_TRUE(SplitSelectStatement("SELECT a", "x").ok());
  EXPECT_FALSE(SplitSelectStatement("SELECT a WHERE b FROM c", "x").ok());
  Result<SelectClauses> join = SplitSelectStatement("SELECT a FROM b JOIN c", "a sql step");
  EXPECT_EQ(join.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(join.status().message().find("by a sql step"), std::string::npos);
  // A caller that parses joins itself gets them inside the FROM body.
  const std::string joined = "SELECT a FROM b LEFT JOIN c USING (k) WHERE a > 1";
  Result<SelectClauses> in_from = SplitSelectStatement(joined, "x", /*joins_in_from=*/true);
  ASSERT_TRUE(in_from.ok()) << in_from.status().ToString();
  const SelectClauseSpan* join_from = in_from->Find(SelectClause::kFrom);
  ASSERT_NE(join_from, nullptr);
  EXPECT_EQ(joined.substr(join_from->body.begin, join_from->body.end - join_from->body.begin),
            "b LEFT JOIN c USING (k) ");
  EXPECT_FALSE(SplitSelectStatement("SELECT a JOIN b FROM c", "x", true).ok());
}

}  // namespace
}  // namespace silt::expr
