// OPTIMIZE (FORMATS.md A14): compacts a Delta table's small files into
// files near a target size, partition by partition, optionally Z-ordering
// the rows (zorder.h), and commits the rewrite as one version with `remove`
// and `add` actions that all carry dataChange = false.
//
// Because nothing in the commit changes data, it commutes with concurrent
// blind appends (a running stream): Commit() rebases it over them. It
// conflicts only with a concurrent commit that removes one of the files it
// compacts (another OPTIMIZE, a DELETE) or changes metadata/protocol, and
// then fails with Conflict without touching the table (its new files are
// left for VACUUM, as delta-spark leaves them).
//
// Bin packing follows delta-spark's OptimizeExecutor: per partition, the
// files smaller than the target size (plus every file with a deletion
// vector) are sorted by size and packed greedily into bins of at most the
// target size; a bin of one file without a deletion vector is left alone.
// With Z-order every file of a partition is rewritten as one bin.
//
// Thread safety: functions are reentrant; a DeltaTable is shared safely.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "silt/base/result.h"
#include "silt/delta/table.h"

namespace silt::delta {

// delta-spark's spark.databricks.delta.optimize.maxFileSize is 1 GiB; silt
// defaults to the 128 MiB that suits small machines and matches the
// TableWriter's file size.
inline constexpr int64_t kDefaultOptimizeTargetBytes = 128LL * 1024 * 1024;

// The largest row group OPTIMIZE writes. The Parquet writer holds a row group
// encoded in memory until it is flushed, and a reader decodes one row group
// at a time, so this (not the bin's size) bounds what one compaction holds:
// a 128 MiB file is written as several row groups (decision 147).
inline constexpr int64_t kOptimizeRowGroupBytes = 32LL * 1024 * 1024;

// Picks the files OPTIMIZE may compact from a snapshot (the partitions a
// `--where` predicate selects); see stream/maintenance.h for the one built
// from a Spark SQL predicate. Errors are returned by Optimize as they are.
using OptimizeFileFilter = std::function<Result<std::vector<AddFile>>(const Snapshot& snapshot)>;

struct OptimizeOptions {
  // The partition predicate as the user wrote it, recorded in
  // operationParameters.predicate; `file_filter` applies it.
  std::string where;
  // Null = every live file is a candidate.
  OptimizeFileFilter file_filter;
  // The snapshot to optimize; null = the table's latest (LatestSnapshot,
  // which reads the newest checkpoint). A caller that keeps a snapshot up to
  // date (DeltaTable::Update) passes it to avoid that read (auto compaction).
  SnapshotPtr snapshot;
  int64_t target_file_bytes = kDefaultOptimizeTargetBytes;
  // The largest row group written (see kOptimizeRowGroupBytes).
  int64_t row_group_bytes = kOptimizeRowGroupBytes;
  // A partition is compacted only when it holds at least this many files
  // eligible for compaction (small files, files with deletion vectors).
  int64_t min_input_files = 2;
  // Z-order by these data columns (empty = plain compaction).
  std::vector<std::string> zorder_by;
  // Recorded as operationParameters.auto (true for the sink's autoCompact).
  bool auto_compact = false;
  // delta-spark's REORG TABLE ... APPLY (PURGE): only the files with a
  // deletion vector are rewritten (each, also alone in its partition), without
  // Z-order or clustering; the commit is operation REORG.
  bool purge_deletion_vectors = false;
  // delta-spark's REORG ... REWRITE_TYPE_WIDENING (DROP FEATURE
  // typeWidening): as purge_deletion_vectors, but the files to rewrite are
  // those `file_filter` picks (the ones stored in a narrower type), and
  // they are written in the table's current types.
  bool rewrite_type_widening = false;
  // delta-spark's RemoveColumnMappingCommand (DROP FEATURE columnMapping):
  // every live file rewritten alone with the logical column names and no
  // field ids, committed with this metadata (the schema without column
  // mapping metadata, the properties without the mode) as operation REMOVE
  // COLUMN MAPPING, also when the table has no file.
  std::optional<Metadata> remove_column_mapping;
};

// One group of files rewritten together; all in one partition.
struct OptimizeBin {
  PartitionValues partition_values;
  std::vector<AddFile> files;
  int64_t bytes = 0;
};

struct OptimizeResult {
  int64_t version = -1;  // the OPTIMIZE commit; -1 when nothing needed compaction
  int64_t read_version = -1;
  int64_t partitions_optimized = 0;
  int64_t num_bins = 0;
  int64_t num_removed_files = 0;
  int64_t num_added_files = 0;
  int64_t removed_bytes = 0;
  int64_t added_bytes = 0;
  int64_t rows = 0;
  int64_t total_considered_files = 0;
  int64_t total_files_skipped = 0;
  // The files committed (path, partition values, size), in commit order.
  std::vector<AddFile> added_files;
};

// Bins of `files` to rewrite, in partition order (see the header comment).
// Pure: no I/O. `min_input_files` applies per partition.
std::vector<OptimizeBin> PlanOptimizeBins(const std::vector<AddFile>& files,
                                          int64_t target_file_bytes, int64_t min_input_files,
                                          bool zorder);

// Runs OPTIMIZE on the latest snapshot of `table`.
// Errors: InvalidArgument for bad options (predicate, unknown or partition
// Z-order columns, non-positive sizes); NotSupported for tables silt cannot
// rewrite (column mapping, writer features refused by the write gate);
// Conflict when a concurrent commit removed a file being compacted;
// NotFound when a data file is missing; IOError.
Result<OptimizeResult> Optimize(DeltaTable* table, const OptimizeOptions& options);

}  // namespace silt::delta
