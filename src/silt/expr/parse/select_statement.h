// silt's one SELECT-statement parser, for `silt sql` (batch queries over a
// Delta table) and a stream job's `sql` transform step. Expressions are
// parsed by the expr parser (Spark SQL); the clause skeleton here:
//
//   SELECT item [, item]...
//   FROM delta.`PATH` [VERSION AS OF n | TIMESTAMP AS OF 'ts'] [[AS] alias]
//   [WHERE expr] [GROUP BY expr [, expr]...] [HAVING expr]
//   [ORDER BY expr [ASC|DESC] [NULLS FIRST|LAST] [, ...]] [LIMIT n]
//
// Clause keywords are recognised outside parentheses only; a column named
// like one (`from`) must be back-quoted, as in Spark. The statement is
// tokenized once with the expr lexer.
//
// Two levels: SplitSelectStatement finds the clauses (their order checked)
// and the select items as text spans and leaves their contents to the
// caller (the stream `sql` step, whose FROM names its input); and
// ParseSelectStatement parses every clause into a SelectStatement, with
// FROM naming a Delta table by path (delta.`PATH`, or a back-quoted or
// quoted path without `delta.`), as `silt sql` reads it.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "silt/base/result.h"
#include "silt/expr/parse/ast.h"

namespace silt::expr {

struct OrderItem {
  NodePtr expr;
  bool ascending = true;
  // Spark's default: NULLS FIRST for ASC, NULLS LAST for DESC.
  bool nulls_first = true;
};

struct SelectStatement {
  std::vector<NodePtr> select;  // as parsed, aliases kept
  // FROM: "delta" (delta.`PATH` or a bare quoted path), or "parquet" /
  // "json" for parquet.`PATH` / json.`PATH` (a MERGE source; `silt sql`
  // reads Delta tables only).
  std::string table_format = "delta";
  std::string table_path;
  std::optional<int64_t> version;        // VERSION AS OF
  std::optional<std::string> timestamp;  // TIMESTAMP AS OF
  NodePtr where;                         // null when absent
  std::vector<NodePtr> group_by;
  NodePtr having;
  std::vector<OrderItem> order_by;
  std::optional<int64_t> limit;
};

enum class SelectClause { kSelect, kFrom, kWhere, kGroupBy, kHaving, kOrderBy, kLimit };

// Byte offsets [begin, end) into the statement text.
struct TextSpan {
  size_t begin = 0;
  size_t end = 0;
};

struct SelectClauseSpan {
  SelectClause clause = SelectClause::kSelect;
  size_t keyword = 0;  // offset of the clause keyword
  TextSpan body;       // its first token to the next clause keyword (or the end)
};

struct SelectClauses {
  std::vector<SelectClauseSpan> clauses;  // in statement order, SELECT first
  // The select list split at top-level commas (an item may be empty).
  std::vector<TextSpan> select_items;

  // Null when the statement has no such clause.
  const SelectClauseSpan* Find(SelectClause clause) const;
};

// The clause skeleton of `sql` (not trimmed: spans index into it). FROM and
// empty clause bodies are not checked here. `user` names the caller in
// NotSupported messages ("silt sql"). Errors: InvalidArgument "<what> at
// position <n> in '<sql>'" for a statement not starting with SELECT or with
// clauses out of order; NotSupported for joins (unless `joins_in_from`:
// then a JOIN stays in the FROM body, for the caller to parse) and a SELECT
// outside parentheses after the first (subqueries, set operations); the
// lexer's errors.
Result<SelectClauses> SplitSelectStatement(std::string_view sql, std::string_view user,
                                           bool joins_in_from = false);

// Trailing semicolons and whitespace are ignored. Errors: InvalidArgument
// "<what> at position <n> in '<sql>'" for a malformed statement; the expr parser's errors for a
// malformed expression; NotSupported for SELECT DISTINCT, joins and subqueries.
Result<SelectStatement> ParseSelectStatement(std::string_view sql);

// A comma-separated list of expressions, each with an optional alias
// (`silt read --select`); commas inside parentheses belong to the
// expression. Errors: as the expr parser.
Result<std::vector<NodePtr>> ParseExpressionList(std::string_view text);

}  // namespace silt::expr
