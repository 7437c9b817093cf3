#include "silt/cli/query_runner.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>

namespace silt::cli {

namespace {

// Process-wide because a signal handler can reach nothing else.
std::atomic<bool> g_stop_requested{false};

static_assert(std::atomic<bool>::is_always_lock_free, "the stop flag must be signal-safe");

extern "C" void HandleStopSignal(int signo) {
  if (g_stop_requested.exchange(true)) {
    // Second signal: the user does not want to wait for the batch.
    _exit(128 + signo);
  }
  static constexpr char kMessage[] =
      "[silt] stopping after the current batch (send the signal again to exit now)\n";
  ssize_t ignored = write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
  (void)ignored;
}

// Installs the handlers for the lifetime of the object and restores the
// previous ones afterwards.
class ScopedStopSignals {
 public:
  ScopedStopSignals() {
    g_stop_requested.store(false);
    struct sigaction action {};
    action.sa_handler = HandleStopSignal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(SIGINT, &action, &old_int_);
    sigaction(SIGTERM, &action, &old_term_);
  }
  ~ScopedStopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  ScopedStopSignals(const ScopedStopSignals&) = delete;
  ScopedStopSignals& operator=(const ScopedStopSignals&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

void PrintProgress(const stream::BatchProgress& progress, bool as_json) {
  if (as_json) {
    fmt::print("{}\n", progress.json);
  } else if (progress.skipped_duplicate) {
    fmt::print("[silt] batch {}: {} rows in {} ms (already committed; skipped)\n",
               progress.batch_id, progress.num_input_rows, progress.duration_ms);
  } else if (progress.table_version >= 0) {
    fmt::print("[silt] batch {}: {} rows in {} ms -> table version {}\n", progress.batch_id,
               progress.num_input_rows, progress.duration_ms, progress.table_version);
  } else {
    fmt::print("[silt] batch {}: {} rows in {} ms (nothing to commit)\n", progress.batch_id,
               progress.num_input_rows, progress.duration_ms);
  }
  // Progress is read live by people and by scripts that follow the output.
  std::fflush(stdout);
}

}  // namespace

Result<stream::QueryResult> RunJobInForeground(const stream::JobSpec& job,
                                               const RunOptions& options) {
  ScopedStopSignals signals;
  stream::QueryOptions query_options;
  query_options.stop_flag = &g_stop_requested;
  bool as_json = options.progress_json;
  query_options.on_progress = [as_json](const stream::BatchProgress& progress) {
    PrintProgress(progress, as_json);
  };
  return stream::RunQuery(job, query_options);
}

Result<stream::MaintenanceResult> RunMaintenanceInForeground(const stream::JobSpec& job) {
  ScopedStopSignals signals;
  stream::MaintenanceOptions options;
  options.stop_flag = &g_stop_requested;
  options.on_report = [](const std::string& line) {
    fmt::print("{}\n", line);
    std::fflush(stdout);
  };
  return stream::RunMaintenance(job, options);
}

}  // namespace silt::cli
