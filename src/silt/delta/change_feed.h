// Reading a table's change data feed, as delta-spark's `readChangeFeed`
// returns it: the rows each commit in a version range inserted, deleted or
// updated, with the table's columns and `_change_type` (insert, delete,
// update_preimage, update_postimage), `_commit_version` (BIGINT) and
// `_commit_timestamp` (TIMESTAMP).
//
// Per commit, as the protocol's "Change Data Files" says:
//  - a commit with `cdc` actions: the rows of its change data files (their
//    `_change_type` column, partition values from the action);
//  - otherwise the adds and removes with dataChange: an added file's live
//    rows are inserts, a removed file's rows (as its remove's deletion
//    vector left them) deletes; a file removed and re-added in one commit
//    with a new deletion vector (a DELETE by deletion vector) yields as
//    deletes the rows the new vector hides and the old did not.
// Commits without data changes (OPTIMIZE, metadata) yield nothing.
//
// Thread safety: one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/delta/table.h"

namespace silt::delta {

struct ChangeFeedOptions {
  int64_t starting_version = 0;
  // Clamped to the latest version; nullopt: the latest.
  std::optional<int64_t> ending_version;
};

class ChangeFeedReader {
 public:
  // Errors: InvalidArgument when starting_version is negative, after the
  // latest version, or after ending_version (delta-spark's wording);
  // InvalidArgument "[DELTA_MISSING_CHANGE_DATA] ..." when a version in the
  // range has delta.enableChangeDataFeed off; NotFound when a commit of the
  // range is gone (log cleanup); the log's errors.
  static Result<std::unique_ptr<ChangeFeedReader>> Make(DeltaTable* table,
                                                        const ChangeFeedOptions& options);
  ~ChangeFeedReader();

  // The table's columns (as of the ending version), then _change_type,
  // _commit_version, _commit_timestamp.
  const columnar::SchemaPtr& schema() const;
  // The next batch of changes, in commit order; null at the end. Errors: a
  // data or change file that cannot be read (IOError / Corruption naming
  // it).
  Result<columnar::RecordBatchPtr> Next();

 private:
  struct State;
  explicit ChangeFeedReader(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace silt::delta
