#include "silt/testing/fault_injection_fs.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "silt/testing/gtest_util.h"
#include "silt/testing/temp_dir.h"

namespace silt::testing {
namespace {

class FaultInjectionFileSystemTest : public ::testing::Test {
 protected:
  fs::FileSystemPtr memory_ = fs::MakeMemoryFileSystem();
  std::shared_ptr<FaultInjectionFileSystem> fs_ =
      std::make_shared<FaultInjectionFileSystem>(memory_);
};

TEST_F(FaultInjectionFileSystemTest, ForwardsAndCountsEveryOperation) {
  ASSERT_OK(fs_->WriteFile("memory://a", "aa"));
  ASSERT_OK(fs_->PutIfAbsent("memory://b", "bb"));
  ASSERT_OK_AND_ASSIGN(auto writer, fs_->OpenForWrite("memory://c"));
  ASSERT_OK(writer->Append("c"));
  ASSERT_OK(writer->Append("c"));
  ASSERT_OK(writer->Close());
  ASSERT_OK_AND_ASSIGN(std::string read, fs_->ReadFile("memory://a"));
  EXPECT_EQ(read, "aa");
  ASSERT_OK_AND_ASSIGN(auto file, fs_->OpenForRead("memory://c"));
  ASSERT_OK_AND_ASSIGN(read, file->ReadAt(0, 2));
  EXPECT_EQ(read, "cc");
  ASSERT_OK_AND_ASSIGN(auto listing, fs_->ListDir("memory://"));
  EXPECT_EQ(listing.size(), 3u);
  ASSERT_OK(fs_->DeleteFile("memory://a"));
  ASSERT_RAISES(NotFound, fs_->GetFileInfo("memory://a"));

  EXPECT_EQ(fs_->count(FsOp::kWriteFile), 1);
  EXPECT_EQ(fs_->count(FsOp::kPutIfAbsent), 1);
  EXPECT_EQ(fs_->count(FsOp::kOpenForWrite), 1);
  EXPECT_EQ(fs_->count(FsOp::kAppend), 2);
  EXPECT_EQ(fs_->count(FsOp::kClose), 1);
  EXPECT_EQ(fs_->count(FsOp::kReadFile), 1);
  EXPECT_EQ(fs_->count(FsOp::kOpenForRead), 1);
  EXPECT_EQ(fs_->count(FsOp::kReadAt), 1);
  EXPECT_EQ(fs_->count(FsOp::kListDir), 1);
  EXPECT_EQ(fs_->count(FsOp::kDeleteFile), 1);
  EXPECT_EQ(fs_->count(FsOp::kGetFileInfo), 1);
  EXPECT_EQ(fs_->count(FsOp::kAnyRead), 5);
  EXPECT_EQ(fs_->count(FsOp::kAnyWrite), 7);
  EXPECT_EQ(fs_->count(FsOp::kAny), 12);
  EXPECT_EQ(fs_->injected_failures(), 0);
  fs_->ResetCounters();
  EXPECT_EQ(fs_->count(FsOp::kAny), 0);
}

TEST_F(FaultInjectionFileSystemTest, FailNthFailsExactlyThatOperationBeforeItRuns) {
  fs_->FailNth(FsOp::kPutIfAbsent, 2, Status::IOError("disk on fire"));
  ASSERT_OK(fs_->PutIfAbsent("memory://1", "one"));
  Status second = fs_->PutIfAbsent("memory://2", "two");
  EXPECT_EQ(second.ToString(), "IO error: disk on fire");
  ASSERT_OK_AND_ASSIGN(bool exists, fs_->Exists("memory://2"));
  EXPECT_FALSE(exists);
  ASSERT_OK(fs_->PutIfAbsent("memory://2", "two"));
  EXPECT_EQ(fs_->injected_failures(), 1);
}

TEST_F(FaultInjectionFileSystemTest, FailNthOfAnyCountsAllOperationKinds) {
  fs_->FailNth(FsOp::kAny, 3, Status::IOError("third"));
  ASSERT_OK(fs_->WriteFile("memory://x", "x"));
  ASSERT_OK(fs_->ReadFile("memory://x").status());
  ASSERT_RAISES(IOError, fs_->ListDir("memory://"));
  ASSERT_OK(fs_->ListDir("memory://").status());
}

// A lost acknowledgement: the commit landed but the caller saw an error; its
// retry must then find the file already there.
TEST_F(FaultInjectionFileSystemTest, FailNthAfterOpPerformsTheWriteThenFails) {
  fs_->FailNth(FsOp::kPutIfAbsent, 1, Status(StatusCode::kIOError, "timeout", true),
               FaultTiming::kAfterOp);
  Status first = fs_->PutIfAbsent("memory://log/1.json", "commit");
  ASSERT_TRUE(first.IsIOError()) << first.ToString();
  EXPECT_TRUE(first.retryable());
  ASSERT_OK_AND_ASSIGN(std::string read, memory_->ReadFile("memory://log/1.json"));
  EXPECT_EQ(read, "commit");
  ASSERT_RAISES(AlreadyExists, fs_->PutIfAbsent("memory://log/1.json", "commit"));
}

TEST_F(FaultInjectionFileSystemTest, PathFilteredFailuresHitOnlyMatchingWritesUntilCleared) {
  fs_->FailWhenPathContains(FsOp::kAnyWrite, "_delta_log", Status::IOError("log is read-only"));
  ASSERT_RAISES(IOError, fs_->PutIfAbsent("memory://t/_delta_log/0.json", "{}"));
  ASSERT_RAISES(IOError, fs_->WriteFile("memory://t/_delta_log/_last_checkpoint", "{}"));
  ASSERT_RAISES(IOError, fs_->OpenForWrite("memory://t/_delta_log/x"));
  ASSERT_OK(fs_->WriteFile("memory://t/part-0.parquet", "PAR1"));
  ASSERT_OK_AND_ASSIGN(auto listing, fs_->ListDir("memory://t/_delta_log"));  // reads unaffected
  EXPECT_TRUE(listing.empty());
  fs_->ClearFaults();
  ASSERT_OK(fs_->PutIfAbsent("memory://t/_delta_log/0.json", "{}"));
  EXPECT_EQ(fs_->injected_failures(), 3);
}

TEST_F(FaultInjectionFileSystemTest, FailedAppendIsReportedAndWriterStaysUsable) {
  fs_->FailNth(FsOp::kAppend, 2, Status::IOError("short write"));
  ASSERT_OK_AND_ASSIGN(auto writer, fs_->OpenForWrite("memory://data"));
  ASSERT_OK(writer->Append("a"));
  ASSERT_RAISES(IOError, writer->Append("b"));
  ASSERT_OK(writer->Append("c"));
  ASSERT_OK(writer->Close());
  ASSERT_OK_AND_ASSIGN(std::string read, fs_->ReadFile("memory://data"));
  EXPECT_EQ(read, "ac");
}

TEST_F(FaultInjectionFileSystemTest, ReadsThroughOpenedFilesCanFail) {
  ASSERT_OK(memory_->WriteFile("memory://f", "0123"));
  fs_->FailNth(FsOp::kReadAt, 1, Status::IOError("bad sector"));
  ASSERT_OK_AND_ASSIGN(auto file, fs_->OpenForRead("memory://f"));
  ASSERT_RAISES(IOError, file->ReadAt(0, 4));
  ASSERT_OK_AND_ASSIGN(std::string read, file->ReadAt(1, 2));
  EXPECT_EQ(read, "12");
}

// The scenario crash tests rely on: the process dies while writing a Delta
// commit. Nothing may appear at the commit's path (no partial file, no
// debris in the log directory), and the restarted writer's retry succeeds.
TEST(FaultInjectionCrashTest, CrashedCommitLeavesNoTraceAndRetrySucceeds) {
  TempDir dir;
  auto fs = std::make_shared<FaultInjectionFileSystem>(fs::MakeLocalFileSystem());
  std::string log_dir = fs::JoinPath(dir.path(), "table/_delta_log");
  std::string commit = fs::JoinPath(log_dir, "00000000000000000001.json");
  ASSERT_OK(fs->PutIfAbsent(fs::JoinPath(log_dir, "00000000000000000000.json"), "{\"v\":0}"));

  fs->CrashMidWrite("_delta_log/", 1, AfterCrash::kStayDown);
  Status crashed = fs->PutIfAbsent(commit, "{\"commitInfo\":{}}");
  ASSERT_TRUE(crashed.IsIOError()) << crashed.ToString();
  EXPECT_TRUE(fs->is_down());
  ASSERT_RAISES(IOError, fs->ReadFile(commit));  // a dead process does no more I/O

  fs->Restart();
  ASSERT_OK_AND_ASSIGN(bool exists, fs->Exists(commit));
  EXPECT_FALSE(exists);
  size_t raw_entries = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(log_dir)) {
    ++raw_entries;
  }
  EXPECT_EQ(raw_entries, 1u) << "only commit 0 may be in the log directory";

  ASSERT_OK(fs->PutIfAbsent(commit, "{\"commitInfo\":{}}"));
  ASSERT_OK_AND_ASSIGN(std::string read, fs->ReadFile(commit));
  EXPECT_EQ(read, "{\"commitInfo\":{}}");
}

TEST_F(FaultInjectionFileSystemTest, CrashDuringReplaceKeepsOldContents) {
  ASSERT_OK(fs_->WriteFile("memory://_last_checkpoint", "old"));
  fs_->CrashMidWrite("_last_checkpoint");
  ASSERT_RAISES(IOError, fs_->WriteFile("memory://_last_checkpoint", "new"));
  EXPECT_FALSE(fs_->is_down());
  ASSERT_OK_AND_ASSIGN(std::string read, fs_->ReadFile("memory://_last_checkpoint"));
  EXPECT_EQ(read, "old");
}

TEST_F(FaultInjectionFileSystemTest, CrashHitsOnlyTheNthMatchingWrite) {
  fs_->CrashMidWrite("part-", 2);
  ASSERT_OK(fs_->WriteFile("memory://other", "o"));
  ASSERT_OK(fs_->WriteFile("memory://part-1", "1"));
  ASSERT_RAISES(IOError, fs_->WriteFile("memory://part-2", "2"));
  ASSERT_OK(fs_->WriteFile("memory://part-3", "3"));
  ASSERT_OK_AND_ASSIGN(auto listing, fs_->ListDir("memory://"));
  ASSERT_EQ(listing.size(), 3u);
  EXPECT_EQ(listing[0].path, "memory://other");
  EXPECT_EQ(listing[1].path, "memory://part-1");
  EXPECT_EQ(listing[2].path, "memory://part-3");
}

TEST_F(FaultInjectionFileSystemTest, CrashedStreamingWriterPublishesNothing) {
  fs_->CrashMidWrite("data.parquet");
  ASSERT_OK_AND_ASSIGN(auto writer, fs_->OpenForWrite("memory://t/data.parquet"));
  ASSERT_OK(writer->Append("PAR1"));
  ASSERT_OK(writer->Append("...pages..."));
  Status closed = writer->Close();
  ASSERT_TRUE(closed.IsIOError()) << closed.ToString();
  ASSERT_OK_AND_ASSIGN(bool exists, memory_->Exists("memory://t/data.parquet"));
  EXPECT_FALSE(exists);
  // The next writer (after "restart") publishes normally.
  ASSERT_OK_AND_ASSIGN(writer, fs_->OpenForWrite("memory://t/data.parquet"));
  ASSERT_OK(writer->Append("PAR1"));
  ASSERT_OK(writer->Close());
  ASSERT_OK_AND_ASSIGN(std::string read, memory_->ReadFile("memory://t/data.parquet"));
  EXPECT_EQ(read, "PAR1");
}

// Returns which of `attempts` operations failed, as a string of 0/1.
std::string RandomFailurePattern(uint64_t seed, int attempts) {
  auto fs = std::make_shared<FaultInjectionFileSystem>(fs::MakeMemoryFileSystem());
  fs->SetRandomFailures(seed, 0.5, 0.5);
  std::string pattern;
  for (int attempt_idx = 0; attempt_idx < attempts; ++attempt_idx) {
    Status st = fs->WriteFile("memory://f", "x");
    pattern.push_back(st.ok() ? '0' : '1');
  }
  return pattern;
}

TEST_F(FaultInjectionFileSystemTest, RandomFailuresAreRetryableAndReproducibleBySeed) {
  std::string first = RandomFailurePattern(42, 64);
  EXPECT_EQ(first, RandomFailurePattern(42, 64));
  EXPECT_NE(first.find('0'), std::string::npos);
  EXPECT_NE(first.find('1'), std::string::npos);

  fs_->SetRandomFailures(7, 1.0, 0.0);
  Status read = fs_->ListDir("memory://").status();
  ASSERT_TRUE(read.IsIOError()) << read.ToString();
  EXPECT_TRUE(read.retryable());
  ASSERT_OK(fs_->WriteFile("memory://w", "writes unaffected"));
}

TEST_F(FaultInjectionFileSystemTest, RetryLoopGetsThroughRandomFailures) {
  fs_->SetRandomFailures(123, 0.3, 0.3);
  for (int file_idx = 0; file_idx < 20; ++file_idx) {
    std::string path = "memory://retry/" + std::to_string(file_idx);
    Status st;
    int attempts = 0;
    do {
      st = fs_->PutIfAbsent(path, "data");
      ++attempts;
    } while (!st.ok() && st.retryable() && attempts < 100);
    ASSERT_OK(st);
  }
  fs_->ClearFaults();
  ASSERT_OK_AND_ASSIGN(auto listing, fs_->ListRecursive("memory://retry"));
  EXPECT_EQ(listing.size(), 20u);
  EXPECT_GT(fs_->injected_failures(), 0);
}

}  // namespace
}  // namespace silt::testing
