// silt demo: the whole pipeline on the built-in sensor job (generator source
// -> the seed's transformation -> partitioned Delta table with a Spark-style
// checkpoint), then reads the table back and shows where to look next.

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "silt/cli/command.h"
#include "silt/cli/demo_job.h"
#include "silt/cli/json_view.h"
#include "silt/cli/query_runner.h"
#include "silt/delta/table.h"
#include "silt/fs/file_system.h"
#include "silt/stream/job.h"

namespace silt::cli {

namespace {

// How a user in the current directory runs this binary again: "silt" when
// that is what PATH finds, else its path relative to the current directory
// (after `make demo` that is build/src/silt/cli/silt).
std::string InvocationForHints() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "silt";
  if (const char* path_env = std::getenv("PATH"); path_env != nullptr) {
    std::string_view dirs(path_env);
    while (!dirs.empty()) {
      size_t colon = dirs.find(':');
      std::filesystem::path candidate = std::filesystem::path(dirs.substr(0, colon)) / "silt";
      if (std::filesystem::equivalent(candidate, self, ec)) return "silt";
      if (colon == std::string_view::npos) break;
      dirs.remove_prefix(colon + 1);
    }
  }
  std::filesystem::path relative = self.lexically_relative(std::filesystem::current_path(ec));
  if (!ec && !relative.empty() && *relative.begin() != "..") return relative.string();
  return self.string();
}

// Rows in the table's latest snapshot, from the files' numRecords stats
// (every file silt writes has them); 0 when there is no table yet.
Result<int64_t> CountTableRows(const fs::FileSystemPtr& file_system, const std::string& path) {
  SILT_ASSIGN_OR_RETURN(auto table, delta::DeltaTable::Open(file_system, path));
  SILT_ASSIGN_OR_RETURN(bool exists, table->Exists());
  if (!exists) return 0;
  SILT_ASSIGN_OR_RETURN(delta::SnapshotPtr snapshot, table->LatestSnapshot());
  int64_t rows = 0;
  for (const delta::AddFile& add : snapshot->files()) {
    std::optional<int64_t> records;
    if (add.stats.has_value()) {
      if (auto stats = JsonObjectView::Parse(*add.stats); stats.has_value()) {
        records = stats->GetInt("numRecords");
      }
    }
    if (!records.has_value()) {
      return Status::Corruption("demo table '", path, "': file ", add.path,
                                " has no numRecords statistic; remove the demo directory to "
                                "start over");
    }
    rows += *records;
  }
  return rows;
}

class DemoCommand final : public Command {
 public:
  explicit DemoCommand(CLI::App* app) {
    sub_ = app->add_subcommand(
        "demo", "Run the built-in sensor pipeline into a local Delta table (no services needed)");
    sub_->add_option("--dir", dir_, "Directory for the demo's table and checkpoint")
        ->capture_default_str();
    sub_->add_option("--batches", batches_, "Micro-batches to run")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    sub_->add_option("--rows-per-batch", rows_per_batch_, "Sensor events per batch")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    sub_->add_flag("--print-job", print_job_,
                   "Print the built-in job file (examples/sensor-demo.yaml) and exit");
    sub_->add_flag("--progress-json", progress_json_,
                   "Print each batch's full progress record as JSON instead of a line");
    sub_->footer(
        "Running the demo again continues its checkpoint with more batches;\n"
        "`rm -rf <dir>` starts over.");
  }

  CLI::App* subcommand() const override { return sub_; }

  Status Run() override {
    if (print_job_) {
      fmt::print("{}", DemoJobYaml());
      return Status::OK();
    }
    std::string shown_dir = dir_;
    while (shown_dir.size() > 1 && shown_dir.back() == '/') shown_dir.pop_back();
    std::string dir = fs::NormalizePath(dir_);
    std::string table_path = fs::JoinPath(dir, "table");
    std::string checkpoint_path = fs::JoinPath(dir, "checkpoint");
    SILT_ASSIGN_OR_RETURN(fs::FileSystemPtr file_system, fs::FileSystemForPath(dir));

    SILT_ASSIGN_OR_RETURN(bool continuing,
                          file_system->Exists(fs::JoinPath(checkpoint_path, "metadata")));
    int64_t previous_rows = 0;
    if (continuing) {
      SILT_ASSIGN_OR_RETURN(previous_rows, CountTableRows(file_system, table_path));
      fmt::print("[silt] continuing the demo in {} ({} rows so far; rm -rf {} to start over)\n",
                 shown_dir, previous_rows, shown_dir);
    }
    // The generator's offsets are record numbers: raising its total by
    // batches x rows-per-batch makes this run add exactly that many batches.
    int64_t total_rows = previous_rows + batches_ * rows_per_batch_;
    setenv("SILT_DEMO_DIR", dir.c_str(), 1);
    setenv("SILT_DEMO_ROWS_PER_BATCH", std::to_string(rows_per_batch_).c_str(), 1);
    setenv("SILT_DEMO_TOTAL_ROWS", std::to_string(total_rows).c_str(), 1);
    SILT_ASSIGN_OR_RETURN(
        stream::JobSpec job,
        stream::ParseJobYaml(DemoJobYaml(), "built-in demo job (examples/sensor-demo.yaml)"));

    fmt::print("[silt] demo: {} batches of {} sensor events -> {}/table\n", batches_,
               rows_per_batch_, shown_dir);
    std::fflush(stdout);
    RunOptions options;
    options.progress_json = progress_json_;
    SILT_ASSIGN_OR_RETURN(stream::QueryResult result, RunJobInForeground(job, options));
    fmt::print("[silt] query {}: {} batches, {} rows written\n\n", result.query_id,
               result.batches_run, result.rows_written);
    SILT_RETURN_NOT_OK(PrintSummary(file_system, table_path, shown_dir));
    return Status::OK();
  }

 private:
  Status PrintSummary(const fs::FileSystemPtr& file_system, const std::string& table_path,
                      const std::string& shown_dir) {
    SILT_ASSIGN_OR_RETURN(auto table, delta::DeltaTable::Open(file_system, table_path));
    SILT_ASSIGN_OR_RETURN(delta::SnapshotPtr snapshot, table->LatestSnapshot());
    SILT_ASSIGN_OR_RETURN(
        auto scan, delta::TableScan::Make(file_system, table_path, snapshot, {"device_type"}));
    std::map<std::string, int64_t> counts;
    int64_t total = 0;
    while (true) {
      SILT_ASSIGN_OR_RETURN(columnar::RecordBatchPtr batch, scan->Next());
      if (batch == nullptr) break;
      const columnar::Column& column = *batch->column(0);
      for (int64_t row_idx = 0; row_idx < batch->num_rows; ++row_idx) {
        ++counts[column.IsNull(row_idx) ? std::string("NULL")
                                        : std::string(column.StringValue(row_idx))];
      }
      total += batch->num_rows;
    }
    std::string out = fmt::format("Table {}/table (version {}): {} rows\n", shown_dir,
                                  snapshot->version(), total);
    size_t width = std::string_view("device_type").size();
    for (const auto& [device_type, count] : counts) width = std::max(width, device_type.size());
    out += fmt::format("  {:<{}}  {:>8}\n", "device_type", width, "rows");
    for (const auto& [device_type, count] : counts) {
      out += fmt::format("  {:<{}}  {:>8}\n", device_type, width, count);
    }
    const std::string silt = InvocationForHints();
    out += "\nLook further:\n";
    out += fmt::format("  {} read {}/table --limit 5\n", silt, shown_dir);
    out += fmt::format("  {} log {}/table\n", silt, shown_dir);
    out += fmt::format("  {} checkpoint {}/checkpoint\n", silt, shown_dir);
    out += fmt::format("Run `{} demo` again to add batches; `rm -rf {}` to start over.\n", silt,
                       shown_dir);
    std::fwrite(out.data(), 1, out.size(), stdout);
    return Status::OK();
  }

  CLI::App* sub_ = nullptr;
  std::string dir_ = "silt-demo";
  int64_t batches_ = 10;
  int64_t rows_per_batch_ = 1000;
  bool print_job_ = false;
  bool progress_json_ = false;
};

}  // namespace

std::unique_ptr<Command> AddDemoCommand(CLI::App* app) {
  return std::make_unique<DemoCommand>(app);
}

}  // namespace silt::cli
