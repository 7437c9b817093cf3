// CheckpointWorker: the background thread of a DeltaTable handle that writes
// a streaming writer's checkpoints off its commit path
// (DeltaTable::set_background_checkpoints, decision 152). It runs one task at
// a time. TrySubmit takes a task only when none is running (the caller skips
// a checkpoint that comes due while the previous one is still being
// written); Submit keeps the newest task that came while one was running and
// runs it next, dropping an older waiting one (decision 162).
//
// Pacing (decision 178): after a task that ran for t, the next one does not
// start before k·t has passed since that task started (CheckpointPacing), so
// the worker spends at most a 1/k share of wall time on checkpoints (each
// the whole table state with classic checkpoints) and a fast stream's
// batches keep the disk and the CPU for themselves; the pause is capped, so
// the table's newest checkpoint falls behind by a bounded number of commits. A task
// submitted meanwhile waits, the newest replacing an older one (by either
// call: no checkpoint runs in between, so the one the waiting task builds on
// is still the handle's last). WaitIdle and the destructor cut the pause
// short: the waiting task runs at once.
//
// Byte pacing (decision 189): the writer reports each commit's bytes and
// each checkpoint written through the handle reports its own; a due
// checkpoint is submitted only once the commits since the last one hold at
// least 1/bytes_factor of that checkpoint's bytes (CheckpointBytesDue;
// checkpoints up to bytes_floor are not paced). A
// log keeps its checkpoints as long as its commits (delta.logRetentionDuration),
// so without this a fast stream's checkpoints, each the whole table state,
// grew the log by the state's size every few dozen commits; with it they add
// at most bytes_factor times the bytes of the commits.
//
// Thread safety: TrySubmit, Submit, Busy and WaitIdle may be called from any
// thread; the destructor runs the waiting task and waits for it, so whatever
// a task references must outlive the worker.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

#include "silt/base/clock.h"

namespace silt::delta {

// How much of its time a handle's checkpoint worker may spend writing.
struct CheckpointPacing {
  // k: a task that ran for t is followed by the next no sooner than k·t
  // after it started. 1 runs tasks back to back (no pacing).
  int64_t period_factor = 10;
  // The pause after a task (the (k-1)·t above) is never longer than this,
  // which bounds how far the table's newest checkpoint falls behind.
  int64_t max_pause_micros = 10'000'000;
  // A checkpoint of S bytes is followed by the next only once the commits
  // since it hold S / bytes_factor bytes. 0 turns byte pacing off.
  int64_t bytes_factor = 10;
  // Checkpoints up to this size are written whenever due: a small table's
  // checkpoint is mostly its fixed footer and costs little.
  int64_t bytes_floor = 1 << 20;
};

class CheckpointWorker {
 public:
  // `clock` (not owned; must outlive the worker) times tasks and pauses.
  explicit CheckpointWorker(CheckpointPacing pacing = {}, Clock* clock = &SystemClock());
  ~CheckpointWorker();
  CheckpointWorker(const CheckpointWorker&) = delete;
  CheckpointWorker& operator=(const CheckpointWorker&) = delete;

  // Runs `task` on the worker thread (started on first use) unless a task is
  // running; false then, and `task` is dropped. During a pause it waits for
  // the pause's end in place of any task already waiting.
  bool TrySubmit(std::function<void()> task);
  // Runs `task` now if idle, else after the running task or the pause, in
  // place of any task already waiting (which is dropped). False once
  // stopping.
  bool Submit(std::function<void()> task);
  // True while a task is waiting or running.
  bool Busy();
  // Returns once no task is waiting or running; a task waiting for the end
  // of a pause runs at once.
  void WaitIdle();
  // The monotonic time (Clock::MonotonicMicros) before which no next task
  // starts; 0 before the first task.
  int64_t not_before_micros();

  // Byte pacing. Adds a commit's bytes to the running total.
  void AddCommitBytes(int64_t bytes);
  // The running total of commit bytes, to pass to RecordCheckpoint for a
  // checkpoint of the version committed last.
  int64_t commit_bytes_total();
  // A checkpoint of `checkpoint_bytes` was written for the version at which
  // the running total was `commit_bytes_mark`. An older checkpoint finishing
  // after a newer one was recorded is ignored.
  void RecordCheckpoint(int64_t checkpoint_bytes, int64_t commit_bytes_mark);
  // True when the commits since the last recorded checkpoint hold at least
  // 1/bytes_factor of its bytes; true before the first, after one of at most
  // bytes_floor, and without pacing.
  bool CheckpointBytesDue();

 private:
  void Loop();
  // Starts the thread if needed. REQUIRES: mu_ held.
  void StartLocked();

  const CheckpointPacing pacing_;
  Clock* const clock_;
  std::mutex mu_;
  std::condition_variable cv_;
  // The next task to run: waiting for a pause to end, or about to run.
  std::function<void()> task_;
  // The newest task submitted while a task ran (Submit).
  std::function<void()> waiting_;
  bool busy_ = false;     // a task waits or runs
  bool running_ = false;  // a task runs
  int hurry_ = 0;         // callers of WaitIdle / the destructor: no pause
  bool stop_ = false;
  int64_t not_before_micros_ = 0;
  int64_t commit_bytes_total_ = 0;
  int64_t checkpoint_bytes_ = 0;  // the last recorded checkpoint's size
  int64_t checkpoint_mark_ = -1;  // and the commit total at its version
  std::thread thread_;
};

}  // namespace silt::delta
