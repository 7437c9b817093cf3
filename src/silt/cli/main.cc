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

#if defined(__GLIBC__)
#include <malloc.h>
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

// glibc malloc's start-up settings (decision 187). By default a block freed
// above the mmap threshold raises that threshold to its size (up to 32 MiB)
// and the trim threshold to twice that, and the top of a heap is handed back
// to the OS whenever more than the trim threshold is free there: each batch
// of a query (tens of MB of record, column and page buffers, freed at its
// end) was mmapped or trimmed and then faulted in again by the next one.
// Fixed thresholds keep such buffers in the heap (setting one also stops the
// dynamic adjustment), and the top pad grows the main heap in 8 MiB steps
// instead of one system call per block. Memory still goes back to the OS
// where it went before: malloc_trim(0) after each Delta checkpoint and
// compaction (decisions 57, 170), and blocks of 32 MiB and more are still
// mmapped and unmapped on free. When GLIBC_TUNABLES is set, the user's
// settings are left alone.
void ConfigureAllocator() {
#if defined(__GLIBC__)
  if (std::getenv("GLIBC_TUNABLES") != nullptr) return;
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  mallopt(M_TOP_PAD, 8 << 20);
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
