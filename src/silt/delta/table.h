// Delta tables: open the log, build snapshots, write data files and commit
// them atomically with exactly-once txn records, and scan snapshots back into
// RecordBatches.
//
// A table lives at `table_path` on a FileSystem; its log is
// `<table_path>/_delta_log/`. Commits use FileSystem::PutIfAbsent on
// `<version>.json`, so two writers never both create a version.
//
// Thread safety: DeltaTable and Snapshot are safe for concurrent reads;
// TableWriter and Transaction are single-threaded.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/columnar/predicate.h"
#include "silt/delta/actions.h"
#include "silt/fs/file_system.h"
#include "silt/parquet/file_writer.h"

namespace silt::delta {

class LogReplay;               // log_replay.cc
struct SidecarPlan;            // checkpoint_writer_v2.cc
struct ClassicCheckpointPlan;  // checkpoint_classic_incremental.h
class CheckpointWorker;        // checkpoint_worker.h

// The state of a table at one version.
class Snapshot {
 public:
  int64_t version() const { return version_; }
  const Protocol& protocol() const { return protocol_; }
  const Metadata& metadata() const { return metadata_; }
  const columnar::SchemaPtr& schema() const { return metadata_.schema; }
  const std::vector<std::string>& partition_columns() const { return metadata_.partition_columns; }
  // Live files, sorted by path. When files_elided(), only those added since
  // the checkpoint at elided_since(); the others are in that checkpoint.
  const std::vector<AddFile>& files() const { return files_; }
  // A writer's state that does not hold the files its last V2 checkpoint
  // (or incremental classic checkpoint, checkpoint_classic_incremental.h)
  // holds (DeltaTable::set_elide_checkpointed_files): files() lists only the
  // files added since version elided_since(), whose checkpoint has the rest.
  // Such a state only moves on by the writer's own blind appends; reading
  // the table's files needs a snapshot from LatestSnapshot or SnapshotAt.
  bool files_elided() const { return elided_since_ >= 0; }
  int64_t elided_since() const { return elided_since_; }
  // The number of live files, elided ones included.
  int64_t num_files() const { return elided_files_ + static_cast<int64_t>(files_.size()); }
  // This snapshot with only `files` live (a subset of files(), any order) and
  // no tombstones (decision 192): a TableScan of chosen files, e.g. one bin.
  std::shared_ptr<const Snapshot> WithFiles(std::vector<AddFile> files) const;
  // As WithFiles, scanned with `schema` instead of the table's (the change
  // data feed reads _change_data files, which add _change_type).
  std::shared_ptr<const Snapshot> WithFilesAndSchema(std::vector<AddFile> files,
                                                     columnar::SchemaPtr schema) const;
  // The txn version recorded for `app_id`, if any.
  std::optional<int64_t> TxnVersion(const std::string& app_id) const;
  // Every txn by appId (checkpoints carry them).
  const std::map<std::string, Txn>& txns() const { return txns_; }
  // Removes not superseded by a later add of the same file, sorted by path
  // (checkpoints keep the unexpired ones for VACUUM).
  const std::vector<RemoveFile>& tombstones() const { return tombstones_; }
  // The metadata domains of this version (PROTOCOL.md "Domain Metadata"),
  // removed ones left out, by name. Writers and checkpoints carry them all.
  const std::map<std::string, DomainMetadata>& domain_metadata() const { return domains_; }
  // The configuration of domain `name`, if the table has it.
  const DomainMetadata* FindDomain(const std::string& name) const {
    auto it = domains_.find(name);
    return it == domains_.end() ? nullptr : &it->second;
  }
  // Commit timestamp (ms) of this version (commitInfo.timestamp, else the
  // commit file's modification time).
  int64_t timestamp_ms() const { return timestamp_ms_; }

 private:
  friend class DeltaTable;
  // WithFiles (table.cc) copies every member but files_ and tombstones_ by
  // name: a member added here must be added there too.
  int64_t version_ = -1;
  int64_t timestamp_ms_ = 0;
  Protocol protocol_;
  Metadata metadata_;
  std::vector<AddFile> files_;
  std::map<std::string, Txn> txns_;
  std::vector<RemoveFile> tombstones_;
  std::map<std::string, DomainMetadata> domains_;
  // Every file and tombstone path is relative without %-escapes or a scheme
  // (what silt and delta-spark write): its logical file is then found by
  // path alone, so applying one commit costs the commit, not the table.
  bool plain_paths_ = false;
  // files_elided(): the checkpoint version, and how many live files it holds
  // that files_ does not.
  int64_t elided_since_ = -1;
  int64_t elided_files_ = 0;
};
using SnapshotPtr = std::shared_ptr<const Snapshot>;

class DeltaTable {
 public:
  // Binds to `table_path` (no I/O beyond none). Use Exists/LatestSnapshot.
  static Result<std::unique_ptr<DeltaTable>> Open(fs::FileSystemPtr fs, std::string table_path);
  // A table named by a user-given path or URI (local path, s3://, s3a://):
  // picks the file system and checks that the log has a commit. Errors:
  // NotFound "'PATH' is not a Delta table (no commits in PATH/_delta_log)".
  static Result<std::unique_ptr<DeltaTable>> OpenExisting(const std::string& path);

  const std::string& path() const { return path_; }
  const fs::FileSystemPtr& file_system() const { return fs_; }
  std::string log_path() const;

  // True when `_delta_log` holds at least one commit.
  Result<bool> Exists();
  // Versions present in the log, ascending.
  Result<std::vector<int64_t>> ListVersions();
  // Errors: NotFound "… is not a Delta table (no _delta_log/…)" when empty.
  // Snapshots start from the newest complete checkpoint at or before the
  // version (classic, multi-part or V2 with sidecars; an unreadable one
  // falls back to an older one or to commit 0) and replay the JSON commits
  // after it. Corruption for a broken log (missing commit, no
  // protocol/metaData, malformed line or checkpoint); NotSupported naming
  // the table feature(s) when the protocol read gate (protocol.h) refuses.
  Result<SnapshotPtr> LatestSnapshot();
  // As LatestSnapshot. Errors: NotFound naming the version and the available
  // range.
  Result<SnapshotPtr> SnapshotAt(int64_t version);
  // The latest snapshot, built from `base` (a snapshot of this table) plus
  // the commits after it: one listing of the log and one read per new
  // commit; `base` itself when nothing was committed since. A streaming
  // sink calls this every batch instead of LatestSnapshot, whose cost grows
  // with the table (it reads the newest checkpoint). When the caller hands
  // over the only reference to `base`, its file lists are reused without a
  // copy. Falls back to LatestSnapshot when a commit after `base` is gone
  // (log cleanup) or the log no longer reaches `base`'s version, and when
  // `base` does not hold its checkpointed files (Snapshot::files_elided) and
  // there are new commits (which then also turns eliding off for this
  // handle: another writer commits to the table).
  Result<SnapshotPtr> Update(SnapshotPtr base);
  // The snapshot at `actions.version`, built from `base` (this table's
  // snapshot at actions.version - 1; null when actions.version is 0) plus
  // that one commit's actions, without reading the log: a writer advancing
  // its own snapshot past the commit it has just written. When the caller
  // hands over the only reference to `base`, its file lists are reused
  // without a copy, and the cost is that of the commit, not of the table.
  // `timestamp_ms` is the snapshot's time when the actions carry no
  // commitInfo timestamp. Errors: InvalidArgument when `base` is not at
  // actions.version - 1; otherwise as LatestSnapshot (Corruption, the
  // protocol read gate's NotSupported).
  Result<SnapshotPtr> ApplyCommit(SnapshotPtr base, CommitActions actions, int64_t timestamp_ms);
  // Time travel by timestamp, as Spark's `timestampAsOf`: the newest version
  // whose commit timestamp (in-commit timestamp when the table enables it,
  // else the commit file's modification time, adjusted to be monotonic as
  // delta-spark does) is <= `timestamp_ms`. Errors: NotFound when the
  // timestamp is before the earliest available commit or after the latest
  // one, naming both bounds.
  Result<SnapshotPtr> SnapshotAtTimestamp(int64_t timestamp_ms);
  // One commit's actions. Errors: NotFound naming the version.
  Result<CommitActions> ReadCommit(int64_t version);

  // The cutoff of the last expired-log cleanup run through this handle
  // after a checkpoint (commit.cc), so that a writer does not list the
  // whole log again while the cutoff, a UTC day boundary, has not moved.
  std::optional<int64_t> last_log_cleanup_cutoff_ms() const { return last_log_cleanup_cutoff_ms_; }
  void set_last_log_cleanup_cutoff_ms(int64_t ms) { last_log_cleanup_cutoff_ms_ = ms; }
  // The oldest commit file's modification time that the last such cleanup
  // left in the log (LogCleanupResult), so that a later cutoff still before
  // it skips the listing (decision 180). Both are read and set only by
  // post-commit work, which runs on one thread at a time (an inline
  // checkpoint first waits for the background one).
  std::optional<int64_t> log_oldest_commit_time_ms() const { return log_oldest_commit_time_ms_; }
  void set_log_oldest_commit_time_ms(std::optional<int64_t> ms) { log_oldest_commit_time_ms_ = ms; }
  // Which file actions the last V2 checkpoint written through this handle
  // put in which sidecar (checkpoint_writer_v2.cc), so the next one references
  // the unchanged sidecars again; null before the first.
  // Guarded: a background checkpoint (set_background_checkpoints) sets it
  // while the writer's thread reads it.
  std::shared_ptr<SidecarPlan> sidecar_plan() const;
  void set_sidecar_plan(std::shared_ptr<SidecarPlan> plan);
  // Opt-in for a writer that commits only blind appends of new files and
  // advances its own snapshot (CommitAndAdvance): after each V2 checkpoint
  // (or classic one, in the incremental layout of
  // checkpoint_classic_incremental.h) written through this handle, the
  // writer's state drops the files that
  // checkpoint holds (Snapshot::files_elided), so its memory and the next
  // checkpoint's work grow with the files added since, not with the table.
  // A commit by anyone else, or one of its own that removes a file, makes
  // the state re-read from the log (Update, CommitAndAdvance).
  void set_elide_checkpointed_files(bool on) { elide_checkpointed_files_ = on; }
  bool elide_checkpointed_files() const { return elide_checkpointed_files_; }
  // `snapshot` without the files of the V2 checkpoint at its version that
  // this handle has just written (checkpoint_writer_v2.cc), when eliding is on,
  // the state has no tombstones and that checkpoint is the handle's last;
  // else `snapshot` itself. Moves the files out when `snapshot` is the only
  // reference.
  SnapshotPtr ElideCheckpointedFiles(SnapshotPtr snapshot) const;
  // The same after a classic checkpoint in the incremental layout
  // (checkpoint_classic_incremental.h): `snapshot` without the files of the
  // one this handle has just written at its version, when eliding is on and
  // the state has no tombstones; else `snapshot` itself.
  SnapshotPtr ElideClassicCheckpointedFiles(SnapshotPtr snapshot) const;
  // What the last incremental classic checkpoint written through this handle
  // holds (checkpoint_classic_incremental.h); null before the first and
  // after a checkpoint of another kind. Guarded like sidecar_plan.
  std::shared_ptr<ClassicCheckpointPlan> classic_checkpoint_plan() const;
  void set_classic_checkpoint_plan(std::shared_ptr<ClassicCheckpointPlan> plan);
  // Opt-in for a streaming writer (decision 152): the checkpoint due after a
  // commit that advanced the writer's own state (CommitAndAdvance) is
  // written by a background thread of this handle from that state, and the
  // commit returns without waiting for it. A checkpoint that comes due while
  // the previous one is being written, or during the pause after it
  // (decision 178: checkpoints take at most a tenth of the wall time),
  // waits and is written next, a newer due one replacing it (decision 162).
  // V2 checkpoints of a handle with set_elide_checkpointed_files stay on
  // the commit path (its state drops their files), and so do those of
  // Commit. The handle's destructor ends the pause and writes the waiting
  // checkpoint. Off by default.
  void set_background_checkpoints(bool on) { background_checkpoints_ = on; }
  bool background_checkpoints() const { return background_checkpoints_; }
  // The background thread, created on first use (commit.cc).
  CheckpointWorker* checkpoint_worker();
  // Returns once no background checkpoint is being written through this
  // handle (commit.cc calls it before any checkpoint or log cleanup it makes
  // on the commit path, tests before they look at the log).
  void WaitForBackgroundCheckpoint();
  ~DeltaTable();

 private:
  // One complete checkpoint: a classic single file, all parts of a
  // multi-part checkpoint, or a V2 top-level file (JSON or Parquet).
  struct CheckpointEntry {
    int64_t version = -1;
    std::vector<std::string> files;  // names in `_delta_log`, parts in order
    int64_t modification_time_ms = 0;
  };
  // What `_delta_log` holds: commit files by ascending version, and the
  // complete checkpoints by ascending version (incomplete multi-part sets
  // are left out). `_last_checkpoint` is only a hint for readers that do not
  // list the log; silt always lists, so a missing, torn, stale or corrupt
  // hint changes nothing.
  struct LogListing {
    std::vector<fs::FileInfo> commits;
    std::vector<int64_t> versions;
    std::vector<CheckpointEntry> checkpoints;
    // The newest version the log describes (commit or checkpoint), or -1.
    int64_t LatestVersion() const;
  };

  DeltaTable(fs::FileSystemPtr fs, std::string path);
  Result<LogListing> ListLog();
  // Reconstructs the snapshot at `version` from the newest readable
  // checkpoint at or before it (else commit 0) plus the JSON commits after
  // it (log_replay.cc), and applies the protocol read gate.
  Result<SnapshotPtr> Replay(const LogListing& listing, int64_t version);
  // Applies the commits start+1..version to `replay` (which holds the state
  // at `start`; `timestamp_ms` is that state's time) and builds the snapshot.
  Result<SnapshotPtr> ReplayCommits(LogReplay* replay, const LogListing& listing, int64_t start,
                                    int64_t version, int64_t timestamp_ms);
  // Starts `replay` from `base`'s state (moved out when `base` is the only
  // reference to it).
  static void StartFromSnapshot(LogReplay* replay, SnapshotPtr base);
  // The snapshot at `version` from a replay that has applied everything up
  // to it: checks protocol and metaData and applies the read gate.
  Result<SnapshotPtr> BuildSnapshot(LogReplay* replay, int64_t version, int64_t timestamp_ms);
  // The actions of a checkpoint, with V2 sidecars resolved.
  Result<CommitActions> ReadCheckpoint(const CheckpointEntry& checkpoint);
  fs::FileSystemPtr fs_;
  std::string path_;
  // The listing OpenExisting made to check the table exists, handed to the
  // next ListLog once so that opening and loading a snapshot list the log
  // once (a LIST per 1,000 entries on S3).
  std::optional<LogListing> opening_listing_;
  std::optional<int64_t> last_log_cleanup_cutoff_ms_;
  std::optional<int64_t> log_oldest_commit_time_ms_;
  mutable std::mutex sidecar_plan_mu_;
  std::shared_ptr<SidecarPlan> sidecar_plan_;
  std::shared_ptr<ClassicCheckpointPlan> classic_plan_;
  bool elide_checkpointed_files_ = false;
  bool background_checkpoints_ = false;
  // Last: destroyed first, so a checkpoint in flight finishes while the
  // handle it writes through is still whole.
  std::unique_ptr<CheckpointWorker> checkpoint_worker_;
};

struct TableWriterOptions {
  parquet::WriterOptions parquet;
  // A data file is closed and a new one started past this size.
  int64_t target_file_bytes = 128LL * 1024 * 1024;
  // Columns for which stats are collected: the first N leaf columns (Delta's
  // delta.dataSkippingNumIndexedCols, default 32).
  int num_indexed_cols = 32;
};

// Writes batches as Parquet data files under the table path, split by the
// partition columns into Hive-style directories with Delta's escaping
// (`device_type=smart_plug/event_date=2026-06-22/part-00000-<uuid>.c000.snappy.parquet`).
// Partition columns are not stored in the files. Nothing is visible in the
// table until a Transaction commits the returned AddFiles.
class TableWriter {
 public:
  // `schema` is the table schema (incl. partition columns).
  static Result<std::unique_ptr<TableWriter>> Make(fs::FileSystemPtr fs, std::string table_path,
                                                   columnar::SchemaPtr schema,
                                                   std::vector<std::string> partition_columns,
                                                   TableWriterOptions options = {});
  virtual ~TableWriter() = default;
  // REQUIRES: batch.schema equals the table schema.
  virtual Status Write(const columnar::RecordBatch& batch) = 0;
  // Closes every open file; returns one AddFile per file written, with
  // partition values, size, modificationTime and stats (numRecords,
  // minValues, maxValues, nullCount).
  virtual Result<std::vector<AddFile>> Finish() = 0;
  // Deletes files written so far (best effort).
  virtual Status Abort() = 0;
};

struct CommitRequest {
  // Required when the table does not exist yet: the metaData (schema,
  // partition columns, configuration) and protocol of version 0.
  std::optional<Metadata> new_metadata;
  std::optional<Protocol> new_protocol;
  // Writer features this writer implements beyond what every commit does
  // (CheckWriteSupported's `honoured`): the Delta sink computes generated
  // and identity columns.
  std::vector<std::string> honoured_features;
  std::vector<AddFile> adds;
  std::vector<RemoveFile> removes;
  // Change data files (delta.enableChangeDataFeed), written after the adds.
  std::vector<AddCdcFile> cdc_files;
  // Metadata domains this commit sets or removes (e.g. delta.clustering).
  // Commit adds delta.rowTracking itself when it assigns row ids; another
  // writer's commit of the same domain in between is a Conflict.
  std::vector<DomainMetadata> domain_metadata;
  std::optional<Txn> txn;
  // Compare-and-set txns, for writers that share a table and each record
  // the position of the input partitions they own (scale-out workers: one
  // txn per Kafka topic-partition, version = the next offset to read). Each
  // txn is written only if the table's version for its appId just before
  // this commit is `expected` (nullopt: no txn recorded): checked against
  // the read snapshot before writing and against every commit that won the
  // race, so a partition that another writer advanced meanwhile makes this
  // commit fail (Conflict naming the appId, the version expected, the one
  // found and the winning commit) instead of recording its rows twice.
  // REQUIRES: the read snapshot is at least as new as the table reads the
  // expected versions came from (a writer's versions only grow, so a
  // mismatch there is a real conflict, not a stale read).
  struct ExpectedTxn {
    Txn txn;
    std::optional<int64_t> expected;
  };
  std::vector<ExpectedTxn> expected_txns;
  // commitInfo fields: operation ("STREAMING UPDATE", "WRITE", ...) and its
  // parameters as plain text values; Commit() writes each as a JSON string
  // ("outputMode":"Append"), as delta-spark does.
  std::string operation = "WRITE";
  std::map<std::string, std::string> operation_parameters;
  // Parameters whose value is JSON text written as is (a boolean or a
  // number), for the ones delta-spark types (VACUUM's retention millis,
  // OPTIMIZE's auto). Keys must not repeat operation_parameters'.
  std::map<std::string, std::string> operation_parameters_json;
  std::map<std::string, std::string> operation_metrics;
  bool is_blind_append = true;
  // False: operation_metrics are written as given, without the write
  // metrics (numFiles, numOutputRows, numOutputBytes) derived from the adds
  // (delta-spark's DELETE/UPDATE/MERGE name their own).
  bool derive_write_metrics = true;
  // commitInfo.isolationLevel.
  std::string isolation_level = "Serializable";
  // commitInfo.tags (written after operationMetrics, as delta-spark orders
  // them), e.g. delta.rowTracking.preserved = true from writers that keep
  // stable row ids (PROTOCOL.md "Writer Requirements for Row Tracking").
  std::map<std::string, std::string> tags;
  // Extra commitInfo members (after the standard ones), each written as a
  // JSON string; a key that names a standard member is ignored.
  std::map<std::string, std::string> commit_info_extra;

  // What an operation that read the table before writing (DELETE, UPDATE,
  // MERGE) read, as delta-spark's ConflictChecker tracks it. When set, a
  // commit that won the race is judged by Delta's rules for such an
  // operation, and a conflict names the Delta exception:
  //  - a protocol or metaData change: ProtocolChangedException /
  //    MetadataChangedException;
  //  - a file added with dataChange that the read would have seen (whole
  //    table, or a FileSkipper over some predicate keeps it):
  //    ConcurrentAppendException. Under WriteSerializable (Delta's default,
  //    table property delta.isolationLevel) adds of a blind-append winner
  //    do not count; under Serializable they do;
  //  - a removed file this operation read: ConcurrentDeleteReadException;
  //  - a removed file this operation also removes:
  //    ConcurrentDeleteDeleteException;
  //  - a txn of the same appId: ConcurrentTransactionException.
  // Anything else commutes and the commit is retried at the next version.
  struct ReadSet {
    bool whole_table = false;
    // The file filters the read used (a file could have been read when a
    // FileSkipper over one of them keeps it). Ignored when whole_table.
    std::vector<columnar::Conjunction> predicates;
    // Paths (as in the log) of the files read.
    std::vector<std::string> files;
    // "Serializable" or "WriteSerializable".
    std::string isolation_level = "WriteSerializable";
  };
  std::optional<ReadSet> read_set;
};

struct CommitResult {
  int64_t version = -1;
  // True when the commit was skipped because the table already records
  // txn.version >= request.txn.version for the appId (exactly-once).
  bool skipped_duplicate = false;
};

// Commits `request` on top of `read_snapshot` (null for a new table):
// writes version read+1 with put-if-absent; when another writer won the race,
// reads the winning commits, applies Delta's conflict rules (blind appends
// commute; a winner's metaData/protocol change, or a txn for the same appId,
// is a Conflict) and retries at the next version.
// A request whose txn is already recorded (in read_snapshot, or in a commit
// that won the race) returns skipped_duplicate without writing; one whose
// expected_txns do not hold (in read_snapshot, or after a winner) is a
// Conflict. For a new
// table, protocol defaults to (1, 2) and metaData gets a fresh id and
// createdTime when unset (and, with delta.enableRowTracking, the names of
// the materialized row tracking columns). Table features are honoured here:
// with delta.enableInCommitTimestamps the commitInfo carries an
// inCommitTimestamp later than the previous commit's (and the enablement
// version/timestamp properties when this commit turns them on); with the
// rowTracking feature (not suspended) adds without a baseRowId get fresh row
// ids above the table's high-water mark, every add a defaultRowCommitVersion,
// and the commit the new delta.rowTracking mark. These are recomputed when a
// lost race moves the commit to a later version. Retries up to 100 times. After a commit whose
// version is a multiple of delta.checkpointInterval, writes a checkpoint and
// runs expired log cleanup (checkpoint_writer.h, log_cleanup.h); their
// failures are logged, never returned: the commit itself succeeded.
// Errors: Conflict describing what conflicted; NotSupported when the
// protocol write gate (protocol.h) refuses the table; InvalidArgument, before
// anything is written, when the actions would not serialize to valid UTF-8
// (a commit file readers refuse would end the table); IOError.
Result<CommitResult> Commit(DeltaTable* table, const SnapshotPtr& read_snapshot,
                            const CommitRequest& request);

// As Commit on top of `*snapshot` (null for a new table), for a writer that
// keeps the table's state from one commit to the next (a streaming sink):
// when the commit lands right after `*snapshot` (nobody committed in
// between), `*snapshot` becomes the state at the new version, built in
// memory from the old state plus the commit just written (DeltaTable::
// ApplyCommit: no log read, and no copy of the file lists when `*snapshot`
// was the only reference), and the checkpoint due at that version is
// written from it. Otherwise (another writer got in first, or a duplicate)
// `*snapshot` is left as the read state; the caller catches up with
// DeltaTable::Update. On an error `*snapshot` is null: re-read the table.
// With DeltaTable::set_elide_checkpointed_files, `*snapshot` drops the files
// of the V2 checkpoint (or incremental classic one) written at the new
// version (Snapshot::files_elided);
// it is null when it could not move on in memory (a remove applied to such
// a state) or a due checkpoint of such a state failed: re-read the table.
Result<CommitResult> CommitAndAdvance(DeltaTable* table, SnapshotPtr* snapshot,
                                      const CommitRequest& request);

struct ScanOptions {
  // Columns to return (empty = all, table order).
  std::vector<std::string> columns;
  // Pruning only (columnar/predicate.h, conservative): files whose
  // partition values or add.stats (data_skipping.h) rule the conjunction
  // out are not read, nor row groups (or pages) that the Parquet statistics
  // rule out. Rows that do not satisfy it may still be returned; callers
  // filter with the full expression.
  columnar::Conjunction predicate;
  // Adds a last column `_metadata` (RowMetadataType) holding each row's
  // stable row id and row commit version (PROTOCOL.md "Row Tracking": the
  // materialized value when the file has one, else the add's baseRowId +
  // the row's index in the file, resp. its defaultRowCommitVersion), as
  // Spark's _metadata.row_id / _metadata.row_commit_version. Make fails
  // with InvalidArgument when the table does not have row tracking enabled.
  bool row_tracking = false;
};

// The hidden column of ScanOptions::row_tracking.
inline constexpr std::string_view kRowMetadataColumn = "_metadata";
// struct<row_id: long not null, row_commit_version: long not null>
columnar::TypePtr RowMetadataType();

// What a scan pruned, for `silt read --explain`. File counts are final once
// Make returns; row-group counts grow as files are opened.
struct ScanMetrics {
  int64_t files_total = 0;
  int64_t files_skipped_by_partition = 0;
  int64_t files_skipped_by_stats = 0;
  int64_t row_groups_total = 0;  // in the files opened so far
  int64_t row_groups_skipped = 0;
};

// Scans a snapshot into batches: reads each live data file, projects the
// requested columns (empty = all, table order), adds partition columns
// parsed to their types, and fills columns (and struct fields) missing from
// a file with nulls. Under column mapping, columns and their nested fields
// are found by physical name (mode name) or Parquet field id (mode id; a
// file without any field ids is Corruption) and returned under their
// logical names. Values a file holds in the type before a type widening
// (integral to wider integral, to double or decimal; float to double;
// decimal to wider decimal; date to timestamp_ntz) are cast to the table
// type, at any depth; any other type difference is NotSupported naming the
// column path and the file. Batches always carry the table's types.
class TableScan {
 public:
  static Result<std::unique_ptr<TableScan>> Make(fs::FileSystemPtr fs, std::string table_path,
                                                 SnapshotPtr snapshot,
                                                 std::vector<std::string> columns = {});
  // As above, with pruning by `options.predicate`.
  static Result<std::unique_ptr<TableScan>> Make(fs::FileSystemPtr fs, std::string table_path,
                                                 SnapshotPtr snapshot, ScanOptions options);
  virtual ~TableScan() = default;
  // The output schema.
  virtual const columnar::SchemaPtr& schema() const = 0;
  // Next batch, or null at the end.
  virtual Result<columnar::RecordBatchPtr> Next() = 0;
  virtual const ScanMetrics& metrics() const {
    static const ScanMetrics kNone;
    return kNone;
  }
};

}  // namespace silt::delta
