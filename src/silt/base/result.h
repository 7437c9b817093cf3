// Result<T>: a value of type T or an error Status. Returned by fallible
// functions that produce something (factories named Make/Open, readers).
//
// Thread safety: a value type, like Status.
#pragma once

#include <optional>
#include <utility>

#include "silt/base/status.h"

namespace silt {

namespace internal {
// Prints `status` to stderr and aborts: a Result read without checking ok()
// is a bug in every build type, not only with assertions on.
[[noreturn]] void DieOnErrorResult(const Status& status);
}  // namespace internal

template <typename T>
class [[nodiscard]] Result {
 public:
  // REQUIRES: !status.ok(). An OK status without a value is a programming
  // error and becomes an Internal error.
  Result(Status status)  // NOLINT(google-explicit-constructor)
      : status_(std::move(status)) {
    if (status_.ok()) status_ = Status::Internal("Result constructed from OK status without value");
  }
  Result(T value)  // NOLINT(google-explicit-constructor)
      : value_(std::move(value)) {}
  template <typename U, typename = std::enable_if_t<std::is_convertible_v<U&&, T> &&
                                                    !std::is_same_v<std::decay_t<U>, Status> &&
                                                    !std::is_same_v<std::decay_t<U>, T>>>
  Result(U&& value)  // NOLINT(google-explicit-constructor)
      : value_(T(std::forward<U>(value))) {}

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

  // REQUIRES: ok(); otherwise prints status() to stderr and aborts (the
  // dereference operators too).
  const T& ValueOrDie() const& {
    if (!ok()) internal::DieOnErrorResult(status_);
    return *value_;
  }
  T& ValueOrDie() & {
    if (!ok()) internal::DieOnErrorResult(status_);
    return *value_;
  }
  T ValueOrDie() && {
    if (!ok()) internal::DieOnErrorResult(status_);
    return std::move(*value_);
  }
  const T& operator*() const& { return ValueOrDie(); }
  T& operator*() & { return ValueOrDie(); }
  const T* operator->() const { return &ValueOrDie(); }
  T* operator->() { return &ValueOrDie(); }

  // REQUIRES: ok(), unchecked (the ASSIGN_OR_RETURN macros test ok() first).
  T MoveValueUnsafe() { return std::move(*value_); }
  T ValueOr(T fallback) const& { return ok() ? *value_ : std::move(fallback); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace silt

#define SILT_CONCAT_IMPL(a, b) a##b
#define SILT_CONCAT(a, b) SILT_CONCAT_IMPL(a, b)

// Declares/assigns `lhs` from a Result expression, or returns its error.
//   SILT_ASSIGN_OR_RETURN(auto file, fs.OpenForRead(path));
#define SILT_ASSIGN_OR_RETURN(lhs, rexpr) \
  SILT_ASSIGN_OR_RETURN_IMPL(SILT_CONCAT(_silt_result_, __LINE__), lhs, rexpr)

#define SILT_ASSIGN_OR_RETURN_IMPL(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                               \
  if (!tmp.ok()) return tmp.status();               \
  lhs = std::move(tmp).MoveValueUnsafe();

// As SILT_ASSIGN_OR_RETURN, adding context to the error.
#define SILT_ASSIGN_OR_RETURN_CTX(lhs, rexpr, ...) \
  SILT_ASSIGN_OR_RETURN_CTX_IMPL(SILT_CONCAT(_silt_result_, __LINE__), lhs, rexpr, __VA_ARGS__)

#define SILT_ASSIGN_OR_RETURN_CTX_IMPL(tmp, lhs, rexpr, ...)        \
  auto tmp = (rexpr);                                               \
  if (!tmp.ok()) return tmp.status().WithContextParts(__VA_ARGS__); \
  lhs = std::move(tmp).MoveValueUnsafe();
