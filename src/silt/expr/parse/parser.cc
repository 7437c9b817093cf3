#include "silt/expr/parse/parser.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "silt/base/strings.h"
#include "silt/columnar/temporal.h"
#include "silt/expr/parse/lexer.h"
#include "silt/expr/value/decimal_util.h"

namespace silt::expr {

namespace {

using columnar::DataType;
using columnar::TypePtr;

// Digits of a decimal text "ddd[.ddd][e[+-]ddd]" as BigDecimal reads them:
// the unscaled value, precision and scale of Spark's DecimalType for it.
// False when the value needs more than 38 digits.
bool DecimalLiteral(std::string_view body, bool negative, int128* unscaled, int* precision,
                    int* scale) {
  int128 value = 0;
  int64_t frac_digits = 0;
  int64_t exponent = 0;
  bool seen_point = false;
  size_t pos = 0;
  int significant = 0;
  for (; pos < body.size(); ++pos) {
    char c = body[pos];
    if (c == '.') {
      seen_point = true;
      continue;
    }
    if (!IsAsciiDigit(c)) break;
    if (seen_point) ++frac_digits;
    if (value != 0 || c != '0') ++significant;
    if (significant > kMaxDecimalPrecision) return false;
    value = value * 10 + (c - '0');
  }
  if (pos < body.size()) {
    // Exponent.
    ++pos;
    bool exp_negative = false;
    if (pos < body.size() && (body[pos] == '+' || body[pos] == '-')) {
      exp_negative = body[pos] == '-';
      ++pos;
    }
    for (; pos < body.size(); ++pos) {
      if (exponent > 1000) return false;
      exponent = exponent * 10 + (body[pos] - '0');
    }
    if (exp_negative) exponent = -exponent;
  }
  int64_t s = frac_digits - exponent;
  if (s < 0) {
    // Spark does not keep negative scales: 1E2BD is DECIMAL(3,0) 100.
    if (-s > kMaxDecimalPrecision) return value == 0 ? (s = 0, true) : false;
    if (value != 0 && __builtin_mul_overflow(value, Pow10(static_cast<int>(-s)), &value)) {
      return false;
    }
    s = 0;
  }
  if (s > kMaxDecimalPrecision) return false;
  int digits = DecimalDigits(value);
  if (digits > kMaxDecimalPrecision) return false;
  *unscaled = negative ? -value : value;
  *scale = static_cast<int>(s);
  *precision = digits > *scale ? digits : *scale;
  if (*precision == 0) *precision = 1;
  return true;
}

class Parser {
 public:
  Parser(std::string_view text, std::vector<Token> tokens)
      : text_(text), tokens_(std::move(tokens)) {}

  Result<NodePtr> ParseTop() {
    SILT_ASSIGN_OR_RETURN(NodePtr expr, ParseExpression());
    if (Peek().IsKeyword("AS")) {
      int64_t pos = Peek().position;
      Advance();
      if (Peek().kind != TokenKind::kIdentifier) {
        return Error("Expected an alias name after AS but found " + DescribeToken(Peek()), Peek());
      }
      if (expr->kind() == NodeKind::kStar) {
        return SyntaxError("A star expression cannot have an alias", pos, text_);
      }
      std::string alias = Peek().text;
      Advance();
      expr = std::make_shared<AliasNode>(std::move(expr), std::move(alias), pos);
    } else if (Peek().kind == TokenKind::kIdentifier && expr->kind() != NodeKind::kStar) {
      int64_t pos = Peek().position;
      std::string alias = Peek().text;
      Advance();
      expr = std::make_shared<AliasNode>(std::move(expr), std::move(alias), pos);
    }
    if (Peek().kind != TokenKind::kEnd) return Unexpected(Peek());
    return expr;
  }

 private:
  const Token& Peek(size_t ahead = 0) const {
    size_t i = index_ + ahead;
    return i < tokens_.size() ? tokens_[i] : tokens_.back();
  }
  void Advance() {
    if (index_ + 1 < tokens_.size()) ++index_;
  }
  bool Accept(TokenKind kind) {
    if (Peek().kind != kind) return false;
    Advance();
    return true;
  }

  Status Error(std::string_view what, const Token& at) const {
    return SyntaxError(what, at.position, text_);
  }
  Status Unexpected(const Token& at) const {
    return Error("Syntax error: unexpected " + DescribeToken(at), at);
  }
  Status Expect(TokenKind kind, std::string_view what) {
    if (Peek().kind != kind) {
      return Error("Expected " + std::string(what) + " but found " + DescribeToken(Peek()), Peek());
    }
    Advance();
    return Status::OK();
  }

  Result<NodePtr> ParseExpression() { return ParseOr(); }

  Result<NodePtr> ParseOr() {
    SILT_ASSIGN_OR_RETURN(NodePtr left, ParseAnd());
    while (Peek().IsKeyword("OR")) {
      int64_t pos = Peek().position;
      Advance();
      SILT_ASSIGN_OR_RETURN(NodePtr right, ParseAnd());
      left = std::make_shared<BinaryNode>(BinaryOp::kOr, std::move(left), std::move(right), pos);
    }
    return left;
  }

  Result<NodePtr> ParseAnd() {
    SILT_ASSIGN_OR_RETURN(NodePtr left, ParseNot());
    while (Peek().IsKeyword("AND")) {
      int64_t pos = Peek().position;
      Advance();
      SILT_ASSIGN_OR_RETURN(NodePtr right, ParseNot());
      left = std::make_shared<BinaryNode>(BinaryOp::kAnd, std::move(left), std::move(right), pos);
    }
    return left;
  }

  Result<NodePtr> ParseNot() {
    if (Peek().IsKeyword("NOT") || Peek().kind == TokenKind::kBang) {
      int64_t pos = Peek().position;
      Advance();
      SILT_ASSIGN_OR_RETURN(NodePtr child, ParseNot());
      return NodePtr(std::make_shared<UnaryNode>(UnaryOp::kNot, std::move(child), pos));
    }
    return ParsePredicated();
  }

  // valueExpression predicate?
  Result<NodePtr> ParsePredicated() {
    SILT_ASSIGN_OR_RETURN(NodePtr value, ParseComparison());
    // [NOT] BETWEEN / IN / LIKE / ILIKE / RLIKE / REGEXP.
    {
      size_t ahead = Peek().IsKeyword("NOT") ? 1 : 0;
      const Token& op = Peek(ahead);
      if (op.IsKeyword("BETWEEN") || op.IsKeyword("IN") || op.IsKeyword("LIKE") ||
          op.IsKeyword("ILIKE") || op.IsKeyword("RLIKE") || op.IsKeyword("REGEXP")) {
        const bool negated = ahead == 1;
        const int64_t pos = op.position;
        const std::string keyword = LowerKeyword(op.text);
        if (negated) Advance();
        Advance();
        NodePtr predicate;
        if (keyword == "between") {
          // Spark rewrites `a BETWEEN l AND u` to `a >= l AND a <= u`.
          SILT_ASSIGN_OR_RETURN(NodePtr lower, ParseComparison());
          if (!Peek().IsKeyword("AND")) {
            return Error("Expected AND in BETWEEN but found " + DescribeToken(Peek()), Peek());
          }
          Advance();
          SILT_ASSIGN_OR_RETURN(NodePtr upper, ParseComparison());
          predicate = std::make_shared<BinaryNode>(
              BinaryOp::kAnd, std::make_shared<BinaryNode>(BinaryOp::kGe, value, lower, pos),
              std::make_shared<BinaryNode>(BinaryOp::kLe, value, upper, pos), pos);
        } else if (keyword == "in") {
          SILT_RETURN_NOT_OK(Expect(TokenKind::kLParen, "'(' after IN"));
          std::vector<NodePtr> args{value};
          while (true) {
            SILT_ASSIGN_OR_RETURN(NodePtr item, ParseExpression());
            args.push_back(std::move(item));
            if (Accept(TokenKind::kComma)) continue;
            SILT_RETURN_NOT_OK(Expect(TokenKind::kRParen, "',' or ')' in the IN list"));
            break;
          }
          predicate = std::make_shared<CallNode>(kInListCall, std::move(args), false, false, pos);
        } else {
          SILT_ASSIGN_OR_RETURN(NodePtr pattern, ParseComparison());
          std::string name = keyword == "regexp" ? "rlike" : keyword;
          predicate = std::make_shared<CallNode>(
              std::move(name), std::vector<NodePtr>{value, std::move(pattern)}, false, false, pos);
        }
        if (negated) predicate = std::make_shared<UnaryNode>(UnaryOp::kNot, predicate, pos);
        return predicate;
      }
    }
    if (Peek().IsKeyword("IS")) {
      int64_t pos = Peek().position;
      Advance();
      bool negated = false;
      if (Peek().IsKeyword("NOT")) {
        negated = true;
        Advance();
      }
      if (Peek().IsKeyword("DISTINCT")) {
        // a IS [NOT] DISTINCT FROM b: NOT (a <=> b) / (a <=> b).
        Advance();
        if (!Peek().IsKeyword("FROM")) {
          return Error("Expected FROM after IS" + std::string(negated ? " NOT" : "") +
                           " DISTINCT but found " + DescribeToken(Peek()),
                       Peek());
        }
        Advance();
        SILT_ASSIGN_OR_RETURN(NodePtr other, ParseComparison());
        NodePtr eq = std::make_shared<BinaryNode>(BinaryOp::kNullSafeEq, std::move(value),
                                                  std::move(other), pos);
        if (negated) return eq;
        return NodePtr(std::make_shared<UnaryNode>(UnaryOp::kNot, std::move(eq), pos));
      }
      if (!Peek().IsKeyword("NULL")) {
        return Error("Expected NULL or DISTINCT FROM after IS" +
                         std::string(negated ? " NOT" : "") + " but found " + DescribeToken(Peek()),
                     Peek());
      }
      Advance();
      return NodePtr(std::make_shared<IsNullNode>(std::move(value), negated, pos));
    }
    return value;
  }

  static bool ComparisonOp(TokenKind kind, BinaryOp* op) {
    switch (kind) {
      case TokenKind::kEq:
      case TokenKind::kEqEq: *op = BinaryOp::kEq; return true;
      case TokenKind::kNotEq:
      case TokenKind::kLtGt: *op = BinaryOp::kNotEq; return true;
      case TokenKind::kNullSafeEq: *op = BinaryOp::kNullSafeEq; return true;
      case TokenKind::kLt: *op = BinaryOp::kLt; return true;
      case TokenKind::kLe: *op = BinaryOp::kLe; return true;
      case TokenKind::kGt: *op = BinaryOp::kGt; return true;
      case TokenKind::kGe: *op = BinaryOp::kGe; return true;
      default: return false;
    }
  }

  Result<NodePtr> ParseComparison() {
    SILT_ASSIGN_OR_RETURN(NodePtr left, ParseBitOr());
    BinaryOp op;
    while (ComparisonOp(Peek().kind, &op)) {
      int64_t pos = Peek().position;
      Advance();
      SILT_ASSIGN_OR_RETURN(NodePtr right, ParseBitOr());
      left = std::make_shared<BinaryNode>(op, std::move(left), std::move(right), pos);
    }
    return left;
  }

  Result<NodePtr> ParseBitOr() {
    SILT_ASSIGN_OR_RETURN(NodePtr left, ParseBitXor());
    while (Peek().kind == TokenKind::kPipe) {
      int64_t pos = Peek().position;
      Advance();
      SILT_ASSIGN_OR_RETURN(NodePtr right, ParseBitXor());
      left = std::make_shared<BinaryNode>(BinaryOp::kBitOr, std::move(left), std::move(right), pos);
    }
    return left;
  }

  Result<NodePtr> ParseBitXor() {
    SILT_ASSIGN_OR_RETURN(NodePtr left, ParseBitAnd());
    while (Peek().kind == TokenKind::kCaret) {
      int64_t pos = Peek().position;
      Advance();
      SILT_ASSIGN_OR_RETURN(NodePtr right, ParseBitAnd());
      left =
          std::make_shared<BinaryNode>(BinaryOp::kBitXor, std::move(left), std::move(right), pos);
    }
    return left;
  }

  Result<NodePtr> ParseBitAnd() {
    SILT_ASSIGN_OR_RETURN(NodePtr left, ParseAdditive());
    while (Peek().kind == TokenKind::kAmpersand) {
      int64_t pos = Peek().position;
      Advance();
      SILT_ASSIGN_OR_RETURN(NodePtr right, ParseAdditive());
      left =
          std::make_shared<BinaryNode>(BinaryOp::kBitAnd, std::move(left), std::move(right), pos);
    }
    return left;
  }

  Result<NodePtr> ParseAdditive() {
    SILT_ASSIGN_OR_RETURN(NodePtr left, ParseMultiplicative());
    while (true) {
      BinaryOp op;
      TokenKind kind = Peek().kind;
      if (kind == TokenKind::kPlus) {
        op = BinaryOp::kAdd;
      } else if (kind == TokenKind::kMinus) {
        op = BinaryOp::kSubtract;
      } else if (kind == TokenKind::kConcat) {
        op = BinaryOp::kConcat;
      } else {
        break;
      }
      int64_t pos = Peek().position;
      Advance();
      SILT_ASSIGN_OR_RETURN(NodePtr right, ParseMultiplicative());
      left = std::make_shared<BinaryNode>(op, std::move(left), std::move(right), pos);
    }
    return left;
  }

  Result<NodePtr> ParseMultiplicative() {
    SILT_ASSIGN_OR_RETURN(NodePtr left, ParseUnary());
    while (true) {
      BinaryOp op;
      const Token& t = Peek();
      if (t.kind == TokenKind::kStar) {
        op = BinaryOp::kMultiply;
      } else if (t.kind == TokenKind::kSlash) {
        op = BinaryOp::kDivide;
      } else if (t.kind == TokenKind::kPercent) {
        op = BinaryOp::kRemainder;
      } else if (t.IsKeyword("DIV")) {
        op = BinaryOp::kIntegralDivide;
      } else {
        break;
      }
      int64_t pos = t.position;
      Advance();
      SILT_ASSIGN_OR_RETURN(NodePtr right, ParseUnary());
      left = std::make_shared<BinaryNode>(op, std::move(left), std::move(right), pos);
    }
    return left;
  }

  Result<NodePtr> ParseUnary() {
    const Token& t = Peek();
    if (t.kind == TokenKind::kMinus && Peek(1).kind == TokenKind::kNumber) {
      int64_t pos = t.position;
      Advance();
      SILT_ASSIGN_OR_RETURN(NodePtr literal, ParseNumber(/*negative=*/true, pos));
      return ParsePostfix(std::move(literal));
    }
    if (t.kind == TokenKind::kMinus || t.kind == TokenKind::kPlus || t.kind == TokenKind::kTilde) {
      UnaryOp op = t.kind == TokenKind::kMinus  ? UnaryOp::kNegate
                   : t.kind == TokenKind::kPlus ? UnaryOp::kPlus
                                                : UnaryOp::kBitNot;
      int64_t pos = t.position;
      Advance();
      SILT_ASSIGN_OR_RETURN(NodePtr child, ParseUnary());
      return NodePtr(std::make_shared<UnaryNode>(op, std::move(child), pos));
    }
    SILT_ASSIGN_OR_RETURN(NodePtr primary, ParsePrimary());
    return ParsePostfix(std::move(primary));
  }

  Result<NodePtr> ParsePostfix(NodePtr node) {
    while (true) {
      if (Peek().kind == TokenKind::kDoubleColon) {
        int64_t pos = Peek().position;
        Advance();
        SILT_ASSIGN_OR_RETURN(TypePtr type, ParsePostfixType());
        node = std::make_shared<CastNode>(std::move(node), std::move(type), pos);
      } else if (Peek().kind == TokenKind::kDot) {
        Advance();
        const Token& t = Peek();
        if (t.kind == TokenKind::kStar) {
          if (node->kind() != NodeKind::kColumnRef) {
            return Error("'.*' can only follow a column or struct name", t);
          }
          Advance();
          auto* ref = static_cast<const ColumnRefNode*>(node.get());
          node = std::make_shared<StarNode>(ref->parts(), node->position());
          return node;
        }
        if (t.kind != TokenKind::kIdentifier) {
          return Error("Expected a field name after '.' but found " + DescribeToken(t), t);
        }
        std::string field = t.text;
        int64_t pos = t.position;
        Advance();
        if (node->kind() == NodeKind::kColumnRef) {
          std::vector<std::string> parts = static_cast<const ColumnRefNode*>(node.get())->parts();
          parts.push_back(std::move(field));
          node = std::make_shared<ColumnRefNode>(std::move(parts), node->position());
          if (Peek().kind == TokenKind::kLParen) {
            // A qualified function name (db.fn(...)).
            auto* ref = static_cast<const ColumnRefNode*>(node.get());
            std::string name;
            for (size_t i = 0; i < ref->parts().size(); ++i) {
              if (i > 0) name.push_back('.');
              name += ref->parts()[i];
            }
            SILT_ASSIGN_OR_RETURN(node, ParseCall(std::move(name), node->position()));
          }
        } else {
          node = std::make_shared<FieldAccessNode>(std::move(node), std::move(field), pos);
        }
      } else if (Peek().kind == TokenKind::kLBracket) {
        // array[index] (0-based) or map[key].
        int64_t pos = Peek().position;
        Advance();
        SILT_ASSIGN_OR_RETURN(NodePtr index, ParseExpression());
        SILT_RETURN_NOT_OK(Expect(TokenKind::kRBracket, "']' after the subscript"));
        node = std::make_shared<CallNode>(kSubscriptCall, std::vector<NodePtr>{node, index}, false,
                                          false, pos);
      } else {
        return node;
      }
    }
  }

  Result<NodePtr> ParsePrimary() {
    const Token& t = Peek();
    int64_t pos = t.position;
    switch (t.kind) {
      case TokenKind::kNumber: return ParseNumber(/*negative=*/false, pos);
      case TokenKind::kString: {
        std::string value;
        while (Peek().kind == TokenKind::kString) {
          value += Peek().text;
          Advance();
        }
        LiteralNode::Value v;
        v.type = DataType::String();
        v.string_value = std::move(value);
        return NodePtr(std::make_shared<LiteralNode>(std::move(v), pos));
      }
      case TokenKind::kLParen: {
        Advance();
        SILT_ASSIGN_OR_RETURN(NodePtr inner, ParseExpression());
        SILT_RETURN_NOT_OK(Expect(TokenKind::kRParen, "')'"));
        return inner;
      }
      case TokenKind::kStar:
        Advance();
        return NodePtr(std::make_shared<StarNode>(std::vector<std::string>{}, pos));
      case TokenKind::kIdentifier: return ParseIdentifierPrimary();
      case TokenKind::kEnd:
        return Error("Syntax error: unexpected end of input, expected an expression", t);
      default: return Unexpected(t);
    }
  }

  Result<NodePtr> ParseIdentifierPrimary() {
    const Token& t = Peek();
    int64_t pos = t.position;
    if (t.IsKeyword("NULL")) {
      Advance();
      LiteralNode::Value v;
      v.type = DataType::Null();
      v.is_null = true;
      return NodePtr(std::make_shared<LiteralNode>(std::move(v), pos));
    }
    if (t.IsKeyword("TRUE") || t.IsKeyword("FALSE")) {
      LiteralNode::Value v;
      v.type = DataType::Boolean();
      v.int_value = t.IsKeyword("TRUE") ? 1 : 0;
      Advance();
      return NodePtr(std::make_shared<LiteralNode>(std::move(v), pos));
    }
    if (Peek(1).kind == TokenKind::kString &&
        (t.IsKeyword("DATE") || t.IsKeyword("TIMESTAMP") || t.IsKeyword("TIMESTAMP_LTZ") ||
         t.IsKeyword("TIMESTAMP_NTZ") || t.IsKeyword("X"))) {
      return ParseTypedLiteral();
    }
    if ((t.IsKeyword("CAST") || t.IsKeyword("TRY_CAST")) && Peek(1).kind == TokenKind::kLParen) {
      return ParseCast();
    }
    if (t.IsKeyword("CASE")) return ParseCase();
    std::string name = t.text;
    Advance();
    if (Peek().kind == TokenKind::kLParen) return ParseCall(std::move(name), pos);
    return NodePtr(std::make_shared<ColumnRefNode>(std::vector<std::string>{std::move(name)}, pos));
  }

  static std::string LowerKeyword(std::string_view text) {
    std::string out(text);
    for (char& c : out) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    return out;
  }

  // CASE [operand] WHEN c THEN v ... [ELSE e] END, as a kCaseWhenCall whose
  // arguments are c1, v1, c2, v2, ..., [e]. `CASE x WHEN a` compares x = a.
  Result<NodePtr> ParseCase() {
    const int64_t pos = Peek().position;
    Advance();  // CASE
    NodePtr operand;
    if (!Peek().IsKeyword("WHEN")) {
      SILT_ASSIGN_OR_RETURN(operand, ParseExpression());
    }
    std::vector<NodePtr> args;
    while (Peek().IsKeyword("WHEN")) {
      const int64_t when_pos = Peek().position;
      Advance();
      SILT_ASSIGN_OR_RETURN(NodePtr condition, ParseExpression());
      if (operand != nullptr) {
        condition =
            std::make_shared<BinaryNode>(BinaryOp::kEq, operand, std::move(condition), when_pos);
      }
      if (!Peek().IsKeyword("THEN")) {
        return Error("Expected THEN in CASE but found " + DescribeToken(Peek()), Peek());
      }
      Advance();
      SILT_ASSIGN_OR_RETURN(NodePtr result, ParseExpression());
      args.push_back(std::move(condition));
      args.push_back(std::move(result));
    }
    if (args.empty()) {
      return Error("Expected WHEN in CASE but found " + DescribeToken(Peek()), Peek());
    }
    if (Peek().IsKeyword("ELSE")) {
      Advance();
      SILT_ASSIGN_OR_RETURN(NodePtr otherwise, ParseExpression());
      args.push_back(std::move(otherwise));
    }
    if (!Peek().IsKeyword("END")) {
      return Error("Expected END to close CASE but found " + DescribeToken(Peek()), Peek());
    }
    Advance();
    return NodePtr(std::make_shared<CallNode>(kCaseWhenCall, std::move(args), false, false, pos));
  }

  // After the function name; Peek() is '('.
  Result<NodePtr> ParseCall(std::string name, int64_t pos) {
    Advance();  // (
    std::vector<NodePtr> args;
    bool star = false;
    bool distinct = false;
    if (Peek().kind == TokenKind::kStar && Peek(1).kind == TokenKind::kRParen) {
      star = true;
      Advance();
    } else if (Peek().kind != TokenKind::kRParen) {
      if (Peek().IsKeyword("DISTINCT") && Peek(1).kind != TokenKind::kRParen &&
          Peek(1).kind != TokenKind::kComma) {
        distinct = true;
        Advance();
      } else if (Peek().IsKeyword("ALL") && Peek(1).kind != TokenKind::kRParen &&
                 Peek(1).kind != TokenKind::kComma) {
        Advance();
      }
      while (true) {
        SILT_ASSIGN_OR_RETURN(NodePtr arg, ParseExpression());
        args.push_back(std::move(arg));
        if (!Accept(TokenKind::kComma)) break;
      }
    }
    SILT_RETURN_NOT_OK(Expect(TokenKind::kRParen, "',' or ')' in the argument list of " + name));
    return NodePtr(
        std::make_shared<CallNode>(std::move(name), std::move(args), star, distinct, pos));
  }

  // (TRY_)CAST '(' expression AS type ')'.
  Result<NodePtr> ParseCast() {
    int64_t pos = Peek().position;
    bool try_cast = Peek().IsKeyword("TRY_CAST");
    Advance();  // CAST
    Advance();  // (
    SILT_ASSIGN_OR_RETURN(NodePtr child, ParseExpression());
    if (!Peek().IsKeyword("AS")) {
      return Error(std::string("Expected AS in ") + (try_cast ? "TRY_CAST" : "CAST") +
                       " but found " + DescribeToken(Peek()),
                   Peek());
    }
    Advance();
    // The type runs to the matching ')'.
    const Token& first = Peek();
    int depth = 0;
    size_t end_index = index_;
    while (true) {
      const Token& t = tokens_[end_index];
      if (t.kind == TokenKind::kEnd) {
        return Error("Expected ')' to close CAST but found end of input", t);
      }
      if (t.kind == TokenKind::kLParen) ++depth;
      if (t.kind == TokenKind::kRParen) {
        if (depth == 0) break;
        --depth;
      }
      ++end_index;
    }
    if (end_index == index_) return Error("Expected a type after AS", first);
    int64_t type_begin = first.position;
    int64_t type_end = tokens_[end_index].position;
    SILT_ASSIGN_OR_RETURN(TypePtr type, ParseTypeText(type_begin, type_end));
    index_ = end_index;
    Advance();  // )
    return NodePtr(std::make_shared<CastNode>(std::move(child), std::move(type), pos, try_cast));
  }

  // The type after '::': a name, then a balanced (...) or <...> suffix.
  Result<TypePtr> ParsePostfixType() {
    const Token& first = Peek();
    if (first.kind != TokenKind::kIdentifier) {
      return Error("Expected a type after '::' but found " + DescribeToken(first), first);
    }
    Advance();
    if (Peek().kind == TokenKind::kLParen || Peek().kind == TokenKind::kLt) {
      TokenKind open = Peek().kind;
      TokenKind close = open == TokenKind::kLParen ? TokenKind::kRParen : TokenKind::kGt;
      int depth = 0;
      while (true) {
        const Token& t = Peek();
        if (t.kind == TokenKind::kEnd) return Error("Unterminated type after '::'", t);
        if (t.kind == open) ++depth;
        if (t.kind == close) --depth;
        Advance();
        if (depth == 0) break;
      }
    }
    // The type text runs up to the next token; trailing blanks are trimmed.
    return ParseTypeText(first.position, Peek().position);
  }

  Result<TypePtr> ParseTypeText(int64_t begin, int64_t end) {
    std::string_view type_text =
        text_.substr(static_cast<size_t>(begin), static_cast<size_t>(end - begin));
    while (!type_text.empty() && (type_text.back() == ' ' || type_text.back() == '\t' ||
                                  type_text.back() == '\n' || type_text.back() == '\r')) {
      type_text.remove_suffix(1);
    }
    Result<TypePtr> type = columnar::ParseDdlType(type_text);
    if (!type.ok()) {
      return SyntaxError(
          "Invalid type '" + std::string(type_text) + "' (" + type.status().message() + ")", begin,
          text_);
    }
    return type;
  }

  Result<NodePtr> ParseTypedLiteral() {
    const Token& kw = Peek();
    int64_t pos = kw.position;
    std::string keyword = kw.text;
    for (char& c : keyword) {
      if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    }
    Advance();
    std::string value;
    while (Peek().kind == TokenKind::kString) {
      value += Peek().text;
      Advance();
    }
    LiteralNode::Value v;
    if (keyword == "DATE") {
      std::optional<int32_t> days = columnar::ParseDate(value);
      if (!days) return SyntaxError("Cannot parse the DATE value: " + value, pos, text_);
      v.type = DataType::Date();
      v.int_value = *days;
    } else if (keyword == "X") {
      std::string hex = value.size() % 2 == 1 ? "0" + value : value;
      std::string bytes;
      for (size_t i = 0; i < hex.size(); i += 2) {
        auto nibble = [](char c) -> int {
          if (c >= '0' && c <= '9') return c - '0';
          if (c >= 'a' && c <= 'f') return c - 'a' + 10;
          if (c >= 'A' && c <= 'F') return c - 'A' + 10;
          return -1;
        };
        int hi = nibble(hex[i]);
        int lo = nibble(hex[i + 1]);
        if (hi < 0 || lo < 0) {
          return SyntaxError("Cannot parse the binary literal X'" + value + "'", pos, text_);
        }
        bytes.push_back(static_cast<char>(hi * 16 + lo));
      }
      v.type = DataType::Binary();
      v.string_value = std::move(bytes);
    } else {
      // The value is validated here and re-read with the session time zone
      // when bound.
      std::optional<int64_t> micros = columnar::ParseTimestamp(value, 0);
      if (!micros) {
        return SyntaxError("Cannot parse the " + keyword + " value: " + value, pos, text_);
      }
      v.type = keyword == "TIMESTAMP_NTZ" ? DataType::TimestampNtz() : DataType::Timestamp();
      v.int_value = *micros;
      v.string_value = std::move(value);
    }
    return NodePtr(std::make_shared<LiteralNode>(std::move(v), pos));
  }

  Result<NodePtr> ParseNumber(bool negative, int64_t pos) {
    const Token& t = Peek();
    std::string raw = t.text;
    int64_t token_pos = t.position;
    Advance();
    std::string text = negative ? "-" + raw : raw;
    // Suffix.
    std::string body = raw;
    char suffix = '\0';
    bool big_decimal = false;
    if (body.size() >= 2 && (body[body.size() - 2] & ~0x20) == 'B' &&
        (body.back() & ~0x20) == 'D') {
      big_decimal = true;
      body.resize(body.size() - 2);
    } else {
      char last = static_cast<char>(body.back() & ~0x20);
      if (last == 'L' || last == 'S' || last == 'Y' || last == 'F' || last == 'D') {
        suffix = last;
        body.pop_back();
      }
    }
    bool has_point = body.find('.') != std::string::npos;
    bool has_exponent = body.find_first_of("eE") != std::string::npos;
    auto out_of_range = [&](const char* type_name, const char* range) {
      return SyntaxError(
          "Numeric literal " + text + " does not fit in range " + range + " for type " + type_name,
          token_pos, text_);
    };
    LiteralNode::Value v;
    if (big_decimal || (suffix == '\0' && has_point && !has_exponent)) {
      int128 unscaled = 0;
      int precision = 0;
      int scale = 0;
      if (!DecimalLiteral(body, negative, &unscaled, &precision, &scale)) {
        return SyntaxError("Decimal literal " + text + " exceeds the maximum precision of 38",
                           token_pos, text_);
      }
      v.type = DataType::Decimal(precision, scale);
      v.decimal_value = unscaled;
    } else if (suffix == 'D' || suffix == 'F' || (suffix == '\0' && has_exponent)) {
      std::string number = (negative ? "-" : "") + body;
      errno = 0;
      double d = std::strtod(number.c_str(), nullptr);
      if (suffix == 'F') {
        float f = std::strtof(number.c_str(), nullptr);
        if (std::isinf(f)) return out_of_range("float", "[-3.4028235E38, 3.4028235E38]");
        v.type = DataType::Float();
        v.double_value = static_cast<double>(f);
      } else {
        if (std::isinf(d)) {
          return out_of_range("double", "[-1.7976931348623157E308, 1.7976931348623157E308]");
        }
        v.type = DataType::Double();
        v.double_value = d;
      }
    } else {
      if (has_point || has_exponent) {
        return SyntaxError("Invalid numeric literal " + text, token_pos, text_);
      }
      // Integral: accumulate as int128 (more than 38 digits is out of range
      // for every type).
      int128 value = 0;
      int significant = 0;
      for (char c : body) {
        if (value != 0 || c != '0') ++significant;
        if (significant > kMaxDecimalPrecision) {
          return out_of_range("decimal", "of 38 digits");
        }
        value = value * 10 + (c - '0');
      }
      if (negative) value = -value;
      auto fits = [&](int64_t lo, int64_t hi) { return value >= lo && value <= hi; };
      switch (suffix) {
        case 'L':
          if (!fits(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max())) {
            return out_of_range("bigint", "[-9223372036854775808, 9223372036854775807]");
          }
          v.type = DataType::Long();
          break;
        case 'S':
          if (!fits(-32768, 32767)) return out_of_range("smallint", "[-32768, 32767]");
          v.type = DataType::Short();
          break;
        case 'Y':
          if (!fits(-128, 127)) return out_of_range("tinyint", "[-128, 127]");
          v.type = DataType::Byte();
          break;
        default:
          if (fits(std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max())) {
            v.type = DataType::Int();
          } else if (fits(std::numeric_limits<int64_t>::min(),
                          std::numeric_limits<int64_t>::max())) {
            v.type = DataType::Long();
          } else {
            // Spark makes integers beyond BIGINT a DECIMAL(p, 0).
            v.type = DataType::Decimal(DecimalDigits(value), 0);
            v.decimal_value = value;
          }
          break;
      }
      if (v.type->id() != columnar::TypeId::kDecimal) v.int_value = static_cast<int64_t>(value);
    }
    return NodePtr(std::make_shared<LiteralNode>(std::move(v), pos));
  }

  std::string_view text_;
  std::vector<Token> tokens_;
  size_t index_ = 0;
};

}  // namespace

Result<NodePtr> ParseNode(std::string_view text) {
  SILT_ASSIGN_OR_RETURN(std::vector<Token> tokens, Tokenize(text));
  Parser parser(text, std::move(tokens));
  return parser.ParseTop();
}

}  // namespace silt::expr
