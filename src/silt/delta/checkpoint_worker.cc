#include "silt/delta/checkpoint_worker.h"

#include <utility>

namespace silt::delta {

CheckpointWorker::~CheckpointWorker() {
  {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return !busy_; });
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool CheckpointWorker::TrySubmit(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (busy_ || stop_) return false;
    busy_ = true;
    task_ = std::move(task);
    if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
  }
  cv_.notify_all();
  return true;
}

bool CheckpointWorker::Submit(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return false;
    if (busy_) {
      waiting_ = std::move(task);
      return true;
    }
    busy_ = true;
    task_ = std::move(task);
    if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
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
  cv_.wait(lock, [this] { return !busy_; });
}

void CheckpointWorker::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stop_ || task_ != nullptr; });
    if (task_ == nullptr) return;  // stop_ and nothing left to run
    std::function<void()> task = std::move(task_);
    task_ = nullptr;
    lock.unlock();
    task();
    // Whatever the task captured (a snapshot) is released before the
    // handle counts as idle.
    task = nullptr;
    lock.lock();
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
