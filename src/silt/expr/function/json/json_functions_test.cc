#include <gtest/gtest.h>

#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "silt/columnar/builder.h"
#include "silt/expr/kernel/bind_session_internal.h"
#include "silt/expr/test_util.h"
#include "silt/testing/gtest_util.h"

namespace silt::expr {
namespace {

using columnar::ColumnPtr;
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
            (Rows{"{1, x}", "{null, null}", "{null, null}", "NULL", "{null, null}"}));
}

TEST_F(JsonFunctionsTest, MalformedTextGivesAStructOfNullsNotANullStruct) {
  EXPECT_EQ(EvalRender("from_json(j, 'a INT') IS NULL", *batch_),
            (Rows{"false", "false", "false", "true", "false"}));
  // Keys match case-sensitively: "A" is not "a".
  EXPECT_EQ(EvalRender("from_json(j, 'a INT').a", *batch_),
            (Rows{"1", "NULL", "NULL", "NULL", "NULL"}));
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

TEST(JsonFunctionsFailFastTest, MapAndArraySchemasFailOnTheFirstBadRecord) {
  // Spark 3.5: an empty text or a NULL is NULL; JSON null, a value of the
  // wrong type, a container of the wrong kind or a broken text is an error.
  auto maps = MakeBatch({{"j", StringColumn({R"({"a": 1, "b": null})", "", std::nullopt,
                                             R"({"a": 1} trailing)", R"({"a": "x"})", "null"})}});
  Rows r = EvalRender("from_json(j, 'MAP<STRING, INT>', map('mode', 'FAILFAST'))", *maps);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_NE(r[0].find("Malformed JSON in from_json with mode FAILFAST (row 4): {\"a\": \"x\"}"),
            std::string::npos)
      << r[0];
  auto good_maps = columnar::SliceBatch(*maps, 0, 4);
  EXPECT_EQ(EvalRender("from_json(j, 'MAP<STRING, INT>', map('mode', 'FAILFAST'))", *good_maps),
            (Rows{"{a -> 1, b -> null}", "NULL", "NULL", "{a -> 1}"}));

  for (const char* bad : {"null", "[1, \"x\"]", "{\"a\": 1}", "[1, 2", "1"}) {
    auto batch = MakeBatch({{"j", StringColumn({"[1, null]", bad})}});
    Rows out = EvalRender("from_json(j, 'ARRAY<INT>', map('mode', 'FAILFAST'))", *batch);
    ASSERT_EQ(out.size(), 1u) << bad;
    EXPECT_NE(out[0].find("FAILFAST (row 1)"), std::string::npos) << out[0];
  }
  // ARRAY<STRUCT>: a single object is a one-element array; a field of the
  // wrong type is a bad record.
  auto structs = MakeBatch({{"j", StringColumn({R"([{"a": 1}, null])", R"({"a": 2})", "[]"})}});
  EXPECT_EQ(EvalRender("from_json(j, 'ARRAY<STRUCT<a: INT>>', map('mode', 'FAILFAST'))", *structs),
            (Rows{"[{1}, null]", "[{2}]", "[]"}));
  auto wrong = MakeBatch({{"j", StringColumn({R"([{"a": 1}])", R"([{"a": "x"}])"})}});
  Rows w = EvalRender("from_json(j, 'ARRAY<STRUCT<a: INT>>', map('mode', 'FAILFAST'))", *wrong);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("FAILFAST (row 1)"), std::string::npos) << w[0];
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
  Rows option = EvalRender("from_json(j, 'a INT', map('locale', 'de-DE'))", *batch_);
  EXPECT_NE(option[0].find("option 'locale' = 'de-DE'"), std::string::npos) << option[0];
  Rows pattern =
      EvalRender("from_json(j, 'a INT', map('timestampFormat', 'yyyy-MM-dd qqqq'))", *batch_);
  EXPECT_NE(pattern[0].find("option 'timestampFormat'"), std::string::npos) << pattern[0];
  Rows flag = EvalRender("from_json(j, 'a INT', map('allowComments', 'yes'))", *batch_);
  EXPECT_NE(flag[0].find("must be true or false"), std::string::npos) << flag[0];
  Rows mode = EvalRender("from_json(j, 'a INT', map('mode', 'DROPMALFORMED'))", *batch_);
  EXPECT_NE(mode[0].find("supports modes PERMISSIVE, FAILFAST and DEADLETTER"), std::string::npos)
      << mode[0];
}

TEST_F(JsonFunctionsTest, DeadLetterModeReportsTheRowsPermissiveMarksCorrupt) {
  EvalOptions options;
  options.dead_letter = true;
  RowErrors errors;
  EvalContext ctx;
  ctx.row_errors = &errors;
  // Rows 1 (a string for INT) and 2 (not JSON) are PERMISSIVE's corrupt
  // records; the values read as PERMISSIVE gives them.
  EXPECT_EQ(EvalRender("from_json(j, 'a INT', map('mode', 'DEADLETTER')).a", *batch_, options, ctx),
            (Rows{"1", "NULL", "NULL", "NULL", "NULL"}));
  EXPECT_EQ(errors.rows, (std::vector<int64_t>{1, 2}));
  ASSERT_EQ(errors.kinds.size(), 2u);
  EXPECT_EQ(errors.kinds[0], RowErrorKind::kMalformedJson);
  EXPECT_NE(errors.messages[0].find("Malformed record in from_json(j)"), std::string::npos)
      << errors.messages[0];
  // MAP / ARRAY schemas report their NULL-but-not-blank rows the same way.
  errors.Clear();
  auto maps = MakeBatch({{"j", StringColumn({R"({"k": 1})", "[", std::nullopt, " "})}});
  EXPECT_EQ(EvalRender("from_json(j, 'MAP<STRING, INT>', map('mode', 'DEADLETTER'))", *maps,
                       options, ctx),
            (Rows{"{k -> 1}", "NULL", "NULL", "NULL"}));
  EXPECT_EQ(errors.rows, (std::vector<int64_t>{1}));
  // Without an error vector it fails as FAILFAST; without a deadLetter table
  // it does not bind.
  Rows failfast = EvalRender("from_json(j, 'a INT', map('mode', 'DEADLETTER'))", *batch_, options);
  EXPECT_NE(failfast[0].find("(row 1)"), std::string::npos) << failfast[0];
  Rows unbound = EvalRender("from_json(j, 'a INT', map('mode', 'DEADLETTER'))", *batch_);
  EXPECT_NE(unbound[0].find("mode DEADLETTER needs a deadLetter table"), std::string::npos)
      << unbound[0];
}

TEST_F(JsonFunctionsTest, AnsiCastFailuresBecomeRowErrorsInDeadLetterMode) {
  EvalOptions options;
  options.ansi = true;
  options.dead_letter = true;
  RowErrors errors;
  EvalContext ctx;
  ctx.row_errors = &errors;
  auto texts = MakeBatch({{"s", StringColumn({"12", "x", std::nullopt, "99999999999"})}});
  Rows out = EvalRender("CAST(s AS INT)", *texts, options, ctx);
  ASSERT_EQ(out.size(), 4u) << out[0];
  EXPECT_EQ(out[0], "12");
  EXPECT_EQ(errors.rows, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(errors.kinds[1], RowErrorKind::kAnsiCast);
  EXPECT_NE(errors.messages[0].find("Cannot cast 'x' of type STRING to INT"), std::string::npos)
      << errors.messages[0];
  // The fused CAST(get_json_object(...)) path reports the same way.
  errors.Clear();
  auto docs = MakeBatch({{"j", StringColumn({R"({"n": 3})", R"({"n": "3x"})"})}});
  EXPECT_EQ(EvalRender("CAST(get_json_object(j, '$.n') AS INT)", *docs, options, ctx)[0], "3");
  EXPECT_EQ(errors.rows, (std::vector<int64_t>{1}));
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

// ---- CAST(get_json_object(...) AS numeric/boolean): the fused path reads
// JSON numbers directly; it must give exactly what the cast over
// get_json_object's text gives (BindSession::State::fuse_json_casts off).

std::vector<std::string> FusedCastValueTokens() {
  static const char* const kFixed[] = {"0",
                                       "-0",
                                       "1",
                                       "2",
                                       "-1",
                                       "21",
                                       "127",
                                       "128",
                                       "-128",
                                       "-129",
                                       "255",
                                       "32767",
                                       "32768",
                                       "-32768",
                                       "-32769",
                                       "2147483647",
                                       "2147483648",
                                       "-2147483648",
                                       "-2147483649",
                                       "9223372036854775807",
                                       "9223372036854775808",
                                       "-9223372036854775808",
                                       "-9223372036854775809",
                                       "18446744073709551615",
                                       "18446744073709551616",
                                       "123456789012345678901234567890",
                                       "16777217",
                                       "9007199254740993",
                                       "0.0",
                                       "-0.0",
                                       "21.5",
                                       "-21.5",
                                       "21.9",
                                       "-21.9",
                                       "0.001",
                                       "0.00099999",
                                       "0.0001",
                                       "1e-4",
                                       "9999999.999",
                                       "9999999",
                                       "1e7",
                                       "10000000.0",
                                       "1E2",
                                       "1.5e3",
                                       "-2.5E+2",
                                       "1e400",
                                       "-1e400",
                                       "1e-400",
                                       "4.9e-324",
                                       "1.7976931348623157e308",
                                       "3.4028235e38",
                                       "3.4028236e38",
                                       "3.5e38",
                                       "1.401298464324817e-45",
                                       "7e-46",
                                       "1.000000059604644775390625",
                                       "1.00000005960464477539",
                                       "16777217.0",
                                       "0.1",
                                       "84.3",
                                       "230.1",
                                       "0.37",
                                       "12.5",
                                       "1e22",
                                       "1e23",
                                       "127.9",
                                       "128.5",
                                       "-128.9",
                                       "2147483647.5",
                                       "-2147483648.7",
                                       "true",
                                       "false",
                                       "null",
                                       "\"21.5\"",
                                       "\"21\"",
                                       "\" 7 \"",
                                       "\"1e3\"",
                                       "\"abc\"",
                                       "\"true\"",
                                       "\"1\"",
                                       "\"\"",
                                       "\"Infinity\"",
                                       "\"NaN\"",
                                       "\"-0.0\"",
                                       "{}",
                                       "{\"y\": 1}",
                                       "[]",
                                       "[1, 2]",
                                       "[3]"};
  std::vector<std::string> tokens(std::begin(kFixed), std::end(kFixed));
  std::mt19937_64 random(20261129);
  for (int i = 0; i < 600; ++i) {
    char buf[64];
    double d = std::bit_cast<double>(random());
    if (!std::isfinite(d)) continue;
    tokens.push_back(std::string(buf, std::to_chars(buf, buf + sizeof(buf), d).ptr));
    // Floats' rounding boundaries and neighbours.
    float f = static_cast<float>(random() % 2000000) / 64.0f;
    double mid = (static_cast<double>(f) +
                  static_cast<double>(std::nextafter(f, std::numeric_limits<float>::infinity()))) /
                 2;
    tokens.push_back(std::string(buf, std::to_chars(buf, buf + sizeof(buf), mid).ptr));
    int64_t whole = static_cast<int64_t>(random()) >> (random() % 64);
    tokens.push_back(std::to_string(whole));
    tokens.push_back(std::to_string(whole % 100000) + "." + std::to_string(random() % 1000));
    tokens.push_back(std::to_string(whole % 1000) + "e" +
                     std::to_string(static_cast<int>(random() % 40) - 20));
  }
  return tokens;
}

columnar::RecordBatchPtr FusedCastBatch() {
  columnar::ColumnBuilder docs(DataType::String());
  for (const std::string& token : FusedCastValueTokens()) {
    docs.AppendString(R"({"x": )" + token + R"(, "a": {"b": [)" + token + R"(, 3]}, "s": "t"})");
    docs.AppendString(token);
    docs.AppendString(R"({"x": null, "x": )" + token + "}");
  }
  docs.AppendString(R"({"x": 1)");
  docs.AppendString("not json");
  docs.AppendNull();
  docs.AppendString(R"({"y": 1})");
  return MakeBatch({{"j", docs.Finish()}});
}

// True when both columns hold the same rows, bit for bit.
bool SameColumn(const columnar::Column& a, const columnar::Column& b, std::string* why) {
  if (!a.type->Equals(*b.type) || a.length != b.length) {
    *why = "type or length";
    return false;
  }
  const int width = a.type->id() == columnar::TypeId::kBoolean ? 0 : a.type->byte_width();
  for (int64_t row = 0; row < a.length; ++row) {
    bool same = a.IsValid(row) == b.IsValid(row);
    if (same && a.IsValid(row)) {
      same = width == 0 ? a.BoolValue(row) == b.BoolValue(row)
                        : std::memcmp(a.values->data() + row * width,
                                      b.values->data() + row * width, width) == 0;
    }
    if (!same) {
      *why = "row " + std::to_string(row);
      return false;
    }
  }
  return true;
}

// The same expressions bound twice: with the fused JSON casts and without.
struct FusedAndPlain {
  BindSession fused;
  BindSession plain;
  std::vector<BoundExpressionPtr> fused_bound;
  std::vector<BoundExpressionPtr> plain_bound;
};

void BindFusedAndPlain(const std::vector<std::string>& items, const columnar::SchemaPtr& schema,
                       bool ansi, FusedAndPlain* out) {
  EvalOptions options;
  options.ansi = ansi;
  out->plain.state().fuse_json_casts = false;
  for (const std::string& item : items) {
    ASSERT_OK_AND_ASSIGN(ExpressionPtr parsed, ParseExpression(item));
    ASSERT_OK_AND_ASSIGN(BoundExpressionPtr a, Bind(*parsed, schema, options, &out->fused));
    ASSERT_OK_AND_ASSIGN(BoundExpressionPtr b, Bind(*parsed, schema, options, &out->plain));
    out->fused_bound.push_back(std::move(a));
    out->plain_bound.push_back(std::move(b));
  }
}

TEST(JsonFusedCastTest, GivesExactlyTheCastOfTheTextForEveryInput) {
  columnar::RecordBatchPtr batch = FusedCastBatch();
  std::vector<std::string> items = {"get_json_object(j, '$.x')"};
  for (const char* type : {"BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE"}) {
    for (const char* path : {"$.x", "$.a.b[0]", "$", "$.missing", "$.s", "$.a.b[*]"}) {
      items.push_back(std::string("CAST(get_json_object(j, '") + path + "') AS " + type + ")");
      items.push_back(std::string("TRY_CAST(get_json_object(j, '") + path + "') AS " + type + ")");
    }
  }
  for (bool ansi : {false, true}) {
    FusedAndPlain bound;
    ASSERT_NO_FATAL_FAILURE(BindFusedAndPlain(items, batch->schema, ansi, &bound));
    BindSession& fused = bound.fused;
    BindSession& plain = bound.plain;
    const std::vector<BoundExpressionPtr>& fused_bound = bound.fused_bound;
    const std::vector<BoundExpressionPtr>& plain_bound = bound.plain_bound;
    for (size_t idx = 0; idx < items.size(); ++idx) {
      EXPECT_EQ(fused_bound[idx]->name(), plain_bound[idx]->name());
      EXPECT_TRUE(fused_bound[idx]->type()->Equals(*plain_bound[idx]->type()));
    }
    // The fused session took over the casts' get_json_object calls (all but
    // the plain call and the wildcard paths').
    EXPECT_EQ(fused.state().json_calls.size(), 1u + 14u);
    EXPECT_EQ(plain.state().json_calls.size(), items.size());
    int errors = 0;
    for (size_t idx = 0; idx < items.size(); ++idx) {
      SCOPED_TRACE(items[idx] + (ansi ? " (ANSI)" : ""));
      Result<ColumnPtr> a = fused_bound[idx]->Evaluate(*batch, {});
      Result<ColumnPtr> b = plain_bound[idx]->Evaluate(*batch, {});
      ASSERT_EQ(a.ok(), b.ok()) << (a.ok() ? b.status() : a.status()).ToString();
      if (!a.ok()) {
        EXPECT_EQ(a.status().ToString(), b.status().ToString());
        ++errors;
        continue;
      }
      std::string why;
      EXPECT_TRUE(SameColumn(**a, **b, &why)) << why;
    }
    // ANSI fails the strict casts of this data; non-ANSI never fails.
    EXPECT_EQ(errors > 0, ansi);
  }
}

TEST(JsonFusedCastTest, FlatRowsGiveExactlyTheCastOfTheText) {
  // Only `$.name` paths over the input: the rows the single-pass scanner
  // reads take the flat path (numbers captured by the scanner, written by
  // row index), the others the DOM. Each token appears as a flat member,
  // after a null and before a repeat of its name (the first non-null member
  // decides), beside other members, under an escaped key (not flat), nested
  // (not flat), and in invalid JSON (NULL).
  columnar::ColumnBuilder docs(DataType::String());
  for (const std::string& token : FusedCastValueTokens()) {
    docs.AppendString(R"({"x":)" + token + "}");
    docs.AppendString(R"({"x":null,"x":)" + token + R"(,"x":7})");
    docs.AppendString(R"({"y":"s","z":1.5,"x":)" + token + R"(,"w":true})");
    docs.AppendString(R"({"\u0078":)" + token + "}");
    docs.AppendString(R"({"x":)" + token + R"(,"n":{"a":1}})");
    docs.AppendString(R"({"x":)" + token);
  }
  docs.AppendNull();
  docs.AppendString("");
  columnar::RecordBatchPtr batch = MakeBatch({{"j", docs.Finish()}});
  std::vector<std::string> items = {"get_json_object(j, '$.x')", "get_json_object(j, '$.y')"};
  for (const char* type : {"BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE"}) {
    for (const char* path : {"$.x", "$[\\'x\\']", "$.z", "$.w", "$.missing"}) {
      items.push_back(std::string("CAST(get_json_object(j, '") + path + "') AS " + type + ")");
      items.push_back(std::string("TRY_CAST(get_json_object(j, '") + path + "') AS " + type + ")");
    }
  }
  for (bool ansi : {false, true}) {
    FusedAndPlain bound;
    ASSERT_NO_FATAL_FAILURE(BindFusedAndPlain(items, batch->schema, ansi, &bound));
    BindSession& fused = bound.fused;
    const std::vector<BoundExpressionPtr>& fused_bound = bound.fused_bound;
    const std::vector<BoundExpressionPtr>& plain_bound = bound.plain_bound;
    // Every cast fused (only the two plain calls are left).
    EXPECT_EQ(fused.state().json_calls.size(), 2u);
    for (size_t idx = 0; idx < items.size(); ++idx) {
      SCOPED_TRACE(items[idx] + (ansi ? " (ANSI)" : ""));
      Result<ColumnPtr> a = fused_bound[idx]->Evaluate(*batch, {});
      Result<ColumnPtr> b = plain_bound[idx]->Evaluate(*batch, {});
      ASSERT_EQ(a.ok(), b.ok()) << (a.ok() ? b.status() : a.status()).ToString();
      if (!a.ok()) {
        EXPECT_EQ(a.status().ToString(), b.status().ToString());
        continue;
      }
      std::string why;
      if (idx < 2) {
        EXPECT_EQ(testing::Render(**a), testing::Render(**b));
      } else {
        EXPECT_TRUE(SameColumn(**a, **b, &why)) << why;
      }
    }
  }
}

TEST(JsonFusedCastTest, ReadsNumbersStringsAndOverflowAsSparkDoes) {
  auto batch =
      MakeBatch({{"j", StringColumn({R"({"x": 21.5})", R"({"x": "21.5"})", R"({"x": 3000000000})",
                                     R"({"x": 1e400})", R"({"x": -0.0})", R"({"x": [1]})", "{"})}});
  BindSession session;
  std::vector<std::pair<std::string, Rows>> cases = {
      {"CAST(get_json_object(j, '$.x') AS INT)", {"21", "21", "NULL", "NULL", "0", "NULL", "NULL"}},
      {"CAST(get_json_object(j, '$.x') AS BIGINT)",
       {"21", "21", "3000000000", "NULL", "0", "NULL", "NULL"}},
      {"CAST(get_json_object(j, '$.x') AS DOUBLE)",
       // 1e400: get_json_object gives "Infinity" quoted (Jackson), which no
       // cast reads (Spark 3.5 gives NULL too).
       {"21.5", "21.5", "3.0E9", "NULL", "-0.0", "NULL", "NULL"}},
  };
  for (const auto& [text, expected] : cases) {
    ASSERT_OK_AND_ASSIGN(ExpressionPtr parsed, ParseExpression(text));
    ASSERT_OK_AND_ASSIGN(BoundExpressionPtr bound, Bind(*parsed, batch->schema, {}, &session));
    ASSERT_OK_AND_ASSIGN(ColumnPtr out, bound->Evaluate(*batch, {}));
    EXPECT_EQ(testing::Render(*out), expected) << text;
  }
  EXPECT_TRUE(session.state().json_calls.empty());
  // ANSI: the overflow is an error naming the row.
  EvalOptions ansi;
  ansi.ansi = true;
  BindSession ansi_session;
  ASSERT_OK_AND_ASSIGN(ExpressionPtr parsed,
                       ParseExpression("CAST(get_json_object(j, '$.x') AS BIGINT)"));
  ASSERT_OK_AND_ASSIGN(BoundExpressionPtr bound, Bind(*parsed, batch->schema, ansi, &ansi_session));
  Result<ColumnPtr> out = bound->Evaluate(*batch, {});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().ToString().find("row 0"), std::string::npos) << out.status().ToString();
}

}  // namespace
}  // namespace silt::expr
