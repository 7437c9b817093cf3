// CheckpointLock: an exclusive flock(2) on `<checkpoint>/.silt-lock`, held
// for a query's life so that a second silt process (or a second query in the
// same process) on the same local checkpoint refuses to start instead of
// racing on offsets/N. The lock file holds the owner's pid for the message.
// The kernel releases the lock when the process dies, so a SIGKILLed query
// never leaves a stale lock behind.
//
// Only local checkpoints are locked; on object stores the put-if-absent of
// offsets/N and commits/N is what detects a second writer.
//
// Thread safety: not shared between threads.
#pragma once

#include <memory>
#include <string>

#include "silt/base/result.h"

namespace silt::stream {

class CheckpointLock {
 public:
  // Creates the checkpoint directory and takes the lock. Errors: Conflict
  // "checkpoint <dir> is in use by another silt process (pid N)"; IOError.
  static Result<std::unique_ptr<CheckpointLock>> Acquire(const std::string& local_dir);
  ~CheckpointLock();
  CheckpointLock(const CheckpointLock&) = delete;
  CheckpointLock& operator=(const CheckpointLock&) = delete;

 private:
  explicit CheckpointLock(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace silt::stream
