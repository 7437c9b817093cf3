#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "silt/columnar/builder.h"
#include "silt/columnar/temporal.h"
#include "silt/delta/partition_utils.h"
#include "silt/delta/table.h"
#include "silt/testing/gtest_util.h"

namespace silt::delta {
namespace {

using columnar::ColumnBuilder;
using columnar::DataType;
using columnar::Field;

columnar::SchemaPtr EventSchema() {
  return DataType::Struct(
      {Field{"device_id", DataType::String()}, Field{"device_type", DataType::String()},
       Field{"power", DataType::Double()}, Field{"event_date", DataType::Date()}});
}

struct Row {
  std::string device_id;
  std::optional<std::string> device_type;
  std::optional<double> power;
  int32_t event_date;
  bool operator<(const Row& o) const {
    return std::tie(device_id, device_type, power, event_date) <
           std::tie(o.device_id, o.device_type, o.power, o.event_date);
  }
  bool operator==(const Row& o) const {
    return std::tie(device_id, device_type, power, event_date) ==
           std::tie(o.device_id, o.device_type, o.power, o.event_date);
  }
};

columnar::RecordBatchPtr MakeBatch(const std::vector<Row>& rows) {
  auto schema = EventSchema();
  ColumnBuilder id(DataType::String());
  ColumnBuilder type(DataType::String());
  ColumnBuilder power(DataType::Double());
  ColumnBuilder date(DataType::Date());
  for (const Row& r : rows) {
    id.AppendString(r.device_id);
    if (r.device_type) {
      type.AppendString(*r.device_type);
    } else {
      type.AppendNull();
    }
    if (r.power) {
      power.Append<double>(*r.power);
    } else {
      power.AppendNull();
    }
    date.Append<int32_t>(r.event_date);
  }
  auto batch = std::make_shared<columnar::RecordBatch>();
  batch->schema = schema;
  batch->num_rows = static_cast<int64_t>(rows.size());
  batch->columns = {id.Finish(), type.Finish(), power.Finish(), date.Finish()};
  return batch;
}

std::vector<Row> ReadRows(const columnar::RecordBatch& batch) {
  std::vector<Row> rows;
  for (int64_t i = 0; i < batch.num_rows; ++i) {
    Row r;
    r.device_id = std::string(batch.column(0)->StringValue(i));
    if (batch.column(1)->IsValid(i)) r.device_type = std::string(batch.column(1)->StringValue(i));
    if (batch.column(2)->IsValid(i)) r.power = batch.column(2)->Value<double>(i);
    r.event_date = batch.column(3)->Value<int32_t>(i);
    rows.push_back(r);
  }
  return rows;
}

class TableWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs_ = fs::MakeMemoryFileSystem();
    ASSERT_OK_AND_ASSIGN(table_, DeltaTable::Open(fs_, "/tables/events"));
  }

  Result<std::vector<AddFile>> WriteAll(const std::vector<columnar::RecordBatchPtr>& batches,
                                        TableWriterOptions options = {}) {
    SILT_ASSIGN_OR_RETURN(auto writer, TableWriter::Make(fs_, table_->path(), EventSchema(),
                                                         {"device_type", "event_date"}, options));
    for (const auto& b : batches) SILT_RETURN_NOT_OK(writer->Write(*b));
    return writer->Finish();
  }

  // Every row of `snapshot`, each batch validated, in scan order.
  void ScanAll(const SnapshotPtr& snapshot, std::vector<Row>* rows) {
    ASSERT_OK_AND_ASSIGN(auto scan, TableScan::Make(fs_, table_->path(), snapshot));
    while (true) {
      ASSERT_OK_AND_ASSIGN(columnar::RecordBatchPtr batch, scan->Next());
      if (batch == nullptr) break;
      ASSERT_OK(columnar::ValidateBatch(*batch));
      for (const Row& r : ReadRows(*batch)) rows->push_back(r);
    }
  }

  fs::FileSystemPtr fs_;
  std::unique_ptr<DeltaTable> table_;
};

const int32_t kDay1 = columnar::DaysFromCivil(2026, 6, 22);
const int32_t kDay2 = columnar::DaysFromCivil(2026, 6, 23);

TEST_F(TableWriterTest, WritesOneFilePerPartitionWithHiveDirectories) {
  auto batch = MakeBatch({{"plug-1", "smart_plug", 1.5, kDay1},
                          {"door-1", "contact/sensor", std::nullopt, kDay1},
                          {"plug-2", "smart_plug", 84.3, kDay1},
                          {"x-1", std::nullopt, 2.0, kDay2}});
  ASSERT_OK_AND_ASSIGN(std::vector<AddFile> adds, WriteAll({batch}));
  ASSERT_EQ(adds.size(), 3u);
  std::set<std::string> dirs;
  for (const AddFile& add : adds) {
    dirs.insert(add.path.substr(0, add.path.rfind('/')));
    std::string name = add.path.substr(add.path.rfind('/') + 1);
    EXPECT_EQ(name.substr(0, 5), "part-") << name;
    EXPECT_EQ(name[10], '-') << name;
    EXPECT_NE(name.find(".c000.snappy.parquet"), std::string::npos) << name;
    EXPECT_TRUE(add.data_change);
    EXPECT_GT(add.size, 0);
    EXPECT_GT(add.modification_time, 0);
    ASSERT_TRUE(add.stats.has_value());
    EXPECT_EQ(add.stats->substr(0, 14), R"({"numRecords":)");
    ASSERT_OK_AND_ASSIGN(std::string physical, ResolveDataFilePath(table_->path(), add.path));
    ASSERT_OK_AND_ASSIGN(fs::FileInfo info, fs_->GetFileInfo(physical));
    EXPECT_EQ(info.size, add.size);
  }
  // '/' is escaped in the directory name (%2F), and the '%' is URI-encoded
  // in add.path (%252F).
  EXPECT_EQ(dirs, (std::set<std::string>{"device_type=smart_plug/event_date=2026-06-22",
                                         "device_type=contact%252Fsensor/event_date=2026-06-22",
                                         "device_type=__HIVE_DEFAULT_PARTITION__/"
                                         "event_date=2026-06-23"}));
  for (const AddFile& add : adds) {
    if (add.path.find("smart_plug") != std::string::npos) {
      EXPECT_EQ(add.partition_values,
                (PartitionValues{{"device_type", "smart_plug"}, {"event_date", "2026-06-22"}}));
      EXPECT_EQ(*add.stats, R"({"numRecords":2,"minValues":{"device_id":"plug-1","power":1.5},)"
                            R"("maxValues":{"device_id":"plug-2","power":84.3},)"
                            R"("nullCount":{"device_id":0,"power":0}})");
    }
    if (add.path.find("HIVE") != std::string::npos) {
      EXPECT_FALSE(add.partition_values[0].second.has_value());
    }
  }
}

TEST_F(TableWriterTest, CommittedRowsScanBackWithPartitionColumns) {
  std::vector<Row> expected = {{"plug-1", "smart_plug", 1.5, kDay1},
                               {"door-1", "contact sensor", std::nullopt, kDay1},
                               {"plug-2", "smart_plug", 84.3, kDay2},
                               {"x-1", std::nullopt, 2.0, kDay2},
                               {"plug-3", "smart_plug", 3.25, kDay1}};
  auto b1 = MakeBatch({expected[0], expected[1], expected[2]});
  auto b2 = MakeBatch({expected[3], expected[4]});
  ASSERT_OK_AND_ASSIGN(std::vector<AddFile> adds, WriteAll({b1, b2}));

  CommitRequest create;
  Metadata m;
  m.schema = EventSchema();
  m.partition_columns = {"device_type", "event_date"};
  create.new_metadata = m;
  create.adds = adds;
  create.txn = Txn{"query", 0, std::nullopt};
  ASSERT_OK_AND_ASSIGN(CommitResult result, Commit(table_.get(), nullptr, create));
  EXPECT_EQ(result.version, 0);

  ASSERT_OK_AND_ASSIGN(SnapshotPtr snapshot, table_->LatestSnapshot());
  EXPECT_EQ(snapshot->files().size(), adds.size());
  ASSERT_OK_AND_ASSIGN(auto scan, TableScan::Make(fs_, table_->path(), snapshot));
  EXPECT_TRUE(scan->schema()->Equals(*EventSchema()));
  std::vector<Row> got;
  ASSERT_NO_FATAL_FAILURE(ScanAll(snapshot, &got));
  std::sort(expected.begin(), expected.end());
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, expected);
}

// Write() keeps its grouping arrays across batches (decision 188): a
// batch smaller than the one before, or with fewer partitions, must not see
// the previous batch's groups or codes.
TEST_F(TableWriterTest, BatchesThatShrinkAndGrowKeepEveryRowInItsPartition) {
  const std::vector<std::optional<std::string>> types = {"smart_plug", std::nullopt, "contact",
                                                         "a-much-longer-device-type-name", "plug"};
  std::vector<Row> expected;
  std::vector<columnar::RecordBatchPtr> batches;
  int serial = 0;
  for (int batch_rows : {500, 7, 1, 300, 40}) {
    std::vector<Row> rows;
    for (int row_idx = 0; row_idx < batch_rows; ++row_idx, ++serial) {
      // Batch sizes 7 and 1 hold one partition only; the others rotate
      // through every type (null included) and three dates in runs.
      const bool single = batch_rows < 10;
      const auto& type = types[single ? 2 : static_cast<size_t>((serial / 3) % 5)];
      const int32_t date = single ? kDay2 : kDay1 + (serial / 7) % 3;
      rows.push_back(Row{"dev-" + std::to_string(serial), type,
                         serial % 4 == 0 ? std::nullopt : std::optional<double>(serial * 0.5),
                         date});
    }
    expected.insert(expected.end(), rows.begin(), rows.end());
    batches.push_back(MakeBatch(rows));
  }
  ASSERT_OK_AND_ASSIGN(std::vector<AddFile> adds, WriteAll(batches));

  CommitRequest create;
  Metadata m;
  m.schema = EventSchema();
  m.partition_columns = {"device_type", "event_date"};
  create.new_metadata = m;
  create.adds = adds;
  create.txn = Txn{"query", 0, std::nullopt};
  ASSERT_OK(Commit(table_.get(), nullptr, create).status());
  ASSERT_OK_AND_ASSIGN(SnapshotPtr snapshot, table_->LatestSnapshot());
  std::vector<Row> got;
  ASSERT_NO_FATAL_FAILURE(ScanAll(snapshot, &got));
  std::sort(expected.begin(), expected.end());
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, expected);
}

TEST_F(TableWriterTest, ScanProjectsRequestedColumnsInRequestedOrder) {
  auto batch =
      MakeBatch({{"plug-1", "smart_plug", 1.5, kDay1}, {"plug-2", "smart_plug", 2.5, kDay1}});
  ASSERT_OK_AND_ASSIGN(std::vector<AddFile> adds, WriteAll({batch}));
  CommitRequest create;
  Metadata m;
  m.schema = EventSchema();
  m.partition_columns = {"device_type", "event_date"};
  create.new_metadata = m;
  create.adds = adds;
  ASSERT_OK(Commit(table_.get(), nullptr, create));
  ASSERT_OK_AND_ASSIGN(SnapshotPtr snapshot, table_->LatestSnapshot());

  ASSERT_OK_AND_ASSIGN(auto scan,
                       TableScan::Make(fs_, table_->path(), snapshot, {"event_date", "POWER"}));
  ASSERT_EQ(scan->schema()->num_fields(), 2);
  EXPECT_EQ(scan->schema()->field(0).name, "event_date");
  EXPECT_EQ(scan->schema()->field(1).name, "power");
  ASSERT_OK_AND_ASSIGN(columnar::RecordBatchPtr out, scan->Next());
  ASSERT_NE(out, nullptr);
  ASSERT_EQ(out->num_rows, 2);
  EXPECT_EQ(out->column(0)->Value<int32_t>(1), kDay1);
  EXPECT_EQ(out->column(1)->Value<double>(1), 2.5);

  // Partition columns alone still yield the file's rows.
  ASSERT_OK_AND_ASSIGN(auto partitions_only,
                       TableScan::Make(fs_, table_->path(), snapshot, {"device_type"}));
  ASSERT_OK_AND_ASSIGN(columnar::RecordBatchPtr p, partitions_only->Next());
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->num_rows, 2);
  EXPECT_EQ(p->column(0)->StringValue(0), "smart_plug");

  ASSERT_RAISES(InvalidArgument, TableScan::Make(fs_, table_->path(), snapshot, {"nope"}));
}

TEST_F(TableWriterTest, ColumnsMissingFromAFileReadAsNull) {
  // The table schema gained a column after the file was written.
  auto batch = MakeBatch({{"plug-1", "smart_plug", 1.5, kDay1}});
  ASSERT_OK_AND_ASSIGN(std::vector<AddFile> adds, WriteAll({batch}));
  CommitRequest create;
  Metadata m;
  std::vector<Field> fields = EventSchema()->fields();
  fields.push_back(Field{"voltage", DataType::Double()});
  m.schema = DataType::Struct(fields);
  m.partition_columns = {"device_type", "event_date"};
  create.new_metadata = m;
  create.adds = adds;
  ASSERT_OK(Commit(table_.get(), nullptr, create));
  ASSERT_OK_AND_ASSIGN(SnapshotPtr snapshot, table_->LatestSnapshot());
  ASSERT_OK_AND_ASSIGN(auto scan, TableScan::Make(fs_, table_->path(), snapshot));
  ASSERT_OK_AND_ASSIGN(columnar::RecordBatchPtr out, scan->Next());
  ASSERT_NE(out, nullptr);
  ASSERT_EQ(out->num_columns(), 5);
  EXPECT_EQ(out->column(4)->null_count, 1);
  EXPECT_EQ(out->column(0)->StringValue(0), "plug-1");
}

TEST_F(TableWriterTest, RollsToANewFilePastTheTargetSize) {
  std::vector<columnar::RecordBatchPtr> batches;
  for (int i = 0; i < 3; ++i) batches.push_back(MakeBatch({{"plug-1", "smart_plug", 1.0, kDay1}}));
  TableWriterOptions options;
  options.target_file_bytes = 1;  // every write passes it
  ASSERT_OK_AND_ASSIGN(std::vector<AddFile> adds, WriteAll(batches, options));
  ASSERT_EQ(adds.size(), 3u);
  std::set<std::string> paths;
  for (const AddFile& add : adds) paths.insert(add.path);
  EXPECT_EQ(paths.size(), 3u);
}

TEST_F(TableWriterTest, AbortDeletesWrittenFiles) {
  TableWriterOptions options;
  options.target_file_bytes = 1;  // each write closes its file
  ASSERT_OK_AND_ASSIGN(
      auto writer, TableWriter::Make(fs_, table_->path(), EventSchema(), {"device_type"}, options));
  ASSERT_OK(writer->Write(*MakeBatch({{"plug-1", "smart_plug", 1.0, kDay1}})));
  ASSERT_OK(writer->Write(*MakeBatch({{"door-1", "contact", 2.0, kDay1}})));
  ASSERT_OK_AND_ASSIGN(std::vector<fs::FileInfo> before, fs_->ListRecursive(table_->path()));
  EXPECT_EQ(before.size(), 2u);
  ASSERT_OK(writer->Abort());
  ASSERT_OK_AND_ASSIGN(std::vector<fs::FileInfo> after, fs_->ListRecursive(table_->path()));
  EXPECT_TRUE(after.empty());
}

TEST_F(TableWriterTest, RejectsBadPartitionColumns) {
  ASSERT_RAISES(InvalidArgument,
                TableWriter::Make(fs_, table_->path(), EventSchema(), {"missing"}));
  ASSERT_RAISES(InvalidArgument,
                TableWriter::Make(fs_, table_->path(), EventSchema(),
                                  {"device_id", "device_type", "power", "event_date"}));
}

}  // namespace
}  // namespace silt::delta
