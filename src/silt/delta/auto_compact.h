// AutoCompactor: opt-in background compaction of a table that a writer keeps
// appending to (the streaming Delta sink's autoCompact option): every N
// commits it runs, in a background thread, an OPTIMIZE of the partitions
// that have gathered enough small files, without holding up the writer.
//
// It relies on OPTIMIZE committing with dataChange = false, which commutes
// with blind appends (optimize.h), so the writer's commits never conflict
// with it.
//
// Which files (decision 146): as delta-spark's auto compaction, a file is
// small below minFileSize (default maxFileSize / 2; larger files are never
// rewritten), and a partition is compacted once it holds minNumFiles small
// files that have not been compacted yet. Unlike delta-spark's OPTIMIZE
// executor, which rewrites every small file of the partition each time (so a
// stream's partition is re-read whole at every compaction until its compacted
// file passes minFileSize: quadratic I/O), a compaction's output is only
// compacted again together with minNumFiles other outputs of the same
// generation (tiered, as a log-structured merge): each row is rewritten
// about log_minNumFiles(minFileSize / stream file size) times. Generations
// are kept in memory for the small files only; after a restart the small
// files start again at generation 0 (one extra rewrite at most).
//
// Thread safety: driven by one (the writer's) thread; owns one background
// thread. AutoCompactSelector is not thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "silt/delta/table.h"
#include "silt/fs/file_system.h"

namespace silt::delta {

struct AutoCompactOptions {
  // Compact after every N commits.
  int64_t every_n_commits = 10;
  // Compact a partition only once it has this many small files not yet
  // compacted together (delta-spark's autoCompact.minNumFiles).
  int64_t min_num_files = 50;
  // Target size of compacted files (autoCompact.maxFileSize).
  int64_t max_file_bytes = 128LL * 1024 * 1024;
  // Files at or above this size are not small and never rewritten
  // (autoCompact.minFileSize); -1 = max_file_bytes / 2, as delta-spark.
  int64_t min_file_bytes = -1;
  // The largest row group a compaction writes, encoded (decision 170): what
  // the writer holds before it flushes, and what the next generation's
  // compaction decodes at once (~5 MB uncompressed on workload B), far below
  // OPTIMIZE's 32 MB (decision 147).
  int64_t row_group_bytes = 1LL * 1024 * 1024;

  int64_t EffectiveMinFileBytes() const {
    return min_file_bytes >= 0 ? min_file_bytes : max_file_bytes / 2;
  }
};

// The choice of files to compact (see the header comment), kept apart from
// the thread so it can be tested on its own.
class AutoCompactSelector {
 public:
  explicit AutoCompactSelector(AutoCompactOptions options) : options_(options) {}

  // The small files of `snapshot` to compact now: per partition, the files
  // of each generation that has at least min_num_files of them (all of the
  // generation). Forgets files no longer live; files not seen before are
  // generation 0.
  std::vector<AddFile> Select(const Snapshot& snapshot);
  // Records the files a compaction of the last Select's files wrote: in each
  // partition, one generation above the highest one compacted there.
  void Compacted(const std::vector<AddFile>& added);

  // The generation of a small file seen by Select or Compacted; -1 if none.
  int Generation(const std::string& path) const;
  // Small files tracked (for tests and logs).
  size_t tracked() const { return generations_.size(); }

 private:
  AutoCompactOptions options_;
  // Small live files by path: their generation.
  std::unordered_map<std::string, int> generations_;
  // The last Select's highest compacted generation by partition key.
  std::map<std::string, int> compacted_;
};

// Starts a background OPTIMIZE of a table every N commits. At most one
// compaction runs at a time; commits that arrive meanwhile only count
// towards the next one. Failures (a Conflict with another compaction, I/O
// errors) are logged as warnings: the writer is never stopped by them.
//
// Which state a run selects from (decision 192): a writer that keeps the
// table's state in memory (the streaming sink) passes it to OnCommit, and
// the run reads that immutable snapshot, shared, for as long as it lasts:
// the process then holds one copy of the live files and remove tombstones,
// not two (the tombstones grow with the table's age: ~2 per batch, kept 7
// days). Without one, the compactor keeps its own snapshot between runs and
// brings it up to date from the commits since (DeltaTable::Update), so a run
// reads the new commits, not the table's checkpoint.
class AutoCompactor {
 public:
  AutoCompactor(fs::FileSystemPtr fs, std::string table_path, AutoCompactOptions options);
  // Waits for a running compaction to finish.
  ~AutoCompactor();
  AutoCompactor(const AutoCompactor&) = delete;
  AutoCompactor& operator=(const AutoCompactor&) = delete;

  // Called after each commit; may start a compaction. `latest`, when given,
  // is the caller's state of the table after that commit (a writer's
  // CommitAndAdvance snapshot, not files_elided): the run selects from it
  // and holds it only while it runs. A state older than this compactor's
  // last commit (the writer has not read that commit yet) starts nothing:
  // the next commit tries again.
  void OnCommit(SnapshotPtr latest = nullptr);
  // Compactions that committed a version so far.
  int64_t compactions() const { return compactions_.load(); }
  // Waits for a running compaction (tests).
  void Wait();

 private:
  void Run(SnapshotPtr latest);

  fs::FileSystemPtr fs_;
  std::string table_path_;
  AutoCompactOptions options_;
  int64_t commits_since_last_ = 0;
  // Used by the background thread only (one run at a time).
  std::unique_ptr<DeltaTable> table_;
  // Kept between runs only for callers that pass no state to OnCommit.
  SnapshotPtr snapshot_;
  // The version of this compactor's last compaction commit (-1: none yet);
  // written by the background thread, read by OnCommit.
  std::atomic<int64_t> last_commit_version_{-1};
  AutoCompactSelector selector_;
  std::thread thread_;
  std::atomic<bool> running_{false};
  std::atomic<int64_t> compactions_{0};
};

}  // namespace silt::delta
