// StreamingAggregator: the per-micro-batch half of a stateful streaming
// aggregation (Spark's groupBy(...).agg(...) in a streaming query). Each
// micro-batch's rows are grouped and aggregated as HashAggregator does; the
// caller then merges every group's stored partial state (from a state store,
// keyed by the group's KeyCodec encoding) into it, writes the merged state
// back, and asks for final values of whichever stored groups the output
// mode emits.
//
// One micro-batch:
//   Consume(...)                    any number of chunks
//   for g in [0, num_groups()):     group_key(g) is the state store key
//     MergeStored(g, stored bytes)  when the store has that key
//     SerializeState(g, &bytes)     the new state to put
//   Reset()
// and, to emit: Finalize(keys, states, names).
//
// Formats: keys as KeyCodec; states as docs/format/aggregate-state.md (a
// leading format byte, then one partial state per aggregate). A state is
// meaningful only for the same key types and aggregate list it was written
// with; the caller keeps that list stable across a query's restarts.
//
// Thread safety: one aggregator per thread; Finalize is const and may run
// concurrently with nothing else mutating the aggregator.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/exec/aggregate.h"
#include "silt/exec/key_codec.h"

namespace silt::exec {

// The leading byte of every serialized state.
inline constexpr uint8_t kAggregateStateFormatV1 = 1;

class StreamingAggregator {
 public:
  // Errors: as KeyCodec::Make and AggregateResultType; NotSupported for
  // argument types an aggregate state cannot hold. Unlike HashAggregator, no
  // group exists before rows arrive, also without key types (the global
  // group's key is then the empty string).
  static Result<std::unique_ptr<StreamingAggregator>> Make(std::vector<columnar::TypePtr> key_types,
                                                           std::vector<AggregateSpec> aggregates);
  ~StreamingAggregator();

  // Groups one chunk into this batch's groups, as HashAggregator::Consume:
  // evaluated key and argument columns (args[i] null for count(*)).
  Status Consume(const std::vector<columnar::ColumnPtr>& keys,
                 const std::vector<columnar::ColumnPtr>& args, int64_t rows);

  // Groups of this batch so far, numbered in order of first appearance.
  int64_t num_groups() const;
  // KeyCodec encoding of group g's key; valid until Reset.
  // REQUIRES: 0 <= g < num_groups().
  std::string_view group_key(int64_t g) const;

  // Merges a state written earlier by SerializeState, for rows that arrived
  // before this batch's, into group g: counts and sums add, first() keeps the
  // stored value, last() the batch's, collect_list puts the stored elements
  // first. Call it at most once per group and batch.
  // Errors: Corruption when `stored` is malformed or has an unknown format
  // byte (group g is then unspecified; the batch should fail).
  Status MergeStored(int64_t g, std::string_view stored);

  // Without key types: makes the one global group exist, with the state of
  // no rows, when no row arrived (a global aggregate over an empty batch is
  // one group in Spark, merged with the stored one). No-op otherwise.
  void EnsureGlobalGroup();

  // Appends group g's partial state (after any MergeStored) to `out`.
  void SerializeState(int64_t g, std::string* out) const;

  // Merges two states written by SerializeState into one state, appended
  // to `out`, as MergeStored would with `earlier` as the stored rows and
  // `later` as the group's own: for sessions that a new row bridges, whose
  // partial states are both stored. Does not touch this batch's groups.
  // Errors: Corruption when either state is malformed.
  Status MergeStates(std::string_view earlier, std::string_view later, std::string* out) const;

  // Forgets this batch's groups (keeps capacity).
  void Reset();

  // Final result rows for stored (key, state) pairs, in their order: the key
  // columns (named names[0..k)), then one column per aggregate (named by the
  // rest of `names`) of its AggregateResultType. count and collect_*
  // columns are not nullable (as Spark's), the others are. Does not touch
  // this batch's groups.
  // REQUIRES: keys.size() == states.size(); names has one name per key
  // column and aggregate.
  // Errors: Corruption for a malformed key or state.
  Result<columnar::RecordBatchPtr> Finalize(const std::vector<std::string_view>& keys,
                                            const std::vector<std::string_view>& states,
                                            const std::vector<std::string>& names) const;

  const KeyCodec& key_codec() const;
  // Each aggregate's result type, as AggregateResultType.
  const std::vector<columnar::TypePtr>& result_types() const;

 private:
  struct Impl;
  explicit StreamingAggregator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace silt::exec
