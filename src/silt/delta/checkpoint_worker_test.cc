#include "silt/delta/checkpoint_worker.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "silt/base/clock.h"

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

// A clock that moves only when told to, safe to read from the worker thread
// while a test moves it.
class TestClock final : public Clock {
 public:
  int64_t NowMicros() const override { return now_.load(); }
  int64_t MonotonicMicros() const override { return now_.load(); }
  void SleepMicros(int64_t micros) override { now_ += micros; }
  void Advance(int64_t micros) { now_ += micros; }

 private:
  std::atomic<int64_t> now_{1'000'000};
};

// Records the tasks that ran, in order.
struct Ran {
  std::mutex mu;
  std::vector<int> ids;
  void Add(int id) {
    std::lock_guard<std::mutex> lock(mu);
    ids.push_back(id);
  }
  std::vector<int> Get() {
    std::lock_guard<std::mutex> lock(mu);
    return ids;
  }
};

TEST(CheckpointWorkerTest, TheNextTaskStartsNoSoonerThanKTimesTheLastOnesDuration) {
  TestClock clock;
  CheckpointWorker worker(CheckpointPacing{.period_factor = 4, .max_pause_micros = 60'000'000},
                          &clock);
  const int64_t start = clock.MonotonicMicros();
  ASSERT_TRUE(worker.Submit([&clock] { clock.Advance(2'000'000); }));  // a task of 2 s
  worker.WaitIdle();
  EXPECT_EQ(worker.not_before_micros(), start + 4 * 2'000'000);
}

TEST(CheckpointWorkerTest, ThePauseIsCapped) {
  TestClock clock;
  CheckpointWorker worker(CheckpointPacing{.period_factor = 4, .max_pause_micros = 1'000'000},
                          &clock);
  const int64_t start = clock.MonotonicMicros();
  ASSERT_TRUE(worker.Submit([&clock] { clock.Advance(2'000'000); }));
  worker.WaitIdle();
  EXPECT_EQ(worker.not_before_micros(), start + 2'000'000 + 1'000'000);
}

// Tasks submitted during the pause wait for its end, the newest replacing
// the older (by Submit or TrySubmit alike); the clock is moved only after
// all were submitted, so without pacing task 2 would run at once.
TEST(CheckpointWorkerTest, TasksSubmittedDuringThePauseWaitAndTheNewestRuns) {
  TestClock clock;
  Ran ran;
  std::promise<void> last_ran;
  CheckpointWorker worker(CheckpointPacing{.period_factor = 4, .max_pause_micros = 60'000'000},
                          &clock);
  ASSERT_TRUE(worker.Submit([&] {
    clock.Advance(1'000'000);
    ran.Add(1);
  }));
  // Task 1 done; its pause lasts 3 s of the test clock.
  while (ran.Get().empty() || worker.not_before_micros() == 0) std::this_thread::yield();
  ASSERT_TRUE(worker.Submit([&] { ran.Add(2); }));
  EXPECT_TRUE(worker.Busy());
  ASSERT_TRUE(worker.TrySubmit([&] { ran.Add(3); }));
  ASSERT_TRUE(worker.Submit([&] {
    ran.Add(4);
    last_ran.set_value();
  }));
  EXPECT_EQ(ran.Get(), (std::vector<int>{1}));
  clock.Advance(3'000'000);
  last_ran.get_future().wait();
  worker.WaitIdle();
  EXPECT_EQ(ran.Get(), (std::vector<int>{1, 4}));
}

TEST(CheckpointWorkerTest, WaitIdleRunsTheTaskWaitingForThePauseAtOnce) {
  TestClock clock;
  Ran ran;
  CheckpointWorker worker(CheckpointPacing{.period_factor = 4, .max_pause_micros = 60'000'000},
                          &clock);
  ASSERT_TRUE(worker.Submit([&] {
    clock.Advance(10'000'000);
    ran.Add(1);
  }));
  worker.WaitIdle();
  ASSERT_TRUE(worker.Submit([&] { ran.Add(2); }));
  // The test clock never reaches the pause's end: only hurrying runs it.
  worker.WaitIdle();
  EXPECT_EQ(ran.Get(), (std::vector<int>{1, 2}));
}

TEST(CheckpointWorkerTest, TheDestructorRunsTheTaskWaitingForThePause) {
  TestClock clock;
  Ran ran;
  {
    CheckpointWorker worker(CheckpointPacing{.period_factor = 4, .max_pause_micros = 60'000'000},
                            &clock);
    ASSERT_TRUE(worker.Submit([&] {
      clock.Advance(10'000'000);
      ran.Add(1);
    }));
    worker.WaitIdle();
    ASSERT_TRUE(worker.TrySubmit([&] { ran.Add(2); }));
  }
  EXPECT_EQ(ran.Get(), (std::vector<int>{1, 2}));
}

TEST(CheckpointWorkerTest, PeriodFactorOneRunsTasksBackToBack) {
  TestClock clock;
  Ran ran;
  CheckpointWorker worker(CheckpointPacing{.period_factor = 1, .max_pause_micros = 60'000'000},
                          &clock);
  ASSERT_TRUE(worker.Submit([&] {
    clock.Advance(10'000'000);
    ran.Add(1);
  }));
  while (ran.Get().empty()) std::this_thread::yield();
  std::promise<void> second;
  ASSERT_TRUE(worker.Submit([&] {
    ran.Add(2);
    second.set_value();
  }));
  // Runs without the clock moving.
  second.get_future().wait();
  worker.WaitIdle();
  EXPECT_EQ(ran.Get(), (std::vector<int>{1, 2}));
}

}  // namespace
}  // namespace silt::delta
