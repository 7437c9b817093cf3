// AutoCompactor: opt-in background compaction of a table that a writer keeps
// appending to (the streaming Delta sink's autoCompact option): every N
// commits it starts an OPTIMIZE in a background thread, without holding up
// the writer.
//
// It relies on OPTIMIZE committing with dataChange = false, which commutes
// with blind appends (optimize.h), so the writer's commits never conflict
// with it.
//
// Thread safety: driven by one (the writer's) thread; owns one background
// thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

#include "silt/fs/file_system.h"

namespace silt::delta {

struct AutoCompactOptions {
  // Compact after every N commits.
  int64_t every_n_commits = 10;
  // Compact a partition only once it has this many small files (Databricks'
  // autoCompact.minNumFiles).
  int64_t min_num_files = 50;
  // Target size of compacted files.
  int64_t max_file_bytes = 128LL * 1024 * 1024;
};

// Starts a background OPTIMIZE of a table every N commits. At most one
// compaction runs at a time; commits that arrive meanwhile only count
// towards the next one. Failures (a Conflict with another compaction, I/O
// errors) are logged as warnings: the writer is never stopped by them.
class AutoCompactor {
 public:
  AutoCompactor(fs::FileSystemPtr fs, std::string table_path, AutoCompactOptions options);
  // Waits for a running compaction to finish.
  ~AutoCompactor();
  AutoCompactor(const AutoCompactor&) = delete;
  AutoCompactor& operator=(const AutoCompactor&) = delete;

  // Called after each commit; may start a compaction.
  void OnCommit();
  // Compactions that committed a version so far.
  int64_t compactions() const { return compactions_.load(); }

 private:
  void Run();

  fs::FileSystemPtr fs_;
  std::string table_path_;
  AutoCompactOptions options_;
  int64_t commits_since_last_ = 0;
  std::thread thread_;
  std::atomic<bool> running_{false};
  std::atomic<int64_t> compactions_{0};
};

}  // namespace silt::delta
