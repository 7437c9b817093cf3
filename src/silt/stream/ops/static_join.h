// The `join` step: a stream-static join, Spark's
// stream.join(static, usingColumns, how) with a Delta table as the static
// side.
//
//  - The static table is read whole at its newest version when the query
//    starts, and again at the start of every batch in which it has a newer
//    commit: Spark plans a Delta static side anew for each micro-batch, so
//    each batch joins the table as it was when the batch started. The rows
//    are held in memory as the build side of a hash join
//    (exec::JoinHashTable): the static side is a dimension table.
//  - `with.where` and `with.select` filter and project the static rows
//    before the join (Spark's .where(...).selectExpr(...) on the static
//    DataFrame).
//  - `on`: USING columns, present on both sides (case-insensitively). Keys of
//    two numeric types compare in the wider one, as Spark's coercion does;
//    other type differences are errors.
//  - `how`: Spark's names for inner (default), left outer, left semi and left
//    anti joins — the join types Spark supports with the stream on the left
//    and a static right side.
//  - Output, as Spark's USING join: the join columns (the stream's), the
//    stream's other columns, then the static side's other columns (nullable
//    for a left outer join); semi and anti joins keep the stream's columns
//    only, join columns first.
//  - The query keeps the static columns it started with. A commit that drops
//    one of them or changes its type stops the query with Spark's
//    DELTA_SCHEMA_CHANGE_SINCE_ANALYSIS; added columns are not read.
#pragma once

#include <memory>
#include <string_view>

#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/exec/hash_join.h"
#include "silt/expr/expression.h"
#include "silt/stream/job.h"
#include "silt/stream/ops/transform_step.h"

namespace silt::stream {

// Errors: InvalidArgument naming `step.key_path` for a static table that is
// missing or unreadable, a bad where/select, a join column missing on either
// side, key types that cannot be compared, or an unknown `how`.
Result<std::unique_ptr<TransformStepImpl>> MakeStaticJoinStep(const TransformStep& step,
                                                              const columnar::SchemaPtr& input,
                                                              const expr::EvalOptions& options);

// Spark's join type names (case-insensitive, '_' optional): inner; left,
// leftouter, left_outer; semi, leftsemi, left_semi; anti, leftanti,
// left_anti. Errors: NotSupported for Spark's other types (right, full,
// cross) with the reason, InvalidArgument for an unknown name.
Result<exec::JoinType> ParseJoinType(std::string_view how);

}  // namespace silt::stream
