#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "silt/base/json_writer.h"
#include "silt/columnar/builder.h"
#include "silt/json/json_decoder.h"
#include "silt/json/json_test_util.h"
#include "silt/testing/gtest_util.h"

namespace silt::json {
namespace {

using columnar::ColumnBuilder;
using columnar::ColumnPtr;
using columnar::DataType;
using test_util::Rows;
using test_util::StringColumn;

constexpr char kSeedPayload[] = R"({"power":84.3,"voltage":230.1,"state":"ON","linkquality":248})";

Result<Rows> GetJsonObject(const Rows& rows, std::string_view path) {
  SILT_ASSIGN_OR_RETURN(auto evaluator, JsonPathEvaluator::Make(path));
  SILT_ASSIGN_OR_RETURN(ColumnPtr out, evaluator->Evaluate(*StringColumn(rows)));
  SILT_RETURN_NOT_OK(columnar::ValidateColumn(*out));
  Rows values;
  for (int64_t row = 0; row < out->length; ++row) {
    if (out->IsNull(row)) {
      values.push_back(std::nullopt);
    } else {
      values.push_back(std::string(out->StringValue(row)));
    }
  }
  return values;
}

// get_json_object over one document.
Result<std::optional<std::string>> Get(std::string_view json, std::string_view path) {
  SILT_ASSIGN_OR_RETURN(Rows values, GetJsonObject({std::string(json)}, path));
  return values[0];
}

TEST(JsonPathTest, SeedPayloadKeysComeBackAsSparkPrintsThem) {
  Rows rows = {kSeedPayload, std::nullopt, R"({"contact":false,"battery":97})"};
  struct Case {
    const char* path;
    std::optional<std::string> first;
    std::optional<std::string> third;
  };
  for (const Case& c :
       {Case{"$.power", "84.3", std::nullopt}, Case{"$.voltage", "230.1", std::nullopt},
        Case{"$.state", "ON", std::nullopt}, Case{"$.linkquality", "248", std::nullopt},
        Case{"$.contact", std::nullopt, "false"}, Case{"$.battery", std::nullopt, "97"},
        Case{"$.current", std::nullopt, std::nullopt}}) {
    SCOPED_TRACE(c.path);
    ASSERT_OK_AND_ASSIGN(Rows values, GetJsonObject(rows, c.path));
    ASSERT_EQ(values.size(), 3u);
    EXPECT_EQ(values[0], c.first);
    EXPECT_EQ(values[1], std::nullopt);
    EXPECT_EQ(values[2], c.third);
  }
}

TEST(JsonPathTest, RootAndContainersAreCompactJson) {
  const char* doc = R"( { "a" : [1, 2.50, "x"], "b": {"c": "d", "e": null} } )";
  ASSERT_OK_AND_ASSIGN(auto root, Get(doc, "$"));
  EXPECT_EQ(root, R"({"a":[1,2.5,"x"],"b":{"c":"d","e":null}})");
  ASSERT_OK_AND_ASSIGN(auto b, Get(doc, "$.b"));
  EXPECT_EQ(b, R"({"c":"d","e":null})");
  ASSERT_OK_AND_ASSIGN(auto c, Get(doc, "$['b']['c']"));
  EXPECT_EQ(c, "d");
  ASSERT_OK_AND_ASSIGN(auto a1, Get(doc, "$.a[1]"));
  EXPECT_EQ(a1, "2.5");
  ASSERT_OK_AND_ASSIGN(auto a2, Get(doc, "$.a[2]"));
  EXPECT_EQ(a2, "x");
  ASSERT_OK_AND_ASSIGN(auto a9, Get(doc, "$.a[9]"));
  EXPECT_EQ(a9, std::nullopt);
  ASSERT_OK_AND_ASSIGN(auto top_index, Get(R"(["x", 2])", "$[0]"));
  EXPECT_EQ(top_index, "x");
}

TEST(JsonPathTest, NullMissingAndMalformedGiveNull) {
  ASSERT_OK_AND_ASSIGN(Rows values, GetJsonObject({R"({"a":null})", R"({"b":1})", R"({"a":1)",
                                                   "not json", R"({"a":{"b":1}})", std::nullopt},
                                                  "$.a"));
  EXPECT_EQ(values[0], std::nullopt);
  EXPECT_EQ(values[1], std::nullopt);
  EXPECT_EQ(values[2], std::nullopt);
  EXPECT_EQ(values[3], std::nullopt);
  EXPECT_EQ(values[4], R"({"b":1})");
  EXPECT_EQ(values[5], std::nullopt);
  // Names are case-sensitive, unlike the decoder's fallback.
  ASSERT_OK_AND_ASSIGN(auto upper, Get(R"({"A":1})", "$.a"));
  EXPECT_EQ(upper, std::nullopt);
  // A JSON null reached by index is written as the text null, as in Spark.
  ASSERT_OK_AND_ASSIGN(auto null_element, Get("[null]", "$[0]"));
  EXPECT_EQ(null_element, "null");
}

TEST(JsonPathTest, FirstNonNullDuplicateKeyWins) {
  ASSERT_OK_AND_ASSIGN(auto first, Get(R"({"a":1,"a":2})", "$.a"));
  EXPECT_EQ(first, "1");
  ASSERT_OK_AND_ASSIGN(auto skip_null, Get(R"({"a":null,"a":2})", "$.a"));
  EXPECT_EQ(skip_null, "2");
  ASSERT_OK_AND_ASSIGN(auto deeper, Get(R"({"a":{"x":1},"a":{"y":2}})", "$.a.y"));
  EXPECT_EQ(deeper, "2");
}

TEST(JsonPathTest, NumbersAreReprintedAndStringsUnescaped) {
  ASSERT_OK_AND_ASSIGN(auto decimal, Get(R"({"a":1.50})", "$.a"));
  EXPECT_EQ(decimal, "1.5");
  ASSERT_OK_AND_ASSIGN(auto exponent, Get(R"({"a":1e2})", "$.a"));
  EXPECT_EQ(exponent, "100.0");
  ASSERT_OK_AND_ASSIGN(auto big, Get(R"({"a":123456789012345678901234567890})", "$.a"));
  EXPECT_EQ(big, "123456789012345678901234567890");
  ASSERT_OK_AND_ASSIGN(auto text, Get(R"({"a":"line\nbreak \u00e9 \"q\""})", "$.a"));
  EXPECT_EQ(text, "line\nbreak \xc3\xa9 \"q\"");
  ASSERT_OK_AND_ASSIGN(auto boolean, Get(R"({"a":true})", "$.a"));
  EXPECT_EQ(boolean, "true");
}

TEST(JsonPathTest, DoublesPrintAsJavasDoubleToString) {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> exponent(-12, 12);
  std::uniform_int_distribution<int64_t> mantissa(-99999999, 99999999);
  std::uniform_int_distribution<int> decimals(0, 9);
  Rows rows;
  std::vector<double> values = {84.3, 230.1, 0.001, 9999999.0, 1e7, 0.000999, 100.0, -0.5};
  for (int i = 0; i < 2000; ++i) {
    values.push_back(std::pow(10.0, exponent(rng)) * (i % 2 == 0 ? 1 : -1));
    values.push_back(static_cast<double>(mantissa(rng)) / std::pow(10.0, decimals(rng)));
  }
  for (double v : values) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.17g", v);
    std::string number = buf;
    // Keep it a JSON float token: integers would stay integers.
    if (number.find_first_of(".e") == std::string::npos) number += ".0";
    rows.push_back("{\"a\":" + number + "}");
  }
  ASSERT_OK_AND_ASSIGN(Rows printed, GetJsonObject(rows, "$.a"));
  for (size_t i = 0; i < values.size(); ++i) {
    ASSERT_EQ(printed[i], FormatDoubleJava(values[i])) << *rows[i];
  }
}

TEST(JsonPathTest, WildcardsFollowHiveRules) {
  const char* doc = R"({"a":[{"b":1},{"c":2},{"b":"three"}],"one":["x"],"n":[[1,2],[3,[4]]]})";
  ASSERT_OK_AND_ASSIGN(auto all, Get(doc, "$.a[*].b"));
  EXPECT_EQ(all, R"([1,"three"])");
  // A single match is unwrapped but stays quoted.
  ASSERT_OK_AND_ASSIGN(auto single, Get(doc, "$.one[*]"));
  EXPECT_EQ(single, R"("x")");
  ASSERT_OK_AND_ASSIGN(auto none, Get(doc, "$.a[*].zzz"));
  EXPECT_EQ(none, std::nullopt);
  ASSERT_OK_AND_ASSIGN(auto flattened, Get(doc, "$.n[*][*]"));
  EXPECT_EQ(flattened, "[1,2,3,4]");
  ASSERT_OK_AND_ASSIGN(auto nested, Get(doc, "$.n[*]"));
  EXPECT_EQ(nested, "[[1,2],[3,[4]]]");
  ASSERT_OK_AND_ASSIGN(auto index_then_all, Get(doc, "$.n[0][*]"));
  EXPECT_EQ(index_then_all, "[1,2]");
  ASSERT_OK_AND_ASSIGN(auto object_wildcard, Get(doc, "$.*"));
  EXPECT_EQ(object_wildcard, std::nullopt);  // parses, but never matches in Spark
}

TEST(JsonPathTest, PathNamesFollowSparksGrammar) {
  ASSERT_OK_AND_ASSIGN(auto dotted, Get(R"({"a.b":1,"a":{"b":2}})", "$['a.b']"));
  EXPECT_EQ(dotted, "1");
  ASSERT_OK_AND_ASSIGN(auto spaced, Get(R"({"a b":1})", "$.a b"));
  EXPECT_EQ(spaced, "1");
  ASSERT_OK_AND_ASSIGN(auto bracket_in_name, Get(R"({"a]":1})", "$.a]"));
  EXPECT_EQ(bracket_in_name, "1");
}

TEST(JsonPathTest, MalformedPathsAreRejectedWithTheirPosition) {
  for (std::string_view path : {"", "a", "$.", "$[", "$[1", "$[a]", "$.a[", "$['a'", "$['']",
                                " $.a", "$[99999999999999999999]"}) {
    SCOPED_TRACE(path);
    auto evaluator = JsonPathEvaluator::Make(path);
    ASSERT_RAISES(InvalidArgument, evaluator);
    EXPECT_NE(evaluator.status().message().find("position"), std::string::npos);
    EXPECT_NE(evaluator.status().message().find(std::string("'") + std::string(path) + "'"),
              std::string::npos)
        << evaluator.status().ToString();
  }
  for (std::string_view path :
       {"$", "$.a", "$[0]", "$[*]", "$.*", "$['*']", "$['a']", "$.a[0].b ", "$[ 1]"}) {
    SCOPED_TRACE(path);
    EXPECT_OK(JsonPathEvaluator::Make(path));
  }
}

TEST(JsonPathTest, EvaluateRejectsNonStringInput) {
  ASSERT_OK_AND_ASSIGN(auto evaluator, JsonPathEvaluator::Make("$.a"));
  ColumnBuilder ints(DataType::Int());
  ints.Append<int32_t>(1);
  ASSERT_RAISES(InvalidArgument, evaluator->Evaluate(*ints.Finish()));
}

TEST(JsonPathTest, EvaluatorIsReusableAcrossBatches) {
  ASSERT_OK_AND_ASSIGN(auto evaluator, JsonPathEvaluator::Make("$.v[*]"));
  for (int batch = 0; batch < 3; ++batch) {
    Rows rows;
    for (int row = 0; row < 100; ++row) {
      rows.push_back(R"({"v":[)" + std::to_string(batch) + "," + std::to_string(row) + "]}");
    }
    ASSERT_OK_AND_ASSIGN(ColumnPtr out, evaluator->Evaluate(*StringColumn(rows)));
    for (int row = 0; row < 100; ++row) {
      EXPECT_EQ(out->StringValue(row),
                "[" + std::to_string(batch) + "," + std::to_string(row) + "]");
    }
  }
}

}  // namespace
}  // namespace silt::json
