// Recursive-descent parser for Spark SQL expressions, with Spark's operator
// precedence (SqlBaseParser.g4), lowest first:
//
//   OR
//   AND
//   NOT, !                                   (prefix)
//   predicate: IS [NOT] NULL                 (applies to a whole value expression)
//   comparison: = == != <> < <= > >= <=>     (left-associative)
//   |
//   ^
//   &
//   + - ||
//   * / % DIV
//   unary - + ~
//   postfix: ::type, .field, .*
//   primary: literal, (expr), CAST(expr AS type), f(args), f(*), column, *
//
// A `-` directly before a numeric literal makes a negative literal, as
// Spark's grammar does ("-1" is a literal named "-1").
//
// Thread safety: stateless functions.
#pragma once

#include <string_view>

#include "silt/base/result.h"
#include "silt/expr/parse/ast.h"

namespace silt::expr {

// Parses one expression optionally followed by `AS alias` or a bare alias.
// Errors: InvalidArgument "<message> at position <n> in '<text>'", n the
// 1-based position of the offending token.
Result<NodePtr> ParseNode(std::string_view text);

}  // namespace silt::expr
