// Constants and errors shared by the Delta source's two walks: the table's
// added files (delta_source.cc) and its change data feed
// (delta_source_cdc.cc). Not part of the source's interface.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include "silt/base/status.h"
#include "silt/columnar/column.h"
#include "silt/stream/source/source.h"

namespace silt::stream::internal {

// Spark's END_INDEX: after every file of a version. Never serialized.
inline constexpr int64_t kDeltaEndIndex = std::numeric_limits<int64_t>::max() - 100;
// DeltaOptions.MAX_FILES_PER_TRIGGER_OPTION_DEFAULT, and the count used when
// only maxBytesPerTrigger is set (Int.MaxValue - 8).
inline constexpr int64_t kDeltaDefaultMaxFiles = 1000;
inline constexpr int64_t kDeltaUnlimitedFiles = 2147483647 - 8;

// Spark's DELTA_MISSING_FILES_UNEXPECTED_VERSION: the stream needs
// `expected` but the log's next commit is `found` (Corruption).
Status DeltaMissingVersionError(int64_t expected, int64_t found, const std::string& table_path);

// A batch's rows from `Upstream` (a delta::TableScan or a
// delta::ChangeFeedReader: anything with `Result<RecordBatchPtr> Next()`,
// null at the end), re-cut into chunks of at most kTargetBatchRows rows so
// that one large file does not make one huge chunk. `dropped_rows` are the
// rows the files' deletion vectors delete (BatchReader::dropped_input_rows).
template <typename Upstream>
class RechunkedBatchReader final : public BatchReader {
 public:
  explicit RechunkedBatchReader(std::unique_ptr<Upstream> upstream, int64_t dropped_rows = 0)
      : upstream_(std::move(upstream)), dropped_rows_(dropped_rows) {}

  int64_t dropped_input_rows() const override { return dropped_rows_; }

  Result<columnar::RecordBatchPtr> Next() override {
    while (true) {
      if (pending_ != nullptr && pending_offset_ < pending_->num_rows) {
        const int64_t length =
            std::min(columnar::kTargetBatchRows, pending_->num_rows - pending_offset_);
        columnar::RecordBatchPtr out =
            pending_offset_ == 0 && length == pending_->num_rows
                ? pending_
                : columnar::SliceBatch(*pending_, pending_offset_, length);
        pending_offset_ += length;
        return out;
      }
      pending_.reset();
      pending_offset_ = 0;
      if (upstream_ == nullptr) return columnar::RecordBatchPtr();
      SILT_ASSIGN_OR_RETURN(pending_, upstream_->Next());
      if (pending_ == nullptr) {
        upstream_.reset();
        return columnar::RecordBatchPtr();
      }
    }
  }

 private:
  std::unique_ptr<Upstream> upstream_;
  int64_t dropped_rows_ = 0;
  columnar::RecordBatchPtr pending_;
  int64_t pending_offset_ = 0;
};

// A batch without rows.
class EmptyBatchReader final : public BatchReader {
 public:
  Result<columnar::RecordBatchPtr> Next() override { return columnar::RecordBatchPtr(); }
};

}  // namespace silt::stream::internal
