// libFuzzer target for job files (stream::ParseJobYaml, yaml-cpp below it,
// and the duration and byte-size option parsers): any text must parse to a
// JobSpec or give a Status, never a crash, hang or sanitizer report. Built
// only with clang (SILT_BUILD_FUZZERS=ON); see README.md in this directory.
#include <cstdint>
#include <string_view>

#include "silt/stream/job.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)silt::stream::ParseJobYaml(text, "fuzz.yaml");
  if (size <= 64) {
    (void)silt::stream::ParseDurationMicros(text);
    (void)silt::stream::ParseByteSize(text);
  }
  return 0;
}
