#include "silt/state/state_file.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "silt/state/state_dir.h"
#include "silt/testing/gtest_util.h"

namespace silt::state {
namespace {

struct Row {
  RecordOp op;
  std::string key;
  std::string value;
};

class StateFileTest : public ::testing::Test {
 protected:
  fs::FileSystemPtr fs_ = fs::MakeMemoryFileSystem();
  const std::string path_ = "memory://s/7.changelog";

  void Write(const std::vector<Row>& rows, StateFileKind kind = StateFileKind::kChangelog,
             int64_t version = 7) {
    ASSERT_OK_AND_ASSIGN(auto writer, StateFileWriter::Open(fs_.get(), path_, kind, version));
    for (const Row& row : rows) ASSERT_OK(writer->Add(row.op, row.key, row.value));
    ASSERT_OK(writer->Finish(42, 99));
  }

  Result<std::vector<Row>> Read(StateFileStats* stats = nullptr,
                                StateFileKind kind = StateFileKind::kChangelog,
                                int64_t version = 7) {
    SILT_ASSIGN_OR_RETURN(auto reader, StateFileReader::Open(fs_.get(), path_, kind, version));
    std::vector<Row> rows;
    while (true) {
      SILT_ASSIGN_OR_RETURN(bool more, reader->Next());
      if (!more) break;
      rows.push_back({reader->op(), std::string(reader->key()), std::string(reader->value())});
    }
    if (stats) *stats = reader->stats();
    return rows;
  }
};

TEST_F(StateFileTest, RoundTripsRecordsAndTrailer) {
  // Large values cross the reader's 256 KiB chunks and the writer's 1 MiB ones.
  std::vector<Row> rows = {{RecordOp::kPut, "", "empty key"},
                           {RecordOp::kDelete, "a", ""},
                           {RecordOp::kPut, "b", std::string(700 << 10, 'x')},
                           {RecordOp::kPut, std::string("c\0d", 3), ""},
                           {RecordOp::kPut, "d", std::string(3 << 20, 'y')}};
  for (int i = 0; i < 5000; ++i) rows.push_back({RecordOp::kPut, "e" + std::to_string(i), "v"});
  std::sort(rows.begin() + 5, rows.end(), [](const Row& a, const Row& b) { return a.key < b.key; });
  Write(rows);
  StateFileStats stats;
  ASSERT_OK_AND_ASSIGN(auto read, Read(&stats));
  ASSERT_EQ(read.size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(read[i].op, rows[i].op) << i;
    EXPECT_EQ(read[i].key, rows[i].key) << i;
    EXPECT_EQ(read[i].value, rows[i].value) << i;
  }
  EXPECT_EQ(stats.record_count, static_cast<int64_t>(rows.size()));
  EXPECT_EQ(stats.num_rows, 42);
  EXPECT_EQ(stats.key_value_bytes, 99);
}

TEST_F(StateFileTest, WriterRejectsKeysOutOfOrderAndDeletesInSnapshots) {
  ASSERT_OK_AND_ASSIGN(auto writer,
                       StateFileWriter::Open(fs_.get(), path_, StateFileKind::kChangelog, 7));
  ASSERT_OK(writer->Add(RecordOp::kPut, "b", "1"));
  ASSERT_RAISES(Internal, writer->Add(RecordOp::kPut, "b", "2"));
  ASSERT_RAISES(Internal, writer->Add(RecordOp::kPut, "a", "2"));
  writer.reset();
  ASSERT_OK_AND_ASSIGN(auto exists, fs_->Exists(path_));
  EXPECT_FALSE(exists) << "an unfinished file must not appear";
  ASSERT_OK_AND_ASSIGN(writer,
                       StateFileWriter::Open(fs_.get(), path_, StateFileKind::kSnapshot, 7));
  ASSERT_RAISES(Internal, writer->Add(RecordOp::kDelete, "a", ""));
}

TEST_F(StateFileTest, EveryDamagedOrTruncatedByteIsCorruptionNamingTheFile) {
  Write({{RecordOp::kPut, "key1", "value1"}, {RecordOp::kDelete, "key2", ""}});
  ASSERT_OK_AND_ASSIGN(std::string good, fs_->ReadFile(path_));
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ 0x01);
    ASSERT_OK(fs_->WriteFile(path_, bad));
    Status st = Read().status();
    EXPECT_TRUE(st.IsCorruption()) << "flipped byte " << i << ": " << st.ToString();
    EXPECT_NE(st.message().find(path_), std::string::npos) << st.ToString();
  }
  for (size_t len = 0; len < good.size(); ++len) {
    ASSERT_OK(fs_->WriteFile(path_, good.substr(0, len)));
    Status st = Read().status();
    EXPECT_TRUE(st.IsCorruption()) << "truncated to " << len << ": " << st.ToString();
    EXPECT_NE(st.message().find(path_), std::string::npos) << st.ToString();
  }
  ASSERT_OK(fs_->WriteFile(path_, good + "x"));
  EXPECT_RAISES(Corruption, Read());
}

TEST_F(StateFileTest, HeaderMustMatchKindAndVersion) {
  Write({{RecordOp::kPut, "k", "v"}});
  EXPECT_RAISES(Corruption, Read(nullptr, StateFileKind::kChangelog, 8));
  EXPECT_RAISES(Corruption, Read(nullptr, StateFileKind::kSnapshot, 7));
  EXPECT_OK(Read(nullptr, StateFileKind::kChangelog, 7));
}

TEST(StateFileNameTest, FormatsAndParses) {
  EXPECT_EQ(StateFileName(42, StateFileKind::kChangelog), "42.changelog");
  EXPECT_EQ(StateFileName(40, StateFileKind::kSnapshot), "40.snapshot");
  auto parsed = ParseStateFileName("40.snapshot");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->version, 40);
  EXPECT_EQ(parsed->kind, StateFileKind::kSnapshot);
  for (const char* name : {"040.snapshot", ".42.changelog.123-1.tmp", "x.changelog", ".changelog",
                           "-1.changelog", "42.zip", "42"}) {
    EXPECT_FALSE(ParseStateFileName(name)) << name;
  }
}

TEST(StateDirTest, PlansLoadsAndPurges) {
  StateDir d;
  d.dir = "memory://s";
  d.changelogs = {1, 2, 3, 4, 5, 6, 7};
  d.snapshots = {3, 6};
  EXPECT_EQ(d.LoadableVersions(), (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7}));
  ASSERT_OK_AND_ASSIGN(LoadPlan plan, d.Plan(5, -1));
  EXPECT_TRUE(plan.from_snapshot);
  EXPECT_EQ(plan.base, 3);
  EXPECT_EQ(plan.changelogs, (std::vector<int64_t>{4, 5}));
  // A held version at or after the newest snapshot is the better base.
  ASSERT_OK_AND_ASSIGN(plan, d.Plan(7, 6));
  EXPECT_FALSE(plan.from_snapshot);
  EXPECT_EQ(plan.base, 6);
  EXPECT_EQ(plan.changelogs, (std::vector<int64_t>{7}));
  ASSERT_OK_AND_ASSIGN(plan, d.Plan(7, 2));
  EXPECT_TRUE(plan.from_snapshot);
  EXPECT_EQ(plan.base, 6);
  EXPECT_RAISES(NotFound, d.Plan(8, -1));
  EXPECT_EQ(d.Purgeable(5),
            (std::vector<std::string>{"memory://s/1.changelog", "memory://s/2.changelog",
                                      "memory://s/3.changelog"}));
  EXPECT_EQ(d.Purgeable(2), std::vector<std::string>{});
  d.changelogs.erase(4);
  EXPECT_EQ(d.LoadableVersions(), (std::vector<int64_t>{1, 2, 3, 6, 7}));
  Status st = d.Plan(5, -1).status();
  EXPECT_TRUE(st.IsCorruption());
  EXPECT_NE(st.message().find("memory://s/4.changelog"), std::string::npos) << st.ToString();
  EXPECT_RAISES(NotFound, d.Plan(4, -1));
}

}  // namespace
}  // namespace silt::state
