#include "silt/base/strings.h"

#include <algorithm>
#include <vector>

namespace silt {

size_t EditDistanceIgnoreCase(std::string_view a, std::string_view b) {
  const size_t cols = b.size() + 1;
  std::vector<size_t> d((a.size() + 1) * cols);
  auto at = [&](size_t i, size_t j) -> size_t& { return d[i * cols + j]; };
  auto same = [&](size_t i, size_t j) { return AsciiLower(a[i]) == AsciiLower(b[j]); };
  for (size_t i = 0; i <= a.size(); ++i) at(i, 0) = i;
  for (size_t j = 0; j <= b.size(); ++j) at(0, j) = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      at(i, j) = std::min(
          {at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + (same(i - 1, j - 1) ? 0 : 1)});
      if (i > 1 && j > 1 && same(i - 1, j - 2) && same(i - 2, j - 1)) {
        at(i, j) = std::min(at(i, j), at(i - 2, j - 2) + 1);
      }
    }
  }
  return at(a.size(), b.size());
}

namespace {

template <typename S>
std::string_view Closest(std::string_view name, std::span<const S> candidates) {
  const size_t limit = std::max<size_t>(1, name.size() / 3);
  std::string_view best;
  size_t best_distance = limit + 1;
  for (const S& candidate : candidates) {
    size_t distance = EditDistanceIgnoreCase(name, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

}  // namespace

std::string_view ClosestName(std::string_view name, std::span<const std::string_view> candidates) {
  return Closest(name, candidates);
}

std::string_view ClosestName(std::string_view name, std::span<const std::string> candidates) {
  return Closest(name, candidates);
}

}  // namespace silt
