// JsonPathGroup: the shared get_json_object evaluation of a BindSession.
#include <cstring>

#include "silt/expr/kernel/bind_session_internal.h"

namespace silt::expr {

namespace {

// True when both validity bitmaps mark the same rows valid.
bool SameValidity(const columnar::Column& a, const columnar::Column& b) {
  if (a.null_count != b.null_count) return false;
  if (a.null_count == 0) return true;
  if (a.validity == b.validity) return true;
  if (a.validity == nullptr || b.validity == nullptr) return false;
  const int64_t full_bytes = a.length / 8;
  if (std::memcmp(a.validity->data(), b.validity->data(), static_cast<size_t>(full_bytes)) != 0) {
    return false;
  }
  for (int64_t row_idx = full_bytes * 8; row_idx < a.length; ++row_idx) {
    if (a.IsValid(row_idx) != b.IsValid(row_idx)) return false;
  }
  return true;
}

// Same values: the same string buffers (a struct field re-read for each
// select item is a new Column over the same buffers) and the same nulls.
bool SameData(const columnar::Column& a, const columnar::Column& b) {
  return a.type->id() == b.type->id() && a.length == b.length && a.values == b.values &&
         a.data == b.data && SameValidity(a, b);
}

// True when every row set in `wanted` (null: every row) is set in
// `evaluated` (empty: every row).
bool Covers(const std::vector<uint8_t>& evaluated, const uint8_t* wanted, int64_t length) {
  if (evaluated.empty()) return true;
  const int64_t bytes = (length + 7) / 8;
  if (static_cast<int64_t>(evaluated.size()) != bytes) return false;
  for (int64_t byte_idx = 0; byte_idx < bytes; ++byte_idx) {
    const uint8_t want = wanted != nullptr ? wanted[byte_idx] : uint8_t{0xFF};
    uint8_t missing = static_cast<uint8_t>(want & ~evaluated[byte_idx]);
    if (byte_idx == bytes - 1 && length % 8 != 0) {
      missing &= static_cast<uint8_t>((1u << (length % 8)) - 1);
    }
    if (missing != 0) return false;
  }
  return true;
}

}  // namespace

bool JsonPathGroup::IsKeptRowsOfCached(const columnar::Column& input) const {
  if (scope_ == nullptr || scope_->kept_from_rows < 0 || cached_input_ == nullptr) return false;
  const columnar::Column& cached = *cached_input_;
  const std::vector<int64_t>& rows = scope_->kept_rows;
  if (cached.length != scope_->kept_from_rows ||
      input.length != static_cast<int64_t>(rows.size()) || cached.type->id() != input.type->id()) {
    return false;
  }
  for (size_t idx = 0; idx < rows.size(); ++idx) {
    const int64_t row = rows[idx];
    if (!cached_rows_.empty() && !columnar::GetBit(cached_rows_.data(), row)) return false;
    const bool valid = input.IsValid(static_cast<int64_t>(idx));
    if (valid != cached.IsValid(row)) return false;
    if (valid && input.StringValue(static_cast<int64_t>(idx)) != cached.StringValue(row)) {
      return false;
    }
  }
  return true;
}

Result<columnar::ColumnPtr> JsonPathGroup::Get(int path_index, const columnar::ColumnPtr& input) {
  const uint8_t* active = nullptr;
  if (scope_ != nullptr && scope_->active_rows != nullptr &&
      scope_->active_length == input->length) {
    active = scope_->active_rows;
  }
  const bool complete = static_cast<int>(cached_results_.size()) == evaluator_->num_paths();
  bool hit = cached_input_ != nullptr && complete &&
             (cached_input_ == input || SameData(*cached_input_, *input)) &&
             Covers(cached_rows_, active, input->length);
  if (!hit && complete && IsKeptRowsOfCached(*input)) {
    // The rows a filter kept: take their results instead of parsing again.
    for (columnar::ColumnPtr& result : cached_results_) {
      result = columnar::TakeColumn(*result, scope_->kept_rows);
    }
    cached_input_ = input;
    cached_rows_.clear();
    hit = true;
  }
  if (!hit) {
    cached_input_ = nullptr;
    SILT_ASSIGN_OR_RETURN(cached_results_, evaluator_->Evaluate(*input, active));
    cached_input_ = input;
    if (active != nullptr) {
      cached_rows_.assign(active, active + (input->length + 7) / 8);
    } else {
      cached_rows_.clear();
    }
  }
  return cached_results_[static_cast<size_t>(path_index)];
}

}  // namespace silt::expr
