// SharedReaders (query/shared_readers.h): a batch's part readers, drained
// by every part's thread.
#include "silt/stream/query/shared_readers.h"

namespace silt::stream::query_internal {

SharedReaders::SharedReaders(const std::vector<std::unique_ptr<BatchReader>>& readers) {
  readers_.reserve(readers.size());
  for (const std::unique_ptr<BatchReader>& reader : readers) {
    readers_.push_back(std::make_unique<Shared>(reader.get()));
  }
}

Result<bool> SharedReaders::Take(size_t part, Cursor* cursor, columnar::RecordBatchPtr* chunk,
                                 std::string* input_file, int64_t* dropped_rows) {
  for (; cursor->passed < readers_.size(); ++cursor->passed) {
    Shared& shared = *readers_[(part + cursor->passed) % readers_.size()];
    std::lock_guard<std::mutex> lock(shared.mu);
    if (shared.done) continue;
    Result<columnar::RecordBatchPtr> next = shared.reader->Next();
    if (!next.ok()) {
      shared.done = true;
      return next.status();
    }
    if (*next == nullptr) {
      shared.done = true;
      *dropped_rows += shared.reader->dropped_input_rows();
      continue;
    }
    *chunk = std::move(*next);
    input_file->assign(shared.reader->input_file_name());
    return true;
  }
  return false;
}

}  // namespace silt::stream::query_internal
