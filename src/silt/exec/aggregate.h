// Hash aggregation over RecordBatches: GROUP BY keys with Spark's aggregate
// functions, result types and null rules:
//
//   count(*), count(x)        BIGINT, never null (count(x) skips nulls)
//   sum(integral)             BIGINT (wraps on overflow, as Spark without ANSI)
//   sum(float/double)         DOUBLE
//   sum(decimal(p,s))         DECIMAL(min(38,p+10), s); null once a running
//                             sum passes that precision (Spark without ANSI;
//                             where Spark fails a query whose running sum
//                             needs 39 digits, silt returns null too)
//   avg(numeric)              DOUBLE; avg(decimal(p,s)) DECIMAL(min(38,p+4),
//                             min(38,s+4)) rounded half up, null when its sum
//                             overflows as sum's
//   min/max(x)                x's type (strings by bytes, NaN above numbers)
//   sum/avg/min/max           null for a group without non-null values
//   first(x), last(x)         x's type; the first/last row's value, null
//                             included unless ignore_nulls (then the
//                             first/last non-null value, null if none)
//   stddev_samp, stddev_pop,  DOUBLE over x cast to double (Spark's one-pass
//   var_samp, var_pop         central moments); null without rows, and the
//                             _samp ones null for one row (Spark 3.5 without
//                             spark.sql.legacy.statisticalAggregate)
//   collect_list(x)           ARRAY<x> (elements not null): non-null values
//                             in order of arrival
//   collect_set(x)            ARRAY<x> (elements not null): distinct non-null
//                             values in order of first arrival (Spark's order
//                             is its hash set's: compare as sets). Equality
//                             is Spark 3.5's: -0.0 equals 0.0 (the first
//                             stays); a float/double NaN equals nothing
//                             (every NaN is kept) but NaN fields of structs
//                             equal each other
//   approx_count_distinct(x   BIGINT, never null (0 without values): Spark's
//     [, relativeSD])         HyperLogLog++ estimate (hyperloglog.h) over
//                             Spark's xxhash64 of x, relativeSD 0.05 unless
//                             given; equal to Spark's whatever the batching
//   percentile_approx(x, p    x's type (ARRAY<x>, elements not null, for an
//     [, accuracy]),          array of percentages): Spark's Greenwald-Khanna
//   approx_percentile         answers (quantile_summary.h) with relative
//                             error 1/accuracy (default 10000) over x as a
//                             double, cast back to x's type; null without
//                             values. Equal to Spark's when Spark inserts the
//                             same values in the same order in one task
//                             (GK's folding is order-sensitive across its
//                             50,000-value head buffers)
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
// running min/max; the distinct set; ...); StreamingAggregator
// (streaming_aggregate.h) keeps the same states per micro-batch and
// serializes and merges them for a state store.
//
// Thread safety: one aggregator per thread.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/column.h"

namespace silt::exec {

// The values are persisted nowhere (states record no kind); new kinds go at
// the end all the same.
enum class AggKind : uint8_t {
  kCountStar,
  kCount,
  kCountDistinct,
  kSum,
  kAvg,
  kMin,
  kMax,
  kFirst,
  kLast,
  kStddevSamp,
  kStddevPop,
  kVarSamp,
  kVarPop,
  kCollectList,
  kCollectSet,
  kApproxCountDistinct,
  kPercentileApprox,
};

struct AggregateSpec {
  AggKind kind = AggKind::kCountStar;
  columnar::TypePtr arg_type;  // null for kCountStar
  // first/last only: skip null values (Spark's first(x, true) / IGNORE NULLS).
  bool ignore_nulls = false;
  // approx_count_distinct: the relative standard deviation asked for.
  double relative_sd = 0.05;
  // percentile_approx: the percentages (each in [0, 1]), whether they were
  // given as an array (the result is then an array), and the accuracy
  // (relative error 1 / accuracy).
  std::vector<double> percentages;
  bool percentages_array = false;
  int64_t accuracy = 10000;
};

// The aggregate kind of Spark function `spark_name` (case-insensitive; the
// aliases mean, first_value, last_value, any_value, std, stddev, variance,
// array_agg too). `distinct` is the call's DISTINCT: count(DISTINCT x) is
// kCountDistinct; DISTINCT is accepted and ignored where it changes nothing
// (min, max, collect_set) and refused elsewhere. count(*) is not
// distinguished by name: callers map a star count to kCountStar.
// Errors: NotFound for a name that is no aggregate function (suggesting the
// closest known name when one is near); NotSupported for DISTINCT where
// unsupported and for Spark aggregates silt lacks.
Result<AggKind> AggKindFromName(std::string_view spark_name, bool distinct);

// Spark's name of the function, for messages ("count", "stddev_samp").
const char* AggKindName(AggKind kind);

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
