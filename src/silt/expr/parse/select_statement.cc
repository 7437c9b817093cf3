// The statement is tokenized once with the expr lexer; clause keywords at
// parenthesis depth 0 split it into segments, and each expression segment is
// handed to the expr parser as text.

#include "silt/expr/parse/select_statement.h"

#include <charconv>

#include "silt/expr/parse/lexer.h"
#include "silt/expr/parse/parser.h"

namespace silt::expr {

namespace {

using Clause = SelectClause;

const char* ClauseName(Clause c) {
  switch (c) {
    case Clause::kSelect: return "SELECT";
    case Clause::kFrom: return "FROM";
    case Clause::kWhere: return "WHERE";
    case Clause::kGroupBy: return "GROUP BY";
    case Clause::kHaving: return "HAVING";
    case Clause::kOrderBy: return "ORDER BY";
    case Clause::kLimit: return "LIMIT";
  }
  return "";
}

struct Segment {
  Clause clause;
  size_t keyword;  // token index of the clause keyword
  size_t begin;    // first token of the clause body
  size_t end;      // one past the last token
};

class StatementParser {
 public:
  StatementParser(std::string_view sql, std::vector<Token> tokens, std::string_view user)
      : sql_(sql), tokens_(std::move(tokens)), user_(user) {}
  void AllowJoinsInFrom() { joins_in_from_ = true; }

  Result<SelectClauses> Clauses() {
    SILT_ASSIGN_OR_RETURN(std::vector<Segment> segments, Split());
    SelectClauses out;
    for (const Segment& seg : segments) {
      out.clauses.push_back(SelectClauseSpan{seg.clause, Offset(seg.keyword),
                                             TextSpan{Offset(seg.begin), Offset(seg.end)}});
      if (seg.clause != Clause::kSelect) continue;
      for (auto [b, e] : SplitCommas(seg.begin, seg.end)) {
        // An item's span reaches the comma (or the next keyword) after it.
        out.select_items.push_back(
            TextSpan{b == seg.begin ? Offset(seg.keyword) + 6 : Offset(b - 1) + 1, Offset(e)});
      }
    }
    return out;
  }

  Result<SelectStatement> Parse() {
    SILT_ASSIGN_OR_RETURN(std::vector<Segment> segments, Split());
    if (segments.size() < 2 || segments[1].clause != Clause::kFrom) {
      return SyntaxError("Expected FROM delta.`path`", tokens_.back().position, sql_);
    }
    SelectStatement out;
    for (const Segment& seg : segments) {
      if (seg.begin >= seg.end) {
        return SyntaxError(std::string("Expected an expression after ") + ClauseName(seg.clause),
                           tokens_[seg.end].position, sql_);
      }
      switch (seg.clause) {
        case Clause::kSelect: {
          if (tokens_[seg.begin].IsKeyword("DISTINCT")) {
            return Status::NotSupported(
                "SELECT DISTINCT is not supported by silt sql yet (use "
                "GROUP BY), in '",
                sql_, "'");
          }
          SILT_ASSIGN_OR_RETURN(out.select, ParseList(seg.begin, seg.end));
          break;
        }
        case Clause::kFrom: SILT_RETURN_NOT_OK(ParseFrom(seg, &out)); break;
        case Clause::kWhere: {
          SILT_ASSIGN_OR_RETURN(out.where, ParseExpr(seg.begin, seg.end));
          break;
        }
        case Clause::kGroupBy: {
          SILT_ASSIGN_OR_RETURN(out.group_by, ParseList(seg.begin, seg.end));
          break;
        }
        case Clause::kHaving: {
          SILT_ASSIGN_OR_RETURN(out.having, ParseExpr(seg.begin, seg.end));
          break;
        }
        case Clause::kOrderBy: SILT_RETURN_NOT_OK(ParseOrderBy(seg, &out)); break;
        case Clause::kLimit: {
          const Token& t = tokens_[seg.begin];
          int64_t n = -1;
          if (seg.end != seg.begin + 1 || t.kind != TokenKind::kNumber ||
              std::from_chars(t.text.data(), t.text.data() + t.text.size(), n).ptr !=
                  t.text.data() + t.text.size()) {
            return SyntaxError("LIMIT takes a non-negative integer", t.position, sql_);
          }
          out.limit = n;
          break;
        }
      }
    }
    return out;
  }

 private:
  // Splits the tokens into clauses, checking their order.
  Result<std::vector<Segment>> Split() {
    std::vector<Segment> segments;
    if (!tokens_[0].IsKeyword("SELECT")) {
      return SyntaxError("Expected SELECT", tokens_[0].position, sql_);
    }
    int depth = 0;
    const size_t end = tokens_.size() - 1;  // the kEnd token
    for (size_t i = 0; i < end; ++i) {
      const Token& t = tokens_[i];
      if (t.kind == TokenKind::kLParen) ++depth;
      if (t.kind == TokenKind::kRParen) --depth;
      if (depth != 0 || t.kind != TokenKind::kIdentifier || t.quoted) continue;
      std::optional<Clause> clause;
      size_t body = i + 1;
      if (t.IsKeyword("SELECT")) {
        if (i != 0) {
          return Status::NotSupported("subqueries and set operations are not supported by ", user_,
                                      ", at position ", t.position + 1, " in '", sql_, "'");
        }
        clause = Clause::kSelect;
      } else if (t.IsKeyword("FROM")) {
        clause = Clause::kFrom;
      } else if (t.IsKeyword("WHERE")) {
        clause = Clause::kWhere;
      } else if (t.IsKeyword("HAVING")) {
        clause = Clause::kHaving;
      } else if (t.IsKeyword("LIMIT")) {
        clause = Clause::kLimit;
      } else if ((t.IsKeyword("GROUP") || t.IsKeyword("ORDER")) && i + 1 < end &&
                 tokens_[i + 1].IsKeyword("BY")) {
        clause = t.IsKeyword("GROUP") ? Clause::kGroupBy : Clause::kOrderBy;
        body = i + 2;
      } else if (t.IsKeyword("JOIN") && !(joins_in_from_ && !segments.empty() &&
                                          segments.back().clause == Clause::kFrom)) {
        return Status::NotSupported("joins are not supported by ", user_, ", at position ",
                                    t.position + 1, " in '", sql_, "'");
      }
      if (!clause) continue;
      if (!segments.empty()) {
        if (*clause <= segments.back().clause) {
          return SyntaxError(std::string("Unexpected ") + ClauseName(*clause), t.position, sql_);
        }
        segments.back().end = i;
      }
      segments.push_back(Segment{*clause, i, body, end});
      i = body - 1;
    }
    return segments;
  }

  size_t Offset(size_t token) const { return static_cast<size_t>(tokens_[token].position); }

  std::string_view Text(size_t begin, size_t end) const {
    size_t from = static_cast<size_t>(tokens_[begin].position);
    size_t to = static_cast<size_t>(tokens_[end].position);
    return sql_.substr(from, to - from);
  }

  Result<NodePtr> ParseExpr(size_t begin, size_t end) { return ParseNode(Text(begin, end)); }

  // Comma-separated expressions (commas inside parentheses belong to them).
  Result<std::vector<NodePtr>> ParseList(size_t begin, size_t end) {
    std::vector<NodePtr> out;
    for (auto [b, e] : SplitCommas(begin, end)) {
      if (b >= e) return SyntaxError("Expected an expression", tokens_[e].position, sql_);
      SILT_ASSIGN_OR_RETURN(NodePtr node, ParseExpr(b, e));
      out.push_back(std::move(node));
    }
    return out;
  }

  std::vector<std::pair<size_t, size_t>> SplitCommas(size_t begin, size_t end) const {
    return SplitTopLevelCommas(tokens_, begin, end);
  }

  Status ParseFrom(const Segment& seg, SelectStatement* out) {
    size_t i = seg.begin;
    const Token* t = &tokens_[i];
    if (t->kind == TokenKind::kIdentifier && !t->quoted &&
        (t->IsKeyword("DELTA") || t->IsKeyword("PARQUET") || t->IsKeyword("JSON")) &&
        i + 2 < seg.end + 1 && tokens_[i + 1].kind == TokenKind::kDot) {
      out->table_format = t->IsKeyword("DELTA")  ? "delta"
                          : t->IsKeyword("JSON") ? "json"
                                                 : "parquet";
      i += 2;
      t = &tokens_[i];
      if (t->kind != TokenKind::kIdentifier || !t->quoted) {
        return SyntaxError("Expected a back-quoted table path after delta.", t->position, sql_);
      }
    } else if (!(t->kind == TokenKind::kString ||
                 (t->kind == TokenKind::kIdentifier && t->quoted))) {
      return SyntaxError("Expected delta.`path` (silt sql reads Delta tables by path) but found " +
                             DescribeToken(*t),
                         t->position, sql_);
    }
    out->table_path = t->text;
    ++i;
    auto keyword = [&](size_t at, std::string_view word) {
      return at < seg.end && tokens_[at].IsKeyword(word);
    };
    if ((keyword(i, "VERSION") || keyword(i, "TIMESTAMP")) && keyword(i + 1, "AS") &&
        keyword(i + 2, "OF")) {
      bool is_version = keyword(i, "VERSION");
      const Token& v = tokens_[i + 3];
      if (i + 3 >= seg.end) return SyntaxError("Expected a value", v.position, sql_);
      if (is_version) {
        int64_t n = -1;
        if (v.kind != TokenKind::kNumber ||
            std::from_chars(v.text.data(), v.text.data() + v.text.size(), n).ptr !=
                v.text.data() + v.text.size()) {
          return SyntaxError("VERSION AS OF takes a non-negative integer", v.position, sql_);
        }
        out->version = n;
      } else {
        if (v.kind != TokenKind::kString) {
          return SyntaxError("TIMESTAMP AS OF takes a quoted timestamp", v.position, sql_);
        }
        out->timestamp = v.text;
      }
      i += 4;
    }
    // An optional table alias; columns are still referenced unqualified.
    if (keyword(i, "AS")) ++i;
    if (i < seg.end && tokens_[i].kind == TokenKind::kIdentifier) ++i;
    if (i < seg.end) {
      return SyntaxError("Unexpected " + DescribeToken(tokens_[i]) + " in FROM",
                         tokens_[i].position, sql_);
    }
    return Status::OK();
  }

  Status ParseOrderBy(const Segment& seg, SelectStatement* out) {
    for (auto [b, e] : SplitCommas(seg.begin, seg.end)) {
      OrderItem item;
      bool nulls_given = false;
      if (e >= b + 3 && tokens_[e - 2].IsKeyword("NULLS") &&
          (tokens_[e - 1].IsKeyword("FIRST") || tokens_[e - 1].IsKeyword("LAST"))) {
        item.nulls_first = tokens_[e - 1].IsKeyword("FIRST");
        nulls_given = true;
        e -= 2;
      }
      if (e >= b + 2 && (tokens_[e - 1].IsKeyword("ASC") || tokens_[e - 1].IsKeyword("DESC"))) {
        item.ascending = tokens_[e - 1].IsKeyword("ASC");
        --e;
      }
      if (!nulls_given) item.nulls_first = item.ascending;
      if (b >= e) return SyntaxError("Expected an expression", tokens_[e].position, sql_);
      SILT_ASSIGN_OR_RETURN(item.expr, ParseExpr(b, e));
      out->order_by.push_back(std::move(item));
    }
    return Status::OK();
  }

  std::string_view sql_;
  std::vector<Token> tokens_;
  std::string_view user_;
  bool joins_in_from_ = false;
};

}  // namespace

const SelectClauseSpan* SelectClauses::Find(SelectClause clause) const {
  for (const SelectClauseSpan& span : clauses) {
    if (span.clause == clause) return &span;
  }
  return nullptr;
}

Result<SelectClauses> SplitSelectStatement(std::string_view sql, std::string_view user,
                                           bool joins_in_from) {
  SILT_ASSIGN_OR_RETURN(std::vector<Token> tokens, Tokenize(sql));
  StatementParser parser(sql, std::move(tokens), user);
  if (joins_in_from) parser.AllowJoinsInFrom();
  return parser.Clauses();
}

Result<std::vector<NodePtr>> ParseExpressionList(std::string_view text) {
  SILT_ASSIGN_OR_RETURN(std::vector<Token> tokens, Tokenize(text));
  std::vector<NodePtr> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < tokens.size(); ++i) {
    TokenKind k = tokens[i].kind;
    if (k == TokenKind::kLParen || k == TokenKind::kLBracket) ++depth;
    if (k == TokenKind::kRParen || k == TokenKind::kRBracket) --depth;
    if ((depth == 0 && k == TokenKind::kComma) || k == TokenKind::kEnd) {
      size_t from = static_cast<size_t>(tokens[start].position);
      size_t to = static_cast<size_t>(tokens[i].position);
      SILT_ASSIGN_OR_RETURN(NodePtr node, ParseNode(text.substr(from, to - from)));
      out.push_back(std::move(node));
      start = i + 1;
    }
  }
  return out;
}

Result<SelectStatement> ParseSelectStatement(std::string_view sql) {
  while (!sql.empty() &&
         (sql.back() == ';' || sql.back() == ' ' || sql.back() == '\n' || sql.back() == '\t')) {
    sql.remove_suffix(1);
  }
  SILT_ASSIGN_OR_RETURN(std::vector<Token> tokens, Tokenize(sql));
  StatementParser parser(sql, std::move(tokens), "silt sql");
  return parser.Parse();
}

}  // namespace silt::expr
