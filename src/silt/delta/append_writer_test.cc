#include "silt/delta/append_writer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "silt/columnar/builder.h"
#include "silt/fs/file_system.h"
#include "silt/testing/gtest_util.h"

namespace silt::delta {
namespace {

using columnar::ColumnBuilder;
using columnar::DataType;
using columnar::Field;

Field NotNull(std::string name, columnar::TypePtr type) {
  Field field{std::move(name), std::move(type)};
  field.nullable = false;
  return field;
}

TEST(PlanAppendTest, MatchesColumnsByNameAndFillsMissingOnesWithNulls) {
  auto table = DataType::Struct({Field{"id", DataType::Long()}, Field{"name", DataType::String()},
                                 Field{"extra", DataType::Int()}});
  auto data = DataType::Struct({Field{"NAME", DataType::String()}, Field{"id", DataType::Long()}});
  ASSERT_OK_AND_ASSIGN(AppendLayout layout, PlanAppend(table, *data, false, "/t"));
  EXPECT_EQ(layout.column_order, (std::vector<int>{1, 0, -1}));
  EXPECT_TRUE(layout.reorder);
  EXPECT_FALSE(layout.schema_changed);
  EXPECT_TRUE(layout.not_null_columns.empty());

  AppendLayout same = *PlanAppend(table, *table, false, "/t");
  EXPECT_FALSE(same.reorder);
  EXPECT_EQ(same.column_order, (std::vector<int>{0, 1, 2}));
}

TEST(PlanAppendTest, RejectsMissingNotNullColumnsAndTypeChanges) {
  auto table = DataType::Struct({Field{"id", DataType::Long()}, NotNull("k", DataType::String())});
  auto data = DataType::Struct({Field{"id", DataType::Long()}});
  Result<AppendLayout> missing = PlanAppend(table, *data, false, "/t");
  ASSERT_RAISES(InvalidArgument, missing.status());
  EXPECT_EQ(missing.status().message(),
            "the Delta table at /t has schema (id BIGINT, k STRING) but the query writes (id "
            "BIGINT); column 'k' is NOT NULL in the table but missing from the query output");

  auto changed =
      DataType::Struct({Field{"id", DataType::String()}, Field{"k", DataType::String()}});
  ASSERT_RAISES(InvalidArgument, PlanAppend(table, *changed, false, "/t").status());

  auto wider = DataType::Struct({Field{"id", DataType::Long()}, Field{"k", DataType::String()},
                                 Field{"new", DataType::Int()}});
  ASSERT_RAISES(InvalidArgument, PlanAppend(table, *wider, false, "/t").status());
  ASSERT_OK_AND_ASSIGN(AppendLayout merged, PlanAppend(table, *wider, true, "/t"));
  EXPECT_TRUE(merged.schema_changed);
  EXPECT_EQ(merged.table_schema->num_fields(), 3);
  EXPECT_EQ(merged.not_null_columns, (std::vector<int>{1}));
}

TEST(AppendWriterTest, ChecksNotNullColumnsPerChunk) {
  auto table = DataType::Struct({NotNull("k", DataType::String()), Field{"v", DataType::Long()}});
  auto data = DataType::Struct({Field{"v", DataType::Long()}, Field{"k", DataType::String()}});
  ASSERT_OK_AND_ASSIGN(AppendLayout layout, PlanAppend(table, *data, false, "/t"));
  ASSERT_OK_AND_ASSIGN(auto writer, AppendWriter::Make(fs::MakeMemoryFileSystem(), "/t", layout, {},
                                                       TableWriterOptions(), 7));
  auto chunk = [&](bool with_null) {
    ColumnBuilder v(DataType::Long());
    ColumnBuilder k(DataType::String());
    v.Append<int64_t>(1);
    k.AppendString("a");
    v.Append<int64_t>(2);
    if (with_null) {
      k.AppendNull();
    } else {
      k.AppendString("b");
    }
    columnar::RecordBatch batch;
    batch.schema = data;
    batch.num_rows = 2;
    batch.columns = {v.Finish(), k.Finish()};
    return batch;
  };
  ASSERT_OK(writer->Write(chunk(false)));
  Status st = writer->Write(chunk(true));
  ASSERT_RAISES(InvalidArgument, st);
  EXPECT_EQ(st.message(),
            "NOT NULL constraint violated for column 'k' of /t: 1 null value(s) in batch 7");
  ASSERT_OK_AND_ASSIGN(std::vector<AddFile> adds, writer->Finish());
  ASSERT_EQ(adds.size(), 1u);
}

// The data of a query whose columns and nested fields are all NOT NULL
// (current_timestamp(), named_struct, array, map of literals).
columnar::SchemaPtr NotNullQuerySchema() {
  auto s = DataType::Struct({NotNull("a", DataType::Long())});
  return DataType::Struct({NotNull("ts", DataType::Timestamp()), NotNull("s", s),
                           NotNull("arr", DataType::Array(DataType::Long(), false)),
                           NotNull("m", DataType::Map(DataType::String(), s, false))});
}

columnar::RecordBatch NotNullQueryBatch(const columnar::SchemaPtr& schema) {
  ColumnBuilder ts(schema->field(0).type);
  ColumnBuilder s(schema->field(1).type);
  ColumnBuilder arr(schema->field(2).type);
  ColumnBuilder m(schema->field(3).type);
  ts.Append<int64_t>(1);
  s.child(0)->Append<int64_t>(2);
  s.AppendValid();
  arr.child(0)->Append<int64_t>(3);
  arr.CloseList();
  m.child(0)->child(0)->AppendString("k");
  m.child(0)->child(1)->child(0)->Append<int64_t>(4);
  m.child(0)->child(1)->AppendValid();
  m.child(0)->AppendValid();
  m.CloseList();
  columnar::RecordBatch batch;
  batch.schema = schema;
  batch.num_rows = 1;
  batch.columns = {ts.Finish(), s.Finish(), arr.Finish(), m.Finish()};
  return batch;
}

// Regression (issue #23, point 3): a new table took the query's NOT NULL
// columns (processed_at = current_timestamp()), so a later Spark append of a
// NULL failed. delta-spark creates it with schema.asNullable.
TEST(NewTableLayoutTest, TheTableSchemaIsNullableAtEveryDepth) {
  AppendLayout layout = NewTableLayout(NotNullQuerySchema());
  auto s = DataType::Struct({Field{"a", DataType::Long()}});
  auto expected = DataType::Struct({Field{"ts", DataType::Timestamp()}, Field{"s", s},
                                    Field{"arr", DataType::Array(DataType::Long(), true)},
                                    Field{"m", DataType::Map(DataType::String(), s, true)}});
  EXPECT_TRUE(layout.table_schema->Equals(*expected))
      << columnar::SchemaToJson(*layout.table_schema);
  EXPECT_TRUE(layout.not_null_columns.empty());

  // The query's batches (NOT NULL types) are written under the nullable schema.
  ASSERT_OK_AND_ASSIGN(auto writer, AppendWriter::Make(fs::MakeMemoryFileSystem(), "/t", layout, {},
                                                       TableWriterOptions(), 0));
  ASSERT_OK(writer->Write(NotNullQueryBatch(NotNullQuerySchema())));
  ASSERT_OK_AND_ASSIGN(std::vector<AddFile> adds, writer->Finish());
  EXPECT_EQ(adds.size(), 1u);
}

TEST(PlanAppendTest, NotNullDataFitsNullableColumnsAtEveryDepth) {
  columnar::SchemaPtr table = NewTableLayout(NotNullQuerySchema()).table_schema;
  ASSERT_OK_AND_ASSIGN(AppendLayout layout, PlanAppend(table, *NotNullQuerySchema(), false, "/t"));
  EXPECT_FALSE(layout.schema_changed);
  EXPECT_TRUE(layout.not_null_columns.empty());
  ASSERT_OK_AND_ASSIGN(auto writer, AppendWriter::Make(fs::MakeMemoryFileSystem(), "/t", layout, {},
                                                       TableWriterOptions(), 1));
  ASSERT_OK(writer->Write(NotNullQueryBatch(NotNullQuerySchema())));
  ASSERT_OK(writer->Finish().status());
}

TEST(DataFileSchemaTest, DropsPartitionColumns) {
  auto schema = DataType::Struct({Field{"a", DataType::Long()}, Field{"p", DataType::String()}});
  EXPECT_EQ(SchemaDdl(*DataFileSchema(*schema, {"p"})), "a BIGINT");
}

TEST(BloomFilterTest, ColumnsAreSpelledAsInTheSchemaAndMustBeInTheFiles) {
  auto data = DataType::Struct({Field{"Id", DataType::Long()}});
  ASSERT_OK_AND_ASSIGN(std::string name, BloomFilterColumn("id", data, {"p"}, "k"));
  EXPECT_EQ(name, "Id");
  Result<std::string> partition = BloomFilterColumn("P", data, {"p"}, "k");
  EXPECT_EQ(partition.status().message(),
            "k: 'P' is a partition column; its values are not stored in the data files");
  Result<std::string> missing = BloomFilterColumn("nope", data, {}, "k");
  EXPECT_EQ(missing.status().message(), "k: no column 'nope' in the query's output (Id BIGINT)");
}

TEST(BloomFilterTest, EnabledForAllSkipsBooleansAndNestedColumns) {
  auto data = DataType::Struct({Field{"id", DataType::Long()}, Field{"b", DataType::Boolean()},
                                Field{"s", DataType::Struct({Field{"x", DataType::Int()}})},
                                Field{"t", DataType::String()}});
  BloomFilterRequest request;
  request.all = true;
  request.enabled["t"] = false;
  request.ndv["id"] = 1000;
  request.key_of["t"] = "k.t";
  request.key_of["id"] = "k.id";
  ASSERT_OK_AND_ASSIGN(auto filters, ResolveBloomFilters(request, data));
  ASSERT_EQ(filters.size(), 1u);
  EXPECT_EQ(filters.at("id").ndv, 1000);

  BloomFilterRequest boolean;
  boolean.enabled["b"] = true;
  boolean.key_of["b"] = "k.b";
  Result<std::map<std::string, parquet::BloomFilterOptions>> rejected =
      ResolveBloomFilters(boolean, data);
  EXPECT_EQ(rejected.status().message(),
            "k.b: 'b' is boolean; Parquet has no bloom filters for booleans");

  BloomFilterRequest leaf;
  leaf.enabled["s.x"] = true;
  leaf.key_of["s.x"] = "k.s.x";
  ASSERT_OK_AND_ASSIGN(auto leaves, ResolveBloomFilters(leaf, data));
  EXPECT_EQ(leaves.count("s.x"), 1u);
}

}  // namespace
}  // namespace silt::delta
