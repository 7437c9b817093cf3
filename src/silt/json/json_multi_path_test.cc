#include "silt/json/json_multi_path.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

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

Rows ToRows(const columnar::Column& column) {
  Rows out;
  for (int64_t row_idx = 0; row_idx < column.length; ++row_idx) {
    if (column.IsNull(row_idx)) {
      out.push_back(std::nullopt);
    } else {
      out.push_back(std::string(column.StringValue(row_idx)));
    }
  }
  return out;
}

const Rows kDocuments = {
    R"({"power":84.3,"voltage":230.1,"state":"ON","linkquality":248})",
    R"({"contact":false,"battery":97,"linkquality":"159","a":{"b":[1,2,{"c":"x"}]}})",
    R"({"a":{"b":[{"c":1},{"c":[2,3]},{"d":4}]},"state":null})",
    R"([{"x":1},{"x":2}])",
    "not json",
    std::nullopt,
    "",
    R"({"big":123456789012345678901234567890,"state":"O\"N"})",
};

const std::vector<std::string> kPaths = {
    "$.power",     "$.state",      "$.linkquality", "$.a.b[2].c", "$.a.b[*].c", "$[*].x",
    "$.a.b[*][*]", "$['contact']", "$.big",         "$",          "$.missing",  "$.a.b[0]",
};

TEST(JsonMultiPathEvaluatorTest, EveryPathMatchesTheSinglePathEvaluator) {
  auto multi = JsonMultiPathEvaluator::Make();
  for (const std::string& path : kPaths) {
    ASSERT_OK_AND_ASSIGN(int index, multi->AddPath(path));
    EXPECT_EQ(index, multi->num_paths() - 1);
  }
  ColumnPtr input = StringColumn(kDocuments);
  // Twice: scratch state carries over between batches.
  for (int round = 0; round < 2; ++round) {
    ASSERT_OK_AND_ASSIGN(std::vector<ColumnPtr> results, multi->Evaluate(*input));
    ASSERT_EQ(results.size(), kPaths.size());
    for (size_t path_idx = 0; path_idx < kPaths.size(); ++path_idx) {
      ASSERT_OK(columnar::ValidateColumn(*results[path_idx]));
      ASSERT_OK_AND_ASSIGN(auto single, JsonPathEvaluator::Make(kPaths[path_idx]));
      ASSERT_OK_AND_ASSIGN(ColumnPtr expected, single->Evaluate(*input));
      EXPECT_EQ(ToRows(*results[path_idx]), ToRows(*expected)) << kPaths[path_idx];
    }
  }
}

TEST(JsonMultiPathEvaluatorTest, SeedPayloadFieldsComeOutUnquoted) {
  auto multi = JsonMultiPathEvaluator::Make();
  ASSERT_OK(multi->AddPath("$.power").status());
  ASSERT_OK(multi->AddPath("$.state").status());
  ASSERT_OK_AND_ASSIGN(std::vector<ColumnPtr> results,
                       multi->Evaluate(*StringColumn({kDocuments[0], std::nullopt})));
  EXPECT_EQ(ToRows(*results[0]), (Rows{"84.3", std::nullopt}));
  EXPECT_EQ(ToRows(*results[1]), (Rows{"ON", std::nullopt}));
}

TEST(JsonMultiPathEvaluatorTest, TopLevelNamesTakeTheFirstNonNullMemberOfEachName) {
  // `$.name` paths share one pass over the members; each keeps Spark's rule.
  auto multi = JsonMultiPathEvaluator::Make();
  for (const char* path : {"$.a", "$.b", "$.c", "$.a.x", "$['b']"}) {
    ASSERT_OK(multi->AddPath(path).status());
  }
  ASSERT_OK_AND_ASSIGN(std::vector<ColumnPtr> results,
                       multi->Evaluate(*StringColumn({
                           R"({"a":null,"b":1,"a":2,"b":3})",
                           R"({"a":{"x":1},"a":{"x":2,"y":3},"c":"s"})",
                           R"({"c":null,"c":null})",
                           R"([{"a":1}])",
                           R"({"a":"\ud800","a":"x","b":"\ud83d\ude00"})",
                       })));
  EXPECT_EQ(ToRows(*results[0]),
            (Rows{"2", R"({"x":1})", std::nullopt, std::nullopt, std::nullopt}));
  EXPECT_EQ(ToRows(*results[1]),
            (Rows{"1", std::nullopt, std::nullopt, std::nullopt, "\xF0\x9F\x98\x80"}));
  EXPECT_EQ(ToRows(*results[2]),
            (Rows{std::nullopt, "s", std::nullopt, std::nullopt, std::nullopt}));
  EXPECT_EQ(ToRows(*results[3]),
            (Rows{std::nullopt, "1", std::nullopt, std::nullopt, std::nullopt}));
  EXPECT_EQ(ToRows(*results[4]), ToRows(*results[1]));
}

TEST(JsonMultiPathEvaluatorTest, ResultColumnsAreWellFormedForEveryRowKind) {
  // The result columns are written in place: each row kind (skipped by the
  // row bitmap, NULL input, no member, text, captured scalar, DOM row) must
  // leave valid offsets, bitmaps and null counts, batch after batch, and an
  // inactive path gives an all-NULL column of its type.
  auto multi = JsonMultiPathEvaluator::Make();
  ASSERT_OK_AND_ASSIGN(int power, multi->AddPath("$.power", true));
  ASSERT_OK_AND_ASSIGN(int state, multi->AddPath("$.state", true));
  ASSERT_OK_AND_ASSIGN(int plain, multi->AddPath("$.power"));
  ASSERT_OK_AND_ASSIGN(int unused, multi->AddPath("$.battery", true));
  multi->SetActive(unused, false);
  ColumnPtr input = StringColumn({
      R"({"power":84.3,"state":"ON"})",
      std::nullopt,
      R"({"power":1,"state":"s"})",
      R"({"other":1})",
      R"({"power":"7","state":{"on":true}})",
      "not json",
  });
  const uint8_t rows[] = {0b111011};  // row 2 skipped
  for (int round = 0; round < 3; ++round) {
    ASSERT_OK_AND_ASSIGN(std::vector<ColumnPtr> results, multi->Evaluate(*input, rows));
    for (const ColumnPtr& result : results) {
      ASSERT_OK(columnar::ValidateColumn(*result));
      EXPECT_EQ(result->length, input->length);
    }
    const columnar::Column& captured = *results[static_cast<size_t>(power)];
    ASSERT_EQ(captured.children.size(), 3u);
    EXPECT_EQ(captured.null_count, 0);
    EXPECT_EQ(ToRows(*captured.children[0]),
              (Rows{std::nullopt, std::nullopt, std::nullopt, std::nullopt, "7", std::nullopt}));
    EXPECT_EQ(captured.children[1]->null_count, 5);
    EXPECT_EQ(captured.children[1]->Value<int8_t>(0), static_cast<int8_t>(CapturedKind::kDouble));
    EXPECT_EQ(
        ToRows(*results[static_cast<size_t>(state)]->children[0]),
        (Rows{"ON", std::nullopt, std::nullopt, std::nullopt, R"({"on":true})", std::nullopt}));
    EXPECT_EQ(ToRows(*results[static_cast<size_t>(plain)]),
              (Rows{"84.3", std::nullopt, std::nullopt, std::nullopt, "7", std::nullopt}));
    const columnar::Column& inactive = *results[static_cast<size_t>(unused)];
    EXPECT_TRUE(inactive.type->Equals(*CapturedType()));
    EXPECT_EQ(inactive.null_count, input->length);
  }
}

TEST(JsonMultiPathEvaluatorTest, CastCaptureConvertsNumbersAndLeavesTheRestAsText) {
  // A path added with a cast writes the numbers it converts exactly into
  // `value` and the path's text of every other row into `text` (the
  // caller's cast decides those); the flat scanner's rows and the DOM's
  // rows alike. Each (cast, ANSI) pair is its own path. Exhaustive value
  // comparisons against the cast of the text are JsonFusedCastTest's.
  auto multi = JsonMultiPathEvaluator::Make();
  ASSERT_OK_AND_ASSIGN(int as_int, multi->AddPath("$.x", true, CaptureCast::kInt, false));
  ASSERT_OK_AND_ASSIGN(int as_int_ansi, multi->AddPath("$.x", true, CaptureCast::kInt, true));
  ASSERT_OK_AND_ASSIGN(int as_bool, multi->AddPath("$.x", true, CaptureCast::kBoolean, false));
  ASSERT_OK_AND_ASSIGN(int unused, multi->AddPath("$.x", true, CaptureCast::kDouble, false));
  EXPECT_EQ(multi->AddPath("$.x", true, CaptureCast::kInt, true).ValueOrDie(), as_int_ansi);
  EXPECT_EQ(multi->num_paths(), 4);
  multi->SetActive(unused, false);
  ColumnPtr input = StringColumn({
      R"({"x":21.5})",
      R"({"x":7})",
      R"({"x":"7"})",
      R"({"x":1e20})",
      R"({"x":true})",
      std::nullopt,
      R"({"y":1})",
      R"({"x":1, "n":{"a":1}})",
      R"({"\u0078":0})",
  });
  for (int round = 0; round < 2; ++round) {
    ASSERT_OK_AND_ASSIGN(std::vector<ColumnPtr> results, multi->Evaluate(*input));
    for (const ColumnPtr& result : results) {
      ASSERT_OK(columnar::ValidateColumn(*result));
      ASSERT_EQ(result->children.size(), 2u);
    }
    const columnar::Column& plain = *results[static_cast<size_t>(as_int)];
    EXPECT_TRUE(plain.type->Equals(*CapturedCastType(CaptureCast::kInt)));
    const std::optional<std::string> n = std::nullopt;
    EXPECT_EQ(ToRows(*plain.children[0]), (Rows{n, n, "7", "1.0E20", "true", n, n, n, n}));
    const columnar::Column& ints = *plain.children[1];
    EXPECT_EQ(ints.null_count, 5);
    EXPECT_EQ(ints.Value<int32_t>(0), 21);
    EXPECT_EQ(ints.Value<int32_t>(1), 7);
    EXPECT_EQ(ints.Value<int32_t>(7), 1);
    EXPECT_EQ(ints.Value<int32_t>(8), 0);
    // ANSI: the fraction goes to the text.
    const columnar::Column& ansi = *results[static_cast<size_t>(as_int_ansi)];
    EXPECT_EQ(ToRows(*ansi.children[0]), (Rows{"21.5", n, "7", "1.0E20", "true", n, n, n, n}));
    EXPECT_TRUE(ansi.children[1]->IsNull(0));
    const columnar::Column& bools = *results[static_cast<size_t>(as_bool)];
    EXPECT_EQ(ToRows(*bools.children[0]), (Rows{"21.5", "7", "7", "1.0E20", n, n, n, n, n}));
    EXPECT_TRUE(bools.children[1]->BoolValue(4));
    EXPECT_TRUE(bools.children[1]->BoolValue(7));
    EXPECT_FALSE(bools.children[1]->BoolValue(8));
    EXPECT_EQ(bools.children[1]->null_count, 6);
    const columnar::Column& inactive = *results[static_cast<size_t>(unused)];
    EXPECT_TRUE(inactive.type->Equals(*CapturedCastType(CaptureCast::kDouble)));
    EXPECT_EQ(inactive.null_count, input->length);
  }
}

// A row of a string or captured result column as text ("null", "s:<text>",
// "k<kind>:<bits>").
std::vector<std::string> RenderResult(const columnar::Column& column) {
  std::vector<std::string> out;
  const bool captured = column.type->id() == columnar::TypeId::kStruct;
  for (int64_t row_idx = 0; row_idx < column.length; ++row_idx) {
    const columnar::Column& text = captured ? *column.children[0] : column;
    if (captured && column.children[1]->IsValid(row_idx)) {
      out.push_back("k" + std::to_string(column.children[1]->Value<int8_t>(row_idx)) + ":" +
                    std::to_string(column.children[2]->Value<int64_t>(row_idx)));
    } else if (text.IsValid(row_idx)) {
      out.push_back("s:" + std::string(text.StringValue(row_idx)));
    } else {
      out.push_back("null");
    }
  }
  return out;
}

TEST(JsonMultiPathEvaluatorTest, KeyTableFindsExactlyTheNamesTheDomPathFinds) {
  // The flat rows' `$.name` lookup compares a name's length and first and
  // last words: names of every length around the 4-, 8- and 16-byte word
  // edges, names that differ only where the words do not reach (past 16
  // bytes), prefixes of each other, an empty key, a name read by several
  // paths (captured and not, `$.a` and `$['a']`), and more names than the
  // table's first size. Every result must be the DOM path's.
  std::vector<std::string> names = {"a",
                                    "ab",
                                    "abc",
                                    "abcd",
                                    "abcde",
                                    "abcdefg",
                                    "abcdefgh",
                                    "abcdefghi",
                                    "abcdefghijklmnop",
                                    "abcdefghijklmnopq",
                                    "abcdefghXjklmnopqrst",
                                    "abcdefghYjklmnopqrst",
                                    "abcdefghijklmnopqrst",
                                    "bcde",
                                    "abce",
                                    "ebcd",
                                    "state",
                                    "power",
                                    "voltage",
                                    "current",
                                    "contact",
                                    "battery"};
  for (int extra = 0; extra < 24; ++extra) names.push_back("n" + std::to_string(extra * 37));
  std::vector<std::string> paths;
  for (const std::string& name : names) paths.push_back("$['" + name + "']");
  paths.push_back("$.a");
  paths.push_back("$.state");
  std::vector<std::string> docs;
  for (size_t shift = 0; shift < 5; ++shift) {
    std::string doc = "{";
    for (size_t name_idx = 0; name_idx < names.size(); ++name_idx) {
      const std::string& name = names[(name_idx * 7 + shift) % names.size()];
      if ((name_idx + shift) % 4 == 0) continue;  // some names missing
      if (doc.size() > 1) doc += ",";
      // A null first (skipped), then a value; the same name again later
      // (the first non-null member decides).
      const std::string value = (name_idx % 3 == 0)   ? std::to_string(name_idx * 11)
                                : (name_idx % 3 == 1) ? "\"v" + std::to_string(name_idx) + "\""
                                                      : (shift % 2 == 0 ? "true" : "2.5");
      doc += "\"" + name + "\":null,\"" + name + "\":" + value + ",\"" + name + "\":\"later\"";
    }
    docs.push_back(doc + "}");
  }
  docs.push_back(R"({"abcdefghZjklmnopqrst":1,"abcdefghijklmnopqrs":2,"abcdefghijklmnopqrstu":3})");
  docs.push_back(R"({"ab":1,"abc":null,"abcd":"x","":5,"a":false})");
  Rows input_rows(docs.begin(), docs.end());
  input_rows.push_back(std::nullopt);
  input_rows.push_back("not json");
  ColumnPtr input = StringColumn(input_rows);
  auto fast = JsonMultiPathEvaluator::Make();
  auto dom = JsonMultiPathEvaluator::Make();
  for (bool capture : {false, true}) {
    for (const std::string& path : paths) {
      ASSERT_OK(fast->AddPath(path, capture).status());
      ASSERT_OK(dom->AddPath(path, capture).status());
    }
  }
  // A nested path sends every row of `dom` through the DOM.
  ASSERT_OK(dom->AddPath("$.z.z").status());
  for (int round = 0; round < 2; ++round) {
    ASSERT_OK_AND_ASSIGN(std::vector<ColumnPtr> fast_out, fast->Evaluate(*input));
    ASSERT_OK_AND_ASSIGN(std::vector<ColumnPtr> dom_out, dom->Evaluate(*input));
    for (int path_idx = 0; path_idx < fast->num_paths(); ++path_idx) {
      ASSERT_OK(columnar::ValidateColumn(*fast_out[static_cast<size_t>(path_idx)]));
      EXPECT_EQ(RenderResult(*fast_out[static_cast<size_t>(path_idx)]),
                RenderResult(*dom_out[static_cast<size_t>(path_idx)]))
          << paths[static_cast<size_t>(path_idx) % paths.size()];
    }
  }
  // The flat rows found their names (the test is not vacuous).
  ASSERT_OK_AND_ASSIGN(std::vector<ColumnPtr> out, fast->Evaluate(*input));
  EXPECT_EQ(RenderResult(*out[12])[docs.size() - 2], "null");  // "abcdefghijklmnopqrst"
  EXPECT_EQ(RenderResult(*out[1])[docs.size() - 1], "s:1");    // "ab"
}

TEST(JsonMultiPathEvaluatorTest, AddingAPathTwiceReusesIt) {
  auto multi = JsonMultiPathEvaluator::Make();
  ASSERT_OK_AND_ASSIGN(int first, multi->AddPath("$.a"));
  ASSERT_OK_AND_ASSIGN(int second, multi->AddPath("$.b"));
  ASSERT_OK_AND_ASSIGN(int again, multi->AddPath("$.a"));
  EXPECT_EQ(first, 0);
  EXPECT_EQ(second, 1);
  EXPECT_EQ(again, 0);
  EXPECT_EQ(multi->num_paths(), 2);
}

TEST(JsonMultiPathEvaluatorTest, MalformedPathIsRejectedWithItsPosition) {
  auto multi = JsonMultiPathEvaluator::Make();
  Result<int> added = multi->AddPath("$.a[x]");
  ASSERT_FALSE(added.ok());
  EXPECT_NE(added.status().message().find("$.a[x]"), std::string::npos);
  EXPECT_EQ(multi->num_paths(), 0);
}

TEST(JsonMultiPathEvaluatorTest, NonStringInputIsRejected) {
  auto multi = JsonMultiPathEvaluator::Make();
  ColumnBuilder builder(DataType::Int());
  builder.Append<int32_t>(1);
  ASSERT_RAISES(InvalidArgument, multi->Evaluate(*builder.Finish()));
}

}  // namespace
}  // namespace silt::json
