// Binder: resolves a parsed expression against an input schema, as Spark's
// analyzer does for one select item:
//  - column names case-insensitively (an unknown name lists the available
//    columns; two columns differing only in case are ambiguous);
//  - `a.b.c` as column a and nested struct fields b, c;
//  - current_date / current_timestamp without parentheses when no column has
//    that name (Spark's literal functions);
//  - functions and operators through the FunctionRegistry, whose binders
//    add Spark's implicit casts;
//  - constant subtrees folded once at bind time.
//
// Thread safety: a Binder is used by one thread; the bound tree it returns
// is owned by the caller.
#pragma once

#include <string>

#include "silt/base/result.h"
#include "silt/expr/kernel/bind_session.h"
#include "silt/expr/kernel/bound.h"
#include "silt/expr/parse/ast.h"

namespace silt::expr {

class Binder {
 public:
  // `expression_text` is quoted in error messages. `session` (may be null)
  // must outlive the Binder.
  Binder(columnar::SchemaPtr schema, EvalOptions options, std::string expression_text,
         BindSession* session = nullptr)
      : schema_(std::move(schema)),
        options_(options),
        expression_text_(std::move(expression_text)),
        session_(session) {}

  // Binds `node`. Errors: InvalidArgument for unknown or ambiguous columns
  // and fields, unknown functions, wrong argument counts or types, and
  // casts Spark does not allow; each names the expression.
  Result<BoundNodePtr> Bind(const Node& node);

  // The column name Spark gives a select item: its alias; the column's
  // schema name for a top-level column (or a CAST of one); the last field
  // name as written for `a.b.c`; else the pretty SQL of the bound tree.
  static std::string OutputName(const Node& node, const BoundNode& bound);

 private:
  Result<BoundNodePtr> BindLiteral(const LiteralNode& node);
  Result<BoundNodePtr> BindColumnRef(const ColumnRefNode& node);
  Result<BoundNodePtr> BindField(BoundNodePtr parent, const std::string& field,
                                 const std::string& sql_prefix);
  Result<BoundNodePtr> BindCall(const std::string& name, std::string text,
                                std::vector<BoundNodePtr> args, bool star_arg);
  Status UnknownColumn(const std::string& name) const;

  columnar::SchemaPtr schema_;
  EvalOptions options_;
  std::string expression_text_;
  BindSession* session_;
};

}  // namespace silt::expr
