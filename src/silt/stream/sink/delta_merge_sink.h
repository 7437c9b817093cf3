// DeltaMergeSink (format: delta, mode: merge; and outputMode update of an
// aggregation): merges each micro-batch into a Delta table with one MERGE
// commit, exactly once, as the foreachBatch + DeltaTable.merge pattern does
// in Spark, without user code.
//
// Per batch N of query Q (the Sink contract, sink.h):
//   Begin(N): reads the latest snapshot; a table that records
//     txn{appId = Q, version >= N} already holds the batch: skipped.
//   Write(chunk)...: the rows are kept in memory (MERGE reads its source
//     whole: it is the build side of the join, dml.h).
//   Commit(): optionally deduplicates (dedupBy), then
//     MERGE INTO <table> AS <targetAlias> USING <batch> AS <sourceAlias>
//     ON <on> WHEN ... through dml::Merge, whose one commit carries
//     txn{Q, N} (also when no row changed, so the table records N). A
//     concurrent commit of the same batch by another run is reported as a
//     skipped duplicate.
// A missing table is created first (schema = the query's output, nullable,
// partitionBy, `delta.*` options as table properties) by a commit without
// data; the MERGE then runs against the empty table.
//
// Update mode (Spark refuses it on Delta; foreachBatch users write this
// MERGE): the rows are the groups the batch changed, merged on the group
// keys (null-safe, the window column included) with UPDATE SET * / INSERT *.
//
// dedupBy {keys, orderBy}: per key only the row with the greatest orderBy
// values (NULL below any value; among equal ones, or without orderBy, the
// last in batch order) is merged. Without it, a target row matched by two
// batch rows stops the query with delta-spark's
// DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE.
//
// Thread safety: one query thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "silt/base/clock.h"
#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/delta/table.h"
#include "silt/dml/dml.h"
#include "silt/exec/key_codec.h"
#include "silt/expr/expression.h"
#include "silt/stream/job.h"
#include "silt/stream/sink/sink.h"

namespace silt::stream {

// Keeps the latest row per key of a batch (DedupSpec in job.h).
class BatchDeduplicator {
 public:
  // Binds the keys and orderBy expressions against `schema`. Errors:
  // InvalidArgument naming `key_path` ("sink.dedupBy.keys[0]: ..."), as the
  // expression binder reports it; NotSupported for a key or order type that
  // cannot be compared.
  static Result<std::unique_ptr<BatchDeduplicator>> Make(const DedupSpec& spec,
                                                         const columnar::SchemaPtr& schema,
                                                         const expr::EvalOptions& options,
                                                         const std::string& key_path);
  // The kept rows, in batch order.
  Result<columnar::RecordBatchPtr> Apply(const columnar::RecordBatchPtr& batch);

 private:
  BatchDeduplicator() = default;
  std::vector<expr::BoundExpressionPtr> keys_;
  std::vector<expr::BoundExpressionPtr> order_by_;
  std::unique_ptr<exec::KeyCodec> codec_;
};

class DeltaMergeSink final : public Sink {
 public:
  // `spec.merge` (mode merge) or, when null, `update_keys` (update mode:
  // the aggregation's group-key columns). Parses every clause and binds
  // dedupBy; the clauses' columns are resolved against the table at the
  // first commit (dml's errors, prefixed with the sink's key path).
  static Result<std::unique_ptr<DeltaMergeSink>> Make(const SinkSpec& spec,
                                                      const SinkContext& context,
                                                      const std::vector<std::string>& update_keys);
  ~DeltaMergeSink() override;

  // "DeltaMergeSink[<path>]".
  std::string Description() const override;
  const std::string& target() const override { return path_; }
  Result<bool> Begin(int64_t batch_id) override;
  Status Write(const columnar::RecordBatch& batch) override;
  Result<SinkBatchResult> Commit() override;
  void Abort() override;
  Status CheckHoldsCommitted(int64_t last_committed) override;

 private:
  DeltaMergeSink() = default;
  Status CreateTable();

  std::string path_;
  std::string key_path_;
  fs::FileSystemPtr fs_;
  Clock* clock_ = nullptr;
  std::string query_id_;
  columnar::SchemaPtr output_schema_;
  std::vector<std::string> partition_by_;
  std::map<std::string, std::string> table_properties_;
  expr::EvalOptions eval_;
  dml::MergeSpec merge_;
  std::unique_ptr<BatchDeduplicator> dedup_;
  std::unique_ptr<delta::DeltaTable> table_;

  // Current batch.
  int64_t batch_id_ = -1;
  bool skip_ = false;
  delta::SnapshotPtr snapshot_;
  std::vector<columnar::RecordBatchPtr> rows_;
};

}  // namespace silt::stream
