// Status: the outcome of an operation that can fail, carried across every
// module boundary in silt instead of exceptions.
//
// A Status is either OK (no allocation) or an error with a code, a message
// that names the object at fault (path, offset, column, job-file key) and a
// `retryable` bit that adapters for remote storage and brokers set when the
// same request may succeed if repeated. Retry policies read the bit, never
// the message.
//
// Thread safety: a Status is a value; distinct objects may be used from
// distinct threads. Copying an error Status copies its state.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace silt {

enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument,
  kNotFound,
  kAlreadyExists,  // lost a put-if-absent race
  kConflict,       // a Delta logical conflict between transactions
  kCorruption,
  kIOError,
  kNotSupported,  // e.g. an unknown Delta table feature; the message names it
  kCancelled,
  kResourceExhausted,
  kInternal,
};

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() noexcept = default;
  Status(StatusCode code, std::string message, bool retryable = false);

  Status(const Status& other);
  Status& operator=(const Status& other);
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;

  static Status OK() { return Status(); }

  template <typename... Args>
  static Status InvalidArgument(Args&&... args) {
    return Make(StatusCode::kInvalidArgument, std::forward<Args>(args)...);
  }
  template <typename... Args>
  static Status NotFound(Args&&... args) {
    return Make(StatusCode::kNotFound, std::forward<Args>(args)...);
  }
  template <typename... Args>
  static Status AlreadyExists(Args&&... args) {
    return Make(StatusCode::kAlreadyExists, std::forward<Args>(args)...);
  }
  template <typename... Args>
  static Status Conflict(Args&&... args) {
    return Make(StatusCode::kConflict, std::forward<Args>(args)...);
  }
  template <typename... Args>
  static Status Corruption(Args&&... args) {
    return Make(StatusCode::kCorruption, std::forward<Args>(args)...);
  }
  template <typename... Args>
  static Status IOError(Args&&... args) {
    return Make(StatusCode::kIOError, std::forward<Args>(args)...);
  }
  template <typename... Args>
  static Status NotSupported(Args&&... args) {
    return Make(StatusCode::kNotSupported, std::forward<Args>(args)...);
  }
  template <typename... Args>
  static Status Cancelled(Args&&... args) {
    return Make(StatusCode::kCancelled, std::forward<Args>(args)...);
  }
  template <typename... Args>
  static Status ResourceExhausted(Args&&... args) {
    return Make(StatusCode::kResourceExhausted, std::forward<Args>(args)...);
  }
  template <typename... Args>
  static Status Internal(Args&&... args) {
    return Make(StatusCode::kInternal, std::forward<Args>(args)...);
  }

  bool ok() const { return state_ == nullptr; }
  StatusCode code() const { return ok() ? StatusCode::kOk : state_->code; }
  // The message without the code prefix; empty for OK.
  const std::string& message() const;
  bool retryable() const { return !ok() && state_->retryable; }

  bool IsInvalidArgument() const { return code() == StatusCode::kInvalidArgument; }
  bool IsNotFound() const { return code() == StatusCode::kNotFound; }
  bool IsAlreadyExists() const { return code() == StatusCode::kAlreadyExists; }
  bool IsConflict() const { return code() == StatusCode::kConflict; }
  bool IsCorruption() const { return code() == StatusCode::kCorruption; }
  bool IsIOError() const { return code() == StatusCode::kIOError; }
  bool IsNotSupported() const { return code() == StatusCode::kNotSupported; }
  bool IsCancelled() const { return code() == StatusCode::kCancelled; }

  // "<Code>: <message>", or "OK".
  std::string ToString() const;

  // Returns a copy whose message is "<context>: <message>"; same code and
  // retryable bit. OK stays OK.
  Status WithContext(std::string_view context) const;
  template <typename... Args>
  Status WithContextParts(Args&&... args) const {
    if (ok()) return *this;
    return WithContext(Concat(std::forward<Args>(args)...));
  }

  Status WithRetryable(bool retryable) const;

  // Spells out that an error is deliberately dropped.
  void IgnoreError(std::string_view /*why*/) const {}

  template <typename... Args>
  static std::string Concat(Args&&... args);

 private:
  struct State {
    StatusCode code;
    bool retryable;
    std::string message;
  };
  template <typename... Args>
  static Status Make(StatusCode code, Args&&... args) {
    return Status(code, Concat(std::forward<Args>(args)...));
  }
  std::unique_ptr<State> state_;
};

namespace status_internal {
void AppendPart(std::string* out, std::string_view s);
void AppendPart(std::string* out, const char* s);
void AppendPart(std::string* out, const std::string& s);
void AppendPart(std::string* out, char c);
void AppendPart(std::string* out, bool b);
void AppendPart(std::string* out, long long v);
void AppendPart(std::string* out, unsigned long long v);
void AppendPart(std::string* out, double v);
inline void AppendPart(std::string* out, int v) { AppendPart(out, static_cast<long long>(v)); }
inline void AppendPart(std::string* out, long v) { AppendPart(out, static_cast<long long>(v)); }
inline void AppendPart(std::string* out, unsigned v) {
  AppendPart(out, static_cast<unsigned long long>(v));
}
inline void AppendPart(std::string* out, unsigned long v) {
  AppendPart(out, static_cast<unsigned long long>(v));
}
inline void AppendPart(std::string* out, float v) { AppendPart(out, static_cast<double>(v)); }
}  // namespace status_internal

template <typename... Args>
std::string Status::Concat(Args&&... args) {
  std::string out;
  (status_internal::AppendPart(&out, std::forward<Args>(args)), ...);
  return out;
}

}  // namespace silt

// Returns early from the enclosing function if `expr` is an error Status.
#define SILT_RETURN_NOT_OK(expr)         \
  do {                                   \
    ::silt::Status _silt_st = (expr);    \
    if (!_silt_st.ok()) return _silt_st; \
  } while (false)

// As SILT_RETURN_NOT_OK, adding context ("committing version ", v) in front
// of the message.
#define SILT_RETURN_NOT_OK_CTX(expr, ...)                              \
  do {                                                                 \
    ::silt::Status _silt_st = (expr);                                  \
    if (!_silt_st.ok()) return _silt_st.WithContextParts(__VA_ARGS__); \
  } while (false)
