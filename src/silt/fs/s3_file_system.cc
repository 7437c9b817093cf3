#include "silt/fs/s3_file_system.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <sstream>
#include <system_error>
#include <thread>

#include "silt/base/logging.h"
#include "silt/base/strings.h"
#include "silt/base/uuid.h"
#include "silt/fs/path_internal.h"
#include "silt/fs/s3_internal.h"
#include "silt/metrics/default_registry.h"

namespace silt::fs {

namespace {

using s3::Headers;
using s3::HttpRequest;
using s3::HttpResponse;
using s3::HttpTransport;
using s3::kLineWhitespace;

constexpr int64_t kMinPartSize = 5 << 20;
constexpr size_t kDeleteBatch = 1000;

struct Endpoint {
  std::string scheme;     // "http" or "https"
  std::string authority;  // "127.0.0.1:9000" (default ports dropped)
  std::string display;    // "http://127.0.0.1:9000" for messages
};

Result<Endpoint> ParseEndpoint(const std::string& text) {
  Endpoint out;
  std::string_view rest;
  if (text.starts_with("http://")) {
    out.scheme = "http";
    rest = std::string_view(text).substr(7);
  } else if (text.starts_with("https://")) {
    out.scheme = "https";
    rest = std::string_view(text).substr(8);
  } else {
    return Status::InvalidArgument("S3 endpoint '", text, "' must start with http:// or https://");
  }
  while (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  if (rest.empty() || rest.find_first_of("/?#@ ") != std::string_view::npos) {
    return Status::InvalidArgument("S3 endpoint '", text,
                                   "' must be scheme://host[:port] with no path");
  }
  std::string authority = AsciiLower(rest);
  if (out.scheme == "http" && authority.ends_with(":80")) authority.resize(authority.size() - 3);
  if (out.scheme == "https" && authority.ends_with(":443")) authority.resize(authority.size() - 4);
  out.authority = authority;
  out.display = out.scheme + "://" + authority;
  return out;
}

struct S3Path {
  std::string root;  // "s3://" or "s3a://" as the caller wrote it
  std::string bucket;
  std::string key;  // no leading or trailing '/'
};

Result<S3Path> ParseS3Path(const std::string& path) {
  std::string_view scheme = internal::Scheme(path);
  if (!EqualsIgnoreCase(scheme, "s3") && !EqualsIgnoreCase(scheme, "s3a")) {
    return Status::InvalidArgument("'", path, "' is not an s3:// or s3a:// path");
  }
  S3Path out;
  out.root = std::string(path.substr(0, scheme.size() + 3));
  std::string_view rest = std::string_view(path).substr(out.root.size());
  size_t slash = rest.find('/');
  out.bucket = std::string(rest.substr(0, slash));
  if (out.bucket.empty()) {
    return Status::InvalidArgument("S3 path '", path, "' has no bucket (expected s3://bucket/key)");
  }
  if (slash != std::string_view::npos) {
    std::string_view key = rest.substr(slash + 1);
    while (!key.empty() && key.front() == '/') key.remove_prefix(1);
    while (!key.empty() && key.back() == '/') key.remove_suffix(1);
    out.key = std::string(key);
  }
  return out;
}

// What a failed request was for, to phrase the error.
struct Target {
  std::string action;   // "read", "write", "list", ...
  std::string display;  // "s3://bucket/key"
  std::string bucket;
};

struct Call {
  std::string method;
  std::string bucket;
  std::string key;
  std::vector<std::pair<std::string, std::string>> query;
  Headers headers;
  std::string_view body;
  // Non-2xx statuses handed back to the caller instead of becoming errors.
  std::vector<int64_t> accept;
  // Safe to repeat after a lost response.
  bool idempotent = true;
};

// State shared by the file system, its readers and its writers.
class S3Client {
 public:
  S3Client(S3Options options, Endpoint endpoint, std::shared_ptr<HttpTransport> transport,
           std::function<void(int64_t)> sleep_ms, std::function<int64_t()> now_seconds)
      : options_(std::move(options)),
        endpoint_(std::move(endpoint)),
        transport_(std::move(transport)),
        sleep_ms_(std::move(sleep_ms)),
        now_seconds_(std::move(now_seconds)),
        rng_(std::random_device{}()) {
    policy_.max_attempts = std::max(1, options_.max_attempts);
    policy_.outage_budget_ms = std::max<int64_t>(0, options_.retry_timeout_ms);
  }

  const S3Options& options() const { return options_; }
  const Endpoint& endpoint() const { return endpoint_; }

  // Sends `call`, retrying transient failures of idempotent calls.
  // `*retried_after_failure` (optional) tells whether an earlier attempt
  // failed in a way that may have reached the server.
  Result<HttpResponse> Execute(const Call& call, const Target& target,
                               bool* retried_after_failure = nullptr) {
    if (retried_after_failure != nullptr) *retried_after_failure = false;
    Status last;
    bool last_is_outage = false;  // refused/reset/timed out, or 503: a restart
    int64_t waited_ms = 0;
    for (int attempt = 1;; ++attempt) {
      if (attempt > 1) {
        // A wrong endpoint fails within max_attempts; a server that has
        // answered before is in an outage and gets the outage budget.
        const bool within_attempts = attempt <= policy_.max_attempts;
        const bool in_outage = last_is_outage && answered_.load(std::memory_order_relaxed) &&
                               waited_ms < policy_.outage_budget_ms;
        if (!within_attempts && !in_outage) return last;
        int64_t delay = 0;
        {
          std::lock_guard<std::mutex> lock(rng_mutex_);
          delay = s3::BackoffDelayMs(policy_, attempt - 1, rng_);
        }
        if (!within_attempts && attempt == policy_.max_attempts + 1) {
          SILT_LOG_WARN("s3", endpoint_.display, " is failing (", last.message(),
                        "); retrying for up to ", policy_.outage_budget_ms / 1000, " s");
        }
        SILT_LOG_DEBUG("s3", "retrying ", call.method, " ", target.display, " in ", delay,
                       " ms after: ", last.message());
        metrics::CountRetry("s3", call.method);
        sleep_ms_(delay);
        waited_ms += delay;
        if (retried_after_failure != nullptr) *retried_after_failure = true;
      }
      HttpRequest request = Sign(call);
      Result<HttpResponse> response = transport_->Send(request);
      if (!response.ok()) {
        last = TransportError(response.status(), target);
        last_is_outage = true;
        if (!last.retryable() || !call.idempotent) return last;
        continue;
      }
      answered_.store(true, std::memory_order_relaxed);
      last_is_outage = response->status == 503;
      int64_t status = response->status;
      if ((status >= 200 && status < 300) ||
          std::find(call.accept.begin(), call.accept.end(), status) != call.accept.end()) {
        return std::move(*response);
      }
      s3::S3ErrorBody error = s3::ParseErrorBody(response->body);
      if (error.code.empty() && call.method == "HEAD" && status >= 400 && status < 500) {
        // HEAD answers carry no body, so "403" alone cannot tell a wrong
        // secret from a wrong key; a one-byte GET of the same key gets the
        // server's explanation.
        error = DiagnoseHead(call);
      }
      last = HttpError(status, error, response->body, target);
      if (!last.retryable() || !call.idempotent) return last;
    }
  }

  // A 2xx body that still reports an error (CompleteMultipartUpload).
  Status BodyError(const HttpResponse& response, const Target& target) const {
    s3::S3ErrorBody error = s3::ParseErrorBody(response.body);
    if (error.code.empty()) return Status::OK();
    return HttpError(500, error, response.body, target);
  }

  Status NotFound(const Target& target) const {
    return Status::NotFound("Cannot ", target.action, " '", target.display, "': No such file");
  }

 private:
  s3::S3ErrorBody DiagnoseHead(const Call& head) {
    Call get = head;
    get.method = "GET";
    get.headers.emplace_back("range", "bytes=0-0");
    Result<HttpResponse> response = transport_->Send(Sign(get));
    if (!response.ok()) return {};
    return s3::ParseErrorBody(response->body);
  }

  std::string Prefix(const Target& target) const {
    return Status::Concat("S3 ", target.action, " of '", target.display, "' at ", endpoint_.display,
                          " failed: ");
  }

  Status TransportError(const Status& status, const Target& target) const {
    return Status(status.code(), Prefix(target) + status.message(), status.retryable());
  }

  Status HttpError(int64_t status, const s3::S3ErrorBody& error, std::string_view body,
                   const Target& target) const {
    const std::string& code = error.code;
    std::string detail = error.message.empty() ? "" : " (" + error.message + ")";
    std::string why;
    bool retryable = s3::IsRetryableHttp(status, code);
    std::string source = options_.credentials_source.empty()
                             ? std::string("the configured credentials")
                             : options_.credentials_source;
    if (code == "InvalidAccessKeyId") {
      why = Status::Concat("the server does not know access key '", options_.access_key,
                           "' (InvalidAccessKeyId, HTTP ", status, "); check the access key from ",
                           source);
    } else if (code == "SignatureDoesNotMatch") {
      why = Status::Concat("the secret key does not match access key '", options_.access_key,
                           "' (SignatureDoesNotMatch, HTTP ", status,
                           "); check the secret key from ", source);
    } else if (code == "AccessDenied" || (status == 403 && code.empty())) {
      why = Status::Concat("access denied to bucket '", target.bucket, "' (",
                           code.empty() ? "HTTP 403" : "AccessDenied, HTTP 403", ")", detail,
                           ": the credentials from ", source, " are wrong or lack permission");
    } else if (code == "NoSuchBucket") {
      why = Status::Concat("bucket '", target.bucket, "' does not exist (NoSuchBucket, HTTP ",
                           status, "); create it first or fix the bucket name");
    } else if (code == "AuthorizationHeaderMalformed" || code == "PermanentRedirect" ||
               status == 301) {
      why = Status::Concat("the bucket '", target.bucket, "' is not in region '", options_.region,
                           "' or not at this endpoint (", code.empty() ? "HTTP 301" : code, ")",
                           detail, "; set storage.s3.region or AWS_REGION");
    } else if (status == 400 && body.find("HTTP request to an HTTPS server") != std::string::npos) {
      why = "the server speaks HTTPS but the endpoint is http://; use an https:// endpoint";
    } else if (code == "RequestTimeTooSkewed") {
      why = "the local clock differs too much from the server's (RequestTimeTooSkewed)";
    } else {
      why = Status::Concat(code.empty() ? "HTTP error" : code, detail, " (HTTP ", status, ")");
    }
    return Status::IOError(Prefix(target), why).WithRetryable(retryable);
  }

  HttpRequest Sign(const Call& call) const {
    std::string host = endpoint_.authority;
    std::string canonical_uri;
    std::string encoded_key = s3::UriEncode(call.key, /*encode_slash=*/false);
    if (options_.path_style) {
      canonical_uri = "/" + call.bucket;
      if (!call.key.empty()) canonical_uri += "/" + encoded_key;
    } else {
      host = call.bucket + "." + host;
      canonical_uri = "/" + encoded_key;
    }
    std::string payload_hash = s3::Sha256Hex(call.body);
    std::string amz_date = s3::AmzDate(now_seconds_());

    s3::SigningRequest signing;
    signing.method = call.method;
    signing.canonical_uri = canonical_uri;
    signing.query = call.query;
    signing.payload_hash = payload_hash;
    signing.headers = call.headers;
    signing.headers.emplace_back("host", host);
    signing.headers.emplace_back("x-amz-content-sha256", payload_hash);
    signing.headers.emplace_back("x-amz-date", amz_date);
    if (!options_.session_token.empty()) {
      signing.headers.emplace_back("x-amz-security-token", options_.session_token);
    }
    s3::SigningKeyParts key{options_.access_key, options_.secret_key, options_.region, "s3"};

    HttpRequest request;
    request.method = call.method;
    request.url = endpoint_.scheme + "://" + host + canonical_uri;
    std::string query = s3::CanonicalQueryString(call.query);
    if (!query.empty()) request.url += "?" + query;
    request.headers = signing.headers;
    request.headers.emplace_back("Authorization", s3::AuthorizationHeader(signing, key, amz_date));
    request.body = call.body;
    return request;
  }

  const S3Options options_;
  const Endpoint endpoint_;
  const std::shared_ptr<HttpTransport> transport_;
  const std::function<void(int64_t)> sleep_ms_;
  const std::function<int64_t()> now_seconds_;
  s3::RetryPolicy policy_;
  std::atomic<bool> answered_{false};  // any HTTP answer from the server yet
  std::mutex rng_mutex_;
  std::mt19937_64 rng_;  // guarded by rng_mutex_
};

// Opened with one GET of the object's last kTailBytes (a suffix range), which
// also tells the size: Parquet readers start with the footer, and small
// objects (commits, checkpoint files) are then read without another request.
// Later ranged GETs carry `If-Match: <ETag>`, so a reader never mixes bytes
// of two versions of an object: the tail (or whole small object) it cached
// stays readable across a replace, and a range outside it is an error once
// the object was replaced.
class S3RandomAccessFile final : public RandomAccessFile {
 public:
  static constexpr int64_t kTailBytes = 64 << 10;

  S3RandomAccessFile(std::shared_ptr<S3Client> client, S3Path path, std::string display,
                     int64_t size, std::string etag, int64_t tail_offset, std::string tail)
      : client_(std::move(client)),
        path_(std::move(path)),
        display_(std::move(display)),
        size_(size),
        etag_(std::move(etag)),
        tail_offset_(tail_offset),
        tail_(std::move(tail)) {}

  Result<int64_t> Size() override { return size_; }

  Result<std::string> ReadAt(int64_t offset, int64_t length) override {
    if (offset < 0 || length < 0) {
      return Status::InvalidArgument("Cannot read '", display_, "': negative offset ", offset,
                                     " or length ", length);
    }
    if (length == 0 || offset >= size_) return std::string();
    int64_t end = offset + std::min(length, size_ - offset);  // exclusive
    if (offset >= tail_offset_) {
      return tail_.substr(static_cast<size_t>(offset - tail_offset_),
                          static_cast<size_t>(end - offset));
    }
    Call call;
    call.method = "GET";
    call.bucket = path_.bucket;
    call.key = path_.key;
    call.headers.emplace_back("range", Status::Concat("bytes=", offset, "-", end - 1));
    if (!etag_.empty()) call.headers.emplace_back("if-match", etag_);
    call.accept = {404, 412, 416};
    Target target{"read", display_, path_.bucket};
    SILT_ASSIGN_OR_RETURN(HttpResponse response, client_->Execute(call, target));
    if (response.status == 404) return client_->NotFound(target);
    if (response.status == 412) {
      return Status::IOError("Cannot read '", display_, "' at ", client_->endpoint().display,
                             ": the object was replaced after it was opened");
    }
    if (response.status == 416) return std::string();
    if (response.status == 200) {
      // The server ignored the range and sent the whole object.
      if (offset >= static_cast<int64_t>(response.body.size())) return std::string();
      return response.body.substr(static_cast<size_t>(offset), static_cast<size_t>(end - offset));
    }
    return std::move(response.body);
  }

 private:
  const std::shared_ptr<S3Client> client_;
  const S3Path path_;
  const std::string display_;
  const int64_t size_;
  const std::string etag_;
  const int64_t tail_offset_;  // where tail_ starts; size_ when nothing is cached
  const std::string tail_;     // the object's bytes [tail_offset_, size_)
};

// Multipart upload. A file smaller than one part is a single PUT on Close().
// Larger files start an upload when the first part is full; each full part is
// handed to a background thread so encoding continues while it uploads. At
// most `max_parallel_parts` parts are in flight, so a writer holds at most
// (max_parallel_parts + 1) * part_size bytes. On any failure, Abort() or
// destruction, the parts in flight are waited for and the upload is aborted,
// so the server keeps no orphaned parts.
class S3WritableFile final : public WritableFile {
 public:
  S3WritableFile(std::shared_ptr<S3Client> client, S3Path path, std::string display)
      : client_(std::move(client)),
        path_(std::move(path)),
        display_(std::move(display)),
        part_size_(static_cast<size_t>(std::max(kMinPartSize, client_->options().part_size))),
        max_parallel_parts_(
            static_cast<size_t>(std::max(1, client_->options().max_parallel_parts))) {}

  ~S3WritableFile() override {
    if (!finished_) Abort().IgnoreError("an unclosed writer discards its upload");
  }

  Status Append(std::string_view data) override {
    SILT_RETURN_NOT_OK(CheckOpen());
    bytes_written_ += static_cast<int64_t>(data.size());
    while (!data.empty()) {
      size_t take = std::min(part_size_ - buffer_.size(), data.size());
      buffer_.append(data.substr(0, take));
      data.remove_prefix(take);
      if (buffer_.size() == part_size_) {
        Status st = SendBufferAsPart();
        if (!st.ok()) return Fail(st);
      }
    }
    return Status::OK();
  }

  Status Close() override {
    SILT_RETURN_NOT_OK(CheckOpen());
    Target target{"write", display_, path_.bucket};
    if (upload_id_.empty()) {
      Call call;
      call.method = "PUT";
      call.bucket = path_.bucket;
      call.key = path_.key;
      call.body = buffer_;
      Status st = client_->Execute(call, target).status();
      if (!st.ok()) return Fail(st);
      finished_ = true;
      buffer_.clear();
      return Status::OK();
    }
    if (!buffer_.empty()) {
      Status st = SendBufferAsPart();
      if (!st.ok()) return Fail(st);
    }
    while (!in_flight_.empty()) {
      Status st = FinishOldestPart();
      if (!st.ok()) return Fail(st);
    }
    Status st = Complete(target);
    if (!st.ok()) return Fail(st);
    finished_ = true;
    return Status::OK();
  }

  Status Abort() override {
    if (finished_) return Status::OK();
    finished_ = true;
    buffer_.clear();
    // Parts still uploading would otherwise land after the abort and stay
    // behind as an orphaned upload.
    for (auto& part : in_flight_) part.wait();
    in_flight_.clear();
    if (upload_id_.empty()) return Status::OK();
    return AbortUpload(upload_id_);
  }

  int64_t bytes_written() const override { return bytes_written_; }

 private:
  Status CheckOpen() const {
    if (finished_) {
      return Status::InvalidArgument("S3 writer for '", display_, "' is already closed");
    }
    return Status::OK();
  }

  // Aborts the upload after `cause` so no orphaned parts stay behind.
  Status Fail(const Status& cause) {
    Status aborted = Abort();
    if (!aborted.ok()) {
      SILT_LOG_WARN("s3", "could not abort the multipart upload of ", display_, ": ",
                    aborted.message());
    }
    return cause;
  }

  Status AbortUpload(const std::string& upload_id) {
    Call call;
    call.method = "DELETE";
    call.bucket = path_.bucket;
    call.key = path_.key;
    call.query = {{"uploadId", upload_id}};
    call.accept = {404};
    Target target{"abort the upload", display_, path_.bucket};
    return client_->Execute(call, target).status();
  }

  Status StartUpload() {
    Call call;
    call.method = "POST";
    call.bucket = path_.bucket;
    call.key = path_.key;
    call.query = {{"uploads", ""}};
    Target target{"start a multipart upload", display_, path_.bucket};
    bool retried = false;
    SILT_ASSIGN_OR_RETURN(HttpResponse response, client_->Execute(call, target, &retried));
    std::optional<std::string> id = s3::XmlFirst(response.body, "UploadId");
    if (!id || id->empty()) {
      return Status::IOError("S3 multipart upload of '", display_, "' at ",
                             client_->endpoint().display, " failed: the server sent no UploadId");
    }
    upload_id_ = std::move(*id);
    if (retried) AbortStrayUploads();
    return Status::OK();
  }

  // An initiate whose answer was lost and was then retried started an upload
  // nobody will finish. Data files have keys of their own (a UUID each), so
  // every other upload of this exact key is such a leftover of ours.
  void AbortStrayUploads() {
    Call call;
    call.method = "GET";
    call.bucket = path_.bucket;
    call.query = {{"uploads", ""}, {"prefix", path_.key}};
    Target target{"list the multipart uploads of", display_, path_.bucket};
    Result<HttpResponse> response = client_->Execute(call, target);
    if (!response.ok()) {
      SILT_LOG_WARN("s3", "could not look for stray multipart uploads of ", display_, ": ",
                    response.status().message());
      return;
    }
    for (const std::string& upload : s3::XmlElements(response->body, "Upload")) {
      std::optional<std::string> key = s3::XmlFirst(upload, "Key");
      std::optional<std::string> id = s3::XmlFirst(upload, "UploadId");
      if (!key || !id || *key != path_.key || *id == upload_id_) continue;
      Status st = AbortUpload(*id);
      if (!st.ok()) {
        SILT_LOG_WARN("s3", "could not abort a stray multipart upload of ", display_, ": ",
                      st.message());
      }
    }
  }

  // Hands the buffer to a background upload, first waiting for the oldest
  // part when `max_parallel_parts_` are in flight.
  Status SendBufferAsPart() {
    if (upload_id_.empty()) SILT_RETURN_NOT_OK(StartUpload());
    while (in_flight_.size() >= max_parallel_parts_) SILT_RETURN_NOT_OK(FinishOldestPart());
    int64_t number = next_part_number_++;
    auto data = std::make_shared<const std::string>(std::move(buffer_));
    buffer_ = std::string();
    // A file past its first part usually has more: fill the next part
    // without growing the buffer step by step.
    buffer_.reserve(part_size_);
    auto upload = [client = client_, path = path_, display = display_, upload_id = upload_id_,
                   number,
                   data]() { return UploadPart(*client, path, display, upload_id, number, *data); };
    try {
      in_flight_.push_back(std::async(std::launch::async, upload));
    } catch (const std::system_error&) {
      // No thread to spare: upload in this thread instead.
      std::promise<Result<std::string>> done;
      done.set_value(upload());
      in_flight_.push_back(done.get_future());
    }
    return Status::OK();
  }

  Status FinishOldestPart() {
    Result<std::string> etag = in_flight_.front().get();
    in_flight_.pop_front();
    SILT_RETURN_NOT_OK(etag.status());
    etags_.push_back(std::move(*etag));
    return Status::OK();
  }

  static Result<std::string> UploadPart(S3Client& client, const S3Path& path,
                                        const std::string& display, const std::string& upload_id,
                                        int64_t number, std::string_view data) {
    Call call;
    call.method = "PUT";
    call.bucket = path.bucket;
    call.key = path.key;
    call.query = {{"partNumber", std::to_string(number)}, {"uploadId", upload_id}};
    call.body = data;
    Target target{Status::Concat("upload part ", number), display, path.bucket};
    SILT_ASSIGN_OR_RETURN(HttpResponse response, client.Execute(call, target));
    std::optional<std::string> etag = response.Header("etag");
    if (!etag) {
      return Status::IOError("S3 upload of part ", number, " of '", display, "' at ",
                             client.endpoint().display, " failed: the server sent no ETag");
    }
    return std::move(*etag);
  }

  Status Complete(const Target& target) {
    std::string body = "<CompleteMultipartUpload>";
    for (size_t part_idx = 0; part_idx < etags_.size(); ++part_idx) {
      body += "<Part><PartNumber>" + std::to_string(part_idx + 1) + "</PartNumber><ETag>" +
              s3::XmlEscape(etags_[part_idx]) + "</ETag></Part>";
    }
    body += "</CompleteMultipartUpload>";
    Call call;
    call.method = "POST";
    call.bucket = path_.bucket;
    call.key = path_.key;
    call.query = {{"uploadId", upload_id_}};
    call.body = body;
    call.accept = {404};
    bool retried = false;
    SILT_ASSIGN_OR_RETURN(HttpResponse response, client_->Execute(call, target, &retried));
    if (response.status == 404 && retried) {
      // The first attempt completed the upload but its answer was lost: the
      // upload id is gone and the object is there with our size.
      Call head;
      head.method = "HEAD";
      head.bucket = path_.bucket;
      head.key = path_.key;
      head.accept = {404};
      SILT_ASSIGN_OR_RETURN(HttpResponse info, client_->Execute(head, target));
      if (info.status == 200 &&
          info.Header("content-length").value_or("") == std::to_string(bytes_written_)) {
        upload_id_.clear();
        return Status::OK();
      }
    }
    if (response.status == 404) {
      return Status::IOError("S3 write of '", display_, "' at ", client_->endpoint().display,
                             " failed: the multipart upload vanished before completion");
    }
    SILT_RETURN_NOT_OK(client_->BodyError(response, target));
    upload_id_.clear();
    return Status::OK();
  }

  const std::shared_ptr<S3Client> client_;
  const S3Path path_;
  const std::string display_;
  const size_t part_size_;
  const size_t max_parallel_parts_;
  std::string buffer_;
  std::string upload_id_;
  int64_t next_part_number_ = 1;
  std::deque<std::future<Result<std::string>>> in_flight_;  // oldest first
  std::vector<std::string> etags_;                          // of finished parts, in order
  int64_t bytes_written_ = 0;
  bool finished_ = false;
};

std::string Display(const S3Path& path) {
  std::string out = path.root + path.bucket;
  if (!path.key.empty()) out += "/" + path.key;
  return out;
}

class S3FileSystem final : public FileSystem {
 public:
  explicit S3FileSystem(std::shared_ptr<S3Client> client) : client_(std::move(client)) {}

  std::string_view name() const override { return "s3"; }

  Result<std::unique_ptr<RandomAccessFile>> OpenForRead(const std::string& path) override {
    SILT_ASSIGN_OR_RETURN(S3Path p, ParseS3Path(path));
    Target target{"open", Display(p), p.bucket};
    Call call;
    call.method = "GET";
    call.bucket = p.bucket;
    call.key = p.key;
    call.headers.emplace_back("range", Status::Concat("bytes=-", S3RandomAccessFile::kTailBytes));
    call.accept = {404, 416};
    SILT_ASSIGN_OR_RETURN(HttpResponse response, client_->Execute(call, target));
    if (response.status == 404) return NotFoundOrBucketError(response, target);
    std::string etag = response.Header("etag").value_or("");
    int64_t size = 0;
    int64_t tail_offset = 0;
    std::string tail;
    if (response.status == 416) {
      // An empty object has no last bytes to range over.
      SILT_ASSIGN_OR_RETURN(HttpResponse head, Head(p, "open"));
      if (head.status == 404) return client_->NotFound(target);
      SILT_ASSIGN_OR_RETURN(size, ContentLength(head, target));
      etag = head.Header("etag").value_or("");
      tail_offset = size;
    } else if (response.status == 206) {
      // "Content-Range: bytes 100-199/200"
      std::string range = response.Header("content-range").value_or("");
      size_t dash = range.find('-');
      size_t slash = range.find('/');
      int64_t first = -1;
      if (range.starts_with("bytes ") && dash != std::string::npos && slash != std::string::npos &&
          dash < slash) {
        std::from_chars(range.data() + 6, range.data() + dash, first);
        std::from_chars(range.data() + slash + 1, range.data() + range.size(), size);
      }
      if (first < 0 || size < first || size - first != static_cast<int64_t>(response.body.size())) {
        return Status::IOError("S3 open of '", target.display, "' at ", client_->endpoint().display,
                               " failed: the server sent an unusable Content-Range '", range, "'");
      }
      tail_offset = first;
      tail = std::move(response.body);
    } else {
      // The server ignored the range and sent the whole object.
      size = static_cast<int64_t>(response.body.size());
      tail = std::move(response.body);
    }
    return std::unique_ptr<RandomAccessFile>(std::make_unique<S3RandomAccessFile>(
        client_, p, Display(p), size, std::move(etag), tail_offset, std::move(tail)));
  }

  Result<std::string> ReadFile(const std::string& path) override {
    SILT_ASSIGN_OR_RETURN(S3Path p, ParseS3Path(path));
    Call call;
    call.method = "GET";
    call.bucket = p.bucket;
    call.key = p.key;
    call.accept = {404};
    Target target{"read", Display(p), p.bucket};
    SILT_ASSIGN_OR_RETURN(HttpResponse response, client_->Execute(call, target));
    if (response.status == 404) return NotFoundOrBucketError(response, target);
    return std::move(response.body);
  }

  Status WriteFile(const std::string& path, std::string_view data) override {
    SILT_ASSIGN_OR_RETURN(S3Path p, ParseS3Path(path));
    Call call;
    call.method = "PUT";
    call.bucket = p.bucket;
    call.key = p.key;
    call.body = data;
    return client_->Execute(call, Target{"write", Display(p), p.bucket}).status();
  }

  Status PutIfAbsent(const std::string& path, std::string_view data) override {
    SILT_ASSIGN_OR_RETURN(S3Path p, ParseS3Path(path));
    SILT_ASSIGN_OR_RETURN(bool enforced, ConditionalPutEnforced(p));
    Target target{"create", Display(p), p.bucket};
    if (!enforced) {
      // Single-writer mode: nobody else writes, so check-then-put is safe.
      SILT_ASSIGN_OR_RETURN(HttpResponse head, Head(p, "create"));
      if (head.status != 404) return AlreadyExists(target);
      return WriteFile(path, data);
    }
    Call call;
    call.method = "PUT";
    call.bucket = p.bucket;
    call.key = p.key;
    call.headers.emplace_back("if-none-match", "*");
    call.body = data;
    call.accept = {412};
    bool retried = false;
    SILT_ASSIGN_OR_RETURN(HttpResponse response, client_->Execute(call, target, &retried));
    if (response.status != 412) return Status::OK();
    if (retried) {
      // An earlier attempt may have created the object before its answer
      // was lost: it is ours when it holds exactly our bytes.
      Result<std::string> existing = ReadFile(path);
      if (existing.ok() && *existing == data) return Status::OK();
    }
    return AlreadyExists(target);
  }

  Result<std::unique_ptr<WritableFile>> OpenForWrite(const std::string& path) override {
    SILT_ASSIGN_OR_RETURN(S3Path p, ParseS3Path(path));
    if (p.key.empty()) {
      return Status::InvalidArgument("Cannot write '", path, "': the path names a bucket");
    }
    return std::unique_ptr<WritableFile>(std::make_unique<S3WritableFile>(client_, p, Display(p)));
  }

  Result<FileInfo> GetFileInfo(const std::string& path) override {
    SILT_ASSIGN_OR_RETURN(S3Path p, ParseS3Path(path));
    Target target{"stat", Display(p), p.bucket};
    FileInfo info;
    info.path = path;
    if (!p.key.empty()) {
      SILT_ASSIGN_OR_RETURN(HttpResponse head, Head(p, "stat"));
      if (head.status != 404) {
        SILT_ASSIGN_OR_RETURN(info.size, ContentLength(head, target));
        info.modification_time_ms =
            s3::ParseHttpDateMs(head.Header("last-modified").value_or("")).value_or(0);
        return info;
      }
    }
    // A "directory" exists when some key lies under it (or it is a bucket).
    SILT_ASSIGN_OR_RETURN(s3::ListPage page, ListPageOf(p, p.key.empty() ? "" : p.key + "/",
                                                        /*delimiter=*/false, "", 1, target));
    if (p.key.empty() || !page.objects.empty() || !page.common_prefixes.empty()) {
      info.is_dir = true;
      return info;
    }
    return client_->NotFound(target);
  }

  Result<std::vector<FileInfo>> ListDir(const std::string& dir) override {
    return List(dir, /*recursive=*/false);
  }

  Result<std::vector<FileInfo>> ListRecursive(const std::string& dir) override {
    return List(dir, /*recursive=*/true);
  }

  Status DeleteFile(const std::string& path) override {
    SILT_ASSIGN_OR_RETURN(S3Path p, ParseS3Path(path));
    Target target{"delete", Display(p), p.bucket};
    SILT_ASSIGN_OR_RETURN(HttpResponse head, Head(p, "delete"));
    if (head.status == 404) return client_->NotFound(target);
    Call call;
    call.method = "DELETE";
    call.bucket = p.bucket;
    call.key = p.key;
    call.accept = {404};
    return client_->Execute(call, target).status();
  }

  Status CreateDir(const std::string& path) override { return ParseS3Path(path).status(); }

  Status DeleteFiles(const std::vector<std::string>& paths) override {
    // One DeleteObjects request per bucket and 1000 keys; keys of missing
    // objects are accepted by S3, as the contract wants.
    std::map<std::string, std::vector<std::string>> keys_by_bucket;
    for (const std::string& path : paths) {
      SILT_ASSIGN_OR_RETURN(S3Path p, ParseS3Path(path));
      keys_by_bucket[p.bucket].push_back(std::move(p.key));
    }
    for (const auto& [bucket, keys] : keys_by_bucket) {
      S3Path p;
      p.bucket = bucket;
      Target target{"delete", Display(p), bucket};
      for (size_t start = 0; start < keys.size(); start += kDeleteBatch) {
        size_t end = std::min(keys.size(), start + kDeleteBatch);
        SILT_RETURN_NOT_OK(DeleteBatch(p, keys, start, end, target));
      }
    }
    return Status::OK();
  }

  Status DeleteDirRecursive(const std::string& path) override {
    SILT_ASSIGN_OR_RETURN(S3Path p, ParseS3Path(path));
    Target target{"delete", Display(p), p.bucket};
    std::string prefix = p.key.empty() ? "" : p.key + "/";
    std::vector<std::string> keys;
    std::string token;
    do {
      SILT_ASSIGN_OR_RETURN(s3::ListPage page,
                            ListPageOf(p, prefix, /*delimiter=*/false, token, 1000, target));
      for (auto& object : page.objects) keys.push_back(std::move(object.key));
      token = page.truncated ? page.next_continuation_token : "";
    } while (!token.empty());
    for (size_t start = 0; start < keys.size(); start += kDeleteBatch) {
      size_t end = std::min(keys.size(), start + kDeleteBatch);
      SILT_RETURN_NOT_OK(DeleteBatch(p, keys, start, end, target));
    }
    return Status::OK();
  }

 private:
  static Status AlreadyExists(const Target& target) {
    return Status::AlreadyExists("Cannot create '", target.display,
                                 "': another writer created it first");
  }

  Result<HttpResponse> Head(const S3Path& p, std::string_view action) {
    Call call;
    call.method = "HEAD";
    call.bucket = p.bucket;
    call.key = p.key;
    call.accept = {404};
    return client_->Execute(call, Target{std::string(action), Display(p), p.bucket});
  }

  Result<int64_t> ContentLength(const HttpResponse& response, const Target& target) {
    std::string text = response.Header("content-length").value_or("");
    int64_t size = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), size);
    if (ec != std::errc() || ptr != text.data() + text.size() || text.empty()) {
      return Status::IOError("S3 ", target.action, " of '", target.display, "' at ",
                             client_->endpoint().display,
                             " failed: the server sent no valid Content-Length");
    }
    return size;
  }

  Status NotFoundOrBucketError(const HttpResponse& response, const Target& target) {
    s3::S3ErrorBody error = s3::ParseErrorBody(response.body);
    if (error.code == "NoSuchBucket") {
      return Status::IOError("S3 ", target.action, " of '", target.display, "' at ",
                             client_->endpoint().display, " failed: bucket '", target.bucket,
                             "' does not exist (NoSuchBucket, HTTP 404); create it first or fix "
                             "the bucket name");
    }
    return client_->NotFound(target);
  }

  Result<s3::ListPage> ListPageOf(const S3Path& p, const std::string& prefix, bool delimiter,
                                  const std::string& token, int max_keys, const Target& target) {
    Call call;
    call.method = "GET";
    call.bucket = p.bucket;
    call.query = {{"list-type", "2"}, {"max-keys", std::to_string(max_keys)}};
    if (!prefix.empty()) call.query.emplace_back("prefix", prefix);
    if (delimiter) call.query.emplace_back("delimiter", "/");
    if (!token.empty()) call.query.emplace_back("continuation-token", token);
    SILT_ASSIGN_OR_RETURN(HttpResponse response, client_->Execute(call, target));
    Result<s3::ListPage> page = s3::ParseListObjectsV2(response.body);
    if (!page.ok()) {
      return page.status().WithContextParts("S3 list of '", target.display, "' at ",
                                            client_->endpoint().display);
    }
    return page;
  }

  Result<std::vector<FileInfo>> List(const std::string& dir, bool recursive) {
    SILT_ASSIGN_OR_RETURN(S3Path p, ParseS3Path(dir));
    Target target{"list", Display(p), p.bucket};
    std::string prefix = p.key.empty() ? "" : p.key + "/";
    std::string base(internal::StripTrailingSlashes(dir));
    std::vector<FileInfo> out;
    std::string token;
    do {
      SILT_ASSIGN_OR_RETURN(s3::ListPage page,
                            ListPageOf(p, prefix, !recursive, token, 1000, target));
      for (const s3::ListedObject& object : page.objects) {
        // Keys ending in '/' are directory markers other tools create.
        if (object.key.size() <= prefix.size() || object.key.back() == '/') continue;
        FileInfo info;
        info.path = JoinPath(base, std::string_view(object.key).substr(prefix.size()));
        info.size = object.size;
        info.modification_time_ms = object.modification_time_ms;
        out.push_back(std::move(info));
      }
      for (const std::string& common : page.common_prefixes) {
        if (common.size() <= prefix.size() + 1) continue;
        FileInfo info;
        info.path = JoinPath(base, std::string_view(common).substr(
                                       prefix.size(), common.size() - prefix.size() - 1));
        info.is_dir = true;
        out.push_back(std::move(info));
      }
      token = page.truncated ? page.next_continuation_token : "";
    } while (!token.empty());
    std::sort(out.begin(), out.end(),
              [](const FileInfo& a, const FileInfo& b) { return a.path < b.path; });
    return out;
  }

  Status DeleteBatch(const S3Path& p, const std::vector<std::string>& keys, size_t start,
                     size_t end, const Target& target) {
    std::string body = "<Delete><Quiet>true</Quiet>";
    for (size_t key_idx = start; key_idx < end; ++key_idx) {
      body += "<Object><Key>" + s3::XmlEscape(keys[key_idx]) + "</Key></Object>";
    }
    body += "</Delete>";
    Call call;
    call.method = "POST";
    call.bucket = p.bucket;
    call.query = {{"delete", ""}};
    call.headers.emplace_back("content-md5", s3::Md5Base64(body));
    call.body = body;
    SILT_ASSIGN_OR_RETURN(HttpResponse response, client_->Execute(call, target));
    std::vector<std::string> errors = s3::XmlElements(response.body, "Error");
    if (!errors.empty()) {
      std::string key = s3::XmlFirst(errors.front(), "Key").value_or("?");
      std::string code = s3::XmlFirst(errors.front(), "Code").value_or("?");
      return Status::IOError("S3 delete of '", target.display, "' at ", client_->endpoint().display,
                             " failed for ", errors.size(), " object(s), first '", key, "': ", code)
          .WithRetryable(true);
    }
    return Status::OK();
  }

  // Checks once per bucket that a second `If-None-Match: *` PUT of the same
  // key is refused. Returns whether it is; an error when it is not and
  // single-writer mode is off.
  Result<bool> ConditionalPutEnforced(const S3Path& p) {
    std::lock_guard<std::mutex> lock(probe_mutex_);
    auto it = probed_.find(p.bucket);
    if (it != probed_.end()) return it->second;
    S3Path probe{p.root, p.bucket, ".silt-probe/" + NewUuid()};
    Target target{"conditional-PUT probe", Display(probe), p.bucket};
    Call call;
    call.method = "PUT";
    call.bucket = probe.bucket;
    call.key = probe.key;
    call.headers.emplace_back("if-none-match", "*");
    call.body = "silt conditional-write probe";
    call.accept = {412};
    bool first_retried = false;
    SILT_ASSIGN_OR_RETURN(HttpResponse first, client_->Execute(call, target, &first_retried));
    // The probe key is new, so a 412 after a retry means our own first
    // attempt created it and its answer was lost: count that as created.
    bool created = first.status != 412 || first_retried;
    SILT_ASSIGN_OR_RETURN(HttpResponse second, client_->Execute(call, target));
    Call remove;
    remove.method = "DELETE";
    remove.bucket = probe.bucket;
    remove.key = probe.key;
    remove.accept = {404};
    Status removed = client_->Execute(remove, target).status();
    if (!removed.ok())
      SILT_LOG_WARN("s3", "could not delete the probe object: ", removed.message());
    bool enforced = created && second.status == 412;
    if (!enforced) {
      if (!client_->options().single_writer) {
        return Status::NotSupported(
            "conditional PUT (If-None-Match: *) is not enforced by the S3 server at ",
            client_->endpoint().display, " for bucket '", p.bucket,
            "': two writers could both create the same Delta commit. If only one process ever "
            "writes to this bucket at a time, set storage.s3.singleWriter: true (or "
            "SILT_S3_SINGLE_WRITER=1) to run in single-writer mode");
      }
      SILT_LOG_WARN("s3", "the server at ", client_->endpoint().display,
                    " ignores conditional PUT on bucket '", p.bucket,
                    "'; running in single-writer mode as configured");
    }
    probed_[p.bucket] = enforced;
    return enforced;
  }

  const std::shared_ptr<S3Client> client_;
  std::mutex probe_mutex_;
  std::map<std::string, bool> probed_;  // guarded by probe_mutex_
};

// --- Options ---------------------------------------------------------------

Result<bool> ParseBool(std::string_view key, const std::string& value) {
  std::string lower = AsciiLower(value);
  if (lower == "true" || lower == "1" || lower == "yes") return true;
  if (lower == "false" || lower == "0" || lower == "no") return false;
  return Status::InvalidArgument("storage.s3.", key, ": expected true or false, got '", value, "'");
}

Result<int64_t> ParsePositive(std::string_view key, const std::string& value) {
  int64_t out = 0;
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
  if (ec != std::errc() || ptr != value.data() + value.size() || out <= 0) {
    return Status::InvalidArgument("storage.s3.", key, ": expected a positive integer, got '",
                                   value, "'");
  }
  return out;
}

struct ProfileCredentials {
  std::string access_key;
  std::string secret_key;
  std::string session_token;
  std::string region;
};

// Reads one [profile] section of an AWS shared credentials file; nullopt when
// the file or the section is missing.
std::optional<ProfileCredentials> ReadProfile(const std::string& file, const std::string& profile) {
  std::ifstream in(file);
  if (!in) return std::nullopt;
  std::string line;
  bool in_section = false;
  bool found = false;
  ProfileCredentials out;
  while (std::getline(in, line)) {
    std::string_view text = TrimAscii(line, kLineWhitespace);
    if (text.empty() || text.front() == '#' || text.front() == ';') continue;
    if (text.front() == '[' && text.back() == ']') {
      std::string_view name = TrimAscii(text.substr(1, text.size() - 2), kLineWhitespace);
      if (name.starts_with("profile ")) name = TrimAscii(name.substr(8), kLineWhitespace);
      in_section = name == profile;
      found = found || in_section;
      continue;
    }
    if (!in_section) continue;
    size_t eq = text.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view key = TrimAscii(text.substr(0, eq), kLineWhitespace);
    std::string value(TrimAscii(text.substr(eq + 1), kLineWhitespace));
    if (key == "aws_access_key_id") out.access_key = value;
    if (key == "aws_secret_access_key") out.secret_key = value;
    if (key == "aws_session_token") out.session_token = value;
    if (key == "region") out.region = value;
  }
  if (!found) return std::nullopt;
  return out;
}

std::optional<std::string> RealEnv(std::string_view name) {
  const char* value = std::getenv(std::string(name).c_str());
  if (value == nullptr || value[0] == '\0') return std::nullopt;
  return std::string(value);
}

const std::map<std::string, std::string>& S3SettingAliases() {
  static const auto* aliases = new std::map<std::string, std::string>{
      {"endpoint", "endpoint"},
      {"fs.s3a.endpoint", "endpoint"},
      {"region", "region"},
      {"fs.s3a.endpoint.region", "region"},
      {"accessKey", "accessKey"},
      {"fs.s3a.access.key", "accessKey"},
      {"secretKey", "secretKey"},
      {"fs.s3a.secret.key", "secretKey"},
      {"sessionToken", "sessionToken"},
      {"fs.s3a.session.token", "sessionToken"},
      {"profile", "profile"},
      {"pathStyleAccess", "pathStyleAccess"},
      {"fs.s3a.path.style.access", "pathStyleAccess"},
      {"singleWriter", "singleWriter"},
      {"partSizeBytes", "partSizeBytes"},
      {"maxParallelParts", "maxParallelParts"},
      {"maxAttempts", "maxAttempts"},
      {"retryTimeoutSeconds", "retryTimeoutSeconds"},
      {"caBundle", "caBundle"},
  };
  return *aliases;
}

Status CheckSettingKeys(const std::map<std::string, std::string>& settings) {
  for (const auto& [key, value] : settings) {
    if (!S3SettingAliases().contains(key)) {
      return Status::InvalidArgument(
          "storage.s3.", key,
          ": unknown setting (known: endpoint, region, accessKey, secretKey, sessionToken, "
          "profile, pathStyleAccess, singleWriter, partSizeBytes, maxParallelParts, "
          "maxAttempts, retryTimeoutSeconds, caBundle)");
    }
  }
  return Status::OK();
}

struct Registry {
  std::mutex mutex;
  std::map<std::string, std::string> settings;  // guarded by mutex
  FileSystemPtr file_system;                    // guarded by mutex
};

Registry& GlobalRegistry() {
  static Registry* registry = new Registry();
  return *registry;
}

}  // namespace

Result<S3Options> ResolveS3Options(const std::map<std::string, std::string>& settings,
                                   const EnvLookup& env) {
  SILT_RETURN_NOT_OK(CheckSettingKeys(settings));
  std::map<std::string, std::string> given;
  for (const auto& [key, value] : settings) given[S3SettingAliases().at(key)] = value;
  auto setting = [&](const char* key) -> std::optional<std::string> {
    auto it = given.find(key);
    if (it == given.end() || it->second.empty()) return std::nullopt;
    return it->second;
  };

  S3Options out;
  std::optional<std::string> profile_name = setting("profile");
  bool explicit_profile = profile_name.has_value();
  if (!profile_name) profile_name = env("AWS_PROFILE");
  std::string profile = profile_name.value_or("default");
  std::string credentials_file;
  if (std::optional<std::string> file = env("AWS_SHARED_CREDENTIALS_FILE")) {
    credentials_file = *file;
  } else if (std::optional<std::string> home = env("HOME")) {
    credentials_file = *home + "/.aws/credentials";
  }
  std::optional<ProfileCredentials> from_profile;
  if (!credentials_file.empty()) from_profile = ReadProfile(credentials_file, profile);
  if (explicit_profile && !from_profile) {
    return Status::InvalidArgument("storage.s3.profile: profile '", profile, "' not found in '",
                                   credentials_file, "'");
  }

  std::optional<std::string> access = setting("accessKey");
  std::optional<std::string> secret = setting("secretKey");
  if (access.has_value() != secret.has_value()) {
    return Status::InvalidArgument("storage.s3: accessKey and secretKey must be given together");
  }
  if (access) {
    out.access_key = *access;
    out.secret_key = *secret;
    out.session_token = setting("sessionToken").value_or("");
    out.credentials_source = "storage.s3.accessKey/secretKey";
  } else if (!explicit_profile && env("AWS_ACCESS_KEY_ID") && env("AWS_SECRET_ACCESS_KEY")) {
    out.access_key = *env("AWS_ACCESS_KEY_ID");
    out.secret_key = *env("AWS_SECRET_ACCESS_KEY");
    out.session_token = env("AWS_SESSION_TOKEN").value_or("");
    out.credentials_source = "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY";
  } else if (from_profile && !from_profile->access_key.empty() &&
             !from_profile->secret_key.empty()) {
    out.access_key = from_profile->access_key;
    out.secret_key = from_profile->secret_key;
    out.session_token = from_profile->session_token;
    out.credentials_source = "profile '" + profile + "' in " + credentials_file;
  } else {
    return Status::InvalidArgument(
        "no S3 credentials found: set storage.s3.accessKey and storage.s3.secretKey in the job "
        "file, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment, or profile '",
        profile, "' in ", credentials_file.empty() ? "~/.aws/credentials" : credentials_file);
  }

  if (std::optional<std::string> region = setting("region")) {
    out.region = *region;
  } else if (std::optional<std::string> env_region = env("AWS_REGION")) {
    out.region = *env_region;
  } else if (std::optional<std::string> default_region = env("AWS_DEFAULT_REGION")) {
    out.region = *default_region;
  } else if (from_profile && !from_profile->region.empty()) {
    out.region = from_profile->region;
  }

  bool custom_endpoint = true;
  if (std::optional<std::string> endpoint = setting("endpoint")) {
    out.endpoint = *endpoint;
  } else if (std::optional<std::string> s3_endpoint = env("AWS_ENDPOINT_URL_S3")) {
    out.endpoint = *s3_endpoint;
  } else if (std::optional<std::string> any_endpoint = env("AWS_ENDPOINT_URL")) {
    out.endpoint = *any_endpoint;
  } else {
    out.endpoint = "https://s3." + out.region + ".amazonaws.com";
    custom_endpoint = false;
  }
  {
    Result<Endpoint> parsed = ParseEndpoint(out.endpoint);
    if (!parsed.ok()) return parsed.status().WithContext("storage.s3.endpoint");
  }
  // Custom endpoints (MinIO) usually have no wildcard DNS for bucket names.
  out.path_style = custom_endpoint;
  if (std::optional<std::string> path_style = setting("pathStyleAccess")) {
    SILT_ASSIGN_OR_RETURN(out.path_style, ParseBool("pathStyleAccess", *path_style));
  }
  if (std::optional<std::string> single = setting("singleWriter")) {
    SILT_ASSIGN_OR_RETURN(out.single_writer, ParseBool("singleWriter", *single));
  } else if (std::optional<std::string> env_single = env("SILT_S3_SINGLE_WRITER")) {
    Result<bool> parsed = ParseBool("singleWriter", *env_single);
    if (!parsed.ok()) return parsed.status().WithContext("SILT_S3_SINGLE_WRITER");
    out.single_writer = *parsed;
  }
  if (std::optional<std::string> part = setting("partSizeBytes")) {
    SILT_ASSIGN_OR_RETURN(out.part_size, ParsePositive("partSizeBytes", *part));
    if (out.part_size < kMinPartSize) {
      return Status::InvalidArgument("storage.s3.partSizeBytes: ", out.part_size,
                                     " is below S3's minimum part size of ", kMinPartSize);
    }
  }
  if (std::optional<std::string> parallel = setting("maxParallelParts")) {
    SILT_ASSIGN_OR_RETURN(int64_t n, ParsePositive("maxParallelParts", *parallel));
    out.max_parallel_parts = static_cast<int>(std::min<int64_t>(n, 64));
  }
  if (std::optional<std::string> attempts = setting("maxAttempts")) {
    SILT_ASSIGN_OR_RETURN(int64_t n, ParsePositive("maxAttempts", *attempts));
    out.max_attempts = static_cast<int>(std::min<int64_t>(n, 100));
  }
  if (std::optional<std::string> timeout = setting("retryTimeoutSeconds")) {
    SILT_ASSIGN_OR_RETURN(int64_t n, ParsePositive("retryTimeoutSeconds", *timeout));
    out.retry_timeout_ms = std::min<int64_t>(n, 24 * 3600) * 1000;
  }
  std::string ca_source = "storage.s3.caBundle";
  if (std::optional<std::string> ca = setting("caBundle")) {
    out.ca_bundle = *ca;
  } else if (std::optional<std::string> env_ca = env("AWS_CA_BUNDLE")) {
    out.ca_bundle = *env_ca;
    ca_source = "AWS_CA_BUNDLE";
  }
  if (!out.ca_bundle.empty()) {
    // Checked here, so a wrong path is a job error naming where it came
    // from, not a TLS failure on the first request.
    std::ifstream file(out.ca_bundle);
    std::string first_line;
    if (!file || !std::getline(file, first_line)) {
      return Status::InvalidArgument(ca_source, ": cannot read the CA bundle '", out.ca_bundle,
                                     "'");
    }
    if (first_line.find("-----BEGIN") == std::string::npos) {
      return Status::InvalidArgument(ca_source, ": '", out.ca_bundle,
                                     "' is not a PEM file of certificates (no -----BEGIN line)");
    }
  }
  return out;
}

namespace s3 {

Result<FileSystemPtr> MakeS3FileSystemForTest(const S3Options& options,
                                              std::shared_ptr<HttpTransport> transport,
                                              std::function<void(int64_t)> sleep_ms,
                                              std::function<int64_t()> now_seconds) {
  SILT_ASSIGN_OR_RETURN(Endpoint endpoint, ParseEndpoint(options.endpoint));
  auto client = std::make_shared<S3Client>(options, std::move(endpoint), std::move(transport),
                                           std::move(sleep_ms), std::move(now_seconds));
  return FileSystemPtr(std::make_shared<S3FileSystem>(std::move(client)));
}

}  // namespace s3

Result<FileSystemPtr> MakeS3FileSystem(const S3Options& options) {
  return s3::MakeS3FileSystemForTest(
      options, s3::MakeCurlTransport(options.connect_timeout_ms, options.ca_bundle),
      [](int64_t ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); },
      [] {
        return std::chrono::duration_cast<std::chrono::seconds>(
                   std::chrono::system_clock::now().time_since_epoch())
            .count();
      });
}

Status SetS3Settings(const std::map<std::string, std::string>& settings) {
  // Unknown keys fail before any work; credentials and values are resolved
  // when the first s3:// path is opened, so local-only jobs need none.
  SILT_RETURN_NOT_OK(CheckSettingKeys(settings));
  Registry& registry = GlobalRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  if (registry.settings != settings) {
    registry.settings = settings;
    registry.file_system = nullptr;
  }
  return Status::OK();
}

Result<FileSystemPtr> DefaultS3FileSystem() {
  Registry& registry = GlobalRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  if (registry.file_system == nullptr) {
    SILT_ASSIGN_OR_RETURN(S3Options options, ResolveS3Options(registry.settings, &RealEnv));
    SILT_ASSIGN_OR_RETURN(registry.file_system, MakeS3FileSystem(options));
  }
  return registry.file_system;
}

}  // namespace silt::fs
