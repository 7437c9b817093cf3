// The write side of DML: reading one target file's live rows, and turning
// per-file changes plus inserted rows into the commit's add and remove
// actions.
//
// A FileChange states what happens to one data file independent of how it
// is written: the positions (in the rows read, i.e. after the file's
// deletion vector) of the rows that go, and the rows that replace them.
// DmlWriter turns it into actions, copy-on-write or by deletion vector
// (WriteMode).
//
// Thread safety: one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/delta/deletion_vector_writer.h"
#include "silt/delta/row_tracking.h"
#include "silt/delta/table.h"

namespace silt::dml {

struct FileChange {
  const delta::AddFile* file = nullptr;
  // The file's live rows as ReadTargetFile returned them (table schema).
  columnar::RecordBatchPtr rows;
  // Row tracking: the rows' stable ids (TargetRows::row_metadata); null
  // when the table does not have row tracking enabled.
  columnar::ColumnPtr row_metadata;
  // Positions in `rows` of the rows that go, ascending, unique.
  std::vector<int64_t> dropped;
  // Per entry of `dropped`: 1 when the row is updated (its new version is in
  // `replacement`), 0 when deleted; empty: all deleted, or (UPDATE) all
  // updated as `all_updated` says. Only the change data feed reads this.
  std::vector<uint8_t> updated;
  bool all_updated = false;
  // Rows that take their place (table schema); null or empty when none.
  columnar::RecordBatchPtr replacement;
  // Per row of `replacement`: the position in `rows` of the row it updates.
  // With row tracking the new row keeps that row's stable id and takes the
  // commit's version (a NULL materialized version), as delta-spark's UPDATE
  // and MERGE do. REQUIRES: set when row_metadata and replacement are.
  std::vector<int64_t> replacement_of;
  // Rewrite the file even when nothing changes: delta-spark's copy-on-write
  // MERGE rewrites every file holding a target row that the ON condition
  // matched (and, with WHEN NOT MATCHED BY SOURCE, one it did not), whether
  // or not a clause acts on it. With deletion vectors this is ignored.
  bool rewrite = false;
};

// The live rows of one target file.
struct TargetRows {
  // Every live row (the file's deletion vector applied), in file order, as
  // one batch of the table schema.
  columnar::RecordBatchPtr rows;
  // Row tracking: per row of `rows`, its stable row id and row commit
  // version (delta::RowMetadataType, Spark's `_metadata`); null when the
  // table does not have row tracking enabled.
  columnar::ColumnPtr row_metadata;
};

// Reads `file` of `snapshot`'s table. Errors: the scan's (missing file,
// corrupt Parquet or deletion vector, a row-tracking file without
// baseRowId).
Result<TargetRows> ReadTargetFile(const delta::DeltaTable& table,
                                  const delta::SnapshotPtr& snapshot, const delta::AddFile& file);

// The physical row indices (as a deletion vector counts them) of the
// positions change.dropped, skipping the rows the file's existing deletion
// vector already deletes.
Result<std::vector<uint64_t>> PhysicalRows(const delta::DeltaTable& table,
                                           const FileChange& change);

// Checks the NOT NULL columns of `schema` in `batch` (of that schema).
// Errors: InvalidArgument "[DELTA_NOT_NULL_CONSTRAINT_VIOLATED] NOT NULL
// constraint violated for column: c." naming `table_path`.
Status CheckNotNull(const columnar::Schema& schema, const columnar::RecordBatch& batch,
                    const std::string& table_path);

// How DML writes a touched file's change.
//  - kCopyOnWrite: the file's other rows and the replacement rows go to new
//    files and the old file is removed.
//  - kDeletionVectors (the table has delta.enableDeletionVectors = true and
//    the deletionVectors feature, delta-spark 3.2's default for DELETE,
//    UPDATE and MERGE then): PhysicalRows(change), united with the file's
//    existing vector, become the file's new deletion vector (a remove of the
//    old add plus an add of the same data file with the new vector, stats
//    kept with tightBounds false); only the replacement rows are written, to
//    new files. A file left without live rows is removed (numRecords from
//    its stats), as delta-spark does.
// With row tracking enabled, either mode writes the table's materialized
// row-id and row-commit-version columns (delta::RowTrackingWrite) as
// delta-spark 4 does: a copied row keeps both its stable values, an updated
// row keeps its row id and gets NULL as version (the new file's
// defaultRowCommitVersion, i.e. the commit's version), an inserted row gets
// NULL in both (a fresh id from the new file's baseRowId); the commit is
// tagged delta.rowTracking.preserved.
enum class WriteMode { kCopyOnWrite, kDeletionVectors };

// kDeletionVectors when `snapshot`'s table has deletion vectors on.
WriteMode WriteModeFor(const delta::Snapshot& snapshot);

class DmlWriter {
 public:
  static Result<std::unique_ptr<DmlWriter>> Make(delta::DeltaTable* table,
                                                 const delta::SnapshotPtr& snapshot,
                                                 WriteMode mode);
  ~DmlWriter();

  WriteMode mode() const { return mode_; }

  // Writes the change data feed (`_change_data/` files with _change_type,
  // as delta-spark does when delta.enableChangeDataFeed is true) for what
  // Apply and Insert see from now on: dropped rows as delete or
  // update_preimage, replacement rows as update_postimage, inserted rows as
  // insert. The operation decides whether its commit needs change files
  // (delta-spark writes none for a DELETE by deletion vector or of whole
  // partitions, nor for an insert-only MERGE: readers take those changes
  // from the adds and removes). REQUIRES: before the first Apply/Insert.
  Status WriteChangeData();
  // The change files written (valid after Finish).
  const std::vector<delta::AddCdcFile>& cdc_files() const { return cdc_files_; }

  // Records the change of one file (see WriteMode). A change that drops
  // nothing and replaces nothing is ignored unless change.rewrite is set in
  // copy-on-write mode.
  Status Apply(const FileChange& change);
  // Removes `file` whole without reading it (a DELETE whose condition holds
  // for the file's partition values), in either mode; no change data.
  void RemoveWhole(const delta::AddFile& file);
  // New rows (table schema).
  Status Insert(const columnar::RecordBatchPtr& rows);
  // Closes the writer and, with deletion vectors, writes the vector file
  // (again: nothing). REQUIRES: after the last Apply/Insert.
  Status Finish();
  // Deletes the files written (after a failed or conflicting commit).
  void DeleteWritten();

  // True when the table has row tracking enabled (the writer keeps ids).
  bool row_tracking() const { return row_tracking_.has_value(); }

  // Valid after Finish.
  const std::vector<delta::AddFile>& adds() const { return adds_; }
  const std::vector<delta::RemoveFile>& removes() const { return removes_; }

  // Rows copied from touched files into new files (0 with deletion vectors).
  int64_t copied_rows() const { return copied_rows_; }
  // Files whose rows changed (rewritten, or given a deletion vector).
  int64_t touched_files() const { return touched_files_; }
  // Files removed without a successor (every rewritten file in
  // copy-on-write; those left without live rows with deletion vectors), and
  // their bytes.
  int64_t removed_files() const { return removed_files_; }
  int64_t removed_bytes() const { return removed_bytes_; }
  // New data files written and their bytes (not the re-added files that
  // only got a deletion vector).
  int64_t new_files() const { return new_files_; }
  int64_t new_bytes() const { return new_bytes_; }
  // delta-spark's counts: vectors written, touched files that had one, and
  // files that had one and got a new one.
  int64_t deletion_vectors_added() const { return dv_added_; }
  int64_t deletion_vectors_removed() const { return dv_removed_; }
  int64_t deletion_vectors_updated() const { return dv_updated_; }
  // Of deletion_vectors_removed: files removed whole (delta-spark's UPDATE
  // does not count those).
  int64_t removed_files_with_vector() const { return removed_files_with_vector_; }

 private:
  DmlWriter() = default;
  // `rows` (table schema) with a _change_type column: `types[i]` per row.
  Status WriteChanges(const columnar::RecordBatch& rows, const std::vector<const char*>& types);
  // Writes `rows` (table schema) as data; with row tracking, with `row_id`
  // and `row_commit_version` (null pointers: all NULL) as the materialized
  // columns.
  Status WriteData(const columnar::RecordBatch& rows, const columnar::ColumnPtr& row_id,
                   const columnar::ColumnPtr& row_commit_version);
  // The replacement rows of `change` with their kept row ids.
  Status WriteReplacement(const FileChange& change);
  delta::DeltaTable* table_ = nullptr;
  delta::SnapshotPtr snapshot_;
  WriteMode mode_ = WriteMode::kCopyOnWrite;
  std::optional<delta::RowTrackingWrite> row_tracking_;
  std::unique_ptr<delta::TableWriter> writer_;
  std::unique_ptr<delta::TableWriter> cdc_writer_;
  columnar::SchemaPtr cdc_schema_;
  std::vector<delta::AddCdcFile> cdc_files_;
  int64_t deletion_ms_ = 0;
  bool finished_ = false;
  std::vector<delta::RowDeletion> deletions_;
  std::string deletion_vector_file_;
  int64_t copied_rows_ = 0;
  int64_t touched_files_ = 0;
  int64_t removed_files_ = 0;
  int64_t removed_bytes_ = 0;
  int64_t new_files_ = 0;
  int64_t new_bytes_ = 0;
  int64_t dv_added_ = 0;
  int64_t dv_removed_ = 0;
  int64_t dv_updated_ = 0;
  int64_t removed_files_with_vector_ = 0;
  std::vector<delta::AddFile> adds_;
  std::vector<delta::RemoveFile> removes_;
};

}  // namespace silt::dml
