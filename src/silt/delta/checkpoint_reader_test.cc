// Checkpoints read back as the state the JSON commits describe: every add
// and remove field, for silt's own checkpoints and for the checkpoints of
// Delta's golden tables (written by Spark).
#include "silt/delta/checkpoint_reader.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "silt/delta/checkpoint_writer.h"
#include "silt/delta/table.h"
#include "silt/testing/conformance.h"
#include "silt/testing/gtest_util.h"
#include "silt/testing/temp_dir.h"

namespace silt::delta {
namespace {

void ExpectSameDv(const std::optional<DeletionVectorDescriptor>& a,
                  const std::optional<DeletionVectorDescriptor>& b, const std::string& where) {
  ASSERT_EQ(a.has_value(), b.has_value()) << where;
  if (!a) return;
  EXPECT_EQ(a->storage_type, b->storage_type) << where;
  EXPECT_EQ(a->path_or_inline_dv, b->path_or_inline_dv) << where;
  EXPECT_EQ(a->offset, b->offset) << where;
  EXPECT_EQ(a->size_in_bytes, b->size_in_bytes) << where;
  EXPECT_EQ(a->cardinality, b->cardinality) << where;
  EXPECT_EQ(a->max_row_index, b->max_row_index) << where;
}

// Every field replay keeps, except dataChange (checkpoints write false).
void ExpectSameFiles(const Snapshot& a, const Snapshot& b, const std::string& name) {
  ASSERT_EQ(a.files().size(), b.files().size()) << name;
  for (size_t i = 0; i < a.files().size(); ++i) {
    const AddFile& x = a.files()[i];
    const AddFile& y = b.files()[i];
    std::string where = name + " add " + x.path;
    EXPECT_EQ(x.path, y.path) << where;
    EXPECT_EQ(x.partition_values, y.partition_values) << where;
    EXPECT_EQ(x.size, y.size) << where;
    EXPECT_EQ(x.modification_time, y.modification_time) << where;
    EXPECT_EQ(x.stats, y.stats) << where;
    EXPECT_EQ(x.tags, y.tags) << where;
    ExpectSameDv(x.deletion_vector, y.deletion_vector, where);
  }
}

void ExpectSameTombstones(const Snapshot& a, const Snapshot& b, const std::string& name) {
  ASSERT_EQ(a.tombstones().size(), b.tombstones().size()) << name;
  for (size_t i = 0; i < a.tombstones().size(); ++i) {
    const RemoveFile& x = a.tombstones()[i];
    const RemoveFile& y = b.tombstones()[i];
    std::string where = name + " remove " + x.path;
    EXPECT_EQ(x.path, y.path) << where;
    EXPECT_EQ(x.deletion_timestamp, y.deletion_timestamp) << where;
    EXPECT_EQ(x.extended_file_metadata, y.extended_file_metadata) << where;
    EXPECT_EQ(x.partition_values, y.partition_values) << where;
    EXPECT_EQ(x.size, y.size) << where;
    ExpectSameDv(x.deletion_vector, y.deletion_vector, where);
  }
}

// A copy of `table_dir` without checkpoints, so that snapshots replay JSON.
std::string CopyWithoutCheckpoints(const std::string& table_dir, const std::string& to) {
  std::filesystem::copy(table_dir, to, std::filesystem::copy_options::recursive);
  for (const auto& entry : std::filesystem::directory_iterator(to + "/_delta_log")) {
    std::string name = entry.path().filename().string();
    if (name.find(".checkpoint.") != std::string::npos || name == "_last_checkpoint" ||
        name == "_sidecars") {
      std::filesystem::remove_all(entry.path());
    }
  }
  return to;
}

constexpr std::string_view kCommit0 =
    R"({"commitInfo":{"timestamp":1000,"operation":"WRITE"}}
{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["deletionVectors"],"writerFeatures":["deletionVectors"]}}
{"metaData":{"id":"t","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}},{\"name\":\"p\",\"type\":\"string\",\"nullable\":true,\"metadata\":{}}]}","partitionColumns":["p"],"configuration":{"delta.enableDeletionVectors":"true"},"createdTime":1}}
{"add":{"path":"p=a/one.parquet","partitionValues":{"p":"a"},"size":11,"modificationTime":21,"dataChange":true,"stats":"{\"numRecords\":3,\"minValues\":{\"id\":1},\"maxValues\":{\"id\":\"x\\\"y\"}}","tags":{"INSERTION_TIME":"1","k":"v"}}}
{"add":{"path":"p=__HIVE_DEFAULT_PARTITION__/two%20words.parquet","partitionValues":{"p":null},"size":12,"modificationTime":22,"dataChange":true,"deletionVector":{"storageType":"u","pathOrInlineDv":"ab^-aqEH.-t@S}K{vb[*k^","offset":1,"sizeInBytes":36,"cardinality":2}}}
{"add":{"path":"p=b/three.parquet","partitionValues":{"p":""},"size":13,"modificationTime":23,"dataChange":true,"stats":"{\"numRecords\":5}","tags":{"INSERTION_TIME":"3","OPTIMIZE_TARGET_SIZE":"268435456"}}}
{"add":{"path":"p=c/four.parquet","partitionValues":{"p":"c"},"size":14,"modificationTime":24,"dataChange":true}}
)";

// Removes one file, replaces a deletion vector, re-adds nothing.
constexpr std::string_view kCommit1 =
    R"({"commitInfo":{"timestamp":2000,"operation":"DELETE"}}
{"remove":{"path":"p=a/one.parquet","deletionTimestamp":2000,"dataChange":true,"extendedFileMetadata":true,"partitionValues":{"p":"a"},"size":11}}
{"remove":{"path":"p=__HIVE_DEFAULT_PARTITION__/two%20words.parquet","deletionTimestamp":2000,"dataChange":true,"extendedFileMetadata":true,"partitionValues":{"p":null},"size":12,"deletionVector":{"storageType":"u","pathOrInlineDv":"ab^-aqEH.-t@S}K{vb[*k^","offset":1,"sizeInBytes":36,"cardinality":2}}}
{"add":{"path":"p=__HIVE_DEFAULT_PARTITION__/two%20words.parquet","partitionValues":{"p":null},"size":12,"modificationTime":22,"dataChange":true,"deletionVector":{"storageType":"i","pathOrInlineDv":"wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L","sizeInBytes":40,"cardinality":3,"maxRowIndex":9}}}
)";

// Removes another file and re-adds the one commit 1 removed.
constexpr std::string_view kCommit2 =
    R"({"commitInfo":{"timestamp":3000,"operation":"WRITE"}}
{"remove":{"path":"p=c/four.parquet","deletionTimestamp":3000,"dataChange":true}}
{"add":{"path":"p=a/one.parquet","partitionValues":{"p":"a"},"size":11,"modificationTime":31,"dataChange":true}}
)";

TEST(CheckpointReaderTest, SiltCheckpointHoldsEveryFieldTheCommitsHold) {
  testing::TempDir dir;
  std::string path = dir.path() + "/t";
  fs::FileSystemPtr fs = fs::MakeLocalFileSystem();
  ASSERT_OK(fs->WriteFile(path + "/_delta_log/" + CommitFileName(0), kCommit0));
  ASSERT_OK(fs->WriteFile(path + "/_delta_log/" + CommitFileName(1), kCommit1));
  ASSERT_OK(fs->WriteFile(path + "/_delta_log/" + CommitFileName(2), kCommit2));
  ASSERT_OK_AND_ASSIGN(auto replayed_table,
                       DeltaTable::Open(fs, CopyWithoutCheckpoints(path, dir.path() + "/json")));
  ASSERT_OK_AND_ASSIGN(auto table, DeltaTable::Open(fs, path));
  ASSERT_OK_AND_ASSIGN(SnapshotPtr at1, table->SnapshotAt(1));
  ASSERT_OK(WriteCheckpoint(table.get(), *at1, /*now_ms=*/2000).status());

  // The checkpoint alone (version 1) and the checkpoint plus commit 2.
  for (int64_t version : {1, 2}) {
    ASSERT_OK_AND_ASSIGN(SnapshotPtr from_checkpoint, table->SnapshotAt(version));
    ASSERT_OK_AND_ASSIGN(SnapshotPtr replayed, replayed_table->SnapshotAt(version));
    std::string name = "version " + std::to_string(version);
    ExpectSameFiles(*from_checkpoint, *replayed, name);
    ExpectSameTombstones(*from_checkpoint, *replayed, name);
  }
  ASSERT_OK_AND_ASSIGN(SnapshotPtr at2, table->SnapshotAt(2));
  ASSERT_EQ(at2->files().size(), 3u);
  EXPECT_EQ(at2->files()[0].path, "p=__HIVE_DEFAULT_PARTITION__/two%20words.parquet");
  ASSERT_TRUE(at2->files()[0].deletion_vector.has_value());
  EXPECT_EQ(at2->files()[0].deletion_vector->storage_type, "i");
  EXPECT_EQ(at2->files()[0].deletion_vector->max_row_index, 9);
  EXPECT_EQ(at2->files()[0].partition_values, PartitionValues({{"p", std::nullopt}}));
  EXPECT_EQ(at2->files()[1].path, "p=a/one.parquet");
  EXPECT_EQ(at2->files()[1].modification_time, 31);
  EXPECT_EQ(at2->files()[2].partition_values, PartitionValues({{"p", std::nullopt}}));
  EXPECT_EQ(at2->files()[2].stats, "{\"numRecords\":5}");
  EXPECT_EQ(at2->files()[2].tags.at("OPTIMIZE_TARGET_SIZE"), "268435456");
  // Tombstones: the old deletion vector of two%20words and four.parquet
  // (one.parquet was re-added).
  ASSERT_EQ(at2->tombstones().size(), 2u);
  EXPECT_EQ(at2->tombstones()[1].path, "p=c/four.parquet");

  // The checkpoint file itself, as the direct reader assembles it.
  ASSERT_OK_AND_ASSIGN(
      CommitActions cp,
      ReadParquetCheckpoint(fs.get(), path + "/_delta_log/" + CheckpointFileName(1)));
  ASSERT_TRUE(cp.protocol.has_value());
  EXPECT_EQ(cp.protocol->reader_features, std::vector<std::string>{"deletionVectors"});
  ASSERT_TRUE(cp.metadata.has_value());
  EXPECT_EQ(cp.metadata->configuration.at("delta.enableDeletionVectors"), "true");
  EXPECT_EQ(cp.adds.size(), 3u);
  EXPECT_EQ(cp.removes.size(), 2u);
  for (const RemoveFile& remove : cp.removes) {
    if (remove.path == "p=a/one.parquet") {
      EXPECT_TRUE(remove.extended_file_metadata);
      EXPECT_EQ(remove.size, 11);
      EXPECT_EQ(remove.deletion_timestamp, 2000);
    }
  }
}

// Delta's golden tables (written by Spark) that have checkpoints: at every
// checkpoint version and at the latest, the snapshot read from the
// checkpoint equals a replay of the JSON commits alone.
TEST(CheckpointReaderTest, GoldenCheckpointsMatchJsonReplay) {
  std::string golden = silt::testing::ConformanceDir(SILT_CONFORMANCE_DIR) + "/delta-golden";
  SILT_REQUIRE_CONFORMANCE_DATA(golden);
  fs::FileSystemPtr fs = fs::MakeLocalFileSystem();
  int compared = 0;
  for (const auto& entry : std::filesystem::directory_iterator(golden)) {
    std::string log = entry.path().string() + "/_delta_log";
    if (!std::filesystem::exists(log + "/" + CommitFileName(0))) continue;
    std::vector<int64_t> checkpoint_versions;
    for (const auto& file : std::filesystem::directory_iterator(log)) {
      std::string name = file.path().filename().string();
      if (name.find(".checkpoint.") != std::string::npos && name.ends_with(".parquet")) {
        checkpoint_versions.push_back(std::stoll(name.substr(0, 20)));
      }
    }
    if (checkpoint_versions.empty()) continue;
    std::string name = entry.path().filename().string();
    testing::TempDir dir;
    ASSERT_OK_AND_ASSIGN(auto table, DeltaTable::Open(fs, entry.path().string()));
    ASSERT_OK_AND_ASSIGN(
        auto replayed_table,
        DeltaTable::Open(fs, CopyWithoutCheckpoints(entry.path().string(), dir.path() + "/t")));
    ASSERT_OK_AND_ASSIGN(std::vector<int64_t> versions, replayed_table->ListVersions());
    checkpoint_versions.push_back(versions.back());
    for (int64_t version : checkpoint_versions) {
      Result<SnapshotPtr> from_checkpoint = table->SnapshotAt(version);
      Result<SnapshotPtr> replayed = replayed_table->SnapshotAt(version);
      // Broken tables (a checkpoint without protocol, ...) fail either way.
      if (!from_checkpoint.ok() || !replayed.ok()) continue;
      std::string where = name + " version " + std::to_string(version);
      ExpectSameFiles(**from_checkpoint, **replayed, where);
      ++compared;
    }
  }
  EXPECT_GE(compared, 10);
}

}  // namespace
}  // namespace silt::delta
