// silt sql "SELECT ... FROM delta.`PATH` ...": one SELECT statement over one
// Delta table snapshot (expr/parse/select_statement.h for the grammar), printed in the
// formats of `silt read`.

#include <fmt/format.h>

#include "silt/cli/command.h"
#include "silt/cli/result_output.h"
#include "silt/cli/table_util.h"
#include "silt/expr/parse/select_statement.h"
#include "silt/query/query.h"

namespace silt::cli {

Result<delta::SnapshotPtr> TimeTravelSnapshot(delta::DeltaTable* table, int64_t version,
                                              const std::string& timestamp);
std::string ExplainText(const std::string& table_path, const delta::Snapshot& snapshot,
                        const query::QueryStats& stats);

namespace {

class SqlCommand final : public Command {
 public:
  explicit SqlCommand(CLI::App* app) {
    sub_ = app->add_subcommand("sql", "Run a SELECT statement over a Delta table");
    sub_->add_option("statement", statement_,
                     "SELECT ... FROM delta.`PATH` [VERSION AS OF n | TIMESTAMP AS OF 'ts'] "
                     "[WHERE ...] [GROUP BY ...] [HAVING ...] [ORDER BY ...] [LIMIT n]")
        ->required();
    sub_->add_option("--format", format_, "Output format")
        ->check(CLI::IsMember({"jsonl", "csv", "table", "parquet"}))
        ->capture_default_str();
    sub_->add_option("--output", output_, "Write to this file instead of stdout");
    sub_->add_flag("--explain", explain_,
                   "Run the query and print what the scan skipped instead of the rows");
  }

  CLI::App* subcommand() const override { return sub_; }

  Status Run() override {
    SILT_ASSIGN_OR_RETURN(expr::SelectStatement statement, expr::ParseSelectStatement(statement_));
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
    SILT_ASSIGN_OR_RETURN(auto writer, ResultWriter::Make(format_, output_));
    query::QueryOutput out = writer->AsQueryOutput();
    SILT_RETURN_NOT_OK(query::RunQuery(*table, snapshot, spec, out).status());
    return writer->Finish();
  }

 private:
  CLI::App* sub_ = nullptr;
  std::string statement_;
  std::string format_ = "table";
  std::string output_;
  bool explain_ = false;
};

}  // namespace

std::unique_ptr<Command> AddSqlCommand(CLI::App* app) { return std::make_unique<SqlCommand>(app); }

}  // namespace silt::cli
