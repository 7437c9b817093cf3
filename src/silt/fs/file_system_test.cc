// One conformance suite run over every FileSystem implementation built in:
// the same contract (visibility, error codes, listing order, put-if-absent)
// must hold on local disk, in memory and on S3. The S3 runs need a server:
// SILT_TEST_S3_ENDPOINT and SILT_TEST_S3_BUCKET name one (plus
// AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY); tests/integration/test_s3.py
// starts MinIO and runs them. Without those they are skipped.

#include "silt/fs/file_system.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <latch>
#include <thread>

#include "silt/base/clock.h"
#include "silt/base/uuid.h"
#include "silt/fs/s3_file_system.h"
#include "silt/testing/gtest_util.h"
#include "silt/testing/temp_dir.h"

namespace silt::fs {
namespace {

struct LocalEnv {
  static constexpr const char* kName = "Local";
  silt::testing::TempDir dir;
  FileSystemPtr fs = MakeLocalFileSystem();
  std::string root() const { return dir.path(); }
};

struct MemoryEnv {
  static constexpr const char* kName = "Memory";
  FileSystemPtr fs = MakeMemoryFileSystem();
  std::string root() const { return "memory://conformance"; }
};

struct S3Env {
  static constexpr const char* kName = "S3";
  static std::string EnvOr(const char* name, const char* fallback = "") {
    const char* value = std::getenv(name);
    return value != nullptr ? value : fallback;
  }
  S3Env() {
    bucket = EnvOr("SILT_TEST_S3_BUCKET");
    S3Options options;
    options.endpoint = EnvOr("SILT_TEST_S3_ENDPOINT");
    options.access_key = EnvOr("AWS_ACCESS_KEY_ID");
    options.secret_key = EnvOr("AWS_SECRET_ACCESS_KEY");
    options.region = EnvOr("AWS_REGION", "us-east-1");
    if (options.endpoint.empty() || bucket.empty()) return;
    Result<FileSystemPtr> made = MakeS3FileSystem(options);
    if (made.ok()) fs = *made;
  }
  ~S3Env() {
    if (fs != nullptr) fs->DeleteDirRecursive(root()).IgnoreError("test cleanup");
  }
  std::string root() const { return "s3://" + bucket + "/typed-conformance-" + id; }
  std::string bucket;
  std::string id = NewUuid();
  FileSystemPtr fs;
};

template <typename Env>
class FileSystemConformanceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (env_.fs == nullptr) GTEST_SKIP() << "SILT_TEST_S3_ENDPOINT / SILT_TEST_S3_BUCKET not set";
  }
  bool is_s3() const { return std::string_view(Env::kName) == "S3"; }
  FileSystem& fs() { return *env_.fs; }
  std::string Path(std::string_view relative) const { return JoinPath(env_.root(), relative); }

  std::vector<std::string> ListedPaths(const Result<std::vector<FileInfo>>& listing) {
    std::vector<std::string> paths;
    if (!listing.ok()) return {"<error: " + listing.status().ToString() + ">"};
    for (const FileInfo& info : *listing) paths.push_back(info.path);
    return paths;
  }

  Env env_;
};

struct EnvName {
  template <typename Env>
  static std::string GetName(int) {
    return Env::kName;
  }
};

using Implementations = ::testing::Types<LocalEnv, MemoryEnv, S3Env>;
TYPED_TEST_SUITE(FileSystemConformanceTest, Implementations, EnvName);

TYPED_TEST(FileSystemConformanceTest, WriteFileThenReadFileReturnsSameBytes) {
  std::string data("binary\0bytes\xff\n", 14);
  ASSERT_OK(this->fs().WriteFile(this->Path("a.bin"), data));
  ASSERT_OK_AND_ASSIGN(std::string read, this->fs().ReadFile(this->Path("a.bin")));
  EXPECT_EQ(read, data);
}

TYPED_TEST(FileSystemConformanceTest, EmptyFileRoundTrips) {
  ASSERT_OK(this->fs().WriteFile(this->Path("empty"), ""));
  ASSERT_OK_AND_ASSIGN(std::string read, this->fs().ReadFile(this->Path("empty")));
  EXPECT_EQ(read, "");
  ASSERT_OK_AND_ASSIGN(FileInfo info, this->fs().GetFileInfo(this->Path("empty")));
  EXPECT_EQ(info.size, 0);
  EXPECT_FALSE(info.is_dir);
}

TYPED_TEST(FileSystemConformanceTest, WriteFileReplacesExistingContents) {
  ASSERT_OK(this->fs().WriteFile(this->Path("f"), "first version, longer"));
  ASSERT_OK(this->fs().WriteFile(this->Path("f"), "second"));
  ASSERT_OK_AND_ASSIGN(std::string read, this->fs().ReadFile(this->Path("f")));
  EXPECT_EQ(read, "second");
}

TYPED_TEST(FileSystemConformanceTest, WritesCreateParentDirectories) {
  std::string path = this->Path("table/_delta_log/00000000000000000000.json");
  ASSERT_OK(this->fs().WriteFile(path, "{}"));
  ASSERT_OK(this->fs().PutIfAbsent(this->Path("x/y/z/put"), "p"));
  ASSERT_OK_AND_ASSIGN(auto writer, this->fs().OpenForWrite(this->Path("p/q/data.parquet")));
  ASSERT_OK(writer->Append("PAR1"));
  ASSERT_OK(writer->Close());
  ASSERT_OK_AND_ASSIGN(std::string read, this->fs().ReadFile(path));
  EXPECT_EQ(read, "{}");
  ASSERT_OK_AND_ASSIGN(bool exists, this->fs().Exists(this->Path("x/y/z/put")));
  EXPECT_TRUE(exists);
  ASSERT_OK_AND_ASSIGN(read, this->fs().ReadFile(this->Path("p/q/data.parquet")));
  EXPECT_EQ(read, "PAR1");
}

TYPED_TEST(FileSystemConformanceTest, RangedReadsReturnRequestedBytesAndFewerAtEnd) {
  ASSERT_OK(this->fs().WriteFile(this->Path("r"), "0123456789"));
  ASSERT_OK_AND_ASSIGN(auto file, this->fs().OpenForRead(this->Path("r")));
  ASSERT_OK_AND_ASSIGN(int64_t size, file->Size());
  EXPECT_EQ(size, 10);
  ASSERT_OK_AND_ASSIGN(std::string middle, file->ReadAt(3, 4));
  EXPECT_EQ(middle, "3456");
  ASSERT_OK_AND_ASSIGN(std::string tail, file->ReadAt(7, 100));
  EXPECT_EQ(tail, "789");
  ASSERT_OK_AND_ASSIGN(std::string past_end, file->ReadAt(10, 5));
  EXPECT_EQ(past_end, "");
  ASSERT_OK_AND_ASSIGN(std::string huge, file->ReadAt(0, INT64_MAX));
  EXPECT_EQ(huge, "0123456789");
  ASSERT_RAISES(InvalidArgument, file->ReadAt(-1, 2));
  ASSERT_RAISES(InvalidArgument, file->ReadAt(0, -2));
}

TYPED_TEST(FileSystemConformanceTest, OpenReaderKeepsContentsItOpenedAcrossReplace) {
  ASSERT_OK(this->fs().WriteFile(this->Path("v"), "old!"));
  ASSERT_OK_AND_ASSIGN(auto file, this->fs().OpenForRead(this->Path("v")));
  ASSERT_OK(this->fs().WriteFile(this->Path("v"), "new contents"));
  ASSERT_OK_AND_ASSIGN(std::string read, file->ReadAt(0, 100));
  EXPECT_EQ(read, "old!");
}

TYPED_TEST(FileSystemConformanceTest, MissingPathsReportNotFoundNamingThePath) {
  std::string missing = this->Path("no/such/file");
  ASSERT_RAISES(NotFound, this->fs().OpenForRead(missing));
  ASSERT_RAISES(NotFound, this->fs().ReadFile(missing));
  ASSERT_RAISES(NotFound, this->fs().GetFileInfo(missing));
  ASSERT_RAISES(NotFound, this->fs().DeleteFile(missing));
  Status st = this->fs().ReadFile(missing).status();
  EXPECT_NE(st.message().find(missing), std::string::npos) << st.ToString();
  ASSERT_OK_AND_ASSIGN(bool exists, this->fs().Exists(missing));
  EXPECT_FALSE(exists);
}

TYPED_TEST(FileSystemConformanceTest, GetFileInfoReportsSizeTimeAndDirectories) {
  int64_t before_ms = SystemClock().NowMicros() / 1000;
  ASSERT_OK(this->fs().WriteFile(this->Path("d/file"), "12345"));
  int64_t after_ms = SystemClock().NowMicros() / 1000;
  ASSERT_OK_AND_ASSIGN(FileInfo file, this->fs().GetFileInfo(this->Path("d/file")));
  EXPECT_EQ(file.path, this->Path("d/file"));
  EXPECT_EQ(file.size, 5);
  EXPECT_FALSE(file.is_dir);
  // File system timestamps may be coarser than the clock; allow two seconds.
  EXPECT_GE(file.modification_time_ms, before_ms - 2000);
  EXPECT_LE(file.modification_time_ms, after_ms + 2000);
  ASSERT_OK_AND_ASSIGN(FileInfo dir, this->fs().GetFileInfo(this->Path("d")));
  EXPECT_TRUE(dir.is_dir);
  ASSERT_OK_AND_ASSIGN(bool exists, this->fs().Exists(this->Path("d")));
  EXPECT_TRUE(exists);
}

TYPED_TEST(FileSystemConformanceTest, ListDirReturnsDirectChildrenSortedByPath) {
  ASSERT_OK(this->fs().WriteFile(this->Path("t/b"), "bb"));
  ASSERT_OK(this->fs().WriteFile(this->Path("t/a.b"), "a"));
  ASSERT_OK(this->fs().WriteFile(this->Path("t/a/deep/x"), "x"));
  ASSERT_OK(this->fs().WriteFile(this->Path("t/a/y"), "y"));
  ASSERT_OK(this->fs().WriteFile(this->Path("t/_delta_log/0.json"), "{}"));
  ASSERT_OK(this->fs().WriteFile(this->Path("tt/not-a-child"), "no"));
  ASSERT_OK_AND_ASSIGN(std::vector<FileInfo> listing, this->fs().ListDir(this->Path("t")));
  EXPECT_EQ(this->ListedPaths(listing),
            (std::vector<std::string>{this->Path("t/_delta_log"), this->Path("t/a"),
                                      this->Path("t/a.b"), this->Path("t/b")}));
  ASSERT_EQ(listing.size(), 4u);
  EXPECT_TRUE(listing[0].is_dir);
  EXPECT_TRUE(listing[1].is_dir);
  EXPECT_FALSE(listing[2].is_dir);
  EXPECT_EQ(listing[3].size, 2);
  // A trailing slash on the directory lists the same entries.
  EXPECT_EQ(this->ListedPaths(this->fs().ListDir(this->Path("t") + "/")),
            this->ListedPaths(listing));
}

TYPED_TEST(FileSystemConformanceTest, ListDirOfMissingDirectoryIsEmpty) {
  ASSERT_OK_AND_ASSIGN(std::vector<FileInfo> listing, this->fs().ListDir(this->Path("nothing")));
  EXPECT_TRUE(listing.empty());
  ASSERT_OK_AND_ASSIGN(listing, this->fs().ListRecursive(this->Path("nothing")));
  EXPECT_TRUE(listing.empty());
}

TYPED_TEST(FileSystemConformanceTest, ListDirOfAFileIsEmpty) {
  ASSERT_OK(this->fs().WriteFile(this->Path("plain"), "p"));
  ASSERT_OK_AND_ASSIGN(std::vector<FileInfo> listing, this->fs().ListDir(this->Path("plain")));
  EXPECT_TRUE(listing.empty());
}

TYPED_TEST(FileSystemConformanceTest, ListRecursiveReturnsAllFilesSortedWithoutDirectories) {
  ASSERT_OK(this->fs().WriteFile(this->Path("t/b"), "b"));
  ASSERT_OK(this->fs().WriteFile(this->Path("t/a/deep/x"), "x"));
  ASSERT_OK(this->fs().WriteFile(this->Path("t/a/y"), "y"));
  ASSERT_OK(this->fs().WriteFile(this->Path("t/a.b"), "a"));
  ASSERT_OK(this->fs().WriteFile(this->Path("other"), "o"));
  ASSERT_OK_AND_ASSIGN(std::vector<FileInfo> listing, this->fs().ListRecursive(this->Path("t")));
  EXPECT_EQ(this->ListedPaths(listing),
            (std::vector<std::string>{this->Path("t/a.b"), this->Path("t/a/deep/x"),
                                      this->Path("t/a/y"), this->Path("t/b")}));
  for (const FileInfo& info : listing) EXPECT_FALSE(info.is_dir) << info.path;
}

TYPED_TEST(FileSystemConformanceTest, DeleteFileRemovesOnlyThatFile) {
  ASSERT_OK(this->fs().WriteFile(this->Path("d/one"), "1"));
  ASSERT_OK(this->fs().WriteFile(this->Path("d/two"), "2"));
  ASSERT_OK(this->fs().DeleteFile(this->Path("d/one")));
  ASSERT_RAISES(NotFound, this->fs().ReadFile(this->Path("d/one")));
  EXPECT_EQ(this->ListedPaths(this->fs().ListDir(this->Path("d"))),
            std::vector<std::string>{this->Path("d/two")});
  ASSERT_RAISES(NotFound, this->fs().DeleteFile(this->Path("d/one")));
}

TYPED_TEST(FileSystemConformanceTest, DeleteFilesRemovesThoseFilesAndToleratesMissing) {
  std::vector<std::string> doomed;
  for (int i = 0; i < 5; ++i) {
    std::string path = this->Path("many/f" + std::to_string(i));
    ASSERT_OK(this->fs().WriteFile(path, "x"));
    if (i != 2) doomed.push_back(path);
  }
  doomed.push_back(this->Path("many/never-existed"));
  ASSERT_OK(this->fs().DeleteFiles(doomed));
  EXPECT_EQ(this->ListedPaths(this->fs().ListDir(this->Path("many"))),
            std::vector<std::string>{this->Path("many/f2")});
  ASSERT_OK(this->fs().DeleteFiles(doomed));
}

TYPED_TEST(FileSystemConformanceTest, DeleteDirRecursiveRemovesTreeAndToleratesMissing) {
  ASSERT_OK(this->fs().CreateDir(this->Path("tree/empty")));
  ASSERT_OK(this->fs().WriteFile(this->Path("tree/a/b/c"), "c"));
  ASSERT_OK(this->fs().WriteFile(this->Path("tree/top"), "t"));
  ASSERT_OK(this->fs().WriteFile(this->Path("tree2/keep"), "k"));
  ASSERT_OK(this->fs().DeleteDirRecursive(this->Path("tree")));
  ASSERT_OK_AND_ASSIGN(bool exists, this->fs().Exists(this->Path("tree")));
  EXPECT_FALSE(exists);
  ASSERT_OK_AND_ASSIGN(std::vector<FileInfo> listing, this->fs().ListRecursive(this->env_.root()));
  EXPECT_EQ(this->ListedPaths(listing), std::vector<std::string>{this->Path("tree2/keep")});
  ASSERT_OK(this->fs().DeleteDirRecursive(this->Path("tree")));
}

TYPED_TEST(FileSystemConformanceTest, PutIfAbsentCreatesOnceThenReportsAlreadyExists) {
  std::string path = this->Path("_delta_log/00000000000000000001.json");
  ASSERT_OK(this->fs().PutIfAbsent(path, "winner"));
  Status second = this->fs().PutIfAbsent(path, "loser");
  ASSERT_EQ(second.code(), StatusCode::kAlreadyExists) << second.ToString();
  EXPECT_NE(second.message().find(path), std::string::npos) << second.ToString();
  ASSERT_OK_AND_ASSIGN(std::string read, this->fs().ReadFile(path));
  EXPECT_EQ(read, "winner");
  ASSERT_OK_AND_ASSIGN(std::vector<FileInfo> listing,
                       this->fs().ListDir(std::string(DirName(path))));
  EXPECT_EQ(this->ListedPaths(listing), std::vector<std::string>{path});
}

TYPED_TEST(FileSystemConformanceTest, PutIfAbsentOverExistingWriteFileReportsAlreadyExists) {
  ASSERT_OK(this->fs().WriteFile(this->Path("w"), "written"));
  ASSERT_RAISES(AlreadyExists, this->fs().PutIfAbsent(this->Path("w"), "put"));
  ASSERT_OK_AND_ASSIGN(std::string read, this->fs().ReadFile(this->Path("w")));
  EXPECT_EQ(read, "written");
}

TYPED_TEST(FileSystemConformanceTest, WriterContentsBecomeVisibleOnlyOnClose) {
  std::string path = this->Path("part-00000.parquet");
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<WritableFile> writer, this->fs().OpenForWrite(path));
  ASSERT_OK(writer->Append("hello "));
  ASSERT_OK(writer->Append(std::string(200000, 'x')));  // larger than any write buffer
  ASSERT_OK(writer->Append("world"));
  EXPECT_EQ(writer->bytes_written(), 6 + 200000 + 5);
  ASSERT_OK_AND_ASSIGN(bool exists, this->fs().Exists(path));
  EXPECT_FALSE(exists);
  ASSERT_OK_AND_ASSIGN(std::vector<FileInfo> listing, this->fs().ListDir(this->env_.root()));
  EXPECT_TRUE(listing.empty()) << listing.front().path;
  ASSERT_OK(writer->Close());
  ASSERT_OK_AND_ASSIGN(std::string read, this->fs().ReadFile(path));
  EXPECT_EQ(read, "hello " + std::string(200000, 'x') + "world");
  ASSERT_RAISES(InvalidArgument, writer->Append("more"));
}

TYPED_TEST(FileSystemConformanceTest, WriterReplacesExistingFileOnClose) {
  std::string path = this->Path("f");
  ASSERT_OK(this->fs().WriteFile(path, "old"));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<WritableFile> writer, this->fs().OpenForWrite(path));
  ASSERT_OK(writer->Append("new"));
  ASSERT_OK_AND_ASSIGN(std::string read, this->fs().ReadFile(path));
  EXPECT_EQ(read, "old");
  ASSERT_OK(writer->Close());
  ASSERT_OK_AND_ASSIGN(read, this->fs().ReadFile(path));
  EXPECT_EQ(read, "new");
}

TYPED_TEST(FileSystemConformanceTest, AbortedOrDroppedWriterLeavesNothing) {
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<WritableFile> writer,
                         this->fs().OpenForWrite(this->Path("dir/aborted")));
    ASSERT_OK(writer->Append("data"));
    ASSERT_OK(writer->Abort());
    ASSERT_OK(writer->Abort());
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<WritableFile> dropped,
                         this->fs().OpenForWrite(this->Path("dir/dropped")));
    ASSERT_OK(dropped->Append("data"));
  }
  ASSERT_OK_AND_ASSIGN(bool exists, this->fs().Exists(this->Path("dir/aborted")));
  EXPECT_FALSE(exists);
  ASSERT_OK_AND_ASSIGN(exists, this->fs().Exists(this->Path("dir/dropped")));
  EXPECT_FALSE(exists);
  ASSERT_OK_AND_ASSIGN(std::vector<FileInfo> listing, this->fs().ListRecursive(this->env_.root()));
  EXPECT_TRUE(listing.empty()) << listing.front().path;
}

TYPED_TEST(FileSystemConformanceTest, ConcurrentPutIfAbsentHasExactlyOneWinner) {
  constexpr int kThreads = 8;
  constexpr int kRounds = 25;
  for (int round = 0; round < kRounds; ++round) {
    std::string path = this->Path("_delta_log/" + std::to_string(round) + ".json");
    std::vector<Status> results(kThreads);
    std::latch start(kThreads);
    std::vector<std::thread> threads;
    for (int thread_idx = 0; thread_idx < kThreads; ++thread_idx) {
      threads.emplace_back([&, thread_idx] {
        start.arrive_and_wait();
        results[thread_idx] = this->fs().PutIfAbsent(path, "writer " + std::to_string(thread_idx));
      });
    }
    for (std::thread& thread : threads) thread.join();
    int winner = -1;
    for (int thread_idx = 0; thread_idx < kThreads; ++thread_idx) {
      if (results[thread_idx].ok()) {
        EXPECT_EQ(winner, -1) << "two winners in round " << round;
        winner = thread_idx;
      } else {
        EXPECT_TRUE(results[thread_idx].IsAlreadyExists()) << results[thread_idx].ToString();
      }
    }
    ASSERT_NE(winner, -1) << "no winner in round " << round;
    ASSERT_OK_AND_ASSIGN(std::string read, this->fs().ReadFile(path));
    EXPECT_EQ(read, "writer " + std::to_string(winner));
  }
  ASSERT_OK_AND_ASSIGN(std::vector<FileInfo> listing, this->fs().ListDir(this->Path("_delta_log")));
  EXPECT_EQ(listing.size(), static_cast<size_t>(kRounds));
}

TYPED_TEST(FileSystemConformanceTest, ReadingADirectoryFails) {
  if (this->is_s3()) {
    GTEST_SKIP() << "S3 has no directories: reading a key prefix is NotFound, not an error";
  }
  ASSERT_OK(this->fs().WriteFile(this->Path("d/f"), "f"));
  Status st = this->fs().ReadFile(this->Path("d")).status();
  EXPECT_FALSE(st.ok());
  EXPECT_FALSE(st.IsNotFound()) << st.ToString();
}

}  // namespace
}  // namespace silt::fs
