// A tokenizer that reads JSON text the way Spark 3.5's Jackson parser
// (jackson-core 2.15 ReaderBasedJsonParser over Java's UTF-8 InputStreamReader)
// reads it, for the rows simdjson rejects: the same JSON extensions under the
// same switches (single quotes, unquoted names, comments, leading zeros,
// NaN/Infinity, any escaped character, raw control characters), the same
// points at which a token is read eagerly or lazily (a string's content is
// decoded when it is asked for, or checked when it is skipped; numbers,
// names and single-quoted strings are read with their token, and a field's
// value token is read with its name), the same errors at the same input
// positions, and the same depth (1000) and number-length (1000) limits.
// What follows the first value is never read unless asked for.
//
// Errors are thrown as JacksonError (Jackson's JsonProcessingException) and
// never leave the json module: the decoders catch them where Spark's code
// catches Jackson's, so that a malformed record gets the same partial result.
//
// Input must be valid UTF-8: SanitizeUtf8() first replaces invalid bytes with
// U+FFFD as Java's decoder does. Decoded strings are UTF-8. An unpaired
// surrogate (from a \uD800-style escape) has no UTF-8 form; Spark's outputs
// treat it differently (a string value gets '?', as String.getBytes(UTF_8)
// writes it; Jackson's generator escapes it; a raw write fails), so it is
// kept as a stand-in: the private-use code point U+F0000 + (unit - 0xD800),
// and saw_lone_surrogates() tells the consumer to interpret stand-ins. (A
// genuine U+F0000..U+F07FF character in such a row reads as a stand-in: a
// known limit.)
//
// Thread safety: one lexer per thread. Views returned are valid until the
// next call on the lexer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace silt::json::internal {

// JsonReadFeature switches (Spark's JSON options map to them one to one).
struct JacksonFeatures {
  bool allow_comments = false;                // allowComments
  bool allow_unquoted_field_names = false;    // allowUnquotedFieldNames
  bool allow_single_quotes = false;           // allowSingleQuotes
  bool allow_leading_zeros = false;           // allowNumericLeadingZeros
  bool allow_non_numeric_numbers = false;     // allowNonNumericNumbers
  bool allow_backslash_escaping_any = false;  // allowBackslashEscapingAnyCharacter
  bool allow_unquoted_control_chars = false;  // allowUnquotedControlChars
  int max_nesting_depth = 1000;               // StreamReadConstraints defaults
  int max_number_length = 1000;

  // Spark's JSONOptions defaults (from_json, schema_of_json, the JSON file
  // source): single quotes and NaN/Infinity on, the rest off.
  static JacksonFeatures SparkDefaults() {
    JacksonFeatures f;
    f.allow_single_quotes = true;
    f.allow_non_numeric_numbers = true;
    return f;
  }
  // get_json_object and json_tuple: Hive's factory (single quotes and raw
  // control characters on, NaN/Infinity off).
  static JacksonFeatures SparkJsonPath() {
    JacksonFeatures f;
    f.allow_single_quotes = true;
    f.allow_unquoted_control_chars = true;
    return f;
  }
};

enum class JToken : uint8_t {
  kNone,  // before the first token, or end of input
  kStartObject,
  kEndObject,
  kStartArray,
  kEndArray,
  kFieldName,
  kString,
  kInt,    // VALUE_NUMBER_INT
  kFloat,  // VALUE_NUMBER_FLOAT (NaN/Infinity tokens included)
  kTrue,
  kFalse,
  kNull,
};

// What Jackson would throw (JsonParseException, StreamConstraintsException,
// or a conversion error of the caller's).
struct JacksonError {
  const char* what;
};

// Copies `text` to *out with each maximal invalid UTF-8 subpart replaced by
// U+FFFD (Java's UTF-8 decoder's REPLACE). Returns false, leaving *out
// untouched, when `text` is valid UTF-8.
bool SanitizeUtf8(std::string_view text, std::string* out);

constexpr uint32_t kStandInBase = 0xF0000;
// The length (4) of the stand-in at text[pos] with *unit its UTF-16 unit, or 0.
size_t StandInAt(std::string_view text, size_t pos, uint32_t* unit);
// Appends `text` with each stand-in replaced by '?'.
void AppendWithoutStandIns(std::string_view text, std::string* out);

class JacksonLexer {
 public:
  explicit JacksonLexer(const JacksonFeatures& features) : features_(features) {}

  // Starts reading `text` (valid UTF-8; not copied: must outlive the reads).
  void Reset(std::string_view text);

  // Jackson's nextToken(): the next token, kNone at the end of input.
  // Throws JacksonError.
  JToken NextToken();
  JToken current() const { return current_; }
  // skipChildren(): at a start marker, reads to its matching end marker.
  void SkipChildren();

  // getCurrentName(): the field name of the current token (for a start
  // marker, the name it is the value of). False when there is none.
  bool CurrentName(std::string_view* name) const;

  // REQUIRES: current() is kString. getText(): decodes the string (a lazy
  // one is finished now, which may throw).
  std::string_view StringValue();
  // REQUIRES: current() is kFieldName.
  std::string_view FieldName() const { return contexts_.back().name; }

  // REQUIRES: current() is kInt or kFloat. The number's text as Jackson keeps
  // it (sign, digits with leading zeros dropped, fraction, exponent), or the
  // token for NaN/Infinity ("NaN", "Infinity", "+Infinity", "-Infinity",
  // "+INF", "-INF").
  std::string_view NumberText() const { return number_text_; }
  // REQUIRES: current() is kFloat. A NaN/Infinity token; *value is its double.
  bool IsNonNumeric(double* value) const;

  // Input offsets: where the current token starts and how far the lexer has
  // read (for a lazy string: up to its opening quote only).
  size_t token_start() const { return token_start_; }
  size_t position() const { return pos_; }
  // True while the current string's content has not been read.
  bool string_pending() const { return string_pending_; }
  // Depth of open containers (root = 0).
  int depth() const { return static_cast<int>(contexts_.size()) - 1; }
  // Whether a string decoded since Reset() held an unpaired surrogate.
  bool saw_lone_surrogates() const { return lone_surrogates_; }

 private:
  enum class Ctx : uint8_t { kRoot, kArray, kObject };
  struct Context {
    Ctx type;
    int64_t index = -1;
    bool has_name = false;
    std::string name;
  };

  [[noreturn]] static void Fail(const char* what) { throw JacksonError{what}; }
  int Peek() const { return pos_ < text_.size() ? static_cast<unsigned char>(text_[pos_]) : -1; }
  // The code point at pos_ (ASCII or a UTF-8 sequence) and its byte length.
  uint32_t CodePointAt(size_t pos, size_t* length) const;

  void PushContext(Ctx type);
  void CloseScope(int c);
  // The next character that is not white space or a comment (a code point,
  // pos_ after it; char_start_ at it); -1 at the end of input, which is an
  // error inside a container.
  int SkipWsOrEnd();
  // As SkipWsOrEnd, where the end of input is always an error.
  int SkipWsInValue();
  int SkipComma(int c);
  int SkipColon();
  void SkipComment();
  void SkipLine();
  void SkipCComment();
  static void InvalidSpace(int c);

  void ParseName(int quote);
  void ParseOddName(int c);
  JToken ParseValue(int c, bool in_object);
  JToken HandleOddValue(int c);
  JToken ParseNumber(bool negative);
  JToken HandleInvalidNumberStart(int c, bool negative, bool has_sign);
  void VerifyRootSpace(int c);
  void MatchToken(std::string_view word, size_t matched);
  // Reads on over the rest of what looks like a token, then fails.
  [[noreturn]] void ReportInvalidToken(size_t matched);
  JToken NonNumeric(std::string_view token, double value);

  // Reads a string whose opening quote is behind pos_ up to `quote`,
  // decoding into *out (nullptr: only checks, as _skipString).
  void ReadString(char quote, std::string* out);
  uint32_t DecodeEscape();

  JacksonFeatures features_;
  std::string_view text_;
  size_t pos_ = 0;
  size_t char_start_ = 0;
  size_t token_start_ = 0;
  JToken current_ = JToken::kNone;
  JToken next_ = JToken::kNone;  // the value token read with a field name
  bool string_pending_ = false;
  std::vector<Context> contexts_;
  std::string string_value_;
  std::string number_text_;
  double non_numeric_ = 0;
  bool is_non_numeric_ = false;
  bool lone_surrogates_ = false;
};

// Writes the first JSON value of `text` (sanitized UTF-8) as strict JSON
// into *out, read as Jackson reads it under `features`: strings re-escaped,
// names quoted, numbers as Jackson's token text with leading zeros dropped
// and "-0" as "0". Numbers simdjson cannot hold as Jackson does (integers
// beyond 64 bits, floats that overflow or underflow, more than 17
// significant digits) and NaN/Infinity tokens are written as marker strings
// "\u0000#<token text>" (dom_internal.h), and *has_markers is set.
// Returns false when the text holds no value (empty or only white space).
// Throws JacksonError where Jackson's parser would fail while reading that
// value; what follows the value is not read.
bool NormalizeFirstValue(JacksonLexer* lexer, std::string_view text, std::string* out,
                         bool* has_markers);

// Appends the value whose first token is the lexer's current token (and the
// tokens up to its end) to *out as strict JSON, as NormalizeFirstValue.
void AppendNormalizedValue(JacksonLexer* lexer, std::string* out, bool* has_markers);

}  // namespace silt::json::internal
