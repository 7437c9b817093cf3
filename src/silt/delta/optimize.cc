// OPTIMIZE: plan bins per partition, rewrite each bin through TableScan and
// TableWriter, and commit every remove and add in one dataChange=false
// version.

#include "silt/delta/optimize.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "silt/base/clock.h"
#include "silt/base/json_writer.h"
#include "silt/base/logging.h"
#include "silt/base/strings.h"
#include "silt/delta/append_writer.h"
#include "silt/delta/clustering.h"
#include "silt/delta/column_mapping.h"
#include "silt/delta/partition_utils.h"
#include "silt/delta/protocol.h"
#include "silt/delta/row_tracking.h"
#include "silt/delta/stats.h"
#include "silt/delta/table_properties.h"
#include "silt/delta/table_root.h"
#include "silt/delta/zorder.h"

namespace silt::delta {

namespace {

int64_t NowMillis() { return SystemClock().NowMicros() / 1000; }

// Row tracking keeps stable row ids through OPTIMIZE (PROTOCOL.md "Writer
// Requirements for Row Tracking"): the bin is scanned with its `_metadata`
// column and written with the stable values in the table's hidden
// materialized columns, after the table's columns.
struct RowTrackingRewrite {
  RowTrackingWrite write;

  // `batch` (table columns + `_metadata`) as the writer takes it.
  columnar::RecordBatchPtr Convert(const columnar::RecordBatch& batch) const {
    auto out = std::make_shared<columnar::RecordBatch>();
    out->schema = write.schema;
    out->num_rows = batch.num_rows;
    out->columns.assign(batch.columns.begin(), batch.columns.end() - 1);
    for (const columnar::ColumnPtr& child : batch.columns.back()->children) {
      out->columns.push_back(child);
    }
    return out;
  }
};

// Sizes of the added files at a quantile (delta-spark's p25/p50/p75).
int64_t Quantile(const std::vector<int64_t>& sorted, double q) {
  if (sorted.empty()) return 0;
  auto idx = static_cast<size_t>(q * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(idx, sorted.size() - 1)];
}

std::string JsonStringArray(const std::vector<std::string>& items) {
  JsonWriter w;
  w.BeginArray();
  for (const std::string& item : items) w.String(item);
  w.EndArray();
  return w.Take();
}

bool ColumnMappingActive(const Metadata& metadata) {
  std::optional<std::string> mode =
      GetTableProperty(metadata.configuration, "delta.columnMapping.mode");
  return mode && !mode->empty() && !EqualsIgnoreCase(*mode, "none");
}

void DeleteWritten(fs::FileSystem* fs, const std::string& table_path,
                   const std::vector<AddFile>& adds) {
  for (const AddFile& add : adds) {
    Result<std::string> file = ResolvePathInsideTable(table_path, add.path);
    if (file.ok()) fs->DeleteFile(*file).IgnoreError("uncommitted OPTIMIZE output");
  }
}

}  // namespace

std::vector<OptimizeBin> PlanOptimizeBins(const std::vector<AddFile>& files,
                                          int64_t target_file_bytes, int64_t min_input_files,
                                          bool zorder) {
  // Partitions in a stable order (by key), files of each in log order.
  std::map<std::string, std::vector<const AddFile*>> by_partition;
  for (const AddFile& add : files) {
    bool candidate = zorder || add.size < target_file_bytes || add.deletion_vector.has_value();
    if (candidate) by_partition[PartitionKey(add.partition_values)].push_back(&add);
  }
  std::vector<OptimizeBin> bins;
  for (auto& [key, candidates] : by_partition) {
    if (static_cast<int64_t>(candidates.size()) < std::max<int64_t>(min_input_files, 1)) continue;
    if (zorder) {
      OptimizeBin bin;
      bin.partition_values = candidates.front()->partition_values;
      for (const AddFile* add : candidates) {
        bin.files.push_back(*add);
        bin.bytes += add->size;
      }
      bins.push_back(std::move(bin));
      continue;
    }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const AddFile* a, const AddFile* b) { return a->size < b->size; });
    std::vector<OptimizeBin> partition_bins;
    OptimizeBin current;
    for (const AddFile* add : candidates) {
      if (!current.files.empty() && current.bytes + add->size > target_file_bytes) {
        partition_bins.push_back(std::move(current));
        current = OptimizeBin();
      }
      current.partition_values = add->partition_values;
      current.files.push_back(*add);
      current.bytes += add->size;
    }
    if (!current.files.empty()) partition_bins.push_back(std::move(current));
    for (OptimizeBin& bin : partition_bins) {
      // Rewriting a lone file gains nothing unless it sheds a deletion vector.
      if (bin.files.size() == 1 && !bin.files.front().deletion_vector) continue;
      bins.push_back(std::move(bin));
    }
  }
  return bins;
}

Result<OptimizeResult> Optimize(DeltaTable* table, const OptimizeOptions& options) {
  if (table == nullptr) return Status::InvalidArgument("Optimize needs a table");
  const std::string& path = table->path();
  if (options.target_file_bytes <= 0) {
    return Status::InvalidArgument("OPTIMIZE target file size must be positive, got ",
                                   options.target_file_bytes);
  }
  if (options.row_group_bytes <= 0) {
    return Status::InvalidArgument("OPTIMIZE row group size must be positive, got ",
                                   options.row_group_bytes);
  }
  const int64_t start_ms = NowMillis();
  SnapshotPtr snapshot = options.snapshot;
  if (snapshot == nullptr) {
    SILT_ASSIGN_OR_RETURN(snapshot, table->LatestSnapshot());
  }
  std::vector<std::string> honoured = RowPreservingFeatures();
  honoured.push_back("columnMapping");
  SILT_RETURN_NOT_OK_CTX(CheckWriteSupported(snapshot->protocol(), snapshot->metadata(), honoured),
                         "OPTIMIZE of Delta table ", path);
  const std::vector<std::string>& partition_columns = snapshot->partition_columns();
  // Under column mapping the files are rewritten with physical names
  // (MakeTableWriter), and partition values are keyed by them.
  const bool column_mapping = ColumnMappingActive(snapshot->metadata());
  std::vector<std::string> partition_keys = partition_columns;
  if (column_mapping) {
    for (std::string& key : partition_keys) {
      const int idx = snapshot->schema()->FieldIndex(key);
      if (idx < 0) continue;
      SILT_ASSIGN_OR_RETURN_CTX(key, RequiredPhysicalName(snapshot->schema()->field(idx)),
                                "OPTIMIZE of Delta table ", path);
    }
  }
  // A clustered table is optimized by clustering its files on the
  // clustering columns (delta-spark's OPTIMIZE on a CLUSTER BY table); the
  // rows are laid out along the Z-order curve of those columns.
  SILT_ASSIGN_OR_RETURN_CTX(std::vector<std::string> clustering_columns,
                            ClusteringColumns(*snapshot), "OPTIMIZE of Delta table ", path);
  if (!clustering_columns.empty() && !options.zorder_by.empty()) {
    return Status::InvalidArgument("OPTIMIZE of Delta table ", path,
                                   ": ZORDER BY cannot be used on a clustered table (it is "
                                   "clustered by ",
                                   JsonStringArray(clustering_columns), ")");
  }
  const bool remove_mapping = options.remove_column_mapping.has_value();
  const bool reorg =
      options.purge_deletion_vectors || options.rewrite_type_widening || remove_mapping;
  if (reorg) clustering_columns.clear();
  const std::vector<std::string>& zorder_names =
      clustering_columns.empty() ? options.zorder_by : clustering_columns;
  std::vector<std::string> zorder_by;
  for (const std::string& name : zorder_names) {
    int idx = snapshot->schema()->FieldIndex(name);
    if (idx < 0) {
      return Status::InvalidArgument("Z-order column '", name, "' is not a column of Delta table ",
                                     path);
    }
    const columnar::Field& field = snapshot->schema()->field(idx);
    for (const std::string& p : partition_columns) {
      if (EqualsIgnoreCase(p, field.name)) {
        return Status::InvalidArgument("Z-order column '", name,
                                       "' is a partition column; Z-ordering is done within a "
                                       "partition, so only data columns can be used");
      }
    }
    if (field.type->is_nested()) {
      return Status::NotSupported("Z-order column '", name, "' is ", field.type->ToDdl(),
                                  "; only primitive columns can be Z-ordered");
    }
    zorder_by.push_back(field.name);
  }

  std::vector<AddFile> files = snapshot->files();
  if (options.file_filter) {
    SILT_ASSIGN_OR_RETURN_CTX(files, options.file_filter(*snapshot), "OPTIMIZE of Delta table ",
                              path);
  }
  if (reorg) zorder_by.clear();
  if (options.purge_deletion_vectors) {
    std::erase_if(files, [](const AddFile& f) { return !f.deletion_vector.has_value(); });
  }
  std::vector<OptimizeBin> bins;
  if (remove_mapping || options.rewrite_type_widening) {
    // Every selected file is rewritten, whatever its size and whether or
    // not its partition holds another: a file left behind would keep its
    // physical names or its narrower type after the feature is gone.
    for (const AddFile& file : files) {
      OptimizeBin bin;
      bin.partition_values = file.partition_values;
      bin.files = {file};
      bin.bytes = file.size;
      bins.push_back(std::move(bin));
    }
  } else {
    bins = PlanOptimizeBins(files, options.target_file_bytes, reorg ? 1 : options.min_input_files,
                            !zorder_by.empty());
  }

  OptimizeResult result;
  result.read_version = snapshot->version();
  result.total_considered_files = static_cast<int64_t>(files.size());
  int64_t files_in_bins = 0;
  for (const OptimizeBin& bin : bins) files_in_bins += static_cast<int64_t>(bin.files.size());
  result.total_files_skipped = result.total_considered_files - files_in_bins;
  if (bins.empty() && !remove_mapping) return result;

  TableWriterOptions writer_options;
  writer_options.target_file_bytes = options.target_file_bytes;
  writer_options.parquet.row_group_bytes = options.row_group_bytes;
  SILT_ASSIGN_OR_RETURN(writer_options.num_indexed_cols,
                        DataSkippingNumIndexedCols(snapshot->metadata().configuration));
  std::optional<RowTrackingRewrite> row_tracking;
  SILT_ASSIGN_OR_RETURN(std::optional<RowTrackingWrite> row_tracking_write,
                        RowTrackingWriteFor(*snapshot, path));
  if (row_tracking_write) {
    // Statistics cover the table's columns only, never the hidden ones.
    if (writer_options.num_indexed_cols < 0 ||
        writer_options.num_indexed_cols > row_tracking_write->stats_columns) {
      writer_options.num_indexed_cols = row_tracking_write->stats_columns;
    }
    row_tracking = RowTrackingRewrite{std::move(*row_tracking_write)};
  }

  const fs::FileSystemPtr& fs = table->file_system();
  const int64_t deletion_ms = NowMillis();
  std::vector<AddFile> adds;
  std::vector<RemoveFile> removes;
  std::map<std::string, bool> partitions;
  int64_t deletion_vectors_removed = 0;
  auto fail = [&](Status st) {
    DeleteWritten(fs.get(), path, adds);
    return st;
  };
  for (const OptimizeBin& bin : bins) {
    partitions[PartitionKey(CanonicalPartitionValues(bin.partition_values, partition_keys))] = true;
    ScanOptions scan_options;
    scan_options.row_tracking = row_tracking.has_value();
    auto scan = TableScan::Make(fs, path, snapshot->WithFiles(bin.files), scan_options);
    if (!scan.ok()) return fail(scan.status());
    auto writer =
        MakeTableWriter(fs, path,
                        row_tracking     ? row_tracking->write.schema
                        : remove_mapping ? options.remove_column_mapping->schema
                                         : snapshot->schema(),
                        partition_columns, writer_options, column_mapping && !remove_mapping);
    if (!writer.ok()) return fail(writer.status());
    Status st;
    std::vector<columnar::RecordBatchPtr> held;  // Z-order sorts the whole bin
    while (st.ok()) {
      Result<columnar::RecordBatchPtr> batch = (*scan)->Next();
      if (!batch.ok()) {
        st = batch.status();
        break;
      }
      if (*batch == nullptr) break;
      result.rows += (*batch)->num_rows;
      if (row_tracking) *batch = row_tracking->Convert(**batch);
      if (zorder_by.empty()) {
        st = (*writer)->Write(**batch);
      } else {
        held.push_back(std::move(*batch));
      }
    }
    if (st.ok() && !held.empty()) {
      columnar::RecordBatchPtr all = columnar::ConcatBatches(held);
      held.clear();
      Result<std::vector<int64_t>> order = ZOrderPermutation(*all, zorder_by);
      if (order.ok()) {
        st = (*writer)->Write(*columnar::TakeBatch(*all, *order));
      } else {
        st = order.status();
      }
    }
    Result<std::vector<AddFile>> written =
        st.ok() ? (*writer)->Finish() : Result<std::vector<AddFile>>(st);
    if (!written.ok()) {
      (*writer)->Abort().IgnoreError("failed OPTIMIZE bin");
      return fail(written.status().WithContextParts("OPTIMIZE of Delta table ", path));
    }
    for (AddFile& add : *written) {
      add.data_change = false;
      if (!clustering_columns.empty()) add.clustering_provider = kLiquidClusteringProvider;
      result.added_bytes += add.size;
      adds.push_back(std::move(add));
    }
    for (const AddFile& file : bin.files) {
      RemoveFile remove;
      remove.path = file.path;
      remove.deletion_timestamp = deletion_ms;
      remove.data_change = false;
      remove.extended_file_metadata = true;
      remove.partition_values = file.partition_values;
      remove.size = file.size;
      remove.deletion_vector = file.deletion_vector;
      remove.base_row_id = file.base_row_id;
      remove.default_row_commit_version = file.default_row_commit_version;
      if (file.deletion_vector) ++deletion_vectors_removed;
      result.removed_bytes += file.size;
      removes.push_back(std::move(remove));
    }
  }
  result.num_bins = static_cast<int64_t>(bins.size());
  result.partitions_optimized = static_cast<int64_t>(partitions.size());
  result.num_added_files = static_cast<int64_t>(adds.size());
  result.num_removed_files = static_cast<int64_t>(removes.size());

  std::vector<int64_t> sizes;
  for (const AddFile& add : adds) sizes.push_back(add.size);
  std::sort(sizes.begin(), sizes.end());

  CommitRequest request;
  request.honoured_features = std::move(honoured);
  request.operation = "OPTIMIZE";
  if (row_tracking) request.tags[std::string(kRowTrackingPreservedTag)] = "true";
  const std::vector<std::string> kNone;
  request.is_blind_append = false;
  std::vector<std::string> predicates;
  if (!options.where.empty()) predicates.push_back(options.where);
  // As delta-spark 3.2 writes them: text, except `auto`, a boolean.
  request.operation_parameters = {
      {"predicate", JsonStringArray(predicates)},
      {"zOrderBy", JsonStringArray(clustering_columns.empty() ? zorder_by : kNone)},
      {"clusterBy", JsonStringArray(clustering_columns)}};
  request.operation_parameters_json = {{"auto", options.auto_compact ? "true" : "false"}};
  if (remove_mapping) {
    request.operation = "REMOVE COLUMN MAPPING";
    request.operation_parameters.clear();
    request.operation_parameters_json.clear();
    request.operation_metrics.clear();
    request.new_metadata = *options.remove_column_mapping;
  } else if (reorg) {
    request.operation = "REORG";
    request.operation_parameters = {{"predicate", JsonStringArray(predicates)}};
    request.operation_parameters_json = {{"applyPurge", "true"}};
  }
  request.operation_metrics = {
      {"numRemovedFiles", std::to_string(result.num_removed_files)},
      {"numAddedFiles", std::to_string(result.num_added_files)},
      {"numRemovedBytes", std::to_string(result.removed_bytes)},
      {"numAddedBytes", std::to_string(result.added_bytes)},
      {"minFileSize", std::to_string(sizes.empty() ? 0 : sizes.front())},
      {"p25FileSize", std::to_string(Quantile(sizes, 0.25))},
      {"p50FileSize", std::to_string(Quantile(sizes, 0.5))},
      {"p75FileSize", std::to_string(Quantile(sizes, 0.75))},
      {"maxFileSize", std::to_string(sizes.empty() ? 0 : sizes.back())},
      {"numBatches", std::to_string(result.num_bins)},
      {"totalConsideredFiles", std::to_string(result.total_considered_files)},
      {"totalFilesSkipped", std::to_string(result.total_files_skipped)},
      {"numDeletionVectorsRemoved", std::to_string(deletion_vectors_removed)},
      {"startTimeMs", std::to_string(start_ms)},
      {"endTimeMs", std::to_string(NowMillis())}};
  request.adds = adds;
  request.removes = std::move(removes);
  result.added_files = adds;
  Result<CommitResult> committed = Commit(table, snapshot, request);
  if (!committed.ok()) {
    // A Conflict means nothing was committed, so the new files are garbage;
    // after another error the commit may have landed, so they stay (VACUUM
    // collects them if not).
    if (committed.status().IsConflict()) DeleteWritten(fs.get(), path, adds);
    return committed.status().WithContextParts("OPTIMIZE of Delta table ", path);
  }
  result.version = committed->version;
  SILT_LOG_INFO("optimize", "Delta table ", path, " version ", result.version, ": compacted ",
                result.num_removed_files, " files (", result.removed_bytes, " bytes) into ",
                result.num_added_files, " (", result.added_bytes, " bytes) in ",
                result.partitions_optimized, " partition(s)");
  return result;
}

}  // namespace silt::delta
