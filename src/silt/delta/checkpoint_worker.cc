#include "silt/delta/checkpoint_worker.h"

#include <algorithm>
#include <chrono>
#include <utility>

namespace silt::delta {

namespace {

// A pause re-reads the clock at least this often, so that a clock other
// than the system's (tests) is followed without a notification.
constexpr int64_t kPausePollMicros = 50'000;

}  // namespace

CheckpointWorker::CheckpointWorker(CheckpointPacing pacing, Clock* clock)
    : pacing_(pacing), clock_(clock) {}

CheckpointWorker::~CheckpointWorker() {
  {
    std::unique_lock<std::mutex> lock(mu_);
    ++hurry_;
    cv_.notify_all();
    cv_.wait(lock, [this] { return !busy_; });
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void CheckpointWorker::StartLocked() {
  if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
}

bool CheckpointWorker::TrySubmit(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (running_ || stop_) return false;
    busy_ = true;
    task_ = std::move(task);
    StartLocked();
  }
  cv_.notify_all();
  return true;
}

bool CheckpointWorker::Submit(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return false;
    if (running_) {
      waiting_ = std::move(task);
      return true;
    }
    busy_ = true;
    task_ = std::move(task);
    StartLocked();
  }
  cv_.notify_all();
  return true;
}

bool CheckpointWorker::Busy() {
  std::lock_guard<std::mutex> lock(mu_);
  return busy_;
}

void CheckpointWorker::WaitIdle() {
  std::unique_lock<std::mutex> lock(mu_);
  ++hurry_;
  cv_.notify_all();
  cv_.wait(lock, [this] { return !busy_; });
  --hurry_;
}

int64_t CheckpointWorker::not_before_micros() {
  std::lock_guard<std::mutex> lock(mu_);
  return not_before_micros_;
}

void CheckpointWorker::AddCommitBytes(int64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  commit_bytes_total_ += bytes;
}

int64_t CheckpointWorker::commit_bytes_total() {
  std::lock_guard<std::mutex> lock(mu_);
  return commit_bytes_total_;
}

void CheckpointWorker::RecordCheckpoint(int64_t checkpoint_bytes, int64_t commit_bytes_mark) {
  std::lock_guard<std::mutex> lock(mu_);
  if (commit_bytes_mark < checkpoint_mark_) return;
  checkpoint_bytes_ = checkpoint_bytes;
  checkpoint_mark_ = commit_bytes_mark;
}

bool CheckpointWorker::CheckpointBytesDue() {
  std::lock_guard<std::mutex> lock(mu_);
  if (pacing_.bytes_factor <= 0 || checkpoint_mark_ < 0) return true;
  if (checkpoint_bytes_ <= pacing_.bytes_floor) return true;
  // Overflow-safe form of (total - mark) * factor >= checkpoint bytes.
  const int64_t since = commit_bytes_total_ - checkpoint_mark_;
  return since >= (checkpoint_bytes_ + pacing_.bytes_factor - 1) / pacing_.bytes_factor;
}

void CheckpointWorker::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stop_ || task_ != nullptr; });
    if (task_ == nullptr) return;  // stop_ and nothing left to run
    // The pause after the previous task; a newer task submitted meanwhile
    // replaces task_ and still waits for its end.
    while (hurry_ == 0 && !stop_) {
      const int64_t remaining = not_before_micros_ - clock_->MonotonicMicros();
      if (remaining <= 0) break;
      cv_.wait_for(lock, std::chrono::microseconds(std::min(remaining, kPausePollMicros)));
    }
    std::function<void()> task = std::move(task_);
    task_ = nullptr;
    running_ = true;
    lock.unlock();
    const int64_t start = clock_->MonotonicMicros();
    task();
    const int64_t took = std::max<int64_t>(0, clock_->MonotonicMicros() - start);
    // Whatever the task captured (a snapshot) is released before the
    // handle counts as idle.
    task = nullptr;
    lock.lock();
    running_ = false;
    const int64_t pause = std::min((std::max<int64_t>(pacing_.period_factor, 1) - 1) * took,
                                   pacing_.max_pause_micros);
    not_before_micros_ = start + took + pause;
    if (waiting_ != nullptr) {
      task_ = std::move(waiting_);
      waiting_ = nullptr;
      continue;
    }
    busy_ = false;
    cv_.notify_all();
  }
}

}  // namespace silt::delta
