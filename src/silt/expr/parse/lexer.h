// Lexer for Spark SQL expressions: turns text into tokens following Spark's
// SqlBaseLexer rules — identifiers (plain, digit-leading, or `back quoted`),
// numeric literals with Spark's suffixes (L, S, Y, F, D, BD), string
// literals in single or double quotes with Spark's backslash escapes and
// r'raw' strings, operators, `--` and `/* */` comments. Keywords are not
// separate tokens: the parser matches identifier text case-insensitively,
// so non-reserved words stay usable as column names, as in Spark.
//
// Thread safety: stateless functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "silt/base/result.h"

namespace silt::expr {

enum class TokenKind {
  kEnd,
  kIdentifier,   // text = the name; quoted = back-quoted
  kString,       // text = the unescaped value
  kNumber,       // text = the literal as written (suffix included)
  kLParen,       // (
  kRParen,       // )
  kLBracket,     // [
  kRBracket,     // ]
  kComma,        // ,
  kDot,          // .
  kStar,         // *
  kPlus,         // +
  kMinus,        // -
  kSlash,        // /
  kPercent,      // %
  kConcat,       // ||
  kPipe,         // |
  kAmpersand,    // &
  kCaret,        // ^
  kTilde,        // ~
  kEq,           // =
  kEqEq,         // ==
  kNotEq,        // !=
  kLtGt,         // <>
  kLt,           // <
  kLe,           // <=
  kGt,           // >
  kGe,           // >=
  kNullSafeEq,   // <=>
  kBang,         // !
  kDoubleColon,  // ::
  kColon,        // :
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string text;
  // 0-based byte offset of the token's first character.
  int64_t position = 0;
  // Back-quoted identifier (never a keyword).
  bool quoted = false;

  // True for an unquoted identifier equal to `keyword` ignoring case.
  // REQUIRES: `keyword` is upper case.
  bool IsKeyword(std::string_view keyword) const;
};

// A human-readable description of a token for messages ("'('", "end of
// input", "identifier 'foo'").
std::string DescribeToken(const Token& token);

// Splits `text` into tokens, ending with a kEnd token positioned at the end.
// Errors: InvalidArgument "<what> at position N in '<text>'" for an
// unterminated string, back-quoted identifier or comment, an unexpected
// character, or a malformed number.
Result<std::vector<Token>> Tokenize(std::string_view text);

// The [begin, end) token ranges between the commas of tokens[begin, end)
// that are outside any parentheses or brackets (one range when there is
// none): the items of a select list, an assignment list or a VALUES tuple.
std::vector<std::pair<size_t, size_t>> SplitTopLevelCommas(const std::vector<Token>& tokens,
                                                           size_t begin, size_t end);

// Formats the standard error: "<what> at position <position + 1> in '<text>'",
// followed (for one-line text) by the text and a caret line under the
// position.
Status SyntaxError(std::string_view what, int64_t position, std::string_view text);

}  // namespace silt::expr
