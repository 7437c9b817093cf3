// Accumulator: the partial state of one aggregate function for every group
// of an aggregation, in typed arrays indexed by group id. HashAggregator and
// StreamingAggregator both update through it (one typed loop per argument
// column and batch); the streaming operator also serializes a group's state,
// merges a stored one into it and finalizes stored states. The serialized
// form is specified in docs/format/aggregate-state.md ("Aggregate states").
//
// Thread safety: one accumulator per thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/builder.h"
#include "silt/columnar/column.h"
#include "silt/exec/aggregate.h"
#include "silt/exec/hyperloglog.h"
#include "silt/exec/quantile_summary.h"

namespace silt::exec::internal {

class Accumulator {
 public:
  // Errors: as AggregateResultType; NotSupported for argument types the
  // state cannot hold.
  static Result<Accumulator> Make(const AggregateSpec& spec);

  const AggregateSpec& spec() const { return spec_; }
  const columnar::TypePtr& result_type() const { return result_type_; }
  // count(...) never returns null, every other aggregate can.
  bool nullable() const;

  // Grows (or shrinks) to `groups` groups; new groups are empty.
  void Resize(size_t groups);
  // Forgets every group.
  void Clear();

  // Adds rows [0, rows) of `arg` (null for count(*)) to groups gids[0..rows).
  void Update(const columnar::Column* arg, const int32_t* gids, int64_t rows);

  // Appends group g's state to `out`.
  void Serialize(size_t g, std::string* out) const;
  // Reads one state written by Serialize from the front of `*in` (advancing
  // it) and merges it into group g as rows that came before g's own.
  // Errors: Corruption when the bytes are truncated or malformed.
  Status Merge(size_t g, std::string_view* in);

  // The result value of groups [0, groups). Errors: Corruption when a
  // merged state held a malformed value.
  Result<columnar::ColumnPtr> Finish(size_t groups) const;

 private:
  enum class Domain : uint8_t { kInt, kDouble, kDecimal, kBytes, kEncoded };

  Accumulator() = default;
  void UpdateSum(const columnar::Column& c, const int32_t* gids, int64_t rows);
  void AddDecimal(size_t g, __int128 v);
  void UpdateExtreme(const columnar::Column& c, const int32_t* gids, int64_t rows);
  void UpdateMoments(const columnar::Column& c, const int32_t* gids, int64_t rows);
  void UpdateFirstLast(const columnar::Column& c, const int32_t* gids, int64_t rows);
  void UpdateCollect(const columnar::Column& c, const int32_t* gids, int64_t rows);
  void UpdateSketch(const columnar::Column& c, const int32_t* gids, int64_t rows);
  Status AppendPercentiles(size_t g, columnar::ColumnBuilder* b) const;
  // Adds encoded `element` to group g's distinct set; true when it was new.
  bool AddMember(size_t g, std::string_view element);
  // Sets `key` to the set key of `element` in group g; false when the element
  // equals no other (a NaN in collect_set).
  bool MemberKey(size_t g, std::string_view element, std::string* key) const;
  bool IsMoment() const;
  void PutDomainValue(size_t g, std::string* out) const;
  bool GetDomainValue(std::string_view* in, int64_t* i, double* d, __int128* dec,
                      std::string_view* s) const;

  AggregateSpec spec_;
  columnar::TypePtr result_type_;
  Domain domain_ = Domain::kInt;
  size_t groups_ = 0;
  // count(*), count(x), count(DISTINCT x); row counts of sum and avg.
  std::vector<int64_t> counts_;
  // sum/avg/min/max/first/last: the group has a value.
  std::vector<uint8_t> seen_;
  std::vector<int64_t> ints_;
  std::vector<double> doubles_;
  std::vector<__int128> decimals_;
  // Decimal sum/avg: the sum passed the sum type's precision (null result).
  std::vector<uint8_t> overflowed_;
  __int128 sum_bound_ = 0;
  std::vector<std::string> strings_;
  // Central moments (Spark's CentralMomentAgg buffer: n, avg, m2).
  std::vector<double> n_;
  std::vector<double> avg_;
  std::vector<double> m2_;
  // first/last: the value's encoding (value_codec_internal.h), tag included.
  std::vector<std::string> values_;
  // count(DISTINCT), collect_list, collect_set: encoded values per group in
  // order of arrival; `members_` (MemberKey) dedupes the distinct ones.
  std::vector<std::vector<std::string>> lists_;
  std::unordered_set<std::string> members_;
  // Per-batch scratch: encoded argument values, last rows per group.
  std::vector<std::string> encoded_;
  std::vector<int64_t> last_row_;
  // approx_count_distinct: one sketch per group, of precision hll_p_, and
  // per-batch scratch hashes.
  int hll_p_ = 0;
  std::vector<HyperLogLogPlusPlus> hlls_;
  std::vector<uint64_t> hashes_;
  // percentile_approx: one summary per group. Mutable because Spark
  // compresses a summary in place before serializing or answering.
  mutable std::vector<QuantileSummary> digests_;
};

}  // namespace silt::exec::internal
