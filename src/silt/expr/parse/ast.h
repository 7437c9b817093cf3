// Parsed (unbound) expression nodes: the tree ParseExpression builds and
// Bind consumes. Each node keeps what the user wrote (identifier case, type
// text, literal spelling) so messages and generated column names can quote it.
//
// Node kinds mirror Spark's unresolved expressions: literals, column
// references (`a`, `a.b.c`), field access on any expression (`f(x).y`), `*`
// and `x.*`, function calls, CAST, unary and binary operators, IS [NOT] NULL
// and aliases. New syntax (CASE, LIKE, IN, ...) adds a kind here and a case in
// the binder; the rest of the pipeline is unchanged.
//
// Thread safety: immutable after construction; share freely.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "silt/columnar/types.h"
#include "silt/expr/parse/parsed_expression.h"

namespace silt::expr {

enum class NodeKind {
  kLiteral,
  kColumnRef,
  kFieldAccess,
  kStar,
  kCall,
  kCast,
  kUnary,
  kBinary,
  kIsNull,
  kAlias,
};

enum class UnaryOp { kNot, kNegate, kPlus, kBitNot };

enum class BinaryOp {
  kOr,
  kAnd,
  kEq,          // = and ==
  kNotEq,       // != and <>
  kNullSafeEq,  // <=>
  kLt,
  kLe,
  kGt,
  kGe,
  kAdd,
  kSubtract,
  kMultiply,
  kDivide,
  kRemainder,
  kIntegralDivide,  // DIV
  kConcat,          // ||
  kBitAnd,
  kBitOr,
  kBitXor,
};

// The SQL spelling of an operator ("+", "AND", "div").
const char* BinaryOpSymbol(BinaryOp op);

class Node;
using NodePtr = std::shared_ptr<const Node>;

class Node : public Expression {
 public:
  explicit Node(NodeKind kind, int64_t position) : kind_(kind), position_(position) {}
  NodeKind kind() const { return kind_; }
  // 0-based offset of the node's first character in the parsed text.
  int64_t position() const { return position_; }

  // Spark's auto-generated column name text for this subtree (toPrettySQL):
  // identifiers unquoted, string literals without quotes.
  virtual std::string PrettySql() const = 0;

  std::string OutputName() const override;

 private:
  NodeKind kind_;
  int64_t position_;
};

// A literal value. `type` is the literal's Spark type; for kNull the value
// fields are unused. Integral, boolean, date and timestamp values are held in
// `int_value`, float/double in `double_value`, decimals as the unscaled
// `decimal_value` with type precision/scale, strings in `string_value`.
class LiteralNode : public Node {
 public:
  struct Value {
    columnar::TypePtr type;
    bool is_null = false;
    int64_t int_value = 0;
    double double_value = 0;
    __int128 decimal_value = 0;
    std::string string_value;
  };
  LiteralNode(Value value, int64_t position) : Node(NodeKind::kLiteral, position), value_(value) {}
  const Value& value() const { return value_; }
  std::string ToString() const override;
  std::string PrettySql() const override;

 private:
  Value value_;
};

// `a`, `a.b.c`: a top-level column and optional nested struct fields, as
// typed (resolution is case-insensitive).
class ColumnRefNode : public Node {
 public:
  ColumnRefNode(std::vector<std::string> parts, int64_t position)
      : Node(NodeKind::kColumnRef, position), parts_(std::move(parts)) {}
  const std::vector<std::string>& parts() const { return parts_; }
  std::string ToString() const override;
  std::string PrettySql() const override;

 private:
  std::vector<std::string> parts_;
};

// `<expr>.field` where <expr> is not a plain column reference.
class FieldAccessNode : public Node {
 public:
  FieldAccessNode(NodePtr child, std::string field, int64_t position)
      : Node(NodeKind::kFieldAccess, position),
        child_(std::move(child)),
        field_(std::move(field)) {}
  const NodePtr& child() const { return child_; }
  const std::string& field() const { return field_; }
  std::string ToString() const override;
  std::string PrettySql() const override;

 private:
  NodePtr child_;
  std::string field_;
};

// `*` or `x.*` (qualifier parts non-empty).
class StarNode : public Node {
 public:
  StarNode(std::vector<std::string> qualifier, int64_t position)
      : Node(NodeKind::kStar, position), qualifier_(std::move(qualifier)) {}
  const std::vector<std::string>& qualifier() const { return qualifier_; }
  bool IsStar() const override { return true; }
  std::string StarQualifier() const override;
  std::string ToString() const override;
  std::string PrettySql() const override { return ToString(); }

 private:
  std::vector<std::string> qualifier_;
};

// `name(args)`, `name(*)`, `name(DISTINCT args)`.
// Internal call names the parser gives to syntax that binds like a function
// (they contain a space, so no user-written call can reach them).
inline constexpr const char* kCaseWhenCall = "case when";    // c1, v1, ..., [else]
inline constexpr const char* kInListCall = "in list";        // value, item1, ...
inline constexpr const char* kSubscriptCall = "sub script";  // array or map, index or key

class CallNode : public Node {
 public:
  CallNode(std::string name, std::vector<NodePtr> args, bool star_arg, bool distinct,
           int64_t position)
      : Node(NodeKind::kCall, position),
        name_(std::move(name)),
        args_(std::move(args)),
        star_arg_(star_arg),
        distinct_(distinct) {}
  // The name as typed.
  const std::string& name() const { return name_; }
  const std::vector<NodePtr>& args() const { return args_; }
  bool star_arg() const { return star_arg_; }
  bool distinct() const { return distinct_; }
  std::string ToString() const override;
  std::string PrettySql() const override;

 private:
  std::string name_;
  std::vector<NodePtr> args_;
  bool star_arg_;
  bool distinct_;
};

// `CAST(child AS type)`, `child::type` and `TRY_CAST(child AS type)` (NULL
// instead of an error on failure, also with ANSI on).
class CastNode : public Node {
 public:
  CastNode(NodePtr child, columnar::TypePtr type, int64_t position, bool try_cast = false)
      : Node(NodeKind::kCast, position),
        child_(std::move(child)),
        type_(std::move(type)),
        try_cast_(try_cast) {}
  const NodePtr& child() const { return child_; }
  const columnar::TypePtr& type() const { return type_; }
  bool try_cast() const { return try_cast_; }
  std::string ToString() const override;
  std::string PrettySql() const override;

 private:
  NodePtr child_;
  columnar::TypePtr type_;
  bool try_cast_;
};

class UnaryNode : public Node {
 public:
  UnaryNode(UnaryOp op, NodePtr child, int64_t position)
      : Node(NodeKind::kUnary, position), op_(op), child_(std::move(child)) {}
  UnaryOp op() const { return op_; }
  const NodePtr& child() const { return child_; }
  std::string ToString() const override;
  std::string PrettySql() const override;

 private:
  UnaryOp op_;
  NodePtr child_;
};

class BinaryNode : public Node {
 public:
  BinaryNode(BinaryOp op, NodePtr left, NodePtr right, int64_t position)
      : Node(NodeKind::kBinary, position),
        op_(op),
        left_(std::move(left)),
        right_(std::move(right)) {}
  BinaryOp op() const { return op_; }
  const NodePtr& left() const { return left_; }
  const NodePtr& right() const { return right_; }
  std::string ToString() const override;
  std::string PrettySql() const override;

 private:
  BinaryOp op_;
  NodePtr left_;
  NodePtr right_;
};

// `child IS NULL` / `child IS NOT NULL`.
class IsNullNode : public Node {
 public:
  IsNullNode(NodePtr child, bool negated, int64_t position)
      : Node(NodeKind::kIsNull, position), child_(std::move(child)), negated_(negated) {}
  const NodePtr& child() const { return child_; }
  bool negated() const { return negated_; }
  std::string ToString() const override;
  std::string PrettySql() const override;

 private:
  NodePtr child_;
  bool negated_;
};

// `child AS name` (or a bare alias), only at the top of a parsed expression.
class AliasNode : public Node {
 public:
  AliasNode(NodePtr child, std::string name, int64_t position)
      : Node(NodeKind::kAlias, position), child_(std::move(child)), name_(std::move(name)) {}
  const NodePtr& child() const { return child_; }
  const std::string& name() const { return name_; }
  std::string ToString() const override;
  std::string PrettySql() const override { return name_; }

 private:
  NodePtr child_;
  std::string name_;
};

// Quotes an identifier with backquotes when it is not a plain
// [A-Za-z_][A-Za-z0-9_]* name ("a b" -> "`a b`", "x`y" -> "`x``y`").
std::string QuoteIdentifierIfNeeded(const std::string& name);
// Always backquotes, as Spark's messages quote names ("a" -> "`a`").
std::string BackquoteIdentifier(std::string_view name);

// Spark's generated-name forms, shared by parsed and bound expressions:
// "f(a, b)" (name lower-cased), "(a + b)", "(NOT (a = b))" for != and <>,
// "concat(a, b)" for ||, "(- a)", "(NOT a)", "CAST(a AS INT)",
// "(a IS NOT NULL)". A cast to a nested type prints as its child, as Spark's
// Cast.sql does.
std::string PrettyCall(const std::string& name, const std::vector<std::string>& args);
// Spark's names for CASE WHEN (args c1, v1, ..., [else]) and IN (value,
// items...): "CASE WHEN c THEN v ELSE e END", "(a IN (1, 2))".
std::string PrettyCaseWhen(const std::vector<std::string>& args);
std::string PrettyInList(const std::vector<std::string>& args);
std::string PrettyBinary(BinaryOp op, const std::string& left, const std::string& right);
std::string PrettyUnary(UnaryOp op, const std::string& child);
std::string PrettyCast(const std::string& child, const columnar::DataType& type,
                       bool try_cast = false);
std::string PrettyIsNull(const std::string& child, bool negated);

}  // namespace silt::expr
