// schema_of_json's inference: Spark's JsonInferSchema.inferField over the
// tokens of the first JSON value, read as Jackson reads it.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "silt/json/jackson_internal.h"
#include "silt/json/json_decoder.h"

namespace silt::json {

namespace {

// Spark's JsonInferSchema over one document
// (default options: numbers without a fraction or exponent are BIGINT, or
// DECIMAL(p,0) beyond a long, DOUBLE past 38 digits; others DOUBLE; strings
// STRING; objects STRUCTs with their fields sorted by name; arrays the
// common type of their elements; NULL and empty arrays' elements STRING).

struct InferredType {
  enum Kind { kNull, kBoolean, kLong, kDecimal, kDouble, kString, kArray, kStruct } kind = kNull;
  int precision = 0;  // kDecimal
  int scale = 0;
  std::vector<InferredType> children;  // kArray: the element; kStruct: fields
  std::vector<std::string> names;      // kStruct
};

bool IsNumeric(const InferredType& t) {
  return t.kind == InferredType::kLong || t.kind == InferredType::kDecimal ||
         t.kind == InferredType::kDouble;
}

// JsonInferSchema.compatibleType.
InferredType Compatible(const InferredType& a, const InferredType& b) {
  using K = InferredType::Kind;
  if (a.kind == K::kNull) return b;
  if (b.kind == K::kNull) return a;
  if (IsNumeric(a) && IsNumeric(b)) {
    if (a.kind == K::kDouble || b.kind == K::kDouble) {
      InferredType out;
      out.kind = K::kDouble;
      return out;
    }
    if (a.kind == K::kLong && b.kind == K::kLong) return a;
    // A long widens to DECIMAL(20,0).
    auto as_decimal = [](const InferredType& t) {
      InferredType d = t;
      if (t.kind == K::kLong) {
        d.kind = K::kDecimal;
        d.precision = 20;
        d.scale = 0;
      }
      return d;
    };
    InferredType x = as_decimal(a);
    InferredType y = as_decimal(b);
    int scale = std::max(x.scale, y.scale);
    int range = std::max(x.precision - x.scale, y.precision - y.scale);
    InferredType out;
    if (range + scale > 38) {
      out.kind = K::kDouble;
    } else {
      out.kind = K::kDecimal;
      out.precision = range + scale;
      out.scale = scale;
    }
    return out;
  }
  if (a.kind == K::kStruct && b.kind == K::kStruct) {
    InferredType out;
    out.kind = K::kStruct;
    size_t i = 0;
    size_t j = 0;
    while (i < a.names.size() || j < b.names.size()) {
      if (j >= b.names.size() || (i < a.names.size() && a.names[i] < b.names[j])) {
        out.names.push_back(a.names[i]);
        out.children.push_back(a.children[i++]);
      } else if (i >= a.names.size() || b.names[j] < a.names[i]) {
        out.names.push_back(b.names[j]);
        out.children.push_back(b.children[j++]);
      } else {
        out.names.push_back(a.names[i]);
        out.children.push_back(Compatible(a.children[i++], b.children[j++]));
      }
    }
    return out;
  }
  if (a.kind == K::kArray && b.kind == K::kArray) {
    InferredType out;
    out.kind = K::kArray;
    out.children.push_back(Compatible(a.children[0], b.children[0]));
    return out;
  }
  if (a.kind == b.kind && a.kind != K::kDecimal) return a;
  InferredType out;
  out.kind = K::kString;
  return out;
}

// StructField.sql's name: as is when [a-zA-Z0-9_]+ and not all digits,
// else in backquotes (doubled inside).
void AppendFieldName(const std::string& name, std::string* out) {
  bool plain = !name.empty();
  bool all_digits = true;
  for (char c : name) {
    bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!alnum && c != '_') plain = false;
    if (c < '0' || c > '9') all_digits = false;
  }
  if (plain && !all_digits) {
    out->append(name);
    return;
  }
  out->push_back('`');
  for (char c : name) {
    if (c == '`') out->push_back('`');
    out->push_back(c);
  }
  out->push_back('`');
}

// JsonInferSchema.canonicalizeType: NULL becomes STRING; fields with an
// empty name are dropped, and so are fields (and array elements) whose
// type canonicalizes to nothing: a struct left without fields. False when
// nothing is left of `t`.
bool Canonicalize(InferredType* t) {
  switch (t->kind) {
    case InferredType::kNull: t->kind = InferredType::kString; return true;
    case InferredType::kArray: return Canonicalize(&t->children[0]);
    case InferredType::kStruct: {
      std::vector<std::string> names;
      std::vector<InferredType> children;
      for (size_t i = 0; i < t->names.size(); ++i) {
        if (t->names[i].empty() || !Canonicalize(&t->children[i])) continue;
        names.push_back(std::move(t->names[i]));
        children.push_back(std::move(t->children[i]));
      }
      t->names = std::move(names);
      t->children = std::move(children);
      return !t->names.empty();
    }
    default: return true;
  }
}

// DataType.sql of a canonical type.
void AppendSql(const InferredType& t, std::string* out) {
  switch (t.kind) {
    case InferredType::kNull:
    case InferredType::kString: out->append("STRING"); return;
    case InferredType::kBoolean: out->append("BOOLEAN"); return;
    case InferredType::kLong: out->append("BIGINT"); return;
    case InferredType::kDouble: out->append("DOUBLE"); return;
    case InferredType::kDecimal:
      out->append("DECIMAL(" + std::to_string(t.precision) + "," + std::to_string(t.scale) + ")");
      return;
    case InferredType::kArray:
      out->append("ARRAY<");
      AppendSql(t.children[0], out);
      out->push_back('>');
      return;
    case InferredType::kStruct: {
      out->append("STRUCT<");
      for (size_t i = 0; i < t.names.size(); ++i) {
        if (i > 0) out->append(", ");
        AppendFieldName(t.names[i], out);
        out->append(": ");
        AppendSql(t.children[i], out);
      }
      out->push_back('>');
      return;
    }
  }
}

// SchemaOfJson.eval: the canonical type's SQL; an object with nothing left
// is STRUCT<>, an array of such objects ARRAY<STRUCT<>>, anything else with
// nothing left (or no document at all) STRING.
std::string SchemaDdl(InferredType type) {
  const bool is_struct = type.kind == InferredType::kStruct;
  const bool is_struct_array =
      type.kind == InferredType::kArray && type.children[0].kind == InferredType::kStruct;
  if (Canonicalize(&type)) {
    std::string ddl;
    AppendSql(type, &ddl);
    return ddl;
  }
  if (is_struct) return "STRUCT<>";
  if (is_struct_array) return "ARRAY<STRUCT<>>";
  return "STRING";
}

// JacksonFeatures of Spark's JSON options.
internal::JacksonFeatures Features(const JsonParseOptions& options) {
  internal::JacksonFeatures f;
  f.allow_comments = options.allow_comments;
  f.allow_unquoted_field_names = options.allow_unquoted_field_names;
  f.allow_single_quotes = options.allow_single_quotes;
  f.allow_leading_zeros = options.allow_numeric_leading_zeros;
  f.allow_non_numeric_numbers = options.allow_non_numeric_numbers;
  f.allow_backslash_escaping_any = options.allow_backslash_escaping_any_character;
  f.allow_unquoted_control_chars = options.allow_unquoted_control_chars;
  return f;
}

// inferField from the lexer's current token (reading on to the value's
// end). Throws JacksonError where Jackson fails.
InferredType InferField(internal::JacksonLexer* lexer) {
  using internal::JToken;
  InferredType out;
  JToken t = lexer->current();
  while (t == JToken::kFieldName) t = lexer->NextToken();
  switch (t) {
    case JToken::kNone:
    case JToken::kNull: return out;
    case JToken::kString:
      // Zero-length strings are NullType (JSON writers that write "" for null).
      if (!lexer->StringValue().empty()) out.kind = InferredType::kString;
      return out;
    case JToken::kTrue:
    case JToken::kFalse: out.kind = InferredType::kBoolean; return out;
    case JToken::kFloat: out.kind = InferredType::kDouble; return out;
    case JToken::kInt: {
      // Jackson: INT or LONG when it fits a long, else BIG_INTEGER, which
      // Spark types DECIMAL(digits, 0) (DOUBLE past 38 digits).
      std::string_view digits = lexer->NumberText();
      const bool negative = !digits.empty() && digits[0] == '-';
      std::string_view magnitude = digits.substr(negative ? 1 : 0);
      std::string_view limit = negative ? "9223372036854775808" : "9223372036854775807";
      const bool fits = magnitude.size() < limit.size() ||
                        (magnitude.size() == limit.size() && magnitude <= limit);
      if (fits) {
        out.kind = InferredType::kLong;
      } else if (magnitude.size() <= 38) {
        out.kind = InferredType::kDecimal;
        out.precision = static_cast<int>(magnitude.size());
        out.scale = 0;
      } else {
        out.kind = InferredType::kDouble;
      }
      return out;
    }
    case JToken::kStartObject: {
      out.kind = InferredType::kStruct;
      std::vector<std::pair<std::string, InferredType>> fields;
      while (true) {
        t = lexer->NextToken();
        if (t == JToken::kNone || t == JToken::kEndObject) break;
        std::string_view name;
        std::string field_name = lexer->CurrentName(&name) ? std::string(name) : std::string();
        InferredType value = InferField(lexer);
        fields.emplace_back(std::move(field_name), std::move(value));
      }
      std::stable_sort(fields.begin(), fields.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      for (auto& [name, type] : fields) {
        out.names.push_back(std::move(name));
        out.children.push_back(std::move(type));
      }
      return out;
    }
    case JToken::kStartArray: {
      out.kind = InferredType::kArray;
      InferredType element;
      while (true) {
        t = lexer->NextToken();
        if (t == JToken::kNone || t == JToken::kEndArray) break;
        element = Compatible(element, InferField(lexer));
      }
      out.children.push_back(std::move(element));
      return out;
    }
    default: throw internal::JacksonError{"unexpected token"};
  }
}

}  // namespace

Result<std::string> InferJsonSchemaDdl(std::string_view text, const JsonParseOptions& options) {
  std::string sanitized;
  const std::string_view input = internal::SanitizeUtf8(text, &sanitized) ? sanitized : text;
  internal::JacksonLexer lexer(Features(options));
  InferredType type;
  try {
    lexer.Reset(input);
    lexer.NextToken();
    type = InferField(&lexer);
  } catch (const internal::JacksonError& e) {
    return Status::InvalidArgument("Cannot infer a schema from the malformed JSON '", text,
                                   "': ", e.what);
  }
  return SchemaDdl(std::move(type));
}

}  // namespace silt::json
