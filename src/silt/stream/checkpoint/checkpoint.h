// The streaming checkpoint directory in Spark's layout:
//   metadata            {"id":"<query uuid>"}
//   offsets/<N>         "v1\n<batch metadata json>\n<source offset json>..."
//   commits/<N>         "v1\n{\"nextBatchWatermarkMs\":0}"
//   sources/<i>/...     source-specific (file source log)
// Files are created with FileSystem::PutIfAbsent (rename-without-overwrite),
// so a file is either absent or complete, and a second writer of the same
// batch loses with AlreadyExists instead of overwriting. commits/N is the
// exception to durability (decision 157): it is written unsynced, because
// the sink's own commit (the Delta txn) already records the batch and a
// lost commits/N only makes a restart re-run a batch the sink skips. After
// a crash of the machine a commits/N may be missing, empty or cut short;
// RecoverLatestCommit reads past such files.
//
// Byte formats (Spark's HDFSMetadataLog family, no trailing newline):
//   metadata   {"id":"<uuid>"}
//   offsets/N  v1\n{"batchWatermarkMs":W,"batchTimestampMs":T,"conf":{...}}\n<offset>...
//   commits/N  v1\n{"nextBatchWatermarkMs":W}
// Names that are not decimal batch ids (temp files, Hadoop .crc sidecars)
// are ignored when listing.
//
// Thread safety: single-threaded.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "silt/base/result.h"
#include "silt/fs/file_system.h"

namespace silt::stream {

// Spark's spark.sql.streaming.minBatchesToRetain default: offsets/ and
// commits/ keep the files of the last this-many batches.
inline constexpr int64_t kMinBatchesToRetain = 100;

// The `conf` map Spark 3.5 persists in every offsets/N, with its default
// values, in the order Spark writes them. Writing it lets Spark take the
// checkpoint over without falling back to legacy defaults.
const std::string& DefaultOffsetConfJson();

// The same map with the values the job sets (`spark.sql.*` keys of the job
// file) for the keys Spark persists; other keys are not recorded, as in
// Spark. Equal to DefaultOffsetConfJson() when the job sets none of them.
std::string OffsetConfJson(const std::map<std::string, std::string>& job_conf);

// True when `key` is one of the confs Spark persists in offsets/N.
bool IsOffsetConfKey(std::string_view key);

struct OffsetSeq {
  int64_t batch_id = 0;
  int64_t batch_watermark_ms = 0;
  int64_t batch_timestamp_ms = 0;
  std::string conf_json = "{}";
  // One JSON text per source (Spark: "-" for a source with no offset yet).
  std::vector<std::string> source_offsets;
};

struct CommitMark {
  int64_t batch_id = 0;
  int64_t next_batch_watermark_ms = 0;
};

struct BatchInfo {
  int64_t batch_id = 0;
  std::optional<OffsetSeq> offsets;
  std::optional<CommitMark> commit;
};

class CheckpointDir {
 public:
  static Result<std::unique_ptr<CheckpointDir>> Open(fs::FileSystemPtr fs, std::string path);
  const std::string& path() const { return path_; }

  // Reads `metadata`, creating it with a new UUID when absent.
  Result<std::string> GetOrCreateQueryId();
  // Creates `metadata` with `id` unless it exists; returns the id it holds
  // (another starter's when it won the race).
  Result<std::string> CreateQueryId(const std::string& id);
  // Reads `metadata`; NotFound when absent.
  Result<std::string> ReadQueryId();

  Result<std::optional<int64_t>> LatestOffsetBatch();
  Result<std::optional<int64_t>> LatestCommitBatch();
  Result<OffsetSeq> ReadOffsets(int64_t batch_id);
  Result<CommitMark> ReadCommit(int64_t batch_id);
  // The newest commits/N that reads back whole, nullopt when there is none.
  // Newer commits files that do not (empty or cut short by a crash of the
  // machine before they reached the disk, as commits/N is not synced) are
  // deleted, with a warning, as if never written: their batches re-run and
  // write them again. Only for the holder of the checkpoint. Errors: what
  // listing, reading or deleting reports; NotSupported for a newer log
  // version.
  Result<std::optional<CommitMark>> RecoverLatestCommit();
  // AlreadyExists when offsets/<N> exists.
  Status WriteOffsets(const OffsetSeq& seq);
  // commits/N, unsynced unless `durable` (decision 157). AlreadyExists when
  // it exists.
  Status WriteCommit(const CommitMark& mark, bool durable = false);
  // Every batch with an offsets or commits file, ascending.
  Result<std::vector<BatchInfo>> ListBatches();

  // Deletes the temp files that writes into the checkpoint left behind when
  // a run died mid-write (fs::FileSystem::ListOrphanedTemps), at any depth
  // (offsets/, commits/, sources/, state/). Only for the holder of the
  // checkpoint lock: no other writer can be mid-write. Returns how many.
  Result<int64_t> RemoveOrphanedTemps();

  // Deletes offsets/<id> and commits/<id> for every id < `threshold`, as
  // Spark's purge does after writing offsets/N with threshold
  // N - kMinBatchesToRetain. Files already gone are not an error. The first
  // call lists both directories; later calls delete only the ids between
  // the previous threshold and this one, so a running query does not list
  // its checkpoint every batch.
  Status Purge(int64_t threshold);

  // `<checkpoint>/sources/<index>`: the source's private metadata directory.
  std::string SourceDir(int source_index) const;
  // `<checkpoint>/state/<operator>/<partition>`: one stateful operator's
  // state store files (docs/format/state-store.md), as Spark lays them out.
  std::string StateDir(int operator_id, int partition_id) const;
  // `<checkpoint>/state/<operator>`.
  std::string StateOperatorDir(int operator_id) const;

  // Refuses state under `state/` that this query cannot continue, before
  // anything is written: an operator directory holding files but not silt's
  // step record `marker` (a path relative to the operator directory) was
  // written by another engine (Spark's state store: `state/0/0/1.delta`,
  // `1.snapshot`, its `_metadata/`) or by hand, and an operator id not in
  // `job_operators` belongs to a stateful step the job no longer has. Both
  // are InvalidArgument naming the directory and a file in it. Empty
  // operator directories and a missing `state/` are fine.
  Status CheckStateOperators(const std::vector<int>& job_operators, std::string_view marker);
  const fs::FileSystemPtr& file_system() const { return fs_; }

 private:
  CheckpointDir(fs::FileSystemPtr fs, std::string path)
      : fs_(std::move(fs)), path_(std::move(path)) {}
  fs::FileSystemPtr fs_;
  std::string path_;
  // Every id below this was purged by this object (-1: not yet listed).
  int64_t purged_below_ = -1;
};

std::string SerializeOffsetSeq(const OffsetSeq& seq);
// Parses offsets/N text (version 1). `source` names the file in errors.
// Errors: Corruption naming the source and line; NotSupported for a newer
// log version.
Result<OffsetSeq> ParseOffsetSeq(std::string_view text, int64_t batch_id, std::string_view source);

std::string SerializeCommitMark(const CommitMark& mark);
// Parses commits/N text (v1, or v2 whose extra state ids are ignored). A
// missing second line reads as nextBatchWatermarkMs 0, as in Spark.
Result<CommitMark> ParseCommitMark(std::string_view text, int64_t batch_id,
                                   std::string_view source);

}  // namespace silt::stream
