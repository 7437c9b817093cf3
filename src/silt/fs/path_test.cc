#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "silt/fs/file_system.h"
#include "silt/fs/s3_file_system.h"
#include "silt/testing/gtest_util.h"

namespace silt::fs {
namespace {

TEST(JoinPathTest, JoinsWithExactlyOneSlash) {
  EXPECT_EQ(JoinPath("/a", "b"), "/a/b");
  EXPECT_EQ(JoinPath("/a/", "b"), "/a/b");
  EXPECT_EQ(JoinPath("/a//", "/b"), "/a/b");
  EXPECT_EQ(JoinPath("/", "b"), "/b");
  EXPECT_EQ(JoinPath("memory://", "x"), "memory://x");
  EXPECT_EQ(JoinPath("s3://bucket/", "key/part"), "s3://bucket/key/part");
  EXPECT_EQ(JoinPath("", "b"), "b");
  EXPECT_EQ(JoinPath("rel", "b"), "rel/b");
  EXPECT_EQ(JoinPath("/a", ""), "/a");
}

TEST(BaseNameTest, ReturnsLastComponent) {
  EXPECT_EQ(BaseName("/a/b/c.json"), "c.json");
  EXPECT_EQ(BaseName("/a/b/"), "b");
  EXPECT_EQ(BaseName("/a"), "a");
  EXPECT_EQ(BaseName("plain"), "plain");
  EXPECT_EQ(BaseName("s3://bucket/key"), "key");
  EXPECT_EQ(BaseName("memory://x"), "x");
  EXPECT_EQ(BaseName("/"), "");
}

TEST(DirNameTest, ReturnsEverythingBeforeLastSlashButKeepsRoot) {
  EXPECT_EQ(DirName("/a/b/c"), "/a/b");
  EXPECT_EQ(DirName("/a/b/c/"), "/a/b");
  EXPECT_EQ(DirName("/a//c"), "/a");
  EXPECT_EQ(DirName("/a"), "/");
  EXPECT_EQ(DirName("s3://bucket/key"), "s3://bucket");
  EXPECT_EQ(DirName("memory://x"), "memory://");
  EXPECT_EQ(DirName("rel/x"), "rel");
  EXPECT_EQ(DirName("x"), "");
}

TEST(NormalizePathTest, StripsFileSchemeAndTrailingSlashes) {
  EXPECT_EQ(NormalizePath("file:///data/table/"), "/data/table");
  EXPECT_EQ(NormalizePath("file:/data/table"), "/data/table");
  EXPECT_EQ(NormalizePath("file://localhost/data"), "/data");
  EXPECT_EQ(NormalizePath("/data/./x/../table//"), "/data/table");
  EXPECT_EQ(NormalizePath("/"), "/");
}

TEST(NormalizePathTest, MakesRelativeLocalPathsAbsolute) {
  std::string cwd = std::filesystem::current_path().string();
  EXPECT_EQ(NormalizePath("out/table"), JoinPath(cwd, "out/table"));
  EXPECT_EQ(NormalizePath("./out/"), JoinPath(cwd, "out"));
}

TEST(NormalizePathTest, LeavesUrisAloneExceptTrailingSlashes) {
  EXPECT_EQ(NormalizePath("s3://bucket/prefix/"), "s3://bucket/prefix");
  EXPECT_EQ(NormalizePath("s3a://bucket/a//b"), "s3a://bucket/a//b");
  EXPECT_EQ(NormalizePath("memory://"), "memory://");
}

TEST(FileSystemForPathTest, PicksImplementationByScheme) {
  ASSERT_OK_AND_ASSIGN(FileSystemPtr local, FileSystemForPath("/tmp/x"));
  EXPECT_EQ(local->name(), "local");
  ASSERT_OK_AND_ASSIGN(FileSystemPtr file, FileSystemForPath("file:///tmp/x"));
  EXPECT_EQ(file->name(), "local");
  ASSERT_OK_AND_ASSIGN(FileSystemPtr relative, FileSystemForPath("relative/dir"));
  EXPECT_EQ(relative->name(), "local");
  ASSERT_OK_AND_ASSIGN(FileSystemPtr memory, FileSystemForPath("memory://a"));
  EXPECT_EQ(memory->name(), "memory");
}

TEST(FileSystemForPathTest, MemoryUrisShareOneProcessWideStore) {
  ASSERT_OK_AND_ASSIGN(FileSystemPtr first, FileSystemForPath("memory://shared/a"));
  ASSERT_OK_AND_ASSIGN(FileSystemPtr second, FileSystemForPath("MEMORY://shared/b"));
  ASSERT_OK(first->WriteFile("memory://shared/a", "seen"));
  ASSERT_OK_AND_ASSIGN(std::string read, second->ReadFile("memory://shared/a"));
  EXPECT_EQ(read, "seen");
  ASSERT_OK(second->DeleteDirRecursive("memory://shared"));
}

TEST(FileSystemForPathTest, PrivateMemoryStoresAreSeparate) {
  FileSystemPtr first = MakeMemoryFileSystem();
  FileSystemPtr second = MakeMemoryFileSystem();
  ASSERT_OK(first->WriteFile("memory://x", "1"));
  ASSERT_RAISES(NotFound, second->ReadFile("memory://x"));
}

TEST(FileSystemForPathTest, S3AndS3aShareOneS3FileSystem) {
  // Credentials and endpoint from the environment; nothing is contacted.
  ::setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE", 1);
  ::setenv("AWS_SECRET_ACCESS_KEY", "secret", 1);
  ::setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1", 1);
  ASSERT_OK(SetS3Settings({}));
  ASSERT_OK_AND_ASSIGN(FileSystemPtr s3, FileSystemForPath("s3://bucket/table"));
  ASSERT_OK_AND_ASSIGN(FileSystemPtr s3a, FileSystemForPath("s3a://bucket/table"));
  EXPECT_EQ(s3->name(), "s3");
  EXPECT_EQ(s3.get(), s3a.get());
  ::unsetenv("AWS_ACCESS_KEY_ID");
  ::unsetenv("AWS_SECRET_ACCESS_KEY");
  ::unsetenv("AWS_ENDPOINT_URL");
}

TEST(FileSystemForPathTest, UnknownS3SettingIsRejectedByName) {
  Status st = SetS3Settings({{"endpiont", "http://x"}});
  ASSERT_RAISES(InvalidArgument, st);
  EXPECT_NE(st.message().find("storage.s3.endpiont"), std::string::npos);
}

TEST(FileSystemForPathTest, UnknownSchemeIsNotSupportedAndNamed) {
  Result<FileSystemPtr> gs = FileSystemForPath("gs://bucket/table");
  ASSERT_RAISES(NotSupported, gs);
  EXPECT_NE(gs.status().message().find("'gs://'"), std::string::npos) << gs.status().ToString();
}

}  // namespace
}  // namespace silt::fs
