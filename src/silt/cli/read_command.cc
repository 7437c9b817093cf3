// silt read TABLE: prints the rows of a Delta table snapshot (latest, a
// version or a timestamp, for time travel), optionally projected
// (--select/--columns), filtered (--where) and limited, as a show()-style
// table, CSV, JSON lines or a Parquet file. The scan skips files by
// partition values and statistics and Parquet row groups by their
// statistics; --explain reports what was skipped, --count counts rows
// (from the log's statistics when it can). --changes prints the change data
// feed of a version range instead (delta/change_feed.h).

#include <fmt/format.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "silt/cli/command.h"
#include "silt/cli/result_output.h"
#include "silt/cli/table_util.h"
#include "silt/delta/change_feed.h"
#include "silt/delta/table.h"
#include "silt/expr/parse/parser.h"
#include "silt/expr/parse/select_statement.h"
#include "silt/query/predicate_extractor.h"
#include "silt/query/query.h"

namespace silt::cli {

namespace {

constexpr int64_t kDefaultTableRows = 20;

std::vector<std::string> SplitColumns(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    std::string name = list.substr(start, end - start);
    size_t first = name.find_first_not_of(" \t");
    size_t last = name.find_last_not_of(" \t");
    if (first != std::string::npos) out.push_back(name.substr(first, last - first + 1));
    start = end + 1;
  }
  return out;
}

std::string ColumnList(const columnar::Schema& schema) {
  std::string out;
  for (int col_idx = 0; col_idx < schema.num_fields(); ++col_idx) {
    if (col_idx > 0) out += ", ";
    out += schema.field(col_idx).name;
  }
  return out;
}

}  // namespace

// The snapshot for --version / --timestamp (shared with `silt sql`).
Result<delta::SnapshotPtr> TimeTravelSnapshot(delta::DeltaTable* table, int64_t version,
                                              const std::string& timestamp) {
  if (!timestamp.empty()) {
    if (version >= 0) {
      return Status::InvalidArgument("give either a version or a timestamp, not both");
    }
    SILT_ASSIGN_OR_RETURN(int64_t ms, query::ParseTimeTravelTimestamp(timestamp));
    return table->SnapshotAtTimestamp(ms);
  }
  return SnapshotOrLatest(table, version);
}

// The --explain report (shared with `silt sql`).
std::string ExplainText(const std::string& table_path, const delta::Snapshot& snapshot,
                        const query::QueryStats& stats) {
  std::string out = fmt::format("table: {} (version {})\n", table_path, snapshot.version());
  std::string pushed;
  for (const columnar::ColumnPredicate& p : stats.pushed) {
    if (!pushed.empty()) pushed += " AND ";
    pushed += query::DescribePredicate(p);
  }
  out += fmt::format("pushed filters: {}\n", pushed.empty() ? "none" : pushed);
  const delta::ScanMetrics& m = stats.scan;
  out += fmt::format("files: {} total, {} skipped by partition, {} skipped by stats, {} read\n",
                     m.files_total, m.files_skipped_by_partition, m.files_skipped_by_stats,
                     m.files_total - m.files_skipped_by_partition - m.files_skipped_by_stats);
  out += fmt::format("row groups: {} in files read, {} skipped by stats\n", m.row_groups_total,
                     m.row_groups_skipped);
  out += fmt::format("rows: {} scanned, {} matched the filter, {} output\n", stats.rows_scanned,
                     stats.rows_matched, stats.rows_output);
  return out;
}

namespace {

class ReadCommand final : public Command {
 public:
  explicit ReadCommand(CLI::App* app) {
    sub_ = app->add_subcommand("read", "Print the rows of a Delta table");
    sub_->add_option("table", table_path_, "Table path")->required();
    sub_->add_option("--version", version_, "Read the table as of this version (time travel)")
        ->check(CLI::NonNegativeNumber);
    sub_->add_option("--timestamp", timestamp_,
                     "Read the table as of this time: YYYY-MM-DD[ HH:MM:SS[.ffffff]] (UTC)");
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
    sub_->add_option("--limit", limit_,
                     "At most this many rows (default: 20 for table, all for jsonl/csv)")
        ->check(CLI::NonNegativeNumber);
    sub_->add_option("--columns", columns_, "Comma-separated columns to print (default: all)");
    sub_->add_option("--select", select_,
                     "Comma-separated Spark SQL expressions to print, with optional aliases");
    sub_->add_option("--where", where_, "Spark SQL filter; also prunes files and row groups");
    sub_->add_flag("--explain", explain_,
                   "Run the scan and print what was skipped instead of the rows");
    sub_->add_flag("--count", count_,
                   "Print the number of (matching) rows; from the log's statistics when possible");
    sub_->add_flag("--changes", changes_,
                   "Print the change data feed (as Spark's readChangeFeed) of the versions "
                   "--starting-version to --ending-version");
    sub_->add_option("--starting-version", starting_version_,
                     "With --changes: the first version (required)")
        ->check(CLI::NonNegativeNumber);
    sub_->add_option("--ending-version", ending_version_,
                     "With --changes: the last version (default: the latest)")
        ->check(CLI::NonNegativeNumber);
  }

  CLI::App* subcommand() const override { return sub_; }

  Status Run() override {
    SILT_ASSIGN_OR_RETURN(auto table, OpenExistingTable(table_path_));
    if (changes_) return Changes(table.get());
    if (starting_version_ >= 0 || ending_version_ >= 0) {
      return Status::InvalidArgument("--starting-version and --ending-version need --changes");
    }
    SILT_ASSIGN_OR_RETURN(delta::SnapshotPtr snapshot,
                          TimeTravelSnapshot(table.get(), version_, timestamp_));
    query::QuerySpec spec;
    if (!columns_.empty() && !select_.empty()) {
      return Status::InvalidArgument("give either --columns or --select, not both");
    }
    for (const std::string& name : SplitColumns(columns_)) {
      if (snapshot->schema()->FieldIndex(name) < 0) {
        return Status::InvalidArgument("--columns: no column '", name, "' in table '", table_path_,
                                       "' (columns: ", ColumnList(*snapshot->schema()), ")");
      }
      spec.select.push_back(
          std::make_shared<expr::ColumnRefNode>(std::vector<std::string>{name}, 0));
    }
    if (!select_.empty()) {
      SILT_ASSIGN_OR_RETURN_CTX(spec.select, expr::ParseExpressionList(select_), "--select");
    }
    if (!where_.empty()) {
      SILT_ASSIGN_OR_RETURN_CTX(spec.where, expr::ParseNode(where_), "--where");
    }
    if (count_) return Count(table.get(), snapshot, std::move(spec));

    int64_t table_rows = INT64_MAX;
    if (format_ == "table") {
      table_rows = limit_ >= 0 ? limit_ : kDefaultTableRows;
      spec.limit = table_rows + 1;  // one more tells show() there are more
    } else {
      spec.limit = limit_;
    }
    if (explain_) {
      query::QueryOutput discard{[](const columnar::SchemaPtr&) { return Status::OK(); },
                                 [](const columnar::RecordBatch&) { return Status::OK(); }};
      spec.limit = limit_;
      SILT_ASSIGN_OR_RETURN(query::QueryStats stats,
                            query::RunQuery(*table, snapshot, spec, discard));
      fmt::print("{}", ExplainText(table_path_, *snapshot, stats));
      return Status::OK();
    }
    SILT_ASSIGN_OR_RETURN(auto writer,
                          ResultWriter::Make(format_, output_, table_rows, value_style()));
    query::QueryOutput out = writer->AsQueryOutput();
    SILT_RETURN_NOT_OK(query::RunQuery(*table, snapshot, spec, out).status());
    return writer->Finish();
  }

 private:
  Status Changes(delta::DeltaTable* table) {
    if (starting_version_ < 0) return Status::InvalidArgument("--changes needs --starting-version");
    if (version_ >= 0 || !timestamp_.empty() || !columns_.empty() || !select_.empty() ||
        !where_.empty() || explain_ || count_) {
      return Status::InvalidArgument(
          "--changes takes only --starting-version, --ending-version, --format, --output and "
          "--limit");
    }
    delta::ChangeFeedOptions options;
    options.starting_version = starting_version_;
    if (ending_version_ >= 0) options.ending_version = ending_version_;
    SILT_ASSIGN_OR_RETURN(auto reader, delta::ChangeFeedReader::Make(table, options));
    const int64_t table_rows =
        format_ == "table" ? (limit_ >= 0 ? limit_ : kDefaultTableRows) : INT64_MAX;
    // One row more than a table shows tells it there are more.
    int64_t left = format_ == "table" ? table_rows + 1 : (limit_ >= 0 ? limit_ : INT64_MAX);
    SILT_ASSIGN_OR_RETURN(auto writer,
                          ResultWriter::Make(format_, output_, table_rows, value_style()));
    SILT_RETURN_NOT_OK(writer->Begin(reader->schema()));
    while (left > 0) {
      SILT_ASSIGN_OR_RETURN(columnar::RecordBatchPtr batch, reader->Next());
      if (batch == nullptr) break;
      if (batch->num_rows > left) batch = columnar::SliceBatch(*batch, 0, left);
      left -= batch->num_rows;
      SILT_RETURN_NOT_OK(writer->Write(*batch));
    }
    return writer->Finish();
  }

  Status Count(delta::DeltaTable* table, const delta::SnapshotPtr& snapshot,
               query::QuerySpec spec) {
    SILT_ASSIGN_OR_RETURN(std::optional<int64_t> from_stats,
                          query::CountFromStats(snapshot, spec.where));
    if (from_stats) {
      fmt::print("{}\n", *from_stats);
      if (explain_) fmt::print("(answered from the Delta log statistics; no file was read)\n");
      return Status::OK();
    }
    SILT_ASSIGN_OR_RETURN(spec.select, expr::ParseExpressionList("count(*)"));
    int64_t count = 0;
    query::QueryOutput out{[](const columnar::SchemaPtr&) { return Status::OK(); },
                           [&count](const columnar::RecordBatch& batch) {
                             if (batch.num_rows > 0) count = batch.column(0)->Value<int64_t>(0);
                             return Status::OK();
                           }};
    SILT_ASSIGN_OR_RETURN(query::QueryStats stats, query::RunQuery(*table, snapshot, spec, out));
    fmt::print("{}\n", count);
    if (explain_) fmt::print("{}", ExplainText(table_path_, *snapshot, stats));
    return Status::OK();
  }

  CLI::App* sub_ = nullptr;
  std::string table_path_;
  int64_t version_ = -1;
  std::string timestamp_;
  std::string format_ = "table";
  std::string values_ = "exact";
  ValueStyle value_style() const {
    return values_ == "spark" ? ValueStyle::kSpark : ValueStyle::kExact;
  }
  std::string output_;
  int64_t limit_ = -1;
  std::string columns_;
  std::string select_;
  std::string where_;
  bool explain_ = false;
  bool count_ = false;
  bool changes_ = false;
  int64_t starting_version_ = -1;
  int64_t ending_version_ = -1;
};

}  // namespace

std::unique_ptr<Command> AddReadCommand(CLI::App* app) {
  return std::make_unique<ReadCommand>(app);
}

}  // namespace silt::cli
