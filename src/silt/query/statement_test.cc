#include "silt/query/statement.h"

#include <gtest/gtest.h>

namespace silt::query {
namespace {

TEST(StatementTest, AllClauses) {
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

TEST(StatementTest, TimestampAndMinimal) {
  Result<SelectStatement> s =
      ParseSelectStatement("select * from delta.`s3://b/t` timestamp as of '2024-01-01 10:00:00'");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->timestamp, "2024-01-01 10:00:00");
  EXPECT_EQ(s->table_path, "s3://b/t");
  EXPECT_TRUE(s->select[0]->IsStar());
  EXPECT_EQ(s->where, nullptr);
}

TEST(StatementTest, ClauseWordsInsideParenthesesAndStrings) {
  Result<SelectStatement> s = ParseSelectStatement(
      "SELECT concat('from ', `where`) FROM delta.`p` WHERE x IN (1, 2) ORDER BY (x)");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->select.size(), 1u);
  EXPECT_EQ(s->order_by.size(), 1u);
}

TEST(StatementTest, Errors) {
  EXPECT_FALSE(ParseSelectStatement("SELECT x").ok());
  EXPECT_FALSE(ParseSelectStatement("SELECT x FROM t").ok());
  EXPECT_FALSE(ParseSelectStatement("SELECT x FROM delta.`p` LIMIT x").ok());
  EXPECT_FALSE(ParseSelectStatement("SELECT x FROM delta.`p` WHERE").ok());
  EXPECT_FALSE(ParseSelectStatement("SELECT x FROM delta.`p` ORDER BY x WHERE y").ok());
  Result<SelectStatement> distinct = ParseSelectStatement("SELECT DISTINCT x FROM delta.`p`");
  EXPECT_EQ(distinct.status().code(), StatusCode::kNotSupported);
}

TEST(StatementTest, ExpressionList) {
  Result<std::vector<expr::NodePtr>> list = ParseExpressionList("a, f(b, c) AS d, e + 1");
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  ASSERT_EQ(list->size(), 3u);
  EXPECT_EQ((*list)[1]->OutputName(), "d");
}

}  // namespace
}  // namespace silt::query
