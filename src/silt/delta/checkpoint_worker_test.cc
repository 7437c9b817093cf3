#include "silt/delta/checkpoint_worker.h"

#include <gtest/gtest.h>

#include <future>
#include <mutex>
#include <vector>

namespace silt::delta {
namespace {

// A task that blocks until released, so the test controls when the worker
// is busy.
struct Gate {
  std::promise<void> started;
  std::promise<void> release;
};

TEST(CheckpointWorkerTest, TrySubmitDropsATaskWhileBusy) {
  CheckpointWorker worker;
  Gate gate;
  std::shared_future<void> release = gate.release.get_future().share();
  ASSERT_TRUE(worker.TrySubmit([&gate, release] {
    gate.started.set_value();
    release.wait();
  }));
  gate.started.get_future().wait();
  bool ran = false;
  EXPECT_FALSE(worker.TrySubmit([&ran] { ran = true; }));
  gate.release.set_value();
  worker.WaitIdle();
  EXPECT_FALSE(ran);
}

TEST(CheckpointWorkerTest, SubmitRunsTheNewestWaitingTaskAfterTheRunningOne) {
  std::mutex mu;
  std::vector<int> ran;
  Gate gate;
  std::shared_future<void> release = gate.release.get_future().share();
  {
    CheckpointWorker worker;
    ASSERT_TRUE(worker.Submit([&, release] {
      gate.started.set_value();
      release.wait();
      std::lock_guard<std::mutex> lock(mu);
      ran.push_back(1);
    }));
    gate.started.get_future().wait();
    for (int i = 2; i <= 4; ++i) {
      EXPECT_TRUE(worker.Submit([&, i] {
        std::lock_guard<std::mutex> lock(mu);
        ran.push_back(i);
      }));
    }
    EXPECT_TRUE(worker.Busy());
    gate.release.set_value();
    // The destructor drains the waiting task.
  }
  EXPECT_EQ(ran, (std::vector<int>{1, 4}));
}

}  // namespace
}  // namespace silt::delta
