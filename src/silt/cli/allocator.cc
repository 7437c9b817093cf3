#include "silt/cli/allocator.h"

#include <algorithm>
#include <cstdlib>
#include <thread>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace silt::cli {

namespace {

bool UserTunables() { return std::getenv("GLIBC_TUNABLES") != nullptr; }

}  // namespace

// By default a block freed above the mmap threshold raises that threshold to
// its size (up to 32 MiB) and the trim threshold to twice that, and the top
// of a heap is handed back to the OS whenever more than the trim threshold
// is free there: each batch of a query (tens of MB of record, column and
// page buffers, freed at its end) was mmapped or trimmed and then faulted in
// again by the next one. Fixed thresholds keep such buffers in the heap
// (setting one also stops the dynamic adjustment), and the top pad grows the
// main heap in 8 MiB steps instead of one system call per block. Memory
// still goes back to the OS where it went before: malloc_trim(0) after each
// Delta checkpoint and compaction (decisions 57, 170), and blocks of 32 MiB
// and more are still mmapped and unmapped on free.
void ConfigureAllocator() {
#if defined(__GLIBC__)
  if (UserTunables()) return;
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  mallopt(M_TOP_PAD, 8 << 20);
#endif
}

// A Kafka query's records are allocated by librdkafka's broker thread (one
// op per record, in that thread's own arena, which grows a page at a time)
// and freed by the query thread once copied, so both threads take the
// broker arena's lock for every record. With one thread reading,
// transforming and writing, the process keeps one arena: no arena per
// librdkafka thread and checkpoint worker, each with its own free memory
// (workload B's RSS about 10 MB lower, decision 194). With several query
// threads they would all take that one arena's lock (decision 187 measured
// 5 % more CPU at `parallelism: 2`), so glibc's default stays.
int ArenaLimitFor(std::optional<int> parallelism) {
  const int threads =
      parallelism.value_or(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  return threads <= 1 ? 1 : 0;
}

void ConfigureArenas(std::optional<int> parallelism) {
#if defined(__GLIBC__)
  if (UserTunables()) return;
  const int limit = ArenaLimitFor(parallelism);
  if (limit > 0) mallopt(M_ARENA_MAX, limit);
#else
  (void)parallelism;
#endif
}

}  // namespace silt::cli
