// Shared plumbing of the JSON decoder and get_json_object over simdjson's DOM
// API: a reusable parser with a padded scratch copy, value classification,
// and a writer that re-serializes values the way Spark's Jackson generator
// does (copyCurrentStructure: compact, numbers re-printed).
//
// Numbers simdjson cannot represent (integers beyond 64 bits, doubles that
// overflow) make simdjson reject the whole document, while Jackson reads them
// (BigInteger / BigDecimal / Infinity). DomReader therefore retries a
// rejected document once with every such number token rewritten into a
// marker string "\0#<original text>"; KindOf() reports those as kBigNumber so
// converters see the exact original digits. The retry only happens for
// documents simdjson rejected, so valid everyday input pays nothing.
//
// Thread safety: one DomReader / JsonGen per thread; elements returned by
// Parse() are valid until the next Parse() on the same reader.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace silt::json::internal {

class DomReader {
 public:
  // Parses `text` (copied into a reused padded buffer). Returns false when it
  // is not one valid JSON value. On success *root points into the reader.
  bool Parse(std::string_view text, simdjson::dom::element* root);
  // True when the last successful Parse() rewrote numbers into markers.
  bool has_markers() const { return has_markers_; }

 private:
  const char* Padded(std::string_view text);

  simdjson::dom::parser parser_;
  std::unique_ptr<char[]> padded_;
  size_t padded_capacity_ = 0;
  std::string rewritten_;
  bool has_markers_ = false;
};

enum class ValueKind : uint8_t {
  kNull,
  kBool,
  kInt64,
  kUint64,
  kDouble,
  kBigNumber,  // a number only available as text: BigNumberText()
  kString,
  kArray,
  kObject,
};

// `has_markers`: DomReader::has_markers() of the reader that parsed `value`.
ValueKind KindOf(simdjson::dom::element value, bool has_markers);
// REQUIRES: KindOf(value) == kBigNumber. The number's original JSON text.
std::string_view BigNumberText(simdjson::dom::element value);
// REQUIRES: kind is kString or kBigNumber; the raw string payload.
std::string_view StringOf(simdjson::dom::element value);

// Jackson JsonGenerator semantics: ',' between array elements and object
// members, ' ' between root-level values, raw writes bypass separators.
class JsonGen {
 public:
  // Starts writing at the end of *out (which is not cleared).
  void Reset(std::string* out) {
    out_ = out;
    stack_.clear();
    root_values_ = 0;
    after_name_ = false;
  }
  void StartArray() {
    BeforeValue();
    out_->push_back('[');
    stack_.push_back(0);
  }
  void EndArray() {
    out_->push_back(']');
    stack_.pop_back();
  }
  void StartObject() {
    BeforeValue();
    out_->push_back('{');
    stack_.push_back(0);
  }
  void EndObject() {
    out_->push_back('}');
    stack_.pop_back();
  }
  void FieldName(std::string_view name);
  void String(std::string_view value);
  void Int64(int64_t value);
  void Uint64(uint64_t value);
  // Java's Double.toString; NaN/Infinity quoted (QUOTE_NON_NUMERIC_NUMBERS).
  void Double(double value);
  // A number's JSON text as Jackson re-prints it: integers verbatim
  // (BigInteger), others through double.
  void NumberText(std::string_view text);
  void Bool(bool value) {
    BeforeValue();
    out_->append(value ? "true" : "false");
  }
  void Null() {
    BeforeValue();
    out_->append("null");
  }
  // writeRaw: no separator, no context change.
  void Raw(std::string_view text) { out_->append(text); }
  // writeRawValue: a complete value written verbatim.
  void RawValue(std::string_view text) {
    BeforeValue();
    out_->append(text);
  }

 private:
  void BeforeValue() {
    if (after_name_) {
      after_name_ = false;
    } else if (stack_.empty()) {
      if (root_values_++ > 0) out_->push_back(' ');
    } else if (stack_.back()++ > 0) {
      out_->push_back(',');
    }
  }

  std::string* out_ = nullptr;
  std::vector<int64_t> stack_;  // values written so far per open container
  int64_t root_values_ = 0;
  bool after_name_ = false;
};

// Jackson's copyCurrentStructure of `value` into `gen`.
void CopyValue(simdjson::dom::element value, bool has_markers, JsonGen* gen);

// Double value of a number's JSON text the way Java's Double.parseDouble
// reads it (overflow gives +-Infinity, underflow +-0).
double TextToDouble(std::string_view text);

}  // namespace silt::json::internal
