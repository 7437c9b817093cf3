// The `groupBy` step as a streaming aggregation (Spark's
// StateStoreRestoreExec + StateStoreSaveExec over one state store):
//
//   - groupBy: { keys: ["window(ts, '1 minute')", device],
//                agg: ["count(*) AS n", "avg(temp) AS avg_temp"] }
//
// Keys are expressions (window() expands a row into its windows first, as
// Spark's TimeWindowing does); each agg item is one aggregate call with an
// optional alias (exec::AggKindFromName lists the functions). Output: the
// keys (named as Spark names them: `window`, `device`), then the aggregates.
//
// Per batch the batch's rows are grouped (exec::StreamingAggregator), each
// group's partial state is merged with the stored one and put back, and the
// output mode decides what the batch emits:
//   append    groups whose event time (window end) is <= the eviction
//             watermark, once, when they leave the state
//   update    the groups the batch changed; expired groups leave silently
//   complete  every group in the state (nothing ever leaves it)
// In append and update mode a batch group whose event time is <= the late
// watermark is dropped (numRowsDroppedByWatermark counts groups, as Spark's
// counts the rows of its merged aggregate).
//
// The state key is the exec::KeyCodec encoding of the key, led by an
// EventTimeKeyPrefix of the event-time key when there is one; the value is
// the group's serialized partial aggregate (docs/format/aggregate-state.md).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "silt/base/result.h"
#include "silt/columnar/types.h"
#include "silt/expr/eval_options.h"
#include "silt/stream/job.h"
#include "silt/stream/stateful/stateful_operator.h"

namespace silt::stream {

// The event time is the first key carrying withWatermark's mark
// (event_time.h): the marked column, or window() / session_window() of it.
// Output keys keep the mark, so a later stateful step sees the event time.
// Errors: InvalidArgument naming step.key_path (a bad key or aggregate, an
// aggregate that is not one call, an unknown function); the output-mode
// checks of Spark's UnsupportedOperationChecker (append mode without a
// watermark on a key).
Result<std::unique_ptr<StatefulOperator>> MakeStatefulAggregate(
    const TransformStep& step, const columnar::SchemaPtr& input, const expr::EvalOptions& options,
    OutputMode mode, std::unique_ptr<state::StateStore> store);

}  // namespace silt::stream
