// The SELECT statement `silt sql` runs, split into clauses; expressions are
// parsed by the expr parser (Spark SQL), the clause skeleton here:
//
//   SELECT item [, item]...
//   FROM delta.`PATH` [VERSION AS OF n | TIMESTAMP AS OF 'ts'] [[AS] alias]
//   [WHERE expr] [GROUP BY expr [, expr]...] [HAVING expr]
//   [ORDER BY expr [ASC|DESC] [NULLS FIRST|LAST] [, ...]] [LIMIT n]
//
// Clause keywords are recognised outside parentheses only; a column named
// like one (`from`) must be back-quoted, as in Spark. The table may also be
// given as a back-quoted or quoted path without `delta.`.
//
// Thread safety: pure function.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "silt/base/result.h"
#include "silt/expr/parse/ast.h"

namespace silt::query {

struct OrderItem {
  expr::NodePtr expr;
  bool ascending = true;
  // Spark's default: NULLS FIRST for ASC, NULLS LAST for DESC.
  bool nulls_first = true;
};

struct SelectStatement {
  std::vector<expr::NodePtr> select;  // as parsed, aliases kept
  std::string table_path;
  std::optional<int64_t> version;        // VERSION AS OF
  std::optional<std::string> timestamp;  // TIMESTAMP AS OF
  expr::NodePtr where;                   // null when absent
  std::vector<expr::NodePtr> group_by;
  expr::NodePtr having;
  std::vector<OrderItem> order_by;
  std::optional<int64_t> limit;
};

// Errors: InvalidArgument "<what> at position <n> in '<sql>'" for a
// malformed statement; the expr parser's errors for a malformed expression;
// NotSupported for SELECT DISTINCT, joins and subqueries.
Result<SelectStatement> ParseSelectStatement(std::string_view sql);

// A comma-separated list of expressions, each with an optional alias
// (`silt read --select`); commas inside parentheses belong to the
// expression. Errors: as the expr parser.
Result<std::vector<expr::NodePtr>> ParseExpressionList(std::string_view text);

}  // namespace silt::query
