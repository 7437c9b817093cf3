// Table maintenance beside the streams: the `type: maintenance` job that
// `silt run` executes (OPTIMIZE, then VACUUM, for each table, once or every
// schedule.interval — the seed's jobs/optimize.py as a job file), and the
// Delta sink's autoCompact options (the compaction itself is
// delta/auto_compact.h).
//
// Both rely on OPTIMIZE committing with dataChange = false, which commutes
// with the stream's blind appends (delta/optimize.h).
//
// Thread safety: RunMaintenance blocks the calling thread; the stop flag may
// be set from any thread or a signal handler.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "silt/base/clock.h"
#include "silt/base/result.h"
#include "silt/delta/auto_compact.h"
#include "silt/delta/optimize.h"
#include "silt/fs/file_system.h"
#include "silt/stream/job.h"

namespace silt::stream {

// The files of `snapshot` whose partition values satisfy `where`, a Spark
// SQL predicate over partition columns only (all files when `where` is
// empty). Parsed and bound with the expr module against the partition
// columns and evaluated once per distinct partition. Errors:
// InvalidArgument when the predicate does not parse or bind, is not
// BOOLEAN, or names a column that is not a partition column (naming it and
// the partition columns). current_timestamp() in the predicate is `clock`'s
// now.
Result<std::vector<delta::AddFile>> FilterFilesByPartition(const delta::Snapshot& snapshot,
                                                           const std::string& where,
                                                           const Clock& clock = SystemClock());
// FilterFilesByPartition as an OPTIMIZE file filter; null for an empty
// predicate. `clock` must outlive the filter.
delta::OptimizeFileFilter PartitionPredicateFilter(std::string where,
                                                   const Clock* clock = &SystemClock());

struct MaintenanceOptions {
  // Set to true (e.g. from a signal handler) to stop after the current table
  // operation; the wait between runs ends at once.
  std::atomic<bool>* stop_flag = nullptr;
  Clock* clock = nullptr;  // null = the system clock
  // One line per table operation ("[silt] OPTIMIZE <table>: ...").
  std::function<void(const std::string&)> on_report;
};

struct MaintenanceResult {
  int64_t runs = 0;
  int64_t failures = 0;  // failed table operations over all runs
};

// Runs the maintenance job `job` (REQUIRES: job.maintenance is set). Each
// run optimizes and then vacuums every table in order; a failing table is
// reported and the others still run. Without a schedule interval the job
// runs once and returns the first failure; with one it keeps running (until
// maxRuns, or the stop flag) and only reports failures, so that one
// conflicting run does not end a long-lived maintenance process.
// Errors: InvalidArgument for a job that is not a maintenance job; the
// first table failure of a one-shot run.
Result<MaintenanceResult> RunMaintenance(const JobSpec& job, const MaintenanceOptions& options);

// The Delta sink's autoCompact options (sink.options):
//   autoCompact: true                    opt in (default false)
//   autoCompact.everyNCommits: 10        compact after every N batch commits
//   autoCompact.minNumFiles: 50          compact a partition only once it has
//                                        this many small files (Databricks'
//                                        autoCompact.minNumFiles)
//   autoCompact.maxFileSize: 128MB       target size of compacted files
//   autoCompact.minFileSize: maxFileSize / 2   files at or above it are not
//                                        small (never rewritten)
// nullopt when autoCompact is off. Errors: InvalidArgument naming the
// sink.options key with a bad value.
Result<std::optional<delta::AutoCompactOptions>> ParseAutoCompactOptions(
    const std::map<std::string, std::string>& sink_options);

}  // namespace silt::stream
