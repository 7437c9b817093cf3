// silt optimize TABLE: compacts small files (delta/optimize.h), optionally
// only in the partitions a predicate selects and with Z-ordering.

#include <fmt/format.h>

#include <cctype>
#include <cstdint>
#include <string>
#include <vector>

#include "silt/cli/command.h"
#include "silt/cli/table_util.h"
#include "silt/delta/optimize.h"
#include "silt/stream/job.h"
#include "silt/stream/maintenance.h"

namespace silt::cli {

namespace {

std::string FormatBytes(int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  if (unit == 0) return fmt::format("{} B", bytes);
  return fmt::format("{:.1f} {}", value, units[unit]);
}

std::vector<std::string> SplitColumns(const std::string& text) {
  std::vector<std::string> out;
  std::string current;
  for (char c : text) {
    if (c == ',') {
      if (!current.empty()) out.push_back(current);
      current.clear();
    } else if (!std::isspace(static_cast<unsigned char>(c))) {
      current.push_back(c);
    }
  }
  if (!current.empty()) out.push_back(current);
  return out;
}

class OptimizeCommand final : public Command {
 public:
  explicit OptimizeCommand(CLI::App* app) {
    sub_ = app->add_subcommand("optimize",
                               "Compact a Delta table's small files (OPTIMIZE), optionally "
                               "Z-ordering them");
    sub_->add_option("table", table_path_, "Table path")->required();
    sub_->add_option("--where", where_,
                     "Only partitions matching this predicate over partition columns, e.g. "
                     "\"event_date >= '2026-06-01'\"");
    sub_->add_option("--target-size", target_size_, "Size of the compacted files")
        ->capture_default_str();
    sub_->add_option("--min-input-files", min_input_files_,
                     "Compact a partition only when it has at least this many small files")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    sub_->add_option("--zorder-by", zorder_by_,
                     "Z-order the rows of each partition by these columns (comma-separated)");
  }

  CLI::App* subcommand() const override { return sub_; }

  Status Run() override {
    delta::OptimizeOptions options;
    options.where = where_;
    options.file_filter = stream::PartitionPredicateFilter(where_);
    SILT_ASSIGN_OR_RETURN_CTX(options.target_file_bytes, stream::ParseByteSize(target_size_),
                              "--target-size");
    options.min_input_files = min_input_files_;
    options.zorder_by = SplitColumns(zorder_by_);
    SILT_ASSIGN_OR_RETURN(auto table, OpenExistingTable(table_path_));
    SILT_ASSIGN_OR_RETURN(delta::OptimizeResult result, delta::Optimize(table.get(), options));
    if (result.version < 0) {
      fmt::print("OPTIMIZE {}: nothing to compact at version {} ({} file(s) considered)\n",
                 table->path(), result.read_version, result.total_considered_files);
      return Status::OK();
    }
    fmt::print(
        "OPTIMIZE {}: version {}\n"
        "  partitions optimized: {}\n"
        "  files removed: {} ({})\n"
        "  files added: {} ({})\n"
        "  rows rewritten: {}\n"
        "  files considered: {}, skipped: {}\n",
        table->path(), result.version, result.partitions_optimized, result.num_removed_files,
        FormatBytes(result.removed_bytes), result.num_added_files, FormatBytes(result.added_bytes),
        result.rows, result.total_considered_files, result.total_files_skipped);
    return Status::OK();
  }

 private:
  CLI::App* sub_ = nullptr;
  std::string table_path_;
  std::string where_;
  std::string target_size_ = "128MB";
  int64_t min_input_files_ = 2;
  std::string zorder_by_;
};

}  // namespace

std::unique_ptr<Command> AddOptimizeCommand(CLI::App* app) {
  return std::make_unique<OptimizeCommand>(app);
}

}  // namespace silt::cli
