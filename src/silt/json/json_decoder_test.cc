#include "silt/json/json_decoder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "silt/columnar/temporal.h"
#include "silt/json/json_test_util.h"
#include "silt/testing/gtest_util.h"

namespace silt::json {
namespace {

using columnar::Column;
using columnar::ColumnBuilder;
using columnar::ColumnPtr;
using columnar::DataType;
using columnar::TypeId;
using test_util::Rows;
using test_util::StringColumn;

constexpr char kSeedMessage[] =
    R"({"device_id":"plug-01","device_type":"smart_plug","ingested_at":"2026-06-22T08:16:00.000Z",)"
    R"("payload":"{\"power\":84.3,\"voltage\":230.1,\"state\":\"ON\",\"linkquality\":248}"})";
constexpr char kSeedSchema[] =
    "device_id STRING NOT NULL, device_type STRING NOT NULL, ingested_at STRING NOT NULL, "
    "payload STRING";

struct Decoded {
  ColumnPtr column;
  ColumnPtr corrupt;
  DecodeStats stats;

  const Column& field(int i) const { return *column->children[static_cast<size_t>(i)]; }
};

Result<Decoded> DecodeRows(std::string_view ddl, const Rows& rows,
                           const JsonDecodeOptions& options = {}) {
  SILT_ASSIGN_OR_RETURN(auto schema, columnar::ParseDdlSchema(ddl));
  SILT_ASSIGN_OR_RETURN(auto decoder, JsonDecoder::Make(schema, options));
  Decoded out;
  SILT_ASSIGN_OR_RETURN(out.column,
                        decoder->DecodeColumn(*StringColumn(rows), &out.corrupt, &out.stats));
  SILT_RETURN_NOT_OK(columnar::ValidateColumn(*out.column));
  SILT_RETURN_NOT_OK(columnar::ValidateColumn(*out.corrupt));
  return out;
}

std::optional<std::string> Str(const Column& column, int64_t row) {
  if (column.IsNull(row)) return std::nullopt;
  return std::string(column.StringValue(row));
}

TEST(JsonDecoderTest, SeedMessageDecodesIntoItsFourStringFields) {
  ASSERT_OK_AND_ASSIGN(Decoded d, DecodeRows(kSeedSchema, {kSeedMessage}));
  ASSERT_EQ(d.column->length, 1);
  EXPECT_TRUE(d.column->IsValid(0));
  EXPECT_EQ(Str(d.field(0), 0), "plug-01");
  EXPECT_EQ(Str(d.field(1), 0), "smart_plug");
  EXPECT_EQ(Str(d.field(2), 0), "2026-06-22T08:16:00.000Z");
  EXPECT_EQ(Str(d.field(3), 0), R"({"power":84.3,"voltage":230.1,"state":"ON","linkquality":248})");
  EXPECT_TRUE(d.corrupt->IsNull(0));
  EXPECT_EQ(d.stats.malformed_rows, 0);
  EXPECT_EQ(d.stats.mismatched_fields, 0);
}

TEST(JsonDecoderTest, OutputTypeIsTheSchemaMadeNullable) {
  ASSERT_OK_AND_ASSIGN(auto schema, columnar::ParseDdlSchema(kSeedSchema));
  ASSERT_OK_AND_ASSIGN(auto decoder, JsonDecoder::Make(schema));
  for (const auto& field : decoder->output_type()->fields()) EXPECT_TRUE(field.nullable);
  // NOT NULL does not reject a row missing the field (Spark's asNullable).
  ASSERT_OK_AND_ASSIGN(Decoded d, DecodeRows(kSeedSchema, {R"({"payload":"x"})"}));
  EXPECT_TRUE(d.field(0).IsNull(0));
  EXPECT_EQ(Str(d.field(3), 0), "x");
  EXPECT_TRUE(d.corrupt->IsNull(0));
}

TEST(JsonDecoderTest, MalformedRowsGiveAllNullFieldsAndTheirRawText) {
  Rows rows = {R"({"a":1)",   "not json",           "[1,2]",     "42", "null", R"("text")",
               R"({"a":01})", R"({"a":1,"b":tru})", R"({"a":2})"};
  ASSERT_OK_AND_ASSIGN(Decoded d, DecodeRows("a INT, b STRING", rows));
  for (int64_t row = 0; row < 8; ++row) {
    SCOPED_TRACE(*rows[static_cast<size_t>(row)]);
    EXPECT_TRUE(d.column->IsValid(row));  // Spark 3.x: Row(null, null), not null
    EXPECT_TRUE(d.field(0).IsNull(row));
    EXPECT_TRUE(d.field(1).IsNull(row));
    EXPECT_EQ(Str(*d.corrupt, row), rows[static_cast<size_t>(row)]);
  }
  EXPECT_EQ(d.field(0).Value<int32_t>(8), 2);
  EXPECT_TRUE(d.corrupt->IsNull(8));
  EXPECT_EQ(d.stats.malformed_rows, 8);
  EXPECT_EQ(d.stats.partial_rows, 0);
}

TEST(JsonDecoderTest, NullAndBlankInputGiveANullStructAndNoCorruptRecord) {
  ASSERT_OK_AND_ASSIGN(Decoded d, DecodeRows("a INT", {std::nullopt, "", " \t\r\n"}));
  for (int64_t row = 0; row < 3; ++row) {
    EXPECT_TRUE(d.column->IsNull(row));
    EXPECT_TRUE(d.corrupt->IsNull(row));
  }
  EXPECT_EQ(d.stats.malformed_rows, 0);
}

TEST(JsonDecoderTest, WrongTypedFieldIsNullAndTheRestOfTheRowIsKept) {
  ASSERT_OK_AND_ASSIGN(
      Decoded d, DecodeRows("a INT, b STRING, c BOOLEAN",
                            {R"({"a":"7","b":"ok","c":"true"})", R"({"a":7,"b":"ok","c":true})"}));
  EXPECT_TRUE(d.column->IsValid(0));
  EXPECT_TRUE(d.field(0).IsNull(0));
  EXPECT_EQ(Str(d.field(1), 0), "ok");
  EXPECT_TRUE(d.field(2).IsNull(0));
  // Spark records the raw text of a partially converted row too.
  EXPECT_EQ(Str(*d.corrupt, 0), R"({"a":"7","b":"ok","c":"true"})");
  EXPECT_EQ(d.field(0).Value<int32_t>(1), 7);
  EXPECT_TRUE(d.field(2).BoolValue(1));
  EXPECT_TRUE(d.corrupt->IsNull(1));
  EXPECT_EQ(d.stats.mismatched_fields, 2);
  EXPECT_EQ(d.stats.partial_rows, 1);
  EXPECT_EQ(d.stats.malformed_rows, 0);
}

TEST(JsonDecoderTest, MissingNullAndUnknownFields) {
  ASSERT_OK_AND_ASSIGN(
      Decoded d, DecodeRows("a INT, b STRING", {R"({"zzz":{"deep":[1,2,{"x":null}]},"b":null})"}));
  EXPECT_TRUE(d.column->IsValid(0));
  EXPECT_TRUE(d.field(0).IsNull(0));
  EXPECT_TRUE(d.field(1).IsNull(0));
  EXPECT_TRUE(d.corrupt->IsNull(0));
  EXPECT_EQ(d.stats.mismatched_fields, 0);
}

TEST(JsonDecoderTest, StringFieldKeepsOtherValuesAsCompactJsonLikeJackson) {
  ASSERT_OK_AND_ASSIGN(
      Decoded d,
      DecodeRows("s STRING",
                 {R"({"s": {"x" : 1, "y": [true, null, "q\"t"], "z": {}}})", R"({"s": 84.30})",
                  R"({"s": 1e2})", R"({"s": 1.0E10})", R"({"s": -17})", R"({"s": true})",
                  R"({"s": ""})", R"({"s": 12345678901234567890123})", R"({"s": [1.5e-7]})"}));
  EXPECT_EQ(Str(d.field(0), 0), R"({"x":1,"y":[true,null,"q\"t"],"z":{}})");
  EXPECT_EQ(Str(d.field(0), 1), "84.3");
  EXPECT_EQ(Str(d.field(0), 2), "100.0");
  EXPECT_EQ(Str(d.field(0), 3), "1.0E10");
  EXPECT_EQ(Str(d.field(0), 4), "-17");
  EXPECT_EQ(Str(d.field(0), 5), "true");
  EXPECT_EQ(Str(d.field(0), 6), "");
  EXPECT_EQ(Str(d.field(0), 7), "12345678901234567890123");
  EXPECT_EQ(Str(d.field(0), 8), "[1.5E-7]");
  EXPECT_EQ(d.stats.mismatched_fields, 0);
  EXPECT_EQ(d.stats.malformed_rows, 0);
}

TEST(JsonDecoderTest, IntegralFieldsTakeInRangeIntegersOnly) {
  ASSERT_OK_AND_ASSIGN(
      Decoded d, DecodeRows("b BYTE, s SHORT, i INT, l LONG",
                            {R"({"b":-128,"s":-32768,"i":-2147483648,"l":-9223372036854775808})",
                             R"({"b":255,"s":32767,"i":2147483647,"l":9223372036854775807})",
                             R"({"b":256,"s":32768,"i":2147483648,"l":9223372036854775808})",
                             R"({"b":1.0,"s":"1","i":1e0,"l":true})"}));
  EXPECT_EQ(d.field(0).Value<int8_t>(0), -128);
  EXPECT_EQ(d.field(1).Value<int16_t>(0), -32768);
  EXPECT_EQ(d.field(2).Value<int32_t>(0), INT32_MIN);
  EXPECT_EQ(d.field(3).Value<int64_t>(0), INT64_MIN);
  EXPECT_EQ(d.field(0).Value<int8_t>(1), -1);  // Jackson's getByteValue narrows 255
  EXPECT_EQ(d.field(1).Value<int16_t>(1), 32767);
  EXPECT_EQ(d.field(2).Value<int32_t>(1), INT32_MAX);
  EXPECT_EQ(d.field(3).Value<int64_t>(1), INT64_MAX);
  for (int col = 0; col < 4; ++col) {
    EXPECT_TRUE(d.field(col).IsNull(2)) << col;
    EXPECT_TRUE(d.field(col).IsNull(3)) << col;
  }
  EXPECT_EQ(d.stats.mismatched_fields, 8);
  EXPECT_EQ(d.stats.partial_rows, 2);
}

TEST(JsonDecoderTest, FloatingFieldsTakeNumbersAndSparksSpecialStrings) {
  ASSERT_OK_AND_ASSIGN(
      Decoded d,
      DecodeRows("d DOUBLE, f FLOAT",
                 {R"({"d":84.3,"f":3})", R"({"d":"NaN","f":"Infinity"})",
                  R"({"d":"-INF","f":"+INF"})", R"({"d":"-Infinity","f":"+Infinity"})",
                  R"({"d":"Inf","f":"nan"})", R"({"d":"1.5","f":""})", R"({"d":1e400,"f":1e39})"}));
  EXPECT_EQ(d.field(0).Value<double>(0), 84.3);
  EXPECT_EQ(d.field(1).Value<float>(0), 3.0f);
  EXPECT_TRUE(std::isnan(d.field(0).Value<double>(1)));
  EXPECT_EQ(d.field(1).Value<float>(1), INFINITY);
  EXPECT_EQ(d.field(0).Value<double>(2), -INFINITY);
  EXPECT_EQ(d.field(1).Value<float>(2), INFINITY);
  EXPECT_EQ(d.field(0).Value<double>(3), -INFINITY);
  EXPECT_EQ(d.field(1).Value<float>(3), INFINITY);
  for (int64_t row = 4; row <= 5; ++row) {
    EXPECT_TRUE(d.field(0).IsNull(row)) << row;
    EXPECT_TRUE(d.field(1).IsNull(row)) << row;
  }
  // Jackson reads out-of-range numbers as Infinity; the row is not malformed.
  EXPECT_EQ(d.field(0).Value<double>(6), INFINITY);
  EXPECT_EQ(d.field(1).Value<float>(6), INFINITY);
  EXPECT_EQ(d.stats.malformed_rows, 0);
  EXPECT_EQ(d.stats.mismatched_fields, 4);
}

TEST(JsonDecoderTest, DecimalFieldsRoundHalfUpAndOverflowToNull) {
  ASSERT_OK_AND_ASSIGN(
      Decoded d,
      DecodeRows(
          "p DECIMAL(5,2), big DECIMAL(38,0)",
          {R"({"p":2.675,"big":123456789012345678901234567890})", R"({"p":-1.005,"big":"12,345"})",
           R"({"p":999.995,"big":1e38})", R"({"p":"1e2","big":18446744073709551615})",
           R"({"p":"abc","big":true})", R"({"p":7,"big":-9223372036854775808})"}));
  const Column& p = d.field(0);
  const Column& big = d.field(1);
  EXPECT_EQ(static_cast<int64_t>(p.Value<__int128>(0)), 268);
  __int128 expected = 0;
  for (char c : std::string("123456789012345678901234567890")) expected = expected * 10 + (c - '0');
  EXPECT_TRUE(big.Value<__int128>(0) == expected);
  EXPECT_EQ(static_cast<int64_t>(p.Value<__int128>(1)), -101);
  EXPECT_EQ(static_cast<int64_t>(big.Value<__int128>(1)), 12345);
  EXPECT_TRUE(p.IsNull(2));    // 1000.00 needs 6 digits
  EXPECT_TRUE(big.IsNull(2));  // 39 digits
  EXPECT_EQ(static_cast<int64_t>(p.Value<__int128>(3)), 10000);
  EXPECT_TRUE(big.Value<__int128>(3) == static_cast<__int128>(UINT64_MAX));
  EXPECT_TRUE(p.IsNull(4));
  EXPECT_TRUE(big.IsNull(4));
  EXPECT_EQ(static_cast<int64_t>(p.Value<__int128>(5)), 700);
  EXPECT_EQ(static_cast<int64_t>(big.Value<__int128>(5)), INT64_MIN);
  EXPECT_EQ(d.stats.malformed_rows, 0);
}

TEST(JsonDecoderTest, BooleanFieldsTakeTrueAndFalseOnly) {
  ASSERT_OK_AND_ASSIGN(
      Decoded d, DecodeRows("b BOOLEAN", {R"({"b":false})", R"({"b":"true"})", R"({"b":1})"}));
  EXPECT_TRUE(d.field(0).IsValid(0));
  EXPECT_FALSE(d.field(0).BoolValue(0));
  EXPECT_TRUE(d.field(0).IsNull(1));
  EXPECT_TRUE(d.field(0).IsNull(2));
}

TEST(JsonDecoderTest, DatesAndTimestampsParseFromStrings) {
  ASSERT_OK_AND_ASSIGN(
      Decoded d,
      DecodeRows("d DATE, t TIMESTAMP, n TIMESTAMP_NTZ",
                 {R"({"d":"2026-06-22","t":"2026-06-22T08:16:00.000Z","n":"2026-06-22 08:16:00"})",
                  R"({"d":"123","t":1750000000,"n":"2026-06-22T08:16:00Z"})",
                  R"({"d":"22/06/2026","t":"yesterday","n":1750000000})",
                  R"({"d":20000,"t":1.5,"n":""})"}));
  const int32_t day = columnar::DaysFromCivil(2026, 6, 22);
  const int64_t micros = (static_cast<int64_t>(day) * 86400 + 8 * 3600 + 16 * 60) * 1000000;
  EXPECT_EQ(d.field(0).Value<int32_t>(0), day);
  EXPECT_EQ(d.field(1).Value<int64_t>(0), micros);
  EXPECT_EQ(d.field(2).Value<int64_t>(0), micros);
  EXPECT_EQ(d.field(0).Value<int32_t>(1), 123);  // Spark 1.5's days-as-string form
  EXPECT_EQ(d.field(1).Value<int64_t>(1), 1750000000LL * 1000000);  // integer = seconds
  EXPECT_TRUE(d.field(2).IsNull(1));                                // NTZ rejects a zone
  for (int col = 0; col < 3; ++col) {
    EXPECT_TRUE(d.field(col).IsNull(2)) << col;
    EXPECT_TRUE(d.field(col).IsNull(3)) << col;
  }
}

TEST(JsonDecoderTest, TimestampsWithoutZoneUseTheSessionOffset) {
  JsonDecodeOptions options;
  options.default_zone_offset_micros = 2 * 3600 * columnar::kMicrosPerSecond;
  ASSERT_OK_AND_ASSIGN(
      Decoded d,
      DecodeRows("t TIMESTAMP",
                 {R"({"t":"2026-06-22 10:16:00"})", R"({"t":"2026-06-22T08:16:00Z"})"}, options));
  EXPECT_EQ(d.field(0).Value<int64_t>(0), d.field(0).Value<int64_t>(1));
}

TEST(JsonDecoderTest, BinaryFieldsDecodeBase64) {
  ASSERT_OK_AND_ASSIGN(Decoded d, DecodeRows("b BINARY", {R"({"b":"aGVsbG8="})", R"({"b":""})",
                                                          R"({"b":"bad!"})", R"({"b":5})"}));
  EXPECT_EQ(Str(d.field(0), 0), "hello");
  EXPECT_EQ(Str(d.field(0), 1), "");
  EXPECT_TRUE(d.field(0).IsNull(2));
  EXPECT_TRUE(d.field(0).IsNull(3));
}

TEST(JsonDecoderTest, EmptyStringFitsOnlyStringAndBinary) {
  ASSERT_OK_AND_ASSIGN(Decoded d,
                       DecodeRows("s STRING, i INT, d DOUBLE", {R"({"s":"","i":"","d":""})"}));
  EXPECT_EQ(Str(d.field(0), 0), "");
  EXPECT_TRUE(d.field(1).IsNull(0));
  EXPECT_TRUE(d.field(2).IsNull(0));
  EXPECT_EQ(d.stats.mismatched_fields, 2);
}

TEST(JsonDecoderTest, NestedStructsArraysAndMapsDecodeRecursively) {
  ASSERT_OK_AND_ASSIGN(
      Decoded d,
      DecodeRows(
          "s STRUCT<x: INT, tags: ARRAY<STRING>>, m MAP<STRING, DOUBLE>, "
          "l ARRAY<STRUCT<k: STRING>>",
          {R"({"s":{"x":1,"tags":["a",null,"b"]},"m":{"p":1.5,"q":null},"l":[{"k":"v"},null,{}]})",
           R"({"s":null,"m":{},"l":[]})"}));
  const Column& s = d.field(0);
  const Column& m = d.field(1);
  const Column& l = d.field(2);
  ASSERT_TRUE(s.IsValid(0));
  EXPECT_EQ(s.children[0]->Value<int32_t>(0), 1);
  const Column& tags = *s.children[1];
  ASSERT_EQ(tags.offsets()[0], 0);
  ASSERT_EQ(tags.offsets()[1], 3);
  EXPECT_EQ(Str(*tags.children[0], 0), "a");
  EXPECT_TRUE(tags.children[0]->IsNull(1));
  EXPECT_EQ(Str(*tags.children[0], 2), "b");

  ASSERT_EQ(m.offsets()[1], 2);
  const Column& entries = *m.children[0];
  EXPECT_EQ(Str(*entries.children[0], 0), "p");
  EXPECT_EQ(entries.children[1]->Value<double>(0), 1.5);
  EXPECT_EQ(Str(*entries.children[0], 1), "q");
  EXPECT_TRUE(entries.children[1]->IsNull(1));

  ASSERT_EQ(l.offsets()[1], 3);
  const Column& elements = *l.children[0];
  EXPECT_EQ(Str(*elements.children[0], 0), "v");
  EXPECT_TRUE(elements.IsNull(1));
  EXPECT_TRUE(elements.IsValid(2));
  EXPECT_TRUE(elements.children[0]->IsNull(2));

  EXPECT_TRUE(s.IsNull(1));
  EXPECT_TRUE(m.IsValid(1));
  EXPECT_EQ(m.offsets()[2] - m.offsets()[1], 0);
  EXPECT_EQ(l.offsets()[2] - l.offsets()[1], 0);
  EXPECT_EQ(d.stats.mismatched_fields, 0);
}

TEST(JsonDecoderTest, MisfitInsideAListNullsTheListButAStructKeepsItsOtherFields) {
  // Spark 3.5 (partial results): a struct with a field that does not fit is
  // kept with that field NULL; a list with an element that does not fit is
  // NULL as a whole.
  ASSERT_OK_AND_ASSIGN(
      Decoded d, DecodeRows("s STRUCT<x: INT, y: INT>, a ARRAY<INT>, m MAP<STRING, INT>, ok STRING",
                            {R"({"s":{"x":1,"y":"bad"},"a":[1,"x",3],"m":{"k":1.5},"ok":"kept"})",
                             R"({"s":{"x":2,"y":3},"a":[4],"m":{"k":5},"ok":"next"})",
                             R"({"s":[1],"a":{"x":1},"m":[1],"ok":"wrong shapes"})"}));
  EXPECT_TRUE(d.field(0).IsValid(0));
  EXPECT_EQ(d.field(0).children[0]->Value<int32_t>(0), 1);
  EXPECT_TRUE(d.field(0).children[1]->IsNull(0));
  for (int col = 0; col < 3; ++col) {
    if (col > 0) {
      EXPECT_TRUE(d.field(col).IsNull(0)) << col;
    }
    EXPECT_TRUE(d.field(col).IsNull(2)) << col;
  }
  EXPECT_EQ(Str(d.field(3), 0), "kept");
  // The nulled values left nothing behind: the next row lines up.
  EXPECT_EQ(d.field(0).children[0]->Value<int32_t>(1), 2);
  EXPECT_EQ(d.field(0).children[1]->Value<int32_t>(1), 3);
  const Column& a = d.field(1);
  EXPECT_EQ(a.offsets()[2] - a.offsets()[1], 1);
  EXPECT_EQ(a.children[0]->Value<int32_t>(a.offsets()[1]), 4);
  const Column& m = d.field(2);
  EXPECT_EQ(m.children[0]->children[1]->Value<int32_t>(m.offsets()[1]), 5);
  EXPECT_EQ(Str(*d.corrupt, 0),
            R"({"s":{"x":1,"y":"bad"},"a":[1,"x",3],"m":{"k":1.5},"ok":"kept"})");
  EXPECT_TRUE(d.corrupt->IsNull(1));
  EXPECT_EQ(d.stats.partial_rows, 2);
}

TEST(JsonDecoderTest, UnicodeEscapesDecodeToUtf8) {
  ASSERT_OK_AND_ASSIGN(
      Decoded d,
      DecodeRows("s STRING, t STRING",
                 {R"({"s":"caf\u00e9 \ud83d\ude00 \"q\" \\ \/ \n\t","t":{"k":"\u0001\u00e9"}})"}));
  EXPECT_EQ(Str(d.field(0), 0), "caf\xc3\xa9 \xf0\x9f\x98\x80 \"q\" \\ / \n\t");
  // Re-serialized like Jackson: non-ASCII kept, control characters escaped.
  EXPECT_EQ(Str(d.field(1), 0), "{\"k\":\"\\u0001\xc3\xa9\"}");
}

TEST(JsonDecoderTest, BigIntegersDoNotMakeTheRowMalformed) {
  ASSERT_OK_AND_ASSIGN(Decoded d,
                       DecodeRows("l LONG, d DOUBLE, s STRING",
                                  {R"({"l":123456789012345678901234,"d":123456789012345678901234,)"
                                   R"("s":[-123456789012345678901234,1]})"}));
  EXPECT_TRUE(d.field(0).IsNull(0));
  EXPECT_DOUBLE_EQ(d.field(1).Value<double>(0), 1.2345678901234568e23);
  EXPECT_EQ(Str(d.field(2), 0), "[-123456789012345678901234,1]");
  EXPECT_EQ(d.stats.malformed_rows, 0);
  EXPECT_EQ(d.stats.mismatched_fields, 1);
}

TEST(JsonDecoderTest, FieldNamesMatchCaseSensitively) {
  // Spark's JacksonParser looks keys up exactly (issue #23: Device_ID is
  // not device_id).
  ASSERT_OK_AND_ASSIGN(Decoded d, DecodeRows("deviceId STRING, Power DOUBLE",
                                             {R"({"DEVICEID":"ci","power":1.0})",
                                              R"({"deviceId":"exact","DeviceID":"ci"})",
                                              R"({"DeviceID":"ci","deviceId":"exact"})"}));
  EXPECT_TRUE(d.field(0).IsNull(0));
  EXPECT_TRUE(d.field(1).IsNull(0));
  EXPECT_TRUE(d.corrupt->IsNull(0));
  EXPECT_EQ(Str(d.field(0), 1), "exact");
  EXPECT_EQ(Str(d.field(0), 2), "exact");
}

TEST(JsonDecoderTest, ManyFieldsUseTheHashedLookup) {
  std::string ddl;
  std::string json = "{";
  for (int i = 0; i < 20; ++i) {
    if (i > 0) {
      ddl += ", ";
      json += ",";
    }
    ddl += "Field" + std::to_string(i) + " INT";
    json += "\"field" + std::to_string(19 - i) + "\":" + std::to_string(19 - i);
  }
  json += ",\"Field3\":333}";
  ASSERT_OK_AND_ASSIGN(Decoded d, DecodeRows(ddl, {json}));
  for (int i = 0; i < 20; ++i) {
    if (i == 3) {
      EXPECT_EQ(d.field(i).Value<int32_t>(0), 333);
    } else {
      EXPECT_TRUE(d.field(i).IsNull(0)) << i;  // "field<i>" is not "Field<i>"
    }
  }
}

TEST(JsonDecoderTest, DuplicateKeysLastOneThatFitsWins) {
  ASSERT_OK_AND_ASSIGN(
      Decoded d, DecodeRows("a INT, s STRUCT<b: INT>", {R"({"a":1,"s":{"b":1,"b":2},"a":3})"}));
  EXPECT_EQ(d.field(0).Value<int32_t>(0), 3);
  EXPECT_EQ(d.field(1).children[0]->Value<int32_t>(0), 2);
}

TEST(JsonDecoderTest, DuplicateKeyThatDoesNotFitKeepsThePreviousValueAndMarksTheRecord) {
  ASSERT_OK_AND_ASSIGN(Decoded d, DecodeRows("a INT", {R"({"a":1,"a":"x"})", R"({"a":"x","a":2})",
                                                       R"({"a":1,"a":null})"}));
  EXPECT_EQ(d.field(0).Value<int32_t>(0), 1);
  EXPECT_EQ(d.field(0).Value<int32_t>(1), 2);
  EXPECT_TRUE(d.field(0).IsNull(2));
  EXPECT_FALSE(d.corrupt->IsNull(0));
  EXPECT_FALSE(d.corrupt->IsNull(1));
  EXPECT_TRUE(d.corrupt->IsNull(2));
}

TEST(JsonDecoderTest, ReadsTheFirstValueAsJacksonDoes) {
  // Spark's parser reads the first value only, with single quotes,
  // NaN/Infinity and U+FFFD for invalid UTF-8.
  ASSERT_OK_AND_ASSIGN(
      Decoded d, DecodeRows("a DOUBLE, b STRING",
                            {R"({"a":1} trailing)", R"({'a':2,'b':'it\'s'} {"a":3})",
                             R"({"a":-Infinity})", "{\"b\":\"x\xffy\"}", R"({"a":NaN,"b":NaN})"}));
  EXPECT_EQ(d.field(0).Value<double>(0), 1.0);
  EXPECT_EQ(d.field(0).Value<double>(1), 2.0);
  EXPECT_EQ(Str(d.field(1), 1), "it's");
  EXPECT_EQ(d.field(0).Value<double>(2), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(Str(d.field(1), 3), "x\xEF\xBF\xBDy");
  EXPECT_TRUE(std::isnan(d.field(0).Value<double>(4)));
  EXPECT_EQ(Str(d.field(1), 4), "\"NaN\"");  // Jackson's generator quotes it
  for (int64_t row = 0; row < 5; ++row) EXPECT_TRUE(d.corrupt->IsNull(row)) << row;
}

TEST(JsonDecoderTest, AFieldThatFailsInsideAMalformedRecordKeepsTheFieldsBefore) {
  // The converter of "b" throws on the bad escape and is caught; the parser
  // goes on after it and finds "a" (Spark 3.5's partial result).
  ASSERT_OK_AND_ASSIGN(Decoded d, DecodeRows("a INT, b STRING", {R"({"b":"x\q,"a":1})",
                                                                 R"({"a":1,"b":"x\q","c":2})"}));
  EXPECT_EQ(d.field(0).Value<int32_t>(0), 1);
  EXPECT_TRUE(d.field(1).IsNull(0));
  EXPECT_FALSE(d.corrupt->IsNull(0));
  // Here the rest of the string is not a field: the whole record is lost.
  EXPECT_TRUE(d.field(0).IsNull(1));
  EXPECT_EQ(d.stats.malformed_rows, 1);
}

TEST(JsonDecoderTest, ParserOptionsSwitchJacksonExtensions) {
  JsonDecodeOptions options;
  options.parse.allow_single_quotes = false;
  options.parse.allow_unquoted_field_names = true;
  options.parse.allow_numeric_leading_zeros = true;
  options.parse.allow_comments = true;
  ASSERT_OK_AND_ASSIGN(auto schema, columnar::ParseDdlSchema("a INT"));
  ASSERT_OK_AND_ASSIGN(auto decoder, JsonDecoder::Make(schema, options));
  std::vector<std::string_view> rows = {"{a:007 /* c */}", "{'a':1}"};
  columnar::ColumnPtr corrupt;
  ASSERT_OK_AND_ASSIGN(auto out, decoder->DecodeViews(rows.data(), 2, &corrupt));
  EXPECT_EQ(out->children[0]->Value<int32_t>(0), 7);
  EXPECT_TRUE(out->children[0]->IsNull(1));
  EXPECT_TRUE(corrupt->IsNull(0));
  EXPECT_FALSE(corrupt->IsNull(1));
}

TEST(JsonDecoderTest, NestingDeeperThanJacksonsLimitIsMalformed) {
  auto nested = [](int depth) {
    return "{\"a\":" + std::string(static_cast<size_t>(depth - 1), '[') +
           std::string(static_cast<size_t>(depth - 1), ']') + "}";
  };
  std::string ok = nested(1000);
  std::string deep = nested(1001);
  ASSERT_OK_AND_ASSIGN(Decoded d, DecodeRows("a STRING", {ok, deep}));
  EXPECT_TRUE(d.corrupt->IsNull(0));
  EXPECT_FALSE(d.corrupt->IsNull(1));
}

TEST(JsonDecoderTest, MakeRejectsSchemasItCannotDecode) {
  ASSERT_OK_AND_ASSIGN(auto map_schema, columnar::ParseDdlSchema("m MAP<INT, STRING>"));
  auto by_map = JsonDecoder::Make(map_schema);
  ASSERT_RAISES(NotSupported, by_map);
  EXPECT_NE(by_map.status().message().find("'m'"), std::string::npos) << by_map.status().ToString();
  ASSERT_RAISES(InvalidArgument, JsonDecoder::Make(DataType::Array(DataType::Int())));
}

TEST(JsonDecoderTest, DecodeColumnRejectsNonStringInput) {
  ASSERT_OK_AND_ASSIGN(auto schema, columnar::ParseDdlSchema("a INT"));
  ASSERT_OK_AND_ASSIGN(auto decoder, JsonDecoder::Make(schema));
  ColumnBuilder ints(DataType::Int());
  ints.Append<int32_t>(1);
  ASSERT_RAISES(InvalidArgument, decoder->DecodeColumn(*ints.Finish()));
}

TEST(JsonDecoderTest, DecodeViewsMatchesDecodeColumnAndReusesTheDecoder) {
  ASSERT_OK_AND_ASSIGN(auto schema, columnar::ParseDdlSchema("a INT, b STRING"));
  ASSERT_OK_AND_ASSIGN(auto decoder, JsonDecoder::Make(schema));
  DecodeStats stats;
  for (int batch = 0; batch < 3; ++batch) {
    std::vector<std::string> texts;
    for (int row = 0; row < 1000; ++row) {
      texts.push_back(row % 10 == 9 ? "{broken"
                                    : R"({"a":)" + std::to_string(batch * 1000 + row) +
                                          R"(,"b":"r)" + std::to_string(row) + "\"}");
    }
    std::vector<std::string_view> views(texts.begin(), texts.end());
    ColumnPtr corrupt;
    ASSERT_OK_AND_ASSIGN(
        ColumnPtr out,
        decoder->DecodeViews(views.data(), static_cast<int64_t>(views.size()), &corrupt, &stats));
    ASSERT_OK(columnar::ValidateColumn(*out));
    ASSERT_EQ(out->length, 1000);
    ASSERT_EQ(corrupt->length, 1000);
    for (int row = 0; row < 1000; ++row) {
      const Column& a = *out->children[0];
      if (row % 10 == 9) {
        EXPECT_TRUE(a.IsNull(row));
        EXPECT_EQ(corrupt->StringValue(row), "{broken");
      } else {
        EXPECT_EQ(a.Value<int32_t>(row), batch * 1000 + row);
        EXPECT_EQ(out->children[1]->StringValue(row), "r" + std::to_string(row));
        EXPECT_TRUE(corrupt->IsNull(row));
      }
    }
  }
  // Counts accumulate across calls.
  EXPECT_EQ(stats.malformed_rows, 300);
}

TEST(JsonDecoderTest, NullTypeFieldIsAlwaysNull) {
  ASSERT_OK_AND_ASSIGN(auto decoder,
                       JsonDecoder::Make(DataType::Struct({{"v", DataType::Null()}})));
  DecodeStats stats;
  ASSERT_OK_AND_ASSIGN(ColumnPtr out,
                       decoder->DecodeColumn(*StringColumn({R"({"v":[1]})"}), nullptr, &stats));
  EXPECT_TRUE(out->IsValid(0));
  EXPECT_EQ(out->children[0]->null_count, 1);
  EXPECT_EQ(stats.mismatched_fields, 0);
}

// A "yyyy/MM/dd[ HH:mm]" pattern standing in for expr's DateTimeFormat.
class SlashPattern final : public DateTimePattern {
 public:
  bool Parse(std::string_view text, int64_t* local_micros, bool* has_offset,
             int64_t* offset_seconds) const override {
    int y = 0, m = 0, d = 0, hh = 0, mm = 0;
    char tail = 0;
    const std::string s(text);
    const int n = std::sscanf(s.c_str(), "%4d/%2d/%2d %2d:%2d%c", &y, &m, &d, &hh, &mm, &tail);
    if ((n != 3 && n != 5) || s.size() != (n == 3 ? 10u : 16u) || m < 1 || m > 12 || d < 1 ||
        d > 31) {
      return false;
    }
    *local_micros = (int64_t{columnar::DaysFromCivil(y, m, d)} * 86400 + hh * 3600 + mm * 60) *
                    columnar::kMicrosPerSecond;
    *has_offset = false;
    *offset_seconds = 0;
    return true;
  }
  const std::string& pattern() const override { return pattern_; }

 private:
  std::string pattern_ = "yyyy/MM/dd";
};

TEST(JsonDecoderTest, DefaultDateTextThatSparksOldParserReadsFailsTheCall) {
  // 2024-02-30 is no date, but Spark 2's lenient parser reads it (March 1):
  // Spark 3.5 fails the query under policy EXCEPTION.
  const Rows rows = {R"({"b":"2024-02-29"})", R"({"b":"2024-02-30"})"};
  Result<Decoded> failed = DecodeRows("b DATE", rows);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("INCONSISTENT_BEHAVIOR_CROSS_VERSION"),
            std::string::npos);
  EXPECT_NE(failed.status().message().find("row 1"), std::string::npos);

  JsonDecodeOptions corrected;
  corrected.datetime.policy = TimeParserPolicy::kCorrected;
  ASSERT_OK_AND_ASSIGN(Decoded out, DecodeRows("b DATE", rows, corrected));
  EXPECT_EQ(out.field(0).Value<int32_t>(0), columnar::DaysFromCivil(2024, 2, 29));
  EXPECT_TRUE(out.field(0).IsNull(1));
  EXPECT_TRUE(out.corrupt->IsValid(1));

  JsonDecodeOptions legacy;
  legacy.datetime.policy = TimeParserPolicy::kLegacy;
  ASSERT_OK_AND_ASSIGN(out, DecodeRows("b DATE", rows, legacy));
  EXPECT_EQ(out.field(0).Value<int32_t>(1), columnar::DaysFromCivil(2024, 3, 1));
}

TEST(JsonDecoderTest, DateFormatReadsOnlyItsPatternUnlessTheFallbackIsOn) {
  JsonDecodeOptions options;
  options.datetime.date_format = std::make_shared<SlashPattern>();
  const Rows rows = {R"({"b":"2024/01/02"})", R"({"b":"2024-01-02"})"};
  ASSERT_OK_AND_ASSIGN(Decoded out, DecodeRows("b DATE", rows, options));
  EXPECT_EQ(out.field(0).Value<int32_t>(0), columnar::DaysFromCivil(2024, 1, 2));
  EXPECT_TRUE(out.field(0).IsNull(1));
  EXPECT_TRUE(out.corrupt->IsValid(1));

  options.datetime.parsing_fallback = true;
  ASSERT_OK_AND_ASSIGN(out, DecodeRows("b DATE", rows, options));
  EXPECT_EQ(out.field(0).Value<int32_t>(1), columnar::DaysFromCivil(2024, 1, 2));
  EXPECT_TRUE(out.corrupt->IsNull(1));

  // A text Spark 2 reads with the pattern (one-digit month) fails the call.
  options.datetime.parsing_fallback.reset();
  EXPECT_FALSE(DecodeRows("b DATE", {R"({"b":"2024/1/02"})"}, options).ok());
}

TEST(JsonDecoderTest, TimestampFormatReadsZonelessTextInTheZone) {
  JsonDecodeOptions options;
  options.datetime.timestamp_format = std::make_shared<SlashPattern>();
  options.default_zone_offset_micros = 2 * 3600 * columnar::kMicrosPerSecond;
  ASSERT_OK_AND_ASSIGN(
      Decoded out,
      DecodeRows("c TIMESTAMP", {R"({"c":"2024/01/02 10:30"})", R"({"c":60})"}, options));
  const int64_t local =
      (int64_t{columnar::DaysFromCivil(2024, 1, 2)} * 86400 + 10 * 3600 + 30 * 60) *
      columnar::kMicrosPerSecond;
  EXPECT_EQ(out.field(0).Value<int64_t>(0), local - options.default_zone_offset_micros);
  EXPECT_EQ(out.field(0).Value<int64_t>(1), 60 * columnar::kMicrosPerSecond);
}

Result<Decoded> DecodeFileLines(std::string_view ddl, const std::vector<std::string>& lines,
                                std::vector<int64_t>* source_rows) {
  SILT_ASSIGN_OR_RETURN(auto schema, columnar::ParseDdlSchema(ddl));
  JsonDecodeOptions options;
  options.file_reader = true;
  SILT_ASSIGN_OR_RETURN(auto decoder, JsonDecoder::Make(schema, options));
  std::vector<std::string_view> views(lines.begin(), lines.end());
  Decoded out;
  SILT_ASSIGN_OR_RETURN(out.column,
                        decoder->DecodeViews(views.data(), static_cast<int64_t>(views.size()),
                                             &out.corrupt, &out.stats, source_rows));
  SILT_RETURN_NOT_OK(columnar::ValidateColumn(*out.column));
  return out;
}

TEST(JsonDecoderTest, FileReaderGivesARowPerElementOfATopLevelArray) {
  std::vector<int64_t> source_rows;
  ASSERT_OK_AND_ASSIGN(Decoded out, DecodeFileLines("a INT",
                                                    {R"([{"a":1},{"a":2}])", "[]", R"([{"a":3},4])",
                                                     R"({"a":5})", R"([{"a":"x"},{"a":6}])"},
                                                    &source_rows));
  EXPECT_EQ(source_rows, (std::vector<int64_t>{0, 0, 2, 3, 4, 4}));
  const Column& a = out.field(0);
  EXPECT_EQ(a.Value<int32_t>(0), 1);
  EXPECT_EQ(a.Value<int32_t>(1), 2);
  EXPECT_TRUE(a.IsNull(2));  // an element that is not an object: one bad row
  EXPECT_EQ(out.corrupt->StringValue(2), R"([{"a":3},4])");
  EXPECT_EQ(a.Value<int32_t>(3), 5);
  EXPECT_TRUE(out.corrupt->IsNull(3));
  // A partial element makes every row of its line bad.
  EXPECT_TRUE(a.IsNull(4));
  EXPECT_EQ(a.Value<int32_t>(5), 6);
  EXPECT_EQ(out.corrupt->StringValue(5), R"([{"a":"x"},{"a":6}])");
}

TEST(JsonDecoderTest, FileReaderFailsOnInvalidUtf8InsideTheValueOnly) {
  std::vector<int64_t> source_rows;
  ASSERT_OK_AND_ASSIGN(Decoded out, DecodeFileLines("a INT, b STRING",
                                                    {"{\"a\":1,\"b\":\"x\xffy\"}", "{\"a\":2}\xff",
                                                     "{\"a\":3,\"b\":\"\xc0\xaf\"}"},
                                                    &source_rows));
  EXPECT_TRUE(out.field(0).IsNull(0));
  EXPECT_TRUE(out.corrupt->IsValid(0));
  EXPECT_EQ(out.field(0).Value<int32_t>(1), 2);
  EXPECT_TRUE(out.corrupt->IsNull(1));
  // Jackson's byte parser reads the overlong form of '/'.
  EXPECT_EQ(out.field(1).StringValue(2), "/");
}

}  // namespace
}  // namespace silt::json
