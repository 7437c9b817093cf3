#include "silt/base/status.h"

#include <cstdio>
#include <cstdlib>

#include "silt/base/result.h"

namespace silt {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kInvalidArgument: return "Invalid argument";
    case StatusCode::kNotFound: return "Not found";
    case StatusCode::kAlreadyExists: return "Already exists";
    case StatusCode::kConflict: return "Conflict";
    case StatusCode::kCorruption: return "Corruption";
    case StatusCode::kIOError: return "IO error";
    case StatusCode::kNotSupported: return "Not supported";
    case StatusCode::kCancelled: return "Cancelled";
    case StatusCode::kResourceExhausted: return "Resource exhausted";
    case StatusCode::kInternal: return "Internal error";
  }
  return "Unknown";
}

Status::Status(StatusCode code, std::string message, bool retryable) {
  if (code != StatusCode::kOk) {
    state_ = std::make_unique<State>(State{code, retryable, std::move(message)});
  }
}

Status::Status(const Status& other)
    : state_(other.state_ ? std::make_unique<State>(*other.state_) : nullptr) {}

Status& Status::operator=(const Status& other) {
  if (this != &other) state_ = other.state_ ? std::make_unique<State>(*other.state_) : nullptr;
  return *this;
}

const std::string& Status::message() const {
  static const std::string kEmpty;
  return ok() ? kEmpty : state_->message;
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string out(StatusCodeName(state_->code));
  out += ": ";
  out += state_->message;
  return out;
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  std::string msg(context);
  msg += ": ";
  msg += state_->message;
  return Status(state_->code, std::move(msg), state_->retryable);
}

Status Status::WithRetryable(bool retryable) const {
  if (ok()) return *this;
  return Status(state_->code, state_->message, retryable);
}

namespace status_internal {
void AppendPart(std::string* out, std::string_view s) { out->append(s); }
void AppendPart(std::string* out, const char* s) { out->append(s ? s : "(null)"); }
void AppendPart(std::string* out, const std::string& s) { out->append(s); }
void AppendPart(std::string* out, char c) { out->push_back(c); }
void AppendPart(std::string* out, bool b) { out->append(b ? "true" : "false"); }
void AppendPart(std::string* out, long long v) { out->append(std::to_string(v)); }
void AppendPart(std::string* out, unsigned long long v) { out->append(std::to_string(v)); }
void AppendPart(std::string* out, double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  out->append(buf);
}
}  // namespace status_internal

namespace internal {
void DieOnErrorResult(const Status& status) {
  std::string line = "Result::ValueOrDie on an error: " + status.ToString() + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
  std::abort();
}
}  // namespace internal

}  // namespace silt
