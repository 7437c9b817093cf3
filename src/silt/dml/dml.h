// DELETE, UPDATE and MERGE on Delta tables. The data files holding rows
// that change are read whole; copy-on-write, they are replaced (remove +
// add, dataChange = true, stats written, partition values kept) by files
// holding their unchanged rows and the new versions of the changed ones;
// with deletion vectors on (rewrite.h WriteMode) they keep their data and
// get a vector of the rows that go, and the new versions go to new files.
// MERGE's inserts go to new files. Files no row of which changes stay as they are,
// and an insert-only MERGE rewrites nothing. One commit per operation, whose
// commitInfo carries delta-spark's operation, operationParameters and
// operationMetrics, and whose conflicts with concurrent writers follow
// Delta's rules (CommitRequest::ReadSet, delta/table.h).
//
// Semantics are Spark's + Delta's:
//  - conditions keep a row where they are TRUE (NULL is not TRUE);
//  - columns are named case-insensitively; in MERGE, `alias.col` names a
//    side, and a bare `col` is the side that has it (an error when both do);
//  - SET / INSERT values are cast to the target column's type as Spark's
//    ANSI store assignment does (an overflow is an error, not a NULL);
//    NOT NULL target columns refuse nulls; `UPDATE SET *` / `INSERT *`
//    assign every target column from the source column of the same name;
//  - MERGE's clauses are tried in order, the first whose condition holds
//    acts; a target row matched by two source rows is
//    DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE, unless the
//    only WHEN MATCHED clause is an unconditional DELETE (or there is none
//    and the merge only inserts).
//
// Files are pruned before any is read: by the partition values and stats of
// the conjuncts of WHERE / ON that name target columns only, and (MERGE
// without WHEN NOT MATCHED BY SOURCE) by the source's values of the
// equi-join keys.
//
// The rewrite step sees, per touched file, the live rows read, the positions
// of those that go and the rows that replace them (FileChange in
// rewrite.h), and writes it copy-on-write or by deletion vector.
// Existing deletion vectors are honoured when reading. With the change data
// feed on, the changed rows also go to `_change_data/` files (rewrite.h
// DmlWriter::WriteChangeData).
//
// Thread safety: each call is single-threaded; concurrent calls on one table
// from several processes are what the conflict rules are for.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/delta/table.h"
#include "silt/expr/eval_options.h"
#include "silt/expr/parse/ast.h"
#include "silt/expr/parse/dml_statement.h"

namespace silt::dml {

struct DmlOptions {
  // The snapshot to change; null: the table's latest.
  delta::SnapshotPtr snapshot;
  // DELETE / UPDATE: the alias the condition and values may qualify the
  // target's columns with (`DELETE FROM t AS x WHERE x.id = 1`).
  std::string target_alias;
  // Session settings for conditions and values (ansi, time zone). Store
  // assignment casts are ANSI whatever `eval.ansi` says, as in Spark.
  expr::EvalOptions eval;
  // current_timestamp() and friends; 0: now.
  int64_t now_micros = 0;
  // Committed with the operation's actions (the streaming merge sink's
  // exactly-once record). When the table already records this appId at
  // this version or later, nothing is read or written and the result says
  // skipped_duplicate. With a txn the operation always commits (even when
  // no row changed), so the txn is recorded.
  std::optional<delta::Txn> txn;
  // Extra commitInfo members, written as JSON strings after the standard
  // ones (a standard member's key is ignored).
  std::map<std::string, std::string> commit_info;
  // Called once the new data files are written and before the commit:
  // tests commit concurrently here. An error aborts the operation (the new
  // files are deleted).
  std::function<Status()> before_commit;
};

struct DmlResult {
  // The version committed; the read version when nothing was committed.
  int64_t version = -1;
  bool committed = false;
  bool skipped_duplicate = false;
  // What `silt sql` prints, as Spark's SQL returns it: num_affected_rows
  // (DELETE, UPDATE, MERGE), and for MERGE num_updated_rows,
  // num_deleted_rows, num_inserted_rows.
  int64_t num_affected_rows = 0;
  int64_t num_updated_rows = 0;
  int64_t num_deleted_rows = 0;
  int64_t num_inserted_rows = 0;
  int64_t num_files_added = 0;
  int64_t num_files_removed = 0;
  // commitInfo.operationMetrics as written (delta-spark's names, values as
  // decimal strings).
  std::map<std::string, std::string> operation_metrics;
};

// Rows for a MERGE: its schema once, then batches, null at the end.
class RowSource {
 public:
  virtual ~RowSource() = default;
  virtual const columnar::SchemaPtr& schema() const = 0;
  virtual Result<columnar::RecordBatchPtr> Next() = 0;
};

// Batches already in memory (a streaming micro-batch). REQUIRES: every
// batch has `schema`.
std::unique_ptr<RowSource> MakeBatchSource(columnar::SchemaPtr schema,
                                           std::vector<columnar::RecordBatchPtr> batches);

// DELETE FROM table [WHERE condition]; `condition` null deletes every row.
// Errors: InvalidArgument for an unknown column or a non-boolean
// condition (naming the table); NotSupported for a table with column
// mapping; Conflict naming the Delta exception; the scan's, writer's and
// commit's errors.
Result<DmlResult> Delete(delta::DeltaTable* table, const expr::NodePtr& condition,
                         const DmlOptions& options = {});

// UPDATE table SET assignments [WHERE condition]. An assignment may name a
// field of a struct column (`SET s.a = 1`, `SET t.addr.city = ...`, any
// depth): the struct is rebuilt with that field's new value and the others
// kept, as Delta does (a NULL struct becomes a struct of its assigned fields
// and NULLs). Errors: as Delete, and InvalidArgument for an assignment to an
// unknown column or field (DELTA_MISSING_SET_COLUMN), a field of a
// non-struct (DELTA_UNSUPPORTED_FIELD_UPDATE_NON_STRUCT), a column assigned
// twice, a struct assigned together with one of its fields
// (DELTA_CONFLICT_SET_COLUMN), a value that cannot be cast to the column's
// or field's type, a NULL for a NOT NULL column.
Result<DmlResult> Update(delta::DeltaTable* table, const std::vector<expr::Assignment>& set,
                         const expr::NodePtr& condition, const DmlOptions& options = {});

struct MergeSpec {
  std::string target_alias;  // may be empty
  std::string source_alias;  // may be empty
  expr::NodePtr on;
  // In Spark's order (matched, not matched, not matched by source), as
  // expr::ParseDmlStatement checks it.
  std::vector<expr::MergeClause> clauses;
};

// MERGE INTO table USING source ON spec.on WHEN ... The source is read
// whole into memory first (the build side of the hash join on the
// equi-keys of ON); the target's files stream through the probe one at a
// time. Errors: as Update; InvalidArgument
// "[DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE] ..." (see the
// header comment); InvalidArgument for an ambiguous or unknown column, an
// `UPDATE SET *` / `INSERT *` whose source lacks a target column; the
// source's errors. Nested assignments as in Update; INSERT assigns
// top-level columns only (DELTA_UNSUPPORTED_NESTED_FIELD_IN_OPERATION).
Result<DmlResult> Merge(delta::DeltaTable* table, RowSource* source, const MergeSpec& spec,
                        const DmlOptions& options = {});

}  // namespace silt::dml
