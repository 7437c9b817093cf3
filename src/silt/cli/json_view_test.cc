#include "silt/cli/json_view.h"

#include <gtest/gtest.h>

namespace silt::cli {
namespace {

TEST(JsonViewTest, ReadsCommitInfoMembers) {
  auto view = JsonObjectView::Parse(
      R"({"timestamp":1750583761000,"operation":"STREAMING UPDATE",)"
      R"("operationParameters":{"outputMode":"Append","epochId":"0","n":3}})");
  ASSERT_TRUE(view.has_value());
  EXPECT_EQ(view->GetInt("timestamp"), 1750583761000);
  EXPECT_EQ(view->GetString("operation"), "STREAMING UPDATE");
  EXPECT_EQ(view->GetJson("operationParameters"), R"({"outputMode":"Append","epochId":"0","n":3})");
  auto entries = view->GetObjectEntries("operationParameters");
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0], (std::pair<std::string, std::string>("outputMode", "Append")));
  EXPECT_EQ(entries[2], (std::pair<std::string, std::string>("n", "3")));
}

TEST(JsonViewTest, MissingOrMistypedMembersAreEmpty) {
  auto view = JsonObjectView::Parse(R"({"a":"text"})");
  ASSERT_TRUE(view.has_value());
  EXPECT_FALSE(view->GetInt("a").has_value());
  EXPECT_FALSE(view->GetString("b").has_value());
  EXPECT_TRUE(view->GetObjectEntries("a").empty());
}

TEST(JsonViewTest, RejectsTextThatIsNotAJsonObject) {
  EXPECT_FALSE(JsonObjectView::Parse("[1,2]").has_value());
  EXPECT_FALSE(JsonObjectView::Parse("{\"a\":").has_value());
  EXPECT_TRUE(IsValidJson(R"({"logOffset":3})"));
  EXPECT_TRUE(IsValidJson("42"));
  EXPECT_FALSE(IsValidJson("-"));
}

}  // namespace
}  // namespace silt::cli
