// The `silt` command: parses the command line, runs one subcommand and maps
// its final Status to the process exit code (the table in command.h) with
// one message on stderr.
//
// Messages read "silt: error: <message>".

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "silt/base/logging.h"
#include "silt/base/version.h"
#include "silt/cli/build_info.h"
#include "silt/cli/command.h"

#if defined(SILT_MIMALLOC)
#include <mimalloc.h>
#endif

namespace {

using silt::cli::kExitUsage;

void PrintError(const std::string& message) {
  std::fflush(stdout);
  // With `silt run --log-format json` every stderr line is a JSON object.
  if (silt::GetLogFormat() == silt::LogFormat::kJson) {
    silt::LogLine(silt::LogLevel::kError, "silt", message);
    return;
  }
  fmt::print(stderr, "silt: error: {}\n", message);
}

// Start-up settings of the allocator the build linked (decision 187).
void ConfigureAllocator() {
#if defined(SILT_MIMALLOC)
  // mimalloc hands pages that stay free for decommit_delay back to the OS
  // (25 ms by default). A query frees most of a batch's memory at the end of
  // the batch and allocates as much again for the next one a few hundred ms
  // later, so at 25 ms every batch faulted its pages in anew: on workload A
  // 2.4x glibc's page faults. After 1 s the pages of a busy query are reused
  // and an idle one (a trigger interval of seconds) still shrinks. The
  // MIMALLOC_DECOMMIT_DELAY environment variable, when set, wins.
  if (std::getenv("MIMALLOC_DECOMMIT_DELAY") == nullptr) {
    mi_option_set(mi_option_decommit_delay, 1000);
  }
#endif
}

}  // namespace

int main(int argc, char** argv) {
  ConfigureAllocator();
  CLI::App app{
      "silt: stream events (Kafka, files, generator) through Spark SQL expressions into Delta "
      "Lake tables, exactly once.",
      "silt"};
  // "silt 0.1.0 (commit 331e234ab1c2, linux/arm64)"
  app.set_version_flag(
      "--version", fmt::format("silt {} (commit {}, {})", silt::kVersion, silt::cli::BuildCommit(),
                               silt::cli::BuildTarget()));
  app.require_subcommand(1);
  app.footer("Run `silt <command> --help` for a command's options. Start with `silt demo`.");

  std::vector<std::unique_ptr<silt::cli::Command>> commands;
  commands.push_back(silt::cli::AddRunCommand(&app));
  commands.push_back(silt::cli::AddDemoCommand(&app));
  commands.push_back(silt::cli::AddReadCommand(&app));
  commands.push_back(silt::cli::AddSqlCommand(&app));
  commands.push_back(silt::cli::AddLogCommand(&app));
  commands.push_back(silt::cli::AddHistoryCommand(&app));
  commands.push_back(silt::cli::AddOptimizeCommand(&app));
  commands.push_back(silt::cli::AddVacuumCommand(&app));
  commands.push_back(silt::cli::AddDescribeCommand(&app));
  commands.push_back(silt::cli::AddRestoreCommand(&app));
  commands.push_back(silt::cli::AddCheckpointCommand(&app));
  commands.push_back(silt::cli::AddStateCommand(&app));
  commands.push_back(silt::cli::AddProduceCommand(&app));
  commands.push_back(silt::cli::AddExportCommand(&app));

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    PrintError(std::string(e.what()) + " (run `silt --help` for usage)");
    return kExitUsage;
  }

  for (const auto& command : commands) {
    if (!command->subcommand()->parsed()) continue;
    silt::Status status = command->Run();
    std::fflush(stdout);
    if (!status.ok()) PrintError(status.message());
    return command->ExitCodeFor(status);
  }
  PrintError("no command given (run `silt --help` for usage)");
  return kExitUsage;
}
