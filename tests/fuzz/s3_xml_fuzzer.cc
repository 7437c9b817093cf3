// libFuzzer target for the S3 response bodies silt parses (fs/s3_internal.h):
// ListObjectsV2 pages, error bodies, the element scanner and entity decoder
// behind CreateMultipartUpload / ListMultipartUploads / DeleteObjects
// replies, and the two date forms servers send. A server (or a proxy) may
// send anything; any bytes must end in a value or a Status, never a crash,
// hang or sanitizer report. Built only with clang (SILT_BUILD_FUZZERS=ON);
// see README.md in this directory.
#include <cstdint>
#include <string>
#include <string_view>

#include "silt/fs/s3_internal.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace s3 = silt::fs::s3;
  std::string_view xml(reinterpret_cast<const char*>(data), size);
  auto page = s3::ParseListObjectsV2(xml);
  (void)page;
  (void)s3::ParseErrorBody(xml);
  (void)s3::XmlFirst(xml, "UploadId");
  for (const std::string& upload : s3::XmlElements(xml, "Upload")) {
    (void)s3::XmlFirst(upload, "Key");
    (void)s3::XmlFirst(upload, "UploadId");
  }
  for (const std::string& error : s3::XmlElements(xml, "Error", /*decode=*/true)) {
    (void)s3::XmlFirst(error, "Code");
  }
  (void)s3::XmlDecode(xml);
  (void)s3::XmlEscape(xml);
  if (size <= 64) {
    (void)s3::ParseIso8601Ms(xml);
    (void)s3::ParseHttpDateMs(xml);
  }
  return 0;
}
