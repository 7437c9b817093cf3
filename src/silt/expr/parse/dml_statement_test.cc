#include "silt/expr/parse/dml_statement.h"

#include <gtest/gtest.h>

namespace silt::expr {
namespace {

TEST(DmlStatementTest, MergeWithEveryClauseKind) {
  Result<DmlStatement> s = ParseDmlStatement(
      "MERGE INTO delta.`/t` AS t USING (SELECT id, v FROM parquet.`/s.parquet` WHERE id > 0) s "
      "ON t.id = s.id "
      "WHEN MATCHED AND s.v IS NULL THEN DELETE "
      "WHEN MATCHED THEN UPDATE SET t.v = s.v, w = 1 "
      "WHEN NOT MATCHED BY TARGET AND s.id < 10 THEN INSERT (id, v) VALUES (s.id, s.v) "
      "WHEN NOT MATCHED THEN INSERT * "
      "WHEN NOT MATCHED BY SOURCE THEN UPDATE SET v = NULL;");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  const auto& m = std::get<MergeStatement>(*s);
  EXPECT_EQ(m.target.path, "/t");
  EXPECT_EQ(m.target.alias, "t");
  EXPECT_EQ(m.source.format, "parquet");
  EXPECT_EQ(m.source.path, "/s.parquet");
  ASSERT_NE(m.source.query, nullptr);
  EXPECT_EQ(m.source.alias, "s");
  ASSERT_EQ(m.clauses.size(), 5u);
  EXPECT_EQ(m.clauses[0].action, MergeActionKind::kDelete);
  ASSERT_NE(m.clauses[0].condition, nullptr);
  EXPECT_EQ(m.clauses[1].action, MergeActionKind::kUpdate);
  ASSERT_EQ(m.clauses[1].assignments.size(), 2u);
  EXPECT_EQ(m.clauses[1].assignments[0].column, (std::vector<std::string>{"t", "v"}));
  EXPECT_EQ(m.clauses[2].match, MergeMatch::kNotMatched);
  EXPECT_EQ(m.clauses[2].assignments.size(), 2u);
  EXPECT_EQ(m.clauses[3].action, MergeActionKind::kInsertAll);
  EXPECT_EQ(m.clauses[4].match, MergeMatch::kNotMatchedBySource);
}

TEST(DmlStatementTest, DeleteAndUpdate) {
  Result<DmlStatement> d = ParseDmlStatement("DELETE FROM delta.`/t` WHERE x > 1");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_NE(std::get<DeleteStatement>(*d).where, nullptr);
  Result<DmlStatement> all = ParseDmlStatement("delete from delta.`/t` t");
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(std::get<DeleteStatement>(*all).where, nullptr);
  Result<DmlStatement> u =
      ParseDmlStatement("UPDATE delta.`/t` SET a = a + 1, b = concat(b, ',') WHERE a = 2");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(std::get<UpdateStatement>(*u).set.size(), 2u);
  EXPECT_TRUE(IsDmlStatement("  update x"));
  EXPECT_FALSE(IsDmlStatement("SELECT 1"));
}

TEST(DmlStatementTest, ClauseOrderFollowsSpark) {
  EXPECT_FALSE(ParseDmlStatement("MERGE INTO delta.`/t` t USING delta.`/s` s ON t.a = s.a "
                                 "WHEN MATCHED THEN DELETE WHEN MATCHED THEN UPDATE SET *")
                   .ok());
  EXPECT_FALSE(ParseDmlStatement("MERGE INTO delta.`/t` t USING delta.`/s` s ON t.a = s.a "
                                 "WHEN NOT MATCHED THEN INSERT * WHEN MATCHED THEN DELETE")
                   .ok());
  EXPECT_FALSE(ParseDmlStatement("MERGE INTO delta.`/t` t USING delta.`/s` s ON t.a = s.a "
                                 "WHEN NOT MATCHED THEN DELETE")
                   .ok());
  EXPECT_FALSE(ParseDmlStatement("MERGE INTO parquet.`/t` t USING delta.`/s` s ON t.a = s.a "
                                 "WHEN MATCHED THEN DELETE")
                   .ok());
}

}  // namespace
}  // namespace silt::expr
