#include "silt/columnar/builder.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "silt/columnar/column.h"
#include "silt/testing/gtest_util.h"

namespace silt::columnar {
namespace {

template <typename T>
ColumnPtr BuildFixed(const TypePtr& type, const std::vector<T>& values,
                     const std::vector<bool>& valid) {
  ColumnBuilder builder(type);
  for (size_t i = 0; i < values.size(); ++i) {
    if (valid[i]) {
      builder.Append<T>(values[i]);
    } else {
      builder.AppendNull();
    }
  }
  return builder.Finish();
}

ColumnPtr BuildStrings(const std::vector<const char*>& values) {
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

// Reads a string column back, "<null>" for nulls.
std::vector<std::string> Strings(const Column& column) {
  std::vector<std::string> out;
  for (int64_t row_idx = 0; row_idx < column.length; ++row_idx) {
    out.push_back(column.IsNull(row_idx) ? "<null>" : std::string(column.StringValue(row_idx)));
  }
  return out;
}

std::vector<std::string> IntListsAsText(const Column& column) {
  std::vector<std::string> out;
  const Column& elements = *column.children[0];
  for (int64_t row_idx = 0; row_idx < column.length; ++row_idx) {
    if (column.IsNull(row_idx)) {
      out.push_back("null");
      continue;
    }
    std::string text = "[";
    for (int32_t i = column.offsets()[row_idx]; i < column.offsets()[row_idx + 1]; ++i) {
      if (i > column.offsets()[row_idx]) text += ",";
      text += elements.IsNull(i) ? "null" : std::to_string(elements.Value<int32_t>(i));
    }
    out.push_back(text + "]");
  }
  return out;
}

TEST(ColumnBuilderTest, BuildsEveryFixedWidthType) {
  std::vector<bool> valid = {true, false, true};
  ColumnPtr bytes = BuildFixed<int8_t>(DataType::Byte(), {-1, 0, 127}, valid);
  ColumnPtr shorts = BuildFixed<int16_t>(DataType::Short(), {-300, 0, 300}, valid);
  ColumnPtr ints = BuildFixed<int32_t>(DataType::Int(), {-7, 0, 1 << 30}, valid);
  ColumnPtr longs = BuildFixed<int64_t>(DataType::Long(), {-1LL << 40, 0, 1LL << 40}, valid);
  ColumnPtr floats = BuildFixed<float>(DataType::Float(), {1.5f, 0, -2.25f}, valid);
  ColumnPtr doubles = BuildFixed<double>(DataType::Double(), {84.3, 0, -1e300}, valid);
  ColumnPtr dates = BuildFixed<int32_t>(DataType::Date(), {-719162, 0, 20626}, valid);
  ColumnPtr timestamps =
      BuildFixed<int64_t>(DataType::Timestamp(), {-1, 0, 1782115200000000LL}, valid);
  ColumnPtr ntz = BuildFixed<int64_t>(DataType::TimestampNtz(), {5, 0, 6}, valid);
  __int128 big = static_cast<__int128>(1) << 100;
  ColumnPtr decimals = BuildFixed<__int128>(DataType::Decimal(38, 2), {-big, 0, big}, valid);

  for (const ColumnPtr& column :
       {bytes, shorts, ints, longs, floats, doubles, dates, timestamps, ntz, decimals}) {
    EXPECT_OK(ValidateColumn(*column));
    EXPECT_EQ(column->length, 3) << column->type->ToDdl();
    EXPECT_EQ(column->null_count, 1) << column->type->ToDdl();
    EXPECT_TRUE(column->IsValid(0));
    EXPECT_TRUE(column->IsNull(1));
    EXPECT_TRUE(column->IsValid(2));
  }
  EXPECT_EQ(bytes->Value<int8_t>(0), -1);
  EXPECT_EQ(shorts->Value<int16_t>(2), 300);
  EXPECT_EQ(ints->Value<int32_t>(2), 1 << 30);
  EXPECT_EQ(longs->Value<int64_t>(0), -1LL << 40);
  EXPECT_EQ(floats->Value<float>(2), -2.25f);
  EXPECT_EQ(doubles->Value<double>(0), 84.3);
  EXPECT_EQ(dates->Value<int32_t>(0), -719162);
  EXPECT_EQ(timestamps->Value<int64_t>(2), 1782115200000000LL);
  EXPECT_TRUE(decimals->Value<__int128>(0) == -big);
  EXPECT_TRUE(decimals->Value<__int128>(2) == big);
}

TEST(ColumnBuilderTest, AllValidColumnHasNoValidityBuffer) {
  ColumnPtr column = BuildFixed<int64_t>(DataType::Long(), {1, 2, 3}, {true, true, true});
  EXPECT_EQ(column->null_count, 0);
  EXPECT_EQ(column->validity, nullptr);
  EXPECT_OK(ValidateColumn(*column));
}

TEST(ColumnBuilderTest, BooleansAreBitPacked) {
  ColumnBuilder builder(DataType::Boolean());
  for (int row_idx = 0; row_idx < 100; ++row_idx) {
    if (row_idx % 7 == 0) {
      builder.AppendNull();
    } else {
      builder.AppendBool(row_idx % 3 == 0);
    }
  }
  ColumnPtr column = builder.Finish();
  ASSERT_OK(ValidateColumn(*column));
  EXPECT_EQ(column->length, 100);
  EXPECT_EQ(column->null_count, 15);
  EXPECT_EQ(column->values->size(), 13);
  for (int row_idx = 0; row_idx < 100; ++row_idx) {
    if (row_idx % 7 == 0) {
      EXPECT_TRUE(column->IsNull(row_idx));
    } else {
      EXPECT_EQ(column->BoolValue(row_idx), row_idx % 3 == 0) << row_idx;
    }
  }
}

TEST(ColumnBuilderTest, StringsAndBinaryUseOffsets) {
  ColumnPtr column = BuildStrings({"héllo", nullptr, "", "world"});
  ASSERT_OK(ValidateColumn(*column));
  EXPECT_EQ(Strings(*column), (std::vector<std::string>{"héllo", "<null>", "", "world"}));
  EXPECT_EQ(column->offsets()[0], 0);
  EXPECT_EQ(column->offsets()[2], column->offsets()[1]);
  EXPECT_EQ(column->data->size(), 11);

  ColumnBuilder binary(DataType::Binary());
  binary.AppendString(std::string_view("\0\1\2", 3));
  ColumnPtr bin = binary.Finish();
  ASSERT_OK(ValidateColumn(*bin));
  EXPECT_EQ(bin->StringValue(0), std::string_view("\0\1\2", 3));
}

TEST(ColumnBuilderTest, ReserveDataSizesTheValueBytesOnce) {
  ColumnBuilder builder(DataType::String());
  builder.AppendString("ab");
  builder.ReserveData(300);
  for (int row = 0; row < 3; ++row) builder.AppendString(std::string(100, 'x'));
  EXPECT_EQ(builder.length(), 4);
  ColumnPtr column = builder.Finish();
  ASSERT_OK(ValidateColumn(*column));
  EXPECT_EQ(column->data->size(), 302);
  // The two bytes appended before plus the reservation, not a doubling.
  EXPECT_EQ(column->data->capacity(), 302);
  EXPECT_EQ(column->StringValue(3), std::string(100, 'x'));
}

TEST(ColumnBuilderTest, VoidColumnIsAllNull) {
  ColumnBuilder builder(DataType::Null());
  builder.AppendNulls(10);
  ColumnPtr column = builder.Finish();
  ASSERT_OK(ValidateColumn(*column));
  EXPECT_EQ(column->null_count, 10);
  for (int64_t row_idx = 0; row_idx < 10; ++row_idx) EXPECT_TRUE(column->IsNull(row_idx));
}

TEST(ColumnBuilderTest, StructNullsKeepChildrenAligned) {
  ASSERT_OK_AND_ASSIGN(TypePtr type, ParseDdlType("STRUCT<a: INT, b: STRING>"));
  ColumnBuilder builder(type);
  ASSERT_EQ(builder.num_children(), 2);
  builder.child(0)->Append<int32_t>(1);
  builder.child(1)->AppendString("x");
  builder.AppendValid();
  builder.AppendNull();
  builder.child(0)->AppendNull();
  builder.child(1)->AppendString("z");
  builder.AppendValid();
  ColumnPtr column = builder.Finish();
  ASSERT_OK(ValidateColumn(*column));
  EXPECT_EQ(column->length, 3);
  EXPECT_EQ(column->null_count, 1);
  EXPECT_TRUE(column->IsNull(1));
  ASSERT_EQ(column->children.size(), 2u);
  EXPECT_EQ(column->children[0]->length, 3);
  EXPECT_TRUE(column->children[0]->IsNull(1));
  EXPECT_TRUE(column->children[0]->IsNull(2));
  EXPECT_EQ(Strings(*column->children[1]), (std::vector<std::string>{"x", "<null>", "z"}));
}

TEST(ColumnBuilderTest, ArraysCloseListsAndNullsAreEmpty) {
  ColumnBuilder builder(DataType::Array(DataType::Int()));
  builder.child(0)->Append<int32_t>(1);
  builder.child(0)->Append<int32_t>(2);
  builder.CloseList();
  builder.AppendNull();
  builder.CloseList();
  builder.child(0)->AppendNull();
  builder.child(0)->Append<int32_t>(3);
  builder.CloseList();
  ColumnPtr column = builder.Finish();
  ASSERT_OK(ValidateColumn(*column));
  EXPECT_EQ(IntListsAsText(*column), (std::vector<std::string>{"[1,2]", "null", "[]", "[null,3]"}));
  EXPECT_EQ(column->offsets()[1], column->offsets()[2]);
}

TEST(ColumnBuilderTest, MapsHoldKeyValueEntries) {
  TypePtr type = DataType::Map(DataType::String(), DataType::Long());
  ColumnBuilder builder(type);
  ColumnBuilder* entries = builder.child(0);
  ASSERT_EQ(entries->num_children(), 2);
  entries->child(0)->AppendString("a");
  entries->child(1)->Append<int64_t>(1);
  entries->AppendValid();
  entries->child(0)->AppendString("b");
  entries->child(1)->AppendNull();
  entries->AppendValid();
  builder.CloseList();
  builder.AppendNull();
  ColumnPtr column = builder.Finish();
  ASSERT_OK(ValidateColumn(*column));
  ASSERT_EQ(column->children.size(), 1u);
  const Column& entry_column = *column->children[0];
  EXPECT_EQ(entry_column.type->field(0).name, "key");
  EXPECT_EQ(entry_column.type->field(1).name, "value");
  EXPECT_EQ(entry_column.length, 2);
  EXPECT_EQ(Strings(*entry_column.children[0]), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(entry_column.children[1]->IsNull(1));
  EXPECT_EQ(column->offsets()[1], 2);
  EXPECT_EQ(column->offsets()[2], 2);
  EXPECT_TRUE(column->IsNull(1));
}

TEST(ColumnBuilderTest, FinishResetsAndTheBuilderIsReusable) {
  ColumnBuilder builder(DataType::String());
  builder.Reserve(1000);
  for (int row_idx = 0; row_idx < 1000; ++row_idx) builder.AppendString("abcdefgh");
  ColumnPtr first = builder.Finish();
  EXPECT_EQ(builder.length(), 0);
  EXPECT_EQ(builder.null_count(), 0);
  builder.AppendNull();
  builder.AppendString("q");
  ColumnPtr second = builder.Finish();
  ASSERT_OK(ValidateColumn(*first));
  ASSERT_OK(ValidateColumn(*second));
  EXPECT_EQ(first->length, 1000);
  EXPECT_EQ(first->StringValue(999), "abcdefgh");
  EXPECT_EQ(Strings(*second), (std::vector<std::string>{"<null>", "q"}));
  // The first column is unaffected by reuse of the builder.
  EXPECT_EQ(first->null_count, 0);
  EXPECT_EQ(first->StringValue(0), "abcdefgh");
}

TEST(ColumnBuilderTest, ManyRowsAcrossValidityGrowth) {
  ColumnBuilder builder(DataType::Int());
  for (int32_t row_idx = 0; row_idx < 5000; ++row_idx) {
    if (row_idx % 1000 == 999) {
      builder.AppendNull();
    } else {
      builder.Append<int32_t>(row_idx);
    }
  }
  ColumnPtr column = builder.Finish();
  ASSERT_OK(ValidateColumn(*column));
  EXPECT_EQ(column->null_count, 5);
  EXPECT_EQ(column->Value<int32_t>(4998), 4998);
  EXPECT_TRUE(column->IsNull(4999));
}

TEST(ValidateColumnTest, ReportsInconsistentColumns) {
  ColumnPtr good = BuildFixed<int32_t>(DataType::Int(), {1, 2}, {true, false});
  Column wrong_count = *good;
  wrong_count.null_count = 0;
  EXPECT_EQ(ValidateColumn(wrong_count).code(), StatusCode::kInternal);
  Column too_long = *good;
  too_long.length = 100;
  too_long.null_count = 0;
  too_long.validity = nullptr;
  EXPECT_EQ(ValidateColumn(too_long).code(), StatusCode::kInternal);

  ColumnPtr strings = BuildStrings({"ab", "c"});
  Column bad_offsets = *strings;
  auto offsets = std::make_shared<Buffer>();
  int32_t raw[3] = {0, 2, 1};
  offsets->Append(raw, sizeof(raw));
  bad_offsets.values = offsets;
  Status st = ValidateColumn(bad_offsets);
  EXPECT_EQ(st.code(), StatusCode::kInternal);
  EXPECT_NE(st.message().find("offsets decrease at row 1"), std::string::npos) << st.ToString();
}

TEST(MakeNullColumnTest, EveryTypeIsValidAndAllNull) {
  ASSERT_OK_AND_ASSIGN(SchemaPtr schema,
                       ParseDdlSchema("a BOOLEAN, b INT, c DECIMAL(5,1), d STRING, e ARRAY<INT>, "
                                      "f MAP<STRING, INT>, g STRUCT<x: DOUBLE, y: BINARY>, "
                                      "h TIMESTAMP, i VOID"));
  for (const Field& field : schema->fields()) {
    ColumnPtr column = MakeNullColumn(field.type, 17);
    EXPECT_OK(ValidateColumn(*column));
    EXPECT_EQ(column->null_count, 17) << field.name;
    EXPECT_TRUE(column->IsNull(16)) << field.name;
  }
}

// A batch exercising every physical layout, with nulls at different rows.
RecordBatchPtr MakeMixedBatch(int start, int rows) {
  Result<SchemaPtr> schema = ParseDdlSchema(
      "i BIGINT, b BOOLEAN, s STRING, l ARRAY<INT>, "
      "m MAP<STRING, INT>, st STRUCT<x: INT, y: STRING>, d DECIMAL(20,2)");
  auto batch = std::make_shared<RecordBatch>();
  batch->schema = *schema;
  batch->num_rows = rows;
  ColumnBuilder i((*schema)->field(0).type);
  ColumnBuilder b((*schema)->field(1).type);
  ColumnBuilder s((*schema)->field(2).type);
  ColumnBuilder l((*schema)->field(3).type);
  ColumnBuilder m((*schema)->field(4).type);
  ColumnBuilder st((*schema)->field(5).type);
  ColumnBuilder d((*schema)->field(6).type);
  for (int v = start; v < start + rows; ++v) {
    if (v % 5 == 0) {
      i.AppendNull();
    } else {
      i.Append<int64_t>(v);
    }
    if (v % 4 == 0) {
      b.AppendNull();
    } else {
      b.AppendBool(v % 2 == 1);
    }
    if (v % 3 == 0) {
      s.AppendNull();
    } else {
      s.AppendString("s" + std::to_string(v));
    }
    if (v % 6 == 0) {
      l.AppendNull();
    } else {
      for (int k = 0; k < v % 3; ++k) l.child(0)->Append<int32_t>(v * 10 + k);
      l.CloseList();
    }
    for (int k = 0; k < v % 2 + 1; ++k) {
      m.child(0)->child(0)->AppendString("k" + std::to_string(k));
      m.child(0)->child(1)->Append<int32_t>(v + k);
      m.child(0)->AppendValid();
    }
    m.CloseList();
    if (v % 7 == 0) {
      st.AppendNull();
    } else {
      st.child(0)->Append<int32_t>(v);
      st.child(1)->AppendString("y" + std::to_string(v));
      st.AppendValid();
    }
    d.Append<__int128>(static_cast<__int128>(v) * 1000000000000LL);
  }
  for (ColumnBuilder* builder : {&i, &b, &s, &l, &m, &st, &d}) {
    batch->columns.push_back(builder->Finish());
  }
  return batch;
}

// Renders row `row_idx` of every column as text so batches can be compared.
std::string RowText(const RecordBatch& batch, int64_t row_idx) {
  std::string out;
  const Column& i = *batch.column(0);
  out += i.IsNull(row_idx) ? "null" : std::to_string(i.Value<int64_t>(row_idx));
  const Column& b = *batch.column(1);
  out += b.IsNull(row_idx) ? "|null" : (b.BoolValue(row_idx) ? "|true" : "|false");
  const Column& s = *batch.column(2);
  out += "|" + (s.IsNull(row_idx) ? std::string("null") : std::string(s.StringValue(row_idx)));
  const Column& l = *batch.column(3);
  out += "|" + IntListsAsText(l)[static_cast<size_t>(row_idx)];
  const Column& m = *batch.column(4);
  out += "|{";
  const Column& entries = *m.children[0];
  for (int32_t e = m.offsets()[row_idx]; e < m.offsets()[row_idx + 1]; ++e) {
    out += std::string(entries.children[0]->StringValue(e)) + ":" +
           std::to_string(entries.children[1]->Value<int32_t>(e)) + ",";
  }
  out += "}";
  const Column& st = *batch.column(5);
  if (st.IsNull(row_idx)) {
    out += "|null";
  } else {
    out += "|(" + std::to_string(st.children[0]->Value<int32_t>(row_idx)) + "," +
           std::string(st.children[1]->StringValue(row_idx)) + ")";
  }
  const Column& d = *batch.column(6);
  out += "|" + std::to_string(static_cast<int64_t>(d.Value<__int128>(row_idx) / 1000000000000LL));
  return out;
}

TEST(ColumnOpsTest, SliceCopiesARangeOfEveryType) {
  RecordBatchPtr batch = MakeMixedBatch(0, 50);
  ASSERT_OK(ValidateBatch(*batch));
  RecordBatchPtr slice = SliceBatch(*batch, 13, 20);
  ASSERT_OK(ValidateBatch(*slice));
  EXPECT_EQ(slice->num_rows, 20);
  for (int64_t row_idx = 0; row_idx < 20; ++row_idx) {
    EXPECT_EQ(RowText(*slice, row_idx), RowText(*batch, 13 + row_idx));
  }
  // Offsets of a slice start at zero.
  EXPECT_EQ(slice->column(2)->offsets()[0], 0);
  EXPECT_EQ(slice->column(3)->offsets()[0], 0);
  RecordBatchPtr empty = SliceBatch(*batch, 50, 0);
  ASSERT_OK(ValidateBatch(*empty));
}

TEST(ColumnOpsTest, SliceOfValidRowsDropsValidity) {
  ColumnPtr column = BuildFixed<int32_t>(DataType::Int(), {1, 2, 3}, {true, true, false});
  ColumnPtr slice = SliceColumn(*column, 0, 2);
  EXPECT_EQ(slice->null_count, 0);
  EXPECT_EQ(slice->validity, nullptr);
  EXPECT_OK(ValidateColumn(*slice));
}

TEST(ColumnOpsTest, TakeGathersRowsInOrderWithRepeats) {
  RecordBatchPtr batch = MakeMixedBatch(0, 40);
  std::vector<int64_t> indices = {39, 0, 7, 7, 14, 21, 5, 30};
  RecordBatchPtr taken = TakeBatch(*batch, indices);
  ASSERT_OK(ValidateBatch(*taken));
  ASSERT_EQ(taken->num_rows, 8);
  for (size_t row_idx = 0; row_idx < indices.size(); ++row_idx) {
    EXPECT_EQ(RowText(*taken, static_cast<int64_t>(row_idx)), RowText(*batch, indices[row_idx]));
  }
  ASSERT_OK(ValidateBatch(*TakeBatch(*batch, {})));
}

TEST(ColumnOpsTest, ConcatAppendsBatchesOfEveryType) {
  RecordBatchPtr a = MakeMixedBatch(0, 11);
  RecordBatchPtr b = MakeMixedBatch(11, 0);
  RecordBatchPtr c = MakeMixedBatch(11, 29);
  RecordBatchPtr whole = MakeMixedBatch(0, 40);
  // A slice has a non-zero first child offset in its parent: concatenate it too.
  RecordBatchPtr tail = SliceBatch(*MakeMixedBatch(0, 60), 40, 20);
  RecordBatchPtr concat = ConcatBatches({a, b, c, tail});
  ASSERT_OK(ValidateBatch(*concat));
  ASSERT_EQ(concat->num_rows, 60);
  for (int64_t row_idx = 0; row_idx < 40; ++row_idx) {
    EXPECT_EQ(RowText(*concat, row_idx), RowText(*whole, row_idx));
  }
  for (int64_t row_idx = 0; row_idx < 20; ++row_idx) {
    EXPECT_EQ(RowText(*concat, 40 + row_idx), RowText(*tail, row_idx));
  }
}

TEST(ColumnOpsTest, ConcatOfAllValidPiecesHasNoValidity) {
  ColumnPtr a = BuildFixed<int32_t>(DataType::Int(), {1}, {true});
  ColumnPtr b = BuildFixed<int32_t>(DataType::Int(), {2, 3}, {true, true});
  ColumnPtr column = ConcatColumns({a, b});
  ASSERT_OK(ValidateColumn(*column));
  EXPECT_EQ(column->validity, nullptr);
  EXPECT_EQ(column->Value<int32_t>(2), 3);
}

TEST(ColumnOpsTest, BitsSurviveUnalignedSlicesAndConcats) {
  // A pseudo-random boolean column with nulls, cut at every offset 0..16 and
  // glued back together, must read back unchanged.
  ColumnBuilder builder(DataType::Boolean());
  std::vector<int> expected;  // -1 = null, else the value
  uint32_t state = 12345;
  for (int row_idx = 0; row_idx < 300; ++row_idx) {
    state = state * 1103515245u + 12345u;
    int pick = static_cast<int>((state >> 16) % 3);
    if (pick == 2) {
      builder.AppendNull();
      expected.push_back(-1);
    } else {
      builder.AppendBool(pick == 1);
      expected.push_back(pick);
    }
  }
  ColumnPtr column = builder.Finish();
  for (int64_t cut = 0; cut <= 16; ++cut) {
    ColumnPtr head = SliceColumn(*column, 0, cut);
    ColumnPtr middle = SliceColumn(*column, cut, 150);
    ColumnPtr tail = SliceColumn(*column, cut + 150, 300 - cut - 150);
    ColumnPtr glued = ConcatColumns({head, middle, tail});
    ASSERT_OK(ValidateColumn(*middle));
    ASSERT_OK(ValidateColumn(*glued));
    for (int64_t row_idx = 0; row_idx < 300; ++row_idx) {
      int value = glued->IsNull(row_idx) ? -1 : (glued->BoolValue(row_idx) ? 1 : 0);
      ASSERT_EQ(value, expected[static_cast<size_t>(row_idx)])
          << "cut " << cut << " row " << row_idx;
    }
  }
}

TEST(RecordBatchTest, GetColumnFindsNamesIgnoringCase) {
  RecordBatchPtr batch = MakeMixedBatch(0, 3);
  EXPECT_EQ(batch->GetColumn("S"), batch->column(2));
  EXPECT_EQ(batch->GetColumn("nope"), nullptr);
}

TEST(ValidateBatchTest, ReportsMismatchedColumns) {
  RecordBatchPtr batch = MakeMixedBatch(0, 3);
  RecordBatch short_rows = *batch;
  short_rows.num_rows = 4;
  EXPECT_EQ(ValidateBatch(short_rows).code(), StatusCode::kInternal);
  RecordBatch swapped = *batch;
  std::swap(swapped.columns[0], swapped.columns[1]);
  Status st = ValidateBatch(swapped);
  EXPECT_EQ(st.code(), StatusCode::kInternal);
  EXPECT_NE(st.message().find("column i has type BOOLEAN"), std::string::npos) << st.ToString();
}

}  // namespace
}  // namespace silt::columnar
