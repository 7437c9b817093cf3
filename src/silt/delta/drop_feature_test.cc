// DROP FEATURE over the memory file system: the protocol normalization,
// delta-spark's error classes, and the checkpoint-protected drop of a
// reader-writer feature followed by the drop of checkpointProtection itself.

#include "silt/delta/drop_feature.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "silt/base/clock.h"
#include "silt/delta/checkpoint_writer.h"
#include "silt/delta/protocol.h"
#include "silt/delta/table_properties.h"
#include "silt/fs/file_system.h"
#include "silt/testing/gtest_util.h"

namespace silt::delta {
namespace {

constexpr int64_t kDayMs = 24LL * 3600 * 1000;

std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST(RemoveTableFeatureTest, NormalizesToTheWeakestProtocol) {
  Protocol dv;
  dv.min_reader_version = 3;
  dv.min_writer_version = 7;
  dv.reader_features = std::vector<std::string>{"deletionVectors"};
  dv.writer_features = std::vector<std::string>{"deletionVectors", "appendOnly", "invariants"};
  Protocol legacy = RemoveTableFeature(dv, "deletionVectors");
  EXPECT_EQ(legacy.min_reader_version, 1);
  EXPECT_EQ(legacy.min_writer_version, 2);
  EXPECT_FALSE(legacy.reader_features.has_value());
  EXPECT_FALSE(legacy.writer_features.has_value());

  dv.writer_features->push_back("rowTracking");
  dv.writer_features->push_back("domainMetadata");
  Protocol writer_only = RemoveTableFeature(dv, "deletionVectors");
  EXPECT_EQ(writer_only.min_reader_version, 1);
  EXPECT_EQ(writer_only.min_writer_version, 7);
  EXPECT_FALSE(writer_only.reader_features.has_value());
  EXPECT_EQ(
      Sorted(*writer_only.writer_features),
      (std::vector<std::string>{"appendOnly", "domainMetadata", "invariants", "rowTracking"}));

  // A legacy protocol loses one of its implied features: table features.
  Protocol old;
  old.min_reader_version = 1;
  old.min_writer_version = 3;
  Protocol without = RemoveTableFeature(old, "invariants");
  EXPECT_EQ(without.min_writer_version, 7);
  EXPECT_EQ(Sorted(*without.writer_features),
            (std::vector<std::string>{"appendOnly", "checkConstraints"}));
}

class DropFeatureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs_ = fs::MakeMemoryFileSystem();
    ASSERT_OK_AND_ASSIGN(table_, DeltaTable::Open(fs_, "/t"));
  }

  void Create(TableConfiguration configuration) {
    CommitRequest create;
    ASSERT_OK_AND_ASSIGN(create.new_protocol, ProtocolForNewTable(configuration));
    Metadata metadata;
    metadata.schema =
        columnar::DataType::Struct({columnar::Field{"id", columnar::DataType::Long()}});
    metadata.configuration = std::move(configuration);
    create.new_metadata = metadata;
    create.operation = "CREATE TABLE";
    ASSERT_OK(Commit(table_.get(), nullptr, create).status());
    AddFile add;
    add.path = "f.parquet";
    add.size = 10;
    add.modification_time = 1;
    add.stats = R"({"numRecords":1})";
    CommitRequest write;
    write.adds = {add};
    ASSERT_OK_AND_ASSIGN(SnapshotPtr snapshot, table_->LatestSnapshot());
    ASSERT_OK(Commit(table_.get(), snapshot, write).status());
  }

  std::string DropError(const std::string& feature, bool truncate = false) {
    DropFeatureOptions options;
    options.truncate_history = truncate;
    Result<DropFeatureResult> r = DropFeature(table_.get(), feature, options);
    EXPECT_FALSE(r.ok()) << feature;
    return r.ok() ? "" : r.status().message();
  }

  std::string OperationOf(int64_t version) {
    auto commit = table_->ReadCommit(version);
    EXPECT_TRUE(commit.ok());
    const std::string& info = *commit->commit_info_json;
    const size_t at = info.find("\"operation\":\"");
    return info.substr(at + 13, info.find('"', at + 13) - at - 13);
  }

  fs::FileSystemPtr fs_;
  std::unique_ptr<DeltaTable> table_;
};

TEST_F(DropFeatureTest, RefusalsNameDeltaSparksErrorClasses) {
  Create({{"delta.enableInCommitTimestamps", "true"}});
  EXPECT_NE(DropError("deletionVectors").find("[DELTA_FEATURE_DROP_FEATURE_NOT_PRESENT]"),
            std::string::npos);
  EXPECT_NE(DropError("noSuchFeature").find("[DELTA_FEATURE_DROP_UNSUPPORTED_CLIENT_FEATURE]"),
            std::string::npos);
  EXPECT_NE(DropError("delta.appendOnly").find("[DELTA_FEATURE_DROP_FEATURE_IS_DELTA_PROPERTY]"),
            std::string::npos);
  EXPECT_NE(DropError("appendOnly").find("[DELTA_FEATURE_DROP_NONREMOVABLE_FEATURE]"),
            std::string::npos);
  EXPECT_NE(DropError("inCommitTimestamp", true)
                .find("[DELTA_FEATURE_DROP_HISTORY_TRUNCATION_NOT_ALLOWED]"),
            std::string::npos);
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> versions, table_->ListVersions());
  EXPECT_EQ(versions.back(), 1) << "a refused drop commits nothing";

  // A writer feature goes at once, after its properties.
  ASSERT_OK_AND_ASSIGN(DropFeatureResult dropped, DropFeature(table_.get(), "inCommitTimestamp"));
  EXPECT_EQ(dropped.version, 3);
  EXPECT_EQ(OperationOf(2), "UNSET TBLPROPERTIES");
  EXPECT_EQ(OperationOf(3), "DROP FEATURE");
  EXPECT_EQ(dropped.protocol.min_writer_version, 2);
  ASSERT_OK_AND_ASSIGN(SnapshotPtr latest, table_->LatestSnapshot());
  EXPECT_EQ(latest->metadata().configuration.at("delta.enableInCommitTimestamps"), "false");
}

TEST_F(DropFeatureTest, ReaderWriterFeatureDropsBehindProtectedCheckpoints) {
  Create({{"delta.feature.vacuumProtocolCheck", "supported"}});
  ASSERT_OK_AND_ASSIGN(DropFeatureResult dropped, DropFeature(table_.get(), "vacuumProtocolCheck"));
  // Three empty commits, each checkpointed, then the downgrade (checkpointed).
  EXPECT_EQ(dropped.version, 5);
  for (int64_t v = 2; v <= 4; ++v) EXPECT_EQ(OperationOf(v), "Empty Commit");
  for (int64_t v = 2; v <= 5; ++v) {
    ASSERT_OK_AND_ASSIGN(bool exists,
                         fs_->Exists(table_->log_path() + "/" + CheckpointFileName(v)));
    EXPECT_TRUE(exists) << v;
  }
  EXPECT_EQ(dropped.protocol.min_reader_version, 1);
  EXPECT_EQ(Sorted(SupportedFeatures(dropped.protocol)),
            (std::vector<std::string>{"appendOnly", "checkpointProtection", "invariants"}));
  ASSERT_OK_AND_ASSIGN(SnapshotPtr latest, table_->LatestSnapshot());
  EXPECT_EQ(
      latest->metadata().configuration.at(std::string(kRequireCheckpointProtectionBeforeVersion)),
      "5");

  EXPECT_NE(
      DropError("checkpointProtection")
          .find("[DELTA_FEATURE_CAN_ONLY_DROP_CHECKPOINT_PROTECTION_WITH_HISTORY_TRUNCATION]"),
      std::string::npos);
  // Within the 24 hours of delta.dropFeatureTruncateHistory.retentionDuration
  // the history before version 5 stays, and so does the feature.
  EXPECT_NE(DropError("checkpointProtection", true)
                .find("[DELTA_FEATURE_DROP_CHECKPOINT_PROTECTION_WAIT_FOR_RETENTION_PERIOD]"),
            std::string::npos);
  // Two days later it all goes at once, then the property and the feature.
  DropFeatureOptions later;
  later.truncate_history = true;
  later.now_ms = SystemClock().NowMicros() / 1000 + 2 * kDayMs;
  ASSERT_OK_AND_ASSIGN(DropFeatureResult gone,
                       DropFeature(table_.get(), "checkpointProtection", later));
  EXPECT_EQ(gone.protocol.min_writer_version, 2);
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> versions, table_->ListVersions());
  EXPECT_GE(versions.front(), 5);
  ASSERT_OK_AND_ASSIGN(latest, table_->LatestSnapshot());
  EXPECT_EQ(latest->metadata().configuration.count(
                std::string(kRequireCheckpointProtectionBeforeVersion)),
            0u);
}

}  // namespace
}  // namespace silt::delta
