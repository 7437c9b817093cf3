// Checkpoint writing, expired log cleanup, time travel by timestamp and
// history, over the memory file system with faked commit file times.
#include "silt/delta/checkpoint_writer.h"

#include <gtest/gtest.h>

#include <map>
#include <mutex>

#include "silt/base/clock.h"
#include "silt/delta/checkpoint_reader.h"
#include "silt/delta/history.h"
#include "silt/delta/log_cleanup.h"
#include "silt/delta/protocol.h"
#include "silt/delta/table_properties.h"
#include "silt/parquet/file_reader.h"
#include "silt/testing/gtest_util.h"

namespace silt::delta {
namespace {

constexpr int64_t kDayMs = 24LL * 3600 * 1000;

// Reports chosen modification times for chosen files (the memory file
// system stamps the real time).
class FakeTimesFileSystem : public fs::ForwardingFileSystem {
 public:
  using ForwardingFileSystem::ForwardingFileSystem;
  void SetTime(const std::string& path, int64_t ms) {
    std::lock_guard<std::mutex> lock(mu_);
    times_[path] = ms;
  }
  Result<std::vector<fs::FileInfo>> ListDir(const std::string& dir) override {
    SILT_ASSIGN_OR_RETURN(auto entries, target()->ListDir(dir));
    std::lock_guard<std::mutex> lock(mu_);
    ++listings_;
    for (auto& e : entries) {
      auto it = times_.find(e.path);
      if (it != times_.end()) e.modification_time_ms = it->second;
    }
    return entries;
  }

  int64_t listings() {
    std::lock_guard<std::mutex> lock(mu_);
    return listings_;
  }

 private:
  std::mutex mu_;
  std::map<std::string, int64_t> times_;
  int64_t listings_ = 0;
};

Metadata NewTableMetadata(std::map<std::string, std::string> configuration = {}) {
  Metadata m;
  m.schema = columnar::DataType::Struct({columnar::Field{"id", columnar::DataType::Long()},
                                         columnar::Field{"p", columnar::DataType::String()}});
  m.partition_columns = {"p"};
  m.configuration = std::move(configuration);
  return m;
}

AddFile Add(std::string path, std::optional<std::string> p = "x") {
  AddFile a;
  a.path = std::move(path);
  a.partition_values = {{"p", std::move(p)}};
  a.size = 10;
  a.modification_time = 1;
  a.stats = R"({"numRecords":1,"minValues":{"id":1},"maxValues":{"id":1},"nullCount":{"id":0}})";
  return a;
}

class CheckpointWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs_ = std::make_shared<FakeTimesFileSystem>(fs::MakeMemoryFileSystem());
    ASSERT_OK_AND_ASSIGN(table_, DeltaTable::Open(fs_, "/t"));
  }

  void Create(std::map<std::string, std::string> configuration = {}) {
    CommitRequest create;
    ASSERT_OK_AND_ASSIGN(create.new_protocol, ProtocolForNewTable(configuration));
    create.new_metadata = NewTableMetadata(std::move(configuration));
    create.operation = "CREATE TABLE";
    ASSERT_OK(Commit(table_.get(), nullptr, create).status());
  }

  // Appends one file per version until the table is at `last`; every third
  // version also removes the file the previous one added.
  void AppendUntil(int64_t last) {
    for (;;) {
      ASSERT_OK_AND_ASSIGN(SnapshotPtr snapshot, table_->LatestSnapshot());
      int64_t v = snapshot->version() + 1;
      if (v > last) return;
      CommitRequest r;
      r.operation = "WRITE";
      r.adds = {Add("p=" + std::to_string(v % 3) + "/f" + std::to_string(v) + ".parquet",
                    std::to_string(v % 3))};
      if (v % 3 == 0 && v > 1) {
        RemoveFile rm;
        rm.path = "p=" + std::to_string((v - 1) % 3) + "/f" + std::to_string(v - 1) + ".parquet";
        rm.deletion_timestamp = SystemClock().NowMicros() / 1000;
        r.removes = {rm};
        r.is_blind_append = false;
      }
      r.txn = Txn{"app", v, std::nullopt};
      ASSERT_OK(Commit(table_.get(), snapshot, r).status());
    }
  }

  std::string Log(const std::string& name) { return "/t/_delta_log/" + name; }

  std::shared_ptr<FakeTimesFileSystem> fs_;
  std::unique_ptr<DeltaTable> table_;
};

std::vector<std::string> Paths(const Snapshot& s) {
  std::vector<std::string> out;
  for (const AddFile& a : s.files()) out.push_back(a.path);
  return out;
}

TEST(CheckpointNamesTest, FileNameAndCadence) {
  EXPECT_EQ(CheckpointFileName(10), "00000000000000000010.checkpoint.parquet");
  Metadata m;
  EXPECT_FALSE(ShouldCheckpoint(m, 0).ValueOrDie());
  EXPECT_FALSE(ShouldCheckpoint(m, 9).ValueOrDie());
  EXPECT_TRUE(ShouldCheckpoint(m, 10).ValueOrDie());
  m.configuration["delta.checkpointInterval"] = "3";
  EXPECT_TRUE(ShouldCheckpoint(m, 9).ValueOrDie());
}

TEST_F(CheckpointWriterTest, CommitsCheckpointEveryIntervalAndReplayMatches) {
  Create();
  AppendUntil(25);
  ASSERT_OK_AND_ASSIGN(bool has10, fs_->Exists(Log(CheckpointFileName(10))));
  ASSERT_OK_AND_ASSIGN(bool has20, fs_->Exists(Log(CheckpointFileName(20))));
  ASSERT_OK_AND_ASSIGN(bool has15, fs_->Exists(Log(CheckpointFileName(15))));
  EXPECT_TRUE(has10);
  EXPECT_TRUE(has20);
  EXPECT_FALSE(has15);
  ASSERT_OK_AND_ASSIGN(std::string last, fs_->ReadFile(Log("_last_checkpoint")));
  EXPECT_NE(last.find(R"("version":20)"), std::string::npos) << last;
  EXPECT_NE(last.find(R"("checkpointSchema")"), std::string::npos) << last;

  // The checkpoint reads back with every action kind.
  ASSERT_OK_AND_ASSIGN(CommitActions cp,
                       ReadParquetCheckpoint(fs_.get(), Log(CheckpointFileName(20))));
  ASSERT_TRUE(cp.protocol.has_value());
  ASSERT_TRUE(cp.metadata.has_value());
  EXPECT_EQ(cp.metadata->partition_columns, std::vector<std::string>{"p"});
  ASSERT_EQ(cp.txns.size(), 1u);
  EXPECT_EQ(cp.txns[0].version, 20);
  EXPECT_FALSE(cp.removes.empty());
  ASSERT_FALSE(cp.adds.empty());
  EXPECT_TRUE(cp.adds[0].stats.has_value());
  EXPECT_NE(last.find(R"("numOfAddFiles":)" + std::to_string(cp.adds.size())), std::string::npos);

  // A snapshot started from the checkpoint equals one replayed from commit 0.
  ASSERT_OK_AND_ASSIGN(SnapshotPtr from_checkpoint, table_->SnapshotAt(25));
  ASSERT_OK(fs_->DeleteFile(Log(CheckpointFileName(10))));
  ASSERT_OK(fs_->DeleteFile(Log(CheckpointFileName(20))));
  ASSERT_OK_AND_ASSIGN(SnapshotPtr replayed, table_->SnapshotAt(25));
  EXPECT_EQ(Paths(*from_checkpoint), Paths(*replayed));
  EXPECT_EQ(from_checkpoint->TxnVersion("app"), 25);
  EXPECT_EQ(from_checkpoint->files()[0].partition_values, replayed->files()[0].partition_values);
}

// A large state is written in several row groups (the writer does not hold
// the whole checkpoint in memory) and reads back whole.
TEST_F(CheckpointWriterTest, LargeStatesSpanSeveralRowGroupsAndReadBackWhole) {
  Create();
  CommitRequest r;
  r.operation = "WRITE";
  uint64_t x = 42;
  for (int i = 0; i < 12000; ++i) {
    AddFile a = Add("p=x/f" + std::to_string(i) + ".parquet");
    // ~1 KB of stats that snappy cannot shrink much.
    std::string noise;
    for (int j = 0; j < 1000; ++j) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      noise.push_back("0123456789abcdef"[(x >> 59) & 15]);
    }
    a.stats = R"({"numRecords":1,"minValues":{"p":")" + noise + R"("}})";
    r.adds.push_back(std::move(a));
  }
  ASSERT_OK_AND_ASSIGN(SnapshotPtr v0, table_->LatestSnapshot());
  ASSERT_OK(Commit(table_.get(), v0, r).status());
  ASSERT_OK_AND_ASSIGN(SnapshotPtr v1, table_->LatestSnapshot());
  ASSERT_OK_AND_ASSIGN(CheckpointInfo info, WriteCheckpoint(table_.get(), *v1, 1));
  ASSERT_OK_AND_ASSIGN(auto reader, parquet::ParquetFileReader::Open(fs_.get(), info.path));
  EXPECT_GT(reader->num_row_groups(), 1);
  ASSERT_OK_AND_ASSIGN(CommitActions cp, ReadParquetCheckpoint(fs_.get(), info.path));
  ASSERT_EQ(cp.adds.size(), 12000u);
  ASSERT_TRUE(cp.protocol.has_value());
  ASSERT_TRUE(cp.metadata.has_value());
  std::map<std::string, std::string> stats;
  for (const AddFile& a : cp.adds) stats[a.path] = a.stats.value_or("");
  for (const AddFile& a : v1->files()) EXPECT_EQ(stats[a.path], *a.stats) << a.path;
}

TEST_F(CheckpointWriterTest, ExpiredTombstonesAndTxnsAreLeftOut) {
  Create({{"delta.setTransactionRetentionDuration", "interval 1 day"}});
  AppendUntil(6);
  ASSERT_OK_AND_ASSIGN(SnapshotPtr snapshot, table_->LatestSnapshot());
  ASSERT_FALSE(snapshot->tombstones().empty());
  const int64_t now = SystemClock().NowMicros() / 1000;
  ASSERT_OK_AND_ASSIGN(CheckpointInfo fresh, WriteCheckpoint(table_.get(), *snapshot, now));
  ASSERT_OK_AND_ASSIGN(CommitActions a, ReadParquetCheckpoint(fs_.get(), fresh.path));
  EXPECT_EQ(a.removes.size(), snapshot->tombstones().size());
  EXPECT_EQ(a.txns.size(), 1u);
  // Eight days later the tombstones (1 week) and the txn (1 day) expired.
  ASSERT_OK_AND_ASSIGN(CheckpointInfo later,
                       WriteCheckpoint(table_.get(), *snapshot, now + 8 * kDayMs));
  ASSERT_OK_AND_ASSIGN(CommitActions b, ReadParquetCheckpoint(fs_.get(), later.path));
  EXPECT_TRUE(b.removes.empty());
  EXPECT_TRUE(b.txns.empty());
  EXPECT_EQ(b.adds.size(), snapshot->files().size());
  EXPECT_EQ(later.num_actions, 2 + static_cast<int64_t>(snapshot->files().size()));
}

TEST_F(CheckpointWriterTest, LogCleanupKeepsEverythingFromTheNewestExpiredCheckpoint) {
  Create();
  AppendUntil(19);
  const int64_t now = SystemClock().NowMicros() / 1000;
  // Versions 0..14 are 40 days old, the rest are recent.
  for (int64_t v = 0; v <= 14; ++v) {
    fs_->SetTime(Log(CommitFileName(v)), now - 40 * kDayMs + v);
  }
  fs_->SetTime(Log(CheckpointFileName(10)), now - 40 * kDayMs + 10);
  // Aging the files stands for 40 days passing. A handle that already ran
  // cleanup for today's cutoff does not list the log again until the cutoff
  // moves (nothing written since can be older than it): checkpoint 20 by
  // the same handle deletes nothing.
  AppendUntil(20);
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> all, table_->ListVersions());
  EXPECT_EQ(all.front(), 0);
  // A writer started since (the cutoff it sees is new) cleans up at its
  // first checkpoint.
  ASSERT_OK_AND_ASSIGN(table_, DeltaTable::Open(fs_, "/t"));
  AppendUntil(30);  // checkpoint 30, then cleanup
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> versions, table_->ListVersions());
  ASSERT_FALSE(versions.empty());
  EXPECT_EQ(versions.front(), 10);
  EXPECT_EQ(versions.back(), 30);
  ASSERT_OK_AND_ASSIGN(bool has10, fs_->Exists(Log(CheckpointFileName(10))));
  EXPECT_TRUE(has10);

  // Every version from the kept checkpoint on still reads.
  for (int64_t v = 10; v <= 30; ++v) {
    auto snapshot = table_->SnapshotAt(v);
    EXPECT_TRUE(snapshot.ok()) << v << ": " << snapshot.status().ToString();
  }
  auto gone = table_->SnapshotAt(3);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.status().code(), StatusCode::kNotFound);
  EXPECT_NE(gone.status().message().find("version 3 of Delta table /t is no longer available: "
                                         "the log now starts at checkpoint 10"),
            std::string::npos)
      << gone.status().message();

  // Disabled cleanup deletes nothing.
  Metadata off = NewTableMetadata({{"delta.enableExpiredLogCleanup", "false"}});
  ASSERT_OK_AND_ASSIGN(LogCleanupResult none,
                       CleanUpExpiredLogs(fs_.get(), table_->log_path(), off, now + 100 * kDayMs));
  EXPECT_EQ(none.files_deleted, 0);
}

// Cleanup indexes the log only when some commit file is at or before the
// cutoff (decision 179): a log just younger than the cutoff keeps every
// file, and once its commits reach the cutoff (the newest exactly at it)
// the usual cleanup runs.
TEST_F(CheckpointWriterTest, LogCleanupStartsWhenACommitReachesTheCutoff) {
  Create();
  AppendUntil(12);
  const int64_t now = SystemClock().NowMicros() / 1000;
  const Metadata metadata = NewTableMetadata();
  ASSERT_OK_AND_ASSIGN(int64_t retention_ms, LogRetentionMs(metadata.configuration));
  LogCleanupOptions options;
  options.minute_granularity = true;
  const int64_t cutoff = (now - retention_ms) / 60000 * 60000;
  // Versions 0..10 (checkpoint 10 among them) just younger than the
  // cutoff: nothing expires.
  for (int64_t v = 0; v <= 10; ++v) fs_->SetTime(Log(CommitFileName(v)), cutoff + 1 + v);
  for (int64_t v = 11; v <= 12; ++v) fs_->SetTime(Log(CommitFileName(v)), now);
  fs_->SetTime(Log(CheckpointFileName(10)), cutoff + 1);
  ASSERT_OK_AND_ASSIGN(LogCleanupResult none,
                       CleanUpExpiredLogs(fs_.get(), table_->log_path(), metadata, now, options));
  EXPECT_EQ(none.files_deleted, 0);
  // Version 10's commit exactly at the cutoff: everything before checkpoint
  // 10 goes.
  for (int64_t v = 0; v <= 10; ++v) fs_->SetTime(Log(CommitFileName(v)), cutoff - 10 + v);
  ASSERT_OK_AND_ASSIGN(LogCleanupResult some,
                       CleanUpExpiredLogs(fs_.get(), table_->log_path(), metadata, now, options));
  EXPECT_EQ(some.kept_from_checkpoint, 10);
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> versions, table_->ListVersions());
  ASSERT_FALSE(versions.empty());
  EXPECT_EQ(versions.front(), 10);
}

// A pass records the oldest commit file it leaves (decision 180). While a
// new day's cutoff is still before it, the handle's next checkpoint skips
// cleanup without listing the log; once the recorded oldest commit is at or
// before the cutoff, cleanup lists and deletes as usual.
TEST_F(CheckpointWriterTest, LogCleanupSkipsTheListingWhileTheOldestCommitIsYounger) {
  Create();
  AppendUntil(10);  // checkpoint 10, then the day's first cleanup pass
  ASSERT_OK_AND_ASSIGN(std::vector<fs::FileInfo> log, fs_->ListDir(table_->log_path()));
  std::optional<int64_t> oldest;
  for (const fs::FileInfo& entry : log) {
    for (int64_t v = 0; v <= 10; ++v) {
      if (fs::BaseName(entry.path) != CommitFileName(v)) continue;
      if (!oldest || entry.modification_time_ms < *oldest) oldest = entry.modification_time_ms;
    }
  }
  ASSERT_TRUE(oldest.has_value());
  EXPECT_EQ(table_->log_oldest_commit_time_ms(), oldest);

  // A new UTC day (the cutoff the handle last used is not today's): the
  // next checkpoint's cleanup is skipped with no listing of its own.
  table_->set_last_log_cleanup_cutoff_ms(0);
  int64_t before = fs_->listings();
  AppendUntil(20);
  const int64_t skipped = fs_->listings() - before;
  // The same ten commits and checkpoint from a handle that knows nothing of
  // the log's age: one listing more, the cleanup's.
  table_->set_last_log_cleanup_cutoff_ms(0);
  table_->set_log_oldest_commit_time_ms(std::nullopt);
  before = fs_->listings();
  AppendUntil(30);
  EXPECT_EQ(fs_->listings() - before, skipped + 1);
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> all, table_->ListVersions());
  EXPECT_EQ(all.front(), 0);

  // The oldest commit reaches the cutoff (here by aging the files 40 days
  // and telling the handle so): the next checkpoint's cleanup runs.
  const int64_t now = SystemClock().NowMicros() / 1000;
  for (int64_t v = 0; v <= 14; ++v) {
    fs_->SetTime(Log(CommitFileName(v)), now - 40 * kDayMs + v);
  }
  fs_->SetTime(Log(CheckpointFileName(10)), now - 40 * kDayMs + 10);
  table_->set_last_log_cleanup_cutoff_ms(0);
  table_->set_log_oldest_commit_time_ms(now - 40 * kDayMs);
  AppendUntil(40);
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> versions, table_->ListVersions());
  ASSERT_FALSE(versions.empty());
  EXPECT_EQ(versions.front(), 10);
  // What the pass left: commits from 10 on, version 10's the oldest.
  EXPECT_EQ(table_->log_oldest_commit_time_ms(), now - 40 * kDayMs + 10);
}

TEST_F(CheckpointWriterTest, ProtectedCheckpointsGoOnlyWithEverythingBeforeThem) {
  Create();
  AppendUntil(25);
  const int64_t now = SystemClock().NowMicros() / 1000;
  for (int64_t v = 0; v <= 25; ++v) fs_->SetTime(Log(CommitFileName(v)), now - 40 * kDayMs + v);
  fs_->SetTime(Log(CheckpointFileName(10)), now - 40 * kDayMs + 10);
  fs_->SetTime(Log(CheckpointFileName(20)), now - 40 * kDayMs + 20);
  const Metadata metadata = NewTableMetadata();
  // checkpointProtection before version 21: cleanup up to checkpoint 20
  // would leave versions 20 and up before the protected boundary, and silt
  // does not check the protocols it would truncate, so nothing goes.
  LogCleanupOptions options;
  options.protected_before_version = 21;
  ASSERT_OK_AND_ASSIGN(LogCleanupResult none,
                       CleanUpExpiredLogs(fs_.get(), table_->log_path(), metadata, now, options));
  EXPECT_EQ(none.files_deleted, 0);
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> all, table_->ListVersions());
  EXPECT_EQ(all.front(), 0);
  // Before version 15: everything before checkpoint 20 goes at once.
  options.protected_before_version = 15;
  ASSERT_OK_AND_ASSIGN(LogCleanupResult some,
                       CleanUpExpiredLogs(fs_.get(), table_->log_path(), metadata, now, options));
  EXPECT_EQ(some.kept_from_checkpoint, 20);
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> kept, table_->ListVersions());
  EXPECT_EQ(kept.front(), 20);
  ASSERT_OK_AND_ASSIGN(bool has10, fs_->Exists(Log(CheckpointFileName(10))));
  EXPECT_FALSE(has10);
}

TEST_F(CheckpointWriterTest, NoCleanupWithoutAnExpiredCheckpoint) {
  Create();
  AppendUntil(9);
  const int64_t now = SystemClock().NowMicros() / 1000;
  for (int64_t v = 0; v <= 9; ++v) fs_->SetTime(Log(CommitFileName(v)), now - 40 * kDayMs + v);
  AppendUntil(12);  // checkpoint 10 is recent: nothing before it may go
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> versions, table_->ListVersions());
  EXPECT_EQ(versions.front(), 0);
}

// The V2 top-level checkpoint files of version `version` in the log.
std::vector<std::string> V2CheckpointFiles(fs::FileSystem* fs, int64_t version) {
  std::vector<std::string> out;
  const std::string prefix = CheckpointFileName(version).substr(0, 32);
  for (const fs::FileInfo& f : fs->ListDir("/t/_delta_log").ValueOrDie()) {
    std::string name(fs::BaseName(f.path));
    if (name.rfind(prefix, 0) == 0 && name.size() > 5 && name.substr(name.size() - 5) == ".json") {
      out.push_back(f.path);
    }
  }
  return out;
}

std::vector<std::string> Tombstones(const Snapshot& s) {
  std::vector<std::string> out;
  for (const RemoveFile& r : s.tombstones()) out.push_back(r.path);
  return out;
}

TEST_F(CheckpointWriterTest, V2PolicyCreatesTheFeatureAndWritesSidecarCheckpoints) {
  Create({{"delta.checkpointPolicy", "v2"}});
  AppendUntil(25);
  ASSERT_OK_AND_ASSIGN(SnapshotPtr latest, table_->LatestSnapshot());
  EXPECT_EQ(latest->protocol().min_reader_version, 3);
  EXPECT_EQ(latest->protocol().min_writer_version, 7);
  EXPECT_EQ(latest->protocol().reader_features, std::vector<std::string>{"v2Checkpoint"});
  EXPECT_EQ(latest->protocol().writer_features, std::vector<std::string>{"v2Checkpoint"});
  ASSERT_OK_AND_ASSIGN(bool classic10, fs_->Exists(Log(CheckpointFileName(10))));
  EXPECT_FALSE(classic10);
  std::vector<std::string> top20 = V2CheckpointFiles(fs_.get(), 20);
  ASSERT_EQ(top20.size(), 1u);
  ASSERT_EQ(V2CheckpointFiles(fs_.get(), 10).size(), 1u);

  // The top-level file: checkpointMetadata, sidecars, then the non-file
  // actions; every file action is in a sidecar.
  ASSERT_OK_AND_ASSIGN(std::string text, fs_->ReadFile(top20[0]));
  EXPECT_EQ(text.rfind(R"({"checkpointMetadata":{"version":20,"tags":{"sidecarNumActions":)", 0),
            0u)
      << text;
  ASSERT_OK_AND_ASSIGN(CommitActions top, ParseCommit(text, top20[0]));
  EXPECT_TRUE(top.adds.empty());
  EXPECT_TRUE(top.removes.empty());
  ASSERT_TRUE(top.protocol.has_value());
  ASSERT_TRUE(top.metadata.has_value());
  ASSERT_EQ(top.txns.size(), 1u);
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> sidecars, SidecarPaths(top, top20[0]));
  ASSERT_FALSE(sidecars.empty());
  size_t adds = 0;
  size_t removes = 0;
  for (const std::string& sidecar : sidecars) {
    EXPECT_EQ(sidecar.find('/'), std::string::npos) << sidecar;
    ASSERT_OK_AND_ASSIGN(CommitActions part,
                         ReadParquetCheckpoint(fs_.get(), Log("_sidecars/" + sidecar)));
    EXPECT_FALSE(part.protocol.has_value());
    adds += part.adds.size();
    removes += part.removes.size();
  }
  ASSERT_OK_AND_ASSIGN(SnapshotPtr at20, table_->SnapshotAt(20));
  EXPECT_EQ(adds, at20->files().size());
  EXPECT_EQ(removes, at20->tombstones().size());

  ASSERT_OK_AND_ASSIGN(std::string last, fs_->ReadFile(Log("_last_checkpoint")));
  EXPECT_NE(last.find(R"("version":20)"), std::string::npos) << last;
  EXPECT_NE(last.find(R"("v2Checkpoint":{"path":")" + std::string(fs::BaseName(top20[0]))),
            std::string::npos)
      << last;
  EXPECT_NE(last.find(R"("sidecarFiles":[{"path":")"), std::string::npos) << last;
  EXPECT_NE(last.find(R"("nonFileActions":[{"protocol":)"), std::string::npos) << last;

  // A fresh handle reads the state through the sidecars; it equals the
  // state replayed from the commits alone.
  ASSERT_OK_AND_ASSIGN(auto reader, DeltaTable::Open(fs_, "/t"));
  ASSERT_OK_AND_ASSIGN(SnapshotPtr from_checkpoint, reader->SnapshotAt(25));
  for (int64_t v : {10, 20}) {
    for (const std::string& f : V2CheckpointFiles(fs_.get(), v)) ASSERT_OK(fs_->DeleteFile(f));
  }
  ASSERT_OK_AND_ASSIGN(SnapshotPtr replayed, reader->SnapshotAt(25));
  EXPECT_EQ(Paths(*from_checkpoint), Paths(*replayed));
  EXPECT_EQ(Tombstones(*from_checkpoint), Tombstones(*replayed));
  EXPECT_EQ(from_checkpoint->TxnVersion("app"), 25);
}

// Checkpoints through one handle reference the sidecars of the previous one
// whose actions are unchanged, encode only the rest, and stay equal to the
// state replayed from the commits.
TEST_F(CheckpointWriterTest, V2CheckpointsReuseUnchangedSidecars) {
  Create({{"delta.checkpointPolicy", "v2"}, {"delta.checkpointInterval", "1000"}});
  int64_t next_file = 0;
  auto append = [&](int files, std::vector<std::string> remove = {}) {
    ASSERT_OK_AND_ASSIGN(SnapshotPtr snapshot, table_->LatestSnapshot());
    CommitRequest r;
    for (int i = 0; i < files; ++i) r.adds.push_back(Add("p=x/f" + std::to_string(next_file++)));
    for (const std::string& path : remove) {
      RemoveFile rm;
      rm.path = path;
      rm.deletion_timestamp = SystemClock().NowMicros() / 1000;
      r.removes.push_back(rm);
      r.is_blind_append = false;
    }
    ASSERT_OK(Commit(table_.get(), snapshot, r).status());
  };
  auto checkpoint = [&]() -> CheckpointInfo {
    SnapshotPtr snapshot = table_->LatestSnapshot().ValueOrDie();
    Result<CheckpointInfo> info =
        WriteCheckpoint(table_.get(), *snapshot, SystemClock().NowMicros() / 1000);
    EXPECT_OK(info.status());
    // What a reader sees from that checkpoint is the replayed state.
    auto reader = DeltaTable::Open(fs_, "/t").ValueOrDie();
    SnapshotPtr read = reader->SnapshotAt(snapshot->version()).ValueOrDie();
    EXPECT_EQ(Paths(*read), Paths(*snapshot));
    EXPECT_EQ(Tombstones(*read), Tombstones(*snapshot));
    return info.ok() ? *info : CheckpointInfo();
  };

  append(40);
  CheckpointInfo first = checkpoint();
  EXPECT_EQ(first.sidecars_written, 1);
  EXPECT_EQ(first.sidecars_reused, 0);
  EXPECT_EQ(first.file_actions_encoded, 40);

  append(5);  // the 40 stay in their sidecar; 5 new ones are encoded
  CheckpointInfo second = checkpoint();
  EXPECT_EQ(second.sidecars_reused, 1);
  EXPECT_EQ(second.sidecars_written, 1);
  EXPECT_EQ(second.file_actions_encoded, 5);

  append(5);  // the 5 of the last sidecar are merged with the 5 new ones
  CheckpointInfo third = checkpoint();
  EXPECT_EQ(third.sidecars_reused, 1);
  EXPECT_EQ(third.file_actions_encoded, 10);

  CheckpointInfo unchanged = checkpoint();  // nothing changed: nothing encoded
  EXPECT_EQ(unchanged.sidecars_reused, 2);
  EXPECT_EQ(unchanged.sidecars_written, 0);
  EXPECT_EQ(unchanged.file_actions_encoded, 0);

  // Removing one of the first 40 files breaks their sidecar: its 39 live
  // files and the tombstone are encoded again, and the newer sidecar of 10,
  // no larger than those 40, is merged into the new one.
  append(0, {"p=x/f3"});
  CheckpointInfo removed = checkpoint();
  EXPECT_EQ(removed.file_actions_encoded, 39 + 1 + 10);
  EXPECT_EQ(removed.sidecars_reused, 0);
  EXPECT_EQ(removed.sidecars_written, 1);

  // A new handle (a restarted writer) starts over with the whole state.
  ASSERT_OK_AND_ASSIGN(table_, DeltaTable::Open(fs_, "/t"));
  append(1);
  CheckpointInfo restarted = checkpoint();
  EXPECT_EQ(restarted.sidecars_reused, 0);
  EXPECT_EQ(restarted.file_actions_encoded, 49 + 1 + 1);  // live files, the new one, f3's tombstone
}

TEST_F(CheckpointWriterTest, LogCleanupDeletesOnlyUnreferencedOldSidecars) {
  Create({{"delta.checkpointPolicy", "v2"}});
  AppendUntil(19);
  const int64_t now = SystemClock().NowMicros() / 1000;
  for (int64_t v = 0; v <= 14; ++v) {
    fs_->SetTime(Log(CommitFileName(v)), now - 40 * kDayMs + v);
  }
  for (const std::string& f : V2CheckpointFiles(fs_.get(), 10)) {
    fs_->SetTime(f, now - 40 * kDayMs + 10);
  }
  // Every sidecar so far is old; one more is referenced by no checkpoint.
  ASSERT_OK(fs_->WriteFile(Log("_sidecars/orphan.parquet"), "x"));
  for (const fs::FileInfo& f : fs_->ListDir(Log("_sidecars")).ValueOrDie()) {
    fs_->SetTime(f.path, now - 40 * kDayMs);
  }
  ASSERT_OK_AND_ASSIGN(table_, DeltaTable::Open(fs_, "/t"));
  AppendUntil(30);  // checkpoint 30, then cleanup from checkpoint 10 on
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> versions, table_->ListVersions());
  EXPECT_EQ(versions.front(), 10);
  ASSERT_OK_AND_ASSIGN(bool orphan, fs_->Exists(Log("_sidecars/orphan.parquet")));
  EXPECT_FALSE(orphan);
  for (int64_t v = 10; v <= 30; ++v) {
    ASSERT_OK_AND_ASSIGN(auto reader, DeltaTable::Open(fs_, "/t"));
    auto snapshot = reader->SnapshotAt(v);
    EXPECT_TRUE(snapshot.ok()) << v << ": " << snapshot.status().ToString();
  }
}

TEST(CheckpointPolicyTest, ParsesClassicAndV2Only) {
  EXPECT_FALSE(CheckpointPolicyV2({}).ValueOrDie());
  EXPECT_FALSE(CheckpointPolicyV2({{"delta.checkpointPolicy", "classic"}}).ValueOrDie());
  EXPECT_TRUE(CheckpointPolicyV2({{"delta.checkpointPolicy", "V2"}}).ValueOrDie());
  EXPECT_FALSE(CheckpointPolicyV2({{"delta.checkpointPolicy", "v3"}}).ok());
  EXPECT_FALSE(ValidateTableProperties({{"delta.checkpointPolicy", "v3"}}).ok());
  ASSERT_OK_AND_ASSIGN(Protocol both,
                       ProtocolForNewTable({{"delta.checkpointPolicy", "v2"},
                                            {"delta.enableDeletionVectors", "true"}}));
  EXPECT_EQ(both.reader_features, (std::vector<std::string>{"deletionVectors", "v2Checkpoint"}));
}

TEST(LogCleanupTest, TruncateToDay) {
  EXPECT_EQ(TruncateToDayUtc(kDayMs * 3 + 5), kDayMs * 3);
  EXPECT_EQ(TruncateToDayUtc(kDayMs * 3), kDayMs * 3);
}

TEST_F(CheckpointWriterTest, TimeTravelByTimestampUsesMonotonicFileTimes) {
  Create();
  AppendUntil(4);
  // File times: 1000, 2000, 2000 (not after its predecessor: counts as 2001),
  // 5000, 6000.
  const int64_t times[] = {1000, 2000, 2000, 5000, 6000};
  for (int64_t v = 0; v <= 4; ++v) fs_->SetTime(Log(CommitFileName(v)), times[v]);
  auto at = [&](int64_t ts) -> int64_t {
    auto s = table_->SnapshotAtTimestamp(ts);
    EXPECT_TRUE(s.ok()) << ts << ": " << s.status().ToString();
    return s.ok() ? (*s)->version() : -1;
  };
  EXPECT_EQ(at(1000), 0);
  EXPECT_EQ(at(1999), 0);
  EXPECT_EQ(at(2000), 1);
  EXPECT_EQ(at(2001), 2);
  EXPECT_EQ(at(4999), 2);
  EXPECT_EQ(at(6000), 4);
  auto before = table_->SnapshotAtTimestamp(999);
  ASSERT_FALSE(before.ok());
  EXPECT_NE(before.status().message().find("is before the earliest available version 0"),
            std::string::npos)
      << before.status().message();
  auto after = table_->SnapshotAtTimestamp(6001);
  ASSERT_FALSE(after.ok());
  EXPECT_NE(after.status().message().find("is after the latest version 4"), std::string::npos)
      << after.status().message();
}

TEST_F(CheckpointWriterTest, TimeTravelUsesInCommitTimestampsWhenEnabled) {
  for (int64_t v = 0; v <= 3; ++v) {
    CommitActions c;
    c.commit_info_json =
        R"({"timestamp":1,"inCommitTimestamp":)" + std::to_string(10000 * (v + 1)) + "}";
    if (v == 0) {
      c.protocol = Protocol();
      Metadata m = NewTableMetadata({{"delta.enableInCommitTimestamps", "true"}});
      m.id = "id";
      m.schema_string = columnar::SchemaToJson(*m.schema);
      c.metadata = m;
    }
    ASSERT_OK(fs_->WriteFile(Log(CommitFileName(v)), SerializeCommit(c)));
    fs_->SetTime(Log(CommitFileName(v)), 1 + v);  // file times would say otherwise
  }
  ASSERT_OK_AND_ASSIGN(SnapshotPtr at, table_->SnapshotAtTimestamp(25000));
  EXPECT_EQ(at->version(), 1);
  ASSERT_OK_AND_ASSIGN(at, table_->SnapshotAtTimestamp(40000));
  EXPECT_EQ(at->version(), 3);
  EXPECT_FALSE(table_->SnapshotAtTimestamp(9999).ok());
}

TEST_F(CheckpointWriterTest, HistoryIsNewestFirstWithLimit) {
  Create();
  AppendUntil(3);
  ASSERT_OK_AND_ASSIGN(std::vector<HistoryEntry> all, ReadHistory(table_.get()));
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0].version, 3);
  EXPECT_EQ(all[3].version, 0);
  EXPECT_EQ(all[3].operation, "CREATE TABLE");
  EXPECT_EQ(all[0].operation, "WRITE");
  EXPECT_EQ(all[0].read_version, 2);
  ASSERT_TRUE(all[0].commit_info_json.has_value());
  ASSERT_OK_AND_ASSIGN(std::vector<HistoryEntry> two, ReadHistory(table_.get(), 2));
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[1].version, 2);
}

}  // namespace
}  // namespace silt::delta
