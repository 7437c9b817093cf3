// The `dropDuplicates` and `dropDuplicatesWithinWatermark` steps (Spark's
// StreamingDeduplicateExec and StreamingDeduplicateWithinWatermarkExec):
//
//   - dropDuplicates: [id, ts]              (none listed: every column)
//   - dropDuplicatesWithinWatermark: [id]
//
// A row passes when no earlier row (this batch or any before) had the same
// values in the listed columns; the others are dropped and counted
// (numDroppedDuplicateRows). With a watermark, rows whose event time is <=
// the late watermark are dropped first (numRowsDroppedByWatermark).
//
// State: one entry per distinct key (exec::KeyCodec encoding).
//   dropDuplicates: when the event-time column is one of the listed columns
//     the key is led by its EventTimeKeyPrefix and entries whose event time
//     is <= the eviction watermark are removed; otherwise nothing is ever
//     removed (as in Spark: such a query's state grows without bound).
//   dropDuplicatesWithinWatermark: needs a watermark; the value is the
//     8-byte expiry (event time + delay, microseconds) of the first row, and
//     entries expire when the eviction watermark reaches it, so a duplicate
//     is dropped only while its first row is within the delay.
#pragma once

#include <memory>
#include <optional>

#include "silt/base/result.h"
#include "silt/columnar/types.h"
#include "silt/stream/job.h"
#include "silt/stream/stateful/stateful_aggregate.h"
#include "silt/stream/stateful/stateful_operator.h"

namespace silt::stream {

// Errors: InvalidArgument naming step.key_path for an unknown column, or a
// dropDuplicatesWithinWatermark without a watermark.
Result<std::unique_ptr<StatefulOperator>> MakeDeduplicate(
    const TransformStep& step, const columnar::SchemaPtr& input,
    const std::optional<WatermarkColumn>& watermark, OutputMode mode,
    std::unique_ptr<state::StateStore> store);

}  // namespace silt::stream
