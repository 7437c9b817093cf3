// Inline equality of short byte strings for per-value loops (the Parquet
// writer's dictionary lookups and statistics, the Delta table writer's
// partition keys): up to 16 bytes are compared as
// two overlapping words, never read past either end, where a call to
// memcmp costs more than the test itself.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace silt::short_bytes {

// Whether a == b, answered inline (*decided = true) unless both are longer
// than 16 bytes and of equal length: then returns false with
// *decided = false, and the caller compares them (or not) as it sees fit.
inline bool ShortEqual(std::string_view a, std::string_view b, bool* decided) {
  const size_t n = a.size();
  *decided = true;
  if (n != b.size()) return false;
  if (n >= 8 && n <= 16) {
    uint64_t a0, b0, a1, b1;
    std::memcpy(&a0, a.data(), 8);
    std::memcpy(&b0, b.data(), 8);
    std::memcpy(&a1, a.data() + n - 8, 8);
    std::memcpy(&b1, b.data() + n - 8, 8);
    return ((a0 ^ b0) | (a1 ^ b1)) == 0;
  }
  if (n >= 4 && n < 8) {
    uint32_t a0, b0, a1, b1;
    std::memcpy(&a0, a.data(), 4);
    std::memcpy(&b0, b.data(), 4);
    std::memcpy(&a1, a.data() + n - 4, 4);
    std::memcpy(&b1, b.data() + n - 4, 4);
    return ((a0 ^ b0) | (a1 ^ b1)) == 0;
  }
  if (n < 4) {
    for (size_t i = 0; i < n; ++i) {
      if (a[i] != b[i]) return false;
    }
    return true;
  }
  *decided = false;
  return false;
}

// a == b: ShortEqual, else memcmp.
inline bool Equal(std::string_view a, std::string_view b) {
  bool decided;
  const bool equal = ShortEqual(a, b, &decided);
  return decided ? equal : std::memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace silt::short_bytes
