// silt state CHECKPOINT [--operator N] [--batch N]: the rows a streaming
// query's stateful operator holds, as Spark's `statestore` data source
// reads them: the key columns, then the value (an aggregation's current
// results).

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <string>

#include "silt/cli/command.h"
#include "silt/cli/result_output.h"
#include "silt/cli/table_util.h"
#include "silt/fs/file_system.h"
#include "silt/stream/checkpoint/checkpoint.h"
#include "silt/stream/stateful/state_reader.h"

namespace silt::cli {

namespace {

constexpr int64_t kDefaultTableRows = 20;

class StateCommand final : public Command {
 public:
  explicit StateCommand(CLI::App* app) {
    sub_ = app->add_subcommand("state", "Print the state rows of a streaming query's checkpoint");
    sub_->add_option("checkpoint", dir_, "Checkpoint directory (the job's checkpointLocation)")
        ->required();
    sub_->add_option("--operator", operator_id_, "Stateful operator id (default 0)")
        ->check(CLI::NonNegativeNumber);
    sub_->add_option("--batch", batch_,
                     "The state after this batch (default: the last committed batch)")
        ->check(CLI::NonNegativeNumber);
    sub_->add_option("--format", format_, "Output format")
        ->check(CLI::IsMember({"table", "jsonl", "csv"}))
        ->capture_default_str();
    sub_->add_option("--limit", limit_,
                     "At most this many rows (default: 20 for table, all for jsonl/csv)")
        ->check(CLI::NonNegativeNumber);
  }

  CLI::App* subcommand() const override { return sub_; }

  Status Run() override {
    SILT_ASSIGN_OR_RETURN(OpenedCheckpoint opened, OpenExistingCheckpoint(dir_));
    const std::string& path = opened.path;
    const fs::FileSystemPtr& file_system = opened.file_system;
    stream::CheckpointDir* checkpoint = opened.checkpoint.get();
    SILT_ASSIGN_OR_RETURN(std::vector<stream::StateOperatorInfo> operators,
                          stream::ListStateOperators(file_system, path));
    const stream::StateOperatorInfo* op = nullptr;
    std::string ids;
    for (const stream::StateOperatorInfo& info : operators) {
      if (info.operator_id == operator_id_) op = &info;
      ids += (ids.empty() ? "" : ", ") + std::to_string(info.operator_id);
    }
    if (op == nullptr) {
      if (operators.empty()) {
        return Status::NotFound("checkpoint '", dir_, "' has no stateful operator (no ",
                                fs::JoinPath(path, "state"), ")");
      }
      return Status::NotFound("checkpoint '", dir_, "' has no stateful operator ", operator_id_,
                              " (it has ", ids, ")");
    }
    int64_t batch = 0;
    if (batch_) {
      batch = *batch_;
    } else {
      SILT_ASSIGN_OR_RETURN(std::optional<int64_t> committed, checkpoint->LatestCommitBatch());
      if (!committed) {
        return Status::NotFound("checkpoint '", dir_,
                                "' has no committed batch yet; give --batch N to read the state "
                                "an uncommitted batch wrote");
      }
      batch = *committed;
    }
    SILT_ASSIGN_OR_RETURN(stream::StateRows state,
                          stream::ReadStateRows(file_system, *op, batch + 1));
    int64_t table_rows = INT64_MAX;
    if (format_ == "table") table_rows = limit_ >= 0 ? limit_ : kDefaultTableRows;
    const int64_t shown = format_ == "table" ? std::min(state.rows->num_rows, table_rows + 1)
                          : limit_ >= 0      ? std::min(state.rows->num_rows, limit_)
                                             : state.rows->num_rows;
    SILT_ASSIGN_OR_RETURN(auto writer, ResultWriter::Make(format_, "", table_rows));
    SILT_RETURN_NOT_OK(writer->Begin(state.rows->schema));
    if (shown > 0) {
      SILT_RETURN_NOT_OK(writer->Write(*columnar::SliceBatch(*state.rows, 0, shown)));
    }
    return writer->Finish();
  }

 private:
  CLI::App* sub_ = nullptr;
  std::string dir_;
  int operator_id_ = 0;
  std::optional<int64_t> batch_;
  std::string format_ = "table";
  int64_t limit_ = -1;
};

}  // namespace

std::unique_ptr<Command> AddStateCommand(CLI::App* app) {
  return std::make_unique<StateCommand>(app);
}

}  // namespace silt::cli
