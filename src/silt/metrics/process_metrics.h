// The process metrics Prometheus' client libraries export under their
// standard names, read from /proc/self on every scrape:
//   process_cpu_seconds_total        user + system CPU time
//   process_resident_memory_bytes    resident set size
//   process_virtual_memory_bytes     virtual memory size
//   process_start_time_seconds       start time, seconds since the epoch
//   process_open_fds                 open file descriptors
// On a system without /proc the values stay 0.
//
// Thread safety: as Registry.
#pragma once

#include <cstdint>

#include "silt/metrics/registry.h"

namespace silt::metrics {

// Registers the families above and a refresher that fills them.
void AddProcessMetrics(Registry* registry);

// What /proc/self/stat says now (exposed for tests). `ok` is false when it
// could not be read.
struct ProcessStats {
  bool ok = false;
  double cpu_seconds = 0;
  int64_t resident_bytes = 0;
  int64_t virtual_bytes = 0;
  double start_time_seconds = 0;
  int64_t open_fds = 0;
};
ProcessStats ReadProcessStats();

}  // namespace silt::metrics
