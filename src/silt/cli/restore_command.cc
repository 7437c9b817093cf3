// silt restore TABLE --version N | --timestamp T: returns the table to an
// earlier version's files with one RESTORE commit (delta/restore.h).

#include <fmt/format.h>

#include <cstdint>
#include <string>

#include "silt/cli/command.h"
#include "silt/cli/table_util.h"
#include "silt/columnar/temporal.h"
#include "silt/delta/restore.h"

namespace silt::cli {

namespace {

class RestoreCommand final : public Command {
 public:
  explicit RestoreCommand(CLI::App* app) {
    sub_ = app->add_subcommand("restore",
                               "Restore a Delta table to an earlier version (RESTORE); history "
                               "is kept");
    sub_->add_option("table", table_path_, "Table path")->required();
    auto* version = sub_->add_option("--version", version_, "Version to restore")
                        ->check(CLI::NonNegativeNumber);
    auto* timestamp = sub_->add_option(
        "--timestamp", timestamp_,
        "Restore the version current at this time (\"2026-06-22 08:00:00\", ISO-8601; UTC "
        "unless a zone is given)");
    version->excludes(timestamp);
  }

  CLI::App* subcommand() const override { return sub_; }

  Status Run() override {
    if (version_ < 0 && timestamp_.empty()) {
      return Status::InvalidArgument("silt restore needs --version N or --timestamp T");
    }
    SILT_ASSIGN_OR_RETURN(auto table, OpenExistingTable(table_path_));
    delta::SnapshotPtr target;
    std::optional<std::string> timestamp_text;
    if (!timestamp_.empty()) {
      std::optional<int64_t> micros = columnar::ParseTimestamp(timestamp_);
      if (!micros) {
        return Status::InvalidArgument("--timestamp: '", timestamp_,
                                       "' is not a timestamp (expected e.g. 2026-06-22 08:00:00 "
                                       "or 2026-06-22T08:00:00Z)");
      }
      SILT_ASSIGN_OR_RETURN(target, table->SnapshotAtTimestamp(*micros / 1000));
      timestamp_text = timestamp_;
    } else {
      SILT_ASSIGN_OR_RETURN(target, table->SnapshotAt(version_));
    }
    SILT_ASSIGN_OR_RETURN(delta::RestoreResult result,
                          delta::Restore(table.get(), target, timestamp_text));
    fmt::print(
        "RESTORE {}: version {} restores version {}\n"
        "  files restored: {} ({} bytes)\n"
        "  files removed: {} ({} bytes)\n"
        "  files after restore: {} ({} bytes)\n",
        table->path(), result.version, result.restored_version, result.num_restored_files,
        result.restored_bytes, result.num_removed_files, result.removed_bytes,
        result.num_files_after, result.table_size_after);
    return Status::OK();
  }

 private:
  CLI::App* sub_ = nullptr;
  std::string table_path_;
  int64_t version_ = -1;
  std::string timestamp_;
};

}  // namespace

std::unique_ptr<Command> AddRestoreCommand(CLI::App* app) {
  return std::make_unique<RestoreCommand>(app);
}

}  // namespace silt::cli
