#include "silt/monitor/health.h"

#include <gtest/gtest.h>

namespace silt::monitor {
namespace {

constexpr int64_t kSecond = 1'000'000;

HealthInputs Running(int64_t started, int64_t last_progress) {
  HealthInputs in;
  in.state = QueryState::kRunning;
  in.started_micros = started;
  in.last_progress_micros = last_progress;
  in.timeout_micros = 60 * kSecond;
  return in;
}

TEST(HealthTest, RecentProgressIsHealthy) {
  Health h = EvaluateHealth(Running(100 * kSecond, 150 * kSecond), 200 * kSecond);
  EXPECT_TRUE(h.healthy);
  EXPECT_EQ(h.reason, "last progress 50.0 s ago");
}

TEST(HealthTest, ProgressExactlyAtTheTimeoutIsStillHealthy) {
  EXPECT_TRUE(EvaluateHealth(Running(0, 10 * kSecond), 70 * kSecond).healthy);
  EXPECT_FALSE(EvaluateHealth(Running(0, 10 * kSecond), 70 * kSecond + 1).healthy);
}

TEST(HealthTest, NoProgressForLongerThanTheTimeoutIsUnhealthy) {
  Health h = EvaluateHealth(Running(0, 10 * kSecond), 75 * kSecond + 300'000);
  EXPECT_FALSE(h.healthy);
  EXPECT_EQ(h.reason, "no batch or trigger completed for 65.3 s (healthTimeout 60.0 s)");
}

TEST(HealthTest, BeforeTheFirstTriggerTheStartCounts) {
  EXPECT_TRUE(EvaluateHealth(Running(100 * kSecond, 0), 130 * kSecond).healthy);
  Health h = EvaluateHealth(Running(100 * kSecond, 0), 161 * kSecond);
  EXPECT_FALSE(h.healthy);
  EXPECT_EQ(h.reason, "no trigger completed since the start 61.0 s (healthTimeout 60.0 s)");
}

TEST(HealthTest, StoppedOrFailedIsUnhealthyWhateverTheTimes) {
  HealthInputs in = Running(0, 10 * kSecond);
  in.state = QueryState::kStopped;
  EXPECT_FALSE(EvaluateHealth(in, 11 * kSecond).healthy);
  in.state = QueryState::kFailed;
  Health h = EvaluateHealth(in, 11 * kSecond);
  EXPECT_FALSE(h.healthy);
  EXPECT_EQ(h.reason, "the query has failed");
}

TEST(HealthTest, AClockGoingBackwardsCountsAsNoTimePassed) {
  EXPECT_TRUE(EvaluateHealth(Running(0, 100 * kSecond), 50 * kSecond).healthy);
}

}  // namespace
}  // namespace silt::monitor
