#include "silt/delta/vacuum.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "silt/base/clock.h"
#include "silt/columnar/builder.h"
#include "silt/delta/commit_test_util.h"
#include "silt/delta/optimize.h"
#include "silt/fs/file_system.h"
#include "silt/testing/gtest_util.h"

namespace silt::delta {
namespace {

using columnar::ColumnBuilder;
using columnar::DataType;
using columnar::Field;

constexpr int64_t kDayMs = 24LL * 3600 * 1000;

TEST(VacuumHiddenTest, SkipsUnderscoreAndDotNamesExceptPartitionsAndCdf) {
  std::vector<std::string> partitions = {"_p", "q"};
  EXPECT_TRUE(IsHiddenForVacuum("_delta_log", partitions));
  EXPECT_TRUE(IsHiddenForVacuum("_checkpoints", partitions));
  EXPECT_TRUE(IsHiddenForVacuum(".part-0.parquet.crc", partitions));
  EXPECT_FALSE(IsHiddenForVacuum("_change_data", partitions));
  EXPECT_FALSE(IsHiddenForVacuum("_delta_index", partitions));
  EXPECT_FALSE(IsHiddenForVacuum("_p=1", partitions));
  EXPECT_FALSE(IsHiddenForVacuum("q=1", partitions));
  EXPECT_FALSE(IsHiddenForVacuum("part-0.parquet", partitions));
}

class VacuumTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs_ = fs::MakeMemoryFileSystem();
    ASSERT_OK_AND_ASSIGN(table_, DeltaTable::Open(fs_, "/t"));
    schema_ = DataType::Struct({Field{"id", DataType::Long()}, Field{"p", DataType::String()}});
    for (int batch = 0; batch < 4; ++batch) Append(batch * 10, 10);
    ASSERT_OK_AND_ASSIGN(SnapshotPtr s, table_->LatestSnapshot());
    for (const AddFile& add : s->files()) pre_optimize_.push_back("/t/" + add.path);
    ASSERT_OK_AND_ASSIGN(OptimizeResult optimized, Optimize(table_.get(), OptimizeOptions()));
    ASSERT_EQ(optimized.num_removed_files, 8);
    ASSERT_OK_AND_ASSIGN(s, table_->LatestSnapshot());
    for (const AddFile& add : s->files()) live_.push_back("/t/" + add.path);
    // Things VACUUM must never delete, and one orphan it may.
    ASSERT_OK(fs_->WriteFile("/t/_checkpoints/offsets/0", "x"));
    ASSERT_OK(fs_->WriteFile("/t/p=a/.part-x.parquet.crc", "x"));
    ASSERT_OK(fs_->WriteFile("/outside/part-0.parquet", "x"));
    ASSERT_OK(fs_->WriteFile("/t/p=a/part-orphan.parquet", "orphan"));
  }

  void Append(int64_t first, int64_t count) {
    ColumnBuilder id(DataType::Long());
    ColumnBuilder p(DataType::String());
    for (int64_t i = first; i < first + count; ++i) {
      id.Append<int64_t>(i);
      p.AppendString(i % 2 == 0 ? "a" : "b");
    }
    columnar::RecordBatch batch;
    batch.schema = schema_;
    batch.num_rows = count;
    batch.columns = {id.Finish(), p.Finish()};
    test_util::WriteAndCommit(fs_, table_.get(), batch, {"p"});
  }

  bool Exists(const std::string& path) {
    auto exists = fs_->Exists(path);
    EXPECT_TRUE(exists.ok());
    return exists.ok() && *exists;
  }

  void ExpectUntouchables() {
    EXPECT_TRUE(Exists("/t/_checkpoints/offsets/0"));
    EXPECT_TRUE(Exists("/t/p=a/.part-x.parquet.crc"));
    EXPECT_TRUE(Exists("/outside/part-0.parquet"));
    EXPECT_TRUE(Exists("/t/_delta_log/00000000000000000000.json"));
    for (const std::string& file : live_) EXPECT_TRUE(Exists(file)) << file;
  }

  int64_t NowMs() { return SystemClock().NowMicros() / 1000; }

  fs::FileSystemPtr fs_;
  std::unique_ptr<DeltaTable> table_;
  columnar::SchemaPtr schema_;
  std::vector<std::string> pre_optimize_;
  std::vector<std::string> live_;
};

TEST_F(VacuumTest, DefaultRetentionKeepsEverythingRecent) {
  ASSERT_OK_AND_ASSIGN(VacuumResult result, Vacuum(table_.get(), VacuumOptions()));
  EXPECT_TRUE(result.files.empty());
  EXPECT_EQ(result.retention_ms, 7 * kDayMs);
  for (const std::string& file : pre_optimize_) EXPECT_TRUE(Exists(file)) << file;
  EXPECT_TRUE(Exists("/t/p=a/part-orphan.parquet"));
  ExpectUntouchables();
}

TEST_F(VacuumTest, AfterTheWindowDeletesRemovedAndOrphanFilesOnly) {
  ManualClock clock((NowMs() + 8 * kDayMs) * 1000);
  VacuumOptions options;
  options.clock = &clock;
  ASSERT_OK_AND_ASSIGN(VacuumResult result, Vacuum(table_.get(), options));
  std::vector<std::string> expected = pre_optimize_;
  expected.push_back("/t/p=a/part-orphan.parquet");
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(result.files, expected);
  EXPECT_EQ(result.deleted, 9);
  for (const std::string& file : expected) EXPECT_FALSE(Exists(file)) << file;
  ExpectUntouchables();
  // VACUUM START and END were recorded.
  ASSERT_GE(result.start_version, 0);
  ASSERT_OK_AND_ASSIGN(CommitActions start, table_->ReadCommit(result.start_version));
  EXPECT_NE(start.commit_info_json->find("\"operation\":\"VACUUM START\""), std::string::npos);
  ASSERT_OK_AND_ASSIGN(CommitActions end, table_->ReadCommit(result.end_version));
  EXPECT_NE(end.commit_info_json->find("\"status\":\"COMPLETED\""), std::string::npos);
  EXPECT_NE(end.commit_info_json->find("\"numDeletedFiles\":\"9\""), std::string::npos);
}

TEST_F(VacuumTest, TombstonesInsideTheWindowAreKept) {
  // A file removed (logically) two days from now: at "now + 8 days" with a
  // 7-day window, its tombstone is still inside the window, so the file
  // stays although it is older than the cutoff.
  ASSERT_OK_AND_ASSIGN(SnapshotPtr s, table_->LatestSnapshot());
  const AddFile& victim = s->files().front();
  RemoveFile remove;
  remove.path = victim.path;
  remove.deletion_timestamp = NowMs() + 2 * kDayMs;
  remove.partition_values = victim.partition_values;
  remove.size = victim.size;
  CommitRequest request;
  request.removes = {remove};
  request.is_blind_append = false;
  ASSERT_OK(Commit(table_.get(), s, request).status());

  ManualClock clock((NowMs() + 8 * kDayMs) * 1000);
  VacuumOptions options;
  options.clock = &clock;
  ASSERT_OK_AND_ASSIGN(VacuumResult result, Vacuum(table_.get(), options));
  EXPECT_TRUE(Exists("/t/" + victim.path));
  EXPECT_EQ(std::count(result.files.begin(), result.files.end(), "/t/" + victim.path), 0);
  EXPECT_EQ(result.files.size(), 9u);
}

TEST_F(VacuumTest, ShortRetentionIsRefusedNamingBothDurations) {
  VacuumOptions options;
  options.retention_ms = 0;
  auto refused = Vacuum(table_.get(), options);
  ASSERT_TRUE(refused.status().IsInvalidArgument());
  EXPECT_NE(refused.status().message().find("0 hours"), std::string::npos);
  EXPECT_NE(refused.status().message().find("168 hours"), std::string::npos);

  options.retention_check = false;
  options.dry_run = true;
  ManualClock clock((NowMs() + 1000) * 1000);  // files strictly older than "now"
  options.clock = &clock;
  ASSERT_OK_AND_ASSIGN(VacuumResult dry, Vacuum(table_.get(), options));
  EXPECT_EQ(dry.files.size(), 9u);
  EXPECT_EQ(dry.deleted, 0);
  for (const std::string& file : pre_optimize_) EXPECT_TRUE(Exists(file)) << file;
}

TEST_F(VacuumTest, LiteDeletesOnlyFilesTheLogRemoved) {
  ManualClock clock((NowMs() + 8 * kDayMs) * 1000);
  VacuumOptions options;
  options.clock = &clock;
  options.lite = true;
  ASSERT_OK_AND_ASSIGN(VacuumResult result, Vacuum(table_.get(), options));
  std::vector<std::string> expected = pre_optimize_;
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(result.files, expected);
  EXPECT_TRUE(Exists("/t/p=a/part-orphan.parquet"));
  ExpectUntouchables();
}

// Regression (issue #23, point 2): lite mode deleted whatever a remove
// named, `../x` and `%2E%2E/x` included.
TEST_F(VacuumTest, LiteNeverDeletesOutsideTheTableRootAndReportsTheSkips) {
  ASSERT_OK(fs_->WriteFile("/outside/dv.bin", "x"));
  ASSERT_OK_AND_ASSIGN(SnapshotPtr s, table_->LatestSnapshot());
  const std::string live = s->files().front().path;
  auto remove = [&](std::string path) {
    RemoveFile r;
    r.path = std::move(path);
    r.deletion_timestamp = NowMs();
    r.size = 1;
    return r;
  };
  CommitRequest request;
  for (const char* name : {"a", "b", "c", "d"}) {
    ASSERT_OK(fs_->WriteFile(std::string("/outside/") + name + ".parquet", "x"));
  }
  request.removes = {remove("../outside/a.parquet"), remove("%2E%2E/outside/b.parquet"),
                     remove("/outside/c.parquet"), remove("file:///outside/d.parquet"),
                     remove("_delta_log/00000000000000000000.json"),
                     // Names a live file in a way that is not its add path.
                     remove(live.substr(0, live.find('/')) + "/../" + live)};
  request.is_blind_append = false;
  // silt writes no deletion vectors; this remove's comes as another engine
  // would write it.
  ASSERT_OK(fs_->WriteFile(
      "/t/_delta_log/" + CommitFileName(s->version() + 1),
      R"({"remove":{"path":"p=a/gone.parquet","deletionTimestamp":)" + std::to_string(NowMs()) +
          R"(,"dataChange":true,"deletionVector":{"storageType":"p",)"
          R"("pathOrInlineDv":"file:///outside/dv.bin","offset":1,"sizeInBytes":10,)"
          R"("cardinality":1}}})"
          "\n"));
  ASSERT_OK_AND_ASSIGN(s, table_->LatestSnapshot());
  ASSERT_OK(Commit(table_.get(), s, request).status());

  ManualClock clock((NowMs() + 8 * kDayMs) * 1000);
  VacuumOptions options;
  options.clock = &clock;
  options.lite = true;
  ASSERT_OK_AND_ASSIGN(VacuumResult result, Vacuum(table_.get(), options));
  std::vector<std::string> expected = pre_optimize_;
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(result.files, expected);
  ExpectUntouchables();
  EXPECT_TRUE(Exists("/outside/dv.bin"));
  for (const char* name : {"a", "b", "c", "d"}) {
    EXPECT_TRUE(Exists(std::string("/outside/") + name + ".parquet")) << name;
  }
  std::string skipped;
  for (const std::string& why : result.skipped) skipped += why + "\n";
  EXPECT_EQ(result.skipped.size(), 6u) << skipped;
  for (const char* path : {"../outside/a.parquet", "%2E%2E/outside/b.parquet", "/outside/c.parquet",
                           "file:///outside/d.parquet", "_delta_log/00000000000000000000.json",
                           "the deletion vector file:///outside/dv.bin"}) {
    EXPECT_NE(skipped.find(path), std::string::npos) << path << " not in\n" << skipped;
  }
  EXPECT_NE(skipped.find("outside the table root"), std::string::npos) << skipped;
}

std::string Sidecar(const std::string& file) {
  return std::string(fs::DirName(file)) + "/." + std::string(fs::BaseName(file)) + ".crc";
}

// Regression (issue #23, point 7): the Hadoop .crc sidecars of the files
// VACUUM deleted stayed behind (delta-spark deletes them with the file).
TEST_F(VacuumTest, ChecksumSidecarsGoWithTheirFiles) {
  for (bool lite : {false, true}) {
    SCOPED_TRACE(lite ? "lite" : "full");
    pre_optimize_.clear();
    live_.clear();
    SetUp();  // a fresh table for each mode
    for (const std::string& file : pre_optimize_) ASSERT_OK(fs_->WriteFile(Sidecar(file), "crc"));
    for (const std::string& file : live_) ASSERT_OK(fs_->WriteFile(Sidecar(file), "crc"));
    ManualClock clock((NowMs() + 8 * kDayMs) * 1000);
    VacuumOptions options;
    options.clock = &clock;
    options.lite = lite;
    ASSERT_OK_AND_ASSIGN(VacuumResult result, Vacuum(table_.get(), options));
    EXPECT_EQ(result.checksum_files.size(), pre_optimize_.size());
    for (const std::string& file : pre_optimize_) {
      EXPECT_FALSE(Exists(file)) << file;
      EXPECT_FALSE(Exists(Sidecar(file))) << file;
    }
    for (const std::string& file : live_) EXPECT_TRUE(Exists(Sidecar(file))) << file;
    ExpectUntouchables();  // including a .crc whose file VACUUM did not delete
  }
}

}  // namespace
}  // namespace silt::delta
