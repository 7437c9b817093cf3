#include "silt/expr/value/time_zone.h"

#include <gtest/gtest.h>

#include "silt/columnar/temporal.h"
#include "silt/testing/gtest_util.h"

namespace silt::expr {
namespace {

int64_t Utc(const char* text) { return *columnar::ParseTimestamp(text); }

TEST(TimeZoneTest, FixedOffsetsAndUtc) {
  ASSERT_OK_AND_ASSIGN(TimeZonePtr plus, TimeZone::Load("+05:30"));
  EXPECT_TRUE(plus->is_fixed());
  EXPECT_EQ(plus->OffsetSecondsAt(0), 5 * 3600 + 1800);
  ASSERT_OK_AND_ASSIGN(TimeZonePtr gmt, TimeZone::Load("GMT-8"));
  EXPECT_EQ(gmt->OffsetSecondsAt(0), -8 * 3600);
  EXPECT_EQ(TimeZone::Utc()->OffsetSecondsAt(123), 0);
  EXPECT_FALSE(TimeZone::Load("Mars/Olympus").ok());
  EXPECT_FALSE(TimeZone::Load("../../etc/passwd").ok());
}

TEST(TimeZoneTest, RegionZonesFollowDaylightSavingLikeJavaTime) {
  ASSERT_OK_AND_ASSIGN(TimeZonePtr la, TimeZone::Load("America/Los_Angeles"));
  EXPECT_EQ(la->OffsetSecondsAt(Utc("2021-03-14T09:59:59Z")), -8 * 3600);
  EXPECT_EQ(la->OffsetSecondsAt(Utc("2021-03-14T10:00:00Z")), -7 * 3600);
  // 02:30 does not exist on 2021-03-14: java.time moves it forward by the
  // gap, to 03:30 PDT = 10:30Z.
  EXPECT_EQ(la->LocalToUtc(Utc("2021-03-14T02:30:00Z")), Utc("2021-03-14T10:30:00Z"));
  // 01:30 happens twice on 2021-11-07: the earlier offset (PDT) wins.
  EXPECT_EQ(la->LocalToUtc(Utc("2021-11-07T01:30:00Z")), Utc("2021-11-07T08:30:00Z"));
}

}  // namespace
}  // namespace silt::expr
