// Hash aggregation over RecordBatches: GROUP BY keys with count(*),
// count(x), count(DISTINCT x), sum, avg, min and max, with Spark's result
// types and null rules:
//
//   count(*), count(x)        BIGINT, never null (count(x) skips nulls)
//   sum(integral)             BIGINT (wraps on overflow, as Spark without ANSI)
//   sum(float/double)         DOUBLE
//   sum(decimal(p,s))         DECIMAL(min(38,p+10), s); null on overflow
//   avg(numeric)              DOUBLE; avg(decimal(p,s)) DECIMAL(min(38,p+4),
//                             min(38,s+4)) rounded half up
//   min/max(x)                x's type (strings by bytes, NaN above numbers)
//   sum/avg/min/max           null for a group without non-null values
//
// Rows are grouped on an encoding of their key values (nulls group
// together; NaN with NaN and -0.0 with 0.0, as Spark normalizes floats);
// aggregates update typed arrays indexed by group id, one loop per column
// and batch.
//
// Contract for callers (the batch query runner today, streaming stateful
// operators later):
//   - consumes: key columns and aggregate argument columns that the caller
//     has already evaluated (this operator evaluates no expressions), any
//     number of batches, each through one Consume call;
//   - produces: one RecordBatch from Finish, one row per group.
// The state after any sequence of Consume calls depends only on the rows
// consumed (not on how they were split into batches, except for the order of
// floating-point additions), so input can arrive incrementally. The running
// state per group is a partial aggregate (count; sum and count for avg;
// running min/max; the distinct set), which is what a streaming operator
// would keep in a state store and merge: such an Update/Merge of partial
// states belongs beside this class, in exec/.
//
// Thread safety: one aggregator per thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/column.h"

namespace silt::exec {

enum class AggKind : uint8_t { kCountStar, kCount, kCountDistinct, kSum, kAvg, kMin, kMax };

struct AggregateSpec {
  AggKind kind = AggKind::kCountStar;
  columnar::TypePtr arg_type;  // null for kCountStar
};

// The result type of `spec`. Errors: InvalidArgument naming the function
// for argument types it does not take (sum of a string, min of a map).
Result<columnar::TypePtr> AggregateResultType(const AggregateSpec& spec);

class HashAggregator {
 public:
  // With no key types every row falls in one group, which exists even when
  // no row arrives (a global aggregate). Errors: NotSupported for nested
  // key types; as AggregateResultType.
  static Result<std::unique_ptr<HashAggregator>> Make(std::vector<columnar::TypePtr> key_types,
                                                      std::vector<AggregateSpec> aggregates);
  virtual ~HashAggregator() = default;

  // Adds one batch: `keys` (one per key type) and `args` (one per
  // aggregate, null for count(*)) have `rows` rows each and the types given
  // to Make. May be called any number of times before Finish.
  virtual Status Consume(const std::vector<columnar::ColumnPtr>& keys,
                         const std::vector<columnar::ColumnPtr>& args, int64_t rows) = 0;
  // One row per group in order of first appearance: the key columns, then
  // one column per aggregate, named by `names` (keys first). Ends the
  // aggregator: call it once, after the last Consume.
  virtual Result<columnar::RecordBatchPtr> Finish(const std::vector<std::string>& names) = 0;
};

}  // namespace silt::exec
