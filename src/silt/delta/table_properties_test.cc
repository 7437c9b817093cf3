#include "silt/delta/table_properties.h"

#include <gtest/gtest.h>

namespace silt::delta {
namespace {

constexpr int64_t kHourMs = 3600LL * 1000;

TEST(ParseIntervalMsTest, SparkForms) {
  EXPECT_EQ(ParseIntervalMs("interval 30 days").ValueOrDie(), 30 * 24 * kHourMs);
  EXPECT_EQ(ParseIntervalMs("interval 1 week").ValueOrDie(), 168 * kHourMs);
  EXPECT_EQ(ParseIntervalMs("168 hours").ValueOrDie(), 168 * kHourMs);
  EXPECT_EQ(ParseIntervalMs("INTERVAL 2 Weeks 3 days").ValueOrDie(), 17 * 24 * kHourMs);
  EXPECT_EQ(ParseIntervalMs("interval 1 hour 30 minutes").ValueOrDie(), 90 * 60 * 1000);
  EXPECT_EQ(ParseIntervalMs("1.5 seconds").ValueOrDie(), 1500);
  EXPECT_EQ(ParseIntervalMs("interval 0 seconds").ValueOrDie(), 0);
  EXPECT_EQ(ParseIntervalMs("250 milliseconds").ValueOrDie(), 250);
  EXPECT_EQ(ParseIntervalMs("1999 microseconds").ValueOrDie(), 1);
  EXPECT_EQ(ParseIntervalMs("interval '2' days").ValueOrDie(), 2 * 24 * kHourMs);
  EXPECT_EQ(ParseIntervalMs("interval 1 day -12 hours").ValueOrDie(), 12 * kHourMs);
}

TEST(ParseIntervalMsTest, Refusals) {
  for (const char* bad : {"", "interval", "30", "30 fortnights", "interval 1 month", "2 years",
                          "-1 day", "x days", "1.5 days", "interval 1 day 2"}) {
    Result<int64_t> r = ParseIntervalMs(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << bad;
      EXPECT_NE(r.status().message().find(bad), std::string::npos) << r.status().message();
    }
  }
}

TEST(TablePropertiesTest, Defaults) {
  TableConfiguration empty;
  EXPECT_EQ(CheckpointInterval(empty).ValueOrDie(), 10);
  EXPECT_EQ(LogRetentionMs(empty).ValueOrDie(), 30 * 24 * kHourMs);
  EXPECT_EQ(DeletedFileRetentionMs(empty).ValueOrDie(), 168 * kHourMs);
  EXPECT_TRUE(EnableExpiredLogCleanup(empty).ValueOrDie());
  EXPECT_FALSE(AppendOnly(empty).ValueOrDie());
  EXPECT_FALSE(EnableInCommitTimestamps(empty).ValueOrDie());
  EXPECT_EQ(DataSkippingNumIndexedCols(empty).ValueOrDie(), 32);
  EXPECT_FALSE(DataSkippingStatsColumns(empty).ValueOrDie().has_value());
  EXPECT_FALSE(SetTransactionRetentionMs(empty).ValueOrDie().has_value());
  EXPECT_TRUE(CheckpointWriteStatsAsJson(empty).ValueOrDie());
}

TEST(TablePropertiesTest, ValuesAndCaseInsensitiveKeys) {
  TableConfiguration conf = {{"delta.checkpointinterval", "3"},
                             {"delta.logRetentionDuration", "interval 2 hours"},
                             {"delta.appendOnly", "TRUE"},
                             {"delta.dataSkippingStatsColumns", "a, `b.c`,d.e"},
                             {"delta.dataSkippingNumIndexedCols", "-1"}};
  EXPECT_EQ(CheckpointInterval(conf).ValueOrDie(), 3);
  EXPECT_EQ(LogRetentionMs(conf).ValueOrDie(), 2 * kHourMs);
  EXPECT_TRUE(AppendOnly(conf).ValueOrDie());
  EXPECT_EQ(DataSkippingNumIndexedCols(conf).ValueOrDie(), -1);
  std::vector<std::string> cols = {"a", "`b.c`", "d.e"};
  EXPECT_EQ(*DataSkippingStatsColumns(conf).ValueOrDie(), cols);
}

TEST(TablePropertiesTest, BadValuesNameKeyAndValue) {
  Result<int64_t> r = CheckpointInterval({{"delta.checkpointInterval", "0"}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("delta.checkpointInterval = '0'"), std::string::npos);
  Result<int64_t> d = LogRetentionMs({{"delta.logRetentionDuration", "1 month"}});
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("'1 month'"), std::string::npos);
  EXPECT_FALSE(AppendOnly({{"delta.appendOnly", "yes"}}).ok());
}

TEST(TablePropertiesTest, Validate) {
  auto ok = ValidateTableProperties({{"delta.checkpointinterval", "5"},
                                     {"delta.enableChangeDataFeed", "false"},
                                     {"owner", "me"}});
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok.ValueOrDie().at("delta.checkpointInterval"), "5");
  EXPECT_EQ(ok.ValueOrDie().at("owner"), "me");

  auto typo = ValidateTableProperties({{"delta.checkpointIntervall", "5"}});
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(typo.status().message().find("did you mean delta.checkpointInterval"),
            std::string::npos)
      << typo.status().message();

  auto cdf = ValidateTableProperties({{"delta.enableChangeDataFeed", "true"}});
  ASSERT_FALSE(cdf.ok());
  EXPECT_EQ(cdf.status().code(), StatusCode::kNotSupported);

  auto bad = ValidateTableProperties({{"delta.logRetentionDuration", "forever"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

// delta.feature.<name> = supported for the features silt honours, in
// delta-spark's spelling; others are refused naming the feature.
TEST(TablePropertiesTest, FeatureProperties) {
  auto ok = ValidateTableProperties({{"delta.feature.vacuumprotocolcheck", "Supported"},
                                     {"delta.enableInCommitTimestamps", "true"},
                                     {"delta.enableRowTracking", "true"}});
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok.ValueOrDie().at("delta.feature.vacuumProtocolCheck"), "supported");
  auto unknown = ValidateTableProperties({{"delta.feature.collations", "supported"}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(unknown.status().message().find("collations"), std::string::npos);
  auto enabled = ValidateTableProperties({{"delta.feature.rowTracking", "enabled"}});
  ASSERT_FALSE(enabled.ok());
  EXPECT_EQ(enabled.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace silt::delta
