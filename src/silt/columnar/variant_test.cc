#include "silt/columnar/variant.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "silt/columnar/builder.h"
#include "silt/columnar/types.h"
#include "silt/testing/gtest_util.h"

namespace silt::columnar {
namespace {

std::string Hex(std::string_view bytes) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (char c : bytes) {
    if (!out.empty()) out.push_back(' ');
    out.push_back(kHex[static_cast<uint8_t>(c) >> 4]);
    out.push_back(kHex[static_cast<uint8_t>(c) & 15]);
  }
  return out;
}

struct Parsed {
  std::string value;
  std::string metadata;
};

Parsed Parse(std::string_view json) {
  VariantBuilder b;
  JsonToVariantError error;
  EXPECT_TRUE(JsonToVariant(json, false, &b, &error)) << json << ": " << error.message;
  Parsed p;
  EXPECT_TRUE(b.Finish(&p.value, &p.metadata).ok());
  return p;
}

std::string ToJson(const Parsed& p) {
  VariantMetadata m;
  EXPECT_TRUE(m.Init(p.metadata));
  std::string out;
  EXPECT_TRUE(AppendVariantJson(m, VariantValue(p.value), VariantJsonOptions{}, &out));
  return out;
}

std::string RoundTrip(std::string_view json) { return ToJson(Parse(json)); }

bool Rejects(std::string_view json) {
  VariantBuilder b;
  JsonToVariantError error;
  return !JsonToVariant(json, false, &b, &error);
}

TEST(VariantTest, SmallObjectBytesAreSparks) {
  Parsed p = Parse(R"({"a":1})");
  EXPECT_EQ(Hex(p.metadata), "01 01 00 01 61");
  // object, 1 field, id 0, offsets 0 and 2, int8 1.
  EXPECT_EQ(Hex(p.value), "02 01 00 00 02 0c 01");
}

TEST(VariantTest, EmptyMetadataAndPrimitives) {
  Parsed p = Parse("null");
  EXPECT_EQ(Hex(p.metadata), "01 00 00");
  EXPECT_EQ(Hex(p.value), "00");
  EXPECT_EQ(Hex(Parse("true").value), "04");
  EXPECT_EQ(Hex(Parse("false").value), "08");
  EXPECT_EQ(Hex(Parse("300").value), "10 2c 01");                    // int16
  EXPECT_EQ(Hex(Parse("70000").value), "14 70 11 01 00");            // int32
  EXPECT_EQ(Hex(Parse("\"n/a\"").value), "0d 6e 2f 61");             // short string
  EXPECT_EQ(Hex(Parse("1.50").value), "20 02 96 00 00 00");          // decimal4 150 scale 2
  EXPECT_EQ(Hex(Parse("1e2").value), "1c 00 00 00 00 00 00 59 40");  // double 100
}

TEST(VariantTest, ObjectFieldsSortedDictionaryInFirstUseOrder) {
  Parsed p = Parse(R"({"c":3,"b":{"c":1,"a":2},"a":1})");
  // Dictionary: c, b, a (first use). Fields of the outer object in key
  // order a, b, c; values stay in document order.
  EXPECT_EQ(Hex(p.metadata), "01 03 00 01 02 03 63 62 61");
  EXPECT_EQ(RoundTrip(R"({"c":3,"b":{"c":1,"a":2},"a":1})"), R"({"a":1,"b":{"a":2,"c":1},"c":3})");
  VariantMetadata m;
  ASSERT_TRUE(m.Init(p.metadata));
  VariantValue v(p.value);
  VariantValue field;
  ASSERT_EQ(v.FindField(m, "b", &field), 1);
  EXPECT_EQ(field.type(), VariantType::kObject);
  EXPECT_EQ(v.FindField(m, "B", &field), 0);
  EXPECT_EQ(v.FindField(m, "zz", &field), 0);
}

TEST(VariantTest, NumbersFollowSparksRules) {
  EXPECT_EQ(RoundTrip("9223372036854775807"), "9223372036854775807");
  EXPECT_EQ(RoundTrip("-9223372036854775808"), "-9223372036854775808");
  // Beyond a long: a decimal up to 38 digits, else a double.
  EXPECT_EQ(RoundTrip("9223372036854775808"), "9223372036854775808");
  EXPECT_EQ(Parse("9223372036854775808").value[0], static_cast<char>(10 << 2));
  EXPECT_EQ(RoundTrip("123456789012345678901234567890123456789"), "1.2345678901234568E38");
  EXPECT_EQ(RoundTrip("1.50"), "1.5");
  EXPECT_EQ(RoundTrip("-0.0"), "0");
  EXPECT_EQ(RoundTrip("-0"), "0");
  EXPECT_EQ(RoundTrip("100.000"), "100");
  EXPECT_EQ(RoundTrip("0.000001"), "0.000001");
  EXPECT_EQ(RoundTrip("1E2"), "100.0");
  EXPECT_EQ(RoundTrip("1e-7"), "1.0E-7");
  EXPECT_EQ(RoundTrip("1e400"), "\"Infinity\"");
  EXPECT_EQ(RoundTrip("12345678.9"), "12345678.9");
  // 39 fraction digits: a double.
  EXPECT_EQ(RoundTrip("0.000000000000000000000000000000000000001"), "1.0E-39");
}

TEST(VariantTest, StringsAndEscapes) {
  EXPECT_EQ(RoundTrip(R"("a\"b\\c\/d\n\t")"), R"("a\"b\\c/d\n\t")");
  EXPECT_EQ(RoundTrip(R"("\u00e9\ud83d\ude00")"), "\"\xC3\xA9\xF0\x9F\x98\x80\"");
  EXPECT_TRUE(Rejects(R"("\ud800x")"));
  EXPECT_EQ(RoundTrip(R"("\u0001")"), R"("\u0001")");
  std::string long_string(100, 'x');
  Parsed p = Parse("\"" + long_string + "\"");
  EXPECT_EQ(static_cast<uint8_t>(p.value[0]), 16 << 2);  // long string
  EXPECT_EQ(ToJson(p), "\"" + long_string + "\"");
}

TEST(VariantTest, StrictJsonLikeJackson) {
  EXPECT_TRUE(Rejects(""));
  EXPECT_TRUE(Rejects("   "));
  EXPECT_TRUE(Rejects("{"));
  EXPECT_TRUE(Rejects("[1,]"));
  EXPECT_TRUE(Rejects("{'a':1}"));
  EXPECT_TRUE(Rejects("01"));
  EXPECT_TRUE(Rejects("1."));
  EXPECT_TRUE(Rejects("+1"));
  EXPECT_TRUE(Rejects("NaN"));
  EXPECT_TRUE(Rejects("truex"));
  EXPECT_TRUE(Rejects("1x"));
  EXPECT_TRUE(Rejects("\"a\x01\""));
  EXPECT_TRUE(Rejects(R"("\x")"));
  EXPECT_TRUE(Rejects(R"({"a":1,"a":2})"));
  // What follows a complete root object, array or string is never read.
  EXPECT_EQ(RoundTrip(R"({"a":1} trailing)"), R"({"a":1})");
  EXPECT_EQ(RoundTrip("[1]]"), "[1]");
  EXPECT_EQ(RoundTrip("1 2"), "1");
  std::string deep(1000, '[');
  deep += std::string(1000, ']');
  EXPECT_FALSE(Rejects(deep));
  EXPECT_TRUE(Rejects("[" + deep + "]"));
}

TEST(VariantTest, DuplicateKeysAllowedKeepTheLast) {
  VariantBuilder b;
  JsonToVariantError error;
  ASSERT_TRUE(JsonToVariant(R"({"a":1,"b":2,"a":3})", true, &b, &error));
  Parsed p;
  ASSERT_TRUE(b.Finish(&p.value, &p.metadata).ok());
  EXPECT_EQ(ToJson(p), R"({"a":3,"b":2})");
}

TEST(VariantTest, KeysSortLikeJavaStrings) {
  // U+FF21 (EF BC A1) sorts after U+1F600 (F0 9F 98 80) in UTF-16 order.
  EXPECT_LT(CompareVariantKeys("\xF0\x9F\x98\x80", "\xEF\xBC\xA1"), 0);
  EXPECT_GT(CompareVariantKeys("\xEF\xBC\xA1", "\xF0\x9F\x98\x80"), 0);
  EXPECT_LT(CompareVariantKeys("a", "b"), 0);
  EXPECT_LT(CompareVariantKeys("a", "ab"), 0);
  EXPECT_EQ(CompareVariantKeys("ab", "ab"), 0);
  EXPECT_LT(CompareVariantKeys("\xC3\xA9", "\xF0\x9F\x98\x80"), 0);
}

TEST(VariantTest, LargeObjectsAndArraysUseWideHeaders) {
  std::string json = "{";
  for (int i = 0; i < 300; ++i) {
    if (i > 0) json += ",";
    json += "\"k" + std::to_string(i) + "\":" + std::to_string(i);
  }
  json += "}";
  Parsed p = Parse(json);
  VariantMetadata m;
  ASSERT_TRUE(m.Init(p.metadata));
  EXPECT_EQ(m.size(), 300u);
  VariantValue v(p.value);
  VariantValue::Container c;
  ASSERT_TRUE(v.GetContainer(&c));
  EXPECT_EQ(c.num_elements, 300u);
  EXPECT_EQ(c.id_size, 2);
  VariantValue field;
  ASSERT_EQ(v.FindField(m, "k299", &field), 1);
  EXPECT_EQ(field.GetLong(), 299);
  ASSERT_EQ(v.FindField(m, "k7", &field), 1);
  EXPECT_EQ(field.GetLong(), 7);
  EXPECT_EQ(v.FindField(m, "k300", &field), 0);

  std::string array = "[";
  for (int i = 0; i < 1000; ++i) array += (i ? ",\"" : "\"") + std::string(70, 'a') + "\"";
  array += "]";
  EXPECT_EQ(RoundTrip(array), array);
}

TEST(VariantTest, AppendVariantRekeysIntoANewDictionary) {
  Parsed inner = Parse(R"({"x":{"y":[1,{"z":true}]},"w":null})");
  VariantMetadata m;
  ASSERT_TRUE(m.Init(inner.metadata));
  VariantValue v(inner.value);
  VariantValue sub;
  ASSERT_EQ(v.FindField(m, "x", &sub), 1);
  VariantBuilder b;
  b.AddKey("unused-before");
  b.Reset();
  ASSERT_TRUE(b.AppendVariant(m, sub).ok());
  Parsed out;
  ASSERT_TRUE(b.Finish(&out.value, &out.metadata).ok());
  EXPECT_EQ(ToJson(out), R"({"y":[1,{"z":true}]})");
  // Only the keys used below x remain.
  EXPECT_EQ(Hex(out.metadata), "01 02 00 01 02 79 7a");
}

TEST(VariantTest, TypedScalarsPrintAsSpark) {
  VariantBuilder b;
  std::string value;
  std::string metadata;
  auto print = [&](auto append) {
    b.Reset();
    append();
    value.clear();
    metadata.clear();
    EXPECT_TRUE(b.Finish(&value, &metadata).ok());
    return ToJson(Parsed{value, metadata});
  };
  EXPECT_EQ(print([&] { b.AppendDate(19000); }), "\"2022-01-08\"");
  EXPECT_EQ(print([&] { b.AppendTimestamp(1641600000123000); }),
            "\"2022-01-08 00:00:00.123+00:00\"");
  EXPECT_EQ(print([&] { b.AppendTimestampNtz(1641600000000000); }), "\"2022-01-08 00:00:00\"");
  EXPECT_EQ(print([&] { b.AppendFloat(0.1f); }), "0.1");
  EXPECT_EQ(print([&] { b.AppendDouble(std::nan("")); }), "\"NaN\"");
  EXPECT_EQ(print([&] { b.AppendBinary("hello"); }), "\"aGVsbG8=\"");
  EXPECT_EQ(print([&] { b.AppendDecimal(-12300, 4); }), "-1.23");
  EXPECT_EQ(print([&] {
              b.AppendUuid(std::string(
                  "\x12\x34\x56\x78\x9a\xbc\xde\xf0\x12\x34\x56\x78\x9a\xbc\xde\xf0", 16));
            }),
            "\"12345678-9abc-def0-1234-56789abcdef0\"");
  VariantJsonOptions plus_two;
  plus_two.offset_seconds = [](const void*, int64_t) { return int32_t{7200}; };
  b.Reset();
  b.AppendTimestamp(0);
  value.clear();
  metadata.clear();
  ASSERT_TRUE(b.Finish(&value, &metadata).ok());
  VariantMetadata m;
  ASSERT_TRUE(m.Init(metadata));
  std::string out;
  ASSERT_TRUE(AppendVariantJson(m, VariantValue(value), plus_two, &out));
  EXPECT_EQ(out, "\"1970-01-01 02:00:00+02:00\"");
}

TEST(VariantTest, MalformedBytesAreReportedNotRead) {
  VariantMetadata m;
  EXPECT_FALSE(m.Init(""));
  EXPECT_FALSE(m.Init("\x02"));                          // version 2
  EXPECT_FALSE(m.Init(std::string("\x01\x05\x00", 3)));  // 5 keys, no offsets
  ASSERT_TRUE(m.Init(std::string("\x01\x00\x00", 3)));
  std::string out;
  // An object claiming a field past the end of the buffer.
  EXPECT_FALSE(AppendVariantJson(m, VariantValue(std::string("\x02\x01\x00\x00\x09", 5)),
                                 VariantJsonOptions{}, &out));
  // A long string whose length runs past the buffer.
  EXPECT_EQ(VariantValue(std::string("\x40\xff\x00\x00\x00x", 6)).type(), VariantType::kInvalid);
  // A type id silt does not know (TIME).
  EXPECT_EQ(VariantValue(std::string("\x44\0\0\0\0\0\0\0\0", 9)).type(), VariantType::kInvalid);
  EXPECT_EQ(VariantValue("").type(), VariantType::kInvalid);
  // Every truncation of a valid value is either invalid or a shorter valid
  // value, never a read past the end (run under ASan in CI).
  Parsed p =
      Parse(R"({"a":[1,"xyz",{"b":1.5}],"c":"long long long long long long long long string"})");
  ASSERT_TRUE(m.Init(p.metadata));
  for (size_t n = 0; n < p.value.size(); ++n) {
    std::string cut = p.value.substr(0, n);
    out.clear();
    AppendVariantJson(m, VariantValue(cut), VariantJsonOptions{}, &out);
  }
}

TEST(VariantTest, ColumnOfVariantsRoundTripsThroughBuilder) {
  ColumnBuilder builder(DataType::Variant());
  Parsed a = Parse("[1,2]");
  builder.child(0)->AppendString(a.metadata);
  builder.child(1)->AppendString(a.value);
  builder.AppendValid();
  builder.AppendNull();
  ColumnPtr column = builder.Finish();
  ASSERT_TRUE(ValidateColumn(*column).ok());
  EXPECT_EQ(column->length, 2);
  EXPECT_EQ(column->null_count, 1);
  EXPECT_EQ(column->children[1]->StringValue(0), a.value);
  ColumnPtr taken = TakeColumn(*column, {1, 0, 0});
  ASSERT_TRUE(ValidateColumn(*taken).ok());
  EXPECT_EQ(taken->children[0]->StringValue(2), a.metadata);
  EXPECT_EQ(DataType::Variant()->ToDdl(), "VARIANT");
  ASSERT_OK_AND_ASSIGN(
      SchemaPtr schema,
      SchemaFromJson(
          R"({"type":"struct","fields":[{"name":"v","type":"variant","nullable":true,"metadata":{}},)"
          R"({"name":"a","type":{"type":"array","elementType":"variant","containsNull":true},)"
          R"("nullable":true,"metadata":{}}]})"));
  EXPECT_EQ(schema->field(0).type->id(), TypeId::kVariant);
  EXPECT_EQ(schema->field(1).type->element_type()->id(), TypeId::kVariant);
  EXPECT_EQ(
      SchemaToJson(*schema),
      R"({"type":"struct","fields":[{"name":"v","type":"variant","nullable":true,"metadata":{}},)"
      R"({"name":"a","type":{"type":"array","elementType":"variant","containsNull":true},)"
      R"("nullable":true,"metadata":{}}]})");
  ASSERT_OK_AND_ASSIGN(SchemaPtr ddl, ParseDdlSchema("v VARIANT, m MAP<STRING, VARIANT>"));
  EXPECT_EQ(ddl->field(0).type->id(), TypeId::kVariant);
  EXPECT_EQ(ddl->field(1).type->ToDdl(), "MAP<STRING, VARIANT>");
}

}  // namespace
}  // namespace silt::columnar
