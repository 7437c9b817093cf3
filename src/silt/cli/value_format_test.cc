#include "silt/cli/value_format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "silt/columnar/builder.h"

namespace silt::cli {
namespace {

using columnar::ColumnBuilder;
using columnar::ColumnPtr;
using columnar::DataType;
using columnar::Field;
using columnar::RecordBatch;
using columnar::TypePtr;

// 2026-06-22T08:16:00.123456Z
constexpr int64_t kEventMicros = 1782116160123456;
constexpr int32_t kEventDays = 20626;

RecordBatch MakeBatch(std::vector<Field> fields, std::vector<ColumnPtr> columns) {
  RecordBatch batch;
  batch.schema = DataType::Struct(std::move(fields));
  batch.num_rows = columns.empty() ? 0 : columns[0]->length;
  batch.columns = std::move(columns);
  return batch;
}

ColumnPtr Strings(const std::vector<const char*>& values) {
  ColumnBuilder builder(DataType::String());
  for (const char* v : values) {
    if (v == nullptr) {
      builder.AppendNull();
    } else {
      builder.AppendString(v);
    }
  }
  return builder.Finish();
}

template <typename T>
ColumnPtr Fixed(TypePtr type, const std::vector<T>& values, std::vector<bool> valid = {}) {
  ColumnBuilder builder(std::move(type));
  for (size_t i = 0; i < values.size(); ++i) {
    if (!valid.empty() && !valid[i]) {
      builder.AppendNull();
    } else {
      builder.Append<T>(values[i]);
    }
  }
  return builder.Finish();
}

TEST(ValueFormatTest, RowToJsonWritesSparkToJsonFormsAndOmitsNulls) {
  RecordBatch batch = MakeBatch(
      {{"device_id", DataType::String()},
       {"event_time", DataType::Timestamp()},
       {"event_date", DataType::Date()},
       {"power", DataType::Double()},
       {"battery", DataType::Int()},
       {"contact", DataType::Boolean()}},
      {Strings({"smart-plug-01"}), Fixed<int64_t>(DataType::Timestamp(), {kEventMicros}),
       Fixed<int32_t>(DataType::Date(), {kEventDays}), Fixed<double>(DataType::Double(), {84.3}),
       Fixed<int32_t>(DataType::Int(), {0}, {false}), [] {
         ColumnBuilder b(DataType::Boolean());
         b.AppendBool(true);
         return b.Finish();
       }()});
  EXPECT_EQ(RowToJson(batch, 0),
            R"({"device_id":"smart-plug-01","event_time":"2026-06-22T08:16:00.123Z",)"
            R"("event_date":"2026-06-22","power":84.3,"contact":true})");
}

TEST(ValueFormatTest, ExactStyleKeepsMicrosecondsShortestDoublesAndDecimalScale) {
  RecordBatch batch =
      MakeBatch({{"event_time", DataType::Timestamp()},
                 {"ntz", DataType::TimestampNtz()},
                 {"power", DataType::Double()},
                 {"ratio", DataType::Float()},
                 {"price", DataType::Decimal(10, 8)}},
                {Fixed<int64_t>(DataType::Timestamp(), {kEventMicros}),
                 Fixed<int64_t>(DataType::TimestampNtz(), {kEventMicros}),
                 Fixed<double>(DataType::Double(), {1e22}), Fixed<float>(DataType::Float(), {0.1F}),
                 Fixed<__int128>(DataType::Decimal(10, 8), {static_cast<__int128>(1)})});
  EXPECT_EQ(RowToJson(batch, 0, ValueStyle::kExact),
            R"({"event_time":"2026-06-22T08:16:00.123456Z","ntz":"2026-06-22T08:16:00.123456",)"
            R"("power":1e+22,"ratio":0.1,"price":0.00000001})");
  EXPECT_EQ(RowToCsv(batch, 0, ValueStyle::kExact),
            "2026-06-22T08:16:00.123456Z,2026-06-22T08:16:00.123456,1e+22,0.1,0.00000001");
  // The Spark style drops the sub-millisecond digits and prints Java's forms.
  EXPECT_EQ(RowToCsv(batch, 0, ValueStyle::kSpark),
            "2026-06-22T08:16:00.123Z,2026-06-22T08:16:00.123,1.0E22,0.1,1E-8");
}

TEST(ValueFormatTest, ShortestDoublesReadBackToTheSameValue) {
  EXPECT_EQ(FormatShortestDouble(0.1), "0.1");
  EXPECT_EQ(FormatShortestDouble(1.0), "1.0");
  EXPECT_EQ(FormatShortestDouble(-0.0), "-0.0");
  EXPECT_EQ(FormatShortestDouble(5e-324), "5e-324");
  EXPECT_EQ(FormatShortestDouble(9007199254740994.0), "9007199254740994.0");
  EXPECT_EQ(FormatShortestDouble(std::exp(42.0)), "1.739274941520501e+18");
  EXPECT_EQ(FormatShortestDouble(std::nan("")), "NaN");
  EXPECT_EQ(FormatShortestDouble(-HUGE_VAL), "-Infinity");
  EXPECT_EQ(FormatShortestFloat(16777216.0F), "16777216.0");
  EXPECT_EQ(FormatShortestFloat(1.4e-45F), "1e-45");
  EXPECT_EQ(FormatExactTimestamp(-1), "1969-12-31T23:59:59.999999Z");
  EXPECT_EQ(FormatExactTimestamp(0), "1970-01-01T00:00:00.000000Z");
}

TEST(ValueFormatTest, DoublesPrintAsJavaDoesAndNonFiniteAsStrings) {
  RecordBatch batch = MakeBatch(
      {{"d", DataType::Double()}},
      {Fixed<double>(DataType::Double(), {1.0, 1e10, std::numeric_limits<double>::quiet_NaN(),
                                          -std::numeric_limits<double>::infinity()})});
  EXPECT_EQ(RowToJson(batch, 0), R"({"d":1.0})");
  EXPECT_EQ(RowToJson(batch, 1), R"({"d":1.0E10})");
  EXPECT_EQ(RowToJson(batch, 2), R"({"d":"NaN"})");
  EXPECT_EQ(RowToJson(batch, 3), R"({"d":"-Infinity"})");
}

TEST(ValueFormatTest, JsonTimestampsTruncateToMillisecondsIncludingBeforeEpoch) {
  EXPECT_EQ(FormatJsonTimestamp(kEventMicros), "2026-06-22T08:16:00.123Z");
  EXPECT_EQ(FormatJsonTimestamp(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatJsonTimestamp(-1), "1969-12-31T23:59:59.999Z");
}

TEST(ValueFormatTest, ShowTimestampsTrimTrailingFractionZeros) {
  EXPECT_EQ(FormatShowTimestamp(kEventMicros), "2026-06-22 08:16:00.123456");
  EXPECT_EQ(FormatShowTimestamp(kEventMicros - 3456), "2026-06-22 08:16:00.12");
  EXPECT_EQ(FormatShowTimestamp(kEventMicros - 123456), "2026-06-22 08:16:00");
}

TEST(ValueFormatTest, DecimalsFollowJavaBigDecimalToString) {
  EXPECT_EQ(FormatDecimal(150, 2), "1.50");
  EXPECT_EQ(FormatDecimal(-1, 3), "-0.001");
  EXPECT_EQ(FormatDecimal(0, 2), "0.00");
  EXPECT_EQ(FormatDecimal(42, 0), "42");
  EXPECT_EQ(FormatDecimal(1, 8), "1E-8");
  EXPECT_EQ(FormatDecimal(-123, 9), "-1.23E-7");
  __int128 big = static_cast<__int128>(1) << 100;
  EXPECT_EQ(FormatDecimal(big, 0), "1267650600228229401496703205376");
}

TEST(ValueFormatTest, Base64UsesStandardAlphabetWithPadding) {
  EXPECT_EQ(Base64Encode(""), "");
  EXPECT_EQ(Base64Encode("f"), "Zg==");
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
  EXPECT_EQ(Base64Encode("foo"), "Zm9v");
  EXPECT_EQ(Base64Encode(std::string("\xff\xfe\x00", 3)), "//4A");
}

TEST(ValueFormatTest, NestedValuesAreJsonWithNullsKeptInsideArraysAndMaps) {
  TypePtr array_type = DataType::Array(DataType::Int());
  ColumnBuilder arrays(array_type);
  arrays.child(0)->Append<int32_t>(1);
  arrays.child(0)->AppendNull();
  arrays.CloseList();

  TypePtr struct_type = DataType::Struct({{"x", DataType::Double()}, {"s", DataType::String()}});
  ColumnBuilder structs(struct_type);
  structs.child(0)->Append<double>(2.5);
  structs.child(1)->AppendNull();
  structs.AppendValid();

  TypePtr map_type = DataType::Map(DataType::String(), DataType::Long());
  ColumnBuilder maps(map_type);
  maps.child(0)->child(0)->AppendString("a");
  maps.child(0)->child(1)->AppendNull();
  maps.child(0)->AppendValid();
  maps.CloseList();

  RecordBatch batch = MakeBatch({{"arr", array_type}, {"st", struct_type}, {"m", map_type}},
                                {arrays.Finish(), structs.Finish(), maps.Finish()});
  EXPECT_EQ(RowToJson(batch, 0), R"({"arr":[1,null],"st":{"x":2.5},"m":{"a":null}})");
  EXPECT_EQ(ShowCell(*batch.column(0), 0), "[1, NULL]");
  EXPECT_EQ(ShowCell(*batch.column(1), 0), "{2.5, NULL}");
  EXPECT_EQ(ShowCell(*batch.column(2), 0), "{a -> NULL}");
}

TEST(ValueFormatTest, CsvQuotesOnlyWhenNeededAndSeparatesNullFromEmpty) {
  RecordBatch batch =
      MakeBatch({{"s", DataType::String()}, {"n", DataType::Int()}, {"t", DataType::Timestamp()}},
                {Strings({"plain", "a,b", "say \"hi\"", "", nullptr}),
                 Fixed<int32_t>(DataType::Int(), {1, 2, 3, 4, 5}, {true, true, true, false, true}),
                 Fixed<int64_t>(DataType::Timestamp(), {kEventMicros, 0, 0, 0, 0})});
  EXPECT_EQ(CsvHeader(*batch.schema), "s,n,t");
  EXPECT_EQ(RowToCsv(batch, 0), "plain,1,2026-06-22T08:16:00.123Z");
  EXPECT_EQ(RowToCsv(batch, 1), "\"a,b\",2,1970-01-01T00:00:00.000Z");
  EXPECT_EQ(RowToCsv(batch, 2), "\"say \"\"hi\"\"\",3,1970-01-01T00:00:00.000Z");
  EXPECT_EQ(RowToCsv(batch, 3), "\"\",,1970-01-01T00:00:00.000Z");
  EXPECT_EQ(RowToCsv(batch, 4), ",5,1970-01-01T00:00:00.000Z");
}

TEST(ValueFormatTest, TablePrinterMatchesSparkShowLayout) {
  RecordBatch batch = MakeBatch({{"id", DataType::Int()}, {"name", DataType::String()}},
                                {Fixed<int32_t>(DataType::Int(), {1, 22}, {true, false}),
                                 Strings({"alice", "abcdefghijklmnopqrstuvwxyz"})});
  TablePrinter printer({"id", "name"});
  printer.AddRow(batch, 0);
  printer.AddRow(batch, 1);
  EXPECT_EQ(printer.Render(/*has_more=*/true),
            "+----+--------------------+\n"
            "|  id|                name|\n"
            "+----+--------------------+\n"
            "|   1|               alice|\n"
            "|NULL|abcdefghijklmnopq...|\n"
            "+----+--------------------+\n"
            "only showing top 2 rows\n");
}

TEST(ValueFormatTest, TablePrinterEscapesControlCharactersAndKeepsMinimumWidth) {
  RecordBatch batch = MakeBatch({{"s", DataType::String()}}, {Strings({"a\nb"})});
  TablePrinter printer({"s"});
  printer.AddRow(batch, 0);
  EXPECT_EQ(printer.Render(false),
            "+----+\n"
            "|   s|\n"
            "+----+\n"
            "|a\\nb|\n"
            "+----+\n");
}

}  // namespace
}  // namespace silt::cli
