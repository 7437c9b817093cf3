// silt export --pyspark JOB.yaml: prints the PySpark 3.5 + delta-spark 3.2
// program equivalent to a job file (stream/pyspark_export.h), for users who
// move the job to a Spark cluster.

#include <fmt/format.h>

#include <string>

#include "silt/base/version.h"
#include "silt/cli/command.h"
#include "silt/fs/file_system.h"
#include "silt/stream/job.h"
#include "silt/stream/pyspark_export.h"

namespace silt::cli {

namespace {

class ExportCommand final : public Command {
 public:
  explicit ExportCommand(CLI::App* app) {
    sub_ = app->add_subcommand(
        "export", "Print a job file as the equivalent program for another engine (PySpark)");
    sub_->add_option("job", job_path_, "Job file (YAML)")->required();
    sub_->add_flag("--pyspark", pyspark_,
                   "A PySpark 3.5 + delta-spark 3.2 program (the only target so far)");
    sub_->footer(
        "The program is printed on stdout. A job-file feature without a Spark counterpart\n"
        "(the generator and MQTT sources, deadLetter, ...) stops the export with exit code 2,\n"
        "naming its key.");
  }

  CLI::App* subcommand() const override { return sub_; }

  Status Run() override {
    if (!pyspark_) {
      return Status::InvalidArgument("silt export: choose a target (--pyspark)");
    }
    SILT_ASSIGN_OR_RETURN(stream::JobSpec job, stream::LoadJobFile(job_path_));
    stream::PySparkExportOptions options;
    options.job_file = job_path_;
    options.silt_version = kVersion;
    // The text again, before environment expansion, to keep secrets that came
    // from the environment as environment lookups; LoadJobFile just read it.
    SILT_ASSIGN_OR_RETURN(fs::FileSystemPtr fs, fs::FileSystemForPath(job_path_));
    SILT_ASSIGN_OR_RETURN(options.raw_yaml, fs->ReadFile(fs::NormalizePath(job_path_)));
    SILT_ASSIGN_OR_RETURN(std::string program, stream::ExportPySpark(job, options));
    fmt::print("{}", program);
    return Status::OK();
  }

 private:
  CLI::App* sub_ = nullptr;
  std::string job_path_;
  bool pyspark_ = false;
};

}  // namespace

std::unique_ptr<Command> AddExportCommand(CLI::App* app) {
  return std::make_unique<ExportCommand>(app);
}

}  // namespace silt::cli
