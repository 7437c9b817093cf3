// What DELETE, UPDATE and MERGE share: the checks on the table before
// anything is read, file selection by pruning, and the commit (commitInfo,
// conflict read set, cleanup of a lost commit's files).
//
// Thread safety: one thread.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/predicate.h"
#include "silt/delta/table.h"
#include "silt/dml/dml.h"
#include "silt/dml/rewrite.h"
#include "silt/dml/write_rules.h"

namespace silt::dml {

// The snapshot to change (options.snapshot or the latest). Errors:
// NotSupported for column mapping; the log's.
Result<delta::SnapshotPtr> SnapshotForDml(delta::DeltaTable* table, const DmlOptions& options,
                                          const char* operation);

// True when the table has delta.enableChangeDataFeed = true.
bool ChangeDataFeedOn(const delta::Snapshot& snapshot);

// True when options.txn is already recorded in `snapshot`.
bool TxnAlreadyRecorded(const delta::Snapshot& snapshot, const DmlOptions& options);

// The live files a FileSkipper over `predicate` keeps.
std::vector<const delta::AddFile*> SelectFiles(const delta::Snapshot& snapshot,
                                               const columnar::Conjunction& predicate);

// `node` (resolved, target-only conjuncts only) as a pruning conjunction
// over the table schema.
Result<columnar::Conjunction> TargetConjunction(const std::vector<expr::NodePtr>& conjuncts,
                                                const columnar::SchemaPtr& table_schema,
                                                const expr::EvalOptions& options);

struct DmlCommit {
  std::string operation;  // DELETE, UPDATE, MERGE
  std::map<std::string, std::string> parameters;
  std::vector<std::pair<std::string, std::string>> metrics;  // in Spark's order
  delta::CommitRequest::ReadSet read;
  // The table's write rules the operation applied (null: none, DELETE):
  // the commit honours their features and carries raised identity
  // high-water marks.
  const WriteRules* rules = nullptr;
};

// Finishes `writer`, commits its actions with `commit` (and options.txn,
// options.commit_info), deleting the new files when the commit fails with a
// Conflict or options.before_commit fails. Commits nothing when there are
// no actions and no txn. Fills result->version/committed and the file counts.
Status CommitDml(delta::DeltaTable* table, const delta::SnapshotPtr& snapshot, DmlWriter* writer,
                 DmlCommit commit, const DmlOptions& options, DmlResult* result);

// JSON array of strings, as a string: ["a","b"].
std::string JsonStrings(const std::vector<std::string>& values);

int64_t NowMillis();

}  // namespace silt::dml
