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
    create.honoured_features = RowPreservingFeatures();
    ASSERT_OK(Commit(table_.get(), nullptr, create).status());
    AddFile add;
    add.path = "f.parquet";
    add.size = 10;
    add.modification_time = 1;
    add.stats = R"({"numRecords":1})";
    CommitRequest write;
    write.adds = {add};
    write.honoured_features = RowPreservingFeatures();
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

TEST_F(DropFeatureTest, CheckConstraintsGoOnlyOnceNoConstraintIsLeft) {
  Create({{"delta.feature.checkConstraints", "supported"},
          {"delta.constraints.positive", "id > 0"},
          {"delta.constraints.small", "id < 9"}});
  const std::string refused = DropError("checkConstraints");
  EXPECT_NE(refused.find("[DELTA_CANNOT_DROP_CHECK_CONSTRAINT_FEATURE]"), std::string::npos);
  EXPECT_NE(refused.find("`positive`, `small`"), std::string::npos) << refused;
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> versions, table_->ListVersions());
  EXPECT_EQ(versions.back(), 1) << "a refused drop commits nothing";

  ASSERT_OK_AND_ASSIGN(SnapshotPtr snapshot, table_->LatestSnapshot());
  CommitRequest drop_constraints;
  drop_constraints.operation = "DROP CONSTRAINT";
  drop_constraints.honoured_features = RowPreservingFeatures();
  drop_constraints.new_metadata = snapshot->metadata();
  drop_constraints.new_metadata->configuration.clear();
  ASSERT_OK(Commit(table_.get(), snapshot, drop_constraints).status());
  // A writer feature without traces: the downgrade commit alone.
  ASSERT_OK_AND_ASSIGN(DropFeatureResult dropped, DropFeature(table_.get(), "checkConstraints"));
  EXPECT_EQ(dropped.version, 3);
  EXPECT_EQ(OperationOf(3), "DROP FEATURE");
  const std::vector<std::string> features = SupportedFeatures(dropped.protocol);
  EXPECT_EQ(std::count(features.begin(), features.end(), "checkConstraints"), 0);
}

TEST_F(DropFeatureTest, RowTrackingIsUnbackfilledThenDomainMetadataGoes) {
  Create({{"delta.enableRowTracking", "true"}});
  ASSERT_OK_AND_ASSIGN(SnapshotPtr before, table_->LatestSnapshot());
  ASSERT_TRUE(before->files()[0].base_row_id.has_value());
  ASSERT_NE(before->FindDomain("delta.rowTracking"), nullptr);
  EXPECT_NE(DropError("domainMetadata").find("[DELTA_FEATURE_DROP_DEPENDENT_FEATURE]"),
            std::string::npos);

  ASSERT_OK_AND_ASSIGN(DropFeatureResult dropped, DropFeature(table_.get(), "rowTracking"));
  EXPECT_EQ(OperationOf(2), "SET TBLPROPERTIES");
  EXPECT_EQ(OperationOf(3), "ROW TRACKING UNBACKFILL");
  EXPECT_EQ(OperationOf(4), "DROP FEATURE");
  EXPECT_EQ(dropped.version, 4);
  ASSERT_OK_AND_ASSIGN(SnapshotPtr after, table_->LatestSnapshot());
  ASSERT_EQ(after->files().size(), 1u);
  EXPECT_FALSE(after->files()[0].base_row_id.has_value());
  EXPECT_FALSE(after->files()[0].default_row_commit_version.has_value());
  EXPECT_EQ(after->FindDomain("delta.rowTracking"), nullptr);
  for (const auto& [key, value] : after->metadata().configuration) {
    EXPECT_EQ(key.find("delta.rowTracking"), std::string::npos) << key;
    EXPECT_NE(key, "delta.enableRowTracking");
  }
  std::vector<std::string> features = SupportedFeatures(dropped.protocol);
  EXPECT_EQ(std::count(features.begin(), features.end(), "rowTracking"), 0);
  EXPECT_EQ(std::count(features.begin(), features.end(), "domainMetadata"), 1);

  // No domain is left: domainMetadata goes with the downgrade commit alone.
  ASSERT_OK_AND_ASSIGN(dropped, DropFeature(table_.get(), "domainMetadata"));
  EXPECT_EQ(dropped.version, 5);
  features = SupportedFeatures(dropped.protocol);
  EXPECT_EQ(std::count(features.begin(), features.end(), "domainMetadata"), 0);
}

TEST_F(DropFeatureTest, LeakedDomainsAreRemovedBeforeDomainMetadataGoes) {
  Create({{"delta.feature.domainMetadata", "supported"}});
  ASSERT_OK_AND_ASSIGN(SnapshotPtr snapshot, table_->LatestSnapshot());
  CommitRequest leak;
  leak.operation = "WRITE";
  leak.domain_metadata = {DomainMetadata{"app.leaked", R"({"a":1})", false}};
  ASSERT_OK(Commit(table_.get(), snapshot, leak).status());

  ASSERT_OK_AND_ASSIGN(DropFeatureResult dropped, DropFeature(table_.get(), "domainMetadata"));
  EXPECT_EQ(OperationOf(3), "DOMAIN METADATA CLEANUP");
  EXPECT_EQ(OperationOf(4), "DROP FEATURE");
  ASSERT_OK_AND_ASSIGN(CommitActions cleanup, table_->ReadCommit(3));
  ASSERT_EQ(cleanup.domain_metadata.size(), 1u);
  EXPECT_TRUE(cleanup.domain_metadata[0].removed);
  EXPECT_NE(cleanup.commit_info_json->find(R"("domainMetadataRemovedCount":1)"), std::string::npos)
      << *cleanup.commit_info_json;
  ASSERT_OK_AND_ASSIGN(SnapshotPtr after, table_->LatestSnapshot());
  EXPECT_TRUE(after->domain_metadata().empty());
  const std::vector<std::string> features = SupportedFeatures(dropped.protocol);
  EXPECT_EQ(std::count(features.begin(), features.end(), "domainMetadata"), 0);
}

}  // namespace
}  // namespace silt::delta
