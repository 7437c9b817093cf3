// TempDir: a fresh directory under $TMPDIR (or /tmp) removed with everything
// in it when the object is destroyed. For tests.
#pragma once

#include <string>

namespace silt::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace silt::testing
