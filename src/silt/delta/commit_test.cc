#include <gtest/gtest.h>
#include <simdjson.h>

#include <condition_variable>
#include <iterator>
#include <map>
#include <mutex>

#include "silt/base/uuid.h"
#include "silt/columnar/types.h"
#include "silt/delta/clustering.h"
#include "silt/delta/commit_test_util.h"
#include "silt/delta/protocol.h"
#include "silt/delta/row_tracking.h"
#include "silt/delta/table.h"
#include "silt/testing/fault_injection_fs.h"
#include "silt/testing/gtest_util.h"

namespace silt::delta {
namespace {

using test_util::Add;
using test_util::Append;
using test_util::CommitTest;
using test_util::NewTableMetadata;
using testing::FaultTiming;
using testing::FsOp;

// Holds every checkpoint file write (classic checkpoint or its temp) until
// Release(): a checkpoint that takes as long as the test wants.
class HeldCheckpointFileSystem : public fs::ForwardingFileSystem {
 public:
  using fs::ForwardingFileSystem::ForwardingFileSystem;
  Result<std::unique_ptr<fs::WritableFile>> OpenForWrite(const std::string& path) override {
    if (path.find(".checkpoint.") != std::string::npos) {
      std::unique_lock<std::mutex> lock(mu_);
      ++waiting_;
      cv_.notify_all();
      cv_.wait(lock, [this] { return released_; });
    }
    return fs::ForwardingFileSystem::OpenForWrite(path);
  }
  void WaitUntilHeld() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return waiting_ > 0; });
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int waiting_ = 0;
  bool released_ = false;
};

// Decision 152: with background checkpoints, the commit at a checkpoint
// version returns while its checkpoint is still being written; the writer
// keeps committing; a checkpoint due while that one runs waits and is
// written after it (decision 162); the checkpoints written hold the state at
// their version, as one written inline would.
TEST(BackgroundCheckpointTest, CommitsDoNotWaitForTheCheckpointAndItHoldsItsVersion) {
  auto held = std::make_shared<HeldCheckpointFileSystem>(fs::MakeMemoryFileSystem());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<DeltaTable> table, DeltaTable::Open(held, "/t"));
  table->set_background_checkpoints(true);
  CommitRequest create;
  create.new_metadata = NewTableMetadata();
  create.new_metadata->configuration = {{"delta.checkpointInterval", "2"}};
  create.operation = "CREATE TABLE";
  SnapshotPtr state;
  ASSERT_OK(CommitAndAdvance(table.get(), &state, create).status());
  auto append = [&](int64_t batch) {
    return CommitAndAdvance(
        table.get(), &state,
        Append("p=x/f" + std::to_string(batch) + ".parquet", Txn{"query", batch, 1}));
  };
  // Versions 1 and 2: the checkpoint of 2 starts and is held.
  ASSERT_OK(append(0).status());
  ASSERT_OK_AND_ASSIGN(CommitResult at2, append(1));
  EXPECT_EQ(at2.version, 2);
  held->WaitUntilHeld();
  // The writer goes on while it is held: versions 3 and 4 (the checkpoint
  // due at 4 waits, the one of 2 still running).
  ASSERT_OK(append(2).status());
  ASSERT_OK_AND_ASSIGN(CommitResult at4, append(3));
  EXPECT_EQ(at4.version, 4);
  ASSERT_EQ(state->version(), 4);
  EXPECT_EQ(state->files().size(), 4u);
  held->Release();
  table->WaitForBackgroundCheckpoint();
  ASSERT_OK_AND_ASSIGN(bool at2_written,
                       held->Exists("/t/_delta_log/00000000000000000002.checkpoint.parquet"));
  ASSERT_OK_AND_ASSIGN(bool at4_written,
                       held->Exists("/t/_delta_log/00000000000000000004.checkpoint.parquet"));
  EXPECT_TRUE(at2_written);
  EXPECT_TRUE(at4_written);
  // Versions 5 and 6: the checkpoint of 6 is written (the worker is idle);
  // the handle's destructor waits for it.
  ASSERT_OK(append(4).status());
  ASSERT_OK(append(5).status());
  table.reset();
  ASSERT_OK_AND_ASSIGN(bool at6_written,
                       held->Exists("/t/_delta_log/00000000000000000006.checkpoint.parquet"));
  EXPECT_TRUE(at6_written);
  // Each checkpoint alone gives the files of its version: read through a
  // log that has lost every commit before the checkpoint's.
  for (int64_t version : {2, 4, 6}) {
    auto copy = fs::MakeMemoryFileSystem();
    ASSERT_OK_AND_ASSIGN(std::vector<fs::FileInfo> log, held->ListDir("/t/_delta_log"));
    for (const fs::FileInfo& f : log) {
      const std::string name = f.path.substr(f.path.rfind('/') + 1);
      if (name == "_last_checkpoint") continue;
      if (std::stoll(name.substr(0, 20)) < version) continue;
      if (name.find(".checkpoint.") != std::string::npos &&
          std::stoll(name.substr(0, 20)) != version) {
        continue;
      }
      ASSERT_OK_AND_ASSIGN(std::string data, held->ReadFile(f.path));
      ASSERT_OK(copy->WriteFile(f.path, data));
    }
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<DeltaTable> reread, DeltaTable::Open(copy, "/t"));
    ASSERT_OK_AND_ASSIGN(SnapshotPtr at, reread->SnapshotAt(version));
    EXPECT_EQ(at->files().size(), static_cast<size_t>(version)) << "version " << version;
    EXPECT_EQ(at->TxnVersion("query"), version - 1) << "version " << version;
  }
}

// Decision 189: once a background checkpoint is larger than the floor
// (1 MiB), the next due one is written only when the commits since it hold a
// tenth of its bytes: each checkpoint after a large one is at the first due
// version where that holds, so the log's checkpoints stay within ten times
// its commits' bytes.
TEST(BackgroundCheckpointTest, LargeCheckpointsWaitForCommitsWorthATenthOfTheirBytes) {
  auto fs = fs::MakeMemoryFileSystem();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<DeltaTable> table, DeltaTable::Open(fs, "/t"));
  table->set_background_checkpoints(true);
  CommitRequest create;
  create.new_metadata = NewTableMetadata();
  create.new_metadata->configuration = {{"delta.checkpointInterval", "1"}};
  create.operation = "CREATE TABLE";
  SnapshotPtr state;
  ASSERT_OK(CommitAndAdvance(table.get(), &state, create).status());
  constexpr int64_t kVersions = 100;
  for (int64_t batch = 0; batch + 1 < kVersions; ++batch) {
    CommitRequest append = Append("p=x/" + NewUuid() + ".parquet", Txn{"query", batch, 1});
    for (int i = 0; i < 300; ++i) append.adds.push_back(Add("p=x/" + NewUuid() + ".parquet"));
    ASSERT_OK(CommitAndAdvance(table.get(), &state, append).status());
    // Each due checkpoint is written before the next commit (no time
    // pacing), so only the byte rule skips any.
    table->WaitForBackgroundCheckpoint();
  }
  ASSERT_OK_AND_ASSIGN(std::vector<fs::FileInfo> log, fs->ListDir("/t/_delta_log"));
  std::map<int64_t, int64_t> commit_bytes, checkpoint_bytes;
  for (const fs::FileInfo& f : log) {
    const std::string name = f.path.substr(f.path.rfind('/') + 1);
    if (name.ends_with(".json")) commit_bytes[std::stoll(name.substr(0, 20))] = f.size;
    if (name.ends_with(".checkpoint.parquet")) {
      checkpoint_bytes[std::stoll(name.substr(0, 20))] = f.size;
    }
  }
  ASSERT_EQ(commit_bytes.size(), static_cast<size_t>(kVersions));
  int64_t large = 0, skipped = 0;
  for (auto it = checkpoint_bytes.begin(); it != checkpoint_bytes.end(); ++it) {
    const auto [version, bytes] = *it;
    auto next = std::next(it);
    const int64_t last = next == checkpoint_bytes.end() ? kVersions - 1 : next->first;
    int64_t since = 0;
    for (int64_t v = version + 1; v <= last; ++v) {
      since += commit_bytes[v];
      const bool enough = bytes <= (1 << 20) || since * 10 >= bytes;
      if (v < last) {
        EXPECT_FALSE(enough) << "version " << v << " was due and not written after " << version;
      } else if (next != checkpoint_bytes.end()) {
        EXPECT_TRUE(enough) << "version " << v << " written too soon after " << version;
      }
    }
    if (bytes > (1 << 20)) ++large;
    if (next != checkpoint_bytes.end()) skipped += next->first - version - 1;
  }
  // The table grew past the floor and the rule skipped due versions.
  EXPECT_GE(large, 2);
  EXPECT_GT(skipped, 0);
}

// Regression (issue #23, point 1): a commit that is not UTF-8 would make the
// table unreadable for good, so none is ever written.
// A streaming writer's snapshot follows its own commits in memory: after
// each one it is the state at the new version (equal to reading the log),
// the log is neither listed nor re-read for it, and the checkpoints due are
// written from it.
TEST_F(CommitTest, CommitAndAdvanceKeepsTheWritersStateWithoutReadingTheLog) {
  CommitRequest create;
  create.new_metadata = NewTableMetadata();
  create.new_metadata->configuration = {{"delta.checkpointInterval", "5"}};
  create.operation = "CREATE TABLE";
  SnapshotPtr state;  // a new table
  ASSERT_OK_AND_ASSIGN(CommitResult created, CommitAndAdvance(table_.get(), &state, create));
  EXPECT_EQ(created.version, 0);
  ASSERT_NE(state, nullptr);
  EXPECT_EQ(state->version(), 0);
  for (int64_t batch = 0; batch < 12; ++batch) {
    fs_->ResetCounters();
    ASSERT_OK_AND_ASSIGN(CommitResult result,
                         CommitAndAdvance(table_.get(), &state,
                                          Append("p=x/f" + std::to_string(batch) + ".parquet",
                                                 Txn{"query", batch, 1})));
    ASSERT_EQ(result.version, batch + 1);
    ASSERT_FALSE(result.skipped_duplicate);
    ASSERT_NE(state, nullptr);
    ASSERT_EQ(state->version(), batch + 1);
    // One write (the commit), no listing and no read, except at the
    // checkpoint versions (_last_checkpoint, and log cleanup's listing once).
    if (result.version % 5 != 0) {
      EXPECT_EQ(fs_->count(FsOp::kListDir), 0) << "version " << result.version;
      EXPECT_EQ(fs_->count(FsOp::kReadFile), 0) << "version " << result.version;
    }
    ASSERT_OK_AND_ASSIGN(SnapshotPtr read, table_->LatestSnapshot());
    ASSERT_EQ(read->version(), state->version());
    ASSERT_EQ(read->files().size(), state->files().size());
    for (size_t i = 0; i < read->files().size(); ++i) {
      EXPECT_EQ(read->files()[i].path, state->files()[i].path);
      EXPECT_EQ(read->files()[i].stats, state->files()[i].stats);
    }
    EXPECT_EQ(state->TxnVersion("query"), batch);
    EXPECT_EQ(read->timestamp_ms(), state->timestamp_ms());
  }
  // Checkpoints at 5 and 10, written from the in-memory state.
  ASSERT_OK_AND_ASSIGN(bool at5,
                       fs_->Exists("/t/_delta_log/00000000000000000005.checkpoint.parquet"));
  ASSERT_OK_AND_ASSIGN(bool at10,
                       fs_->Exists("/t/_delta_log/00000000000000000010.checkpoint.parquet"));
  EXPECT_TRUE(at5);
  EXPECT_TRUE(at10);

  // Another writer commits in between: the snapshot stays the read state
  // and the commit lands after the other one; Update catches up.
  ASSERT_OK_AND_ASSIGN(SnapshotPtr other_base, table_->LatestSnapshot());
  ASSERT_OK(Commit(table_.get(), other_base, Append("p=x/other.parquet")).status());
  const int64_t before = state->version();
  ASSERT_OK_AND_ASSIGN(
      CommitResult raced,
      CommitAndAdvance(table_.get(), &state, Append("p=x/late.parquet", Txn{"query", 12, 1})));
  EXPECT_EQ(raced.version, before + 2);
  ASSERT_NE(state, nullptr);
  EXPECT_EQ(state->version(), before);
  ASSERT_OK_AND_ASSIGN(state, table_->Update(std::move(state)));
  EXPECT_EQ(state->version(), before + 2);
  EXPECT_EQ(state->files().size(), 14u);

  // A batch already recorded is skipped and the snapshot kept.
  ASSERT_OK_AND_ASSIGN(
      CommitResult dup,
      CommitAndAdvance(table_.get(), &state, Append("p=x/again.parquet", Txn{"query", 12, 1})));
  EXPECT_TRUE(dup.skipped_duplicate);
  ASSERT_NE(state, nullptr);
  EXPECT_EQ(state->version(), before + 2);
}

TEST_F(CommitTest, ActionsThatAreNotUtf8AreRefusedBeforeAnythingIsWritten) {
  SnapshotPtr v0 = Create();
  CommitRequest bad = Append("p=x/a.parquet");
  bad.adds[0].stats = "{\"numRecords\":1,\"minValues\":{\"p\":\"\xFF\"}}";
  Result<CommitResult> result = Commit(table_.get(), v0, bad);
  ASSERT_FALSE(result.ok());
  EXPECT_TRUE(result.status().IsInvalidArgument()) << result.status().ToString();
  EXPECT_NE(result.status().ToString().find("not valid UTF-8"), std::string::npos);
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> versions, table_->ListVersions());
  EXPECT_EQ(versions, std::vector<int64_t>{0});
}

TEST_F(CommitTest, NewTableGetsProtocolAndMetadataAtVersionZero) {
  CommitRequest create = Append("p=x/a.parquet", Txn{"query", 0, std::nullopt});
  create.new_metadata = NewTableMetadata();
  ASSERT_OK_AND_ASSIGN(CommitResult result, Commit(table_.get(), nullptr, create));
  EXPECT_EQ(result.version, 0);
  EXPECT_FALSE(result.skipped_duplicate);

  ASSERT_OK_AND_ASSIGN(CommitActions c, table_->ReadCommit(0));
  ASSERT_TRUE(c.protocol.has_value());
  EXPECT_EQ(c.protocol->min_reader_version, 1);
  EXPECT_EQ(c.protocol->min_writer_version, 2);
  ASSERT_TRUE(c.metadata.has_value());
  EXPECT_TRUE(IsUuid(c.metadata->id)) << c.metadata->id;
  EXPECT_TRUE(c.metadata->created_time.has_value());
  EXPECT_EQ(c.metadata->partition_columns, std::vector<std::string>{"p"});
  ASSERT_NE(c.metadata->schema, nullptr);
  EXPECT_TRUE(c.metadata->schema->Equals(*NewTableMetadata().schema));
  ASSERT_EQ(c.txns.size(), 1u);
  EXPECT_TRUE(c.txns[0].last_updated.has_value());
  ASSERT_EQ(c.adds.size(), 1u);
  // commitInfo first, like delta-spark.
  EXPECT_EQ(c.raw_lines[0].substr(0, 14), R"({"commitInfo":)");

  ASSERT_OK_AND_ASSIGN(SnapshotPtr s, table_->LatestSnapshot());
  EXPECT_EQ(s->version(), 0);
  EXPECT_EQ(s->files().size(), 1u);
  EXPECT_EQ(s->TxnVersion("query"), 0);
}

TEST_F(CommitTest, CommitInfoLooksLikeDeltaSparks) {
  SnapshotPtr v0 = Create();
  ASSERT_NE(v0, nullptr);
  CommitRequest append = Append("p=x/a.parquet");
  append.adds.push_back(Add("p=x/b.parquet", 4));
  ASSERT_OK_AND_ASSIGN(CommitResult result, Commit(table_.get(), v0, append));
  ASSERT_OK_AND_ASSIGN(CommitActions c, table_->ReadCommit(result.version));
  ASSERT_TRUE(c.commit_info_json.has_value());
  simdjson::dom::parser parser;
  simdjson::dom::element info;
  ASSERT_EQ(parser.parse(*c.commit_info_json).get(info), simdjson::SUCCESS);
  int64_t ts = 0;
  EXPECT_EQ(info["timestamp"].get_int64().get(ts), simdjson::SUCCESS);
  EXPECT_GT(ts, 0);
  EXPECT_EQ(info["operation"].get_string().value(), "STREAMING UPDATE");
  EXPECT_EQ(info["operationParameters"]["outputMode"].get_string().value(), "Append");
  EXPECT_EQ(info["readVersion"].get_int64().value(), 0);
  EXPECT_EQ(info["isolationLevel"].get_string().value(), "Serializable");
  EXPECT_TRUE(info["isBlindAppend"].get_bool().value());
  EXPECT_EQ(info["operationMetrics"]["numFiles"].get_string().value(), "2");
  EXPECT_EQ(info["operationMetrics"]["numOutputRows"].get_string().value(), "5");
  EXPECT_EQ(info["operationMetrics"]["numOutputBytes"].get_string().value(), "20");
  EXPECT_EQ(info["engineInfo"].get_string().value().substr(0, 5), "silt/");
  EXPECT_TRUE(IsUuid(std::string(info["txnId"].get_string().value())));

  ASSERT_OK_AND_ASSIGN(CommitActions create, table_->ReadCommit(0));
  ASSERT_EQ(parser.parse(*create.commit_info_json).get(info), simdjson::SUCCESS);
  EXPECT_EQ(info["readVersion"].error(), simdjson::NO_SUCH_FIELD);
}

TEST_F(CommitTest, BlindAppendsRacingForTheSameVersionBothCommit) {
  SnapshotPtr v0 = Create();
  ASSERT_NE(v0, nullptr);
  fs_->ResetCounters();
  // Both writers read version 0; the first takes version 1.
  ASSERT_OK_AND_ASSIGN(CommitResult first, Commit(table_.get(), v0, Append("p=x/a.parquet")));
  EXPECT_EQ(first.version, 1);
  ASSERT_OK_AND_ASSIGN(CommitResult second, Commit(table_.get(), v0, Append("p=x/b.parquet")));
  EXPECT_EQ(second.version, 2);
  EXPECT_FALSE(second.skipped_duplicate);
  // One put-if-absent for the first writer, two (lost, then won) for the second.
  EXPECT_EQ(fs_->count(FsOp::kPutIfAbsent), 3);

  ASSERT_OK_AND_ASSIGN(SnapshotPtr latest, table_->LatestSnapshot());
  EXPECT_EQ(latest->version(), 2);
  EXPECT_EQ(latest->files().size(), 2u);
  ASSERT_OK_AND_ASSIGN(CommitActions c2, table_->ReadCommit(2));
  ASSERT_EQ(c2.adds.size(), 1u);
  EXPECT_EQ(c2.adds[0].path, "p=x/b.parquet");
}

TEST_F(CommitTest, SameAppIdRaceSkipsTheDuplicateBatch) {
  SnapshotPtr v0 = Create();
  ASSERT_NE(v0, nullptr);
  ASSERT_OK_AND_ASSIGN(CommitResult first,
                       Commit(table_.get(), v0, Append("p=x/a.parquet", Txn{"q", 5, {}})));
  EXPECT_EQ(first.version, 1);
  // A second instance of the same query ran batch 5 too: it must not land.
  ASSERT_OK_AND_ASSIGN(CommitResult second,
                       Commit(table_.get(), v0, Append("p=x/b.parquet", Txn{"q", 5, {}})));
  EXPECT_TRUE(second.skipped_duplicate);
  EXPECT_EQ(second.version, 1);
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> versions, table_->ListVersions());
  EXPECT_EQ(versions.size(), 2u);
}

TEST_F(CommitTest, SameAppIdRaceWithANewerBatchIsAConflict) {
  SnapshotPtr v0 = Create();
  ASSERT_NE(v0, nullptr);
  ASSERT_OK(Commit(table_.get(), v0, Append("p=x/a.parquet", Txn{"q", 5, {}})));
  auto second = Commit(table_.get(), v0, Append("p=x/b.parquet", Txn{"q", 6, {}}));
  ASSERT_RAISES(Conflict, second);
  EXPECT_NE(second.status().message().find("'q'"), std::string::npos) << second.status().ToString();
  // A different application id commutes.
  ASSERT_OK_AND_ASSIGN(CommitResult other,
                       Commit(table_.get(), v0, Append("p=x/c.parquet", Txn{"other", 6, {}})));
  EXPECT_EQ(other.version, 2);
}

CommitRequest AppendAt(std::string path, std::vector<CommitRequest::ExpectedTxn> txns) {
  CommitRequest r = Append(std::move(path));
  r.expected_txns = std::move(txns);
  return r;
}

TEST_F(CommitTest, ExpectedTxnsAreWrittenWhenTheTableHoldsWhatTheWriterExpects) {
  SnapshotPtr v0 = Create();
  ASSERT_NE(v0, nullptr);
  ASSERT_OK_AND_ASSIGN(CommitResult first,
                       Commit(table_.get(), v0,
                              AppendAt("p=x/a.parquet", {{Txn{"job:t:0", 10, {}}, std::nullopt},
                                                         {Txn{"job:t:1", 7, {}}, std::nullopt}})));
  EXPECT_EQ(first.version, 1);
  ASSERT_OK_AND_ASSIGN(SnapshotPtr v1, table_->LatestSnapshot());
  EXPECT_EQ(v1->TxnVersion("job:t:0"), 10);
  EXPECT_EQ(v1->TxnVersion("job:t:1"), 7);
  ASSERT_OK_AND_ASSIGN(
      CommitResult second,
      Commit(table_.get(), v1, AppendAt("p=x/b.parquet", {{Txn{"job:t:0", 25, {}}, 10}})));
  EXPECT_EQ(second.version, 2);
  ASSERT_OK_AND_ASSIGN(SnapshotPtr v2, table_->LatestSnapshot());
  EXPECT_EQ(v2->TxnVersion("job:t:0"), 25);
  EXPECT_EQ(v2->TxnVersion("job:t:1"), 7);
}

TEST_F(CommitTest, ExpectedTxnThatTheSnapshotContradictsIsAConflictWithoutWriting) {
  SnapshotPtr v0 = Create();
  ASSERT_NE(v0, nullptr);
  ASSERT_OK(Commit(table_.get(), v0, AppendAt("p=x/a.parquet", {{Txn{"job:t:0", 20, {}}, {}}})));
  ASSERT_OK_AND_ASSIGN(SnapshotPtr v1, table_->LatestSnapshot());
  fs_->ResetCounters();
  // A writer that believes the partition is still at 10 read the old state.
  auto stale = Commit(table_.get(), v1, AppendAt("p=x/b.parquet", {{Txn{"job:t:0", 30, {}}, 10}}));
  ASSERT_RAISES(Conflict, stale);
  EXPECT_NE(stale.status().message().find("records version 20 for txn 'job:t:0'"),
            std::string::npos)
      << stale.status().ToString();
  // And one that expects no txn where there is one.
  ASSERT_RAISES(Conflict,
                Commit(table_.get(), v1, AppendAt("p=x/c.parquet", {{Txn{"job:t:0", 5, {}}, {}}})));
  EXPECT_EQ(fs_->count(FsOp::kPutIfAbsent), 0);
}

TEST_F(CommitTest, WinnerThatAdvancedOurPartitionIsAConflictOthersCommute) {
  SnapshotPtr v0 = Create();
  ASSERT_NE(v0, nullptr);
  ASSERT_OK(Commit(
      table_.get(), v0,
      AppendAt("p=x/a.parquet", {{Txn{"job:t:0", 10, {}}, {}}, {Txn{"job:t:1", 10, {}}, {}}})));
  ASSERT_OK_AND_ASSIGN(SnapshotPtr v1, table_->LatestSnapshot());
  // Three writers read version 1. The first moves partition 0 from 10 to 20.
  ASSERT_OK(Commit(table_.get(), v1, AppendAt("p=x/b.parquet", {{Txn{"job:t:0", 20, {}}, 10}})));
  // The second read partition 0 from 10 too (a worker that lost it without
  // noticing): its rows overlap the winner's, so it must not land.
  auto overlap =
      Commit(table_.get(), v1, AppendAt("p=x/c.parquet", {{Txn{"job:t:0", 15, {}}, 10}}));
  ASSERT_RAISES(Conflict, overlap);
  EXPECT_NE(overlap.status().message().find("version 2 (STREAMING UPDATE)"), std::string::npos)
      << overlap.status().ToString();
  EXPECT_NE(overlap.status().message().find("moved txn 'job:t:0' to version 20"), std::string::npos)
      << overlap.status().ToString();
  // The third wrote partition 1 only: blind appends of other partitions
  // commute, so it lands after the winner.
  ASSERT_OK_AND_ASSIGN(
      CommitResult other,
      Commit(table_.get(), v1, AppendAt("p=x/d.parquet", {{Txn{"job:t:1", 30, {}}, 10}})));
  EXPECT_EQ(other.version, 3);
  ASSERT_OK_AND_ASSIGN(SnapshotPtr latest, table_->LatestSnapshot());
  EXPECT_EQ(latest->TxnVersion("job:t:0"), 20);
  EXPECT_EQ(latest->TxnVersion("job:t:1"), 30);
  EXPECT_EQ(latest->files().size(), 3u);
}

TEST_F(CommitTest, ExpectedTxnOnATableCreatedConcurrentlyIsAConflict) {
  CommitRequest create = AppendAt("p=x/a.parquet", {{Txn{"job:t:0", 10, {}}, {}}});
  create.new_metadata = NewTableMetadata();
  ASSERT_OK(Commit(table_.get(), nullptr, create));
  create.expected_txns = {{Txn{"job:t:0", 12, {}}, {}}};
  ASSERT_RAISES(Conflict, Commit(table_.get(), nullptr, create));
  // Expecting a version on a table that does not exist yet cannot hold.
  ASSERT_OK_AND_ASSIGN(auto other, DeltaTable::Open(fs_, "/u"));
  create.expected_txns = {{Txn{"job:t:0", 12, {}}, 10}};
  ASSERT_RAISES(Conflict, Commit(other.get(), nullptr, create));
}

TEST_F(CommitTest, BatchAlreadyInTheSnapshotIsSkippedWithoutWriting) {
  SnapshotPtr v0 = Create();
  ASSERT_NE(v0, nullptr);
  ASSERT_OK(Commit(table_.get(), v0, Append("p=x/a.parquet", Txn{"q", 3, {}})));
  ASSERT_OK_AND_ASSIGN(SnapshotPtr v1, table_->LatestSnapshot());
  fs_->ResetCounters();
  for (int64_t batch : {3, 2}) {
    ASSERT_OK_AND_ASSIGN(
        CommitResult r, Commit(table_.get(), v1, Append("p=x/again.parquet", Txn{"q", batch, {}})));
    EXPECT_TRUE(r.skipped_duplicate);
    EXPECT_EQ(r.version, 1);
  }
  EXPECT_EQ(fs_->count(FsOp::kPutIfAbsent), 0);
  ASSERT_OK_AND_ASSIGN(CommitResult next,
                       Commit(table_.get(), v1, Append("p=x/b.parquet", Txn{"q", 4, {}})));
  EXPECT_FALSE(next.skipped_duplicate);
  EXPECT_EQ(next.version, 2);
}

TEST_F(CommitTest, ConcurrentMetadataChangeIsAConflict) {
  SnapshotPtr v0 = Create();
  ASSERT_NE(v0, nullptr);
  CommitRequest change;
  change.operation = "SET TBLPROPERTIES";
  change.new_metadata = v0->metadata();
  change.new_metadata->configuration["delta.appendOnly"] = "true";
  change.is_blind_append = false;
  ASSERT_OK(Commit(table_.get(), v0, change));
  auto append = Commit(table_.get(), v0, Append("p=x/a.parquet"));
  ASSERT_RAISES(Conflict, append);
  EXPECT_NE(append.status().message().find("SET TBLPROPERTIES"), std::string::npos)
      << append.status().ToString();
}

TEST_F(CommitTest, ConcurrentTableCreationIsAConflict) {
  CommitRequest create;
  create.new_metadata = NewTableMetadata();
  ASSERT_OK(Commit(table_.get(), nullptr, create));
  auto again = Commit(table_.get(), nullptr, create);
  ASSERT_RAISES(Conflict, again);
  EXPECT_NE(again.status().message().find("created concurrently"), std::string::npos);
}

TEST_F(CommitTest, LostAcknowledgementOfOurOwnCommitIsRecognised) {
  SnapshotPtr v0 = Create();
  ASSERT_NE(v0, nullptr);
  // The commit lands but the caller is told someone else was first.
  fs_->FailNth(FsOp::kPutIfAbsent, 1, Status::AlreadyExists("lost ack"), FaultTiming::kAfterOp);
  ASSERT_OK_AND_ASSIGN(CommitResult r, Commit(table_.get(), v0, Append("p=x/a.parquet")));
  EXPECT_EQ(r.version, 1);
  EXPECT_FALSE(r.skipped_duplicate);
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> versions, table_->ListVersions());
  EXPECT_EQ(versions, (std::vector<int64_t>{0, 1}));
}

TEST_F(CommitTest, StorageErrorsAreReturnedWithContext) {
  SnapshotPtr v0 = Create();
  ASSERT_NE(v0, nullptr);
  fs_->FailNth(FsOp::kPutIfAbsent, 1, Status::IOError("disk on fire"));
  auto r = Commit(table_.get(), v0, Append("p=x/a.parquet"));
  ASSERT_RAISES(IOError, r);
  EXPECT_NE(r.status().message().find("committing version 1"), std::string::npos)
      << r.status().ToString();
}

TEST_F(CommitTest, AppendOnlyTablesRefuseDataRemoval) {
  CommitRequest create;
  create.new_metadata = NewTableMetadata();
  create.new_metadata->configuration["delta.appendOnly"] = "true";
  ASSERT_OK(Commit(table_.get(), nullptr, create));
  ASSERT_OK_AND_ASSIGN(SnapshotPtr v0, table_->LatestSnapshot());
  CommitRequest remove;
  remove.removes.push_back(RemoveFile{"p=x/a.parquet", 1, true, false, {}, std::nullopt});
  remove.is_blind_append = false;
  ASSERT_RAISES(InvalidArgument, Commit(table_.get(), v0, remove));
}

TEST_F(CommitTest, NewTableNeedsASchemaWithItsPartitionColumns) {
  CommitRequest create;
  ASSERT_RAISES(InvalidArgument, Commit(table_.get(), nullptr, create));
  create.new_metadata = NewTableMetadata();
  create.new_metadata->partition_columns = {"missing"};
  auto r = Commit(table_.get(), nullptr, create);
  ASSERT_RAISES(InvalidArgument, r);
  EXPECT_NE(r.status().message().find("'missing'"), std::string::npos);
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> versions, table_->ListVersions());
  EXPECT_TRUE(versions.empty());
}

TEST_F(CommitTest, WritingToATableWithAnUnknownWriterFeatureIsRefused) {
  CommitRequest create;
  create.new_metadata = NewTableMetadata();
  create.new_protocol = Protocol{1, 7, std::nullopt, std::vector<std::string>{"someFutureFeature"}};
  auto r = Commit(table_.get(), nullptr, create);
  ASSERT_RAISES(NotSupported, r);
  EXPECT_NE(r.status().message().find("someFutureFeature"), std::string::npos);
}

}  // namespace
}  // namespace silt::delta

namespace silt::delta {
namespace {

class Delta4CommitTest : public CommitTest {
 protected:
  // A table with in-commit timestamps and row tracking, as delta-spark 4
  // creates it.
  SnapshotPtr CreateWithFeatures() {
    CommitRequest create;
    create.new_metadata = NewTableMetadata();
    create.new_metadata->configuration = {{"delta.enableInCommitTimestamps", "true"},
                                          {"delta.enableRowTracking", "true"},
                                          {"delta.checkpointInterval", "3"}};
    auto protocol = ProtocolForNewTable(create.new_metadata->configuration);
    EXPECT_TRUE(protocol.ok());
    create.new_protocol = *protocol;
    create.operation = "CREATE TABLE";
    EXPECT_TRUE(Commit(table_.get(), nullptr, create).ok());
    auto snapshot = table_->LatestSnapshot();
    EXPECT_TRUE(snapshot.ok()) << snapshot.status().ToString();
    return snapshot.ok() ? *snapshot : nullptr;
  }
};

TEST_F(Delta4CommitTest, NewTableGetsDeltaSparksProtocolAndHiddenColumnNames) {
  SnapshotPtr s = CreateWithFeatures();
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->protocol().min_reader_version, 1);
  EXPECT_EQ(s->protocol().min_writer_version, 7);
  EXPECT_EQ(*s->protocol().writer_features,
            (std::vector<std::string>{"appendOnly", "invariants", "domainMetadata", "rowTracking",
                                      "inCommitTimestamp"}));
  auto names = MaterializedColumns(s->metadata());
  ASSERT_TRUE(names.has_value());
  EXPECT_EQ(names->row_id.rfind("_row-id-col-", 0), 0u);
  EXPECT_EQ(names->row_commit_version.rfind("_row-commit-version-col-", 0), 0u);
  ASSERT_OK_AND_ASSIGN(CommitActions v0, table_->ReadCommit(0));
  EXPECT_EQ(v0.raw_lines[0].rfind(R"({"commitInfo":{"inCommitTimestamp":)", 0), 0u);
}

TEST_F(Delta4CommitTest, AppendsGetFreshRowIdsAndTheHighWaterMark) {
  SnapshotPtr s = CreateWithFeatures();
  CommitRequest r = Append("a");
  r.adds = {Add("a", 3), Add("b", 2)};
  ASSERT_OK_AND_ASSIGN(CommitResult first, Commit(table_.get(), s, r));
  ASSERT_OK_AND_ASSIGN(CommitActions c1, table_->ReadCommit(first.version));
  EXPECT_EQ(c1.adds[0].base_row_id, 0);
  EXPECT_EQ(c1.adds[1].base_row_id, 3);
  EXPECT_EQ(c1.adds[0].default_row_commit_version, 1);
  ASSERT_EQ(c1.domain_metadata.size(), 1u);
  EXPECT_EQ(c1.domain_metadata[0].configuration,
            R"({"rowIdHighWaterMark":4,"domainName":"delta.rowTracking"})");
  ASSERT_OK_AND_ASSIGN(SnapshotPtr s1, table_->LatestSnapshot());
  ASSERT_OK_AND_ASSIGN(int64_t mark, RowIdHighWaterMark(s1->FindDomain("delta.rowTracking")));
  EXPECT_EQ(mark, 4);
  EXPECT_GT(s1->timestamp_ms(), s->timestamp_ms());
}

// A commit that loses the race for its version is rebuilt on top of the
// winner: row ids above the winner's mark, an in-commit timestamp after the
// winner's.
TEST_F(Delta4CommitTest, LostRaceReassignsRowIdsAndTimestamp) {
  SnapshotPtr s = CreateWithFeatures();
  ASSERT_OK(Commit(table_.get(), s, Append("winner")).status());
  ASSERT_OK_AND_ASSIGN(CommitResult late, Commit(table_.get(), s, Append("late")));
  EXPECT_EQ(late.version, 2);
  ASSERT_OK_AND_ASSIGN(CommitActions winner, table_->ReadCommit(1));
  ASSERT_OK_AND_ASSIGN(CommitActions ours, table_->ReadCommit(2));
  EXPECT_EQ(winner.adds[0].base_row_id, 0);
  EXPECT_EQ(ours.adds[0].base_row_id, 1);
  EXPECT_EQ(ours.adds[0].default_row_commit_version, 2);
  EXPECT_GT(*ours.commit_timestamp_ms, *winner.commit_timestamp_ms);
  ASSERT_OK_AND_ASSIGN(SnapshotPtr latest, table_->LatestSnapshot());
  ASSERT_OK_AND_ASSIGN(int64_t mark, RowIdHighWaterMark(latest->FindDomain("delta.rowTracking")));
  EXPECT_EQ(mark, 1);
}

// A clustered table records its columns in the delta.clustering domain as
// delta-spark does, and another writer's change to that domain conflicts.
TEST_F(Delta4CommitTest, ClusteringDomainRoundTripsAndConflicts) {
  CommitRequest create;
  create.new_metadata = NewTableMetadata();
  create.new_metadata->partition_columns.clear();
  ASSERT_OK_AND_ASSIGN(create.new_protocol, ProtocolForNewTable({}, /*clustered=*/true));
  create.domain_metadata = {ClusteringDomain({"id", "p"})};
  ASSERT_OK(Commit(table_.get(), nullptr, create).status());
  ASSERT_OK_AND_ASSIGN(SnapshotPtr s, table_->LatestSnapshot());
  EXPECT_EQ(s->FindDomain("delta.clustering")->configuration,
            R"({"clusteringColumns":[["id"],["p"]],"domainName":"delta.clustering"})");
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> columns, ClusteringColumns(*s));
  EXPECT_EQ(columns, (std::vector<std::string>{"id", "p"}));

  CommitRequest recluster = Append("x");
  recluster.domain_metadata = {ClusteringDomain({"p"})};
  ASSERT_OK(Commit(table_.get(), s, recluster).status());
  auto lost = Commit(table_.get(), s, recluster);
  ASSERT_RAISES(Conflict, lost);
  EXPECT_NE(lost.status().message().find("delta.clustering"), std::string::npos);
}

// Checkpoints carry the domains and the row tracking fields: a snapshot read
// from one equals the one replayed from the commits.
TEST_F(Delta4CommitTest, CheckpointKeepsDomainsAndRowIds) {
  SnapshotPtr s = CreateWithFeatures();
  for (int i = 0; i < 3; ++i) {
    ASSERT_OK(Commit(table_.get(), s, Append("f" + std::to_string(i))).status());
    ASSERT_OK_AND_ASSIGN(s, table_->LatestSnapshot());
  }
  ASSERT_OK_AND_ASSIGN(bool exists,
                       fs_->Exists("/t/_delta_log/00000000000000000003.checkpoint.parquet"));
  ASSERT_TRUE(exists);
  ASSERT_OK(fs_->DeleteFile("/t/_delta_log/00000000000000000001.json"));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<DeltaTable> reopened, DeltaTable::Open(fs_, "/t"));
  ASSERT_OK_AND_ASSIGN(SnapshotPtr from_checkpoint, reopened->LatestSnapshot());
  ASSERT_EQ(from_checkpoint->files().size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(from_checkpoint->files()[i].base_row_id, static_cast<int64_t>(i));
    EXPECT_EQ(from_checkpoint->files()[i].default_row_commit_version, static_cast<int64_t>(i + 1));
  }
  ASSERT_OK_AND_ASSIGN(int64_t mark,
                       RowIdHighWaterMark(from_checkpoint->FindDomain("delta.rowTracking")));
  EXPECT_EQ(mark, 2);
}

}  // namespace
}  // namespace silt::delta
