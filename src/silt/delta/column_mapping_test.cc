#include "silt/delta/column_mapping.h"

#include <gtest/gtest.h>

#include "silt/columnar/builder.h"
#include "silt/delta/change_feed.h"
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

TEST(ColumnMappingTest, NewTableSchemaIsNumberedAndRecordsMaxColumnId) {
  TableConfiguration configuration{{"delta.columnMapping.mode", "name"}};
  ASSERT_OK_AND_ASSIGN(columnar::SchemaPtr mapped,
                       MapNewTableSchema(NestedSchema(), &configuration));
  EXPECT_EQ(IdOf(mapped->field(2).type->value_type()->field(0)), 7);
  EXPECT_EQ(configuration.at("delta.columnMapping.maxColumnId"), "7");
  TableConfiguration plain;
  ASSERT_OK_AND_ASSIGN(columnar::SchemaPtr same, MapNewTableSchema(NestedSchema(), &plain));
  EXPECT_EQ(same->field(0).metadata_json, "{}");
  EXPECT_TRUE(plain.empty());
}

TEST(ColumnMappingTest, HiddenColumnIsWrittenUnderItsOwnNameWithoutFieldId) {
  int64_t max_id = 0;
  ASSERT_OK_AND_ASSIGN(columnar::SchemaPtr mapped,
                       AssignColumnMapping(NestedSchema(), nullptr, &max_id));
  std::vector<Field> fields = mapped->fields();
  fields.push_back(HiddenColumn("_change_type", DataType::String()));
  ASSERT_OK_AND_ASSIGN(columnar::SchemaPtr physical, PhysicalSchema(*DataType::Struct(fields)));
  EXPECT_EQ(physical->field(3).name, "_change_type");
  EXPECT_EQ(physical->field(3).metadata_json, "{}");
  // A table field whose physical name is not its own still needs its id.
  Field odd{"x", DataType::Int()};
  odd.metadata_json = R"({"delta.columnMapping.physicalName":"col-1"})";
  ASSERT_RAISES(Corruption, PhysicalSchema(*DataType::Struct({odd})).status());
}

Metadata MappedMetadata(columnar::SchemaPtr schema, std::vector<std::string> partitions = {}) {
  Metadata metadata;
  metadata.configuration = {{"delta.columnMapping.mode", "name"}};
  metadata.schema = std::move(schema);
  metadata.schema_string = columnar::SchemaToJson(*metadata.schema);
  metadata.partition_columns = std::move(partitions);
  return metadata;
}

TEST(ColumnMappingTest, ChangeFeedReadSchemaRefusesRenamesAndDropsNotAdds) {
  int64_t max_id = 0;
  ASSERT_OK_AND_ASSIGN(columnar::SchemaPtr mapped,
                       AssignColumnMapping(NestedSchema(), nullptr, &max_id));
  const Metadata start = MappedMetadata(mapped);
  auto check = [&](const Metadata& read, bool change) {
    return CheckChangeFeedReadSchema(read, 5, start, 2, change, 2, 5, "/t");
  };
  EXPECT_OK(check(start, true));
  // An added column reads as NULL for older data.
  std::vector<Field> added = mapped->fields();
  added.push_back(HiddenColumn("z", DataType::Int()));
  EXPECT_OK(check(MappedMetadata(DataType::Struct(added)), true));
  // A nested field renamed (same physical name, new logical one).
  std::vector<Field> renamed = mapped->fields();
  std::vector<Field> inner = renamed[1].type->fields();
  inner[0].name = "a2";
  renamed[1].type = DataType::Struct(inner);
  Status rename = check(MappedMetadata(DataType::Struct(renamed)), true);
  ASSERT_RAISES(NotSupported, rename);
  EXPECT_NE(rename.message().find("[DELTA_CHANGE_DATA_FEED_INCOMPATIBLE_SCHEMA_CHANGE]"),
            std::string::npos);
  // A dropped column, seen from the start version's data.
  std::vector<Field> dropped = mapped->fields();
  dropped.pop_back();
  Status drop = check(MappedMetadata(DataType::Struct(dropped)), false);
  ASSERT_RAISES(NotSupported, drop);
  EXPECT_NE(drop.message().find("[DELTA_CHANGE_DATA_FEED_INCOMPATIBLE_DATA_SCHEMA]"),
            std::string::npos);
  // A type change and a nullable field made non-nullable.
  std::vector<Field> retyped = mapped->fields();
  retyped[0].type = DataType::Int();
  ASSERT_RAISES(NotSupported, check(MappedMetadata(DataType::Struct(retyped)), true));
  std::vector<Field> tightened = mapped->fields();
  tightened[0].nullable = false;
  ASSERT_RAISES(NotSupported, check(MappedMetadata(DataType::Struct(tightened)), true));
  // Other partition columns, and turning column mapping off.
  ASSERT_RAISES(NotSupported, check(MappedMetadata(mapped, {"id"}), true));
  Metadata off = start;
  off.configuration.clear();
  ASSERT_RAISES(NotSupported, check(off, true));
}

class AlterColumnsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs_ = fs::MakeMemoryFileSystem();
    ASSERT_OK_AND_ASSIGN(table_, DeltaTable::Open(fs_, "/t"));
  }

  // id BIGINT, s STRUCT<a, b>, v INT, g INT GENERATED AS (v * 2) when
  // `generated`, column-mapped.
  void Create(TableConfiguration configuration, bool generated = false) {
    configuration["delta.columnMapping.mode"] = "name";
    std::vector<Field> fields{
        Field{"id", DataType::Long()},
        Field{"s", DataType::Struct({Field{"a", DataType::Int()}, Field{"b", DataType::Int()}})},
        Field{"v", DataType::Int()}};
    if (generated) {
      Field g{"g", DataType::Int()};
      g.metadata_json = R"({"delta.generationExpression":"v * 2"})";
      fields.push_back(g);
    }
    CommitRequest create;
    ASSERT_OK_AND_ASSIGN(create.new_protocol, ProtocolForNewTable(configuration));
    if (generated) AddTableFeature(&*create.new_protocol, "generatedColumns");
    Metadata metadata;
    ASSERT_OK_AND_ASSIGN(metadata.schema,
                         MapNewTableSchema(DataType::Struct(fields), &configuration));
    metadata.schema_string = columnar::SchemaToJson(*metadata.schema);
    metadata.configuration = std::move(configuration);
    create.new_metadata = metadata;
    create.operation = "CREATE TABLE";
    create.honoured_features = {"columnMapping", "generatedColumns"};
    ASSERT_OK(Commit(table_.get(), nullptr, create).status());
  }

  std::string Property(const std::string& key) {
    Result<SnapshotPtr> snapshot = table_->LatestSnapshot();
    EXPECT_TRUE(snapshot.ok());
    auto it = (*snapshot)->metadata().configuration.find(key);
    return it == (*snapshot)->metadata().configuration.end() ? "<unset>" : it->second;
  }

  // Every identifier chain of an expression (the CLI parses them).
  static Result<std::vector<std::vector<std::string>>> Columns(const std::string& expression) {
    if (expression == "v * 2" || expression == "v > 0") {
      return std::vector<std::vector<std::string>>{{"v"}};
    }
    if (expression == "s.a > 0") return std::vector<std::vector<std::string>>{{"s", "a"}};
    return Status::InvalidArgument("unexpected expression ", expression);
  }

  fs::FileSystemPtr fs_;
  std::unique_ptr<DeltaTable> table_;
};

TEST_F(AlterColumnsTest, StatsColumnsFollowRenamesAndLoseDroppedColumns) {
  Create({{"delta.dataSkippingStatsColumns", "v, s.a ,id"}});
  ASSERT_OK(RenameColumn(table_.get(), {"s"}, "t").status());
  EXPECT_EQ(Property("delta.dataSkippingStatsColumns"), "v,t.a,id");
  ASSERT_OK(RenameColumn(table_.get(), {"v"}, "my col").status());
  EXPECT_EQ(Property("delta.dataSkippingStatsColumns"), "`my col`,t.a,id");
  // DROP re-prints names as Spark's UnresolvedAttribute.name does (only a
  // name with a dot is quoted).
  ASSERT_OK(DropColumns(table_.get(), {{"t"}}).status());
  EXPECT_EQ(Property("delta.dataSkippingStatsColumns"), "my col,id");
}

TEST_F(AlterColumnsTest, ColumnsReadByConstraintsOrGeneratedColumnsAreRefused) {
  Create({{"delta.constraints.positive", "v > 0"}, {"delta.constraints.nested", "s.a > 0"}}, true);
  // Without a parser for the expressions: refused as before.
  ASSERT_RAISES(NotSupported, RenameColumn(table_.get(), {"id"}, "x").status());
  Status v = RenameColumn(table_.get(), {"V"}, "w", Columns).status();
  ASSERT_RAISES(InvalidArgument, v);
  EXPECT_NE(v.message().find("[DELTA_CONSTRAINT_DEPENDENT_COLUMN_CHANGE]"), std::string::npos)
      << v.message();
  EXPECT_NE(v.message().find("delta.constraints.positive -> v > 0"), std::string::npos);
  // The struct above a field a constraint reads, and that field.
  ASSERT_RAISES(InvalidArgument, DropColumns(table_.get(), {{"s"}}, Columns).status());
  ASSERT_RAISES(InvalidArgument, RenameColumn(table_.get(), {"s", "a"}, "x", Columns).status());
  // Another field of the struct, the generated column itself, and a
  // column nothing reads.
  ASSERT_OK(RenameColumn(table_.get(), {"s", "b"}, "b2", Columns).status());
  ASSERT_OK(RenameColumn(table_.get(), {"g"}, "g2", Columns).status());
  ASSERT_OK(DropColumns(table_.get(), {{"id"}}, Columns).status());
}

TEST_F(AlterColumnsTest, GeneratedColumnSourcesAreRefusedAfterConstraints) {
  Create({}, true);
  Status v = DropColumns(table_.get(), {{"v"}}, Columns).status();
  ASSERT_RAISES(InvalidArgument, v);
  EXPECT_NE(v.message().find("[DELTA_GENERATED_COLUMNS_DEPENDENT_COLUMN_CHANGE]"),
            std::string::npos)
      << v.message();
  EXPECT_NE(v.message().find("g -> v * 2"), std::string::npos);
}

}  // namespace
}  // namespace silt::delta
