// The subcommands of the `silt` binary. Each Add*Command registers one CLI11
// subcommand on the application, binds its options into the returned Command
// and returns it; main() runs the Command whose subcommand was parsed and
// maps the returned Status to an exit code (see main.cc).
//
// Commands write their results to stdout and nothing else; errors are
// returned, never printed, so main() prints exactly one message.
//
// Thread safety: commands run on the main thread; `silt run` and `silt demo`
// install SIGINT/SIGTERM handlers for the duration of the query.
//
// Exit codes (docs/cli.md):
//   0  success
//   1  any other failure (storage, broker, a corrupt table, an internal error)
//   2  bad usage or a bad job file: StatusCode::kInvalidArgument outside a
//      batch; nothing was done on disk
//   3  a data error: bad data met while a streaming batch ran
//      (kInvalidArgument or kCorruption inside a batch: FAILFAST on a
//      malformed record, an ANSI cast failure, a NOT NULL violation at the
//      sink, an unreadable input file); the batch is left uncommitted and
//      re-runs on the next start
#pragma once

#include <CLI/CLI.hpp>
#include <memory>

#include "silt/base/status.h"

namespace silt::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitDataError = 3;

// The exit code of a command's final Status, when the command does not know
// better (see Command::ExitCodeFor).
inline int DefaultExitCode(const Status& status) {
  if (status.ok()) return kExitOk;
  return status.IsInvalidArgument() ? kExitUsage : kExitFailure;
}

class Command {
 public:
  virtual ~Command() = default;
  // The CLI11 subcommand this command owns (owned by the App).
  virtual CLI::App* subcommand() const = 0;
  // Runs the command with the parsed options.
  virtual Status Run() = 0;
  // The exit code for the Status Run() returned: DefaultExitCode, unless the
  // command knows more (`silt run` tells a data error met in a batch from a
  // bad job).
  virtual int ExitCodeFor(const Status& status) const { return DefaultExitCode(status); }
};

// silt run JOB.yaml [--max-batches N] [--progress-json]
std::unique_ptr<Command> AddRunCommand(CLI::App* app);
// silt demo [--dir DIR] [--batches N] [--rows-per-batch N] [--print-job]
std::unique_ptr<Command> AddDemoCommand(CLI::App* app);
// silt read TABLE [--version N | --timestamp T] [--select E,...] [--where E] [--limit N]
//           [--format table|csv|jsonl|parquet] [--output PATH] [--explain] [--count]
//           [--columns a,b]
std::unique_ptr<Command> AddReadCommand(CLI::App* app);
// silt sql "SELECT ... FROM delta.`PATH` ..." [--format F] [--output PATH] [--explain]
std::unique_ptr<Command> AddSqlCommand(CLI::App* app);
// silt log TABLE [VERSION] [--format text|json]
std::unique_ptr<Command> AddLogCommand(CLI::App* app);
// silt history TABLE [--limit N] [--format table|json]
std::unique_ptr<Command> AddHistoryCommand(CLI::App* app);
// silt optimize TABLE [--where P] [--target-size S] [--min-input-files N] [--zorder-by COLS]
std::unique_ptr<Command> AddOptimizeCommand(CLI::App* app);
// silt vacuum TABLE [--retain D] [--dry-run] [--lite] [--unsafe-ignore-retention-check]
std::unique_ptr<Command> AddVacuumCommand(CLI::App* app);
// silt describe TABLE [--version N] [--format text|json]
std::unique_ptr<Command> AddDescribeCommand(CLI::App* app);
// silt restore TABLE --version N | --timestamp T
std::unique_ptr<Command> AddRestoreCommand(CLI::App* app);
// silt checkpoint DIR [--format text|json]
std::unique_ptr<Command> AddCheckpointCommand(CLI::App* app);
// silt state CHECKPOINT [--operator N] [--batch N] [--format table|jsonl|csv] [--limit N]
std::unique_ptr<Command> AddStateCommand(CLI::App* app);
// silt produce [--bootstrap-servers S] [--topic T] [--count N] [--from I] [--rate R]
//              [--property NAME=VALUE]...
std::unique_ptr<Command> AddProduceCommand(CLI::App* app);
// silt export --pyspark JOB.yaml
std::unique_ptr<Command> AddExportCommand(CLI::App* app);

}  // namespace silt::cli
