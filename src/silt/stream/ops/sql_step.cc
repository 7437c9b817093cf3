#include "silt/stream/ops/sql_step.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>

#include "silt/base/strings.h"
#include "silt/expr/parse/select_statement.h"
#include "silt/stream/options_internal.h"

namespace silt::stream {

namespace {

bool KeywordAt(const std::string& q, size_t i, std::string_view word) {
  if (i + word.size() > q.size()) return false;
  for (size_t k = 0; k < word.size(); ++k) {
    if (std::toupper(static_cast<unsigned char>(q[i + k])) != word[k]) return false;
  }
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  if (i > 0 && ident(q[i - 1])) return false;
  if (i + word.size() < q.size() && ident(q[i + word.size()])) return false;
  return true;
}

// `a, f(b, c), 'x,y'` -> {"a", "f(b, c)", "'x,y'"}: commas outside
// parentheses, brackets and quotes. Errors: InvalidArgument for an empty item.
Result<std::vector<std::string>> SplitTopLevel(const std::string& text, const std::string& path) {
  std::vector<std::string> out;
  int depth = 0;
  char quote = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    const char c = i < text.size() ? text[i] : ',';
    if (quote != 0) {
      if (c == quote) quote = 0;
      continue;
    }
    if (c == '\'' || c == '"' || c == '`') {
      quote = c;
    } else if (c == '(' || c == '[') {
      ++depth;
    } else if (c == ')' || c == ']') {
      --depth;
    } else if (c == ',' && depth == 0) {
      std::string item(TrimAscii(text.substr(start, i - start)));
      if (item.empty()) return Status::InvalidArgument(path, ": empty item in '", text, "'");
      out.push_back(std::move(item));
      start = i + 1;
    }
  }
  return out;
}

// The FROM body of a sql step: `input [[AS] a] [<type>] JOIN
// delta.`PATH` [[AS] b] USING (c, ...)`, as a join step; or nullopt for a
// plain `input`.
class FromParser {
 public:
  FromParser(const std::string& text, const std::string& path) : text_(text), path_(path) {}

  Result<std::optional<TransformStep>> Parse() {
    std::string first = Word();
    if (!internal::EqualsIgnoreCase(first, "input")) {
      return Status::InvalidArgument(path_, ": the query reads '", text_,
                                     "'; a sql step reads the previous step's rows as 'input'");
    }
    SkipAlias();
    if (AtEnd()) return std::optional<TransformStep>();
    std::vector<std::string> type_words;
    std::string word = Word();
    while (!word.empty() && !internal::EqualsIgnoreCase(word, "JOIN")) {
      type_words.push_back(AsciiLower(word));
      word = Word();
    }
    if (word.empty()) return Unexpected("JOIN");
    TransformStep join;
    join.kind = "join";
    join.join_how = type_words.empty() ? "inner" : "";
    for (const std::string& w : type_words) join.join_how += (join.join_how.empty() ? "" : "_") + w;
    if (join.join_how == "left_outer_semi" || join.join_how == "left_outer_anti") {
      return Unexpected("a join type");
    }
    if (!internal::EqualsIgnoreCase(Word(), "delta") || !Consume('.')) {
      return Unexpected("delta.`<path>` (a sql step joins Delta tables)");
    }
    std::optional<std::string> table = Quoted();
    if (!table || table->empty()) return Unexpected("delta.`<path>`");
    join.join_with.path = *table;
    SkipAlias();
    std::string keyword = Word();
    if (internal::EqualsIgnoreCase(keyword, "ON")) {
      return Status::NotSupported(path_, ": a sql step joins with USING (<columns>), not ON, in '",
                                  text_, "'");
    }
    if (!internal::EqualsIgnoreCase(keyword, "USING") || !Consume('(')) {
      return Unexpected("USING (<columns>)");
    }
    while (true) {
      std::optional<std::string> quoted = Quoted();
      std::string column = quoted ? *quoted : Word();
      if (column.empty()) return Unexpected("a column name");
      join.exprs.push_back(std::move(column));
      if (Consume(',')) continue;
      if (Consume(')')) break;
      return Unexpected("',' or ')'");
    }
    if (!AtEnd()) return Unexpected("the end of FROM");
    return std::optional<TransformStep>(std::move(join));
  }

 private:
  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool AtEnd() {
    SkipSpace();
    return pos_ >= text_.size();
  }
  // An unquoted identifier, or "" (nothing consumed).
  std::string Word() {
    SkipSpace();
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      ++pos_;
    }
    return text_.substr(start, pos_ - start);
  }
  // A backquoted name (`` is a backquote), or nullopt (nothing consumed).
  std::optional<std::string> Quoted() {
    SkipSpace();
    if (pos_ >= text_.size() || text_[pos_] != '`') return std::nullopt;
    std::string out;
    for (size_t i = pos_ + 1; i < text_.size(); ++i) {
      if (text_[i] != '`') {
        out.push_back(text_[i]);
      } else if (i + 1 < text_.size() && text_[i + 1] == '`') {
        out.push_back('`');
        ++i;
      } else {
        pos_ = i + 1;
        return out;
      }
    }
    return std::nullopt;
  }
  bool Consume(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  // An optional `[AS] alias` (not a join keyword).
  void SkipAlias() {
    const size_t before = pos_;
    std::string word = Word();
    if (internal::EqualsIgnoreCase(word, "AS")) {
      if (!Quoted()) Word();
      return;
    }
    for (const char* keyword : {"JOIN", "INNER", "LEFT", "RIGHT", "FULL", "CROSS", "SEMI", "ANTI",
                                "USING", "ON", "OUTER"}) {
      if (internal::EqualsIgnoreCase(word, keyword)) {
        pos_ = before;
        return;
      }
    }
    if (word.empty()) Quoted();
  }
  Status Unexpected(const std::string& expected) const {
    return Status::InvalidArgument(path_, ": expected ", expected, " at position ", pos_ + 1,
                                   " of FROM '", text_,
                                   "' (FROM input [LEFT|LEFT SEMI|LEFT ANTI] JOIN "
                                   "delta.`<path>` USING (<columns>))");
  }

  const std::string& text_;
  const std::string& path_;
  size_t pos_ = 0;
};

// The index of the ')' closing the '(' at `open`, skipping quoted text;
// npos when it is not closed.
size_t ClosingParen(const std::string& text, size_t open) {
  int depth = 0;
  char quote = 0;
  for (size_t i = open; i < text.size(); ++i) {
    const char c = text[i];
    if (quote != 0) {
      if (c == quote) quote = 0;
      continue;
    }
    if (c == '\'' || c == '"' || c == '`') {
      quote = c;
    } else if (c == '(') {
      ++depth;
    } else if (c == ')' && --depth == 0) {
      return i;
    }
  }
  return std::string::npos;
}

// `[AS] alias` after a subquery, or nothing.
bool IsSubqueryAlias(std::string_view rest) {
  rest = TrimAscii(rest);
  if (rest.empty()) return true;
  if (rest.size() > 3 && (rest[0] == 'a' || rest[0] == 'A') && (rest[1] == 's' || rest[1] == 'S') &&
      std::isspace(static_cast<unsigned char>(rest[2]))) {
    rest = TrimAscii(rest.substr(3));
  }
  if (rest.size() >= 2 && rest.front() == '`' && rest.back() == '`') return true;
  for (char c : rest) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return !rest.empty();
}

}  // namespace

Result<std::vector<TransformStep>> SplitSqlStep(const TransformStep& step) {
  const std::string path = step.key_path + ".sql";
  if (step.exprs.size() != 1) return Status::InvalidArgument(path, ": expected one query");
  const std::string& q = step.exprs[0];
  size_t first = 0;
  while (first < q.size() && std::isspace(static_cast<unsigned char>(q[first]))) ++first;
  if (!KeywordAt(q, first, "SELECT")) {
    return Status::InvalidArgument(
        path, ": expected 'SELECT <columns> FROM input [WHERE ...]' but got '", q, "'");
  }
  Result<expr::SelectClauses> clauses =
      expr::SplitSelectStatement(q, "a sql step", /*joins_in_from=*/true);
  if (!clauses.ok()) return clauses.status().WithContext(path);
  const expr::SelectClauseSpan* from = clauses->Find(expr::SelectClause::kFrom);
  if (from == nullptr) {
    return Status::InvalidArgument(path, ": missing FROM in '", q, "' (write FROM input)");
  }
  const expr::SelectClauseSpan* where_clause = clauses->Find(expr::SelectClause::kWhere);
  // FROM ends at the next clause (WHERE, GROUP BY, ...), or the end.
  size_t table_end = q.size();
  for (const expr::SelectClauseSpan& other : clauses->clauses) {
    if (other.keyword > from->keyword) table_end = std::min(table_end, other.keyword);
  }
  std::string table =
      std::string(TrimAscii(q.substr(from->body.begin, table_end - from->body.begin)));
  std::vector<TransformStep> out;
  std::optional<TransformStep> join;
  if (!table.empty() && table.front() == '(') {
    // FROM (<query>) [[AS] alias]: the subquery's steps run first, and this
    // query reads their rows (e.g. an aggregation over an aggregation).
    const size_t close = ClosingParen(table, 0);
    if (close == std::string::npos || !IsSubqueryAlias(std::string_view(table).substr(close + 1))) {
      return Status::InvalidArgument(path, ": expected FROM (<query>) [[AS] alias] in '", q, "'");
    }
    TransformStep inner = step;
    inner.exprs = {std::string(TrimAscii(table.substr(1, close - 1)))};
    inner.key_path = step.key_path + ".sql(FROM)";
    SILT_ASSIGN_OR_RETURN(out, SplitSqlStep(inner));
  } else {
    SILT_ASSIGN_OR_RETURN(join, FromParser(table, path).Parse());
  }
  const expr::SelectClauseSpan* group_by = clauses->Find(expr::SelectClause::kGroupBy);
  const expr::SelectClauseSpan* having = clauses->Find(expr::SelectClause::kHaving);
  const bool aggregates = group_by != nullptr || having != nullptr;
  for (expr::SelectClause unsupported :
       {expr::SelectClause::kOrderBy, expr::SelectClause::kLimit}) {
    if (clauses->Find(unsupported) != nullptr) {
      return Status::NotSupported(path,
                                  ": ORDER BY and LIMIT are not supported yet in a "
                                  "streaming sql step, in '",
                                  q, "'");
    }
  }
  // Without GROUP BY / HAVING everything after WHERE is the predicate (a
  // later clause reaches its parser and is reported there); with them each
  // clause ends where the next begins.
  auto body = [&](const expr::SelectClauseSpan& clause) {
    size_t end = q.size();
    if (aggregates) {
      for (const expr::SelectClauseSpan& other : clauses->clauses) {
        if (other.keyword > clause.keyword) end = std::min(end, other.keyword);
      }
    }
    return std::string(TrimAscii(q.substr(clause.body.begin, end - clause.body.begin)));
  };
  if (join) {
    join->key_path = step.key_path + ".sql(JOIN)";
    out.push_back(std::move(*join));
  }
  if (where_clause != nullptr) {
    TransformStep where;
    where.kind = "where";
    where.key_path = step.key_path + ".sql(WHERE)";
    where.exprs.push_back(body(*where_clause));
    if (where.exprs[0].empty()) return Status::InvalidArgument(path, ": empty WHERE in '", q, "'");
    out.push_back(std::move(where));
  }
  if (aggregates) {
    // SELECT ... GROUP BY ... [HAVING ...]: one stateful groupBy whose
    // output is the select list.
    TransformStep group;
    group.kind = "groupBy";
    group.key_path = step.key_path + ".sql";
    group.sql_select = true;
    if (group_by != nullptr) {
      SILT_ASSIGN_OR_RETURN(group.exprs, SplitTopLevel(body(*group_by), path + "(GROUP BY)"));
    }
    if (having != nullptr) group.having = body(*having);
    for (const expr::TextSpan& span : clauses->select_items) {
      std::string item = std::string(TrimAscii(q.substr(span.begin, span.end - span.begin)));
      if (item.empty()) return Status::InvalidArgument(path, ": empty select item in '", q, "'");
      group.aggs.push_back(std::move(item));
    }
    out.push_back(std::move(group));
    return out;
  }
  TransformStep select;
  select.kind = "select";
  select.key_path = step.key_path + ".sql(SELECT)";
  for (const expr::TextSpan& span : clauses->select_items) {
    std::string item = std::string(TrimAscii(q.substr(span.begin, span.end - span.begin)));
    if (item.empty()) return Status::InvalidArgument(path, ": empty select item in '", q, "'");
    select.exprs.push_back(std::move(item));
  }
  out.push_back(std::move(select));
  return out;
}

}  // namespace silt::stream
