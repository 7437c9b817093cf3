// The S3 file system over a scripted fake transport: retries, lost
// responses, error messages, conditional-PUT probing, and where the options
// come from.

#include "silt/fs/s3_file_system.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <deque>
#include <fstream>
#include <mutex>

#include "silt/fs/s3_internal.h"
#include "silt/testing/gtest_util.h"
#include "silt/testing/temp_dir.h"

namespace silt::fs {
namespace {

using s3::HttpRequest;
using s3::HttpResponse;

constexpr char kSecret[] = "s3cr3t-value-never-printed";

// Answers requests from a script, in order, and records what was asked.
class FakeTransport : public s3::HttpTransport {
 public:
  void Reply(int64_t status, std::string body = "", s3::Headers headers = {}) {
    HttpResponse response;
    response.status = status;
    response.body = std::move(body);
    response.headers = std::move(headers);
    script_.emplace_back(std::move(response));
  }
  void Fail(Status status) { script_.emplace_back(std::move(status)); }

  Result<HttpResponse> Send(const HttpRequest& request) override {
    std::lock_guard<std::mutex> lock(mutex_);
    std::string line = request.method + " " + request.url;
    for (const auto& [name, value] : request.headers) {
      if (name == "if-none-match" || name == "range" || name == "if-match") {
        line += " " + name + "=" + value;
      }
    }
    requests_.push_back(line);
    authorizations_.push_back(FindHeader(request, "Authorization"));
    if (script_.empty()) return Status::Internal("fake transport: unexpected ", line);
    Result<HttpResponse> next = std::move(script_.front());
    script_.pop_front();
    return next;
  }

  const std::vector<std::string>& requests() const { return requests_; }
  const std::vector<std::string>& authorizations() const { return authorizations_; }

 private:
  static std::string FindHeader(const HttpRequest& request, std::string_view name) {
    for (const auto& [key, value] : request.headers) {
      if (key == name) return value;
    }
    return "";
  }

  std::mutex mutex_;
  std::deque<Result<HttpResponse>> script_;
  std::vector<std::string> requests_;
  std::vector<std::string> authorizations_;
};

std::string ErrorXml(std::string_view code, std::string_view message) {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>" + std::string(code) +
         "</Code><Message>" + std::string(message) + "</Message></Error>";
}

class S3FileSystemTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.endpoint = "http://127.0.0.1:9000";
    options_.access_key = "AKIDTEST";
    options_.secret_key = kSecret;
    options_.credentials_source = "storage.s3.accessKey/secretKey";
    options_.max_attempts = 4;
    transport_ = std::make_shared<FakeTransport>();
  }

  FileSystemPtr Make() {
    auto fs = s3::MakeS3FileSystemForTest(
        options_, transport_, [this](int64_t ms) { sleeps_.push_back(ms); },
        [] { return int64_t{1440938160}; });
    EXPECT_TRUE(fs.ok()) << fs.status().ToString();
    return fs.ok() ? *fs : nullptr;
  }

  // Scripts the probe: first conditional PUT created, second refused, delete.
  void ScriptEnforcingProbe() {
    transport_->Reply(200);
    transport_->Reply(412, ErrorXml("PreconditionFailed", "At least one of the preconditions"));
    transport_->Reply(204);
  }

  static void ExpectNoSecret(const Status& status) {
    EXPECT_EQ(status.message().find(kSecret), std::string::npos) << status.ToString();
  }

  S3Options options_;
  std::shared_ptr<FakeTransport> transport_;
  std::vector<int64_t> sleeps_;
};

TEST_F(S3FileSystemTest, PathStyleRequestsAreSignedAndKeysEncoded) {
  FileSystemPtr fs = Make();
  transport_->Reply(200, "hello");
  ASSERT_OK_AND_ASSIGN(std::string data, fs->ReadFile("s3a://bucket/dir/a b.json"));
  EXPECT_EQ(data, "hello");
  ASSERT_EQ(transport_->requests().size(), 1u);
  EXPECT_EQ(transport_->requests()[0], "GET http://127.0.0.1:9000/bucket/dir/a%20b.json");
  EXPECT_EQ(transport_->authorizations()[0].rfind("AWS4-HMAC-SHA256 Credential=AKIDTEST/"
                                                  "20150830/us-east-1/s3/aws4_request, ",
                                                  0),
            0u);
}

TEST_F(S3FileSystemTest, VirtualHostedAddressingPutsTheBucketInTheHost) {
  options_.path_style = false;
  options_.endpoint = "https://s3.eu-west-1.amazonaws.com";
  FileSystemPtr fs = Make();
  transport_->Reply(200, "x");
  ASSERT_OK(fs->ReadFile("s3://bucket/k").status());
  EXPECT_EQ(transport_->requests()[0], "GET https://bucket.s3.eu-west-1.amazonaws.com/k");
}

TEST_F(S3FileSystemTest, ServerErrorsAreRetriedWithBackoff) {
  FileSystemPtr fs = Make();
  transport_->Reply(503, ErrorXml("SlowDown", "Please reduce your request rate."));
  transport_->Fail(Status::IOError("connection reset").WithRetryable(true));
  transport_->Reply(200, "data");
  ASSERT_OK_AND_ASSIGN(std::string data, fs->ReadFile("s3://bucket/k"));
  EXPECT_EQ(data, "data");
  EXPECT_EQ(transport_->requests().size(), 3u);
  ASSERT_EQ(sleeps_.size(), 2u);
  EXPECT_GE(sleeps_[0], 1);
}

TEST_F(S3FileSystemTest, GivesUpAfterMaxAttemptsWithRetryableError) {
  FileSystemPtr fs = Make();
  for (int i = 0; i < 4; ++i) transport_->Reply(500, ErrorXml("InternalError", "boom"));
  Result<std::string> data = fs->ReadFile("s3://bucket/k");
  ASSERT_RAISES(IOError, data);
  EXPECT_TRUE(data.status().retryable());
  EXPECT_EQ(transport_->requests().size(), 4u);
  EXPECT_NE(data.status().message().find("InternalError"), std::string::npos);
}

TEST_F(S3FileSystemTest, AnOutageAfterTheServerAnsweredIsRetriedWithinTheBudget) {
  options_.retry_timeout_ms = 60000;
  FileSystemPtr fs = Make();
  // Never answered: a refused endpoint fails after max_attempts (4).
  for (int i = 0; i < 4; ++i) {
    transport_->Fail(Status::IOError("cannot connect").WithRetryable(true));
  }
  ASSERT_RAISES(IOError, fs->ReadFile("s3://bucket/k"));
  EXPECT_EQ(transport_->requests().size(), 4u);

  // Once it has answered, a restart (refused, then 503) is waited out.
  transport_->Reply(200, "first");
  ASSERT_OK(fs->ReadFile("s3://bucket/k").status());
  const size_t before = sleeps_.size();  // one backoff per retry
  for (int i = 0; i < 8; ++i) {
    transport_->Fail(Status::IOError("cannot connect").WithRetryable(true));
  }
  transport_->Reply(503, ErrorXml("XMinioServerNotInitialized", "Server not initialized"));
  transport_->Reply(200, "after the restart");
  ASSERT_OK_AND_ASSIGN(std::string data, fs->ReadFile("s3://bucket/k"));
  EXPECT_EQ(data, "after the restart");
  EXPECT_EQ(sleeps_.size() - before, 9u);

  // ... but not past the budget.
  options_.retry_timeout_ms = 1000;
  FileSystemPtr short_budget = Make();
  transport_->Reply(200, "first");
  ASSERT_OK(short_budget->ReadFile("s3://bucket/k").status());
  sleeps_.clear();
  for (int i = 0; i < 1000; ++i) {
    transport_->Fail(Status::IOError("cannot connect").WithRetryable(true));
  }
  ASSERT_RAISES(IOError, short_budget->ReadFile("s3://bucket/k"));
  int64_t slept = 0;
  for (int64_t ms : sleeps_) slept += ms;
  EXPECT_GE(slept, 1000);
  EXPECT_LT(slept, 1000 + 2000);  // at most one more backoff (max 2 s)
}

TEST_F(S3FileSystemTest, WrongAccessKeyFailsAtOnceNamingEndpointAndKeySource) {
  FileSystemPtr fs = Make();
  transport_->Reply(403, ErrorXml("InvalidAccessKeyId",
                                  "The Access Key Id you provided does not exist in our records."));
  Status st = fs->WriteFile("s3://bucket/k", "x");
  ASSERT_RAISES(IOError, st);
  EXPECT_FALSE(st.retryable());
  EXPECT_EQ(transport_->requests().size(), 1u);
  EXPECT_NE(st.message().find("http://127.0.0.1:9000"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("s3://bucket/k"), std::string::npos);
  EXPECT_NE(st.message().find("AKIDTEST"), std::string::npos);
  EXPECT_NE(st.message().find("storage.s3.accessKey"), std::string::npos);
  ExpectNoSecret(st);
}

TEST_F(S3FileSystemTest, WrongSecretKeyIsExplainedWithoutPrintingIt) {
  FileSystemPtr fs = Make();
  transport_->Reply(403, ErrorXml("SignatureDoesNotMatch", "The request signature ..."));
  Status st = fs->WriteFile("s3://bucket/k", "x");
  ASSERT_RAISES(IOError, st);
  EXPECT_NE(st.message().find("secret key does not match"), std::string::npos) << st.message();
  ExpectNoSecret(st);
}

TEST_F(S3FileSystemTest, BodylessHeadRefusalIsExplainedByAOneByteGet) {
  FileSystemPtr fs = Make();
  transport_->Reply(403);
  transport_->Reply(403, ErrorXml("SignatureDoesNotMatch", "The request signature ..."));
  Result<FileInfo> info = fs->GetFileInfo("s3://bucket/k");
  ASSERT_RAISES(IOError, info);
  EXPECT_NE(info.status().message().find("SignatureDoesNotMatch"), std::string::npos)
      << info.status().message();
  ASSERT_EQ(transport_->requests().size(), 2u);
  EXPECT_EQ(transport_->requests()[1], "GET http://127.0.0.1:9000/bucket/k range=bytes=0-0");
}

TEST_F(S3FileSystemTest, MissingBucketIsNamedNotReportedAsMissingFile) {
  FileSystemPtr fs = Make();
  transport_->Reply(404, ErrorXml("NoSuchBucket", "The specified bucket does not exist"));
  Result<std::string> data = fs->ReadFile("s3://nobucket/k");
  ASSERT_RAISES(IOError, data);
  EXPECT_NE(data.status().message().find("bucket 'nobucket' does not exist"), std::string::npos);
}

TEST_F(S3FileSystemTest, MissingKeyIsNotFound) {
  FileSystemPtr fs = Make();
  transport_->Reply(404, ErrorXml("NoSuchKey", "The specified key does not exist."));
  ASSERT_RAISES(NotFound, fs->ReadFile("s3://bucket/k"));
}

TEST_F(S3FileSystemTest, HttpsServerAddressedOverPlainHttpIsExplained) {
  FileSystemPtr fs = Make();
  transport_->Reply(400, "Client sent an HTTP request to an HTTPS server.\n");
  Status st = fs->WriteFile("s3://bucket/k", "x");
  ASSERT_RAISES(IOError, st);
  EXPECT_NE(st.message().find("use an https:// endpoint"), std::string::npos) << st.message();
}

TEST_F(S3FileSystemTest, PutIfAbsentSendsIfNoneMatchAndReportsTheLoser) {
  FileSystemPtr fs = Make();
  ScriptEnforcingProbe();
  transport_->Reply(200);
  ASSERT_OK(fs->PutIfAbsent("s3://bucket/log/0.json", "mine"));
  transport_->Reply(412, ErrorXml("PreconditionFailed", "pre"));
  ASSERT_RAISES(AlreadyExists, fs->PutIfAbsent("s3://bucket/log/0.json", "theirs"));
  const auto& requests = transport_->requests();
  ASSERT_EQ(requests.size(), 5u);
  EXPECT_NE(requests[0].find("/bucket/.silt-probe/"), std::string::npos);
  EXPECT_EQ(requests[3], "PUT http://127.0.0.1:9000/bucket/log/0.json if-none-match=*");
}

TEST_F(S3FileSystemTest, LostCommitResponseIsResolvedByReadingBack) {
  FileSystemPtr fs = Make();
  ScriptEnforcingProbe();
  // The first PUT reached the server but its answer was lost; the retry is
  // refused because the object exists, and it holds our bytes.
  transport_->Fail(Status::IOError("connection reset").WithRetryable(true));
  transport_->Reply(412, ErrorXml("PreconditionFailed", "pre"));
  transport_->Reply(200, "commit-7");
  ASSERT_OK(fs->PutIfAbsent("s3://bucket/log/7.json", "commit-7"));
}

TEST_F(S3FileSystemTest, CreateAbandonedByAServerShuttingDownIsRetried) {
  FileSystemPtr fs = Make();
  ScriptEnforcingProbe();
  // MinIO answers 499 (no body) for requests it drops while it stops; the
  // server then refuses connections until it is back.
  transport_->Reply(499);
  transport_->Fail(Status::IOError("cannot connect").WithRetryable(true));
  transport_->Reply(200);
  ASSERT_OK(fs->PutIfAbsent("s3://bucket/cp/sources/0/8", "v1"));
  EXPECT_EQ(sleeps_.size(), 2u);
}

TEST_F(S3FileSystemTest, LostResponseWithSomeoneElsesCommitIsAlreadyExists) {
  FileSystemPtr fs = Make();
  ScriptEnforcingProbe();
  transport_->Fail(Status::IOError("timed out").WithRetryable(true));
  transport_->Reply(412, ErrorXml("PreconditionFailed", "pre"));
  transport_->Reply(200, "other writer");
  ASSERT_RAISES(AlreadyExists, fs->PutIfAbsent("s3://bucket/log/7.json", "commit-7"));
}

TEST_F(S3FileSystemTest, ServerIgnoringConditionalPutIsRefusedWithAdvice) {
  FileSystemPtr fs = Make();
  transport_->Reply(200);
  transport_->Reply(200);  // second conditional PUT also "succeeds"
  transport_->Reply(204);
  Status st = fs->PutIfAbsent("s3://bucket/log/0.json", "x");
  ASSERT_RAISES(NotSupported, st);
  EXPECT_NE(st.message().find("singleWriter"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("bucket 'bucket'"), std::string::npos);
}

TEST_F(S3FileSystemTest, SingleWriterModeChecksThenPutsOnSuchServers) {
  options_.single_writer = true;
  FileSystemPtr fs = Make();
  transport_->Reply(200);
  transport_->Reply(200);
  transport_->Reply(204);
  transport_->Reply(404);  // HEAD: absent
  transport_->Reply(200);  // PUT
  ASSERT_OK(fs->PutIfAbsent("s3://bucket/log/0.json", "x"));
  transport_->Reply(200, "", {{"content-length", "1"}});  // HEAD: present
  ASSERT_RAISES(AlreadyExists, fs->PutIfAbsent("s3://bucket/log/0.json", "y"));
}

TEST_F(S3FileSystemTest, ListDirFollowsContinuationTokens) {
  FileSystemPtr fs = Make();
  transport_->Reply(200,
                    "<ListBucketResult><IsTruncated>true</IsTruncated>"
                    "<NextContinuationToken>t2</NextContinuationToken>"
                    "<Contents><Key>t/b.json</Key><Size>2</Size></Contents>"
                    "<CommonPrefixes><Prefix>t/_delta_log/</Prefix></CommonPrefixes>"
                    "</ListBucketResult>");
  transport_->Reply(200,
                    "<ListBucketResult><IsTruncated>false</IsTruncated>"
                    "<Contents><Key>t/a.json</Key><Size>1</Size></Contents>"
                    "</ListBucketResult>");
  ASSERT_OK_AND_ASSIGN(std::vector<FileInfo> entries, fs->ListDir("s3a://bucket/t/"));
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].path, "s3a://bucket/t/_delta_log");
  EXPECT_TRUE(entries[0].is_dir);
  EXPECT_EQ(entries[1].path, "s3a://bucket/t/a.json");
  EXPECT_EQ(entries[2].path, "s3a://bucket/t/b.json");
  EXPECT_EQ(entries[2].size, 2);
  ASSERT_EQ(transport_->requests().size(), 2u);
  EXPECT_NE(transport_->requests()[1].find("continuation-token=t2"), std::string::npos);
  EXPECT_NE(transport_->requests()[0].find("delimiter=%2F"), std::string::npos);
}

TEST_F(S3FileSystemTest, OpenReadsTheTailAndRangedReadsPinTheVersion) {
  FileSystemPtr fs = Make();
  transport_->Reply(206, std::string(65536, 'T'),
                    {{"content-range", "bytes 34464-99999/100000"}, {"etag", "\"v1\""}});
  ASSERT_OK_AND_ASSIGN(auto file, fs->OpenForRead("s3://bucket/k"));
  ASSERT_OK_AND_ASSIGN(int64_t size, file->Size());
  EXPECT_EQ(size, 100000);
  EXPECT_EQ(transport_->requests()[0], "GET http://127.0.0.1:9000/bucket/k range=bytes=-65536");
  // The footer comes from the cached tail, without a request.
  ASSERT_OK_AND_ASSIGN(std::string footer, file->ReadAt(99990, 50));
  EXPECT_EQ(footer, std::string(10, 'T'));
  EXPECT_EQ(transport_->requests().size(), 1u);
  transport_->Reply(206, "0123456789");
  ASSERT_OK_AND_ASSIGN(std::string data, file->ReadAt(100, 10));
  EXPECT_EQ(data, "0123456789");
  EXPECT_EQ(transport_->requests()[1],
            "GET http://127.0.0.1:9000/bucket/k range=bytes=100-109 if-match=\"v1\"");
  ASSERT_OK_AND_ASSIGN(std::string past_end, file->ReadAt(100000, 5));
  EXPECT_TRUE(past_end.empty());
  transport_->Reply(412, ErrorXml("PreconditionFailed", "pre"));
  Status replaced = file->ReadAt(0, 5).status();
  ASSERT_RAISES(IOError, replaced);
  EXPECT_NE(replaced.message().find("replaced after it was opened"), std::string::npos);
}

TEST_F(S3FileSystemTest, SmallObjectIsReadWhollyOnOpen) {
  FileSystemPtr fs = Make();
  transport_->Reply(206, "tiny", {{"content-range", "bytes 0-3/4"}});
  ASSERT_OK_AND_ASSIGN(auto file, fs->OpenForRead("s3://bucket/k"));
  ASSERT_OK_AND_ASSIGN(std::string middle, file->ReadAt(1, 2));
  EXPECT_EQ(middle, "in");
  ASSERT_OK_AND_ASSIGN(std::string all, file->ReadAt(0, INT64_MAX));
  EXPECT_EQ(all, "tiny");
  EXPECT_EQ(transport_->requests().size(), 1u);
}

TEST_F(S3FileSystemTest, EmptyObjectOpensWithSizeZero) {
  FileSystemPtr fs = Make();
  transport_->Reply(416, ErrorXml("InvalidRange", "The requested range is not satisfiable"));
  transport_->Reply(200, "", {{"content-length", "0"}});
  ASSERT_OK_AND_ASSIGN(auto file, fs->OpenForRead("s3://bucket/empty"));
  ASSERT_OK_AND_ASSIGN(int64_t size, file->Size());
  EXPECT_EQ(size, 0);
  ASSERT_OK_AND_ASSIGN(std::string none, file->ReadAt(0, 10));
  EXPECT_TRUE(none.empty());
}

TEST_F(S3FileSystemTest, FailedMultipartUploadIsAborted) {
  options_.part_size = 5 << 20;
  FileSystemPtr fs = Make();
  transport_->Reply(200,
                    "<InitiateMultipartUploadResult><UploadId>up-1</UploadId>"
                    "</InitiateMultipartUploadResult>");
  transport_->Reply(403, ErrorXml("AccessDenied", "denied"));
  transport_->Reply(204);  // abort
  ASSERT_OK_AND_ASSIGN(auto writer, fs->OpenForWrite("s3://bucket/big.parquet"));
  // The part uploads in the background; its failure surfaces on Close().
  ASSERT_OK(writer->Append(std::string(5 << 20, 'x')));
  ASSERT_RAISES(IOError, writer->Close());
  ASSERT_EQ(transport_->requests().size(), 3u);
  EXPECT_EQ(transport_->requests()[2],
            "DELETE http://127.0.0.1:9000/bucket/big.parquet?uploadId=up-1");
}

TEST_F(S3FileSystemTest, LostInitiateAnswerLeavesNoStrayUpload) {
  options_.part_size = 5 << 20;
  FileSystemPtr fs = Make();
  // The first initiate started upload up-1 on the server but its answer was
  // lost; the retry started up-2.
  transport_->Fail(Status::IOError("connection reset").WithRetryable(true));
  transport_->Reply(200,
                    "<InitiateMultipartUploadResult><UploadId>up-2</UploadId>"
                    "</InitiateMultipartUploadResult>");
  transport_->Reply(200,
                    "<ListMultipartUploadsResult>"
                    "<Upload><Key>big.parquet</Key><UploadId>up-1</UploadId></Upload>"
                    "<Upload><Key>big.parquet</Key><UploadId>up-2</UploadId></Upload>"
                    "<Upload><Key>big.parquet.other</Key><UploadId>x-9</UploadId></Upload>"
                    "</ListMultipartUploadsResult>");
  transport_->Reply(204);                            // abort up-1
  transport_->Reply(200, "", {{"etag", "\"e1\""}});  // part 1
  transport_->Reply(200, "<CompleteMultipartUploadResult/>");
  ASSERT_OK_AND_ASSIGN(auto writer, fs->OpenForWrite("s3://bucket/big.parquet"));
  ASSERT_OK(writer->Append(std::string(5 << 20, 'x')));
  ASSERT_OK(writer->Close());
  const auto& requests = transport_->requests();
  ASSERT_EQ(requests.size(), 6u);
  EXPECT_EQ(requests[3], "DELETE http://127.0.0.1:9000/bucket/big.parquet?uploadId=up-1");
  EXPECT_EQ(requests[5], "POST http://127.0.0.1:9000/bucket/big.parquet?uploadId=up-2");
}

TEST_F(S3FileSystemTest, LostProbeAnswerStillFindsConditionalPutEnforced) {
  FileSystemPtr fs = Make();
  transport_->Fail(Status::IOError("connection reset").WithRetryable(true));
  transport_->Reply(412, ErrorXml("PreconditionFailed", "pre"));  // our own first attempt
  transport_->Reply(412, ErrorXml("PreconditionFailed", "pre"));  // the real second PUT
  transport_->Reply(204);
  transport_->Reply(200);
  ASSERT_OK(fs->PutIfAbsent("s3://bucket/log/0.json", "mine"));
}

// Holds part uploads until released, counting how many are in flight at once.
class GatedTransport : public s3::HttpTransport {
 public:
  Result<HttpResponse> Send(const HttpRequest& request) override {
    HttpResponse response;
    response.status = 200;
    if (request.method == "POST" && request.url.ends_with("?uploads=")) {
      response.body =
          "<InitiateMultipartUploadResult><UploadId>up</UploadId>"
          "</InitiateMultipartUploadResult>";
      return response;
    }
    if (request.method == "POST") {
      std::lock_guard<std::mutex> lock(mutex_);
      complete_body_ = std::string(request.body);
      return response;
    }
    std::unique_lock<std::mutex> lock(mutex_);
    ++in_flight_;
    max_in_flight_ = std::max(max_in_flight_, in_flight_);
    changed_.notify_all();
    changed_.wait(lock, [this] { return open_; });
    --in_flight_;
    size_t number_at = request.url.find("partNumber=") + 11;
    std::string number =
        request.url.substr(number_at, request.url.find('&', number_at) - number_at);
    response.headers.emplace_back("etag", "\"e" + number + "\"");
    return response;
  }

  void WaitForInFlight(int count) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return in_flight_ == count; });
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }
  int max_in_flight() {
    std::lock_guard<std::mutex> lock(mutex_);
    return max_in_flight_;
  }
  std::string complete_body() {
    std::lock_guard<std::mutex> lock(mutex_);
    return complete_body_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool open_ = false;
  int in_flight_ = 0;
  int max_in_flight_ = 0;
  std::string complete_body_;
};

TEST_F(S3FileSystemTest, PartsUploadInParallelWhileAppendingContinues) {
  options_.part_size = 5 << 20;
  options_.max_parallel_parts = 2;
  auto gated = std::make_shared<GatedTransport>();
  ASSERT_OK_AND_ASSIGN(FileSystemPtr fs,
                       s3::MakeS3FileSystemForTest(
                           options_, gated, [](int64_t) {}, [] { return int64_t{1440938160}; }));
  ASSERT_OK_AND_ASSIGN(auto writer, fs->OpenForWrite("s3://bucket/big.parquet"));
  // Two parts are accepted while neither upload has finished.
  ASSERT_OK(writer->Append(std::string(10 << 20, 'x')));
  gated->WaitForInFlight(2);
  gated->Open();
  ASSERT_OK(writer->Append(std::string((15 << 20) + 7, 'y')));
  ASSERT_OK(writer->Close());
  EXPECT_EQ(gated->max_in_flight(), 2);  // the window bounds memory
  EXPECT_EQ(gated->complete_body(),
            "<CompleteMultipartUpload>"
            "<Part><PartNumber>1</PartNumber><ETag>&quot;e1&quot;</ETag></Part>"
            "<Part><PartNumber>2</PartNumber><ETag>&quot;e2&quot;</ETag></Part>"
            "<Part><PartNumber>3</PartNumber><ETag>&quot;e3&quot;</ETag></Part>"
            "<Part><PartNumber>4</PartNumber><ETag>&quot;e4&quot;</ETag></Part>"
            "<Part><PartNumber>5</PartNumber><ETag>&quot;e5&quot;</ETag></Part>"
            "<Part><PartNumber>6</PartNumber><ETag>&quot;e6&quot;</ETag></Part>"
            "</CompleteMultipartUpload>");
  EXPECT_EQ(writer->bytes_written(), (25 << 20) + 7);
}

TEST_F(S3FileSystemTest, SmallFileIsOnePutOnClose) {
  FileSystemPtr fs = Make();
  ASSERT_OK_AND_ASSIGN(auto writer, fs->OpenForWrite("s3://bucket/small"));
  ASSERT_OK(writer->Append("abc"));
  EXPECT_TRUE(transport_->requests().empty());
  transport_->Reply(200);
  ASSERT_OK(writer->Close());
  ASSERT_EQ(transport_->requests().size(), 1u);
  EXPECT_EQ(transport_->requests()[0], "PUT http://127.0.0.1:9000/bucket/small");
}

// --- Option resolution ----------------------------------------------------

class ResolveS3OptionsTest : public ::testing::Test {
 protected:
  EnvLookup Env() {
    return [this](std::string_view name) -> std::optional<std::string> {
      auto it = env_.find(std::string(name));
      if (it == env_.end()) return std::nullopt;
      return it->second;
    };
  }

  void WriteCredentials(const std::string& text) {
    std::string path = dir_.path() + "/credentials";
    std::ofstream(path) << text;
    env_["AWS_SHARED_CREDENTIALS_FILE"] = path;
  }

  testing::TempDir dir_;
  std::map<std::string, std::string> env_;
};

TEST_F(ResolveS3OptionsTest, JobSettingsWinOverEnvironment) {
  env_ = {{"AWS_ACCESS_KEY_ID", "ENVKEY"},
          {"AWS_SECRET_ACCESS_KEY", "envsecret"},
          {"AWS_ENDPOINT_URL", "http://env:9000"},
          {"AWS_REGION", "eu-west-1"}};
  ASSERT_OK_AND_ASSIGN(S3Options options, ResolveS3Options({{"endpoint", "http://job:9000"},
                                                            {"accessKey", "JOBKEY"},
                                                            {"secretKey", "jobsecret"}},
                                                           Env()));
  EXPECT_EQ(options.endpoint, "http://job:9000");
  EXPECT_EQ(options.access_key, "JOBKEY");
  EXPECT_EQ(options.secret_key, "jobsecret");
  EXPECT_EQ(options.region, "eu-west-1");
  EXPECT_TRUE(options.path_style);
}

TEST_F(ResolveS3OptionsTest, CaBundleFromTheJobOrAwsCaBundle) {
  env_ = {{"AWS_ACCESS_KEY_ID", "K"}, {"AWS_SECRET_ACCESS_KEY", "s"}};
  const std::string pem = dir_.path() + "/ca.pem";
  std::ofstream(pem) << "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
  const std::string other = dir_.path() + "/other.pem";
  std::ofstream(other) << "-----BEGIN CERTIFICATE-----\nMIIC\n-----END CERTIFICATE-----\n";
  ASSERT_OK_AND_ASSIGN(S3Options none, ResolveS3Options({}, Env()));
  EXPECT_EQ(none.ca_bundle, "");
  env_["AWS_CA_BUNDLE"] = other;
  ASSERT_OK_AND_ASSIGN(S3Options from_env, ResolveS3Options({}, Env()));
  EXPECT_EQ(from_env.ca_bundle, other);
  ASSERT_OK_AND_ASSIGN(S3Options from_job, ResolveS3Options({{"caBundle", pem}}, Env()));
  EXPECT_EQ(from_job.ca_bundle, pem);

  Result<S3Options> missing = ResolveS3Options({{"caBundle", dir_.path() + "/nope.pem"}}, Env());
  ASSERT_RAISES(InvalidArgument, missing);
  EXPECT_NE(missing.status().message().find("storage.s3.caBundle: cannot read"), std::string::npos)
      << missing.status().message();
  const std::string junk = dir_.path() + "/junk.pem";
  std::ofstream(junk) << "not a certificate\n";
  env_["AWS_CA_BUNDLE"] = junk;
  Result<S3Options> bad = ResolveS3Options({}, Env());
  ASSERT_RAISES(InvalidArgument, bad);
  EXPECT_NE(bad.status().message().find("AWS_CA_BUNDLE: "), std::string::npos)
      << bad.status().message();
}

TEST_F(ResolveS3OptionsTest, EnvironmentWinsOverProfileFile) {
  WriteCredentials("[default]\naws_access_key_id = FILEKEY\naws_secret_access_key = f\n");
  env_["AWS_ACCESS_KEY_ID"] = "ENVKEY";
  env_["AWS_SECRET_ACCESS_KEY"] = "e";
  env_["AWS_SESSION_TOKEN"] = "tok";
  ASSERT_OK_AND_ASSIGN(S3Options options, ResolveS3Options({}, Env()));
  EXPECT_EQ(options.access_key, "ENVKEY");
  EXPECT_EQ(options.session_token, "tok");
  EXPECT_EQ(options.endpoint, "https://s3.us-east-1.amazonaws.com");
  EXPECT_FALSE(options.path_style);
}

TEST_F(ResolveS3OptionsTest, ProfileFromFileWhenNothingElseIsSet) {
  WriteCredentials(
      "[default]\naws_access_key_id = DEF\naws_secret_access_key = d\n"
      "[profile ci]\naws_access_key_id=CIKEY\naws_secret_access_key=c\nregion = ap-south-1\n");
  env_["AWS_PROFILE"] = "ci";
  ASSERT_OK_AND_ASSIGN(S3Options options, ResolveS3Options({}, Env()));
  EXPECT_EQ(options.access_key, "CIKEY");
  EXPECT_EQ(options.region, "ap-south-1");
  EXPECT_NE(options.credentials_source.find("profile 'ci'"), std::string::npos);
}

TEST_F(ResolveS3OptionsTest, ExplicitProfileWinsOverEnvironmentKeys) {
  WriteCredentials("[prod]\naws_access_key_id = PROD\naws_secret_access_key = p\n");
  env_["AWS_ACCESS_KEY_ID"] = "ENVKEY";
  env_["AWS_SECRET_ACCESS_KEY"] = "e";
  ASSERT_OK_AND_ASSIGN(S3Options options, ResolveS3Options({{"profile", "prod"}}, Env()));
  EXPECT_EQ(options.access_key, "PROD");
  ASSERT_RAISES(InvalidArgument, ResolveS3Options({{"profile", "missing"}}, Env()));
}

TEST_F(ResolveS3OptionsTest, HadoopNamesAndFlagsAreAccepted) {
  ASSERT_OK_AND_ASSIGN(S3Options options,
                       ResolveS3Options({{"fs.s3a.endpoint", "https://minio:9000"},
                                         {"fs.s3a.access.key", "K"},
                                         {"fs.s3a.secret.key", "S"},
                                         {"fs.s3a.path.style.access", "false"},
                                         {"singleWriter", "true"}},
                                        Env()));
  EXPECT_EQ(options.endpoint, "https://minio:9000");
  EXPECT_FALSE(options.path_style);
  EXPECT_TRUE(options.single_writer);
}

TEST_F(ResolveS3OptionsTest, MissingCredentialsListWhereSiltLooked) {
  env_["HOME"] = dir_.path();
  Result<S3Options> options = ResolveS3Options({}, Env());
  ASSERT_RAISES(InvalidArgument, options);
  EXPECT_NE(options.status().message().find("AWS_ACCESS_KEY_ID"), std::string::npos);
  EXPECT_NE(options.status().message().find(dir_.path() + "/.aws/credentials"), std::string::npos);
}

TEST_F(ResolveS3OptionsTest, BadValuesNameTheirKey) {
  std::map<std::string, std::string> base = {{"accessKey", "K"}, {"secretKey", "S"}};
  auto with = [&](std::string key, std::string value) {
    auto copy = base;
    copy[key] = value;
    return copy;
  };
  Result<S3Options> bad_flag = ResolveS3Options(with("pathStyleAccess", "maybe"), Env());
  ASSERT_RAISES(InvalidArgument, bad_flag);
  EXPECT_NE(bad_flag.status().message().find("storage.s3.pathStyleAccess"), std::string::npos);
  ASSERT_RAISES(InvalidArgument, ResolveS3Options(with("endpoint", "minio:9000"), Env()));
  ASSERT_RAISES(InvalidArgument, ResolveS3Options(with("partSizeBytes", "1000"), Env()));
  ASSERT_RAISES(InvalidArgument, ResolveS3Options({{"accessKey", "K"}}, Env()));
}

}  // namespace
}  // namespace silt::fs
