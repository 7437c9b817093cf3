#include "silt/delta/checkpoint_worker.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <mutex>
#include <optional>
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

// The paced worker's tests: a worker on the test clock, pausing
// `period_factor` times the last task's duration, capped at
// `max_pause_micros`. Declared after the clock and the record it uses, so
// it is destroyed (and drained) first.
class PacedCheckpointWorkerTest : public ::testing::Test {
 protected:
  CheckpointWorker& StartWorker(int64_t period_factor, int64_t max_pause_micros = 60'000'000) {
    return worker_.emplace(
        CheckpointPacing{.period_factor = period_factor, .max_pause_micros = max_pause_micros},
        &clock_);
  }

  // Submits task `id`, which takes `micros` of the test clock, and waits for
  // it: the worker then pauses until (k - 1) * micros from now.
  void RunTimedTask(int id, int64_t micros) {
    ASSERT_TRUE(worker_->Submit([this, id, micros] {
      clock_.Advance(micros);
      ran_.Add(id);
    }));
    worker_->WaitIdle();
  }

  TestClock clock_;
  Ran ran_;
  std::optional<CheckpointWorker> worker_;
};

TEST_F(PacedCheckpointWorkerTest, TheNextTaskStartsNoSoonerThanKTimesTheLastOnesDuration) {
  CheckpointWorker& worker = StartWorker(4);
  const int64_t start = clock_.MonotonicMicros();
  RunTimedTask(1, 2'000'000);
  EXPECT_EQ(worker.not_before_micros(), start + 4 * 2'000'000);
}

TEST_F(PacedCheckpointWorkerTest, ThePauseIsCapped) {
  CheckpointWorker& worker = StartWorker(4, /*max_pause_micros=*/1'000'000);
  const int64_t start = clock_.MonotonicMicros();
  RunTimedTask(1, 2'000'000);
  EXPECT_EQ(worker.not_before_micros(), start + 2'000'000 + 1'000'000);
}

// Tasks submitted during the pause wait for its end, the newest replacing
// the older (by Submit or TrySubmit alike); the clock is moved only after
// all were submitted, so without pacing task 2 would run at once.
TEST_F(PacedCheckpointWorkerTest, TasksSubmittedDuringThePauseWaitAndTheNewestRuns) {
  CheckpointWorker& worker = StartWorker(4);
  std::promise<void> last_ran;
  RunTimedTask(1, 1'000'000);  // its pause lasts 3 s of the test clock
  ASSERT_TRUE(worker.Submit([&] { ran_.Add(2); }));
  EXPECT_TRUE(worker.Busy());
  ASSERT_TRUE(worker.TrySubmit([&] { ran_.Add(3); }));
  ASSERT_TRUE(worker.Submit([&] {
    ran_.Add(4);
    last_ran.set_value();
  }));
  EXPECT_EQ(ran_.Get(), (std::vector<int>{1}));
  clock_.Advance(3'000'000);
  last_ran.get_future().wait();
  worker.WaitIdle();
  EXPECT_EQ(ran_.Get(), (std::vector<int>{1, 4}));
}

// In the next two tests the test clock never reaches the pause's end: only
// hurrying runs the waiting task.
TEST_F(PacedCheckpointWorkerTest, WaitIdleRunsTheTaskWaitingForThePauseAtOnce) {
  CheckpointWorker& worker = StartWorker(4);
  RunTimedTask(1, 10'000'000);
  ASSERT_TRUE(worker.Submit([&] { ran_.Add(2); }));
  worker.WaitIdle();
  EXPECT_EQ(ran_.Get(), (std::vector<int>{1, 2}));
}

TEST_F(PacedCheckpointWorkerTest, TheDestructorRunsTheTaskWaitingForThePause) {
  CheckpointWorker& worker = StartWorker(4);
  RunTimedTask(1, 10'000'000);
  ASSERT_TRUE(worker.TrySubmit([&] { ran_.Add(2); }));
  worker_.reset();
  EXPECT_EQ(ran_.Get(), (std::vector<int>{1, 2}));
}

TEST_F(PacedCheckpointWorkerTest, PeriodFactorOneRunsTasksBackToBack) {
  CheckpointWorker& worker = StartWorker(1);
  RunTimedTask(1, 10'000'000);
  std::promise<void> second;
  ASSERT_TRUE(worker.Submit([&] {
    ran_.Add(2);
    second.set_value();
  }));
  // Runs without the clock moving.
  second.get_future().wait();
  worker.WaitIdle();
  EXPECT_EQ(ran_.Get(), (std::vector<int>{1, 2}));
}

// Decision 189: a due checkpoint waits until the commits since the last one
// hold 1/bytes_factor of its bytes, counted from the commit total at the
// checkpoint's version; small checkpoints are not paced.
TEST(CheckpointWorkerTest, BytePacingWaitsForCommitsWorthATenthOfTheLastCheckpoint) {
  CheckpointWorker worker(CheckpointPacing{.bytes_factor = 10, .bytes_floor = 1000});
  EXPECT_TRUE(worker.CheckpointBytesDue());  // none recorded yet
  worker.AddCommitBytes(500);
  const int64_t mark = worker.commit_bytes_total();
  EXPECT_EQ(mark, 500);
  worker.AddCommitBytes(300);  // committed while the checkpoint was written
  worker.RecordCheckpoint(5000, mark);
  // 300 bytes since its version; 500 are needed.
  EXPECT_FALSE(worker.CheckpointBytesDue());
  worker.AddCommitBytes(199);
  EXPECT_FALSE(worker.CheckpointBytesDue());
  worker.AddCommitBytes(1);
  EXPECT_TRUE(worker.CheckpointBytesDue());
  // An older checkpoint that finishes late does not replace the newer one.
  worker.RecordCheckpoint(100, mark - 1);
  EXPECT_TRUE(worker.CheckpointBytesDue());
  worker.RecordCheckpoint(50'000, worker.commit_bytes_total());
  EXPECT_FALSE(worker.CheckpointBytesDue());
  worker.RecordCheckpoint(100, mark - 1);
  EXPECT_FALSE(worker.CheckpointBytesDue());
  // At or below the floor a checkpoint is written whenever due.
  worker.RecordCheckpoint(1000, worker.commit_bytes_total());
  EXPECT_TRUE(worker.CheckpointBytesDue());
}

TEST(CheckpointWorkerTest, BytePacingOffWritesEveryDueCheckpoint) {
  CheckpointWorker worker(CheckpointPacing{.bytes_factor = 0, .bytes_floor = 0});
  worker.RecordCheckpoint(1'000'000, worker.commit_bytes_total());
  EXPECT_TRUE(worker.CheckpointBytesDue());
}

}  // namespace
}  // namespace silt::delta
