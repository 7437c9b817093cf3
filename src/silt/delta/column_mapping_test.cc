#include "silt/delta/column_mapping.h"

#include <gtest/gtest.h>

#include "silt/columnar/builder.h"
#include "silt/delta/field_metadata.h"
#include "silt/delta/protocol.h"
#include "silt/delta/table.h"
#include "silt/fs/file_system.h"
#include "silt/parquet/file_reader.h"
#include "silt/testing/gtest_util.h"

namespace silt::delta {
namespace {

using columnar::ColumnBuilder;
using columnar::DataType;
using columnar::Field;

int64_t IdOf(const Field& field) {
  Result<std::optional<int64_t>> id = FieldMetadataLong(field, kColumnMappingIdKey);
  EXPECT_TRUE(id.ok() && id->has_value()) << field.name << " " << field.metadata_json;
  return id.ok() && id->has_value() ? **id : -1;
}

std::string NameOf(const Field& field) {
  Result<std::string> name = RequiredPhysicalName(field);
  return name.ok() ? *name : "";
}

// id BIGINT, s STRUCT<a: INT, l: ARRAY<STRUCT<c: STRING>>>, m MAP<STRING, STRUCT<d: INT>>
columnar::SchemaPtr NestedSchema() {
  auto element = DataType::Struct({Field{"c", DataType::String()}});
  auto inner =
      DataType::Struct({Field{"a", DataType::Int()}, Field{"l", DataType::Array(element, true)}});
  auto value = DataType::Struct({Field{"d", DataType::Int()}});
  return DataType::Struct({Field{"id", DataType::Long()}, Field{"s", inner},
                           Field{"m", DataType::Map(DataType::String(), value, true)}});
}

TEST(ColumnMappingTest, AssignNumbersParentsBeforeChildrenAtEveryDepth) {
  int64_t max_id = 0;
  ASSERT_OK_AND_ASSIGN(columnar::SchemaPtr mapped,
                       AssignColumnMapping(NestedSchema(), nullptr, &max_id));
  EXPECT_EQ(max_id, 7);
  EXPECT_EQ(IdOf(mapped->field(0)), 1);
  const Field& s = mapped->field(1);
  EXPECT_EQ(IdOf(s), 2);
  EXPECT_EQ(IdOf(s.type->field(0)), 3);
  EXPECT_EQ(IdOf(s.type->field(1)), 4);
  EXPECT_EQ(IdOf(s.type->field(1).type->element_type()->field(0)), 5);
  EXPECT_EQ(IdOf(mapped->field(2)), 6);
  EXPECT_EQ(IdOf(mapped->field(2).type->value_type()->field(0)), 7);
  EXPECT_EQ(NameOf(mapped->field(0)).rfind("col-", 0), 0u);
  EXPECT_NE(NameOf(mapped->field(0)), NameOf(s));
  ASSERT_OK_AND_ASSIGN(int64_t max_in_schema, MaxColumnId(*mapped));
  EXPECT_EQ(max_in_schema, 7);

  // Fields that have ids keep them; a new one gets the next id.
  std::vector<Field> fields = mapped->fields();
  fields.push_back(Field{"extra", DataType::String()});
  int64_t next = 7;
  ASSERT_OK_AND_ASSIGN(columnar::SchemaPtr grown,
                       AssignColumnMapping(DataType::Struct(fields), mapped.get(), &next));
  EXPECT_EQ(next, 8);
  EXPECT_EQ(IdOf(grown->field(3)), 8);
  EXPECT_EQ(NameOf(grown->field(1)), NameOf(s));
  EXPECT_EQ(grown->field(1).metadata_json, s.metadata_json);

  // Nothing to assign: the same schema comes back, the maximum stays.
  ASSERT_OK_AND_ASSIGN(columnar::SchemaPtr same, AssignColumnMapping(grown, grown.get(), &next));
  EXPECT_EQ(same.get(), grown.get());
  EXPECT_EQ(next, 8);

  // A field the table lacks gets a fresh id even when it carries another
  // table's (here: id 2 and s's physical name, as read from elsewhere).
  std::vector<Field> foreign = mapped->fields();
  Field copied = s;
  copied.name = "t";
  foreign.push_back(copied);
  int64_t after = 7;
  ASSERT_OK_AND_ASSIGN(columnar::SchemaPtr renumbered,
                       AssignColumnMapping(DataType::Struct(foreign), mapped.get(), &after));
  EXPECT_EQ(after, 11);  // t, t.a, t.l, t.l.c
  EXPECT_EQ(IdOf(renumbered->field(3)), 8);
  EXPECT_NE(NameOf(renumbered->field(3)), NameOf(s));
  EXPECT_EQ(IdOf(renumbered->field(3).type->field(1).type->element_type()->field(0)), 11);
  EXPECT_EQ(IdOf(renumbered->field(1)), 2);
}

TEST(ColumnMappingTest, MaxColumnIdInUseTakesTheLargerOfPropertyAndSchema) {
  int64_t max_id = 0;
  ASSERT_OK_AND_ASSIGN(columnar::SchemaPtr mapped,
                       AssignColumnMapping(NestedSchema(), nullptr, &max_id));
  ASSERT_OK_AND_ASSIGN(int64_t a,
                       MaxColumnIdInUse({{"delta.columnMapping.maxColumnId", "12"}}, *mapped));
  EXPECT_EQ(a, 12);
  ASSERT_OK_AND_ASSIGN(int64_t b,
                       MaxColumnIdInUse({{"delta.columnMapping.maxColumnId", "3"}}, *mapped));
  EXPECT_EQ(b, 7);
  ASSERT_RAISES(Corruption,
                MaxColumnIdInUse({{"delta.columnMapping.maxColumnId", "x"}}, *mapped).status());
}

TEST(ColumnMappingTest, PhysicalSchemaRenamesEveryFieldAndCarriesParquetFieldIds) {
  int64_t max_id = 0;
  ASSERT_OK_AND_ASSIGN(columnar::SchemaPtr mapped,
                       AssignColumnMapping(NestedSchema(), nullptr, &max_id));
  ASSERT_OK_AND_ASSIGN(columnar::SchemaPtr physical, PhysicalSchema(*mapped));
  EXPECT_EQ(physical->field(0).name, NameOf(mapped->field(0)));
  EXPECT_EQ(physical->field(0).metadata_json, R"({"parquet.field.id":1})");
  const Field& c = physical->field(1).type->field(1).type->element_type()->field(0);
  EXPECT_EQ(c.name, NameOf(mapped->field(1).type->field(1).type->element_type()->field(0)));
  EXPECT_EQ(c.metadata_json, R"({"parquet.field.id":5})");
  EXPECT_EQ(physical->field(2).type->value_type()->field(0).metadata_json,
            R"({"parquet.field.id":7})");

  Status missing = PhysicalSchema(*NestedSchema()).status();
  ASSERT_TRUE(missing.IsCorruption());
  EXPECT_NE(missing.message().find("'id'"), std::string::npos) << missing.message();
}

TEST(ColumnMappingTest, ModeIsNoneNameOrId) {
  EXPECT_EQ(*ColumnMappingModeOf({}), ColumnMappingMode::kNone);
  EXPECT_EQ(*ColumnMappingModeOf({{"delta.columnMapping.mode", "NAME"}}), ColumnMappingMode::kName);
  EXPECT_EQ(*ColumnMappingModeOf({{"delta.columnMapping.mode", "id"}}), ColumnMappingMode::kId);
  ASSERT_RAISES(NotSupported, ColumnMappingModeOf({{"delta.columnMapping.mode", "x"}}).status());
  EXPECT_TRUE(ValidateTableProperties({{"delta.columnMapping.mode", "name"}}).ok());
  EXPECT_FALSE(ValidateTableProperties({{"delta.columnMapping.mode", "names"}}).ok());
}

TEST(ColumnMappingTest, NewTableProtocolIsReader2Writer7OrReader3WithOtherReaderFeatures) {
  // As delta-spark 4.4 creates them.
  ASSERT_OK_AND_ASSIGN(Protocol alone, ProtocolForNewTable({{"delta.columnMapping.mode", "id"}}));
  EXPECT_EQ(alone.min_reader_version, 2);
  EXPECT_EQ(alone.min_writer_version, 7);
  EXPECT_FALSE(alone.reader_features.has_value());
  EXPECT_EQ(*alone.writer_features,
            (std::vector<std::string>{"appendOnly", "invariants", "columnMapping"}));
  ASSERT_OK_AND_ASSIGN(Protocol with_dv,
                       ProtocolForNewTable({{"delta.columnMapping.mode", "name"},
                                            {"delta.enableDeletionVectors", "true"}}));
  EXPECT_EQ(with_dv.min_reader_version, 3);
  EXPECT_EQ(with_dv.min_writer_version, 7);
  const std::vector<std::string>& readers = *with_dv.reader_features;
  EXPECT_NE(std::find(readers.begin(), readers.end(), "columnMapping"), readers.end());
  const std::vector<std::string>& writers = *with_dv.writer_features;
  EXPECT_NE(std::find(writers.begin(), writers.end(), "columnMapping"), writers.end());
}

TEST(ColumnMappingTest, WriterHonoursColumnMappingOnlyWhenTheWriterSaysSo) {
  Protocol protocol;
  protocol.min_reader_version = 2;
  protocol.min_writer_version = 5;
  Metadata metadata;
  metadata.configuration = {{"delta.columnMapping.mode", "name"}};
  ASSERT_RAISES(NotSupported, CheckWriteSupported(protocol, metadata));
  EXPECT_TRUE(CheckWriteSupported(protocol, metadata, {"columnMapping"}).ok());
}

TEST(ColumnMappingTest, TableWriterWritesPhysicalNamesFieldIdsStatsAndPartitionValues) {
  auto logical = DataType::Struct({Field{"id", DataType::Long()},
                                   Field{"s", DataType::Struct({Field{"a", DataType::Int()}})},
                                   Field{"part", DataType::String()}});
  int64_t max_id = 0;
  ASSERT_OK_AND_ASSIGN(columnar::SchemaPtr schema, AssignColumnMapping(logical, nullptr, &max_id));
  const std::string id_name = NameOf(schema->field(0));
  const std::string s_name = NameOf(schema->field(1));
  const std::string a_name = NameOf(schema->field(1).type->field(0));
  const std::string part_name = NameOf(schema->field(2));

  auto fs = fs::MakeMemoryFileSystem();
  ASSERT_OK_AND_ASSIGN(auto writer, MakeTableWriter(fs, "/t", schema, {"part"}, {}, true));
  ColumnBuilder id(schema->field(0).type), s(schema->field(1).type), part(DataType::String());
  for (int64_t i = 0; i < 3; ++i) {
    id.Append<int64_t>(10 + i);
    s.child(0)->Append<int32_t>(static_cast<int32_t>(i));
    s.AppendValid();
    part.AppendString("p");
  }
  columnar::RecordBatch batch;
  batch.schema = schema;
  batch.num_rows = 3;
  batch.columns = {id.Finish(), s.Finish(), part.Finish()};
  ASSERT_OK(writer->Write(batch));
  ASSERT_OK_AND_ASSIGN(std::vector<AddFile> adds, writer->Finish());
  ASSERT_EQ(adds.size(), 1u);
  ASSERT_EQ(adds[0].partition_values.size(), 1u);
  EXPECT_EQ(adds[0].partition_values[0].first, part_name);
  EXPECT_EQ(adds[0].partition_values[0].second, "p");
  ASSERT_TRUE(adds[0].stats.has_value());
  EXPECT_NE(adds[0].stats->find("\"" + id_name + "\":10"), std::string::npos) << *adds[0].stats;
  EXPECT_NE(adds[0].stats->find("\"nullCount\":{\"" + id_name + "\":0"), std::string::npos)
      << *adds[0].stats;
  EXPECT_EQ(adds[0].stats->find("\"id\""), std::string::npos) << *adds[0].stats;

  ASSERT_OK_AND_ASSIGN(auto reader,
                       parquet::ParquetFileReader::Open(fs.get(), "/t/" + adds[0].path));
  const columnar::SchemaPtr& file_schema = reader->schema();
  ASSERT_EQ(file_schema->num_fields(), 2);
  EXPECT_EQ(file_schema->field(0).name, id_name);
  EXPECT_EQ(file_schema->field(0).metadata_json, R"({"parquet.field.id":1})");
  EXPECT_EQ(file_schema->field(1).name, s_name);
  EXPECT_EQ(file_schema->field(1).type->field(0).name, a_name);
  EXPECT_EQ(file_schema->field(1).type->field(0).metadata_json, R"({"parquet.field.id":3})");
}

}  // namespace
}  // namespace silt::delta
