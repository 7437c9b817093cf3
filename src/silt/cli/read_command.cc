// silt read TABLE: prints the rows of a Delta table snapshot (latest or a
// version, for time travel) as JSON lines, CSV or a show()-style table.

#include <fmt/format.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "silt/cli/command.h"
#include "silt/cli/table_util.h"
#include "silt/cli/value_format.h"
#include "silt/delta/table.h"

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

class ReadCommand final : public Command {
 public:
  explicit ReadCommand(CLI::App* app) {
    sub_ = app->add_subcommand("read", "Print the rows of a Delta table");
    sub_->add_option("table", table_path_, "Table path")->required();
    sub_->add_option("--version", version_, "Read the table as of this version (time travel)")
        ->check(CLI::NonNegativeNumber);
    sub_->add_option("--format", format_, "Output format")
        ->check(CLI::IsMember({"jsonl", "csv", "table"}))
        ->capture_default_str();
    sub_->add_option("--limit", limit_,
                     "At most this many rows (default: 20 for table, all for jsonl/csv)")
        ->check(CLI::NonNegativeNumber);
    sub_->add_option("--columns", columns_, "Comma-separated columns to print (default: all)");
  }

  CLI::App* subcommand() const override { return sub_; }

  Status Run() override {
    SILT_ASSIGN_OR_RETURN(auto table, OpenExistingTable(table_path_));
    SILT_ASSIGN_OR_RETURN(delta::SnapshotPtr snapshot, SnapshotOrLatest(table.get(), version_));
    std::vector<std::string> columns = SplitColumns(columns_);
    for (const std::string& name : columns) {
      if (snapshot->schema()->FieldIndex(name) < 0) {
        return Status::InvalidArgument("--columns: no column '", name, "' in table '", table_path_,
                                       "' (columns: ", ColumnList(*snapshot->schema()), ")");
      }
    }
    SILT_ASSIGN_OR_RETURN(
        auto scan, delta::TableScan::Make(table->file_system(), table->path(), snapshot, columns));
    int64_t limit = limit_;
    if (limit < 0) limit = format_ == "table" ? kDefaultTableRows : INT64_MAX;

    if (format_ == "table") return PrintTable(scan.get(), limit);
    if (format_ == "csv") fmt::print("{}\n", CsvHeader(*scan->schema()));
    int64_t printed = 0;
    std::string out;
    while (printed < limit) {
      SILT_ASSIGN_OR_RETURN(columnar::RecordBatchPtr batch, scan->Next());
      if (batch == nullptr) break;
      out.clear();
      for (int64_t row_idx = 0; row_idx < batch->num_rows && printed < limit; ++row_idx) {
        out += format_ == "csv" ? RowToCsv(*batch, row_idx) : RowToJson(*batch, row_idx);
        out += '\n';
        ++printed;
      }
      std::fwrite(out.data(), 1, out.size(), stdout);
    }
    return Status::OK();
  }

 private:
  static std::string ColumnList(const columnar::Schema& schema) {
    std::string out;
    for (int col_idx = 0; col_idx < schema.num_fields(); ++col_idx) {
      if (col_idx > 0) out += ", ";
      out += schema.field(col_idx).name;
    }
    return out;
  }

  Status PrintTable(delta::TableScan* scan, int64_t limit) {
    std::vector<std::string> header;
    for (const auto& field : scan->schema()->fields()) header.push_back(field.name);
    TablePrinter printer(std::move(header));
    bool has_more = false;
    while (!has_more) {
      SILT_ASSIGN_OR_RETURN(columnar::RecordBatchPtr batch, scan->Next());
      if (batch == nullptr) break;
      for (int64_t row_idx = 0; row_idx < batch->num_rows; ++row_idx) {
        if (printer.num_rows() >= limit) {
          has_more = true;
          break;
        }
        printer.AddRow(*batch, row_idx);
      }
    }
    fmt::print("{}", printer.Render(has_more));
    return Status::OK();
  }

  CLI::App* sub_ = nullptr;
  std::string table_path_;
  int64_t version_ = -1;
  std::string format_ = "table";
  int64_t limit_ = -1;
  std::string columns_;
};

}  // namespace

std::unique_ptr<Command> AddReadCommand(CLI::App* app) {
  return std::make_unique<ReadCommand>(app);
}

}  // namespace silt::cli
