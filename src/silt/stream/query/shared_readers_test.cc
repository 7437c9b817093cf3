#include "silt/stream/query/shared_readers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "silt/testing/gtest_util.h"

namespace silt::stream::query_internal {
namespace {

// Chunks are told apart by their row counts: reader r's k-th chunk has
// r * 1000 + k + 1 rows (no columns).
class CountingReader final : public BatchReader {
 public:
  CountingReader(int id, int chunks, int64_t dropped, int fail_at = -1)
      : id_(id), chunks_(chunks), dropped_(dropped), fail_at_(fail_at) {}

  Result<columnar::RecordBatchPtr> Next() override {
    if (next_ == fail_at_) {
      ++next_;
      return Status::IOError("reader ", id_, " failed");
    }
    if (next_ >= chunks_) {
      ++calls_after_end_;
      return columnar::RecordBatchPtr();
    }
    auto chunk = std::make_shared<columnar::RecordBatch>();
    chunk->num_rows = id_ * 1000 + next_ + 1;
    ++next_;
    return columnar::RecordBatchPtr(std::move(chunk));
  }
  std::string_view input_file_name() const override { return file_; }
  int64_t dropped_input_rows() const override { return dropped_; }

  int calls_after_end() const { return calls_after_end_; }

 private:
  int id_;
  int chunks_;
  int64_t dropped_;
  int fail_at_;
  int next_ = 0;
  int calls_after_end_ = 0;
  std::string file_ = "file:///in/" + std::to_string(id_);
};

std::vector<std::unique_ptr<BatchReader>> Readers(const std::vector<int>& chunks) {
  std::vector<std::unique_ptr<BatchReader>> readers;
  for (size_t r = 0; r < chunks.size(); ++r) {
    readers.push_back(std::make_unique<CountingReader>(static_cast<int>(r), chunks[r],
                                                       /*dropped=*/static_cast<int64_t>(r) + 10));
  }
  return readers;
}

// One thread alone: its own reader first, then the others in turn from the
// next one on, each reader's dropped rows counted once, each reader's end
// asked for once.
TEST(SharedReadersTest, APartGoesOnWithTheOtherReadersAfterItsOwn) {
  std::vector<std::unique_ptr<BatchReader>> readers = Readers({2, 1, 3});
  SharedReaders shared(readers);
  SharedReaders::Cursor cursor;
  std::vector<int64_t> order;
  std::vector<std::string> files;
  int64_t dropped = 0;
  columnar::RecordBatchPtr chunk;
  std::string file;
  while (true) {
    ASSERT_OK_AND_ASSIGN(bool taken, shared.Take(1, &cursor, &chunk, &file, &dropped));
    if (!taken) break;
    order.push_back(chunk->num_rows);
    files.push_back(file);
  }
  EXPECT_EQ(order, (std::vector<int64_t>{1001, 2001, 2002, 2003, 1, 2}));
  EXPECT_EQ(files.front(), "file:///in/1");
  EXPECT_EQ(files.back(), "file:///in/0");
  EXPECT_EQ(dropped, 10 + 11 + 12);
  // Done stays done: no reader is asked again, nothing counted twice.
  ASSERT_OK_AND_ASSIGN(bool again, shared.Take(1, &cursor, &chunk, &file, &dropped));
  EXPECT_FALSE(again);
  SharedReaders::Cursor other;
  ASSERT_OK_AND_ASSIGN(again, shared.Take(0, &other, &chunk, &file, &dropped));
  EXPECT_FALSE(again);
  EXPECT_EQ(dropped, 33);
  for (const std::unique_ptr<BatchReader>& reader : readers) {
    EXPECT_EQ(static_cast<CountingReader&>(*reader).calls_after_end(), 1);
  }
}

TEST(SharedReadersTest, AReadersErrorIsReturnedOnceAndTheOthersGoOn) {
  std::vector<std::unique_ptr<BatchReader>> readers;
  readers.push_back(std::make_unique<CountingReader>(0, 3, 0, /*fail_at=*/1));
  readers.push_back(std::make_unique<CountingReader>(1, 1, 0));
  SharedReaders shared(readers);
  SharedReaders::Cursor cursor;
  columnar::RecordBatchPtr chunk;
  std::string file;
  int64_t dropped = 0;
  ASSERT_OK_AND_ASSIGN(bool taken, shared.Take(0, &cursor, &chunk, &file, &dropped));
  ASSERT_TRUE(taken);
  EXPECT_EQ(chunk->num_rows, 1);
  Result<bool> failed = shared.Take(0, &cursor, &chunk, &file, &dropped);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("reader 0 failed"), std::string::npos);
  ASSERT_OK_AND_ASSIGN(taken, shared.Take(0, &cursor, &chunk, &file, &dropped));
  ASSERT_TRUE(taken);
  EXPECT_EQ(chunk->num_rows, 1001);
  ASSERT_OK_AND_ASSIGN(taken, shared.Take(0, &cursor, &chunk, &file, &dropped));
  EXPECT_FALSE(taken);
}

// Threads at once over readers of very unequal size: every chunk is taken
// exactly once, and every reader's dropped rows are counted once.
TEST(SharedReadersTest, ThreadsTogetherTakeEveryChunkOnce) {
  const std::vector<int> sizes = {400, 1, 0, 37};
  std::vector<std::unique_ptr<BatchReader>> readers = Readers(sizes);
  SharedReaders shared(readers);
  std::vector<std::vector<int64_t>> taken(sizes.size());
  std::vector<int64_t> dropped(sizes.size(), 0);
  std::vector<Status> errors(sizes.size());
  auto run = [&](size_t part) {
    SharedReaders::Cursor cursor;
    columnar::RecordBatchPtr chunk;
    std::string file;
    while (true) {
      Result<bool> got = shared.Take(part, &cursor, &chunk, &file, &dropped[part]);
      if (!got.ok()) {
        errors[part] = got.status();
        return;
      }
      if (!*got) return;
      taken[part].push_back(chunk->num_rows);
    }
  };
  std::vector<std::thread> threads;
  for (size_t part = 0; part < sizes.size(); ++part) threads.emplace_back(run, part);
  for (std::thread& thread : threads) thread.join();
  std::vector<int64_t> all;
  int64_t all_dropped = 0;
  for (size_t part = 0; part < sizes.size(); ++part) {
    ASSERT_OK(errors[part]);
    all.insert(all.end(), taken[part].begin(), taken[part].end());
    all_dropped += dropped[part];
  }
  std::sort(all.begin(), all.end());
  std::vector<int64_t> want;
  for (size_t r = 0; r < sizes.size(); ++r) {
    for (int k = 0; k < sizes[r]; ++k) want.push_back(static_cast<int64_t>(r) * 1000 + k + 1);
  }
  EXPECT_EQ(all, want);
  EXPECT_EQ(all_dropped, 10 + 11 + 12 + 13);
}

}  // namespace
}  // namespace silt::stream::query_internal
