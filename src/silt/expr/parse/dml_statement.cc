// The statement is tokenized once with the expr lexer; keywords at
// parenthesis depth 0 delimit the expression spans, which are handed to the
// expr parser as text (as select_statement.cc does).

#include "silt/expr/parse/dml_statement.h"

#include "silt/expr/parse/lexer.h"
#include "silt/expr/parse/parser.h"

namespace silt::expr {

namespace {

std::string_view TrimStatement(std::string_view sql) {
  while (!sql.empty() && (sql.back() == ';' || sql.back() == ' ' || sql.back() == '\n' ||
                          sql.back() == '\t' || sql.back() == '\r')) {
    sql.remove_suffix(1);
  }
  return sql;
}

class DmlParser {
 public:
  DmlParser(std::string_view sql, std::vector<Token> tokens)
      : sql_(sql), tokens_(std::move(tokens)) {}

  Result<DmlStatement> Parse() {
    if (Keyword(0, "MERGE")) return ParseMerge();
    if (Keyword(0, "DELETE")) return ParseDelete();
    if (Keyword(0, "UPDATE")) return ParseUpdate();
    return Error("Expected MERGE, DELETE or UPDATE", 0);
  }

 private:
  size_t End() const { return tokens_.size() - 1; }  // the kEnd token
  bool Keyword(size_t at, std::string_view word) const {
    return at < End() && tokens_[at].IsKeyword(word);
  }
  Status Error(const std::string& what, size_t at) const {
    return SyntaxError(what, tokens_[std::min(at, End())].position, sql_);
  }
  Status Expect(size_t* at, std::string_view word) const {
    if (!Keyword(*at, word)) {
      return Error("Expected " + std::string(word) + " but found " + DescribeToken(tokens_[*at]),
                   *at);
    }
    ++*at;
    return Status::OK();
  }
  std::string_view Text(size_t begin, size_t end) const {
    size_t from = static_cast<size_t>(tokens_[begin].position);
    size_t to = static_cast<size_t>(tokens_[end].position);
    return sql_.substr(from, to - from);
  }
  Result<NodePtr> ParseExpr(size_t begin, size_t end, std::string_view what) const {
    if (begin >= end) return Error("Expected " + std::string(what), begin);
    return ParseNode(Text(begin, end));
  }
  // The first token at depth 0 in [from, End()) that is one of `words`
  // (unquoted), or End().
  size_t FindKeyword(size_t from, std::initializer_list<std::string_view> words) const {
    int depth = 0;
    for (size_t i = from; i < End(); ++i) {
      TokenKind k = tokens_[i].kind;
      if (k == TokenKind::kLParen || k == TokenKind::kLBracket) ++depth;
      if (k == TokenKind::kRParen || k == TokenKind::kRBracket) --depth;
      if (depth != 0) continue;
      for (std::string_view w : words) {
        if (tokens_[i].IsKeyword(w)) return i;
      }
    }
    return End();
  }
  std::vector<std::pair<size_t, size_t>> SplitCommas(size_t begin, size_t end) const {
    return SplitTopLevelCommas(tokens_, begin, end);
  }
  // The matching ')' of the '(' at `open`, or End().
  size_t MatchingParen(size_t open) const {
    int depth = 0;
    for (size_t i = open; i < End(); ++i) {
      if (tokens_[i].kind == TokenKind::kLParen) ++depth;
      if (tokens_[i].kind == TokenKind::kRParen && --depth == 0) return i;
    }
    return End();
  }

  // fmt.`PATH` or (SELECT ...), then an optional alias that is not one of
  // `stop` (the keyword that follows the reference).
  Result<TableReference> ParseTableReference(size_t* at, bool target,
                                             std::initializer_list<std::string_view> stop) {
    TableReference ref;
    size_t i = *at;
    const Token& t = tokens_[i];
    if (!target && t.kind == TokenKind::kLParen) {
      size_t close = MatchingParen(i);
      if (close == End()) return Error("Unbalanced parenthesis", i);
      if (!Keyword(i + 1, "SELECT")) return Error("Expected SELECT after '('", i + 1);
      SILT_ASSIGN_OR_RETURN(SelectStatement select, ParseSelectStatement(Text(i + 1, close)));
      ref.format = select.table_format;
      ref.path = select.table_path;
      ref.query = std::make_shared<SelectStatement>(std::move(select));
      i = close + 1;
    } else {
      if (t.kind != TokenKind::kIdentifier || t.quoted ||
          !(t.IsKeyword("DELTA") || (!target && (t.IsKeyword("PARQUET") || t.IsKeyword("JSON")))) ||
          tokens_[i + 1].kind != TokenKind::kDot || tokens_[i + 2].kind != TokenKind::kIdentifier ||
          !tokens_[i + 2].quoted) {
        return Error(target ? "Expected delta.`path` (silt changes Delta tables by path)"
                            : "Expected delta.`path`, parquet.`path`, json.`path` or (SELECT ...)",
                     i);
      }
      ref.format = t.IsKeyword("DELTA") ? "delta" : t.IsKeyword("JSON") ? "json" : "parquet";
      ref.path = tokens_[i + 2].text;
      i += 3;
    }
    bool as = Keyword(i, "AS");
    if (as) ++i;
    bool is_stop = false;
    for (std::string_view w : stop) is_stop |= Keyword(i, w);
    if (i < End() && tokens_[i].kind == TokenKind::kIdentifier && (as || !is_stop)) {
      ref.alias = tokens_[i].text;
      ++i;
    } else if (as) {
      return Error("Expected an alias after AS", i);
    }
    *at = i;
    return ref;
  }

  // A column as written: a.b.c
  Result<std::vector<std::string>> ParseColumn(size_t begin, size_t end) const {
    std::vector<std::string> parts;
    for (size_t i = begin; i < end; ++i) {
      bool want_name = (i - begin) % 2 == 0;
      const Token& t = tokens_[i];
      if (want_name ? t.kind != TokenKind::kIdentifier : t.kind != TokenKind::kDot) {
        return Error("Expected a column name", i);
      }
      if (want_name) parts.push_back(t.text);
    }
    if (parts.empty() || (end - begin) % 2 == 0) return Error("Expected a column name", begin);
    return parts;
  }

  // col = expr [, ...] in [begin, end).
  Result<std::vector<Assignment>> ParseAssignments(size_t begin, size_t end) const {
    std::vector<Assignment> out;
    for (auto [b, e] : SplitCommas(begin, end)) {
      size_t eq = b;
      while (eq < e && tokens_[eq].kind != TokenKind::kEq) ++eq;
      if (eq == e) return Error("Expected column = expression", b);
      Assignment a;
      SILT_ASSIGN_OR_RETURN(a.column, ParseColumn(b, eq));
      SILT_ASSIGN_OR_RETURN(a.value, ParseExpr(eq + 1, e, "an expression after ="));
      out.push_back(std::move(a));
    }
    return out;
  }

  Result<DmlStatement> ParseDelete() {
    size_t i = 1;
    SILT_RETURN_NOT_OK(Expect(&i, "FROM"));
    DeleteStatement out;
    SILT_ASSIGN_OR_RETURN(out.target, ParseTableReference(&i, true, {"WHERE"}));
    if (Keyword(i, "WHERE")) {
      SILT_ASSIGN_OR_RETURN(out.where, ParseExpr(i + 1, End(), "a condition after WHERE"));
    } else if (i != End()) {
      return Error("Unexpected " + DescribeToken(tokens_[i]), i);
    }
    return DmlStatement(std::move(out));
  }

  Result<DmlStatement> ParseUpdate() {
    size_t i = 1;
    UpdateStatement out;
    SILT_ASSIGN_OR_RETURN(out.target, ParseTableReference(&i, true, {"SET"}));
    SILT_RETURN_NOT_OK(Expect(&i, "SET"));
    size_t where = FindKeyword(i, {"WHERE"});
    SILT_ASSIGN_OR_RETURN(out.set, ParseAssignments(i, where));
    if (where != End()) {
      SILT_ASSIGN_OR_RETURN(out.where, ParseExpr(where + 1, End(), "a condition after WHERE"));
    }
    return DmlStatement(std::move(out));
  }

  Result<DmlStatement> ParseMerge() {
    size_t i = 1;
    SILT_RETURN_NOT_OK(Expect(&i, "INTO"));
    MergeStatement out;
    SILT_ASSIGN_OR_RETURN(out.target, ParseTableReference(&i, true, {"USING"}));
    SILT_RETURN_NOT_OK(Expect(&i, "USING"));
    SILT_ASSIGN_OR_RETURN(out.source, ParseTableReference(&i, false, {"ON"}));
    SILT_RETURN_NOT_OK(Expect(&i, "ON"));
    size_t when = FindKeyword(i, {"WHEN"});
    SILT_ASSIGN_OR_RETURN(out.on, ParseExpr(i, when, "a condition after ON"));
    if (when == End()) return Error("Expected at least one WHEN clause", when);
    i = when;
    while (i < End()) {
      size_t clause_start = i;
      SILT_RETURN_NOT_OK(Expect(&i, "WHEN"));
      MergeClause clause;
      if (Keyword(i, "NOT")) {
        ++i;
        SILT_RETURN_NOT_OK(Expect(&i, "MATCHED"));
        clause.match = MergeMatch::kNotMatched;
        if (Keyword(i, "BY")) {
          ++i;
          if (Keyword(i, "SOURCE")) {
            clause.match = MergeMatch::kNotMatchedBySource;
          } else if (!Keyword(i, "TARGET")) {
            return Error("Expected TARGET or SOURCE after NOT MATCHED BY", i);
          }
          ++i;
        }
      } else {
        SILT_RETURN_NOT_OK(Expect(&i, "MATCHED"));
      }
      size_t then = FindKeyword(i, {"THEN"});
      if (then == End()) return Error("Expected THEN", i);
      if (Keyword(i, "AND")) {
        SILT_ASSIGN_OR_RETURN(clause.condition, ParseExpr(i + 1, then, "a condition after AND"));
      } else if (i != then) {
        return Error("Expected AND or THEN", i);
      }
      i = then + 1;
      size_t next = FindKeyword(i, {"WHEN"});
      SILT_RETURN_NOT_OK(ParseAction(i, next, &clause));
      SILT_RETURN_NOT_OK(CheckOrder(out.clauses, clause, clause_start));
      out.clauses.push_back(std::move(clause));
      i = next;
    }
    return DmlStatement(std::move(out));
  }

  Status ParseAction(size_t i, size_t end, MergeClause* clause) const {
    const bool insert_clause = clause->match == MergeMatch::kNotMatched;
    if (Keyword(i, "DELETE") && !insert_clause) {
      if (i + 1 != end) return Error("Unexpected " + DescribeToken(tokens_[i + 1]), i + 1);
      clause->action = MergeActionKind::kDelete;
      return Status::OK();
    }
    if (Keyword(i, "UPDATE") && !insert_clause) {
      if (!Keyword(i + 1, "SET")) return Error("Expected SET after UPDATE", i + 1);
      if (tokens_[i + 2].kind == TokenKind::kStar && i + 3 == end) {
        if (clause->match == MergeMatch::kNotMatchedBySource) {
          return Error("UPDATE SET * is not allowed in WHEN NOT MATCHED BY SOURCE", i + 2);
        }
        clause->action = MergeActionKind::kUpdateAll;
        return Status::OK();
      }
      clause->action = MergeActionKind::kUpdate;
      SILT_ASSIGN_OR_RETURN(clause->assignments, ParseAssignments(i + 2, end));
      return Status::OK();
    }
    if (Keyword(i, "INSERT") && insert_clause) {
      if (tokens_[i + 1].kind == TokenKind::kStar && i + 2 == end) {
        clause->action = MergeActionKind::kInsertAll;
        return Status::OK();
      }
      if (tokens_[i + 1].kind != TokenKind::kLParen)
        return Error("Expected ( or * after INSERT", i + 1);
      size_t close = MatchingParen(i + 1);
      if (!Keyword(close + 1, "VALUES") || tokens_[close + 2].kind != TokenKind::kLParen) {
        return Error("Expected VALUES (...)", close + 1);
      }
      size_t values_close = MatchingParen(close + 2);
      if (values_close == End() || values_close + 1 != end) {
        return Error("Expected the end of the INSERT clause", values_close + 1);
      }
      auto columns = SplitCommas(i + 2, close);
      auto values = SplitCommas(close + 3, values_close);
      if (columns.size() != values.size()) {
        return Error("INSERT names " + std::to_string(columns.size()) + " column(s) but gives " +
                         std::to_string(values.size()) + " value(s)",
                     close + 2);
      }
      clause->action = MergeActionKind::kInsert;
      for (size_t k = 0; k < columns.size(); ++k) {
        Assignment a;
        SILT_ASSIGN_OR_RETURN(a.column, ParseColumn(columns[k].first, columns[k].second));
        SILT_ASSIGN_OR_RETURN(a.value, ParseExpr(values[k].first, values[k].second, "a value"));
        clause->assignments.push_back(std::move(a));
      }
      return Status::OK();
    }
    return Error(insert_clause ? "Expected INSERT after WHEN NOT MATCHED ... THEN"
                               : "Expected UPDATE or DELETE",
                 i);
  }

  // Spark's grammar puts the clauses in the order MATCHED, NOT MATCHED,
  // NOT MATCHED BY SOURCE, and only the last clause of each kind may omit
  // its condition.
  Status CheckOrder(const std::vector<MergeClause>& before, const MergeClause& clause,
                    size_t at) const {
    if (!before.empty() && static_cast<int>(before.back().match) > static_cast<int>(clause.match)) {
      return Error(
          "WHEN clauses must come in the order MATCHED, NOT MATCHED, NOT MATCHED BY SOURCE", at);
    }
    for (const MergeClause& c : before) {
      if (c.match == clause.match && c.condition == nullptr) {
        const char* kind = clause.match == MergeMatch::kMatched      ? "MATCHED"
                           : clause.match == MergeMatch::kNotMatched ? "NOT MATCHED"
                                                                     : "NOT MATCHED BY SOURCE";
        return Error(std::string("When there are more than one ") + kind +
                         " clauses in a MERGE statement, only the last " + kind +
                         " clause can omit the condition",
                     at);
      }
    }
    return Status::OK();
  }

  std::string_view sql_;
  std::vector<Token> tokens_;
};

}  // namespace

bool IsDmlStatement(std::string_view sql) {
  Result<std::vector<Token>> tokens = Tokenize(sql);
  if (!tokens.ok() || tokens->empty()) return false;
  const Token& first = tokens->front();
  return first.IsKeyword("MERGE") || first.IsKeyword("DELETE") || first.IsKeyword("UPDATE");
}

Result<DmlStatement> ParseDmlStatement(std::string_view sql) {
  sql = TrimStatement(sql);
  SILT_ASSIGN_OR_RETURN(std::vector<Token> tokens, Tokenize(sql));
  DmlParser parser(sql, std::move(tokens));
  return parser.Parse();
}

}  // namespace silt::expr
