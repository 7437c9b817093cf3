// silt vacuum TABLE: deletes files no version within the retention window
// needs (delta/vacuum.h). Prints the files it deletes (or would, with
// --dry-run), one per line, then a summary; each deletion is also logged.

#include <fmt/format.h>

#include <cstdint>
#include <string>

#include "silt/cli/command.h"
#include "silt/cli/table_util.h"
#include "silt/delta/vacuum.h"
#include "silt/stream/job.h"

namespace silt::cli {

namespace {

class VacuumCommand final : public Command {
 public:
  explicit VacuumCommand(CLI::App* app) {
    sub_ = app->add_subcommand(
        "vacuum", "Delete files that no version within the retention window references (VACUUM)");
    sub_->add_option("table", table_path_, "Table path")->required();
    sub_->add_option("--retain", retain_,
                     "Retention window, e.g. 168h or \"7 days\" (default: the table's "
                     "delta.deletedFileRetentionDuration, 1 week)");
    sub_->add_flag("--dry-run", dry_run_, "List the files that would be deleted; delete nothing");
    sub_->add_flag("--lite", lite_,
                   "Find candidates in the log's remove actions instead of listing the table");
    sub_->add_flag("--unsafe-ignore-retention-check", unsafe_,
                   "Allow a retention shorter than delta.deletedFileRetentionDuration (Spark's "
                   "retentionDurationCheck.enabled=false); only safe when nothing else writes "
                   "to or reads from the table");
  }

  CLI::App* subcommand() const override { return sub_; }

  Status Run() override {
    delta::VacuumOptions options;
    if (!retain_.empty()) {
      SILT_ASSIGN_OR_RETURN_CTX(int64_t micros, stream::ParseDurationMicros(retain_), "--retain");
      options.retention_ms = micros / 1000;
    }
    options.dry_run = dry_run_;
    options.lite = lite_;
    options.retention_check = !unsafe_;
    SILT_ASSIGN_OR_RETURN(auto table, OpenExistingTable(table_path_));
    SILT_ASSIGN_OR_RETURN(delta::VacuumResult result, delta::Vacuum(table.get(), options));
    for (const std::string& file : result.files) fmt::print("{}\n", file);
    if (dry_run_) {
      fmt::print("VACUUM {} (dry run): {} file(s), {} bytes, would be deleted (retention {})\n",
                 table->path(), result.files.size(), result.bytes,
                 delta::FormatRetention(result.retention_ms));
    } else {
      fmt::print("VACUUM {}: deleted {} file(s), {} bytes (retention {})\n", table->path(),
                 result.deleted, result.bytes, delta::FormatRetention(result.retention_ms));
    }
    if (!result.temp_files.empty()) {
      for (const std::string& file : result.temp_files) fmt::print("{}\n", file);
      fmt::print("VACUUM {}: {} {} crash leftover temp file(s) of unfinished writes\n",
                 table->path(), dry_run_ ? "would delete" : "deleted", result.temp_files.size());
    }
    return Status::OK();
  }

 private:
  CLI::App* sub_ = nullptr;
  std::string table_path_;
  std::string retain_;
  bool dry_run_ = false;
  bool lite_ = false;
  bool unsafe_ = false;
};

}  // namespace

std::unique_ptr<Command> AddVacuumCommand(CLI::App* app) {
  return std::make_unique<VacuumCommand>(app);
}

}  // namespace silt::cli
