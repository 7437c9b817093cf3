#include "silt/cli/query_runner.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "silt/base/logging.h"
#include "silt/cli/value_format.h"
#include "silt/metrics/default_registry.h"
#include "silt/metrics/process_metrics.h"
#include "silt/monitor/server.h"
#include "silt/stream/metrics/query_metrics.h"
#include "silt/stream/scaleout/worker.h"

namespace silt::cli {

namespace {

// Process-wide because a signal handler can reach nothing else.
std::atomic<bool> g_stop_requested{false};

std::atomic<bool> g_json_logs{false};

static_assert(std::atomic<bool>::is_always_lock_free, "the stop flag must be signal-safe");

extern "C" void HandleStopSignal(int signo) {
  if (g_stop_requested.exchange(true)) {
    // Second signal: the user does not want to wait for the batch.
    _exit(128 + signo);
  }
  // A JSON log has no room for a line without a time, which the handler
  // cannot format safely; the stop is logged when the query has stopped.
  if (g_json_logs.load()) return;
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
    g_json_logs.store(GetLogFormat() == LogFormat::kJson);
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

// Sets the log context of JSON log lines and forwards to the query's
// metrics, when the job has them.
class RunListener final : public stream::QueryListener {
 public:
  explicit RunListener(stream::QueryMetrics* metrics) : metrics_(metrics) {}
  // The query id stays for the rest of the process (one query a process):
  // the final error line carries it too.
  ~RunListener() override { SetLogBatchId(-1); }

  void OnQueryStarted(const std::string& query_id, const std::string& run_id,
                      const std::string& source, const std::string& sink) override {
    SetLogQueryId(query_id);
    if (metrics_) metrics_->OnQueryStarted(query_id, run_id, source, sink);
  }
  void OnNoNewData() override {
    if (metrics_) metrics_->OnNoNewData();
  }
  void OnBatchStarted(int64_t batch_id) override {
    in_batch_ = true;
    SetLogBatchId(batch_id);
    if (metrics_) metrics_->OnBatchStarted(batch_id);
  }
  void OnBatchCompleted(const stream::BatchProgress& progress) override {
    in_batch_ = false;
    if (metrics_) metrics_->OnBatchCompleted(progress);
  }
  void OnOffsetsChanged(const std::string& offsets_json) override {
    if (metrics_) metrics_->OnOffsetsChanged(offsets_json);
  }

  // A batch has started and not completed.
  bool in_batch() const { return in_batch_; }

 private:
  stream::QueryMetrics* metrics_;
  bool in_batch_ = false;
};

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
  query_options.console_renderer = [](const columnar::RecordBatch& rows, bool has_more,
                                      int truncate) {
    std::vector<std::string> header;
    for (const columnar::Field& f : rows.schema->fields()) header.push_back(f.name);
    TablePrinter printer(std::move(header), truncate);
    for (int64_t i = 0; i < rows.num_rows; ++i) printer.AddRow(rows, i);
    return printer.Render(has_more);
  };

  // Declared in this order so that the server stops (and no provider runs)
  // before the metrics it reads go away. The registry is the process's, so
  // the retries counted by the S3 and Kafka clients are in it too.
  std::unique_ptr<stream::QueryMetrics> query_metrics;
  std::unique_ptr<monitor::MonitorServer> server;
  if (job.metrics) {
    metrics::Registry* reg = &metrics::DefaultRegistry();
    static std::once_flag process_metrics;
    std::call_once(process_metrics, [reg] { metrics::AddProcessMetrics(reg); });
    SILT_ASSIGN_OR_RETURN(query_metrics, stream::QueryMetrics::Make(job, reg, &SystemClock()));
    monitor::ServerOptions server_options;
    server_options.host = job.metrics->host;
    server_options.port = job.metrics->port;
    stream::QueryMetrics* qm = query_metrics.get();
    server_options.metrics = [reg] { return reg->Expose(); };
    server_options.status = [qm] { return qm->Snapshot(); };
    SILT_ASSIGN_OR_RETURN(server, monitor::MonitorServer::Start(std::move(server_options)));
    SILT_LOG_INFO("metrics", "serving /metrics, /status, /healthz and / on http://", server->host(),
                  ":", server->port(), "/");
  }
  RunListener listener(query_metrics.get());
  query_options.listener = &listener;
  // scaleOut: this process is one worker of a consumer group; the table,
  // not a checkpoint, holds the offsets (stream/scaleout/worker.h).
  Result<stream::QueryResult> result = job.scale_out ? stream::RunScaleOutWorker(job, query_options)
                                                     : stream::RunQuery(job, query_options);
  if (options.failed_in_batch) *options.failed_in_batch = !result.ok() && listener.in_batch();
  if (query_metrics) query_metrics->OnQueryStopped(result.status());
  if (server && job.metrics->stop_grace_micros > 0 && !g_stop_requested.load()) {
    // The query stopped by itself: the endpoint keeps answering for a while
    // (health failing, silt_query_up 0) so that a health checker or a
    // scraper sees why; a stop signal ends the wait.
    SILT_LOG_INFO("metrics", "the query has ", result.ok() ? "stopped" : "failed",
                  "; serving the endpoint for ", job.metrics->stop_grace_micros / 1000,
                  " ms more (metrics.stopGrace)");
    const auto until = std::chrono::steady_clock::now() +
                       std::chrono::microseconds(job.metrics->stop_grace_micros);
    while (!g_stop_requested.load() && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  if (result.ok() && g_stop_requested.load()) {
    SILT_LOG_INFO("stream", "stopped on a signal after the current batch");
  }
  return result;
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
