// The write side of DML: reading one target file's live rows, and turning
// per-file changes plus inserted rows into the commit's add and remove
// actions.
//
// A FileChange states what happens to one data file independent of how it
// is written: the positions (in the rows read, i.e. after the file's
// deletion vector) of the rows that go, and the rows that replace them.
// CopyOnWrite writes the file's other rows and the replacement rows to new
// files and removes the old one. A deletion-vector writer would instead
// record PhysicalRows(change) (united with the file's existing vector) in a
// new vector and write only the replacement rows.
//
// Thread safety: one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/delta/table.h"

namespace silt::dml {

struct FileChange {
  const delta::AddFile* file = nullptr;
  // The file's live rows as ReadTargetFile returned them (table schema).
  columnar::RecordBatchPtr rows;
  // Positions in `rows` of the rows that go, ascending, unique.
  std::vector<int64_t> dropped;
  // Rows that take their place (table schema); null or empty when none.
  columnar::RecordBatchPtr replacement;
  // Rewrite the file even when nothing changes: delta-spark's copy-on-write
  // MERGE rewrites every file holding a target row that the ON condition
  // matched (and, with WHEN NOT MATCHED BY SOURCE, one it did not), whether
  // or not a clause acts on it. A deletion-vector writer ignores this.
  bool rewrite = false;
};

// Every live row of `file` (its deletion vector applied), in file order, as
// one batch of the table schema.
Result<columnar::RecordBatchPtr> ReadTargetFile(const delta::DeltaTable& table,
                                                const delta::SnapshotPtr& snapshot,
                                                const delta::AddFile& file);

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

class CopyOnWrite {
 public:
  static Result<std::unique_ptr<CopyOnWrite>> Make(delta::DeltaTable* table,
                                                   const delta::SnapshotPtr& snapshot);
  ~CopyOnWrite();

  // Writes the file's rows not in change.dropped, then change.replacement;
  // the file is removed at commit. A change that drops nothing and replaces
  // nothing is ignored.
  Status Apply(const FileChange& change);
  // New rows (table schema).
  Status Insert(const columnar::RecordBatchPtr& rows);
  // Closes the writer (again: nothing). REQUIRES: after the last
  // Apply/Insert.
  Status Finish();
  // Deletes the files written (after a failed or conflicting commit).
  void DeleteWritten();

  const std::vector<delta::AddFile>& adds() const { return adds_; }
  const std::vector<delta::RemoveFile>& removes() const { return removes_; }
  int64_t copied_rows() const { return copied_rows_; }
  int64_t added_bytes() const;
  int64_t removed_bytes() const;

 private:
  CopyOnWrite() = default;
  delta::DeltaTable* table_ = nullptr;
  delta::SnapshotPtr snapshot_;
  std::unique_ptr<delta::TableWriter> writer_;
  int64_t deletion_ms_ = 0;
  bool finished_ = false;
  int64_t copied_rows_ = 0;
  std::vector<delta::AddFile> adds_;
  std::vector<delta::RemoveFile> removes_;
};

}  // namespace silt::dml
