// Recursive-descent parser for Spark SQL DDL schemas and types, as accepted by
// DataFrameReader.schema("...") and StructType.fromDDL.

#include <cctype>
#include <string>
#include <utility>
#include <vector>

#include "silt/base/json_writer.h"
#include "silt/base/strings.h"
#include "silt/columnar/types.h"

namespace silt::columnar {

namespace {

bool IsIdentChar(char c) {
  // Bytes >= 0x80 are parts of UTF-8 names, which Spark accepts unquoted.
  unsigned char u = static_cast<unsigned char>(c);
  return std::isalnum(u) || c == '_' || u >= 0x80;
}

class DdlParser {
 public:
  explicit DdlParser(std::string_view ddl) : ddl_(ddl) {}

  Result<SchemaPtr> ParseSchema() {
    std::vector<Field> fields;
    SkipSpace();
    if (AtEnd()) return Error("expected a column name");
    if (StartsStructType()) {
      // Spark's StructType.fromDDL also takes a whole "STRUCT<...>" type.
      SILT_ASSIGN_OR_RETURN(TypePtr type, ParseSingleType());
      return type;
    }
    while (true) {
      size_t name_pos = pos_;
      SILT_ASSIGN_OR_RETURN(Field field, ParseField(/*allow_colon=*/true));
      for (const Field& existing : fields) {
        if (EqualsIgnoreCase(existing.name, field.name)) {
          return ErrorAt(name_pos, "duplicate column name '" + field.name + "'");
        }
      }
      fields.push_back(std::move(field));
      SkipSpace();
      if (AtEnd()) break;
      if (!Consume(',')) return Error("expected ',' or end of schema");
    }
    return DataType::Struct(std::move(fields));
  }

  Result<TypePtr> ParseSingleType() {
    SILT_ASSIGN_OR_RETURN(TypePtr type, ParseType());
    SkipSpace();
    if (!AtEnd()) return Error("expected end of type");
    return type;
  }

 private:
  Result<Field> ParseField(bool allow_colon) {
    Field field;
    SILT_ASSIGN_OR_RETURN(field.name, ParseName());
    SkipSpace();
    if (allow_colon) Consume(':');
    SILT_ASSIGN_OR_RETURN(field.type, ParseType());
    // NOT NULL and COMMENT may come in either order, each at most once.
    bool saw_not_null = false;
    bool saw_comment = false;
    while (true) {
      SkipSpace();
      size_t before = pos_;
      std::string word = PeekWord();
      if (word == "NOT" && !saw_not_null) {
        pos_ += word.size();
        SkipSpace();
        if (PeekWord() != "NULL") return Error("expected NULL after NOT");
        pos_ += 4;
        field.nullable = false;
        saw_not_null = true;
      } else if (word == "COMMENT" && !saw_comment) {
        pos_ += word.size();
        SkipSpace();
        SILT_ASSIGN_OR_RETURN(std::string comment, ParseStringLiteral());
        JsonWriter w;
        w.BeginObject();
        w.Member("comment", comment);
        w.EndObject();
        field.metadata_json = w.Take();
        saw_comment = true;
      } else {
        pos_ = before;
        break;
      }
    }
    return field;
  }

  Result<std::string> ParseName() {
    SkipSpace();
    if (AtEnd()) return Error("expected a column name");
    if (ddl_[pos_] == '`') {
      size_t start = pos_;
      ++pos_;
      std::string name;
      while (true) {
        if (AtEnd()) return ErrorAt(start, "unterminated backquoted name");
        char c = ddl_[pos_++];
        if (c == '`') {
          if (!AtEnd() && ddl_[pos_] == '`') {
            name += '`';
            ++pos_;
            continue;
          }
          break;
        }
        name += c;
      }
      if (name.empty()) return ErrorAt(start, "empty column name");
      return name;
    }
    size_t start = pos_;
    while (!AtEnd() && IsIdentChar(ddl_[pos_])) ++pos_;
    if (start == pos_) return Error("expected a column name");
    return std::string(ddl_.substr(start, pos_ - start));
  }

  Result<TypePtr> ParseType() {
    SkipSpace();
    size_t type_pos = pos_;
    std::string word = PeekWord();
    if (word.empty()) return Error("expected a data type");
    pos_ += word.size();
    if (word == "BOOLEAN") return DataType::Boolean();
    if (word == "TINYINT" || word == "BYTE") return DataType::Byte();
    if (word == "SMALLINT" || word == "SHORT") return DataType::Short();
    if (word == "INT" || word == "INTEGER") return DataType::Int();
    if (word == "BIGINT" || word == "LONG") return DataType::Long();
    if (word == "FLOAT" || word == "REAL") return DataType::Float();
    if (word == "DOUBLE") return DataType::Double();
    if (word == "STRING") return DataType::String();
    if (word == "BINARY") return DataType::Binary();
    if (word == "DATE") return DataType::Date();
    if (word == "TIMESTAMP" || word == "TIMESTAMP_LTZ") return DataType::Timestamp();
    if (word == "TIMESTAMP_NTZ") return DataType::TimestampNtz();
    if (word == "VOID") return DataType::Null();
    if (word == "VARIANT") return DataType::Variant();
    if (word == "VARCHAR" || word == "CHAR" || word == "CHARACTER") {
      SkipSpace();
      if (!Consume('(')) return Error("expected '(' and a length after " + word);
      SILT_ASSIGN_OR_RETURN(int length, ParseInt());
      if (length < 1) return ErrorAt(type_pos, word + " length must be positive");
      SkipSpace();
      if (!Consume(')')) return Error("expected ')'");
      return DataType::String();
    }
    if (word == "DECIMAL" || word == "DEC" || word == "NUMERIC") {
      SkipSpace();
      int precision = 10;
      int scale = 0;
      if (Consume('(')) {
        SILT_ASSIGN_OR_RETURN(precision, ParseInt());
        SkipSpace();
        if (Consume(',')) {
          SILT_ASSIGN_OR_RETURN(scale, ParseInt());
          SkipSpace();
        }
        if (!Consume(')')) return Error("expected ')' after decimal precision and scale");
      }
      if (precision < 1 || precision > 38) {
        return ErrorAt(type_pos,
                       "decimal precision " + std::to_string(precision) + " is outside 1..38");
      }
      if (scale > precision) {
        return ErrorAt(type_pos, "decimal scale " + std::to_string(scale) + " exceeds precision " +
                                     std::to_string(precision));
      }
      return DataType::Decimal(precision, scale);
    }
    if (word == "ARRAY") {
      SkipSpace();
      if (!Consume('<')) return Error("expected '<' after ARRAY");
      SILT_ASSIGN_OR_RETURN(TypePtr element, ParseType());
      SkipSpace();
      if (!Consume('>')) return Error("expected '>' to close ARRAY");
      return DataType::Array(std::move(element));
    }
    if (word == "MAP") {
      SkipSpace();
      if (!Consume('<')) return Error("expected '<' after MAP");
      SILT_ASSIGN_OR_RETURN(TypePtr key, ParseType());
      SkipSpace();
      if (!Consume(',')) return Error("expected ',' between MAP key and value types");
      SILT_ASSIGN_OR_RETURN(TypePtr value, ParseType());
      SkipSpace();
      if (!Consume('>')) return Error("expected '>' to close MAP");
      return DataType::Map(std::move(key), std::move(value));
    }
    if (word == "STRUCT") {
      SkipSpace();
      if (!Consume('<')) return Error("expected '<' after STRUCT");
      std::vector<Field> fields;
      SkipSpace();
      if (Consume('>')) return DataType::Struct(std::move(fields));
      while (true) {
        SILT_ASSIGN_OR_RETURN(Field field, ParseField(/*allow_colon=*/true));
        fields.push_back(std::move(field));
        SkipSpace();
        if (Consume('>')) break;
        if (!Consume(',')) return Error("expected ',' or '>' in STRUCT");
      }
      return DataType::Struct(std::move(fields));
    }
    return ErrorAt(type_pos,
                   "unknown data type '" + std::string(ddl_.substr(type_pos, word.size())) + "'");
  }

  Result<int> ParseInt() {
    SkipSpace();
    size_t start = pos_;
    int64_t value = 0;
    while (!AtEnd() && std::isdigit(static_cast<unsigned char>(ddl_[pos_]))) {
      value = value * 10 + (ddl_[pos_] - '0');
      if (value > 1000000) return ErrorAt(start, "number too large");
      ++pos_;
    }
    if (start == pos_) return Error("expected a number");
    return static_cast<int>(value);
  }

  // A SQL string literal in single or double quotes with backslash escapes.
  Result<std::string> ParseStringLiteral() {
    if (AtEnd() || (ddl_[pos_] != '\'' && ddl_[pos_] != '"')) {
      return Error("expected a quoted string");
    }
    size_t start = pos_;
    char quote = ddl_[pos_++];
    std::string out;
    while (true) {
      if (AtEnd()) return ErrorAt(start, "unterminated string");
      char c = ddl_[pos_++];
      if (c == quote) break;
      if (c == '\\') {
        if (AtEnd()) return ErrorAt(start, "unterminated string");
        char e = ddl_[pos_++];
        switch (e) {
          case 'n': out += '\n'; break;
          case 't': out += '\t'; break;
          case 'r': out += '\r'; break;
          case '0': out += '\0'; break;
          default: out += e;
        }
        continue;
      }
      out += c;
    }
    return out;
  }

  // True at "STRUCT<" (a column named struct would be followed by a type).
  bool StartsStructType() const {
    if (PeekWord() != "STRUCT") return false;
    size_t next = pos_ + 6;
    while (next < ddl_.size() && std::isspace(static_cast<unsigned char>(ddl_[next]))) ++next;
    return next < ddl_.size() && ddl_[next] == '<';
  }

  // The upper-cased identifier-like word at the cursor, without consuming it.
  std::string PeekWord() const {
    size_t end = pos_;
    while (end < ddl_.size() && IsIdentChar(ddl_[end])) ++end;
    return AsciiUpper(ddl_.substr(pos_, end - pos_));
  }

  void SkipSpace() {
    while (!AtEnd() && std::isspace(static_cast<unsigned char>(ddl_[pos_]))) ++pos_;
  }
  bool Consume(char c) {
    if (!AtEnd() && ddl_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool AtEnd() const { return pos_ >= ddl_.size(); }

  Status Error(std::string_view what) const { return ErrorAt(pos_, what); }
  Status ErrorAt(size_t pos, std::string_view what) const {
    return Status::InvalidArgument("Cannot parse DDL: ", what, " at position ",
                                   static_cast<long long>(pos), " in '", ddl_, "'");
  }

  std::string_view ddl_;
  size_t pos_ = 0;
};

}  // namespace

Result<SchemaPtr> ParseDdlSchema(std::string_view ddl) { return DdlParser(ddl).ParseSchema(); }

Result<TypePtr> ParseDdlType(std::string_view ddl) { return DdlParser(ddl).ParseSingleType(); }

}  // namespace silt::columnar
