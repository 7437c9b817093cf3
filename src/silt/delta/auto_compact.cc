#include "silt/delta/auto_compact.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <memory>
#include <utility>

#include "silt/base/logging.h"
#include "silt/delta/optimize.h"
#include "silt/delta/partition_utils.h"

namespace silt::delta {

std::vector<AddFile> AutoCompactSelector::Select(const Snapshot& snapshot) {
  const int64_t min_file_bytes = options_.EffectiveMinFileBytes();
  // A group of one file cannot be compacted, whatever minNumFiles says.
  const auto min_files = static_cast<size_t>(std::max<int64_t>(options_.min_num_files, 2));
  std::unordered_map<std::string, int> live;
  // Files by partition key and generation.
  std::map<std::string, std::map<int, std::vector<const AddFile*>>> groups;
  for (const AddFile& add : snapshot.files()) {
    if (add.size >= min_file_bytes) continue;
    auto it = generations_.find(add.path);
    const int generation = it == generations_.end() ? 0 : it->second;
    live.emplace(add.path, generation);
    groups[PartitionKey(add.partition_values)][generation].push_back(&add);
  }
  generations_ = std::move(live);
  compacted_.clear();
  std::vector<AddFile> chosen;
  for (const auto& [key, by_generation] : groups) {
    for (const auto& [generation, files] : by_generation) {
      if (files.size() < min_files) continue;
      for (const AddFile* add : files) chosen.push_back(*add);
      int& highest = compacted_[key];
      highest = std::max(highest, generation);
    }
  }
  return chosen;
}

void AutoCompactSelector::Compacted(const std::vector<AddFile>& added) {
  const int64_t min_file_bytes = options_.EffectiveMinFileBytes();
  for (const AddFile& add : added) {
    if (add.size >= min_file_bytes) continue;
    auto it = compacted_.find(PartitionKey(add.partition_values));
    generations_[add.path] = (it == compacted_.end() ? 0 : it->second) + 1;
  }
  compacted_.clear();
}

int AutoCompactSelector::Generation(const std::string& path) const {
  auto it = generations_.find(path);
  return it == generations_.end() ? -1 : it->second;
}

AutoCompactor::AutoCompactor(fs::FileSystemPtr fs, std::string table_path,
                             AutoCompactOptions options)
    : fs_(std::move(fs)),
      table_path_(std::move(table_path)),
      options_(options),
      selector_(options) {}

AutoCompactor::~AutoCompactor() { Wait(); }

void AutoCompactor::Wait() {
  if (thread_.joinable()) thread_.join();
}

void AutoCompactor::OnCommit(SnapshotPtr latest) {
  ++commits_since_last_;
  if (commits_since_last_ < options_.every_n_commits || running_.load()) return;
  // A state that has not seen this compactor's last commit would select the
  // files it removed (a Conflict, and a rewrite thrown away); the writer
  // reads that commit before its next one (CommitAndAdvance leaves its
  // state behind when another writer committed in between).
  if (latest != nullptr &&
      (latest->files_elided() || latest->version() < last_commit_version_.load())) {
    return;
  }
  if (thread_.joinable()) thread_.join();  // the previous one has finished
  commits_since_last_ = 0;
  running_.store(true);
  thread_ = std::thread([this, latest = std::move(latest)]() mutable { Run(std::move(latest)); });
}

void AutoCompactor::Run(SnapshotPtr latest) {
  if (table_ == nullptr) {
    Result<std::unique_ptr<DeltaTable>> table = DeltaTable::Open(fs_, table_path_);
    if (!table.ok()) {
      SILT_LOG_WARN("autoCompact", "cannot open ", table_path_, ": ", table.status().message());
      running_.store(false);
      return;
    }
    table_ = std::move(*table);
  }
  // The writer's state, shared and read-only (decision 192); else this
  // compactor's own, brought up to date.
  SnapshotPtr state = std::move(latest);
  if (state != nullptr) {
    snapshot_.reset();
  } else {
    Result<SnapshotPtr> snapshot =
        snapshot_ ? table_->Update(std::move(snapshot_)) : table_->LatestSnapshot();
    snapshot_.reset();
    if (!snapshot.ok()) {
      SILT_LOG_WARN("autoCompact", "cannot read ", table_path_,
                    " (the stream continues): ", snapshot.status().message());
      running_.store(false);
      return;
    }
    snapshot_ = *snapshot;
    state = snapshot_;
  }
  OptimizeOptions optimize;
  optimize.snapshot = state;
  optimize.target_file_bytes = options_.max_file_bytes;
  optimize.row_group_bytes = options_.row_group_bytes;
  optimize.min_input_files = 2;
  optimize.auto_compact = true;
  optimize.file_filter = [this](const Snapshot& s) -> Result<std::vector<AddFile>> {
    return selector_.Select(s);
  };
  Result<OptimizeResult> result = Optimize(table_.get(), optimize);
  if (!result.ok()) {
    SILT_LOG_WARN("autoCompact", "compaction of ", table_path_,
                  " failed (the stream continues): ", result.status().message());
  } else if (result->version >= 0) {
    selector_.Compacted(result->added_files);
    last_commit_version_.store(result->version);
    compactions_.fetch_add(1);
  }
  // Nothing of the writer's state outlives the run: the writer's next
  // commit then advances it without copying its file lists.
  optimize.snapshot.reset();
  state.reset();
#if defined(__GLIBC__)
  // The compaction decoded its input and encoded its output in this
  // thread's malloc arena; glibc keeps freed memory there (and raises its
  // mmap threshold to the largest block freed), so the process would keep
  // the peak of every compaction. Hand the free pages back (decision 170).
  malloc_trim(0);
#endif
  running_.store(false);
}

}  // namespace silt::delta
