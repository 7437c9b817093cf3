// The data-changing statements of `silt sql`, on Delta tables named by path,
// as Spark SQL + Delta spell them:
//
//   DELETE FROM delta.`PATH` [[AS] alias] [WHERE cond]
//   UPDATE delta.`PATH` [[AS] alias] SET col = expr [, ...] [WHERE cond]
//   MERGE INTO delta.`PATH` [[AS] alias] USING <source> [[AS] alias] ON cond
//     { WHEN MATCHED [AND cond] THEN { UPDATE SET col = expr [, ...] | UPDATE SET * | DELETE }
//     | WHEN NOT MATCHED [BY TARGET] [AND cond] THEN
//         { INSERT (col [, ...]) VALUES (expr [, ...]) | INSERT * }
//     | WHEN NOT MATCHED BY SOURCE [AND cond] THEN { UPDATE SET col = expr [, ...] | DELETE } } ...
//
// where <source> is delta.`PATH`, parquet.`PATH`, json.`PATH` or a
// parenthesised SELECT over one of those (select_statement.h's grammar).
// Clause order follows Spark's rules: in each WHEN kind only the last clause
// may omit its condition.
//
// Thread safety: pure functions.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "silt/base/result.h"
#include "silt/expr/parse/ast.h"
#include "silt/expr/parse/select_statement.h"

namespace silt::expr {

// A table or file named by path: format "delta", "parquet" or "json"; or a
// parenthesised SELECT (`query` set, whose table_format/table_path say what
// it reads).
struct TableReference {
  std::string format;
  std::string path;
  std::shared_ptr<SelectStatement> query;
  std::string alias;  // empty when none
};

// `col = expr` in SET or one column of INSERT (col, ...) VALUES (expr, ...);
// `column` is the target column as written (nested paths are refused by
// the executor).
struct Assignment {
  std::vector<std::string> column;
  NodePtr value;
};

enum class MergeMatch { kMatched, kNotMatched, kNotMatchedBySource };
enum class MergeActionKind { kUpdate, kUpdateAll, kDelete, kInsert, kInsertAll };

struct MergeClause {
  MergeMatch match = MergeMatch::kMatched;
  NodePtr condition;  // null: unconditional
  MergeActionKind action = MergeActionKind::kUpdate;
  // UPDATE SET / INSERT (cols) VALUES (exprs), in the order written.
  std::vector<Assignment> assignments;
};

struct MergeStatement {
  TableReference target;
  TableReference source;
  NodePtr on;
  std::vector<MergeClause> clauses;
};

struct DeleteStatement {
  TableReference target;
  NodePtr where;  // null: every row
};

struct UpdateStatement {
  TableReference target;
  std::vector<Assignment> set;
  NodePtr where;  // null: every row
};

using DmlStatement = std::variant<MergeStatement, DeleteStatement, UpdateStatement>;

// True when `sql` starts with MERGE, DELETE or UPDATE (so `silt sql` parses
// it with ParseDmlStatement instead of ParseSelectStatement).
bool IsDmlStatement(std::string_view sql);

// Trailing semicolons and whitespace are ignored. Errors: InvalidArgument
// "<what> at position <n> in '<sql>'" for a malformed statement or a clause
// order Spark refuses; the expr parser's errors; NotSupported for a target
// that is not delta.`PATH` or a source format silt cannot read.
Result<DmlStatement> ParseDmlStatement(std::string_view sql);

}  // namespace silt::expr
