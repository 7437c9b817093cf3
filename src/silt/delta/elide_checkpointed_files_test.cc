// An appender's state without the files its last V2 checkpoint holds
// (DeltaTable::set_elide_checkpointed_files), and the copy of a state
// another holder keeps (Snapshot::WithFiles). The incremental classic
// checkpoint's eliding is tested in checkpoint_classic_incremental_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "silt/delta/commit_test_util.h"
#include "silt/delta/protocol.h"
#include "silt/delta/table.h"
#include "silt/testing/fault_injection_fs.h"
#include "silt/testing/gtest_util.h"

namespace silt::delta {
namespace {

using test_util::Add;
using test_util::Append;
using test_util::CommitTest;
using test_util::NewTableMetadata;
using testing::FsOp;

// Decision 135: a blind appender with V2 checkpoints keeps, between two
// checkpoints, only the files added since the last one; every state it
// holds counts the same files as the log, and every checkpoint it writes
// holds exactly the table's files (the log read from it agrees). Another
// writer's commit, a remove of its own and a failed checkpoint each make it
// hold the whole state again.
TEST_F(CommitTest, AnAppenderWithV2CheckpointsHoldsOnlyTheFilesSinceTheLastCheckpoint) {
  table_->set_elide_checkpointed_files(true);
  CommitRequest create;
  create.new_metadata = NewTableMetadata();
  create.new_metadata->configuration = {{"delta.checkpointInterval", "4"},
                                        {"delta.checkpointPolicy", "v2"}};
  ASSERT_OK_AND_ASSIGN(create.new_protocol,
                       ProtocolForNewTable(create.new_metadata->configuration));
  create.operation = "CREATE TABLE";
  SnapshotPtr state;
  ASSERT_OK(CommitAndAdvance(table_.get(), &state, create).status());
  int64_t added = 0;
  int64_t most_held = 0;
  auto append = [&](int64_t batch) {
    CommitRequest r = Append("p=x/a" + std::to_string(batch) + ".parquet", Txn{"q", batch, 1});
    r.adds.push_back(Add("p=x/b" + std::to_string(batch) + ".parquet", 2));
    added += 2;
    return CommitAndAdvance(table_.get(), &state, r);
  };
  for (int64_t batch = 0; batch < 64; ++batch) {
    ASSERT_OK_AND_ASSIGN(CommitResult result, append(batch));
    ASSERT_NE(state, nullptr);
    ASSERT_EQ(state->version(), result.version);
    ASSERT_OK_AND_ASSIGN(SnapshotPtr read, table_->LatestSnapshot());
    ASSERT_EQ(read->version(), state->version());
    ASSERT_EQ(static_cast<int64_t>(read->files().size()), added);
    EXPECT_EQ(state->num_files(), added) << "version " << result.version;
    EXPECT_EQ(state->TxnVersion("q"), batch);
    if (result.version >= 4) {
      ASSERT_TRUE(state->files_elided()) << "version " << result.version;
      EXPECT_EQ(state->elided_since(), result.version / 4 * 4);
      // The files since the checkpoint, and they are the log's.
      EXPECT_EQ(static_cast<int64_t>(state->files().size()),
                2 * (result.version - state->elided_since()));
      for (const AddFile& add : state->files()) {
        EXPECT_TRUE(
            std::binary_search(read->files().begin(), read->files().end(), add,
                               [](const AddFile& a, const AddFile& b) { return a.path < b.path; }))
            << add.path;
      }
    }
    most_held = std::max<int64_t>(most_held, static_cast<int64_t>(state->files().size()));
  }
  EXPECT_LE(most_held, 8);
  // A state someone else still holds (a reader, the background checkpoint's
  // task) is copied without its files, never emptied under its holder.
  {
    ASSERT_OK_AND_ASSIGN(SnapshotPtr whole, table_->LatestSnapshot());
    ASSERT_EQ(whole->version(), 64);
    ASSERT_FALSE(whole->files_elided());
    SnapshotPtr held = whole;
    SnapshotPtr elided = table_->ElideCheckpointedFiles(whole);
    ASSERT_NE(elided, held);
    EXPECT_TRUE(elided->files_elided());
    EXPECT_EQ(elided->elided_since(), 64);
    EXPECT_TRUE(elided->files().empty());
    EXPECT_EQ(elided->num_files(), added);
    EXPECT_EQ(elided->TxnVersion("q"), 63);
    EXPECT_EQ(static_cast<int64_t>(held->files().size()), added);
    EXPECT_FALSE(held->files_elided());
  }
  // The last checkpoint (version 64) alone gives the table's files, in few
  // sidecars (the newest ones merge as a binary counter).
  ASSERT_OK_AND_ASSIGN(std::vector<fs::FileInfo> log, fs_->ListDir("/t/_delta_log"));
  std::string top;
  for (const fs::FileInfo& f : log) {
    if (f.path.find("00000000000000000064.checkpoint.") != std::string::npos) top = f.path;
  }
  ASSERT_FALSE(top.empty());
  ASSERT_OK_AND_ASSIGN(std::string text, fs_->ReadFile(top));
  size_t sidecars = 0;
  for (size_t at = text.find("{\"sidecar\""); at != std::string::npos;
       at = text.find("{\"sidecar\"", at + 1)) {
    ++sidecars;
  }
  EXPECT_GE(sidecars, 1u);
  EXPECT_LE(sidecars, 7u);
  EXPECT_NE(text.find("\"numOfAddFiles\":\"128\""), std::string::npos) << text;
  auto fresh = DeltaTable::Open(fs_, "/t");
  ASSERT_OK(fresh.status());
  ASSERT_OK_AND_ASSIGN(SnapshotPtr from_checkpoint, (*fresh)->LatestSnapshot());
  EXPECT_EQ(static_cast<int64_t>(from_checkpoint->files().size()), added);

  // A failed checkpoint: the writer's state is read whole again.
  fs_->FailWhenPathContains(FsOp::kOpenForWrite, "_sidecars", Status::IOError("injected"));
  for (int64_t batch = 64; batch < 68; ++batch) {
    ASSERT_OK(append(batch).status());
  }
  EXPECT_EQ(state, nullptr);  // version 68: the checkpoint failed
  fs_->ClearFaults();
  ASSERT_OK_AND_ASSIGN(state, table_->Update(std::move(state)));
  EXPECT_FALSE(state->files_elided());
  for (int64_t batch = 68; batch < 72; ++batch) ASSERT_OK(append(batch).status());
  ASSERT_NE(state, nullptr);
  EXPECT_TRUE(state->files_elided());
  EXPECT_EQ(state->num_files(), added);

  // Another writer: whole states from then on.
  auto other = DeltaTable::Open(fs_, "/t");
  ASSERT_OK(other.status());
  ASSERT_OK_AND_ASSIGN(SnapshotPtr other_base, (*other)->LatestSnapshot());
  ASSERT_OK(Commit(other->get(), other_base, Append("p=x/other.parquet")).status());
  ++added;
  ASSERT_OK_AND_ASSIGN(state, table_->Update(std::move(state)));
  EXPECT_FALSE(state->files_elided());
  EXPECT_FALSE(table_->elide_checkpointed_files());
  EXPECT_EQ(static_cast<int64_t>(state->files().size()), added);
  for (int64_t batch = 72; batch < 76; ++batch) ASSERT_OK(append(batch).status());
  EXPECT_EQ(state->version(), 77);
  EXPECT_FALSE(state->files_elided());
  EXPECT_EQ(static_cast<int64_t>(state->files().size()), added);

  // Its own remove: applied from the log, not in memory; the tombstone it
  // leaves keeps the state whole (checkpoints carry it, its sidecar would
  // change when it expires).
  table_->set_elide_checkpointed_files(true);
  for (int64_t batch = 76; batch < 79; ++batch) ASSERT_OK(append(batch).status());
  ASSERT_TRUE(state->files_elided());  // after the checkpoint at 80
  CommitRequest remove = Append("p=x/c.parquet", Txn{"q", 79, 1});
  RemoveFile gone;
  gone.path = "p=x/a0.parquet";
  gone.deletion_timestamp = 1;
  remove.removes.push_back(gone);
  remove.is_blind_append = false;
  ASSERT_OK(CommitAndAdvance(table_.get(), &state, remove).status());
  EXPECT_EQ(state, nullptr);
  ASSERT_OK_AND_ASSIGN(state, table_->Update(std::move(state)));
  EXPECT_FALSE(state->files_elided());
  EXPECT_EQ(static_cast<int64_t>(state->files().size()), added);
  for (int64_t batch = 80; batch < 84; ++batch) ASSERT_OK(append(batch).status());
  EXPECT_FALSE(state->files_elided());
  EXPECT_EQ(static_cast<int64_t>(state->files().size()), added);
}

}  // namespace
}  // namespace silt::delta
