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
// Thread safety: one aggregator per thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/column.h"

namespace silt::query {

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

  // `keys` and `args` (one per aggregate, null for count(*)) have `rows`
  // rows each.
  virtual Status Consume(const std::vector<columnar::ColumnPtr>& keys,
                         const std::vector<columnar::ColumnPtr>& args, int64_t rows) = 0;
  // One row per group in order of first appearance: the key columns, then
  // one column per aggregate, named by `names` (keys first).
  virtual Result<columnar::RecordBatchPtr> Finish(const std::vector<std::string>& names) = 0;
};

}  // namespace silt::query
