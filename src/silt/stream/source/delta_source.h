// DeltaSource (format: delta): a Delta table as a stream, with delta-spark's
// DeltaSource semantics and offsets, so a checkpoint reads the same in
// either engine.
//
// What a query reads:
//  - A new query without startingVersion/startingTimestamp first reads the
//    snapshot of the table at the version current when the query starts:
//    every live file, ordered by (modificationTime, path) as delta-spark's
//    DeltaSourceSnapshot sorts them, split into batches by the admission
//    limits. Then it tails the log.
//  - Each later commit contributes its `add` actions with dataChange=true,
//    in log order. Commits without such adds (metaData-only, OPTIMIZE's
//    dataChange=false rewrites, txn-only) contribute nothing.
//  - A commit with a dataChange=true `remove` stops the query, naming the
//    version and the option that would allow it (Spark's
//    DELTA_SOURCE_IGNORE_DELETE / DELTA_SOURCE_TABLE_IGNORE_CHANGES):
//    ignoreDeletes allows commits that only remove; ignoreChanges re-emits
//    the adds of commits that rewrite (their rows appear again);
//    skipChangeCommits skips such commits altogether. ignoreFileDeletion is
//    the deprecated alias Spark still honours.
//  - A metaData action whose schema the query's schema (the table's at
//    query start) cannot read — a column it does not have, another type, a
//    nullability it would tighten, other partition columns — stops the query
//    with Spark's DELTA_SCHEMA_CHANGED_WITH_VERSION message; a restart reads
//    with the new schema, as in Spark without schema tracking.
//  - excludeRegex: adds whose log path the regex finds (unanchored, RE2)
//    are counted and indexed like others but not read.
//  - Deletion vectors of the adds read are applied (delta/TableScan); the
//    rows they delete still count in numInputRows, as Spark counts them.
//
// Offsets (offsets/N, progress): delta-spark's DeltaSourceOffset JSON,
//   {"sourceVersion":1,"reservoirId":"<table id>","reservoirVersion":V,
//    "index":I,"isStartingVersion":B}
// meaning "everything up to and including file I of version V" (I = -1: the
// start of version V, before any of its files). isStartingVersion (Spark's
// historical name for "in the initial snapshot") is true while V is the
// snapshot version being read. An offset is never in the middle of an
// unread commit's validation: a batch that ends after the last file of V
// records (V+1, -1), as Spark does.
//
// Admission per batch (Spark's AdmissionLimits): maxFilesPerTrigger
// (default 1000) and maxBytesPerTrigger (soft: the file that crosses the
// limit is still taken; at least one file per batch); with only
// maxBytesPerTrigger set, the file count is unlimited. Trigger.Once reads
// everything; Trigger.AvailableNow stops at what was there at query start.
//
// Storage: the table's path as the Delta sink takes it (local, s3://, s3a://
// with the job's storage.s3 settings). The source only reads the log
// commits it has not consumed yet and the snapshot it started from, so log
// checkpoints, log cleanup of consumed commits and VACUUM of consumed files
// do not disturb it; a commit it still needs that log cleanup deleted is
// Spark's DELTA_MISSING_FILES_UNEXPECTED_VERSION (failOnDataLoss=false skips
// ahead instead).
//
// readChangeFeed (delta_source_cdc.cc, as delta-spark's
// DeltaSourceCDCSupport): the rows are the change data feed, the table's
// columns then _change_type, _commit_version, _commit_timestamp.
//  - The initial snapshot (no startingVersion/startingTimestamp) is read as
//    `insert` rows of the snapshot version; then each commit: its `cdc`
//    files when it has any (indexed among themselves), else its
//    dataChange adds (inserts) and removes (deletes), indexed together in
//    log order, a path removed and re-added yielding its deletion vectors'
//    difference. A MERGE whose metrics say it changed no row contributes
//    nothing. Commits are not refused for removing data (ignoreDeletes and
//    the like have no effect); schema changes stop the query as above.
//  - Admission: files of the initial snapshot and of commits without change
//    files or deletion vectors are admitted one at a time as above; a
//    commit with change files or deletion vectors is admitted whole or not
//    at all (a batch's first commit always is), so update pre- and
//    post-images never split across batches.
//  - Offsets: the same DeltaSourceOffset. A batch that ends with a commit's
//    change files ends at (V, index of its last change file); only the end
//    of a commit read through its adds and removes moves on to (V+1, -1).
//  - Each batch needs delta.enableChangeDataFeed on at its start version
//    (Spark's DELTA_MISSING_CHANGE_DATA, naming the version, otherwise).
//  - excludeRegex drops matching files (data, change or removed) from the
//    stream altogether.
//
// Nothing is written under sources/<i>/ (delta-spark writes nothing there
// either without schema tracking).
//
// Thread safety: one query thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "silt/delta/table.h"
#include "silt/stream/source/source.h"

namespace re2 {
class RE2;
}

namespace silt::stream {

// delta-spark's DeltaSourceOffset.
struct DeltaSourceOffset {
  // The start of a version, before its first file (Spark's BASE_INDEX,
  // serialized as -1 with sourceVersion 1).
  static constexpr int64_t kBaseIndex = -1;

  std::string reservoir_id;
  int64_t reservoir_version = 0;
  int64_t index = kBaseIndex;
  bool is_initial_snapshot = false;

  // {"sourceVersion":1,"reservoirId":...,"reservoirVersion":...,"index":...,
  //  "isStartingVersion":...}, field order as Spark's Jackson writes it.
  std::string ToJson() const;
  // Accepts sourceVersion 1 and 3 (index -1 or -100 is the base index).
  // Errors: InvalidArgument for malformed JSON or reserved/newer source
  // versions; NotSupported for the schema-tracking indexes (-20, -19) that
  // only delta-spark's schemaTrackingLocation writes.
  static Result<DeltaSourceOffset> Parse(std::string_view json);

  bool operator==(const DeltaSourceOffset& other) const = default;
};

struct DeltaSourceOptions {
  std::string path;  // normalized table path or URI
  // startingVersion: a version, or `latest` (the version after the newest).
  std::optional<int64_t> starting_version;
  bool starting_latest = false;
  std::optional<std::string> starting_timestamp;
  std::optional<int64_t> max_files_per_trigger;
  std::optional<int64_t> max_bytes_per_trigger;
  bool ignore_deletes = false;
  bool ignore_changes = false;
  bool ignore_file_deletion = false;
  bool skip_change_commits = false;
  bool fail_on_data_loss = true;
  std::optional<std::string> exclude_regex;
  // readChangeFeed (or its legacy name readChangeData).
  bool read_change_feed = false;

  // Errors: InvalidArgument naming the key (missing path, bad numbers, both
  // starting options, a bad regex, a user schema, and the options silt does
  // not implement: schemaTrackingLocation, endingVersion, ...).
  static Result<DeltaSourceOptions> FromSpec(const SourceSpec& spec);
};

class DeltaSource final : public Source {
 public:
  // Opens the table and reads its latest snapshot: its schema is the
  // query's. Errors: NotFound when the path is not a Delta table;
  // NotSupported when the protocol read gate refuses it; InvalidArgument for
  // a bad startingTimestamp.
  static Result<std::unique_ptr<DeltaSource>> Make(DeltaSourceOptions options,
                                                   const SourceContext& context);
  ~DeltaSource() override;

  const columnar::SchemaPtr& schema() const override { return schema_; }
  // "DeltaSource[file:/abs/path]", as delta-spark prints its data path.
  std::string Description() const override;
  // Checks that the recorded offset is this table's (Spark's
  // DIFFERENT_DELTA_TABLE_READ_BY_STREAMING_SOURCE otherwise).
  Status Restore(const std::optional<std::string>& last_planned) override;
  Status PrepareForAvailableNow() override;
  Result<std::optional<std::string>> LatestOffset(const std::optional<std::string>& start,
                                                  const ReadLimit& limit) override;
  Result<std::unique_ptr<BatchReader>> GetBatch(const std::optional<std::string>& start,
                                                const std::string& end) override;

 private:
  // One step of the change stream, as delta-spark's IndexedFile: the start
  // or end of a version, or one file of it.
  enum class ChangeKind { kBase, kFile, kEnd };
  struct Change {
    int64_t version = 0;
    int64_t index = 0;
    ChangeKind kind = ChangeKind::kFile;
    const delta::AddFile* add = nullptr;  // kFile only; valid during the visit
  };
  // Returns false to stop the walk.
  using ChangeVisitor = std::function<Result<bool>(const Change&)>;

  // The readChangeFeed walk's steps (delta-spark's IndexedFile with an
  // add, remove or cdc action).
  struct CdcChange {
    int64_t version = 0;
    int64_t index = 0;
    ChangeKind kind = ChangeKind::kFile;
    // kFile: exactly one is set; valid during the visit.
    const delta::AddFile* add = nullptr;
    const delta::RemoveFile* remove = nullptr;
    const delta::AddCdcFile* cdc = nullptr;
    int64_t size = 0;
  };
  struct CdcAdmission;
  using CdcVisitor = std::function<Status(const CdcChange&)>;

  DeltaSource(DeltaSourceOptions options, const SourceContext& context);

  // Spark's getFileChangesForCDC: visits the changes after (from_version,
  // from_index) — the snapshot at from_version first when `initial` — up
  // to and including `bound` when set, within `admission` when not null.
  Status WalkCdcChanges(int64_t from_version, int64_t from_index, bool initial,
                        CdcAdmission* admission, const std::optional<DeltaSourceOffset>& bound,
                        const CdcVisitor& visit);
  Result<std::optional<DeltaSourceOffset>> NextCdcOffset(
      const std::optional<DeltaSourceOffset>& start, int64_t from_version, int64_t from_index,
      bool initial, bool limited, const std::optional<DeltaSourceOffset>& bound);
  Result<std::unique_ptr<BatchReader>> GetCdcBatch(int64_t from_version, int64_t from_index,
                                                   bool initial, const DeltaSourceOffset& end);
  // Spark's buildOffsetFromIndexedFile for the last change a plan took.
  DeltaSourceOffset OffsetAfter(int64_t version, int64_t index, bool is_end, int64_t from_version,
                                bool initial) const;

  // Spark's getFileChanges: walks the changes after (from_version,
  // from_index) — the snapshot at from_version first when `initial` — in
  // order, up to and including `bound` when set, validating each commit as
  // it is entered. `batch_end` is the end offset of a planned batch (for
  // validation's shortcut at a base index), nullopt while planning.
  Status WalkChanges(int64_t from_version, int64_t from_index, bool initial,
                     const std::optional<DeltaSourceOffset>& bound,
                     const std::optional<DeltaSourceOffset>& batch_end, const ChangeVisitor& visit);
  // The commit's actions (cached while the query may still need them).
  Result<std::shared_ptr<const delta::CommitActions>> Commit(int64_t version);
  // The snapshot at `version`, its files sorted by (modificationTime, path).
  Result<const std::vector<delta::AddFile>*> SnapshotFiles(int64_t version);
  // Spark's validateCommitAndDecideSkipping: true when the commit is
  // skipped (skipChangeCommits); errors for removes and schema changes.
  Result<bool> ValidateCommit(const delta::CommitActions& commit,
                              const std::optional<DeltaSourceOffset>& batch_end);
  Status CheckSchemaChange(const delta::Metadata& metadata, int64_t version) const;
  // The version a new query starts at (startingVersion/startingTimestamp),
  // computed once per run as Spark's lazy getStartingVersion.
  Result<std::optional<int64_t>> StartingVersion();
  // Spark's latestOffsetInternal; `limited` applies the admission limits.
  Result<std::optional<DeltaSourceOffset>> NextOffset(
      const std::optional<DeltaSourceOffset>& start, bool limited,
      const std::optional<DeltaSourceOffset>& bound);
  Result<DeltaSourceOffset> ParseOwnOffset(std::string_view json) const;

  DeltaSourceOptions options_;
  SourceContext context_;
  fs::FileSystemPtr fs_;
  std::unique_ptr<delta::DeltaTable> table_;
  // The snapshot at query start: the read schema, partitioning and table id.
  delta::SnapshotPtr init_snapshot_;
  // The rows' schema: the table's, plus the change columns with
  // readChangeFeed.
  columnar::SchemaPtr schema_;
  columnar::SchemaPtr table_schema_;
  std::string table_id_;
  std::unique_ptr<re2::RE2> exclude_;
  bool starting_version_known_ = false;
  std::optional<int64_t> starting_version_;
  // The newest offsets/N's offset at Restore: where planning resumes.
  std::optional<DeltaSourceOffset> restored_start_;
  // Trigger.AvailableNow: planning never passes available_now_end_ (none:
  // nothing was available).
  bool available_now_ = false;
  std::optional<DeltaSourceOffset> available_now_end_;
  // Parsed commits by version; versions below the last planned start are
  // dropped.
  std::map<int64_t, std::shared_ptr<const delta::CommitActions>> commits_;
  int64_t snapshot_files_version_ = -1;
  std::vector<delta::AddFile> snapshot_files_;
};

}  // namespace silt::stream
