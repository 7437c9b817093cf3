#include "silt/delta/partition_utils.h"

#include <gtest/gtest.h>

#include <cmath>

#include "silt/columnar/builder.h"
#include "silt/columnar/temporal.h"
#include "silt/testing/gtest_util.h"

namespace silt::delta {
namespace {

using columnar::ColumnBuilder;
using columnar::DataType;

TEST(PartitionEscapeTest, EscapesExactlySparksCharacterSet) {
  struct Case {
    std::string in;
    std::string out;
  };
  const Case cases[] = {
      {"smart_plug", "smart_plug"},
      {"a b", "a b"},  // space is kept in the directory name
      {"12:13", "12%3A13"},
      {"a/b", "a%2Fb"},
      {"100%", "100%25"},
      {"x=y", "x%3Dy"},
      {"q?", "q%3F"},
      {"#h", "%23h"},
      {"\"'*", "%22%27%2A"},
      {"\\", "%5C"},
      {"{[]}^", "%7B%5B%5D}%5E"},
      {std::string("\x01\x1f\x7f", 3), "%01%1F%7F"},
      {"+-_.,;~!@$&()<>|`", "+-_.,;~!@$&()<>|`"},
      {"caf\xc3\xa9", "caf\xc3\xa9"},  // non-ASCII is kept
  };
  for (const Case& c : cases) {
    EXPECT_EQ(EscapePartitionPathName(c.in), c.out) << c.in;
    EXPECT_EQ(UnescapePartitionPathName(c.out), c.in) << c.out;
  }
}

TEST(PartitionEscapeTest, UnescapeKeepsMalformedEscapes) {
  EXPECT_EQ(UnescapePartitionPathName("100%"), "100%");
  EXPECT_EQ(UnescapePartitionPathName("%zz%4"), "%zz%4");
  EXPECT_EQ(UnescapePartitionPathName("%3a"), ":");
}

TEST(PartitionDirectoryTest, JoinsColumnsAndMarksNulls) {
  PartitionValues values = {{"device_type", "smart_plug"},
                            {"event_date", "2026-06-22"},
                            {"ts", "2024-01-01T10:00:00.000000Z"},
                            {"n", std::nullopt}};
  EXPECT_EQ(PartitionDirectory(values),
            "device_type=smart_plug/event_date=2026-06-22/ts=2024-01-01T10%3A00%3A00.000000Z/"
            "n=__HIVE_DEFAULT_PARTITION__");
  EXPECT_EQ(PartitionDirectory({}), "");
}

TEST(UriPathTest, EncodesLikeJavaUri) {
  // Pairs seen in Delta's golden tables written by Spark.
  EXPECT_EQ(UriEncodePath("special p@#h"), "special%20p@%23h");
  EXPECT_EQ(UriEncodePath("_2=bar+%2521/part-0.parquet"), "_2=bar+%252521/part-0.parquet");
  EXPECT_EQ(UriEncodePath("as_timestamp=2021-09-08 11%3A11%3A11/f"),
            "as_timestamp=2021-09-08%2011%253A11%253A11/f");
  EXPECT_EQ(UriEncodePath("a-z_A.Z~0!9*'();:@&=+$,/"), "a-z_A.Z~0!9*'();:@&=+$,/");
  EXPECT_EQ(UriEncodePath("[]{}<>\"|\\^`?"), "%5B%5D%7B%7D%3C%3E%22%7C%5C%5E%60%3F");
}

TEST(UriPathTest, KeepsNonAsciiCharactersLikeJavaUri) {
  // delta-spark 3.2 logs s=\u00e9 and s=\u65e5\u672c unquoted (URI's "other"
  // characters); C1 controls, Unicode spaces and malformed UTF-8 are quoted.
  EXPECT_EQ(UriEncodePath("s=caf\xc3\xa9/x"), "s=caf\xc3\xa9/x");
  EXPECT_EQ(UriEncodePath("s=\xe6\x97\xa5\xe6\x9c\xac"), "s=\xe6\x97\xa5\xe6\x9c\xac");
  EXPECT_EQ(UriEncodePath("\xf0\x9f\x98\x80 "), "\xf0\x9f\x98\x80%20");  // U+1F600
  // U+0085 (a C1 control), U+00A0, U+3000, U+2028, U+2009 (space separators).
  EXPECT_EQ(UriEncodePath(std::string("a\xc2\x85") + "b"), "a%C2%85b");
  EXPECT_EQ(UriEncodePath(std::string("a\xc2\xa0") + "b"), "a%C2%A0b");
  EXPECT_EQ(UriEncodePath("\xe3\x80\x80\xe2\x80\xa8\xe2\x80\x89"), "%E3%80%80%E2%80%A8%E2%80%89");
  EXPECT_EQ(UriEncodePath("\xe2\x80\x8b"), "\xe2\x80\x8b");      // U+200B is not a space char
  EXPECT_EQ(UriEncodePath("\xc3"), "%C3");                       // truncated
  EXPECT_EQ(UriEncodePath("\xc3("), "%C3(");                     // bad continuation
  EXPECT_EQ(UriEncodePath("\xc0\xaf"), "%C0%AF");                // overlong '/'
  EXPECT_EQ(UriEncodePath("\xed\xa0\x80"), "%ED%A0%80");         // surrogate
  EXPECT_EQ(UriEncodePath("\xf4\x90\x80\x80"), "%F4%90%80%80");  // > U+10FFFF
}

TEST(UriPathTest, DecodeInvertsEncode) {
  for (std::string s : {"special p@#h", "b=12%3A13/part-1.parquet", "caf\xc3\xa9 x+y", ""}) {
    ASSERT_OK_AND_ASSIGN(std::string back, UriDecodePath(UriEncodePath(s)));
    EXPECT_EQ(back, s);
  }
  ASSERT_OK_AND_ASSIGN(std::string dash, UriDecodePath("bar%2Dbar.snappy.parquet"));
  EXPECT_EQ(dash, "bar-bar.snappy.parquet");
  ASSERT_OK_AND_ASSIGN(std::string plus, UriDecodePath("a+b"));
  EXPECT_EQ(plus, "a+b");
}

TEST(UriPathTest, MalformedEscapeIsAnError) {
  ASSERT_RAISES(InvalidArgument, UriDecodePath("abc%2"));
  ASSERT_RAISES(InvalidArgument, UriDecodePath("abc%g1"));
}

TEST(ResolveDataFilePathTest, CanonicalizesLikeDeltaSpark) {
  auto resolve = [](std::string_view p) { return ResolveDataFilePath("/t", p).ValueOrDie(); };
  EXPECT_EQ(resolve("a%20b/part-0.parquet"), "/t/a b/part-0.parquet");
  EXPECT_EQ(resolve("/some/abs/path"), "/some/abs/path");
  EXPECT_EQ(resolve("file:/some/abs/path"), "/some/abs/path");
  EXPECT_EQ(resolve("file:///some/abs/path"), "/some/abs/path");
  EXPECT_EQ(resolve("file:/some/with%20space/p@%23h"), "/some/with space/p@#h");
  EXPECT_EQ(resolve("s3://bucket/t/x.parquet"), "s3://bucket/t/x.parquet");
}

columnar::ColumnPtr OneValue(const columnar::TypePtr& type, auto append) {
  ColumnBuilder b(type);
  append(b);
  return b.Finish();
}

TEST(SerializePartitionValueTest, UsesDeltaStringForms) {
  auto ser = [](const columnar::ColumnPtr& c) { return SerializePartitionValue(*c, 0); };
  EXPECT_EQ(ser(OneValue(DataType::Int(), [](auto& b) { b.template Append<int32_t>(-42); })),
            "-42");
  EXPECT_EQ(ser(OneValue(DataType::Long(), [](auto& b) { b.template Append<int64_t>(1LL << 40); })),
            "1099511627776");
  EXPECT_EQ(ser(OneValue(DataType::Byte(), [](auto& b) { b.template Append<int8_t>(-1); })), "-1");
  EXPECT_EQ(ser(OneValue(DataType::Double(), [](auto& b) { b.template Append<double>(1.0); })),
            "1.0");
  EXPECT_EQ(ser(OneValue(DataType::Float(), [](auto& b) { b.template Append<float>(0.5f); })),
            "0.5");
  EXPECT_EQ(ser(OneValue(DataType::Boolean(), [](auto& b) { b.AppendBool(true); })), "true");
  EXPECT_EQ(
      ser(OneValue(DataType::Decimal(10, 2), [](auto& b) { b.template Append<__int128>(-12345); })),
      "-123.45");
  EXPECT_EQ(ser(OneValue(
                DataType::Date(),
                [](auto& b) { b.template Append<int32_t>(columnar::DaysFromCivil(2026, 6, 22)); })),
            "2026-06-22");
  int64_t noon = int64_t{columnar::DaysFromCivil(2000, 1, 1)} * columnar::kMicrosPerDay +
                 12 * 3600 * columnar::kMicrosPerSecond;
  EXPECT_EQ(
      ser(OneValue(DataType::Timestamp(), [&](auto& b) { b.template Append<int64_t>(noon); })),
      "2000-01-01T12:00:00.000000Z");
  EXPECT_EQ(ser(OneValue(DataType::TimestampNtz(),
                         [&](auto& b) { b.template Append<int64_t>(noon + 123456); })),
            "2000-01-01 12:00:00.123456");
  EXPECT_EQ(
      ser(OneValue(DataType::TimestampNtz(), [&](auto& b) { b.template Append<int64_t>(noon); })),
      "2000-01-01 12:00:00");
  EXPECT_EQ(ser(OneValue(DataType::String(), [](auto& b) { b.AppendString("a/b"); })), "a/b");
  EXPECT_EQ(ser(OneValue(DataType::String(), [](auto& b) { b.AppendString(""); })), std::nullopt);
  EXPECT_EQ(ser(OneValue(DataType::Int(), [](auto& b) { b.AppendNull(); })), std::nullopt);
}

// Regression (issue #23, point 1): a partition value is a JSON string in
// the log, so bytes that are not UTF-8 become U+FFFD, as delta-spark writes
// them (its partition directory is named after the replaced value too).
TEST(SerializePartitionValueTest, InvalidUtf8BecomesReplacementCharacters) {
  auto ser = [](const columnar::ColumnPtr& c) { return SerializePartitionValue(*c, 0); };
  EXPECT_EQ(ser(OneValue(DataType::String(),
                         [](auto& b) {
                           b.AppendString(
                               "a\xFF"
                               "b");
                         })),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(ser(OneValue(DataType::String(), [](auto& b) { b.AppendString("caf\xC3\xA9"); })),
            "caf\xC3\xA9");
}

TEST(FormatDecimalTest, PlainText) {
  EXPECT_EQ(FormatDecimal(12345, 2), "123.45");
  EXPECT_EQ(FormatDecimal(-5, 3), "-0.005");
  EXPECT_EQ(FormatDecimal(7, 0), "7");
  EXPECT_EQ(FormatDecimal(0, 5), "0.00000");
  EXPECT_EQ(FormatDecimal(4, 5), "0.00004");
}

TEST(MakePartitionColumnTest, ParsesEachTypeIntoAConstantColumn) {
  ASSERT_OK_AND_ASSIGN(auto ints, MakePartitionColumn(DataType::Int(), "17", 3));
  ASSERT_EQ(ints->length, 3);
  EXPECT_EQ(ints->Value<int32_t>(2), 17);
  EXPECT_EQ(ints->null_count, 0);

  ASSERT_OK_AND_ASSIGN(auto dec,
                       MakePartitionColumn(DataType::Decimal(12, 5), "-2342342.23423", 1));
  EXPECT_EQ(dec->Value<__int128>(0), static_cast<__int128>(-234234223423LL));
  ASSERT_OK_AND_ASSIGN(auto dec2, MakePartitionColumn(DataType::Decimal(5, 2), "1.5", 1));
  EXPECT_EQ(dec2->Value<__int128>(0), 150);
  ASSERT_OK_AND_ASSIGN(auto dec3, MakePartitionColumn(DataType::Decimal(5, 0), "1E+2", 1));
  EXPECT_EQ(dec3->Value<__int128>(0), 100);

  ASSERT_OK_AND_ASSIGN(auto dbl, MakePartitionColumn(DataType::Double(), "NaN", 1));
  EXPECT_TRUE(std::isnan(dbl->Value<double>(0)));
  ASSERT_OK_AND_ASSIGN(auto flt, MakePartitionColumn(DataType::Float(), "1.0", 1));
  EXPECT_EQ(flt->Value<float>(0), 1.0f);

  ASSERT_OK_AND_ASSIGN(auto b, MakePartitionColumn(DataType::Boolean(), "false", 2));
  EXPECT_FALSE(b->BoolValue(1));

  ASSERT_OK_AND_ASSIGN(auto s, MakePartitionColumn(DataType::String(), "bar+%21", 2));
  EXPECT_EQ(s->StringValue(1), "bar+%21");

  ASSERT_OK_AND_ASSIGN(auto d, MakePartitionColumn(DataType::Date(), "2021-09-08", 1));
  EXPECT_EQ(d->Value<int32_t>(0), columnar::DaysFromCivil(2021, 9, 8));

  // Both timestamp forms name the same instant when the legacy one is UTC.
  ASSERT_OK_AND_ASSIGN(
      auto iso, MakePartitionColumn(DataType::Timestamp(), "2024-01-01T10:00:00.000000Z", 1));
  ASSERT_OK_AND_ASSIGN(auto legacy,
                       MakePartitionColumn(DataType::Timestamp(), "2024-01-01 10:00:00", 1));
  EXPECT_EQ(iso->Value<int64_t>(0), legacy->Value<int64_t>(0));
  EXPECT_EQ(iso->Value<int64_t>(0),
            int64_t{columnar::DaysFromCivil(2024, 1, 1)} * columnar::kMicrosPerDay +
                10 * 3600 * columnar::kMicrosPerSecond);

  ASSERT_OK_AND_ASSIGN(auto nulls, MakePartitionColumn(DataType::Long(), std::nullopt, 4));
  EXPECT_EQ(nulls->length, 4);
  EXPECT_EQ(nulls->null_count, 4);
}

TEST(MakePartitionColumnTest, BadValueNamesValueAndType) {
  auto r = MakePartitionColumn(DataType::Int(), "12x", 1);
  ASSERT_RAISES(InvalidArgument, r);
  EXPECT_NE(r.status().message().find("'12x'"), std::string::npos);
  EXPECT_NE(r.status().message().find("integer"), std::string::npos);
  ASSERT_RAISES(InvalidArgument, MakePartitionColumn(DataType::Byte(), "300", 1));
  ASSERT_RAISES(InvalidArgument, MakePartitionColumn(DataType::Decimal(3, 1), "1.25", 1));
  ASSERT_RAISES(InvalidArgument, MakePartitionColumn(DataType::Date(), "yesterday", 1));
}

TEST(FindPartitionValueTest, MatchesNamesCaseInsensitively) {
  PartitionValues values = {{"Device", "a"}, {"n", std::nullopt}};
  EXPECT_EQ(FindPartitionValue(values, "device"), "a");
  EXPECT_EQ(FindPartitionValue(values, "n"), std::nullopt);
  EXPECT_EQ(FindPartitionValue(values, "missing"), std::nullopt);
}

TEST(PartitionKeyTest, CanonicalOrderAndNullsTellPartitionsApart) {
  PartitionValues spark = {{"Day", "2024-01-01"}, {"device", "a"}};
  PartitionValues other = {{"device", "a"}, {"day", "2024-01-01"}};
  std::vector<std::string> columns = {"day", "device"};
  PartitionValues canonical = CanonicalPartitionValues(other, columns);
  EXPECT_EQ(canonical, (PartitionValues{{"day", "2024-01-01"}, {"device", "a"}}));
  EXPECT_EQ(PartitionKey(CanonicalPartitionValues(spark, columns)), PartitionKey(canonical));
  EXPECT_NE(PartitionKey(spark), PartitionKey(other));
  EXPECT_EQ(CanonicalPartitionValues({{"day", "x"}}, columns)[1].second, std::nullopt);

  PartitionValues null_value = {{"device", std::nullopt}};
  PartitionValues empty_value = {{"device", ""}};
  EXPECT_NE(PartitionKey(null_value), PartitionKey(empty_value));
  EXPECT_EQ(PartitionKey({}), "");
}

}  // namespace
}  // namespace silt::delta
