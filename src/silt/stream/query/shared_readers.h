// SharedReaders: the readers of a batch's parts as the parts' threads share
// them (QueryRunner::RunParts, the job's `parallelism`). The thread of part
// i reads reader i first; once that is done it takes chunks from the other
// readers in turn, one Next() at a time under that reader's lock. So parts
// of unequal size keep every thread busy to the end of the batch: a topic
// whose keys put nine records in ten on one partition (the seed job's two
// devices), files of different sizes. A part's writer may therefore hold
// rows of any reader; the batch's rows, offsets and commit are unchanged.
//
// Chunks are independent of their reader once returned (source.h), so a
// thread transforms and writes them outside the lock.
//
// Thread safety: Take may be called from any number of threads at once,
// each with its own cursor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/stream/source/source.h"

namespace silt::stream::query_internal {

class SharedReaders {
 public:
  // REQUIRES: `readers` outlives this object and is not empty.
  explicit SharedReaders(const std::vector<std::unique_ptr<BatchReader>>& readers);

  // Where one part's thread is: how many readers past its own it has found
  // done. Starts at 0 (its own reader).
  struct Cursor {
    size_t passed = 0;
  };

  // The next chunk for the thread of part `part`, with the file its rows
  // came from; false once every reader is done. A reader's
  // dropped_input_rows() is added to `dropped_rows` once, by the thread
  // that finds its end. A reader's error is returned once, and that reader
  // then counts as done.
  Result<bool> Take(size_t part, Cursor* cursor, columnar::RecordBatchPtr* chunk,
                    std::string* input_file, int64_t* dropped_rows);

 private:
  struct Shared {
    explicit Shared(BatchReader* r) : reader(r) {}
    std::mutex mu;
    BatchReader* reader;
    bool done = false;  // guarded by mu
  };
  std::vector<std::unique_ptr<Shared>> readers_;
};

}  // namespace silt::stream::query_internal
