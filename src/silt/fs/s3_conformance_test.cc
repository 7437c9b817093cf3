// File-system behaviours against a real S3-compatible server. Runs only when
// SILT_TEST_S3_ENDPOINT and SILT_TEST_S3_BUCKET name one (the integration
// tests start MinIO on loopback and run this binary with them set, plus
// AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY); skipped otherwise.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "silt/base/uuid.h"
#include "silt/fs/file_system.h"
#include "silt/fs/s3_file_system.h"
#include "silt/testing/gtest_util.h"

namespace silt::fs {
namespace {

std::string EnvOr(const char* name, std::string fallback = "") {
  const char* value = std::getenv(name);
  return value != nullptr ? std::string(value) : fallback;
}

class S3ConformanceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    endpoint_ = EnvOr("SILT_TEST_S3_ENDPOINT");
    bucket_ = EnvOr("SILT_TEST_S3_BUCKET");
    if (endpoint_.empty() || bucket_.empty()) {
      GTEST_SKIP() << "SILT_TEST_S3_ENDPOINT / SILT_TEST_S3_BUCKET not set";
    }
    options_.endpoint = endpoint_;
    options_.access_key = EnvOr("AWS_ACCESS_KEY_ID");
    options_.secret_key = EnvOr("AWS_SECRET_ACCESS_KEY");
    options_.region = EnvOr("AWS_REGION", "us-east-1");
    Result<FileSystemPtr> fs = MakeS3FileSystem(options_);
    ASSERT_TRUE(fs.ok()) << fs.status().ToString();
    fs_ = *fs;
    root_ = "s3://" + bucket_ + "/conformance-" + NewUuid();
  }

  void TearDown() override {
    if (fs_ != nullptr) EXPECT_OK(fs_->DeleteDirRecursive(root_));
  }

  std::string Path(std::string_view name) const { return JoinPath(root_, name); }

  std::string endpoint_;
  std::string bucket_;
  S3Options options_;
  FileSystemPtr fs_;
  std::string root_;
};

TEST_F(S3ConformanceTest, WrittenFileReadsBackWithSizeAndRanges) {
  std::string data;
  for (int i = 0; i < 1000; ++i) data += std::to_string(i) + ",";
  ASSERT_OK(fs_->WriteFile(Path("a/b.txt"), data));
  ASSERT_OK_AND_ASSIGN(std::string back, fs_->ReadFile(Path("a/b.txt")));
  EXPECT_EQ(back, data);
  ASSERT_OK_AND_ASSIGN(FileInfo info, fs_->GetFileInfo(Path("a/b.txt")));
  EXPECT_EQ(info.size, static_cast<int64_t>(data.size()));
  EXPECT_FALSE(info.is_dir);
  ASSERT_OK_AND_ASSIGN(FileInfo dir, fs_->GetFileInfo(Path("a")));
  EXPECT_TRUE(dir.is_dir);
  ASSERT_OK_AND_ASSIGN(auto file, fs_->OpenForRead(Path("a/b.txt")));
  ASSERT_OK_AND_ASSIGN(std::string middle, file->ReadAt(100, 37));
  EXPECT_EQ(middle, data.substr(100, 37));
  ASSERT_OK_AND_ASSIGN(std::string tail, file->ReadAt(static_cast<int64_t>(data.size()) - 5, 50));
  EXPECT_EQ(tail, data.substr(data.size() - 5));
  ASSERT_OK_AND_ASSIGN(std::string past, file->ReadAt(static_cast<int64_t>(data.size()) + 1, 5));
  EXPECT_TRUE(past.empty());
}

TEST_F(S3ConformanceTest, MissingFilesAreNotFound) {
  ASSERT_RAISES(NotFound, fs_->ReadFile(Path("nope")));
  ASSERT_RAISES(NotFound, fs_->OpenForRead(Path("nope")));
  ASSERT_RAISES(NotFound, fs_->GetFileInfo(Path("nope")));
  ASSERT_RAISES(NotFound, fs_->DeleteFile(Path("nope")));
  ASSERT_OK_AND_ASSIGN(bool exists, fs_->Exists(Path("nope")));
  EXPECT_FALSE(exists);
  ASSERT_OK_AND_ASSIGN(std::vector<FileInfo> none, fs_->ListDir(Path("nodir")));
  EXPECT_TRUE(none.empty());
}

TEST_F(S3ConformanceTest, PutIfAbsentRaceHasExactlyOneWinner) {
  constexpr int kThreads = 8;
  std::atomic<int> winners{0};
  std::atomic<int> losers{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Status st = fs_->PutIfAbsent(Path("_delta_log/00000000000000000000.json"),
                                   "writer " + std::to_string(t));
      if (st.ok()) {
        ++winners;
      } else if (st.IsAlreadyExists()) {
        ++losers;
      } else {
        ADD_FAILURE() << st.ToString();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(winners.load(), 1);
  EXPECT_EQ(losers.load(), kThreads - 1);
  ASSERT_OK_AND_ASSIGN(std::string content,
                       fs_->ReadFile(Path("_delta_log/00000000000000000000.json")));
  EXPECT_EQ(content.rfind("writer ", 0), 0u);
  // The conditional-PUT probe cleaned up after itself.
  ASSERT_OK_AND_ASSIGN(auto probes, fs_->ListRecursive("s3://" + bucket_ + "/.silt-probe"));
  EXPECT_TRUE(probes.empty());
}

TEST_F(S3ConformanceTest, ListingPaginatesPastOneThousandKeys) {
  constexpr int kFiles = 1005;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = t; i < kFiles; i += 4) {
        char name[32];
        std::snprintf(name, sizeof(name), "many/f%05d", i);
        if (!fs_->WriteFile(Path(name), "x").ok()) ++failures;
      }
    });
  }
  ASSERT_OK(fs_->WriteFile(Path("many/sub/deep"), "y"));
  for (auto& thread : threads) thread.join();
  ASSERT_EQ(failures.load(), 0);
  ASSERT_OK_AND_ASSIGN(std::vector<FileInfo> entries, fs_->ListDir(Path("many")));
  ASSERT_EQ(entries.size(), static_cast<size_t>(kFiles + 1));
  EXPECT_EQ(entries.front().path, Path("many/f00000"));
  EXPECT_EQ(entries.back().path, Path("many/sub"));
  EXPECT_TRUE(entries.back().is_dir);
  ASSERT_OK_AND_ASSIGN(std::vector<FileInfo> all, fs_->ListRecursive(Path("many")));
  ASSERT_EQ(all.size(), static_cast<size_t>(kFiles + 1));
  EXPECT_EQ(all.back().path, Path("many/sub/deep"));
  ASSERT_OK(fs_->DeleteDirRecursive(Path("many")));
  ASSERT_OK_AND_ASSIGN(std::vector<FileInfo> after, fs_->ListRecursive(Path("many")));
  EXPECT_TRUE(after.empty());
}

TEST_F(S3ConformanceTest, MultipartUploadOfMoreThanSixteenMiBRoundTrips) {
  std::string data(17 << 20, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>((i * 131) >> 7);
  ASSERT_OK_AND_ASSIGN(auto writer, fs_->OpenForWrite(Path("big.bin")));
  for (size_t offset = 0; offset < data.size(); offset += 1 << 20) {
    ASSERT_OK(writer->Append(std::string_view(data).substr(offset, 1 << 20)));
  }
  ASSERT_RAISES(NotFound, fs_->GetFileInfo(Path("big.bin")));  // invisible until Close
  ASSERT_OK(writer->Close());
  ASSERT_OK_AND_ASSIGN(FileInfo info, fs_->GetFileInfo(Path("big.bin")));
  EXPECT_EQ(info.size, static_cast<int64_t>(data.size()));
  ASSERT_OK_AND_ASSIGN(auto file, fs_->OpenForRead(Path("big.bin")));
  int64_t at = (9 << 20) - 10;
  ASSERT_OK_AND_ASSIGN(std::string across, file->ReadAt(at, 20));
  EXPECT_EQ(across, data.substr(static_cast<size_t>(at), 20));
  ASSERT_OK_AND_ASSIGN(std::string all, fs_->ReadFile(Path("big.bin")));
  EXPECT_TRUE(all == data);
}

TEST_F(S3ConformanceTest, AbortedWriterLeavesNothing) {
  ASSERT_OK_AND_ASSIGN(auto writer, fs_->OpenForWrite(Path("aborted.bin")));
  ASSERT_OK(writer->Append(std::string(9 << 20, 'a')));
  ASSERT_OK(writer->Abort());
  ASSERT_RAISES(NotFound, fs_->GetFileInfo(Path("aborted.bin")));
}

TEST_F(S3ConformanceTest, WrongSecretFailsClearlyWithoutPrintingIt) {
  S3Options bad = options_;
  bad.secret_key = "definitely-wrong-secret";
  bad.credentials_source = "the test";
  ASSERT_OK_AND_ASSIGN(FileSystemPtr fs, MakeS3FileSystem(bad));
  Status st = fs->WriteFile(Path("x"), "x");
  ASSERT_RAISES(IOError, st);
  EXPECT_NE(st.message().find("SignatureDoesNotMatch"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find(endpoint_), std::string::npos) << st.message();
  EXPECT_EQ(st.message().find("definitely-wrong-secret"), std::string::npos);
}

TEST_F(S3ConformanceTest, MissingBucketIsNamed) {
  std::string missing = "s3://no-such-bucket-" + NewUuid().substr(0, 8) + "/t";
  Result<std::vector<FileInfo>> listing = fs_->ListDir(missing);
  ASSERT_RAISES(IOError, listing);
  EXPECT_NE(listing.status().message().find("does not exist"), std::string::npos)
      << listing.status().message();
}

TEST_F(S3ConformanceTest, TlsAgainstPlainHttpServerIsExplained) {
  if (!endpoint_.starts_with("http://")) GTEST_SKIP() << "server speaks TLS";
  S3Options tls = options_;
  tls.endpoint = "https://" + endpoint_.substr(7);
  tls.max_attempts = 2;
  ASSERT_OK_AND_ASSIGN(FileSystemPtr fs, MakeS3FileSystem(tls));
  Status st = fs->WriteFile(Path("x"), "x");
  ASSERT_RAISES(IOError, st);
  EXPECT_NE(st.message().find("TLS"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("http:// endpoint"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace silt::fs
