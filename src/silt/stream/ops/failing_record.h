// Naming the source record behind a row-level transform error.
//
// Expression errors (FAILFAST from_json, ANSI overflow or cast failures, ...)
// know only the row of the batch being evaluated, which means nothing to a
// user. When a transform fails on a source chunk, AddFailingRecord finds the
// first source row that fails on its own (by bisecting the chunk, so the
// error path costs O(log n) re-evaluations and the hot path nothing) and
// appends where that record came from, as the source describes it: for Kafka
// the topic, partition and offset.
//
// Thread safety: as the transform's.
#pragma once

#include "silt/base/status.h"
#include "silt/columnar/column.h"
#include "silt/expr/eval_options.h"

namespace silt::stream {

class Source;
class Transform;

// `error` is what `transform.Process(chunk, ctx)` returned. Returns it with
// "; first failing record: <place>" appended when the failing record can be
// isolated and the source can describe it, else unchanged. Only data errors
// (InvalidArgument) are located; the transform's per-batch state is left as
// a failed batch leaves it (the caller aborts the batch).
Status AddFailingRecord(const Status& error, Transform& transform, const Source& source,
                        const columnar::RecordBatchPtr& chunk, const expr::EvalContext& ctx);

}  // namespace silt::stream
