// glibc malloc settings for the `silt` process (decisions 187, 194). No-ops
// on other C libraries, and when GLIBC_TUNABLES is set (the user's settings
// are left alone).
//
// Thread safety: call from the main thread, before the threads they are
// meant to govern start (malloc reads the arena limit when a thread first
// allocates).
#pragma once

#include <optional>

namespace silt::cli {

// At start-up: fixed mmap and trim thresholds and a top pad, so a batch's
// freed buffers stay in the heap for the next batch (decision 187).
void ConfigureAllocator();

// The malloc arena limit for a query run with `parallelism` threads (the
// job's key; nullopt: the machine's cores): 1 when the query runs on one
// thread, else 0 (glibc's default, eight arenas per core).
int ArenaLimitFor(std::optional<int> parallelism);

// Sets ArenaLimitFor(parallelism) as glibc's arena limit (M_ARENA_MAX) when
// it is not 0. Call after the job file is read and before the query's
// threads (and librdkafka's) start.
void ConfigureArenas(std::optional<int> parallelism);

}  // namespace silt::cli
