// Shared plumbing of the JSON decoder and get_json_object over simdjson's DOM
// API: a reusable parser with a padded scratch copy, value classification,
// and a writer that re-serializes values the way Spark's Jackson generator
// does (copyCurrentStructure: compact, numbers re-printed).
//
// DomReader reads a text's first JSON value as Spark's Jackson parser does.
// simdjson parses everyday input (one strict JSON value, valid UTF-8); a text
// simdjson rejects is read again by the Jackson-compatible lexer
// (jackson_internal.h), which accepts Jackson's extensions, replaces invalid
// UTF-8 with U+FFFD, stops after the first value, and writes that value as
// strict JSON for simdjson. Numbers simdjson cannot hold as Jackson does
// (integers beyond 64 bits, floats that overflow, long fractions) and
// NaN/Infinity tokens become marker strings "\0#<token text>"; KindOf()
// reports those as kBigNumber so converters see the exact original text.
// Only rejected rows pay for the second reading. (A genuine string value
// that starts with U+0000 '#' in such a row reads as a number: a known
// limit of the in-band marker.)
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

#include "silt/json/jackson_internal.h"

namespace silt::json::internal {

enum class ParseOutcome : uint8_t {
  kValue,      // *root is the first value
  kEmpty,      // no value at all (white space, comments): Spark's "no token"
  kMalformed,  // Jackson fails before the first value ends
};

class DomReader {
 public:
  explicit DomReader(const JacksonFeatures& features = JacksonFeatures::SparkDefaults());
  void set_features(const JacksonFeatures& features) { lexer_ = JacksonLexer(features); }

  // Reads the first JSON value of `text` as Jackson does under the reader's
  // features. On kValue *root points into the reader.
  ParseOutcome Parse(std::string_view text, simdjson::dom::element* root);
  // Parses strict JSON written by this module (a normalized value); false
  // when simdjson rejects it.
  bool ParseNormalized(std::string_view json, bool markers, simdjson::dom::element* root);
  // True when the last Parse() / ParseNormalized() value holds markers.
  bool has_markers() const { return has_markers_; }
  // True when the last Parse() read strings with unpaired surrogates, kept
  // as stand-ins (jackson_internal.h).
  bool has_lone_surrogates() const { return lone_surrogates_; }
  // After a Parse() that took the Jackson path: the text it read (`text`, or
  // a copy with invalid UTF-8 replaced), for a caller's own Jackson pass.
  std::string_view jackson_input() const { return jackson_input_; }
  JacksonLexer* lexer() { return &lexer_; }

 private:
  const char* Padded(std::string_view text);

  simdjson::dom::parser parser_;
  simdjson::dom::parser normalized_parser_;
  std::unique_ptr<char[]> padded_;
  size_t padded_capacity_ = 0;
  JacksonLexer lexer_;
  std::string sanitized_;
  std::string normalized_;
  std::string_view jackson_input_;
  bool has_markers_ = false;
  bool lone_surrogates_ = false;
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
  // Strings may hold stand-ins of unpaired surrogates (written as escapes);
  // kept across Reset().
  void set_lone_surrogates(bool value) { lone_surrogates_ = value; }
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
  // A number's text (a marker's) as Jackson re-prints it: integers verbatim
  // (BigInteger), others through double (NaN/Infinity tokens quoted).
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
  bool lone_surrogates_ = false;
};

// Appends `s` escaped as Jackson's UTF-8 generator writes a string: '"', '\\'
// and control characters escaped (\uXXXX in upper case but for \b \t \n \f
// \r), characters outside the BMP as an escaped surrogate pair, and (with
// `lone_surrogates`) stand-ins as their escaped unit.
void AppendJacksonEscaped(std::string* out, std::string_view s, bool lone_surrogates);

// Jackson's copyCurrentStructure of `value` into `gen`.
void CopyValue(simdjson::dom::element value, bool has_markers, JsonGen* gen);

// Double value of a number's text (a marker's) the way Java's
// Double.parseDouble reads it (overflow gives +-Infinity, underflow +-0);
// NaN/Infinity tokens give their value.
double TextToDouble(std::string_view text);
// Whether a marker's number text is an integer (VALUE_NUMBER_INT).
bool IsIntegerText(std::string_view text);

}  // namespace silt::json::internal
