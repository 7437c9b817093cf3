// Behaviour specific to the local file system: POSIX error messages, temp
// files, "file://" paths, and put-if-absent across processes.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "silt/fs/file_system.h"
#include "silt/fs/page_cache.h"
#include "silt/testing/gtest_util.h"
#include "silt/testing/temp_dir.h"

namespace silt::fs {
namespace {

class LocalFileSystemTest : public ::testing::Test {
 protected:
  std::string Path(std::string_view relative) const { return JoinPath(dir_.path(), relative); }

  // Every name in `dir` as the OS sees it, hidden files included.
  std::vector<std::string> RawNames(const std::string& dir) const {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  silt::testing::TempDir dir_;
  FileSystemPtr fs_ = MakeLocalFileSystem();
};

TEST_F(LocalFileSystemTest, ErrorsNameThePathAndTheSystemReason) {
  std::string missing = Path("x/y");
  Status st = fs_->OpenForRead(missing).status();
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
  EXPECT_EQ(st.message(), "Cannot open '" + missing + "': No such file or directory");
}

TEST_F(LocalFileSystemTest, WritingUnderAFileIsAnIOErrorNamingThePath) {
  ASSERT_OK(fs_->WriteFile(Path("plain"), "x"));
  Status st = fs_->WriteFile(Path("plain/child"), "y");
  EXPECT_EQ(st.code(), StatusCode::kIOError) << st.ToString();
  EXPECT_NE(st.message().find(Path("plain")), std::string::npos) << st.ToString();
}

// Pages of `path` in the page cache (mincore over a mapping of it).
int64_t ResidentPages(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st;
  ::fstat(fd, &st);
  const size_t size = static_cast<size_t>(st.st_size);
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) return -1;
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> resident((size + page - 1) / page);
  int64_t count = -1;
  if (::mincore(map, size, resident.data()) == 0) {
    count = std::count_if(resident.begin(), resident.end(), [](unsigned char c) { return c & 1; });
  }
  ::munmap(map, size);
  return count;
}

TEST_F(LocalFileSystemTest, DropCachedPagesEvictsAReadFile) {
  struct statfs fs_info;
  ASSERT_EQ(::statfs(dir_.path().c_str(), &fs_info), 0);
  if (fs_info.f_type == TMPFS_MAGIC) GTEST_SKIP() << "tmpfs keeps its pages";
  const std::string path = Path("big");
  ASSERT_OK(fs_->WriteFile(path, std::string(1 << 20, 'x')));  // synced: clean pages
  ASSERT_OK_AND_ASSIGN(std::string bytes, fs_->ReadFile(path));
  ASSERT_EQ(bytes.size(), 1u << 20);
  ASSERT_GT(ResidentPages(path), 0);
  DropCachedPages(fs_.get(), path);
  EXPECT_EQ(ResidentPages(path), 0);
  // Still readable: the pages come back from the disk.
  ASSERT_OK_AND_ASSIGN(bytes, fs_->ReadFile(path));
  EXPECT_EQ(bytes.size(), 1u << 20);
  // Another file system's files are left alone (a memory one has no cache).
  FileSystemPtr memory = MakeMemoryFileSystem();
  ASSERT_OK(memory->WriteFile("/m", "abc"));
  DropCachedPages(memory.get(), "/m");
  ASSERT_OK_AND_ASSIGN(bytes, memory->ReadFile("/m"));
  EXPECT_EQ(bytes, "abc");
}

TEST_F(LocalFileSystemTest, AcceptsFileUris) {
  std::string uri = "file://" + Path("via-uri");
  ASSERT_OK(fs_->WriteFile(uri, "u"));
  ASSERT_OK_AND_ASSIGN(std::string read, fs_->ReadFile(Path("via-uri")));
  EXPECT_EQ(read, "u");
  ASSERT_OK_AND_ASSIGN(std::vector<FileInfo> listing, fs_->ListDir("file://" + dir_.path()));
  ASSERT_EQ(listing.size(), 1u);
  EXPECT_EQ(listing[0].path, uri);
}

TEST_F(LocalFileSystemTest, RefusesOtherSchemes) {
  ASSERT_RAISES(InvalidArgument, fs_->WriteFile("s3://bucket/key", "x"));
  ASSERT_RAISES(InvalidArgument, fs_->ReadFile("memory://x"));
}

TEST_F(LocalFileSystemTest, CompletedWritesLeaveNoTempFiles) {
  ASSERT_OK(fs_->WriteFile(Path("a"), "a"));
  ASSERT_OK(fs_->WriteFile(Path("a"), "a2"));
  ASSERT_OK(fs_->PutIfAbsent(Path("b"), "b"));
  ASSERT_RAISES(AlreadyExists, fs_->PutIfAbsent(Path("b"), "b2"));
  ASSERT_OK(fs_->PutIfAbsentUnsynced(Path("e"), "e"));
  ASSERT_RAISES(AlreadyExists, fs_->PutIfAbsentUnsynced(Path("e"), "e2"));
  ASSERT_RAISES(AlreadyExists, fs_->PutIfAbsentUnsynced(Path("b"), "b3"));
  ASSERT_OK_AND_ASSIGN(std::string e, fs_->ReadFile(Path("e")));
  EXPECT_EQ(e, "e");
  ASSERT_OK_AND_ASSIGN(auto writer, fs_->OpenForWrite(Path("c")));
  ASSERT_OK(writer->Append("c"));
  ASSERT_OK(writer->Close());
  ASSERT_OK_AND_ASSIGN(auto aborted, fs_->OpenForWrite(Path("d")));
  ASSERT_OK(aborted->Abort());
  EXPECT_EQ(RawNames(dir_.path()), (std::vector<std::string>{"a", "b", "c", "e"}));
  // Published by a rename, not a second link: one name per inode.
  struct stat st;
  ASSERT_EQ(::stat(Path("b").c_str(), &st), 0);
  EXPECT_EQ(st.st_nlink, 1u);
}

TEST_F(LocalFileSystemTest, InFlightWriterTempFileIsHiddenFromListings) {
  ASSERT_OK_AND_ASSIGN(auto writer, fs_->OpenForWrite(Path("big.parquet")));
  ASSERT_OK(writer->Append("data"));
  std::vector<std::string> raw = RawNames(dir_.path());
  ASSERT_EQ(raw.size(), 1u);
  EXPECT_TRUE(raw[0].starts_with(".big.parquet.") && raw[0].ends_with(".tmp")) << raw[0];
  ASSERT_OK_AND_ASSIGN(std::vector<FileInfo> listing, fs_->ListDir(dir_.path()));
  EXPECT_TRUE(listing.empty());
  ASSERT_OK_AND_ASSIGN(listing, fs_->ListRecursive(dir_.path()));
  EXPECT_TRUE(listing.empty());
  ASSERT_OK(writer->Close());
  EXPECT_EQ(RawNames(dir_.path()), std::vector<std::string>{"big.parquet"});
}

TEST_F(LocalFileSystemTest, InPlaceWriterWritesUnderItsNameWithoutATempFile) {
  // A missing partition directory is created; the file is there at once.
  ASSERT_OK_AND_ASSIGN(auto writer, fs_->OpenForWriteInPlace(Path("p=1/part-0.parquet")));
  ASSERT_OK(writer->Append("da"));
  EXPECT_EQ(RawNames(Path("p=1")), std::vector<std::string>{"part-0.parquet"});
  ASSERT_OK(writer->Append("ta"));
  ASSERT_OK(writer->Close());
  EXPECT_EQ(RawNames(Path("p=1")), std::vector<std::string>{"part-0.parquet"});
  ASSERT_OK_AND_ASSIGN(std::string data, fs_->ReadFile(Path("p=1/part-0.parquet")));
  EXPECT_EQ(data, "data");
  EXPECT_EQ(writer->bytes_written(), 4);
  // It never replaces a file.
  ASSERT_RAISES(IOError, fs_->OpenForWriteInPlace(Path("p=1/part-0.parquet")));
  ASSERT_OK_AND_ASSIGN(data, fs_->ReadFile(Path("p=1/part-0.parquet")));
  EXPECT_EQ(data, "data");
  // Abort, explicit or by destruction, deletes the file.
  ASSERT_OK_AND_ASSIGN(auto aborted, fs_->OpenForWriteInPlace(Path("p=1/part-1.parquet")));
  ASSERT_OK(aborted->Append("x"));
  ASSERT_OK(aborted->Abort());
  { ASSERT_OK_AND_ASSIGN(auto dropped, fs_->OpenForWriteInPlace(Path("p=1/part-2.parquet"))); }
  EXPECT_EQ(RawNames(Path("p=1")), std::vector<std::string>{"part-0.parquet"});
}

TEST_F(LocalFileSystemTest, OrphanedTempsAreListedAtAnyDepthAndNothingElse) {
  ASSERT_OK(fs_->WriteFile(Path("p=1/done.parquet"), "d"));
  ASSERT_OK(fs_->WriteFile(Path("_log/.hidden.crc"), "c"));
  // Writers that never close: a killed process's leftovers look the same.
  ASSERT_OK_AND_ASSIGN(auto top, fs_->OpenForWrite(Path("big.parquet")));
  ASSERT_OK_AND_ASSIGN(auto deep, fs_->OpenForWrite(Path("p=1/_log/00.json")));
  ASSERT_OK(top->Append("x"));
  ASSERT_OK(deep->Append("y"));
  ASSERT_OK_AND_ASSIGN(std::vector<FileInfo> temps, fs_->ListOrphanedTemps(dir_.path()));
  ASSERT_EQ(temps.size(), 2u);
  EXPECT_TRUE(temps[0].path.starts_with(Path(".big.parquet."))) << temps[0].path;
  EXPECT_TRUE(temps[1].path.starts_with(Path("p=1/_log/.00.json."))) << temps[1].path;
  ASSERT_OK(fs_->DeleteFiles({temps[0].path, temps[1].path}));
  ASSERT_OK_AND_ASSIGN(temps, fs_->ListOrphanedTemps(dir_.path()));
  EXPECT_TRUE(temps.empty());
  ASSERT_OK_AND_ASSIGN(std::vector<FileInfo> listing, fs_->ListRecursive(dir_.path()));
  EXPECT_EQ(listing.size(), 2u);
  ASSERT_OK(top->Abort());
  ASSERT_OK(deep->Abort());
}

TEST_F(LocalFileSystemTest, OtherHiddenFilesAreListed) {
  ASSERT_OK(fs_->WriteFile(Path(".part-0.crc"), "c"));
  ASSERT_OK_AND_ASSIGN(std::vector<FileInfo> listing, fs_->ListDir(dir_.path()));
  ASSERT_EQ(listing.size(), 1u);
  EXPECT_EQ(listing[0].path, Path(".part-0.crc"));
}

TEST_F(LocalFileSystemTest, CreateDirMakesParentsAndIsIdempotent) {
  ASSERT_OK(fs_->CreateDir(Path("a/b/c")));
  ASSERT_OK(fs_->CreateDir(Path("a/b/c")));
  EXPECT_TRUE(std::filesystem::is_directory(Path("a/b/c")));
  ASSERT_OK(fs_->WriteFile(Path("file"), "f"));
  ASSERT_RAISES(IOError, fs_->CreateDir(Path("file")));
}

TEST_F(LocalFileSystemTest, CreateDirsMakesEveryDirectoryAndItsParents) {
  ASSERT_OK(fs_->CreateDir(Path("t/x=1")));
  ASSERT_OK(fs_->CreateDirs(
      {Path("t/x=1"), Path("t/x=1/d=2"), Path("t/x=1/d=3"), Path("t/x=2/d=2"), Path("u/v/w")}));
  for (const char* dir : {"t/x=1/d=2", "t/x=1/d=3", "t/x=2/d=2", "u/v/w"}) {
    EXPECT_TRUE(std::filesystem::is_directory(Path(dir))) << dir;
  }
  ASSERT_OK(fs_->CreateDirs({}));
  ASSERT_OK(fs_->WriteFile(Path("file"), "f"));
  ASSERT_RAISES(IOError, fs_->CreateDirs({Path("t/x=3"), Path("file")}));
  EXPECT_TRUE(std::filesystem::is_directory(Path("t/x=3")));
}

// Processes (not just threads) racing to create the same commit file: exactly
// one wins, as two silt instances sharing a table directory would.
TEST_F(LocalFileSystemTest, ProcessesRacingPutIfAbsentHaveExactlyOneWinner) {
  constexpr int kProcesses = 4;
  constexpr int kRounds = 10;
  for (int round = 0; round < kRounds; ++round) {
    std::string path = Path("_delta_log/" + std::to_string(round) + ".json");
    int start_pipe[2];
    ASSERT_EQ(::pipe(start_pipe), 0);
    std::vector<pid_t> children;
    for (int proc_idx = 0; proc_idx < kProcesses; ++proc_idx) {
      pid_t pid = ::fork();
      ASSERT_GE(pid, 0);
      if (pid == 0) {
        ::close(start_pipe[1]);
        char byte;
        // Blocks until the parent closes the write end, releasing all at once.
        [[maybe_unused]] ssize_t n = ::read(start_pipe[0], &byte, 1);
        // Half the racers publish unsynced (commits/N): the same rule.
        const std::string text = "process " + std::to_string(proc_idx);
        FileSystemPtr local = MakeLocalFileSystem();
        Status st = proc_idx % 2 == 0 ? local->PutIfAbsent(path, text)
                                      : local->PutIfAbsentUnsynced(path, text);
        ::_exit(st.ok() ? 0 : st.IsAlreadyExists() ? 1 : 2);
      }
      children.push_back(pid);
    }
    ::close(start_pipe[0]);
    ::close(start_pipe[1]);
    int winners = 0;
    int winner_idx = -1;
    for (int proc_idx = 0; proc_idx < kProcesses; ++proc_idx) {
      int wstatus = 0;
      ASSERT_EQ(::waitpid(children[proc_idx], &wstatus, 0), children[proc_idx]);
      ASSERT_TRUE(WIFEXITED(wstatus));
      int code = WEXITSTATUS(wstatus);
      ASSERT_NE(code, 2) << "process " << proc_idx << " failed with an unexpected error";
      if (code == 0) {
        ++winners;
        winner_idx = proc_idx;
      }
    }
    ASSERT_EQ(winners, 1) << "round " << round;
    ASSERT_OK_AND_ASSIGN(std::string read, fs_->ReadFile(path));
    EXPECT_EQ(read, "process " + std::to_string(winner_idx));
  }
  EXPECT_EQ(RawNames(Path("_delta_log")).size(), static_cast<size_t>(kRounds));
}

}  // namespace
}  // namespace silt::fs
