#include "silt/expr/parse/lexer.h"

#include <cstdint>

#include "silt/base/strings.h"
#include "silt/base/utf8.h"

namespace silt::expr {

namespace {

bool IsIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;  // non-ASCII letters, as Spark's LETTER allows
}
bool IsIdentChar(char c) { return IsIdentStart(c) || IsAsciiDigit(c); }
bool IsHex(char c) { return IsAsciiDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
int HexValue(char c) {
  if (IsAsciiDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  Result<std::vector<Token>> Run() {
    std::vector<Token> tokens;
    while (true) {
      SILT_RETURN_NOT_OK(SkipSpaceAndComments());
      if (pos_ >= text_.size()) break;
      SILT_ASSIGN_OR_RETURN(Token token, Next());
      tokens.push_back(std::move(token));
    }
    Token end;
    end.kind = TokenKind::kEnd;
    end.position = static_cast<int64_t>(text_.size());
    tokens.push_back(std::move(end));
    return tokens;
  }

 private:
  char Peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }

  Status Error(std::string_view what, size_t at) const {
    return SyntaxError(what, static_cast<int64_t>(at), text_);
  }

  Status SkipSpaceAndComments() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
        ++pos_;
      } else if (c == '-' && Peek(1) == '-') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else if (c == '/' && Peek(1) == '*') {
        size_t start = pos_;
        pos_ += 2;
        // Spark's bracketed comments nest.
        int depth = 1;
        while (pos_ < text_.size() && depth > 0) {
          if (text_[pos_] == '/' && Peek(1) == '*') {
            ++depth;
            pos_ += 2;
          } else if (text_[pos_] == '*' && Peek(1) == '/') {
            --depth;
            pos_ += 2;
          } else {
            ++pos_;
          }
        }
        if (depth > 0) return Error("Unterminated comment", start);
      } else {
        break;
      }
    }
    return Status::OK();
  }

  Token Make(TokenKind kind, size_t start, size_t length) {
    Token t;
    t.kind = kind;
    t.position = static_cast<int64_t>(start);
    t.text = std::string(text_.substr(start, length));
    pos_ = start + length;
    return t;
  }

  Result<Token> Next() {
    size_t start = pos_;
    char c = text_[pos_];
    if (c == '\'' || c == '"') return LexString(start, false);
    if ((c == 'r' || c == 'R') && (Peek(1) == '\'' || Peek(1) == '"')) {
      return LexString(start, true);
    }
    if (c == '`') return LexQuotedIdentifier(start);
    if (IsAsciiDigit(c) || (c == '.' && IsAsciiDigit(Peek(1)))) return LexNumberOrIdentifier(start);
    if (IsIdentStart(c)) {
      size_t end = pos_;
      while (end < text_.size() && IsIdentChar(text_[end])) ++end;
      return Make(TokenKind::kIdentifier, start, end - start);
    }
    switch (c) {
      case '(': return Make(TokenKind::kLParen, start, 1);
      case ')': return Make(TokenKind::kRParen, start, 1);
      case '[': return Make(TokenKind::kLBracket, start, 1);
      case ']': return Make(TokenKind::kRBracket, start, 1);
      case ',': return Make(TokenKind::kComma, start, 1);
      case '.': return Make(TokenKind::kDot, start, 1);
      case '*': return Make(TokenKind::kStar, start, 1);
      case '+': return Make(TokenKind::kPlus, start, 1);
      case '-': return Make(TokenKind::kMinus, start, 1);
      case '/': return Make(TokenKind::kSlash, start, 1);
      case '%': return Make(TokenKind::kPercent, start, 1);
      case '&': return Make(TokenKind::kAmpersand, start, 1);
      case '^': return Make(TokenKind::kCaret, start, 1);
      case '~': return Make(TokenKind::kTilde, start, 1);
      case '|':
        if (Peek(1) == '|') return Make(TokenKind::kConcat, start, 2);
        return Make(TokenKind::kPipe, start, 1);
      case '=':
        if (Peek(1) == '=') return Make(TokenKind::kEqEq, start, 2);
        return Make(TokenKind::kEq, start, 1);
      case '!':
        if (Peek(1) == '=') return Make(TokenKind::kNotEq, start, 2);
        return Make(TokenKind::kBang, start, 1);
      case '<':
        if (Peek(1) == '=' && Peek(2) == '>') return Make(TokenKind::kNullSafeEq, start, 3);
        if (Peek(1) == '=') return Make(TokenKind::kLe, start, 2);
        if (Peek(1) == '>') return Make(TokenKind::kLtGt, start, 2);
        return Make(TokenKind::kLt, start, 1);
      case '>':
        if (Peek(1) == '=') return Make(TokenKind::kGe, start, 2);
        return Make(TokenKind::kGt, start, 1);
      case ':':
        if (Peek(1) == ':') return Make(TokenKind::kDoubleColon, start, 2);
        return Make(TokenKind::kColon, start, 1);
      default: break;
    }
    std::string what = "Unexpected character '";
    what.push_back(c);
    what += "'";
    return Error(what, start);
  }

  // A number per Spark's literal rules, or an identifier that starts with
  // digits (Spark's IDENTIFIER is (LETTER | DIGIT | '_')+ and the longest
  // match wins: "123abc" is an identifier, "123L" a BIGINT literal).
  Result<Token> LexNumberOrIdentifier(size_t start) {
    size_t ident_end = start;
    if (IsAsciiDigit(text_[start])) {
      while (ident_end < text_.size() && IsIdentChar(text_[ident_end])) ++ident_end;
    }
    size_t p = start;
    while (p < text_.size() && IsAsciiDigit(text_[p])) ++p;
    bool has_point = false;
    if (p < text_.size() && text_[p] == '.') {
      has_point = true;
      ++p;
      while (p < text_.size() && IsAsciiDigit(text_[p])) ++p;
    }
    if (p < text_.size() && (text_[p] == 'e' || text_[p] == 'E')) {
      size_t q = p + 1;
      if (q < text_.size() && (text_[q] == '+' || text_[q] == '-')) ++q;
      if (q < text_.size() && IsAsciiDigit(text_[q])) {
        while (q < text_.size() && IsAsciiDigit(text_[q])) ++q;
        p = q;
      }
    }
    // Optional type suffix.
    char s0 = p < text_.size() ? static_cast<char>(text_[p] & ~0x20) : '\0';
    char s1 = p + 1 < text_.size() ? static_cast<char>(text_[p + 1] & ~0x20) : '\0';
    if (s0 == 'B' && s1 == 'D') {
      p += 2;
    } else if (s0 == 'L' || s0 == 'S' || s0 == 'Y' || s0 == 'F' || s0 == 'D') {
      ++p;
    }
    size_t number_end = p;
    if (!has_point && ident_end > number_end) {
      return Make(TokenKind::kIdentifier, start, ident_end - start);
    }
    if (number_end < text_.size() && IsIdentChar(text_[number_end])) {
      return Error("Invalid numeric literal '" +
                       std::string(text_.substr(start, number_end - start + 1)) + "'",
                   start);
    }
    return Make(TokenKind::kNumber, start, number_end - start);
  }

  Result<Token> LexQuotedIdentifier(size_t start) {
    std::string name;
    size_t p = start + 1;
    while (true) {
      if (p >= text_.size()) return Error("Unterminated quoted identifier", start);
      if (text_[p] == '`') {
        if (p + 1 < text_.size() && text_[p + 1] == '`') {
          name.push_back('`');
          p += 2;
          continue;
        }
        break;
      }
      name.push_back(text_[p]);
      ++p;
    }
    Token t;
    t.kind = TokenKind::kIdentifier;
    t.position = static_cast<int64_t>(start);
    t.text = std::move(name);
    t.quoted = true;
    pos_ = p + 1;
    return t;
  }

  // Spark's unescapeSQLString: \uXXXX, \UXXXXXXXX, octal \[01][0-7][0-7],
  // \0 \b \n \r \t \Z, \% and \_ kept with their backslash (for LIKE), any
  // other escaped character stands for itself. r'...' is raw.
  Result<Token> LexString(size_t start, bool raw) {
    size_t p = start + (raw ? 1 : 0);
    char quote = text_[p];
    ++p;
    std::string value;
    while (true) {
      if (p >= text_.size()) return Error("Unterminated string literal", start);
      char c = text_[p];
      if (c == quote) break;
      if (c != '\\') {
        value.push_back(c);
        ++p;
        continue;
      }
      if (p + 1 >= text_.size()) return Error("Unterminated string literal", start);
      if (raw) {
        // The backslash stays, but still keeps the next quote inside.
        value.push_back('\\');
        value.push_back(text_[p + 1]);
        p += 2;
        continue;
      }
      char n = text_[p + 1];
      if (n == 'u' && p + 5 < text_.size() && IsHex(text_[p + 2]) && IsHex(text_[p + 3]) &&
          IsHex(text_[p + 4]) && IsHex(text_[p + 5])) {
        uint32_t cp = 0;
        for (size_t i = 2; i < 6; ++i) cp = cp * 16 + static_cast<uint32_t>(HexValue(text_[p + i]));
        AppendUtf8(cp, &value);
        p += 6;
        continue;
      }
      if (n == 'U' && p + 9 < text_.size()) {
        bool all_hex = true;
        uint32_t cp = 0;
        for (size_t i = 2; i < 10; ++i) {
          if (!IsHex(text_[p + i])) {
            all_hex = false;
            break;
          }
          cp = cp * 16 + static_cast<uint32_t>(HexValue(text_[p + i]));
        }
        if (all_hex && cp <= 0x10FFFF) {
          AppendUtf8(cp, &value);
          p += 10;
          continue;
        }
      }
      if ((n == '0' || n == '1') && p + 3 < text_.size() && text_[p + 2] >= '0' &&
          text_[p + 2] <= '7' && text_[p + 3] >= '0' && text_[p + 3] <= '7') {
        int code = (n - '0') * 64 + (text_[p + 2] - '0') * 8 + (text_[p + 3] - '0');
        AppendUtf8(static_cast<uint32_t>(code), &value);
        p += 4;
        continue;
      }
      switch (n) {
        case '0': value.push_back('\0'); break;
        case 'b': value.push_back('\b'); break;
        case 'n': value.push_back('\n'); break;
        case 'r': value.push_back('\r'); break;
        case 't': value.push_back('\t'); break;
        case 'Z': value.push_back('\x1A'); break;
        case '%': value.append("\\%"); break;
        case '_': value.append("\\_"); break;
        default: value.push_back(n); break;
      }
      p += 2;
    }
    Token t;
    t.kind = TokenKind::kString;
    t.position = static_cast<int64_t>(start);
    t.text = std::move(value);
    pos_ = p + 1;
    return t;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

bool Token::IsKeyword(std::string_view keyword) const {
  if (kind != TokenKind::kIdentifier || quoted || text.size() != keyword.size()) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    if (c != keyword[i]) return false;
  }
  return true;
}

std::string DescribeToken(const Token& token) {
  switch (token.kind) {
    case TokenKind::kEnd: return "end of input";
    case TokenKind::kString: return "string literal";
    case TokenKind::kIdentifier:
      return token.quoted ? "`" + token.text + "`" : "'" + token.text + "'";
    default: return "'" + token.text + "'";
  }
}

Result<std::vector<Token>> Tokenize(std::string_view text) { return Lexer(text).Run(); }

Status SyntaxError(std::string_view what, int64_t position, std::string_view text) {
  // A caret line under the offending token, when the text fits on one line.
  std::string caret;
  if (text.find('\n') == std::string_view::npos && position >= 0 &&
      position <= static_cast<int64_t>(text.size())) {
    caret =
        "\n  " + std::string(text) + "\n  " + std::string(static_cast<size_t>(position), ' ') + "^";
  }
  return Status::InvalidArgument(what, " at position ", position + 1, " in '", text, "'", caret);
}

std::vector<std::pair<size_t, size_t>> SplitTopLevelCommas(const std::vector<Token>& tokens,
                                                           size_t begin, size_t end) {
  std::vector<std::pair<size_t, size_t>> out;
  int depth = 0;
  size_t start = begin;
  for (size_t i = begin; i < end; ++i) {
    const TokenKind k = tokens[i].kind;
    if (k == TokenKind::kLParen || k == TokenKind::kLBracket) ++depth;
    if (k == TokenKind::kRParen || k == TokenKind::kRBracket) --depth;
    if (depth == 0 && k == TokenKind::kComma) {
      out.emplace_back(start, i);
      start = i + 1;
    }
  }
  out.emplace_back(start, end);
  return out;
}

}  // namespace silt::expr
