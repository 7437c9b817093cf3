// CheckpointWorker: the background thread of a DeltaTable handle that writes
// a streaming writer's checkpoints off its commit path
// (DeltaTable::set_background_checkpoints, decision 152). It runs one task at
// a time. TrySubmit takes a task only when idle (the caller skips a
// checkpoint that comes due while the previous one is still being written);
// Submit keeps the newest task that came while one was running and runs it
// next, dropping an older waiting one (decision 162).
//
// Thread safety: TrySubmit, Busy and WaitIdle may be called from any thread;
// the destructor waits for the running task, so whatever a task references
// must outlive the worker.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace silt::delta {

class CheckpointWorker {
 public:
  CheckpointWorker() = default;
  ~CheckpointWorker();
  CheckpointWorker(const CheckpointWorker&) = delete;
  CheckpointWorker& operator=(const CheckpointWorker&) = delete;

  // Runs `task` on the worker thread (started on first use) unless a task is
  // still running; false then, and `task` is dropped.
  bool TrySubmit(std::function<void()> task);
  // Runs `task` now if idle, else after the running task, in place of any
  // task already waiting (which is dropped). False once stopping.
  bool Submit(std::function<void()> task);
  // True while a task is queued or running.
  bool Busy();
  // Returns once no task is queued or running.
  void WaitIdle();

 private:
  void Loop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::function<void()> task_;
  // The newest task submitted while task_ ran (Submit).
  std::function<void()> waiting_;
  bool busy_ = false;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace silt::delta
