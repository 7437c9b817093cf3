// Decision 161: a blind appender's classic checkpoints built from the
// previous one. Each is compared, as a set of actions, with the checkpoint
// WriteCheckpoint writes from the whole state read from the log; the frozen
// row groups are compared byte for byte across checkpoints; and the
// fallbacks (another writer, a remove, a failed checkpoint, a checkpoint
// file that changed, a restart) are taken.
#include "silt/delta/checkpoint_classic_incremental.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "silt/base/clock.h"
#include "silt/delta/checkpoint_reader.h"
#include "silt/delta/protocol.h"
#include "silt/parquet/row_group_copy.h"
#include "silt/testing/fault_injection_fs.h"
#include "silt/testing/gtest_util.h"

namespace silt::delta {
namespace {

using testing::FaultInjectionFileSystem;
using testing::FsOp;

constexpr int kInterval = 4;

Metadata NewTableMetadata() {
  Metadata m;
  m.schema = columnar::DataType::Struct({columnar::Field{"id", columnar::DataType::Long()},
                                         columnar::Field{"p", columnar::DataType::String()}});
  m.partition_columns = {"p"};
  m.configuration = {{"delta.checkpointInterval", std::to_string(kInterval)}};
  return m;
}

AddFile Add(const std::string& path, int64_t n) {
  AddFile a;
  a.path = path;
  a.partition_values = {{"p", n % 3 == 0 ? std::nullopt : std::optional<std::string>("x")}};
  a.size = 100 + n;
  a.modification_time = 1'700'000'000'000 + n;
  a.stats =
      R"({"numRecords":)" + std::to_string(n) + R"(,"minValues":{"id":)" + std::to_string(n) + "}}";
  if (n % 7 == 0) a.tags = {{"INSERTION_TIME", std::to_string(n)}};
  return a;
}

// The log without its checkpoints: a reader of it replays every commit.
class NoCheckpointsFileSystem : public fs::ForwardingFileSystem {
 public:
  using fs::ForwardingFileSystem::ForwardingFileSystem;
  Result<std::vector<fs::FileInfo>> ListDir(const std::string& dir) override {
    SILT_ASSIGN_OR_RETURN(std::vector<fs::FileInfo> entries, target()->ListDir(dir));
    std::erase_if(entries, [](const fs::FileInfo& e) {
      return e.path.find("checkpoint") != std::string::npos;
    });
    return entries;
  }
};

// Everything a checkpoint says, as a set: one text per action.
std::multiset<std::string> ActionSet(const CommitActions& actions) {
  std::multiset<std::string> out;
  for (const AddFile& a : actions.adds) {
    std::string text = "add " + a.path + " " + std::to_string(a.size) + " " +
                       std::to_string(a.modification_time) + " " + std::to_string(a.data_change) +
                       " " + a.stats.value_or("<none>");
    for (const auto& [k, v] : a.partition_values) text += " pv:" + k + "=" + v.value_or("<null>");
    for (const auto& [k, v] : a.tags) text += " tag:" + k + "=" + v;
    out.insert(std::move(text));
  }
  for (const RemoveFile& r : actions.removes) out.insert("remove " + r.path);
  for (const std::string& line : actions.raw_lines) out.insert(line);
  return out;
}

class ClassicIncrementalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs_ = std::make_shared<FaultInjectionFileSystem>(fs::MakeMemoryFileSystem());
    ASSERT_OK_AND_ASSIGN(table_, DeltaTable::Open(fs_, "/t"));
    table_->set_elide_checkpointed_files(true);
    CommitRequest create;
    create.new_metadata = NewTableMetadata();
    ASSERT_OK_AND_ASSIGN(create.new_protocol,
                         ProtocolForNewTable(create.new_metadata->configuration));
    create.operation = "CREATE TABLE";
    ASSERT_OK(CommitAndAdvance(table_.get(), &state_, create).status());
  }

  // One batch of `files` new files with the sink's txn.
  Status Append(int files) {
    CommitRequest r;
    r.operation = "STREAMING UPDATE";
    for (int i = 0; i < files; ++i) {
      r.adds.push_back(Add("p=x/f" + std::to_string(next_) + ".parquet", next_));
      ++next_;
    }
    r.txn = Txn{"q", batch_++, 1};
    return CommitAndAdvance(table_.get(), &state_, r).status();
  }

  std::string CheckpointPath(int64_t version) {
    return "/t/_delta_log/" + CheckpointFileName(version);
  }

  // The checkpoint at `version` holds the same actions as the one
  // WriteCheckpoint writes from the whole state at that version.
  // A reader with only the checkpoint at `last_cp` and the commits after it
  // sees every file and the query's last batch.
  void ExpectReadFromCheckpointAlone(int64_t last_cp) {
    for (int64_t v = 0; v < last_cp; ++v) {
      ASSERT_OK(fs_->DeleteFile("/t/_delta_log/" + CommitFileName(v)));
    }
    auto fresh = DeltaTable::Open(fs_, "/t").ValueOrDie();
    ASSERT_OK_AND_ASSIGN(SnapshotPtr read, fresh->LatestSnapshot());
    EXPECT_EQ(static_cast<int64_t>(read->files().size()), next_);
    EXPECT_EQ(read->TxnVersion("q"), batch_ - 1);
  }

  void ExpectSameAsFull(int64_t version) {
    SCOPED_TRACE("version " + std::to_string(version));
    ASSERT_OK_AND_ASSIGN(CommitActions written,
                         ReadParquetCheckpoint(fs_.get(), CheckpointPath(version)));
    auto reader =
        DeltaTable::Open(std::make_shared<NoCheckpointsFileSystem>(fs_), "/t").ValueOrDie();
    // The whole state replayed from the JSON commits (the log keeps them all).
    ASSERT_OK_AND_ASSIGN(SnapshotPtr whole, reader->SnapshotAt(version));
    auto full_fs = fs::MakeMemoryFileSystem();
    auto full_table = DeltaTable::Open(full_fs, "/full").ValueOrDie();
    ASSERT_OK_AND_ASSIGN(
        CheckpointInfo full_info,
        WriteCheckpoint(full_table.get(), *whole, SystemClock().NowMicros() / 1000));
    ASSERT_OK_AND_ASSIGN(CommitActions full, ReadParquetCheckpoint(full_fs.get(), full_info.path));
    EXPECT_EQ(written.adds.size(), full.adds.size());
    EXPECT_TRUE(ActionSet(written) == ActionSet(full));
    // _last_checkpoint counts them.
    ASSERT_OK_AND_ASSIGN(std::string last, fs_->ReadFile("/t/_delta_log/_last_checkpoint"));
    EXPECT_NE(last.find("\"version\":" + std::to_string(version) + ","), std::string::npos) << last;
    EXPECT_NE(last.find("\"numOfAddFiles\":" + std::to_string(full.adds.size())), std::string::npos)
        << last;
    EXPECT_NE(last.find("\"size\":" + std::to_string(full_info.num_actions) + ","),
              std::string::npos)
        << last;
    ASSERT_OK_AND_ASSIGN(fs::FileInfo info, fs_->GetFileInfo(CheckpointPath(version)));
    EXPECT_NE(last.find("\"sizeInBytes\":" + std::to_string(info.size) + ","), std::string::npos)
        << last;
    EXPECT_NE(last.find("\"checkpointSchema\""), std::string::npos) << last;
  }

  std::shared_ptr<FaultInjectionFileSystem> fs_;
  std::unique_ptr<DeltaTable> table_;
  SnapshotPtr state_;
  int64_t next_ = 0;
  int64_t batch_ = 0;
};

TEST_F(ClassicIncrementalTest, CheckpointsEqualFullOnesAndCopyFrozenPagesByteForByte) {
  // 150 files a batch: the tail (kClassicTailAdds) fills every ~14 batches.
  constexpr int kFiles = 150;
  std::vector<std::string> first_frozen_chunks;
  int frozen_group_changes = 0;
  int64_t most_held = 0;
  for (int b = 0; b < 48; ++b) {
    ASSERT_OK(Append(kFiles));
    ASSERT_NE(state_, nullptr);
    const int64_t version = state_->version();
    EXPECT_EQ(state_->num_files(), next_);
    most_held = std::max<int64_t>(most_held, static_cast<int64_t>(state_->files().size()));
    if (version % kInterval != 0) continue;
    ASSERT_TRUE(state_->files_elided()) << version;
    EXPECT_EQ(state_->elided_since(), version);
    EXPECT_TRUE(state_->files().empty());
    ExpectSameAsFull(version);
    auto plan = table_->classic_checkpoint_plan();
    ASSERT_NE(plan, nullptr);
    EXPECT_EQ(plan->version, version);
    EXPECT_LT(static_cast<int64_t>(plan->tail.size()), kClassicTailAdds);
    EXPECT_EQ(plan->num_frozen_adds + static_cast<int64_t>(plan->tail.size()), next_);
    if (plan->num_frozen_groups > 0) {
      // Every frozen group is merged into one (decision 193: far below
      // kClassicGroupBytes), whose column chunks start with the previous
      // checkpoint's pages, copied: each chunk's earlier bytes unchanged.
      EXPECT_EQ(plan->num_frozen_groups, 1u) << version;
      auto file = fs_->OpenForRead(CheckpointPath(version)).ValueOrDie();
      parquet::FileMetaData meta =
          parquet::ReadFooter(file.get(), file->Size().ValueOrDie(), "cp").ValueOrDie();
      const parquet::RowGroup& g = meta.row_groups[0];
      EXPECT_EQ(g.num_rows, plan->num_frozen_adds);
      std::vector<std::string> chunks;
      for (const auto& c : g.columns) {
        EXPECT_FALSE(c.meta_data->dictionary_page_offset.has_value());
        chunks.push_back(
            file->ReadAt(c.meta_data->data_page_offset, c.meta_data->total_compressed_size)
                .ValueOrDie());
      }
      if (!first_frozen_chunks.empty()) {
        ASSERT_EQ(chunks.size(), first_frozen_chunks.size());
        for (size_t c = 0; c < chunks.size(); ++c) {
          EXPECT_EQ(chunks[c].substr(0, first_frozen_chunks[c].size()), first_frozen_chunks[c])
              << version << " column " << c;
        }
      }
      if (first_frozen_chunks.empty() || chunks[0].size() > first_frozen_chunks[0].size()) {
        ++frozen_group_changes;
      }
      first_frozen_chunks = std::move(chunks);
    }
  }
  EXPECT_FALSE(first_frozen_chunks.empty());
  // The frozen group grew (48 batches of 150 files freeze ~3 groups of
  // kClassicTailAdds).
  EXPECT_GE(frozen_group_changes, 2);
  // The writer held at most the files of the batches since a checkpoint.
  EXPECT_LE(most_held, kFiles * (kInterval - 1));

  ExpectReadFromCheckpointAlone(state_->elided_since());
}

// Decision 193: frozen groups packed greedily into runs of at most the cap;
// packing a result's runs again with groups after them keeps the full runs.
TEST(PackFrozenGroupsTest, PacksGreedilyAndKeepsFullRuns) {
  EXPECT_TRUE(PackFrozenGroups({}, 10).empty());
  EXPECT_EQ(PackFrozenGroups({3}, 10), (std::vector<size_t>{1}));
  EXPECT_EQ(PackFrozenGroups({3, 3, 3, 3, 3}, 10), (std::vector<size_t>{3, 5}));
  EXPECT_EQ(PackFrozenGroups({4, 6, 1}, 10), (std::vector<size_t>{2, 3}));
  // A group over the cap is a run alone.
  EXPECT_EQ(PackFrozenGroups({2, 11, 2}, 10), (std::vector<size_t>{1, 2, 3}));
  // Repacking: the runs' sizes, then new groups.
  std::vector<int64_t> runs;
  for (int step = 0; step < 40; ++step) {
    std::vector<int64_t> input = runs;
    input.push_back(1 + step % 4);
    const std::vector<size_t> ends = PackFrozenGroups(input, 10);
    std::vector<int64_t> packed;
    size_t start = 0;
    for (size_t end : ends) {
      int64_t sum = 0;
      for (size_t i = start; i < end; ++i) sum += input[i];
      EXPECT_LE(sum, 10);
      packed.push_back(sum);
      start = end;
    }
    // Every run but the last is one of the previous runs, unchanged.
    ASSERT_GE(packed.size(), runs.size());
    for (size_t i = 0; i + 1 < runs.size(); ++i) EXPECT_EQ(packed[i], runs[i]) << step;
    runs = packed;
  }
  EXPECT_GE(runs.size(), 8u);
}

// In the background (decision 152): the files of a checkpoint are dropped
// by the first commit after it was written.
TEST_F(ClassicIncrementalTest, BackgroundCheckpointsAreDroppedByTheNextCommit) {
  table_->set_background_checkpoints(true);
  for (int b = 0; b < 40; ++b) {
    ASSERT_OK(Append(60));
    ASSERT_NE(state_, nullptr);
    const int64_t version = state_->version();
    EXPECT_EQ(state_->num_files(), next_);
    if (version > kInterval) {
      // Written in the background after the last due version, and dropped
      // by this commit (the test waits for each) -- or by the commit that
      // made it due, when the checkpoint was written before it returned.
      ASSERT_TRUE(state_->files_elided()) << version;
      const int64_t last_due =
          state_->elided_since() == version ? version : (version - 1) / kInterval * kInterval;
      EXPECT_EQ(state_->elided_since(), last_due) << version;
      EXPECT_EQ(static_cast<int64_t>(state_->files().size()), 60 * (version - last_due));
    }
    table_->WaitForBackgroundCheckpoint();
    if (version % kInterval == 0) ExpectSameAsFull(version);
  }
  auto plan = table_->classic_checkpoint_plan();
  ASSERT_NE(plan, nullptr);
  EXPECT_GT(plan->num_frozen_groups, 0u);
}

// Decision 190: with many files between two checkpoints (byte pacing,
// decision 189, makes that gap grow with the table), the writer's state
// holds fewer than kClassicStageAdds of them; the rest are staged as
// encoded add rows and copied into the next checkpoint.
TEST_F(ClassicIncrementalTest, FilesBetweenCheckpointsAreStagedNotHeld) {
  // 1,000 files a batch, a checkpoint every 4: 3,000 files would be held
  // before each checkpoint.
  constexpr int kFiles = 1'000;
  for (bool background : {false, true}) {
    SCOPED_TRACE(background ? "background" : "inline");
    table_->set_background_checkpoints(background);
    int64_t most_held = 0;
    int64_t most_staged = 0;
    for (int b = 0; b < 4 * kInterval; ++b) {
      ASSERT_OK(Append(kFiles));
      ASSERT_NE(state_, nullptr);
      table_->WaitForBackgroundCheckpoint();
      EXPECT_EQ(state_->num_files(), next_);
      // The writer's state is whole until the first checkpoint.
      if (state_->version() <= kInterval) continue;
      most_held = std::max<int64_t>(most_held, static_cast<int64_t>(state_->files().size()));
      auto plan = table_->classic_checkpoint_plan();
      ASSERT_NE(plan, nullptr);
      most_staged = std::max(most_staged, plan->num_staged_adds);
      if (state_->version() % kInterval == 0) ExpectSameAsFull(state_->version());
    }
    // Staged once the third batch since a checkpoint is in: 2,000 <
    // kClassicStageAdds <= 3,000.
    EXPECT_LE(most_held, 2 * kFiles);
    EXPECT_GE(most_staged, 3 * kFiles);
  }
  ExpectReadFromCheckpointAlone(table_->classic_checkpoint_plan()->version);
}

// A state someone else still holds (the background checkpoint's task, a
// reader) is copied without its files, never emptied under its holder.
TEST_F(ClassicIncrementalTest, ElidingASharedStateLeavesItWhole) {
  for (int b = 0; b < kInterval; ++b) ASSERT_OK(Append(5));
  ASSERT_TRUE(state_->files_elided());
  const int64_t version = state_->version();
  ASSERT_OK_AND_ASSIGN(SnapshotPtr whole, table_->LatestSnapshot());
  ASSERT_EQ(whole->version(), version);
  ASSERT_FALSE(whole->files_elided());
  ASSERT_EQ(static_cast<int64_t>(whole->files().size()), next_);
  SnapshotPtr held = whole;  // a second reference
  SnapshotPtr elided = table_->ElideClassicCheckpointedFiles(whole);
  ASSERT_NE(elided, held);
  EXPECT_TRUE(elided->files_elided());
  EXPECT_EQ(elided->elided_since(), version);
  EXPECT_TRUE(elided->files().empty());
  EXPECT_EQ(elided->num_files(), next_);
  EXPECT_EQ(elided->version(), version);
  EXPECT_EQ(elided->TxnVersion("q"), batch_ - 1);
  EXPECT_EQ(elided->metadata().id, held->metadata().id);
  // The holder's state is untouched.
  EXPECT_FALSE(held->files_elided());
  EXPECT_EQ(static_cast<int64_t>(held->files().size()), next_);
}

TEST_F(ClassicIncrementalTest, FallsBackToTheWholeStateWhenItMust) {
  for (int b = 0; b < 8; ++b) ASSERT_OK(Append(3));  // checkpoints at 4 and 8
  ASSERT_TRUE(state_->files_elided());
  ASSERT_NE(table_->classic_checkpoint_plan(), nullptr);

  // A failed checkpoint: the state is read whole, the next one is whole.
  fs_->FailWhenPathContains(FsOp::kOpenForWrite, ".checkpoint.parquet",
                            Status::IOError("injected"));
  for (int b = 0; b < 4; ++b) ASSERT_OK(Append(3));  // version 12
  EXPECT_EQ(state_, nullptr);
  fs_->ClearFaults();
  ASSERT_OK_AND_ASSIGN(state_, table_->Update(std::move(state_)));
  EXPECT_FALSE(state_->files_elided());
  for (int b = 0; b < 4; ++b) ASSERT_OK(Append(3));  // 16
  ASSERT_NE(state_, nullptr);
  EXPECT_TRUE(state_->files_elided());
  ExpectSameAsFull(16);

  // The previous checkpoint rewritten by someone else (e.g. Spark): Internal,
  // the state is read whole again and the next checkpoint is whole.
  {
    auto other = DeltaTable::Open(fs_, "/t").ValueOrDie();
    SnapshotPtr whole = other->SnapshotAt(16).ValueOrDie();
    ASSERT_OK(WriteCheckpoint(other.get(), *whole, 0).status());
  }
  for (int b = 0; b < 4; ++b) ASSERT_OK(Append(3));  // 20
  EXPECT_EQ(state_, nullptr);
  ASSERT_OK_AND_ASSIGN(state_, table_->Update(std::move(state_)));
  for (int b = 0; b < 4; ++b) ASSERT_OK(Append(3));  // 24
  ASSERT_NE(state_, nullptr);
  EXPECT_TRUE(state_->files_elided());
  ExpectSameAsFull(24);

  // A restarted writer (new handle) starts whole.
  ASSERT_OK_AND_ASSIGN(table_, DeltaTable::Open(fs_, "/t"));
  table_->set_elide_checkpointed_files(true);
  ASSERT_OK_AND_ASSIGN(state_, table_->LatestSnapshot());
  for (int b = 0; b < 4; ++b) ASSERT_OK(Append(3));  // 28
  EXPECT_TRUE(state_->files_elided());
  ExpectSameAsFull(28);

  // Another writer: whole states and WriteCheckpoint from then on.
  {
    auto other = DeltaTable::Open(fs_, "/t").ValueOrDie();
    SnapshotPtr base = other->LatestSnapshot().ValueOrDie();
    CommitRequest r;
    r.operation = "WRITE";
    r.adds = {Add("p=x/other.parquet", 1)};
    ASSERT_OK(Commit(other.get(), base, r).status());
    ++next_;
  }
  ASSERT_OK_AND_ASSIGN(state_, table_->Update(std::move(state_)));
  EXPECT_FALSE(state_->files_elided());
  EXPECT_FALSE(table_->elide_checkpointed_files());
  for (int b = 0; b < 3; ++b) ASSERT_OK(Append(3));  // 32
  EXPECT_FALSE(state_->files_elided());
  EXPECT_EQ(table_->classic_checkpoint_plan(), nullptr);
  ExpectSameAsFull(32);

  // A remove leaves a tombstone: the classic writer's whole checkpoint.
  table_->set_elide_checkpointed_files(true);
  CommitRequest remove;
  remove.operation = "DELETE";
  RemoveFile gone;
  gone.path = "p=x/f0.parquet";
  gone.deletion_timestamp = SystemClock().NowMicros() / 1000;
  remove.removes.push_back(gone);
  remove.is_blind_append = false;
  ASSERT_OK(CommitAndAdvance(table_.get(), &state_, remove).status());
  for (int b = 0; b < 3; ++b) ASSERT_OK(Append(3));  // 36
  ASSERT_NE(state_, nullptr);
  EXPECT_FALSE(state_->files_elided());
  EXPECT_EQ(table_->classic_checkpoint_plan(), nullptr);
  ASSERT_OK_AND_ASSIGN(CommitActions cp, ReadParquetCheckpoint(fs_.get(), CheckpointPath(36)));
  EXPECT_EQ(cp.removes.size(), 1u);
  ExpectSameAsFull(36);
}

}  // namespace
}  // namespace silt::delta
