// The post-commit checkpoint and log cleanup (post_commit.h).

#include "silt/delta/post_commit.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <memory>
#include <optional>
#include <utility>

#include "silt/base/clock.h"
#include "silt/base/logging.h"
#include "silt/delta/checkpoint_classic_incremental.h"
#include "silt/delta/checkpoint_worker.h"
#include "silt/delta/checkpoint_writer.h"
#include "silt/delta/log_cleanup.h"
#include "silt/delta/table_properties.h"

namespace silt::delta::post_commit_internal {

namespace {

int64_t NowMillis() { return SystemClock().NowMicros() / 1000; }

// After committing `version`: a checkpoint every delta.checkpointInterval
// versions, then expired log cleanup.
// `snapshot` (may be null) is the state at `version` when the committer
// knows it (CommitAndAdvance), else the state the commit was made on: either
// spares re-reading the previous checkpoint. `commit_bytes_mark` (set on a
// handle with background checkpoints) is the worker's commit byte total at
// `version`, recorded with the checkpoint's size for byte pacing in `worker`,
// passed in rather than read from `table`: a background task may still run
// while ~DeltaTable resets the handle's worker pointer. Returns false when a
// checkpoint was due and not written.
bool PostCommit(DeltaTable* table, const SnapshotPtr& snapshot_hint, const Metadata& metadata,
                int64_t version, std::optional<int64_t> commit_bytes_mark,
                CheckpointWorker* worker) {
  Result<bool> due = ShouldCheckpoint(metadata, version);
  if (!due.ok()) {
    SILT_LOG_WARN("delta", "not checkpointing ", table->path(), " at version ", version, ": ",
                  due.status().ToString());
    return true;
  }
  if (!*due) return true;
  Result<SnapshotPtr> snapshot = Status::NotFound("no snapshot yet");
  if (snapshot_hint != nullptr && snapshot_hint->version() == version) {
    snapshot = snapshot_hint;
  } else if (snapshot_hint != nullptr && snapshot_hint->version() < version) {
    snapshot = table->Update(snapshot_hint);
  }
  // Another writer may have committed after `version`: the checkpoint is
  // for `version` itself.
  if (!snapshot.ok() || (*snapshot)->version() != version) snapshot = table->SnapshotAt(version);
  if (!snapshot.ok()) {
    SILT_LOG_WARN("delta", "checkpoint of ", table->path(), " at version ", version,
                  " skipped: ", snapshot.status().ToString());
    return false;
  }
  const int64_t now_ms = NowMillis();
  Result<CheckpointInfo> checkpoint = WriteWriterCheckpoint(table, **snapshot, now_ms);
  if (!checkpoint.ok()) {
    SILT_LOG_WARN("delta", "checkpoint of ", table->path(), " at version ", version,
                  " failed (the commit stands): ", checkpoint.status().ToString());
    return false;
  }
  SILT_LOG_DEBUG("delta", "wrote checkpoint ", checkpoint->path, " (", checkpoint->num_actions,
                 " actions)");
  if (commit_bytes_mark && worker != nullptr) {
    worker->RecordCheckpoint(checkpoint->size_in_bytes, *commit_bytes_mark);
  }
#if defined(__GLIBC__)
  // Encoding the checkpoint allocated and freed buffers of the size of the
  // table state; glibc keeps such memory in its heaps (its mmap threshold
  // rises to the largest block freed), so a long-running writer whose table
  // grows would hold ever more of it. Hand the free pages back.
  malloc_trim(0);
#endif
  // Cleanup lists the whole log. Its cutoff is a UTC day boundary, so after
  // one pass no file becomes expired until the cutoff moves (files written
  // later are newer than it): a writer that checkpoints every few seconds
  // lists the log once a day per retention setting, not once a checkpoint.
  const Metadata& current = (*snapshot)->metadata();
  Result<bool> enabled = EnableExpiredLogCleanup(current.configuration);
  Result<int64_t> retention_ms = LogRetentionMs(current.configuration);
  std::optional<int64_t> cutoff_ms;
  if (enabled.ok() && *enabled && retention_ms.ok()) {
    cutoff_ms = TruncateToDayUtc(now_ms - *retention_ms);
    if (table->last_log_cleanup_cutoff_ms() == cutoff_ms) return true;
    // The cutoff moved (a new UTC day), but the oldest commit the last pass
    // left is still after it: nothing can expire, and listing a fast
    // stream's log (~13 MB for 86,000 files) would only cost memory.
    const std::optional<int64_t> oldest = table->log_oldest_commit_time_ms();
    if (oldest && *oldest > *cutoff_ms) {
      table->set_last_log_cleanup_cutoff_ms(*cutoff_ms);
      return true;
    }
  }
  LogCleanupOptions cleanup_options;
  Result<int64_t> protected_before =
      CheckpointProtectedBeforeVersion((*snapshot)->protocol(), current);
  if (!protected_before.ok()) {
    SILT_LOG_WARN("delta", "expired log cleanup of ", table->path(),
                  " skipped: ", protected_before.status().ToString());
    return true;
  }
  cleanup_options.protected_before_version = *protected_before;
  Result<LogCleanupResult> cleanup = CleanUpExpiredLogs(
      table->file_system().get(), table->log_path(), current, now_ms, cleanup_options);
  if (!cleanup.ok()) {
    SILT_LOG_WARN("delta", "expired log cleanup of ", table->path(),
                  " failed: ", cleanup.status().ToString());
  } else if (cutoff_ms) {
    table->set_last_log_cleanup_cutoff_ms(*cutoff_ms);
    table->set_log_oldest_commit_time_ms(cleanup->oldest_commit_file_time_ms);
  }
  return true;
}

}  // namespace

bool PostCommitInline(DeltaTable* table, const SnapshotPtr& snapshot_hint, const Metadata& metadata,
                      int64_t version) {
  Result<bool> due = ShouldCheckpoint(metadata, version);
  if (due.ok() && !*due) return true;  // nothing to write: no wait either
  table->WaitForBackgroundCheckpoint();
  std::optional<int64_t> mark;
  CheckpointWorker* worker = nullptr;
  if (table->background_checkpoints()) {
    worker = table->checkpoint_worker();
    mark = worker->commit_bytes_total();
  }
  return PostCommit(table, snapshot_hint, metadata, version, mark, worker);
}

bool PostCommitAdvanced(DeltaTable* table, const SnapshotPtr& committed, const Metadata& metadata,
                        int64_t version, int64_t commit_bytes) {
  if (table->background_checkpoints()) table->checkpoint_worker()->AddCommitBytes(commit_bytes);
  Result<bool> due = ShouldCheckpoint(metadata, version);
  if (due.ok() && !*due) return true;  // most commits: nothing to write, no wait
  if (!due.ok() || !table->background_checkpoints() || committed == nullptr) {
    return PostCommitInline(table, committed, metadata, version);
  }
  if (table->elide_checkpointed_files()) {
    // A V2 checkpoint's files are dropped right after it (inline); an
    // incremental classic one's once it is written (decision 161: the next
    // commit's ElideClassicCheckpointedFiles), so it may run behind.
    Result<bool> classic = UsesIncrementalClassicCheckpoint(*table, *committed);
    if (!classic.ok() || !*classic) return PostCommitInline(table, committed, metadata, version);
    // A state without its checkpointed files builds on the handle's last
    // checkpoint; without it (a failed one) the inline path says so and the
    // state is read whole again.
    if (committed->files_elided()) {
      std::shared_ptr<ClassicCheckpointPlan> plan = table->classic_checkpoint_plan();
      if (plan != nullptr && plan->version > committed->elided_since()) {
        // One finished after this commit dropped the files of the last:
        // skipped, as when it is still running; the next commit catches up.
        SILT_LOG_DEBUG("delta", "checkpoint of ", table->path(), " at version ", version,
                       " skipped: the previous one has just been written");
        return true;
      }
      if (plan == nullptr || plan->version != committed->elided_since()) {
        return PostCommitInline(table, committed, metadata, version);
      }
    }
  } else if (committed->files_elided()) {
    return PostCommitInline(table, committed, metadata, version);
  }
  // Byte pacing (decision 189): the commits since the last checkpoint are
  // still too few bytes for another copy of the whole state.
  CheckpointWorker* worker = table->checkpoint_worker();
  if (!worker->CheckpointBytesDue()) {
    SILT_LOG_DEBUG("delta", "checkpoint of ", table->path(), " at version ", version,
                   " skipped: the commits since the last one hold too few bytes");
    return true;
  }
  // A whole state may wait for the running checkpoint and be written after
  // it (decision 162: with several writers, the writer of a due version
  // writes its checkpoint as Spark's does). A state without its
  // checkpointed files builds on the handle's last checkpoint, which the
  // running one is about to replace: it is skipped instead.
  auto task = [table, committed, metadata, version, worker, mark = worker->commit_bytes_total()] {
    PostCommit(table, committed, metadata, version, mark, worker);
  };
  const bool submitted = committed->files_elided() ? worker->TrySubmit(std::move(task))
                                                   : worker->Submit(std::move(task));
  if (!submitted) {
    SILT_LOG_DEBUG("delta", "checkpoint of ", table->path(), " at version ", version,
                   " skipped: the previous one is still being written");
  }
  return true;
}

}  // namespace silt::delta::post_commit_internal
