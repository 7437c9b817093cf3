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
#include "silt/cli/allocator.h"
#include "silt/cli/build_info.h"
#include "silt/cli/command.h"

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

}  // namespace

int main(int argc, char** argv) {
  silt::cli::ConfigureAllocator();
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
