#include "silt/stream/source/mqtt_wal.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "silt/testing/gtest_util.h"

namespace silt::stream {
namespace {

class MqttWalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/silt_mqtt_wal_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = std::string(tmpl) + "/sources/0/wal";
    root_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  std::unique_ptr<MqttWal> OpenWal(int64_t segment_bytes = int64_t{8} << 20) {
    MqttWal::Options options;
    options.dir = dir_;
    options.segment_bytes = segment_bytes;
    Result<std::unique_ptr<MqttWal>> wal = MqttWal::Open(options);
    EXPECT_TRUE(wal.ok()) << wal.status().ToString();
    return std::move(wal).ValueOrDie();
  }

  static MqttWalRecord Message(int i) {
    MqttWalRecord r;
    r.arrival_micros = 1'700'000'000'000'000 + i;
    r.message_id = 1 + i % 65535;
    r.qos = 1;
    r.retained = i % 7 == 0;
    r.topic = "zigbee2mqtt/device_" + std::to_string(i % 3);
    r.payload = std::string("{\"n\":") + std::to_string(i) + "}" + std::string(i % 5, '\0');
    return r;
  }

  std::vector<std::string> Segments() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(dir_)) {
      out.push_back(e.path().string());
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  std::string dir_;
  std::string root_;
};

TEST_F(MqttWalTest, AppendIsInvisibleUntilSyncThenReadsBackEveryField) {
  auto wal = OpenWal();
  EXPECT_EQ(wal->begin_seq(), 0);
  for (int i = 0; i < 10; ++i) wal->Append(Message(i));
  EXPECT_EQ(wal->end_seq(), 0);
  EXPECT_EQ(wal->buffered(), 10);
  ASSERT_OK(wal->Sync());
  EXPECT_EQ(wal->end_seq(), 10);
  ASSERT_OK_AND_ASSIGN(std::vector<MqttWalRecord> got, wal->Read(3, 8, 100, 1 << 20));
  ASSERT_EQ(got.size(), 5u);
  for (int i = 3; i < 8; ++i) {
    const MqttWalRecord& r = got[static_cast<size_t>(i - 3)];
    MqttWalRecord want = Message(i);
    EXPECT_EQ(r.seq, i);
    EXPECT_EQ(r.arrival_micros, want.arrival_micros);
    EXPECT_EQ(r.message_id, want.message_id);
    EXPECT_EQ(r.qos, 1);
    EXPECT_EQ(r.retained, want.retained);
    EXPECT_EQ(r.topic, want.topic);
    EXPECT_EQ(r.payload, want.payload);
  }
  // Records past the durable end are refused, not invented.
  EXPECT_RAISES(InvalidArgument, wal->Read(0, 11, 100, 1 << 20));
}

TEST_F(MqttWalTest, ReopenKeepsSyncedRecordsAndDropsUnsynced) {
  {
    auto wal = OpenWal();
    for (int i = 0; i < 5; ++i) wal->Append(Message(i));
    ASSERT_OK(wal->Sync());
    wal->Append(Message(5));  // never synced: lost, as its PUBACK was never sent
  }
  auto wal = OpenWal();
  EXPECT_EQ(wal->end_seq(), 5);
  wal->Append(Message(5));
  ASSERT_OK(wal->Sync());
  ASSERT_OK_AND_ASSIGN(std::vector<MqttWalRecord> got, wal->Read(0, 6, 100, 1 << 20));
  ASSERT_EQ(got.size(), 6u);
  EXPECT_EQ(got[5].payload, Message(5).payload);
}

TEST_F(MqttWalTest, TornTailIsCutAtTheLastWholeRecord) {
  {
    auto wal = OpenWal();
    for (int i = 0; i < 20; ++i) wal->Append(Message(i));
    ASSERT_OK(wal->Sync());
  }
  const std::string segment = Segments().back();
  const auto size = static_cast<int64_t>(std::filesystem::file_size(segment));
  for (int64_t cut : {int64_t{1}, int64_t{9}, int64_t{20}}) {
    // A crash in the middle of a write leaves part of the last record.
    ASSERT_EQ(::truncate(segment.c_str(), size - cut), 0);
    auto wal = OpenWal();
    EXPECT_EQ(wal->end_seq(), 19) << "cut " << cut;
    wal->Append(Message(19));
    ASSERT_OK(wal->Sync());
    EXPECT_EQ(wal->end_seq(), 20);
  }
  // A flipped byte in the last record fails its CRC: cut as well.
  {
    int fd = ::open(segment.c_str(), O_RDWR);
    ASSERT_GE(fd, 0);
    char c = 0;
    ASSERT_EQ(::pread(fd, &c, 1, size - 3), 1);
    c = static_cast<char>(c ^ 0x5A);
    ASSERT_EQ(::pwrite(fd, &c, 1, size - 3), 1);
    ::close(fd);
  }
  auto wal = OpenWal();
  EXPECT_EQ(wal->end_seq(), 19);
  ASSERT_OK_AND_ASSIGN(std::vector<MqttWalRecord> got, wal->Read(0, 19, 100, 1 << 20));
  EXPECT_EQ(got.size(), 19u);
}

TEST_F(MqttWalTest, SegmentsRollReadAcrossThemAndTrimWholeOnes) {
  auto wal = OpenWal(/*segment_bytes=*/512);
  for (int i = 0; i < 200; ++i) {
    wal->Append(Message(i));
    if (i % 4 == 3) ASSERT_OK(wal->Sync());
  }
  EXPECT_EQ(wal->end_seq(), 200);
  const size_t segments = Segments().size();
  EXPECT_GT(segments, 5u);
  ASSERT_OK_AND_ASSIGN(std::vector<MqttWalRecord> all, wal->Read(0, 200, 1000, 1 << 20));
  ASSERT_EQ(all.size(), 200u);
  for (int i = 0; i < 200; ++i) EXPECT_EQ(all[static_cast<size_t>(i)].payload, Message(i).payload);
  // Chunked reads stop at the record cap.
  ASSERT_OK_AND_ASSIGN(std::vector<MqttWalRecord> chunk, wal->Read(17, 200, 10, 1 << 20));
  ASSERT_EQ(chunk.size(), 10u);
  EXPECT_EQ(chunk.front().seq, 17);

  const int64_t before = wal->size_bytes();
  ASSERT_OK(wal->TrimBefore(120));
  EXPECT_LT(wal->size_bytes(), before);
  EXPECT_LT(Segments().size(), segments);
  EXPECT_LE(wal->begin_seq(), 120);
  EXPECT_GT(wal->begin_seq(), 0);
  // What a batch starting at 120 needs is still there; what was trimmed is
  // refused with an error naming the held range.
  ASSERT_OK_AND_ASSIGN(std::vector<MqttWalRecord> rest, wal->Read(120, 200, 1000, 1 << 20));
  EXPECT_EQ(rest.size(), 80u);
  EXPECT_RAISES(InvalidArgument, wal->Read(0, 10, 100, 1 << 20));

  // Reopening after trims and rolls finds the same range.
  const int64_t begin = wal->begin_seq();
  wal.reset();
  wal = OpenWal(512);
  EXPECT_EQ(wal->begin_seq(), begin);
  EXPECT_EQ(wal->end_seq(), 200);
  ASSERT_OK_AND_ASSIGN(std::vector<MqttWalRecord> tail, wal->Tail(3));
  ASSERT_EQ(tail.size(), 3u);
  EXPECT_EQ(tail.front().seq, 197);
  // Trimming everything keeps the segment being written.
  ASSERT_OK(wal->TrimBefore(200));
  EXPECT_EQ(Segments().size(), 1u);
  wal->Append(Message(200));
  ASSERT_OK(wal->Sync());
  EXPECT_EQ(wal->end_seq(), 201);
}

TEST_F(MqttWalTest, SegmentWithTornHeaderIsDropped) {
  {
    auto wal = OpenWal(256);
    for (int i = 0; i < 30; ++i) {
      wal->Append(Message(i));
      ASSERT_OK(wal->Sync());
    }
  }
  // A crash right after creating the next segment file, before its header.
  const std::string next = dir_ + "/wal-00000000000000000999.log";
  {
    std::FILE* f = std::fopen(next.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("SILT", f);
    std::fclose(f);
  }
  auto wal = OpenWal(256);
  EXPECT_EQ(wal->end_seq(), 30);
  EXPECT_FALSE(std::filesystem::exists(next));
}

TEST_F(MqttWalTest, LoneSegmentWithTornHeaderKeepsTheNumbering) {
  {
    auto wal = OpenWal(256);
    for (int i = 0; i < 30; ++i) {
      wal->Append(Message(i));
      ASSERT_OK(wal->Sync());
    }
    ASSERT_OK(wal->TrimBefore(30));
  }
  std::vector<std::string> segments = Segments();
  ASSERT_EQ(segments.size(), 1u);
  const std::string name = std::filesystem::path(segments[0]).filename().string();
  const int64_t first = std::stoll(name.substr(4, 20));
  ASSERT_GT(first, 0);
  // As if the crash hit while the segment's header was being written.
  ASSERT_EQ(::truncate(segments[0].c_str(), 0), 0);
  auto wal = OpenWal(256);
  EXPECT_EQ(wal->begin_seq(), first);
  EXPECT_EQ(wal->end_seq(), first);
}

TEST_F(MqttWalTest, NewestSegmentWithDamagedHeaderAndRecordsIsCorruption) {
  {
    auto wal = OpenWal();
    for (int i = 0; i < 3; ++i) wal->Append(Message(i));
    ASSERT_OK(wal->Sync());
  }
  {
    int fd = ::open(Segments().back().c_str(), O_RDWR);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, "X", 1, 0), 1);
    ::close(fd);
  }
  MqttWal::Options options;
  options.dir = dir_;
  Result<std::unique_ptr<MqttWal>> opened = MqttWal::Open(options);
  ASSERT_FALSE(opened.ok());
  EXPECT_TRUE(opened.status().IsCorruption()) << opened.status().ToString();
}

TEST_F(MqttWalTest, DamagedClosedSegmentIsCorruption) {
  {
    auto wal = OpenWal(256);
    for (int i = 0; i < 30; ++i) {
      wal->Append(Message(i));
      ASSERT_OK(wal->Sync());
    }
  }
  std::vector<std::string> segments = Segments();
  ASSERT_GT(segments.size(), 2u);
  {
    int fd = ::open(segments[1].c_str(), O_RDWR);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, "X", 1, 0), 1);
    ::close(fd);
  }
  MqttWal::Options options;
  options.dir = dir_;
  options.segment_bytes = 256;
  Result<std::unique_ptr<MqttWal>> opened = MqttWal::Open(options);
  // Only the newest segment is checked when opening; the damage shows when
  // a batch reads it.
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  auto wal = std::move(opened).ValueOrDie();
  Result<std::vector<MqttWalRecord>> read = wal->Read(0, 30, 100, 1 << 20);
  ASSERT_FALSE(read.ok());
  EXPECT_TRUE(read.status().IsCorruption()) << read.status().ToString();
}

}  // namespace
}  // namespace silt::stream
