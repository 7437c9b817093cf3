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
// Commits without data changes (OPTIMIZE, metadata) yield nothing, and so
// does a MERGE whose metrics say it changed no row (delta-spark's
// shouldSkipFileActionsInCommit: such a MERGE may rewrite files without
// writing change data).
//
// MakeForChanges serves the streaming source (readChangeFeed), whose
// batches may hold part of a commit and an initial snapshot read as
// inserts.
//
// Thread safety: one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/delta/table.h"

namespace silt::delta {

struct ChangeFeedOptions {
  int64_t starting_version = 0;
  // Clamped to the latest version; nullopt: the latest.
  std::optional<int64_t> ending_version;
};

// One commit's file actions as the change feed reads them: all of a commit,
// or the part of it a streaming batch covers.
struct CommitChanges {
  int64_t version = 0;
  int64_t timestamp_ms = 0;  // _commit_timestamp
  // When not empty, the commit's change data; `adds` and `removes` are then
  // ignored.
  std::vector<AddCdcFile> cdc_files;
  // Otherwise: added files' live rows are inserts, removed files' rows
  // deletes, a path both removed and added yields its deletion vectors'
  // difference. Taken as given (no dataChange filter).
  std::vector<AddFile> adds;
  std::vector<RemoveFile> removes;
};

// delta-spark's CDCReader.shouldSkipFileActionsInCommit: the commit is a
// MERGE whose operationMetrics report 0 rows inserted, updated and deleted.
bool IsNoChangeMerge(const std::optional<std::string>& commit_info_json);

// `table_schema` followed by _change_type (STRING), _commit_version (BIGINT)
// and _commit_timestamp (TIMESTAMP), all nullable: delta-spark's
// cdcReadSchema.
columnar::SchemaPtr ChangeFeedSchema(const columnar::SchemaPtr& table_schema);

// delta.enableChangeDataFeed is true in the table's configuration.
bool ChangeDataFeedEnabled(const Metadata& metadata);

// delta-spark's DELTA_MISSING_CHANGE_DATA for the range [start, end]
// without change data at `version` (InvalidArgument).
Status MissingChangeDataError(int64_t start, int64_t end, int64_t version,
                              const std::string& table_path);

// delta-spark's batch read check of the change data feed of a table with
// column mapping (at the start, the ending or the latest version): the
// changes are read with the ending version's schema (`read`, at
// `read_version`), and data written under `metadata` (the metaData of
// version `metadata_version`, or the start version's when
// `is_schema_change` is false) must be readable with it: no column that
// `metadata` has is dropped or renamed in `read` (by physical name, at any
// depth), the partition columns are the same, column mapping was not turned
// off, and every field of `metadata` is in `read` with the same type and a
// nullability no tighter (added columns are fine). Errors: NotSupported
// "[DELTA_CHANGE_DATA_FEED_INCOMPATIBLE_SCHEMA_CHANGE]" (a metaData inside
// the range) or "[DELTA_CHANGE_DATA_FEED_INCOMPATIBLE_DATA_SCHEMA]" (the
// start version's), naming the versions and `table_path`.
Status CheckChangeFeedReadSchema(const Metadata& read, int64_t read_version,
                                 const Metadata& metadata, int64_t metadata_version,
                                 bool is_schema_change, int64_t start, int64_t end,
                                 const std::string& table_path);

class ChangeFeedReader {
 public:
  // Errors: InvalidArgument when starting_version is negative, after the
  // latest version, or after ending_version (delta-spark's wording);
  // InvalidArgument "[DELTA_MISSING_CHANGE_DATA] ..." when a version in the
  // range has delta.enableChangeDataFeed off; on a column-mapped table, the
  // errors of CheckChangeFeedReadSchema (a column renamed or dropped inside
  // the range, or between the start and the ending version); NotFound when a commit of the
  // range is gone (log cleanup); the log's errors.
  static Result<std::unique_ptr<ChangeFeedReader>> Make(DeltaTable* table,
                                                        const ChangeFeedOptions& options);
  // The changes given, in order, read with `read_snapshot`'s schema and
  // table configuration (column mapping). No check that the change data
  // feed is on (the caller's). Errors: none until Next.
  static std::unique_ptr<ChangeFeedReader> MakeForChanges(DeltaTable* table,
                                                          SnapshotPtr read_snapshot,
                                                          std::vector<CommitChanges> changes);
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
