#include "silt/fs/s3_internal.h"

#include <curl/curl.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/md5.h>
#include <openssl/sha.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <ctime>
#include <mutex>

#include "silt/base/strings.h"
#include "silt/base/utf8.h"

namespace silt::fs::s3 {

namespace {

// SigV4 trims header values and collapses inner runs of spaces to one.
std::string CanonicalHeaderValue(std::string_view value) {
  std::string out;
  bool in_space = false;
  for (char c : TrimAscii(value, kLineWhitespace)) {
    if (c == ' ' || c == '\t') {
      in_space = true;
      continue;
    }
    if (in_space) out.push_back(' ');
    in_space = false;
    out.push_back(c);
  }
  return out;
}

}  // namespace

// --- Hashing and encoding ---------------------------------------------------

std::string HexEncode(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 0xf]);
  }
  return out;
}

std::string Sha256Hex(std::string_view data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  return HexEncode(std::string_view(reinterpret_cast<const char*>(digest), sizeof(digest)));
}

std::string HmacSha256(std::string_view key, std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest, &length);
  return std::string(reinterpret_cast<const char*>(digest), length);
}

std::string Md5Base64(std::string_view data) {
  unsigned char digest[MD5_DIGEST_LENGTH];
  unsigned int length = 0;
  EVP_Digest(data.data(), data.size(), digest, &length, EVP_md5(), nullptr);
  unsigned char encoded[4 * ((MD5_DIGEST_LENGTH + 2) / 3) + 1];
  int n = EVP_EncodeBlock(encoded, digest, static_cast<int>(length));
  return std::string(reinterpret_cast<const char*>(encoded), static_cast<size_t>(n));
}

std::string UriEncode(std::string_view text, bool encode_slash) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' ||
        (c == '/' && !encode_slash)) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kDigits[c >> 4]);
      out.push_back(kDigits[c & 0xf]);
    }
  }
  return out;
}

// --- Signature V4 -----------------------------------------------------------

std::string CanonicalQueryString(const std::vector<std::pair<std::string, std::string>>& query) {
  std::vector<std::pair<std::string, std::string>> encoded;
  encoded.reserve(query.size());
  for (const auto& [name, value] : query) {
    encoded.emplace_back(UriEncode(name, true), UriEncode(value, true));
  }
  std::sort(encoded.begin(), encoded.end());
  std::string out;
  for (const auto& [name, value] : encoded) {
    if (!out.empty()) out.push_back('&');
    out += name;
    out.push_back('=');
    out += value;
  }
  return out;
}

namespace {

std::vector<std::pair<std::string, std::string>> SortedCanonicalHeaders(const Headers& headers) {
  std::vector<std::pair<std::string, std::string>> out;
  out.reserve(headers.size());
  for (const auto& [name, value] : headers) {
    out.emplace_back(AsciiLower(TrimAscii(name, kLineWhitespace)), CanonicalHeaderValue(value));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

}  // namespace

std::string SignedHeaders(const Headers& headers) {
  std::string out;
  std::string previous;
  for (const auto& [name, value] : SortedCanonicalHeaders(headers)) {
    if (name == previous) continue;
    if (!out.empty()) out.push_back(';');
    out += name;
    previous = name;
  }
  return out;
}

std::string CanonicalRequest(const SigningRequest& request) {
  std::string out = request.method;
  out.push_back('\n');
  out += request.canonical_uri.empty() ? "/" : request.canonical_uri;
  out.push_back('\n');
  out += CanonicalQueryString(request.query);
  out.push_back('\n');
  // Repeated headers are joined with commas, in the order given.
  auto sorted = SortedCanonicalHeaders(request.headers);
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (i > 0 && sorted[i].first == sorted[i - 1].first) {
      out.pop_back();  // the '\n' of the previous line
      out.push_back(',');
    } else {
      out += sorted[i].first;
      out.push_back(':');
    }
    out += sorted[i].second;
    out.push_back('\n');
  }
  out.push_back('\n');
  out += SignedHeaders(request.headers);
  out.push_back('\n');
  out += request.payload_hash;
  return out;
}

std::string StringToSign(std::string_view amz_date, std::string_view scope,
                         std::string_view canonical_request) {
  std::string out = "AWS4-HMAC-SHA256\n";
  out += amz_date;
  out.push_back('\n');
  out += scope;
  out.push_back('\n');
  out += Sha256Hex(canonical_request);
  return out;
}

std::string CredentialScope(std::string_view date, const SigningKeyParts& key) {
  std::string out(date);
  out += "/" + key.region + "/" + key.service + "/aws4_request";
  return out;
}

std::string SigningKey(std::string_view secret_key, std::string_view date, std::string_view region,
                       std::string_view service) {
  std::string k_secret = "AWS4";
  k_secret += secret_key;
  std::string k_date = HmacSha256(k_secret, date);
  std::string k_region = HmacSha256(k_date, region);
  std::string k_service = HmacSha256(k_region, service);
  return HmacSha256(k_service, "aws4_request");
}

std::string AuthorizationHeader(const SigningRequest& request, const SigningKeyParts& key,
                                std::string_view amz_date) {
  std::string_view date = amz_date.substr(0, 8);
  std::string scope = CredentialScope(date, key);
  std::string to_sign = StringToSign(amz_date, scope, CanonicalRequest(request));
  std::string signature =
      HexEncode(HmacSha256(SigningKey(key.secret_key, date, key.region, key.service), to_sign));
  return "AWS4-HMAC-SHA256 Credential=" + key.access_key + "/" + scope +
         ", SignedHeaders=" + SignedHeaders(request.headers) + ", Signature=" + signature;
}

std::string AmzDate(int64_t unix_seconds) {
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buffer[32];
  size_t n = std::strftime(buffer, sizeof(buffer), "%Y%m%dT%H%M%SZ", &tm);
  return std::string(buffer, n);
}

// --- XML --------------------------------------------------------------------

std::vector<std::string> XmlElements(std::string_view xml, std::string_view tag, bool decode) {
  std::vector<std::string> out;
  std::string open = "<" + std::string(tag) + ">";
  std::string close = "</" + std::string(tag) + ">";
  std::string empty = "<" + std::string(tag) + "/>";
  size_t pos = 0;
  while (pos < xml.size()) {
    size_t start = xml.find(open, pos);
    size_t empty_at = xml.find(empty, pos);
    if (empty_at != std::string_view::npos &&
        (start == std::string_view::npos || empty_at < start)) {
      out.emplace_back();
      pos = empty_at + empty.size();
      continue;
    }
    if (start == std::string_view::npos) break;
    size_t body = start + open.size();
    size_t end = xml.find(close, body);
    if (end == std::string_view::npos) break;
    std::string_view text = xml.substr(body, end - body);
    out.push_back(decode ? XmlDecode(text) : std::string(text));
    pos = end + close.size();
  }
  return out;
}

std::optional<std::string> XmlFirst(std::string_view xml, std::string_view tag) {
  std::vector<std::string> all = XmlElements(xml, tag, /*decode=*/false);
  if (all.empty()) return std::nullopt;
  return XmlDecode(all.front());
}

namespace {}  // namespace

std::string XmlDecode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] != '&') {
      out.push_back(text[i++]);
      continue;
    }
    size_t semi = text.find(';', i);
    if (semi == std::string_view::npos || semi - i > 12) {
      out.push_back(text[i++]);
      continue;
    }
    std::string_view entity = text.substr(i + 1, semi - i - 1);
    if (entity == "amp") {
      out.push_back('&');
    } else if (entity == "lt") {
      out.push_back('<');
    } else if (entity == "gt") {
      out.push_back('>');
    } else if (entity == "quot") {
      out.push_back('"');
    } else if (entity == "apos") {
      out.push_back('\'');
    } else if (entity.size() > 1 && entity[0] == '#') {
      bool hex = entity[1] == 'x' || entity[1] == 'X';
      std::string_view digits = entity.substr(hex ? 2 : 1);
      uint32_t cp = 0;
      auto [ptr, ec] =
          std::from_chars(digits.data(), digits.data() + digits.size(), cp, hex ? 16 : 10);
      if (ec != std::errc() || ptr != digits.data() + digits.size() || cp > 0x10FFFF) {
        out.append(text.substr(i, semi - i + 1));
      } else {
        AppendUtf8(cp, &out);
      }
    } else {
      out.append(text.substr(i, semi - i + 1));
    }
    i = semi + 1;
  }
  return out;
}

std::string XmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

std::optional<int64_t> ParseIso8601Ms(std::string_view text) {
  // YYYY-MM-DDTHH:MM:SS[.fff]Z
  if (text.size() < 20 || text[4] != '-' || text[7] != '-' || text[10] != 'T' || text[13] != ':' ||
      text[16] != ':') {
    return std::nullopt;
  }
  auto number = [&](size_t pos, size_t len, int64_t* value) {
    auto [ptr, ec] = std::from_chars(text.data() + pos, text.data() + pos + len, *value);
    return ec == std::errc() && ptr == text.data() + pos + len;
  };
  int64_t year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!number(0, 4, &year) || !number(5, 2, &month) || !number(8, 2, &day) ||
      !number(11, 2, &hour) || !number(14, 2, &minute) || !number(17, 2, &second)) {
    return std::nullopt;
  }
  if (month < 1 || month > 12 || day < 1 || day > 31) return std::nullopt;
  int64_t millis = 0;
  size_t pos = 19;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    int64_t scale = 100;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
      millis += (text[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
  }
  if (pos >= text.size() || text[pos] != 'Z') return std::nullopt;
  // Days from the civil date (Howard Hinnant's algorithm).
  int64_t y = year - (month <= 2 ? 1 : 0);
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t mp = (month + 9) % 12;
  int64_t doy = (153 * mp + 2) / 5 + day - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  int64_t days = era * 146097 + doe - 719468;
  return ((days * 24 + hour) * 60 + minute) * 60 * 1000 + second * 1000 + millis;
}

std::optional<int64_t> ParseHttpDateMs(std::string_view text) {
  // IMF-fixdate, "Sun, 06 Nov 1994 08:49:37 GMT" (RFC 9110 5.6.7).
  if (text.size() != 29 || text[3] != ',' || !text.ends_with(" GMT")) return std::nullopt;
  static constexpr std::string_view kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                 "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  std::string_view month = text.substr(8, 3);
  int month_number = 0;
  for (int month_idx = 0; month_idx < 12; ++month_idx) {
    if (kMonths[month_idx] == month) month_number = month_idx + 1;
  }
  if (month_number == 0) return std::nullopt;
  std::string iso = std::string(text.substr(12, 4)) + "-" + (month_number < 10 ? "0" : "") +
                    std::to_string(month_number) + "-" + std::string(text.substr(5, 2)) + "T" +
                    std::string(text.substr(17, 8)) + "Z";
  return ParseIso8601Ms(iso);
}

Result<ListPage> ParseListObjectsV2(std::string_view xml) {
  if (xml.find("<ListBucketResult") == std::string_view::npos) {
    return Status::Corruption("ListObjectsV2 response has no <ListBucketResult> element");
  }
  ListPage page;
  for (const std::string& contents : XmlElements(xml, "Contents")) {
    ListedObject object;
    std::optional<std::string> key = XmlFirst(contents, "Key");
    if (!key) return Status::Corruption("ListObjectsV2 response has a <Contents> without <Key>");
    object.key = std::move(*key);
    if (std::optional<std::string> size = XmlFirst(contents, "Size")) {
      auto [ptr, ec] = std::from_chars(size->data(), size->data() + size->size(), object.size);
      if (ec != std::errc()) {
        return Status::Corruption("ListObjectsV2 response has a bad <Size> '", *size, "' for key '",
                                  object.key, "'");
      }
    }
    if (std::optional<std::string> modified = XmlFirst(contents, "LastModified")) {
      object.modification_time_ms = ParseIso8601Ms(*modified).value_or(0);
    }
    page.objects.push_back(std::move(object));
  }
  for (const std::string& prefixes : XmlElements(xml, "CommonPrefixes")) {
    if (std::optional<std::string> prefix = XmlFirst(prefixes, "Prefix")) {
      page.common_prefixes.push_back(std::move(*prefix));
    }
  }
  // <Prefix> also appears at top level; only <IsTruncated> and the token
  // matter outside <Contents>.
  page.truncated = XmlFirst(xml, "IsTruncated").value_or("false") == "true";
  page.next_continuation_token = XmlFirst(xml, "NextContinuationToken").value_or("");
  if (page.truncated && page.next_continuation_token.empty()) {
    return Status::Corruption("ListObjectsV2 response is truncated but has no continuation token");
  }
  return page;
}

S3ErrorBody ParseErrorBody(std::string_view xml) {
  S3ErrorBody out;
  size_t error = xml.find("<Error>");
  if (error == std::string_view::npos) return out;
  std::string_view body = xml.substr(error);
  out.code = XmlFirst(body, "Code").value_or("");
  out.message = XmlFirst(body, "Message").value_or("");
  return out;
}

// --- Transport --------------------------------------------------------------

std::optional<std::string> HttpResponse::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (key == name) return value;
  }
  return std::nullopt;
}

namespace {

void InitCurlOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

size_t WriteBody(char* data, size_t size, size_t count, void* user) {
  static_cast<HttpResponse*>(user)->body.append(data, size * count);
  return size * count;
}

size_t WriteHeader(char* data, size_t size, size_t count, void* user) {
  std::string_view line(data, size * count);
  auto* response = static_cast<HttpResponse*>(user);
  if (line.starts_with("HTTP/")) {
    // A new response (after 100 Continue or a redirect): drop earlier ones.
    response->headers.clear();
  }
  size_t colon = line.find(':');
  if (colon != std::string_view::npos) {
    std::string name = AsciiLower(TrimAscii(line.substr(0, colon), kLineWhitespace));
    std::string value(TrimAscii(line.substr(colon + 1), kLineWhitespace));
    if (name == "content-length") {
      // One allocation for the body instead of doubling through it.
      int64_t length = 0;
      auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), length);
      if (ec == std::errc() && length > 0 && length < (int64_t{1} << 32)) {
        response->body.reserve(static_cast<size_t>(length));
      }
    }
    response->headers.emplace_back(std::move(name), std::move(value));
  }
  return size * count;
}

// The transport-level failure as a user reads it; no URL (the caller names
// the endpoint) and no headers (they carry the signature).
// `plain_http` adds the hint for the usual cause of a reset on an http://
// endpoint: the server expects TLS.
Status CurlError(CURLcode code, const char* detail, bool plain_http) {
  std::string why = detail != nullptr && detail[0] != '\0' ? detail : curl_easy_strerror(code);
  switch (code) {
    case CURLE_COULDNT_CONNECT:
      return Status::IOError("cannot connect (", why,
                             "): is the server running and the endpoint's host and port right?")
          .WithRetryable(true);
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
      return Status::IOError("cannot resolve the endpoint's host name (", why, ")")
          .WithRetryable(true);
    case CURLE_OPERATION_TIMEDOUT:
      return Status::IOError("request timed out (", why, ")").WithRetryable(true);
    case CURLE_SSL_CONNECT_ERROR:
      return Status::IOError("TLS handshake failed (", why,
                             "): if the server speaks plain HTTP, use an http:// endpoint");
    case CURLE_PEER_FAILED_VERIFICATION:
      return Status::IOError("the server's TLS certificate was not accepted (", why,
                             "): for a private certificate authority, set storage.s3.caBundle "
                             "(or AWS_CA_BUNDLE) to its PEM file");
    case CURLE_SSL_CACERT_BADFILE:
      return Status::IOError("the CA bundle could not be loaded (", why, ")");
    case CURLE_GOT_NOTHING:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return Status::IOError(
                 "connection reset or closed by the server (", why, ")",
                 plain_http ? "; if the server speaks HTTPS, use an https:// endpoint" : "")
          .WithRetryable(true);
    case CURLE_WEIRD_SERVER_REPLY:
      return Status::IOError(
          "the server's answer is not HTTP (", why, ")",
          plain_http ? "; if the server speaks HTTPS, use an https:// endpoint" : "");
    default: return Status::IOError("HTTP transfer failed (", why, ")").WithRetryable(true);
  }
}

class CurlTransport final : public HttpTransport {
 public:
  CurlTransport(int64_t connect_timeout_ms, std::string ca_bundle)
      : connect_timeout_ms_(connect_timeout_ms), ca_bundle_(std::move(ca_bundle)) {
    InitCurlOnce();
  }

  ~CurlTransport() override {
    for (CURL* handle : idle_) curl_easy_cleanup(handle);
  }

  Result<HttpResponse> Send(const HttpRequest& request) override {
    CURL* handle = Acquire();
    if (handle == nullptr) return Status::Internal("curl_easy_init failed");
    HttpResponse response;
    char error_buffer[CURL_ERROR_SIZE] = {0};
    curl_slist* header_list = nullptr;
    for (const auto& [name, value] : request.headers) {
      header_list = curl_slist_append(header_list, (name + ": " + value).c_str());
    }
    // No "Expect: 100-continue" round trip, and no form content type on PUT.
    header_list = curl_slist_append(header_list, "Expect:");
    header_list = curl_slist_append(header_list, "Content-Type: application/octet-stream");

    curl_easy_setopt(handle, CURLOPT_URL, request.url.c_str());
    curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(handle, CURLOPT_ERRORBUFFER, error_buffer);
    curl_easy_setopt(handle, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(connect_timeout_ms_));
    if (!ca_bundle_.empty()) curl_easy_setopt(handle, CURLOPT_CAINFO, ca_bundle_.c_str());
    // A stalled transfer (no byte for 30 s) is a timeout, whatever its size.
    curl_easy_setopt(handle, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(handle, CURLOPT_LOW_SPEED_TIME, 30L);
    curl_easy_setopt(handle, CURLOPT_HTTPHEADER, header_list);
    curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, &WriteBody);
    curl_easy_setopt(handle, CURLOPT_WRITEDATA, &response);
    curl_easy_setopt(handle, CURLOPT_HEADERFUNCTION, &WriteHeader);
    curl_easy_setopt(handle, CURLOPT_HEADERDATA, &response);
    if (request.method == "GET") {
      curl_easy_setopt(handle, CURLOPT_HTTPGET, 1L);
    } else if (request.method == "HEAD") {
      curl_easy_setopt(handle, CURLOPT_NOBODY, 1L);
    } else {
      curl_easy_setopt(handle, CURLOPT_CUSTOMREQUEST, request.method.c_str());
      if (request.method == "PUT" || request.method == "POST") {
        curl_easy_setopt(handle, CURLOPT_POSTFIELDSIZE_LARGE,
                         static_cast<curl_off_t>(request.body.size()));
        curl_easy_setopt(handle, CURLOPT_POSTFIELDS,
                         request.body.empty() ? "" : request.body.data());
      }
    }
    CURLcode code = curl_easy_perform(handle);
    long status = 0;
    if (code == CURLE_OK) curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(header_list);
    // Reset drops the options (and our pointers into this frame) but keeps
    // the connection cache, so the next request reuses the connection.
    curl_easy_reset(handle);
    Release(handle);
    if (code != CURLE_OK) return CurlError(code, error_buffer, request.url.starts_with("http:"));
    response.status = status;
    return response;
  }

 private:
  CURL* Acquire() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!idle_.empty()) {
        CURL* handle = idle_.back();
        idle_.pop_back();
        return handle;
      }
    }
    return curl_easy_init();
  }

  void Release(CURL* handle) {
    std::lock_guard<std::mutex> lock(mutex_);
    idle_.push_back(handle);
  }

  const int64_t connect_timeout_ms_;
  const std::string ca_bundle_;
  std::mutex mutex_;
  std::vector<CURL*> idle_;  // guarded by mutex_
};

}  // namespace

std::shared_ptr<HttpTransport> MakeCurlTransport(int64_t connect_timeout_ms,
                                                 std::string ca_bundle) {
  return std::make_shared<CurlTransport>(connect_timeout_ms, std::move(ca_bundle));
}

// --- Retry policy -----------------------------------------------------------

bool IsRetryableHttp(int64_t status, std::string_view error_code) {
  // 499 is "client closed request": MinIO (and nginx in front of a store)
  // answers it for requests it abandons, e.g. while the server shuts down.
  // Like a reset connection, the request may or may not have taken effect,
  // and the callers that care (conditional creates) already handle that.
  if (status >= 500 || status == 429 || status == 499) return true;
  return error_code == "SlowDown" || error_code == "RequestTimeout" ||
         error_code == "InternalError" || error_code == "ServiceUnavailable" ||
         error_code == "RequestTimeTooSkewed" || error_code == "ConditionalRequestConflict" ||
         error_code == "OperationAborted";
}

int64_t BackoffDelayMs(const RetryPolicy& policy, int retry, std::mt19937_64& rng) {
  int64_t cap = policy.base_delay_ms;
  for (int i = 1; i < retry && cap < policy.max_delay_ms; ++i) cap *= 2;
  cap = std::min(cap, policy.max_delay_ms);
  std::uniform_int_distribution<int64_t> draw(1, std::max<int64_t>(1, cap));
  return draw(rng);
}

}  // namespace silt::fs::s3
