// silt run JOB.yaml: loads a job file and runs its streaming query in the
// foreground until the trigger ends it, a signal stops it, or it fails.

#include <fmt/format.h>

#include <cstdint>
#include <string>

#include "silt/base/logging.h"
#include "silt/cli/allocator.h"
#include "silt/cli/command.h"
#include "silt/cli/query_runner.h"
#include "silt/stream/job.h"

namespace silt::cli {

namespace {

class RunCommand final : public Command {
 public:
  explicit RunCommand(CLI::App* app) {
    sub_ = app->add_subcommand("run", "Run a streaming job file in the foreground");
    sub_->add_option("job", job_path_, "Job file (YAML)")->required();
    sub_->add_option("--max-batches", max_batches_,
                     "Stop after this many batches (overrides the job's maxBatches)")
        ->check(CLI::PositiveNumber);
    sub_->add_flag("--progress-json", progress_json_,
                   "Print each batch's full progress record as JSON instead of a line");
    sub_->add_option("--log-format", log_format_,
                     "Log lines on stderr: text, or json (one object a line with time, level, "
                     "component, queryId, batchId, message)")
        ->check(CLI::IsMember({"text", "json"}));
    sub_->footer(
        "SIGINT/SIGTERM stop the query after the current batch; a second signal exits at once.\n"
        "A stopped or killed query resumes from its checkpoint on the next run.");
  }

  CLI::App* subcommand() const override { return sub_; }

  Status Run() override {
    if (log_format_ == "json") SetLogFormat(LogFormat::kJson);
    SILT_ASSIGN_OR_RETURN(stream::JobSpec job, stream::LoadJobFile(job_path_));
    if (job.maintenance) {
      SILT_ASSIGN_OR_RETURN(stream::MaintenanceResult result, RunMaintenanceInForeground(job));
      fmt::print("[silt] maintenance job {} stopped: {} run(s), {} failed operation(s)\n", job.name,
                 result.runs, result.failures);
      return Status::OK();
    }
    if (max_batches_ > 0) job.max_batches = max_batches_;
    // Before the query's threads and librdkafka's start (decision 194).
    ConfigureArenas(job.parallelism);
    RunOptions options;
    options.progress_json = progress_json_;
    options.failed_in_batch = &failed_in_batch_;
    SILT_ASSIGN_OR_RETURN(stream::QueryResult result, RunJobInForeground(job, options));
    if (!progress_json_) {
      fmt::print("[silt] query {} stopped: {} batches, {} rows written\n", result.query_id,
                 result.batches_run, result.rows_written);
    }
    return Status::OK();
  }

  // An InvalidArgument or Corruption met while a batch ran is bad data, not
  // a bad job: the job file was accepted and the checkpoint holds the batch.
  int ExitCodeFor(const Status& status) const override {
    if (failed_in_batch_ && (status.IsInvalidArgument() || status.IsCorruption())) {
      return kExitDataError;
    }
    return DefaultExitCode(status);
  }

 private:
  bool failed_in_batch_ = false;
  CLI::App* sub_ = nullptr;
  std::string job_path_;
  int64_t max_batches_ = 0;
  bool progress_json_ = false;
  std::string log_format_ = "text";
};

}  // namespace

std::unique_ptr<Command> AddRunCommand(CLI::App* app) { return std::make_unique<RunCommand>(app); }

}  // namespace silt::cli
