// Small string helpers shared by every module (header-only, no allocation).
#pragma once

#include <cctype>
#include <string_view>

namespace silt {

// ASCII case-insensitive equality: how Spark resolves column names and
// option keys (spark.sql.caseSensitive=false), and how HTTP header names
// compare.
inline bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

}  // namespace silt
