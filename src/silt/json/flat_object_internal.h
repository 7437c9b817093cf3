// FlatObjectScanner: a single-pass reader for the everyday shape of an event
// document, a JSON object whose members are all scalars (the seed's
// envelope and its payload), that hands back each member's key and value
// without building a simdjson DOM tape: text is copied only for a string
// with escapes, decoded in the pass that validates it (decision 177).
//
// It reads only a strict subset of JSON on which simdjson's DOM (DomReader)
// and Jackson agree: printable ASCII outside escapes, keys without escapes,
// values that are strings, numbers (at most kMaxNumberLength characters;
// integers of at most 18 digits, so they fit int64; not "-0"), true, false
// or null, and nothing but JSON white space after the object. Anything else
// (nesting, non-ASCII bytes, surrogate escapes, long numbers, trailing
// text, malformed input) makes Scan() return false, and the caller reads
// the text with DomReader, which gives Spark's result in every case. So a
// fast path built on it must give, for every text Scan() accepts, exactly
// what the DOM path gives.
//
// Thread safety: one scanner per thread. Views returned point into the
// scanned text or, for a string with escapes, into the scanner's buffer:
// valid until the next Scan() and while the text lives.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace silt::json::internal {

enum class FlatKind : uint8_t { kNull, kTrue, kFalse, kString, kInt64, kDouble };

struct FlatMember {
  std::string_view key;
  FlatKind kind = FlatKind::kNull;
  // kString: the string's value, escapes decoded to UTF-8 in the same pass
  // that validates them (a view of the text between the quotes when it has
  // no escape, escaped false); kInt64 / kDouble: the number's text.
  std::string_view text;
  bool escaped = false;
  int64_t int_value = 0;
  double double_value = 0;
};

class FlatObjectScanner {
 public:
  static constexpr size_t kMaxNumberLength = 24;

  // Reads `text`; true when it is a flat object of the subset above, with
  // members() in document order (duplicates kept). False otherwise (the
  // members are then unspecified).
  bool Scan(std::string_view text);
  const std::vector<FlatMember>& members() const { return members_; }

 private:
  std::vector<FlatMember> members_;
  std::string decoded_;  // the decoded values of strings with escapes
};

// a == b, without a library call for the short keys of event objects (at
// most 16 bytes: two overlapping loads from each side, never past either).
inline bool SameKey(std::string_view a, std::string_view b) {
  const size_t n = a.size();
  if (n != b.size()) return false;
  const auto load = [](const char* p, auto word) {
    std::memcpy(&word, p, sizeof(word));
    return word;
  };
  if (n >= 8) {
    if (n > 16) return std::memcmp(a.data(), b.data(), n) == 0;
    return load(a.data(), uint64_t{}) == load(b.data(), uint64_t{}) &&
           load(a.data() + n - 8, uint64_t{}) == load(b.data() + n - 8, uint64_t{});
  }
  if (n >= 4) {
    return load(a.data(), uint32_t{}) == load(b.data(), uint32_t{}) &&
           load(a.data() + n - 4, uint32_t{}) == load(b.data() + n - 4, uint32_t{});
  }
  for (size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

}  // namespace silt::json::internal
