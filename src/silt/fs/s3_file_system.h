// S3FileSystem: Amazon S3 and S3-compatible stores (MinIO) over libcurl, with
// requests signed by AWS Signature Version 4 (own signing on OpenSSL).
//
// Paths are "s3://bucket/key" or "s3a://bucket/key" (Hadoop's scheme); both
// name the same object, and results (FileInfo::path) keep the scheme the
// caller used. Directories are key prefixes ending in '/'.
//
// Semantics on top of the FileSystem contract:
//  - WriteFile is one PUT; OpenForWrite buffers `part_size` bytes and hands
//    each full part to a background upload (multipart upload, at most
//    `max_parallel_parts` in flight) while the caller keeps appending,
//    completing on Close() and aborting the upload on Abort(), on failure, or
//    on destruction. A lost answer to the upload's initiate is cleaned up too:
//    no orphaned uploads remain.
//  - PutIfAbsent is a PUT with `If-None-Match: *`. Before the first one on a
//    bucket, the file system checks once that the server enforces it (two
//    conditional PUTs of a probe object under "<bucket>/.silt-probe/"); a
//    server that silently ignores the condition is refused unless
//    `single_writer` is set. A conditional PUT whose response was lost and
//    whose retry reports "already exists" is resolved by reading the object
//    back and comparing it with the data we sent.
//  - Idempotent requests are retried with exponential backoff and full
//    jitter on 5xx, 429/SlowDown, timeouts and connection resets; the final
//    error keeps `retryable` set.
//  - Errors name the endpoint, bucket and key and explain wrong credentials,
//    a missing bucket, an unreachable endpoint and TLS/plain-HTTP mismatch.
//    Secret keys and session tokens never appear in messages or logs.
//
// Configuration comes from the job file's `storage.s3` section (registered
// process-wide with SetS3Settings), then the AWS environment variables, then
// ~/.aws/credentials; see ResolveS3Options.
//
// Thread safety: an S3 file system is safe to use from several threads; its
// writers and readers are used by one thread at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "silt/base/result.h"
#include "silt/fs/file_system.h"

namespace silt::fs {

struct S3Options {
  // "http://127.0.0.1:9000" or "https://s3.eu-west-1.amazonaws.com".
  std::string endpoint;
  std::string region = "us-east-1";
  std::string access_key;
  std::string secret_key;     // never printed
  std::string session_token;  // never printed; empty when not used
  // Path-style ("http://host/bucket/key") or virtual-hosted
  // ("http://bucket.host/key") addressing.
  bool path_style = true;
  // Allows PutIfAbsent on a server that does not enforce conditional PUT;
  // the user promises that only one process writes at a time.
  bool single_writer = false;
  int64_t part_size = 8 << 20;  // multipart part size (S3 minimum 5 MiB)
  // Parts of one multipart upload in flight at once while the writer keeps
  // encoding; a writer buffers at most (max_parallel_parts + 1) * part_size.
  int max_parallel_parts = 4;
  int max_attempts = 6;  // per request, including the first
  // After the server has answered once, transient failures of a request
  // are retried past max_attempts for up to this long (a server restart).
  int64_t retry_timeout_ms = 60000;
  int64_t connect_timeout_ms = 5000;
  // A PEM file of the certificate authorities to trust for an https
  // endpoint instead of the system's (a private CA in front of MinIO);
  // empty: the system's trust store.
  std::string ca_bundle;
  // Where the credentials came from ("storage.s3", "environment",
  // "profile 'default' in /home/u/.aws/credentials"), for error messages.
  std::string credentials_source;
};

// Looks up an environment variable; std::nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(std::string_view)>;

// Builds S3Options from `storage.s3` settings (keys as in the job file:
// endpoint, region, accessKey, secretKey, sessionToken, profile,
// pathStyleAccess, singleWriter, partSizeBytes, maxParallelParts, maxAttempts,
// retryTimeoutSeconds, caBundle; the Hadoop names
// fs.s3a.endpoint, fs.s3a.access.key, fs.s3a.secret.key,
// fs.s3a.session.token, fs.s3a.endpoint.region and fs.s3a.path.style.access
// are accepted too), the environment and the shared credentials file.
//
// Precedence, per item: the settings; then AWS_ENDPOINT_URL_S3 /
// AWS_ENDPOINT_URL, AWS_REGION / AWS_DEFAULT_REGION, AWS_ACCESS_KEY_ID +
// AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN), SILT_S3_SINGLE_WRITER,
// AWS_CA_BUNDLE (as the AWS SDKs read it); then the
// profile (settings `profile`, else AWS_PROFILE, else "default") of
// AWS_SHARED_CREDENTIALS_FILE or $HOME/.aws/credentials. A `profile` given in
// the settings wins over the environment's keys. Without an endpoint the AWS
// endpoint of the region is used, with virtual-hosted addressing.
//
// Errors: InvalidArgument naming the `storage.s3.<key>` for unknown keys or
// bad values, and when no credentials are found anywhere (the message lists
// where silt looked).
Result<S3Options> ResolveS3Options(const std::map<std::string, std::string>& settings,
                                   const EnvLookup& env);

// The S3 file system for `options`.
// Errors: InvalidArgument for an endpoint that is not http(s)://host[:port].
Result<FileSystemPtr> MakeS3FileSystem(const S3Options& options);

// Registers the job's `storage.s3` settings for every later
// FileSystemForPath("s3://...") in this process (replacing earlier ones).
// Errors: InvalidArgument for unknown keys or bad values (nothing changes).
Status SetS3Settings(const std::map<std::string, std::string>& settings);

// The process-wide S3 file system for the registered settings and the real
// environment, created on first use and shared by all s3:// and s3a:// paths.
Result<FileSystemPtr> DefaultS3FileSystem();

}  // namespace silt::fs
