// DeltaSink (format: delta): writes each micro-batch into a Delta table
// exactly once, as delta-spark's DeltaSink does.
//
// Per batch N of query Q (the Sink contract, sink.h):
//   Begin(N): reads the latest snapshot; if the table already records
//     txn{appId = Q, version >= N}, the batch was committed before a crash
//     and is skipped (nothing is written; an INFO line says so).
//   Write(chunk)...: Parquet data files under the table, split by
//     partitionBy (invisible until committed).
//   Commit(): one commit with the files, txn{Q, N}, and commitInfo
//     operation "STREAMING UPDATE" {outputMode, queryId, epochId}. A batch
//     without rows still commits its txn (delta-spark does the same), so the
//     table records that N is done.
// outputMode complete (delta-spark's DeltaSink in Complete mode): each
// batch is the query's whole result, so its commit also removes every file
// of the table read at Begin (delta/replace_all.h; not a blind append, so a
// concurrent writer's data change makes it conflict). A batch without rows
// empties the table. The table's schema must match as for appends
// (mergeSchema may grow it), unless overwriteSchema is set: then each batch
// replaces the schema and partition columns with the query's.
// outputMode update is refused (InvalidArgument), as delta-spark refuses it.
// The table is created by the first commit when absent (schema = the
// query's output schema, partition columns = partitionBy); an existing
// table's schema must match the output schema, by delta/append_writer.h's
// rules (schema enforcement, NOT NULL, column order).
//
// Options: compression (snappy default; zstd, gzip, lz4, none);
// autoCompact (opt-in background compaction every N commits, see
// delta/auto_compact.h; its options in maintenance.h; ignored in complete
// mode, where every batch rewrites the table); parquet-mr's
// parquet.bloom.filter.* options; mergeSchema (Spark's: new columns and
// struct fields are added to the table schema, and on a table with
// delta.enableTypeWidening a wider type of the query widens its column,
// delta/type_widening.h), overwriteSchema (complete
// mode only; ignored by appends, as in delta-spark); `delta.*` keys are
// table properties applied when the sink creates the table (validated by
// delta/table_properties.h).
//
// Thread safety: one query thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "silt/base/clock.h"
#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/delta/append_writer.h"
#include "silt/delta/auto_compact.h"
#include "silt/delta/table.h"
#include "silt/stream/job.h"
#include "silt/stream/sink/sink.h"

namespace silt::stream {

// Sink::CheckHoldsCommitted for a Delta table written with txn{query_id,
// batch}: Corruption when the table is gone or records an older batch.
Status CheckTableHoldsCommitted(delta::DeltaTable* table, const std::string& query_id,
                                int64_t last_committed);

class DeltaSink final : public Sink {
 public:
  // Validates the sink spec against the query's output schema (partition
  // columns must exist; compression must be known). No I/O. The format is
  // MakeSink's to check.
  // `fs` overrides fs::FileSystemForPath(spec.path) when non-null.
  static Result<std::unique_ptr<DeltaSink>> Make(const SinkSpec& spec,
                                                 columnar::SchemaPtr output_schema,
                                                 std::string query_id, fs::FileSystemPtr fs,
                                                 Clock* clock);
  ~DeltaSink() override;

  // "DeltaSink[<path>]", as delta-spark prints it.
  std::string Description() const override;
  // The table path.
  const std::string& target() const override { return path_; }

  // Returns false when the table already holds the batch.
  // Errors: the existing table's schema or partitioning differs from the
  // query's; IOError.
  Result<bool> Begin(int64_t batch_id) override;
  // REQUIRES: batch.schema equals the output schema given to Make.
  Status Write(const columnar::RecordBatch& batch) override;
  Result<SinkBatchResult> Commit() override;
  Status CheckHoldsCommitted(int64_t last_committed) override;
  // NULLs in the table's NOT NULL columns (none when the batch is skipped).
  void FindRefusedRows(const columnar::RecordBatch& batch, expr::RowErrors* errors) const override;
  // Discards the current batch's files (best effort) after a failure.
  void Abort() override;
  // Append mode: a part writer with its own data files (complete mode and a
  // skipped batch: null).
  Result<std::unique_ptr<SinkPartWriter>> OpenPartWriter() override;

  // What a closed part writer left for Commit (delta_sink.cc).
  struct PartResult {
    std::vector<delta::AddFile> adds;
    int64_t rows = 0;
    bool closed = false;
  };

  // Scale-out workers (stream/scaleout/worker.h): the txns the current
  // batch's Commit records instead of txn{query id, batch}, each a
  // compare-and-set of one topic-partition's next offset
  // (delta::CommitRequest::expected_txns), and extra commitInfo members
  // (the worker's name). When they do not hold, Commit returns the
  // Conflict and deletes the batch's data files. REQUIRES: after Begin.
  void SetPartitionTxns(std::vector<delta::CommitRequest::ExpectedTxn> txns,
                        std::map<std::string, std::string> commit_info);

 private:
  // Deletes the batch's data files `adds` that no commit references (a
  // discarded or failed batch); `why` names them in a failure's log line.
  void DeleteDataFiles(const std::vector<delta::AddFile>& adds, const char* why);

  DeltaSink() = default;
  Status CheckTableSchema(const delta::Snapshot& snapshot);
  // Partition-txn commits: brings snapshot_ up to date; Conflict (deleting
  // `adds`) when the table's metadata or protocol changed since Begin, or
  // another writer created it.
  Status RefreshForPartitionTxns(const std::vector<delta::AddFile>& adds);

  std::string path_;
  fs::FileSystemPtr fs_;
  Clock* clock_ = nullptr;
  std::string query_id_;
  columnar::SchemaPtr output_schema_;
  std::vector<std::string> partition_by_;
  // clusterBy: the clustering columns of a table the sink creates.
  std::vector<std::string> cluster_by_;
  delta::TableWriterOptions writer_options_;
  // Spark's mergeSchema write option; `delta.*` sink options become table
  // properties when the sink creates the table.
  bool merge_schema_ = false;
  // outputMode complete: every batch replaces the table's contents.
  bool complete_ = false;
  // overwriteSchema in complete mode: every batch also replaces the table's
  // schema and partition columns with the query's.
  bool overwrite_schema_ = false;
  std::map<std::string, std::string> table_properties_;
  std::unique_ptr<delta::DeltaTable> table_;
  // sink.options.autoCompact (maintenance.h); null when off.
  std::unique_ptr<delta::AutoCompactor> auto_compactor_;

  // Current batch.
  int64_t batch_id_ = -1;
  bool skip_ = false;
  delta::SnapshotPtr snapshot_;
  std::vector<std::string> partition_columns_;
  delta::AppendLayout layout_;
  std::unique_ptr<delta::AppendWriter> writer_;
  int64_t rows_ = 0;
  // SetPartitionTxns of the current batch.
  std::optional<std::vector<delta::CommitRequest::ExpectedTxn>> partition_txns_;
  std::map<std::string, std::string> commit_info_;
  // The batch's part writers' results, one per OpenPartWriter.
  std::vector<std::unique_ptr<PartResult>> parts_;
};

}  // namespace silt::stream
