// Delta's golden tables (delta-io/delta's golden test data, copied to
// <repo>/../shared/conformance/ on CI machines) for the unit tests that read
// them. Missing data fails those tests: a silent skip hid for weeks that a
// checkout without ../shared ran none of them. Set
// SILT_ALLOW_MISSING_CONFORMANCE=1 to skip them instead (a laptop without
// the data); SILT_CONFORMANCE_DIR overrides the directory at run time.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace silt::testing {

// $SILT_CONFORMANCE_DIR when set, else `configured` (the CMake option
// SILT_CONFORMANCE_DIR, passed to the tests as a definition).
inline std::string ConformanceDir(const char* configured) {
  const char* env = std::getenv("SILT_CONFORMANCE_DIR");
  return env != nullptr && *env != '\0' ? std::string(env) : std::string(configured);
}

inline bool MissingConformanceAllowed() {
  const char* env = std::getenv("SILT_ALLOW_MISSING_CONFORMANCE");
  return env != nullptr && std::string(env) == "1";
}

}  // namespace silt::testing

// In a test body or SetUp: fails the test (or skips it, with
// SILT_ALLOW_MISSING_CONFORMANCE=1) when `path` does not exist.
#define SILT_REQUIRE_CONFORMANCE_DATA(path)                                                  \
  do {                                                                                       \
    const std::string _silt_conformance_path = (path);                                       \
    if (!std::filesystem::exists(_silt_conformance_path)) {                                  \
      if (::silt::testing::MissingConformanceAllowed()) {                                    \
        GTEST_SKIP() << "no conformance data at " << _silt_conformance_path                  \
                     << " (skipped: SILT_ALLOW_MISSING_CONFORMANCE=1)";                      \
      }                                                                                      \
      GTEST_FAIL() << "no conformance data at " << _silt_conformance_path                    \
                   << ": check out the shared folder beside the repo, point "                \
                      "SILT_CONFORMANCE_DIR at it, or set SILT_ALLOW_MISSING_CONFORMANCE=1 " \
                      "to skip";                                                             \
    }                                                                                        \
  } while (false)
