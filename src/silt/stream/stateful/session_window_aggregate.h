// The `groupBy` step whose keys hold session_window(<time>, <gap>): a
// streaming aggregation over session windows (Spark 3.5's SessionWindowing
// rule with SessionWindowStateStoreRestoreExec, MergingSessionsExec and
// SessionWindowStateStoreSaveExec):
//
//   - groupBy: { keys: ["session_window(ts, '30 seconds')", device],
//                agg: ["count(*) AS n"] }
//
// A row with time t and gap g (an interval string, constant or per row,
// e.g. a CASE) opens the session [t, t + g); sessions of the same other
// keys that overlap or touch (next start <= end) merge into one that ends
// at the latest end. A row whose time or gap is NULL, whose gap does not
// parse or is <= 0, is dropped (Spark's filter `end > start`). The output
// column is `session_window` (or the key's alias), struct<start, end>.
//
// Per batch: the batch's rows are aggregated per (keys, [t, t + g)) and
// merged into sessions per group key (the other keys); when the watermark
// is on the session's time column, a merged batch session whose end is <=
// the late watermark is dropped in every output mode
// (numRowsDroppedByWatermark counts those sessions). The rest merge with
// the group key's stored sessions (a batch session can bridge two stored
// ones); every session of a touched group key is written back
// (numRowsUpdated counts them all, as Spark's updateSessions). Then:
//   append    sessions whose end is <= the eviction watermark leave the
//             state and are emitted
//   complete  every session in the state; nothing leaves it
// Update mode is refused, as Spark 3.5 refuses it for session windows.
//
// State layout (docs/format/state-store.md, "Session windows"): per session
// one entry keyed by group key and start, and one empty index entry led by
// the session's end, so eviction is a range scan of the index.
#pragma once

#include <memory>
#include <optional>

#include "silt/base/result.h"
#include "silt/columnar/types.h"
#include "silt/expr/eval_options.h"
#include "silt/stream/job.h"
#include "silt/stream/stateful/stateful_operator.h"

namespace silt::stream {

// True when a key of the groupBy step is a session_window(...) call
// (aliased or not).
bool HasSessionWindowKey(const TransformStep& step);

// Errors: InvalidArgument naming step.key_path: a bad key or aggregate,
// more than one session_window key or none besides it (Spark needs a group
// key), a session_window that is not (<timestamp>, <interval string>),
// update mode (Spark's message), append mode without the watermark on the
// session's time column.
Result<std::unique_ptr<StatefulOperator>> MakeSessionWindowAggregate(
    const TransformStep& step, const columnar::SchemaPtr& input, const expr::EvalOptions& options,
    OutputMode mode, std::unique_ptr<state::StateStore> store);

}  // namespace silt::stream
