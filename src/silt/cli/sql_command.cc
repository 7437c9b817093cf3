// silt sql "SELECT ... FROM delta.`PATH` ...": one SELECT statement over one
// Delta table snapshot (expr/parse/select_statement.h for the grammar), printed in the
// formats of `silt read`. MERGE INTO / DELETE FROM / UPDATE on a Delta table
// (expr/parse/dml_statement.h, dml/dml.h) print the row counts Spark's SQL
// returns for them, as one row in the same formats. ALTER TABLE delta.`PATH`
// DROP FEATURE (delta/drop_feature.h), RENAME COLUMN and DROP COLUMN[S]
// (delta/column_mapping.h) and ADD CONSTRAINT / DROP CONSTRAINT
// (dml/constraint_ddl.h) print nothing, as Spark returns no rows.

#include <fmt/format.h>

#include <cctype>
#include <cstdint>

#include "silt/base/strings.h"
#include "silt/cli/command.h"
#include "silt/cli/result_output.h"
#include "silt/cli/table_util.h"
#include "silt/columnar/builder.h"
#include "silt/delta/column_mapping.h"
#include "silt/delta/drop_feature.h"
#include "silt/dml/constraint_ddl.h"
#include "silt/dml/dml.h"
#include "silt/dml/source.h"
#include "silt/expr/parse/dml_statement.h"
#include "silt/expr/parse/lexer.h"
#include "silt/expr/parse/select_statement.h"
#include "silt/query/query.h"

namespace silt::cli {

Result<delta::SnapshotPtr> TimeTravelSnapshot(delta::DeltaTable* table, int64_t version,
                                              const std::string& timestamp);
std::string ExplainText(const std::string& table_path, const delta::Snapshot& snapshot,
                        const query::QueryStats& stats);

namespace {

struct AlterTableDropFeature {
  std::string path;
  std::string feature;
  bool truncate_history = false;
};

// ALTER TABLE delta.`PATH` RENAME COLUMN a[.b] TO c, or DROP COLUMN[S]
// a[.b][, ...] (with or without parentheses).
struct AlterTableColumns {
  std::string path;
  bool rename = false;
  std::vector<std::vector<std::string>> columns;
  std::string new_name;
};

// ALTER TABLE delta.`PATH` ADD CONSTRAINT name CHECK (expr) / DROP
// CONSTRAINT [IF EXISTS] name.
struct AlterTableConstraint {
  std::string path;
  bool add = false;
  std::string name;
  std::string expression;  // ADD: the text inside CHECK's parentheses
  bool if_exists = false;
};

// Splits `text` into words: runs of non-space characters, where a
// backtick-, single- or double-quoted part is one word (its quotes kept,
// doubled quotes inside).
std::vector<std::string> Words(std::string_view text) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < text.size()) {
    if (std::isspace(static_cast<unsigned char>(text[i])) || text[i] == ';') {
      ++i;
      continue;
    }
    std::string word;
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i])) &&
           text[i] != ';') {
      const char c = text[i];
      if (c == '`' || c == '\'' || c == '"') {
        word += c;
        ++i;
        while (i < text.size()) {
          if (text[i] == c && i + 1 < text.size() && text[i + 1] == c) {
            word += c;
            word += c;
            i += 2;
            continue;
          }
          word += text[i];
          if (text[i++] == c) break;
        }
        continue;
      }
      word += c;
      ++i;
    }
    out.push_back(std::move(word));
  }
  return out;
}

bool IsAlterTable(std::string_view text) {
  std::vector<std::string> words = Words(text.substr(0, 64));
  return words.size() >= 2 && EqualsIgnoreCase(words[0], "ALTER") &&
         EqualsIgnoreCase(words[1], "TABLE");
}

// A quoted word without its quotes (doubled quotes made single); a bare
// word as it is.
std::string Unquote(std::string_view word) {
  if (word.size() < 2 || (word[0] != '`' && word[0] != '\'' && word[0] != '"') ||
      word.back() != word[0]) {
    return std::string(word);
  }
  std::string out;
  for (size_t i = 1; i + 1 < word.size(); ++i) {
    out += word[i];
    if (word[i] == word[0] && i + 2 < word.size() && word[i + 1] == word[0]) ++i;
  }
  return out;
}

// A column path as written: names separated by dots outside backticks.
Result<std::vector<std::string>> ColumnPath(std::string_view text) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '`') {
      if (quoted && i + 1 < text.size() && text[i + 1] == '`') {
        out.back() += '`';
        ++i;
      } else {
        quoted = !quoted;
      }
    } else if (c == '.' && !quoted) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  for (const std::string& part : out) {
    if (part.empty() || quoted) {
      return Status::InvalidArgument("not a column name: ", text);
    }
  }
  return out;
}

// The column paths a CHECK constraint or generation expression may read,
// for ALTER TABLE RENAME/DROP COLUMN (delta::ExpressionColumns): every
// chain of identifiers `a.b.c` that is not a function name. Keywords come
// along too; they only matter to a column that has a keyword's name, and
// then the ALTER is refused rather than leaving an expression behind.
Result<std::vector<std::vector<std::string>>> ExpressionColumnPaths(const std::string& text) {
  SILT_ASSIGN_OR_RETURN(std::vector<expr::Token> tokens, expr::Tokenize(text));
  std::vector<std::vector<std::string>> out;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i].kind != expr::TokenKind::kIdentifier) continue;
    if (i > 0 && tokens[i - 1].kind == expr::TokenKind::kDot) continue;  // a chain's tail
    std::vector<std::string> path{tokens[i].text};
    size_t j = i + 1;
    while (j + 1 < tokens.size() && tokens[j].kind == expr::TokenKind::kDot &&
           tokens[j + 1].kind == expr::TokenKind::kIdentifier) {
      path.push_back(tokens[j + 1].text);
      j += 2;
    }
    if (j < tokens.size() && tokens[j].kind == expr::TokenKind::kLParen) continue;  // a call
    out.push_back(std::move(path));
  }
  return out;
}

bool IsAlterTableColumns(std::string_view text) {
  std::vector<std::string> words = Words(text);
  return words.size() >= 5 &&
         ((EqualsIgnoreCase(words[3], "RENAME") && EqualsIgnoreCase(words[4], "COLUMN")) ||
          (EqualsIgnoreCase(words[3], "DROP") &&
           (EqualsIgnoreCase(words[4], "COLUMN") || EqualsIgnoreCase(words[4], "COLUMNS"))));
}

Result<AlterTableColumns> ParseAlterTableColumns(std::string_view text) {
  const std::vector<std::string> words = Words(text);
  const std::string& target = words[2];
  if (!StartsWithIgnoreCase(target, "delta.`") || target.back() != '`') {
    return Status::InvalidArgument("ALTER TABLE names a Delta table as delta.`PATH`, not ", target);
  }
  AlterTableColumns out;
  out.path = Unquote(std::string_view(target).substr(6));
  out.rename = EqualsIgnoreCase(words[3], "RENAME");
  if (out.rename) {
    if (words.size() != 8 || !EqualsIgnoreCase(words[6], "TO")) {
      return Status::InvalidArgument(
          "silt sql supports ALTER TABLE delta.`PATH` RENAME COLUMN name TO new_name, not: ", text);
    }
    SILT_ASSIGN_OR_RETURN(std::vector<std::string> column, ColumnPath(words[5]));
    out.columns.push_back(std::move(column));
    SILT_ASSIGN_OR_RETURN(std::vector<std::string> new_name, ColumnPath(words[7]));
    if (new_name.size() != 1) {
      return Status::InvalidArgument("RENAME COLUMN ... TO takes a name, not a path: ", words[7]);
    }
    out.new_name = new_name[0];
    return out;
  }
  std::string list;
  for (size_t i = 5; i < words.size(); ++i) list += words[i];
  if (!list.empty() && list.front() == '(' && list.back() == ')') {
    list = list.substr(1, list.size() - 2);
  }
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    SILT_ASSIGN_OR_RETURN(std::vector<std::string> column,
                          ColumnPath(std::string_view(list).substr(start, comma - start)));
    out.columns.push_back(std::move(column));
    start = comma + 1;
  }
  return out;
}

Result<AlterTableDropFeature> ParseAlterTable(std::string_view text) {
  const std::vector<std::string> words = Words(text);
  auto bad = [&]() {
    return Status::InvalidArgument(
        "silt sql supports ALTER TABLE delta.`PATH` DROP FEATURE name [TRUNCATE HISTORY], not: ",
        text);
  };
  if (words.size() != 6 && words.size() != 8) return bad();
  if (!EqualsIgnoreCase(words[3], "DROP") || !EqualsIgnoreCase(words[4], "FEATURE")) return bad();
  if (words.size() == 8 &&
      (!EqualsIgnoreCase(words[6], "TRUNCATE") || !EqualsIgnoreCase(words[7], "HISTORY"))) {
    return bad();
  }
  const std::string& target = words[2];
  if (!StartsWithIgnoreCase(target, "delta.`") || target.back() != '`') {
    return Status::InvalidArgument("ALTER TABLE names a Delta table as delta.`PATH`, not ", target);
  }
  AlterTableDropFeature out;
  out.path = Unquote(std::string_view(target).substr(6));
  out.feature = Unquote(words[5]);
  out.truncate_history = words.size() == 8;
  if (out.path.empty() || out.feature.empty()) return bad();
  return out;
}

// True for ALTER TABLE ... ADD CONSTRAINT / DROP CONSTRAINT.
bool IsConstraintStatement(const std::vector<std::string>& words) {
  return words.size() >= 5 &&
         (EqualsIgnoreCase(words[3], "ADD") || EqualsIgnoreCase(words[3], "DROP")) &&
         EqualsIgnoreCase(words[4], "CONSTRAINT");
}

Result<AlterTableConstraint> ParseAlterConstraint(std::string_view text,
                                                  const std::vector<std::string>& words) {
  auto bad = [&]() {
    return Status::InvalidArgument(
        "silt sql supports ALTER TABLE delta.`PATH` ADD CONSTRAINT name CHECK (expr) and DROP "
        "CONSTRAINT [IF EXISTS] name, not: ",
        text);
  };
  const std::string& target = words[2];
  if (!StartsWithIgnoreCase(target, "delta.`") || target.back() != '`') {
    return Status::InvalidArgument("ALTER TABLE names a Delta table as delta.`PATH`, not ", target);
  }
  AlterTableConstraint out;
  out.path = Unquote(std::string_view(target).substr(6));
  out.add = EqualsIgnoreCase(words[3], "ADD");
  if (!out.add) {
    if (words.size() == 8 && EqualsIgnoreCase(words[5], "IF") &&
        EqualsIgnoreCase(words[6], "EXISTS")) {
      out.if_exists = true;
      out.name = Unquote(words[7]);
    } else if (words.size() == 6) {
      out.name = Unquote(words[5]);
    } else {
      return bad();
    }
    return out;
  }
  if (words.size() < 8 || !StartsWithIgnoreCase(words[6], "CHECK")) return bad();
  out.name = Unquote(words[5]);
  // The expression: the text between CHECK's parentheses.
  size_t open = std::string_view::npos;
  for (size_t i = 0; i + 5 <= text.size(); ++i) {
    if (EqualsIgnoreCase(text.substr(i, 5), "CHECK") && i > 0 &&
        std::isspace(static_cast<unsigned char>(text[i - 1]))) {
      open = text.find('(', i + 5);
      break;
    }
  }
  size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close <= open) {
    return bad();
  }
  for (size_t i = close + 1; i < text.size(); ++i) {
    if (!std::isspace(static_cast<unsigned char>(text[i])) && text[i] != ';') return bad();
  }
  std::string_view inner = text.substr(open + 1, close - open - 1);
  while (!inner.empty() && std::isspace(static_cast<unsigned char>(inner.front()))) {
    inner.remove_prefix(1);
  }
  while (!inner.empty() && std::isspace(static_cast<unsigned char>(inner.back()))) {
    inner.remove_suffix(1);
  }
  out.expression = std::string(inner);
  if (out.name.empty() || out.expression.empty()) return bad();
  return out;
}

class SqlCommand final : public Command {
 public:
  explicit SqlCommand(CLI::App* app) {
    sub_ = app->add_subcommand(
        "sql",
        "Run a SELECT, MERGE INTO, DELETE FROM, UPDATE or ALTER TABLE ... DROP FEATURE "
        "statement on a Delta table");
    sub_->add_option("statement", statement_,
                     "SELECT ... FROM delta.`PATH` [VERSION AS OF n | TIMESTAMP AS OF 'ts'] "
                     "[WHERE ...] [GROUP BY ...] [HAVING ...] [ORDER BY ...] [LIMIT n]; or "
                     "MERGE INTO delta.`PATH` t USING <source> s ON ... WHEN ...; "
                     "DELETE FROM delta.`PATH` [WHERE ...]; UPDATE delta.`PATH` SET ... "
                     "[WHERE ...]; ALTER TABLE delta.`PATH` DROP FEATURE name "
                     "[TRUNCATE HISTORY] | RENAME COLUMN c TO d | DROP COLUMN[S] c[, ...] | "
                     "ADD CONSTRAINT name CHECK (expr) | DROP CONSTRAINT [IF EXISTS] name")
        ->required();
    sub_->add_option("--format", format_, "Output format")
        ->check(CLI::IsMember({"jsonl", "csv", "table", "parquet"}))
        ->capture_default_str();
    sub_->add_option("--output", output_, "Write to this file instead of stdout");
    sub_->add_option("--values", values_,
                     "How jsonl and csv print values: exact (microsecond timestamps, "
                     "shortest round-trip floats, plain decimals) or spark (as Spark's to_json "
                     "and CSV writer: millisecond timestamps, Java's number forms)")
        ->check(CLI::IsMember({"exact", "spark"}))
        ->capture_default_str();
    sub_->add_flag("--explain", explain_,
                   "Run the query and print what the scan skipped instead of the rows");
  }

  CLI::App* subcommand() const override { return sub_; }

  Status Run() override {
    if (IsAlterTable(statement_)) return RunAlterTable();
    if (expr::IsDmlStatement(statement_)) return RunDml();
    SILT_ASSIGN_OR_RETURN(expr::SelectStatement statement, expr::ParseSelectStatement(statement_));
    if (statement.table_format != "delta") {
      return Status::NotSupported("silt sql reads Delta tables (delta.`PATH`), not ",
                                  statement.table_format, ".`", statement.table_path, "`");
    }
    SILT_ASSIGN_OR_RETURN(auto table, OpenExistingTable(statement.table_path));
    SILT_ASSIGN_OR_RETURN(delta::SnapshotPtr snapshot,
                          TimeTravelSnapshot(table.get(), statement.version.value_or(-1),
                                             statement.timestamp.value_or("")));
    query::QuerySpec spec;
    spec.select = std::move(statement.select);
    spec.where = std::move(statement.where);
    spec.group_by = std::move(statement.group_by);
    spec.having = std::move(statement.having);
    spec.order_by = std::move(statement.order_by);
    spec.limit = statement.limit.value_or(-1);
    if (explain_) {
      query::QueryOutput discard{[](const columnar::SchemaPtr&) { return Status::OK(); },
                                 [](const columnar::RecordBatch&) { return Status::OK(); }};
      SILT_ASSIGN_OR_RETURN(query::QueryStats stats,
                            query::RunQuery(*table, snapshot, spec, discard));
      fmt::print("{}", ExplainText(statement.table_path, *snapshot, stats));
      return Status::OK();
    }
    SILT_ASSIGN_OR_RETURN(auto writer,
                          ResultWriter::Make(format_, output_, INT64_MAX, value_style()));
    query::QueryOutput out = writer->AsQueryOutput();
    SILT_RETURN_NOT_OK(query::RunQuery(*table, snapshot, spec, out).status());
    return writer->Finish();
  }

 private:
  // MERGE / DELETE / UPDATE: runs the operation and prints Spark's result
  // row.
  Status RunDml() {
    if (explain_) return Status::InvalidArgument("--explain applies to SELECT statements only");
    SILT_ASSIGN_OR_RETURN(expr::DmlStatement statement, expr::ParseDmlStatement(statement_));
    dml::DmlResult result;
    bool is_merge = false;
    if (auto* merge = std::get_if<expr::MergeStatement>(&statement)) {
      is_merge = true;
      SILT_ASSIGN_OR_RETURN(auto table, OpenExistingTable(merge->target.path));
      SILT_ASSIGN_OR_RETURN(auto source, dml::OpenStatementSource(merge->source));
      dml::MergeSpec spec;
      spec.target_alias = merge->target.alias;
      spec.source_alias = merge->source.alias;
      spec.on = merge->on;
      spec.clauses = merge->clauses;
      SILT_ASSIGN_OR_RETURN(result, dml::Merge(table.get(), source.get(), spec));
    } else if (auto* del = std::get_if<expr::DeleteStatement>(&statement)) {
      SILT_ASSIGN_OR_RETURN(auto table, OpenExistingTable(del->target.path));
      dml::DmlOptions options;
      options.target_alias = del->target.alias;
      SILT_ASSIGN_OR_RETURN(result, dml::Delete(table.get(), del->where, options));
    } else {
      auto& update = std::get<expr::UpdateStatement>(statement);
      SILT_ASSIGN_OR_RETURN(auto table, OpenExistingTable(update.target.path));
      dml::DmlOptions options;
      options.target_alias = update.target.alias;
      SILT_ASSIGN_OR_RETURN(result, dml::Update(table.get(), update.set, update.where, options));
    }
    std::vector<std::pair<std::string, int64_t>> values = {
        {"num_affected_rows", result.num_affected_rows}};
    if (is_merge) {
      values.emplace_back("num_updated_rows", result.num_updated_rows);
      values.emplace_back("num_deleted_rows", result.num_deleted_rows);
      values.emplace_back("num_inserted_rows", result.num_inserted_rows);
    }
    std::vector<columnar::Field> fields;
    auto batch = std::make_shared<columnar::RecordBatch>();
    batch->num_rows = 1;
    for (const auto& [name, value] : values) {
      fields.push_back({name, columnar::DataType::Long(), true});
      columnar::ColumnBuilder builder(columnar::DataType::Long());
      builder.Append<int64_t>(value);
      batch->columns.push_back(builder.Finish());
    }
    batch->schema = columnar::DataType::Struct(std::move(fields));
    SILT_ASSIGN_OR_RETURN(auto writer,
                          ResultWriter::Make(format_, output_, INT64_MAX, value_style()));
    SILT_RETURN_NOT_OK(writer->Begin(batch->schema));
    SILT_RETURN_NOT_OK(writer->Write(*batch));
    return writer->Finish();
  }

  // ALTER TABLE delta.`PATH` DROP FEATURE / RENAME COLUMN / DROP COLUMN[S] /
  // ADD CONSTRAINT / DROP CONSTRAINT: prints
  // nothing, as Spark returns no rows.
  Status RunAlterTable() {
    if (explain_) return Status::InvalidArgument("--explain applies to SELECT statements only");
    if (IsAlterTableColumns(statement_)) {
      SILT_ASSIGN_OR_RETURN(AlterTableColumns statement, ParseAlterTableColumns(statement_));
      SILT_ASSIGN_OR_RETURN(auto table, OpenExistingTable(statement.path));
      if (statement.rename) {
        return delta::RenameColumn(table.get(), statement.columns[0], statement.new_name,
                                   ExpressionColumnPaths)
            .status();
      }
      return delta::DropColumns(table.get(), statement.columns, ExpressionColumnPaths).status();
    }
    const std::vector<std::string> words = Words(statement_);
    if (IsConstraintStatement(words)) {
      SILT_ASSIGN_OR_RETURN(AlterTableConstraint statement,
                            ParseAlterConstraint(statement_, words));
      SILT_ASSIGN_OR_RETURN(auto table, OpenExistingTable(statement.path));
      if (statement.add) {
        return dml::AddCheckConstraint(table.get(), statement.name, statement.expression);
      }
      return dml::DropCheckConstraint(table.get(), statement.name, statement.if_exists);
    }
    SILT_ASSIGN_OR_RETURN(AlterTableDropFeature statement, ParseAlterTable(statement_));
    SILT_ASSIGN_OR_RETURN(auto table, OpenExistingTable(statement.path));
    delta::DropFeatureOptions options;
    options.truncate_history = statement.truncate_history;
    return delta::DropFeature(table.get(), statement.feature, options).status();
  }

  CLI::App* sub_ = nullptr;
  std::string statement_;
  std::string format_ = "table";
  std::string values_ = "exact";
  ValueStyle value_style() const {
    return values_ == "spark" ? ValueStyle::kSpark : ValueStyle::kExact;
  }
  std::string output_;
  bool explain_ = false;
};

}  // namespace

std::unique_ptr<Command> AddSqlCommand(CLI::App* app) { return std::make_unique<SqlCommand>(app); }

}  // namespace silt::cli
