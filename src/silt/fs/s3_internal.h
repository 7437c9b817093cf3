// Building blocks of the S3 file system, private to the fs module and
// exposed for unit tests: AWS Signature V4, the tiny subset of XML that S3
// responses use, URI encoding, the retry policy, and the HTTP transport seam
// (libcurl in production, a fake in tests).
//
// Thread safety: free functions are pure; HttpTransport implementations are
// safe to call from several threads.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "silt/base/result.h"
#include "silt/fs/s3_file_system.h"

namespace silt::fs::s3 {

// What S3 code trims around header names and values and around the lines of
// AWS config and credentials files (TrimAscii's set without \v and \f).
inline constexpr std::string_view kLineWhitespace = " \t\r\n";

using Headers = std::vector<std::pair<std::string, std::string>>;

// --- Hashing and encoding ---------------------------------------------------

std::string HexEncode(std::string_view bytes);
std::string Sha256Hex(std::string_view data);
// Raw 32-byte HMAC-SHA256 of `data` under `key`.
std::string HmacSha256(std::string_view key, std::string_view data);
// Base64 of the raw MD5 digest (the Content-MD5 header).
std::string Md5Base64(std::string_view data);
// RFC 3986 percent-encoding as SigV4 requires: unreserved characters
// (A-Z a-z 0-9 - _ . ~) stay, everything else becomes %XX (upper-case hex);
// '/' stays unless `encode_slash`.
std::string UriEncode(std::string_view text, bool encode_slash);

// --- Signature V4 -----------------------------------------------------------

struct SigningRequest {
  std::string method;         // "GET"
  std::string canonical_uri;  // already URI-encoded path ("/bucket/a%20b")
  // Query parameters, not encoded; sorted and encoded by the signer.
  std::vector<std::pair<std::string, std::string>> query;
  // Headers to sign (names in any case, values trimmed by the signer).
  Headers headers;
  std::string payload_hash;  // hex SHA-256 of the body, or "UNSIGNED-PAYLOAD"
};

struct SigningKeyParts {
  std::string access_key;
  std::string secret_key;
  std::string region;
  std::string service = "s3";
};

// "a=1&b=x%2Fy": names and values encoded, sorted by name then value.
std::string CanonicalQueryString(const std::vector<std::pair<std::string, std::string>>& query);
// "host;x-amz-date": lower-cased header names, sorted.
std::string SignedHeaders(const Headers& headers);
// The canonical request of SigV4 task 1.
std::string CanonicalRequest(const SigningRequest& request);
// The string to sign of task 2; `amz_date` is "20150830T123600Z".
std::string StringToSign(std::string_view amz_date, std::string_view scope,
                         std::string_view canonical_request);
// "20150830/us-east-1/service/aws4_request".
std::string CredentialScope(std::string_view date, const SigningKeyParts& key);
// The raw signing key of task 3; `date` is "20150830".
std::string SigningKey(std::string_view secret_key, std::string_view date, std::string_view region,
                       std::string_view service);
// The Authorization header value for `request` signed at `amz_date`.
std::string AuthorizationHeader(const SigningRequest& request, const SigningKeyParts& key,
                                std::string_view amz_date);
// "20150830T123600Z" for a Unix time in seconds.
std::string AmzDate(int64_t unix_seconds);

// --- XML --------------------------------------------------------------------

// Text of each <tag>...</tag> element directly found in `xml` (not nested
// in itself), entities decoded when `decode` (leave raw for sub-parsing).
std::vector<std::string> XmlElements(std::string_view xml, std::string_view tag,
                                     bool decode = false);
// Decoded text of the first <tag> element, or nullopt.
std::optional<std::string> XmlFirst(std::string_view xml, std::string_view tag);
// Decodes &amp; &lt; &gt; &quot; &apos; and numeric character references.
std::string XmlDecode(std::string_view text);
// Escapes text for an XML element body.
std::string XmlEscape(std::string_view text);

struct ListedObject {
  std::string key;
  int64_t size = 0;
  int64_t modification_time_ms = 0;
};

struct ListPage {
  std::vector<ListedObject> objects;
  std::vector<std::string> common_prefixes;
  bool truncated = false;
  std::string next_continuation_token;
};

// Parses a ListObjectsV2 response body.
// Errors: Corruption naming what is malformed.
Result<ListPage> ParseListObjectsV2(std::string_view xml);

// "2026-11-29T15:30:44.123Z" -> Unix milliseconds; nullopt if malformed.
std::optional<int64_t> ParseIso8601Ms(std::string_view text);
// HTTP's Last-Modified form, "Sun, 29 Nov 2026 15:30:44 GMT" -> Unix
// milliseconds; nullopt if malformed.
std::optional<int64_t> ParseHttpDateMs(std::string_view text);

struct S3ErrorBody {
  std::string code;     // "NoSuchKey"; empty when the body has none
  std::string message;  // as sent by the server
};
S3ErrorBody ParseErrorBody(std::string_view xml);

// --- Transport --------------------------------------------------------------

struct HttpRequest {
  std::string method;
  std::string url;  // full URL including the encoded query
  Headers headers;  // sent as given (Host included)
  std::string_view body;
};

struct HttpResponse {
  int64_t status = 0;
  Headers headers;  // names lower-cased
  std::string body;
  // The first header named `name` (lower-case), or nullopt.
  std::optional<std::string> Header(std::string_view name) const;
};

// One HTTP exchange. Errors: IOError for transport failures (connection
// refused, reset, timeout, TLS), with `retryable` set for transient ones; the
// message explains the cause but does not name the endpoint (callers add it).
class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  virtual Result<HttpResponse> Send(const HttpRequest& request) = 0;
};

// `ca_bundle`: a PEM file of trusted CAs (CURLOPT_CAINFO), or "" for the
// system's trust store.
std::shared_ptr<HttpTransport> MakeCurlTransport(int64_t connect_timeout_ms,
                                                 std::string ca_bundle = "");

// --- Retry policy -----------------------------------------------------------

struct RetryPolicy {
  int max_attempts = 6;
  int64_t base_delay_ms = 50;
  int64_t max_delay_ms = 2000;
  // Once the server has answered (so the endpoint is right), an outage —
  // refused connections during a restart, 503 while it starts — is retried
  // beyond max_attempts until this much backoff has been spent.
  int64_t outage_budget_ms = 60000;
};

// True when an HTTP answer is worth repeating: 5xx, 429, 499 (a request the
// server abandoned, e.g. MinIO shutting down), or an S3 error code
// meaning "try again" (SlowDown, RequestTimeout, InternalError, ...).
bool IsRetryableHttp(int64_t status, std::string_view error_code);
// Full-jitter backoff before retry number `retry` (1 = first retry): a
// uniform draw in [0, min(max, base * 2^(retry-1))], at least 1 ms.
int64_t BackoffDelayMs(const RetryPolicy& policy, int retry, std::mt19937_64& rng);

// A file system whose HTTP requests go to `transport` and whose backoff
// sleeps call `sleep_ms` (tests pass a recorder, production sleeps).
// `now_seconds` gives the signing time.
Result<FileSystemPtr> MakeS3FileSystemForTest(const S3Options& options,
                                              std::shared_ptr<HttpTransport> transport,
                                              std::function<void(int64_t)> sleep_ms,
                                              std::function<int64_t()> now_seconds);

}  // namespace silt::fs::s3
