// Expression: the interface of a parsed (unbound) expression tree, what
// ParseExpression returns and Bind takes (ast.h's nodes implement it).
//
// Thread safety: immutable once parsed.
#pragma once

#include <memory>
#include <string>

namespace silt::expr {

// A parsed (unbound) expression tree. Opaque to callers beyond these.
class Expression {
 public:
  virtual ~Expression() = default;
  // The output name Spark would give the column: the alias if any, the
  // last field name for a column/field reference ("e.device_id" ->
  // "device_id"), else Spark's generated name for the expression text.
  virtual std::string OutputName() const = 0;
  // The expression re-printed in Spark SQL form (for messages).
  virtual std::string ToString() const = 0;
  // True when the top of the tree is `*` or `x.*` (select-list expansion).
  virtual bool IsStar() const { return false; }
  // For `x.*`: the qualifier ("x"); empty for plain `*`.
  virtual std::string StarQualifier() const { return {}; }
};
using ExpressionPtr = std::shared_ptr<const Expression>;

}  // namespace silt::expr
