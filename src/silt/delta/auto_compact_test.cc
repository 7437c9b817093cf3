#include "silt/delta/auto_compact.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "silt/columnar/builder.h"
#include "silt/delta/commit_test_util.h"
#include "silt/delta/partition_utils.h"
#include "silt/delta/table.h"
#include "silt/fs/file_system.h"
#include "silt/parquet/file_reader.h"
#include "silt/testing/gtest_util.h"

namespace silt::delta {
namespace {

using columnar::ColumnBuilder;
using columnar::DataType;
using columnar::Field;

// One commit of one small file per call.
void Append(const fs::FileSystemPtr& fs, DeltaTable* table, const columnar::SchemaPtr& schema,
            int64_t id) {
  ColumnBuilder column(DataType::Long());
  column.Append<int64_t>(id);
  columnar::RecordBatch batch;
  batch.schema = schema;
  batch.num_rows = 1;
  batch.columns = {column.Finish()};
  test_util::WriteAndCommit(fs, table, batch, {});
}

TEST(AutoCompactorTest, CompactsInTheBackgroundEveryNCommits) {
  fs::FileSystemPtr fs = fs::MakeMemoryFileSystem();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<DeltaTable> table, DeltaTable::Open(fs, "/t"));
  auto schema = DataType::Struct({Field{"id", DataType::Long()}});
  AutoCompactOptions options;
  options.every_n_commits = 3;
  options.min_num_files = 2;
  {
    AutoCompactor compactor(fs, "/t", options);
    for (int64_t i = 0; i < 2; ++i) {
      Append(fs, table.get(), schema, i);
      compactor.OnCommit();
    }
    // Two commits: below every_n_commits, nothing has started.
    EXPECT_EQ(compactor.compactions(), 0);
    Append(fs, table.get(), schema, 2);
    compactor.OnCommit();
  }  // waits for the compaction
  ASSERT_OK_AND_ASSIGN(SnapshotPtr snapshot, table->LatestSnapshot());
  EXPECT_EQ(snapshot->files().size(), 1u);
  EXPECT_EQ(snapshot->version(), 3);
}

std::vector<std::string> LivePaths(DeltaTable* table) {
  std::vector<std::string> paths;
  Result<SnapshotPtr> snapshot = table->LatestSnapshot();
  EXPECT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  if (!snapshot.ok()) return paths;
  for (const AddFile& add : (*snapshot)->files()) paths.push_back(add.path);
  std::sort(paths.begin(), paths.end());
  return paths;
}

int64_t Rows(const fs::FileSystemPtr& fs, DeltaTable* table) {
  Result<SnapshotPtr> snapshot = table->LatestSnapshot();
  EXPECT_TRUE(snapshot.ok());
  if (!snapshot.ok()) return -1;
  auto scan = TableScan::Make(fs, "/t", *snapshot);
  EXPECT_TRUE(scan.ok());
  if (!scan.ok()) return -1;
  int64_t rows = 0;
  while (true) {
    Result<columnar::RecordBatchPtr> batch = (*scan)->Next();
    EXPECT_TRUE(batch.ok());
    if (!batch.ok() || *batch == nullptr) break;
    rows += (*batch)->num_rows;
  }
  return rows;
}

// A compaction's output is not read again by the next compaction of the
// partition (delta-spark's executor would rewrite it with the new small
// files): outputs are compacted together once min_num_files of them exist.
TEST(AutoCompactorTest, CompactedFilesWaitForTheirOwnGeneration) {
  fs::FileSystemPtr fs = fs::MakeMemoryFileSystem();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<DeltaTable> table, DeltaTable::Open(fs, "/t"));
  auto schema = DataType::Struct({Field{"id", DataType::Long()}});
  AutoCompactOptions options;
  options.every_n_commits = 1;
  options.min_num_files = 3;
  AutoCompactor compactor(fs, "/t", options);
  int64_t id = 0;
  auto commit = [&] {
    Append(fs, table.get(), schema, id++);
    compactor.OnCommit();
    compactor.Wait();
  };
  for (int i = 0; i < 3; ++i) commit();
  EXPECT_EQ(compactor.compactions(), 1);
  const std::vector<std::string> first = LivePaths(table.get());
  ASSERT_EQ(first.size(), 1u);

  for (int i = 0; i < 3; ++i) commit();
  EXPECT_EQ(compactor.compactions(), 2);
  std::vector<std::string> live = LivePaths(table.get());
  ASSERT_EQ(live.size(), 2u);
  // The first output is still live: only the three new files were rewritten.
  EXPECT_TRUE(std::find(live.begin(), live.end(), first.front()) != live.end());

  for (int i = 0; i < 3; ++i) commit();
  EXPECT_EQ(compactor.compactions(), 3);
  EXPECT_EQ(LivePaths(table.get()).size(), 3u);  // three generation-1 files

  // The next run compacts the three generation-1 files into one.
  commit();
  EXPECT_EQ(compactor.compactions(), 4);
  live = LivePaths(table.get());
  EXPECT_EQ(live.size(), 2u);  // the generation-2 file and the new small one
  EXPECT_TRUE(std::find(live.begin(), live.end(), first.front()) == live.end());
  EXPECT_EQ(Rows(fs, table.get()), 10);
}

// A writer that passes its state (decision 192): the run selects from it,
// holds it only while it runs, and a state that has not seen the
// compactor's last commit starts nothing until a current one arrives.
TEST(AutoCompactorTest, SelectsFromTheWritersStateAndLetsItGo) {
  fs::FileSystemPtr fs = fs::MakeMemoryFileSystem();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<DeltaTable> table, DeltaTable::Open(fs, "/t"));
  auto schema = DataType::Struct({Field{"id", DataType::Long()}});
  AutoCompactOptions options;
  options.every_n_commits = 1;
  options.min_num_files = 3;
  AutoCompactor compactor(fs, "/t", options);
  int64_t id = 0;
  SnapshotPtr state;
  auto commit = [&] {
    Append(fs, table.get(), schema, id++);
    ASSERT_OK_AND_ASSIGN(state, table->LatestSnapshot());
    compactor.OnCommit(state);
    compactor.Wait();
  };
  for (int i = 0; i < 3; ++i) commit();
  EXPECT_EQ(compactor.compactions(), 1);
  // The run has let go of the writer's state: only `state` holds it.
  EXPECT_EQ(state.use_count(), 1);
  ASSERT_EQ(LivePaths(table.get()).size(), 1u);
  ASSERT_OK_AND_ASSIGN(SnapshotPtr compacted, table->LatestSnapshot());

  // Three new files, but the state passed is from before the compaction's
  // commit: it would select the removed files, so nothing starts.
  ASSERT_OK_AND_ASSIGN(SnapshotPtr stale, table->SnapshotAt(compacted->version() - 1));
  ASSERT_EQ(stale->files().size(), 3u);
  for (int i = 0; i < 3; ++i) {
    Append(fs, table.get(), schema, id++);
    compactor.OnCommit(stale);
    compactor.Wait();
  }
  EXPECT_EQ(compactor.compactions(), 1);
  EXPECT_EQ(LivePaths(table.get()).size(), 4u);
  // A current state: the three new files are compacted, the first output
  // (generation 1) is left alone.
  ASSERT_OK_AND_ASSIGN(state, table->LatestSnapshot());
  compactor.OnCommit(state);
  compactor.Wait();
  EXPECT_EQ(compactor.compactions(), 2);
  EXPECT_EQ(LivePaths(table.get()).size(), 2u);
  EXPECT_EQ(state.use_count(), 1);
  EXPECT_EQ(Rows(fs, table.get()), 6);
}

// A compaction writes row groups of at most AutoCompactOptions::
// row_group_bytes (decision 170: what it holds encoded before a flush), not
// OPTIMIZE's 32 MB; the rows are the same.
TEST(AutoCompactorTest, WritesRowGroupsOfItsOwnBound) {
  fs::FileSystemPtr fs = fs::MakeMemoryFileSystem();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<DeltaTable> table, DeltaTable::Open(fs, "/t"));
  auto schema = DataType::Struct({Field{"id", DataType::Long()}});
  AutoCompactOptions options;
  options.every_n_commits = 6;
  options.min_num_files = 6;
  options.row_group_bytes = 1;
  {
    AutoCompactor compactor(fs, "/t", options);
    for (int64_t i = 0; i < 6; ++i) {
      Append(fs, table.get(), schema, i);
      compactor.OnCommit();
    }
  }
  ASSERT_OK_AND_ASSIGN(SnapshotPtr snapshot, table->LatestSnapshot());
  ASSERT_EQ(snapshot->files().size(), 1u);
  ASSERT_OK_AND_ASSIGN(std::string relative, UriDecodePath(snapshot->files()[0].path));
  ASSERT_OK_AND_ASSIGN(auto reader, parquet::ParquetFileReader::Open(fs.get(), "/t/" + relative));
  EXPECT_GT(reader->num_row_groups(), 1);
  EXPECT_EQ(reader->num_rows(), 6);
  EXPECT_EQ(Rows(fs, table.get()), 6);
}

TEST(AutoCompactSelectorTest, FilesAtOrAboveMinFileSizeAreNeverChosen) {
  fs::FileSystemPtr fs = fs::MakeMemoryFileSystem();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<DeltaTable> table, DeltaTable::Open(fs, "/t"));
  auto schema = DataType::Struct({Field{"id", DataType::Long()}});
  for (int64_t i = 0; i < 4; ++i) Append(fs, table.get(), schema, i);
  ASSERT_OK_AND_ASSIGN(SnapshotPtr snapshot, table->LatestSnapshot());
  ASSERT_EQ(snapshot->files().size(), 4u);
  int64_t smallest = snapshot->files().front().size;
  int64_t largest = smallest;
  for (const AddFile& add : snapshot->files()) {
    smallest = std::min(smallest, add.size);
    largest = std::max(largest, add.size);
  }

  AutoCompactOptions options;
  options.min_num_files = 2;
  // The default minFileSize is half of maxFileSize, as in delta-spark.
  options.max_file_bytes = 2 * smallest;
  EXPECT_EQ(options.EffectiveMinFileBytes(), smallest);
  EXPECT_TRUE(AutoCompactSelector(options).Select(*snapshot).empty());
  options.max_file_bytes = 2 * (largest + 1);
  EXPECT_EQ(AutoCompactSelector(options).Select(*snapshot).size(), 4u);
  options.min_file_bytes = smallest;
  EXPECT_TRUE(AutoCompactSelector(options).Select(*snapshot).empty());
  // minNumFiles counts the small files of one generation.
  options.min_file_bytes = -1;
  options.min_num_files = 5;
  AutoCompactSelector selector(options);
  EXPECT_TRUE(selector.Select(*snapshot).empty());
  EXPECT_EQ(selector.tracked(), 4u);
  EXPECT_EQ(selector.Generation(snapshot->files().front().path), 0);
}

}  // namespace
}  // namespace silt::delta
