// What `silt --version` prints about the build: the git commit the binary
// was built from and the platform it was built for. The values come from
// build_info.cc, which the build regenerates (cmake/SiltBuildInfo.cmake)
// whenever the commit changes, so only that file recompiles.
#pragma once

#include <string_view>

namespace silt::cli {

// The commit, abbreviated ("331e234ab1c2"), with "-dirty" when tracked files
// differed from it; "unknown" when built outside a git checkout.
std::string_view BuildCommit();

// The target platform as Go and Docker spell it: "linux/amd64", "linux/arm64".
std::string_view BuildTarget();

}  // namespace silt::cli
