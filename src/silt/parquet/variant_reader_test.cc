#include "silt/parquet/variant_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "silt/columnar/builder.h"
#include "silt/columnar/variant.h"
#include "silt/fs/file_system.h"
#include "silt/parquet/file_reader.h"
#include "silt/parquet/file_writer.h"
#include "silt/testing/gtest_util.h"

namespace silt::parquet {
namespace {

using columnar::Column;
using columnar::ColumnBuilder;
using columnar::ColumnPtr;
using columnar::DataType;
using columnar::Field;
using columnar::RecordBatch;
using columnar::TypePtr;

struct Encoded {
  std::string value;
  std::string metadata;
};

Encoded Encode(std::string_view json) {
  columnar::VariantBuilder b;
  columnar::JsonToVariantError error;
  EXPECT_TRUE(columnar::JsonToVariant(json, false, &b, &error)) << error.message;
  Encoded e;
  EXPECT_OK(b.Finish(&e.value, &e.metadata));
  return e;
}

std::string Json(const Column& variant, int64_t row) {
  if (variant.IsNull(row)) return "SQL NULL";
  columnar::VariantMetadata m;
  EXPECT_TRUE(m.Init(variant.children[0]->StringValue(row)));
  std::string out;
  EXPECT_TRUE(columnar::AppendVariantJson(
      m, columnar::VariantValue(variant.children[1]->StringValue(row)), {}, &out));
  return out;
}

void AppendVariant(ColumnBuilder* b, std::string_view json) {
  Encoded e = Encode(json);
  b->child(0)->AppendString(e.metadata);
  b->child(1)->AppendString(e.value);
  b->AppendValid();
}

TEST(VariantParquetTest, UnshreddedColumnsRoundTripAtAnyDepthAsSparkLaysThemOut) {
  const std::vector<std::string> docs = {R"({"a":1,"b":[true,null,"x"]})", "1.50", "null", R"("s")",
                                         "[]"};
  TypePtr schema = DataType::Struct(
      {Field{"v", DataType::Variant(), true, "{}"},
       Field{"arr", DataType::Array(DataType::Variant(), true), true, "{}"},
       Field{"st", DataType::Struct({Field{"w", DataType::Variant(), true, "{}"}}), true, "{}"}});
  ColumnBuilder v(DataType::Variant());
  ColumnBuilder arr(schema->field(1).type);
  ColumnBuilder st(schema->field(2).type);
  for (size_t i = 0; i < docs.size(); ++i) {
    if (i == 3) {
      v.AppendNull();
    } else {
      AppendVariant(&v, docs[i]);
    }
    AppendVariant(arr.child(0), docs[i]);
    arr.child(0)->AppendNull();
    arr.CloseList();
    AppendVariant(st.child(0), docs[(i + 1) % docs.size()]);
    st.AppendValid();
  }
  RecordBatch batch;
  batch.schema = schema;
  batch.num_rows = static_cast<int64_t>(docs.size());
  batch.columns = {v.Finish(), arr.Finish(), st.Finish()};
  ASSERT_OK(columnar::ValidateBatch(batch));

  auto fs = fs::MakeMemoryFileSystem();
  {
    ASSERT_OK_AND_ASSIGN(auto writer,
                         ParquetFileWriter::Open(fs.get(), "/t/v.parquet", schema, {}));
    ASSERT_OK(writer->WriteBatch(batch));
    ASSERT_OK(writer->Close().status());
  }
  ASSERT_OK_AND_ASSIGN(auto reader, ParquetFileReader::Open(fs.get(), "/t/v.parquet"));
  // The file holds Delta's physical layout: a group of value and metadata.
  EXPECT_EQ(reader->schema()->field(0).type->ToDdl(),
            "STRUCT<value: BINARY NOT NULL, metadata: BINARY NOT NULL>");
  ASSERT_OK_AND_ASSIGN(auto got, reader->ReadRowGroup(0));
  ASSERT_TRUE(IsVariantStorage(*got->column(0)->type));
  ASSERT_OK_AND_ASSIGN(ColumnPtr read_v, VariantFromParquet(*got->column(0)));
  ASSERT_OK_AND_ASSIGN(ColumnPtr read_arr_elements,
                       VariantFromParquet(*got->column(1)->children[0]));
  ASSERT_OK_AND_ASSIGN(ColumnPtr read_w, VariantFromParquet(*got->column(2)->children[0]));
  for (size_t i = 0; i < docs.size(); ++i) {
    const int64_t row = static_cast<int64_t>(i);
    EXPECT_EQ(Json(*read_v, row), i == 3 ? "SQL NULL" : Json(*batch.columns[0], row));
    if (i != 3) {
      // Unshredded values come back byte for byte.
      EXPECT_EQ(read_v->children[1]->StringValue(row), Encode(docs[i]).value);
      EXPECT_EQ(read_v->children[0]->StringValue(row), Encode(docs[i]).metadata);
    }
    EXPECT_EQ(Json(*read_arr_elements, 2 * row), Json(*batch.columns[1]->children[0], 2 * row));
    EXPECT_EQ(Json(*read_arr_elements, 2 * row + 1), "SQL NULL");
    EXPECT_EQ(Json(*read_w, row), Json(*batch.columns[2]->children[0], row));
  }
}

// A shredded variant as VariantShredding.md's example `event`: typed_value
// is an object shredding event_type (STRING) and event_ts (BIGINT here).
TEST(VariantParquetTest, ShreddedObjectsArraysAndScalarsAreReassembled) {
  TypePtr field_string = DataType::Struct({Field{"value", DataType::Binary(), true, "{}"},
                                           Field{"typed_value", DataType::String(), true, "{}"}});
  TypePtr field_long = DataType::Struct({Field{"value", DataType::Binary(), true, "{}"},
                                         Field{"typed_value", DataType::Long(), true, "{}"}});
  TypePtr typed = DataType::Struct(
      {Field{"event_type", field_string, false, "{}"}, Field{"event_ts", field_long, false, "{}"}});
  TypePtr storage_type = DataType::Struct({Field{"metadata", DataType::Binary(), false, "{}"},
                                           Field{"value", DataType::Binary(), true, "{}"},
                                           Field{"typed_value", typed, true, "{}"}});
  ASSERT_TRUE(IsVariantStorage(*storage_type));
  ColumnBuilder b(storage_type);
  // Metadata shared by the rows: the keys the unshredded parts use.
  Encoded keys = Encode(R"({"email":"e","error_msg":"m","event_type":"t"})");
  Encoded email = [] {
    columnar::VariantBuilder vb;
    const size_t start = vb.position();
    std::vector<columnar::VariantBuilder::FieldEntry> fields;
    vb.AddKey("event_type");  // ids as in `keys`: email=0, error_msg=1, event_type=2
    vb.Reset();
    vb.AddKey("email");
    vb.AddKey("error_msg");
    vb.AddKey("event_type");
    fields.push_back({0, 0});
    vb.AppendString("user@example.com");
    EXPECT_OK(vb.FinishObject(start, &fields));
    Encoded e;
    EXPECT_OK(vb.Finish(&e.value, &e.metadata));
    return e;
  }();
  Encoded not_object = Encode(R"("malformed: not an object")");
  Encoded null_value = Encode("null");
  auto row = [&](std::optional<std::string> value, bool typed_valid,
                 std::optional<std::string> type_typed, std::optional<std::string> type_value,
                 std::optional<int64_t> ts) {
    b.child(0)->AppendString(email.metadata);
    if (value) {
      b.child(1)->AppendString(*value);
    } else {
      b.child(1)->AppendNull();
    }
    ColumnBuilder* t = b.child(2);
    ColumnBuilder* et = t->child(0);
    ColumnBuilder* ets = t->child(1);
    if (typed_valid) {
      type_value ? et->child(0)->AppendString(*type_value) : et->child(0)->AppendNull();
      type_typed ? et->child(1)->AppendString(*type_typed) : et->child(1)->AppendNull();
      et->AppendValid();
      ets->child(0)->AppendNull();
      ts ? ets->child(1)->Append<int64_t>(*ts) : ets->child(1)->AppendNull();
      ets->AppendValid();
      t->AppendValid();
    } else {
      t->AppendNull();
    }
    b.AppendValid();
  };
  row(std::nullopt, true, "noop", std::nullopt, 1729794114937);            // fully shredded
  row(email.value, true, "login", std::nullopt, 1729794146402);            // partially shredded
  row(not_object.value, false, std::nullopt, std::nullopt, std::nullopt);  // not an object
  row(std::nullopt, true, std::nullopt, null_value.value, 7);              // event_type: null
  row(std::nullopt, true, std::nullopt, std::nullopt, std::nullopt);       // {} (fields missing)
  row(null_value.value, false, std::nullopt, std::nullopt, std::nullopt);  // variant null
  row(std::nullopt, false, std::nullopt, std::nullopt, std::nullopt);      // missing: null
  b.AppendNull();                                                          // SQL NULL
  ColumnPtr storage = b.Finish();
  ASSERT_OK_AND_ASSIGN(ColumnPtr v, VariantFromParquet(*storage));
  ASSERT_OK(columnar::ValidateColumn(*v));
  EXPECT_EQ(Json(*v, 0), R"({"event_ts":1729794114937,"event_type":"noop"})");
  EXPECT_EQ(Json(*v, 1),
            R"({"email":"user@example.com","event_ts":1729794146402,"event_type":"login"})");
  EXPECT_EQ(Json(*v, 2), R"("malformed: not an object")");
  EXPECT_EQ(Json(*v, 3), R"({"event_ts":7,"event_type":null})");
  EXPECT_EQ(Json(*v, 4), "{}");
  EXPECT_EQ(Json(*v, 5), "null");
  EXPECT_EQ(Json(*v, 6), "null");
  EXPECT_EQ(Json(*v, 7), "SQL NULL");
  (void)keys;
}

TEST(VariantParquetTest, ShreddedArraysOfTypedElements) {
  TypePtr element = DataType::Struct({Field{"value", DataType::Binary(), true, "{}"},
                                      Field{"typed_value", DataType::String(), true, "{}"}});
  TypePtr storage_type =
      DataType::Struct({Field{"metadata", DataType::Binary(), false, "{}"},
                        Field{"value", DataType::Binary(), true, "{}"},
                        Field{"typed_value", DataType::Array(element, false), true, "{}"}});
  ColumnBuilder b(storage_type);
  Encoded empty = Encode("null");
  // ["comedy", null] with null as an element's variant null, then a row
  // whose value is not an array (3.5).
  b.child(0)->AppendString(empty.metadata);
  b.child(1)->AppendNull();
  ColumnBuilder* list = b.child(2);
  list->child(0)->child(0)->AppendNull();
  list->child(0)->child(1)->AppendString("comedy");
  list->child(0)->AppendValid();
  list->child(0)->child(0)->AppendString(empty.value);
  list->child(0)->child(1)->AppendNull();
  list->child(0)->AppendValid();
  list->CloseList();
  b.AppendValid();
  b.child(0)->AppendString(empty.metadata);
  b.child(1)->AppendString(Encode("3.5").value);
  list->AppendNull();
  b.AppendValid();
  ASSERT_OK_AND_ASSIGN(ColumnPtr v, VariantFromParquet(*b.Finish()));
  EXPECT_EQ(Json(*v, 0), R"(["comedy",null])");
  EXPECT_EQ(Json(*v, 1), "3.5");
}

TEST(VariantParquetTest, StructsThatAreNotVariantsAreNotMistakenForThem) {
  EXPECT_FALSE(
      IsVariantStorage(*DataType::Struct({Field{"value", DataType::Binary(), true, "{}"}})));
  EXPECT_FALSE(
      IsVariantStorage(*DataType::Struct({Field{"metadata", DataType::Binary(), true, "{}"},
                                          Field{"value", DataType::String(), true, "{}"}})));
  EXPECT_FALSE(
      IsVariantStorage(*DataType::Struct({Field{"metadata", DataType::Binary(), true, "{}"},
                                          Field{"value", DataType::Binary(), true, "{}"},
                                          Field{"other", DataType::Int(), true, "{}"}})));
}

}  // namespace
}  // namespace silt::parquet
