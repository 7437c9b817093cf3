#include "silt/stream/checkpoint/checkpoint.h"

#include <gtest/gtest.h>

#include "silt/base/uuid.h"
#include "silt/testing/gtest_util.h"

namespace silt::stream {
namespace {

// What Spark 3.5 writes into offsets/N for a Kafka source (conf in Spark's
// own order and default values).
constexpr char kSparkOffsets[] =
    "v1\n"
    R"({"batchWatermarkMs":0,"batchTimestampMs":1705249601108,"conf":{)"
    R"("spark.sql.streaming.stateStore.providerClass":)"
    R"("org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider",)"
    R"("spark.sql.streaming.join.stateFormatVersion":"2",)"
    R"("spark.sql.streaming.stateStore.compression.codec":"lz4",)"
    R"("spark.sql.streaming.stateStore.rocksdb.formatVersion":"5",)"
    R"("spark.sql.streaming.statefulOperator.useStrictDistribution":"true",)"
    R"("spark.sql.streaming.flatMapGroupsWithState.stateFormatVersion":"2",)"
    R"("spark.sql.streaming.multipleWatermarkPolicy":"min",)"
    R"("spark.sql.streaming.aggregation.stateFormatVersion":"2",)"
    R"("spark.sql.shuffle.partitions":"200"}})"
    "\n"
    R"({"visits":{"1":1276,"0":1224}})";

TEST(CheckpointFormatTest, OffsetSeqMatchesSparkBytes) {
  OffsetSeq seq;
  seq.batch_id = 18;
  seq.batch_watermark_ms = 0;
  seq.batch_timestamp_ms = 1705249601108;
  seq.conf_json = DefaultOffsetConfJson();
  seq.source_offsets = {R"({"visits":{"1":1276,"0":1224}})"};
  EXPECT_EQ(SerializeOffsetSeq(seq), kSparkOffsets);
}

TEST(CheckpointFormatTest, ParsesSparkOffsetsAndRoundTrips) {
  ASSERT_OK_AND_ASSIGN(OffsetSeq seq, ParseOffsetSeq(kSparkOffsets, 18, "offsets/18"));
  EXPECT_EQ(seq.batch_id, 18);
  EXPECT_EQ(seq.batch_timestamp_ms, 1705249601108);
  EXPECT_EQ(seq.conf_json, DefaultOffsetConfJson());
  ASSERT_EQ(seq.source_offsets.size(), 1u);
  EXPECT_EQ(seq.source_offsets[0], R"({"visits":{"1":1276,"0":1224}})");
  EXPECT_EQ(SerializeOffsetSeq(seq), kSparkOffsets);
}

TEST(CheckpointFormatTest, OffsetSeqWithWatermarkAndMissingSource) {
  OffsetSeq seq;
  seq.batch_watermark_ms = 1750580000000;
  seq.batch_timestamp_ms = 1750580300000;
  seq.source_offsets = {R"({"logOffset":3})", "-"};
  std::string text = SerializeOffsetSeq(seq);
  EXPECT_EQ(text,
            "v1\n{\"batchWatermarkMs\":1750580000000,\"batchTimestampMs\":1750580300000,"
            "\"conf\":{}}\n{\"logOffset\":3}\n-");
  ASSERT_OK_AND_ASSIGN(OffsetSeq back, ParseOffsetSeq(text, 4, "offsets/4"));
  EXPECT_EQ(back.batch_watermark_ms, 1750580000000);
  EXPECT_EQ(back.source_offsets, seq.source_offsets);
}

TEST(CheckpointFormatTest, RejectsNewerAndBrokenOffsetLogs) {
  ASSERT_RAISES(NotSupported, ParseOffsetSeq("v2\n{}\n0:{}", 0, "offsets/0"));
  Result<OffsetSeq> broken = ParseOffsetSeq("v1\n{not json\n{}", 7, "ckpt/offsets/7");
  ASSERT_RAISES(Corruption, broken);
  EXPECT_NE(broken.status().message().find("ckpt/offsets/7: line 2"), std::string::npos);
  ASSERT_RAISES(Corruption, ParseOffsetSeq("", 0, "offsets/0"));
  ASSERT_RAISES(Corruption, ParseOffsetSeq("x1\n{}", 0, "offsets/0"));
}

TEST(CheckpointFormatTest, CommitMatchesSparkBytes) {
  EXPECT_EQ(SerializeCommitMark({3, 0}), "v1\n{\"nextBatchWatermarkMs\":0}");
  ASSERT_OK_AND_ASSIGN(CommitMark mark,
                       ParseCommitMark("v1\n{\"nextBatchWatermarkMs\":1750580000000}", 9, "c/9"));
  EXPECT_EQ(mark.batch_id, 9);
  EXPECT_EQ(mark.next_batch_watermark_ms, 1750580000000);
  // Spark reads a commit without its second line as {}.
  ASSERT_OK_AND_ASSIGN(CommitMark bare, ParseCommitMark("v1", 2, "c/2"));
  EXPECT_EQ(bare.next_batch_watermark_ms, 0);
  // Checkpoint format v2 adds state ids silt does not use.
  ASSERT_OK_AND_ASSIGN(CommitMark v2, ParseCommitMark(R"(v2
{"nextBatchWatermarkMs":5,"stateUniqueIds":{"0":[["a"]]}})",
                                                      1, "c/1"));
  EXPECT_EQ(v2.next_batch_watermark_ms, 5);
}

class CheckpointDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs_ = fs::MakeMemoryFileSystem();
    ASSERT_OK_AND_ASSIGN(dir_, CheckpointDir::Open(fs_, "memory://ckpt"));
  }
  fs::FileSystemPtr fs_;
  std::unique_ptr<CheckpointDir> dir_;
};

TEST_F(CheckpointDirTest, QueryIdIsCreatedOnceInSparkFormat) {
  ASSERT_RAISES(NotFound, dir_->ReadQueryId());
  ASSERT_OK_AND_ASSIGN(std::string id, dir_->GetOrCreateQueryId());
  EXPECT_TRUE(IsUuid(id));
  ASSERT_OK_AND_ASSIGN(std::string text, fs_->ReadFile("memory://ckpt/metadata"));
  EXPECT_EQ(text, "{\"id\":\"" + id + "\"}");
  ASSERT_OK_AND_ASSIGN(std::string again, dir_->GetOrCreateQueryId());
  EXPECT_EQ(again, id);
}

TEST_F(CheckpointDirTest, ReadsSparkWrittenMetadata) {
  ASSERT_OK(
      fs_->WriteFile("memory://ckpt/metadata", R"({"id":"3bffe7c2-e334-4419-a150-f6f47b565c78"})"));
  ASSERT_OK_AND_ASSIGN(std::string id, dir_->GetOrCreateQueryId());
  EXPECT_EQ(id, "3bffe7c2-e334-4419-a150-f6f47b565c78");
}

TEST_F(CheckpointDirTest, WritesListsAndRefusesToOverwrite) {
  ASSERT_OK_AND_ASSIGN(std::optional<int64_t> none, dir_->LatestOffsetBatch());
  EXPECT_FALSE(none.has_value());
  for (int64_t batch = 0; batch < 12; ++batch) {
    OffsetSeq seq;
    seq.batch_id = batch;
    seq.batch_timestamp_ms = 1000 + batch;
    seq.source_offsets = {"{\"logOffset\":" + std::to_string(batch) + "}"};
    ASSERT_OK(dir_->WriteOffsets(seq));
    if (batch < 11) ASSERT_OK(dir_->WriteCommit({batch, 0}));
  }
  // Temp files and Hadoop checksum sidecars are not batches.
  ASSERT_OK(fs_->WriteFile("memory://ckpt/offsets/.12.tmp", "x"));
  ASSERT_OK(fs_->WriteFile("memory://ckpt/offsets/.11.crc", "x"));
  ASSERT_OK_AND_ASSIGN(std::optional<int64_t> latest, dir_->LatestOffsetBatch());
  EXPECT_EQ(latest, 11);  // numeric order, not "9" > "11"
  ASSERT_OK_AND_ASSIGN(std::optional<int64_t> committed, dir_->LatestCommitBatch());
  EXPECT_EQ(committed, 10);
  ASSERT_OK_AND_ASSIGN(std::string commit_text, fs_->ReadFile("memory://ckpt/commits/10"));
  EXPECT_EQ(commit_text, "v1\n{\"nextBatchWatermarkMs\":0}");

  OffsetSeq again;
  again.batch_id = 11;
  again.source_offsets = {"{\"logOffset\":99}"};
  Status st = dir_->WriteOffsets(again);
  ASSERT_RAISES(AlreadyExists, st);
  ASSERT_OK_AND_ASSIGN(OffsetSeq kept, dir_->ReadOffsets(11));
  EXPECT_EQ(kept.source_offsets[0], "{\"logOffset\":11}");
  ASSERT_RAISES(AlreadyExists, dir_->WriteCommit({10, 0}));

  ASSERT_OK_AND_ASSIGN(std::vector<BatchInfo> batches, dir_->ListBatches());
  ASSERT_EQ(batches.size(), 12u);
  EXPECT_TRUE(batches[11].offsets.has_value());
  EXPECT_FALSE(batches[11].commit.has_value());
  EXPECT_EQ(batches[3].offsets->batch_timestamp_ms, 1003);
}

TEST_F(CheckpointDirTest, PurgeKeepsBatchesAtOrAboveTheThreshold) {
  for (int64_t batch = 0; batch < 5; ++batch) {
    OffsetSeq seq;
    seq.batch_id = batch;
    seq.source_offsets = {"-"};
    ASSERT_OK(dir_->WriteOffsets(seq));
    ASSERT_OK(dir_->WriteCommit({batch, 0}));
  }
  ASSERT_OK(dir_->Purge(3));
  ASSERT_OK_AND_ASSIGN(std::vector<BatchInfo> batches, dir_->ListBatches());
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[0].batch_id, 3);
  EXPECT_EQ(batches[1].batch_id, 4);

  // Later purges delete exactly the ids that fell below the new threshold.
  for (int64_t batch = 5; batch < 8; ++batch) {
    OffsetSeq seq;
    seq.batch_id = batch;
    seq.source_offsets = {"-"};
    ASSERT_OK(dir_->WriteOffsets(seq));
    ASSERT_OK(dir_->WriteCommit({batch, 0}));
  }
  ASSERT_OK(dir_->Purge(6));
  ASSERT_OK(dir_->Purge(5));  // a lower threshold changes nothing
  ASSERT_OK_AND_ASSIGN(batches, dir_->ListBatches());
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[0].batch_id, 6);
  EXPECT_EQ(batches[1].batch_id, 7);
}

TEST_F(CheckpointDirTest, StateOfAnotherEngineOrOfAStepTheJobLacksIsRefused) {
  constexpr std::string_view kMarker = "_metadata/silt-operator.json";
  // No state/ at all, and an empty operator directory: nothing to refuse.
  ASSERT_OK(dir_->CheckStateOperators({}, kMarker));
  ASSERT_OK(fs_->CreateDir("memory://ckpt/state/0/0"));
  ASSERT_OK(dir_->CheckStateOperators({}, kMarker));

  // silt's own operator 0 with its step record and state files.
  ASSERT_OK(fs_->WriteFile("memory://ckpt/state/0/_metadata/silt-operator.json", "{}"));
  ASSERT_OK(fs_->WriteFile("memory://ckpt/state/0/0/1.changelog", "x"));
  ASSERT_OK(dir_->CheckStateOperators({0}, kMarker));
  // ... which a job without that stateful step cannot continue.
  Status gone = dir_->CheckStateOperators({}, kMarker);
  ASSERT_TRUE(gone.IsInvalidArgument()) << gone.ToString();
  EXPECT_NE(gone.message().find("state of stateful operator 0, but the job has no stateful step"),
            std::string::npos)
      << gone.ToString();

  // Spark's HDFS-backed state store for operator 1: refused whatever the job.
  ASSERT_OK(fs_->WriteFile("memory://ckpt/state/1/0/1.delta", "spark"));
  ASSERT_OK(fs_->WriteFile("memory://ckpt/state/1/_metadata/metadata", "v1"));
  for (const std::vector<int>& ops : {std::vector<int>{0}, std::vector<int>{0, 1}}) {
    Status spark = dir_->CheckStateOperators(ops, kMarker);
    ASSERT_TRUE(spark.IsInvalidArgument()) << spark.ToString();
    EXPECT_NE(spark.message().find("memory://ckpt/state/1 holds state that silt did not write"),
              std::string::npos)
        << spark.ToString();
    EXPECT_NE(spark.message().find("new checkpointLocation"), std::string::npos);
  }
}

}  // namespace
}  // namespace silt::stream
