// Runs a streaming job in the foreground for `silt run` and `silt demo`:
// prints one progress line per batch to stdout and turns SIGINT/SIGTERM into
// a clean stop after the current batch (a second signal exits at once with
// status 128 + signal number).
//
// Progress line, like the seed's query listener:
//   [silt] batch 3: 1000 rows in 412 ms -> table version 3
//   [silt] batch 3: 1000 rows in 12 ms (already committed; skipped)
// With `progress_json`, the batch's full progress record (Spark's
// StreamingQueryProgress JSON) is printed instead, one object per line.
//
// With the job's `metrics:` key, the monitoring endpoint (docs/metrics.md)
// serves /metrics, /status, /healthz and / on its own threads while the
// query runs. The log context (query id, batch id) of JSON log lines is set
// as the query starts and each batch begins.
//
// Thread safety: one query per process at a time (the signal handlers and
// the stop flag are process-wide).
#pragma once

#include "silt/base/result.h"
#include "silt/stream/job.h"
#include "silt/stream/maintenance.h"
#include "silt/stream/query.h"

namespace silt::cli {

struct RunOptions {
  bool progress_json = false;
  // When not null, set to whether the query failed while a batch ran (it
  // had started and not completed): the failure is then about the batch's
  // data or its I/O, not about the job. Borrowed for the call.
  bool* failed_in_batch = nullptr;
};

// Runs `job` until it stops by itself, by signal, or fails. The handlers are
// restored when it returns. Errors: those of stream::RunQuery.
Result<stream::QueryResult> RunJobInForeground(const stream::JobSpec& job,
                                               const RunOptions& options);

// Runs a `type: maintenance` job (stream/maintenance.h), printing one line
// per table operation; SIGINT/SIGTERM stop it after the current operation.
Result<stream::MaintenanceResult> RunMaintenanceInForeground(const stream::JobSpec& job);

}  // namespace silt::cli
