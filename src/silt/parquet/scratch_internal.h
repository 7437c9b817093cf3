// ScratchVector<T>: a std::vector of trivial values whose resize() leaves
// the new elements uninitialised, for the column writers' per-page and
// per-slice scratch arrays (dictionary indices, gathered values), which
// are grown and then written in full. A plain std::vector value-initialises
// (zero-fills) every element resize() adds, only for the writer to
// overwrite it; in workload A's profile that zero-fill was ~8 M
// instructions (issue #22, decision 188). Private to the Parquet writer.
//
// REQUIRES of a caller of resize(n) on a ScratchVector: every element in
// [old size, n) is written before it is read.
//
// Thread safety: as std::vector.
#pragma once

#include <memory>
#include <utility>
#include <vector>

namespace silt::parquet::internal {

// An allocator whose value-initialising construct() default-initialises
// instead: for trivial T no store at all (std::string_view still runs its
// constructor). Other constructions forward.
template <typename T>
class DefaultInitAllocator : public std::allocator<T> {
 public:
  template <typename U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  DefaultInitAllocator() noexcept = default;
  template <typename U>
  DefaultInitAllocator(const DefaultInitAllocator<U>&) noexcept {}

  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

template <typename T>
using ScratchVector = std::vector<T, DefaultInitAllocator<T>>;

}  // namespace silt::parquet::internal
