// StateStore: the versioned key-value state of one stateful operator's
// partition, modelled on Spark's RocksDB state store with changelog
// checkpointing.
//
// The working state lives in a local RocksDB (the "working copy"); it is a
// cache. Durability comes from files in the checkpoint directory, written
// through fs::FileSystem (local, S3 or memory): one `<v>.changelog` per
// committed version and a `<v>.snapshot` of all rows every
// `snapshot_interval` versions. Any version is rebuilt from the newest
// snapshot at or below it plus the changelogs after that snapshot. The file
// layout and byte format are specified in docs/format/state-store.md.
//
// Versions: version 0 is the empty state. Batch N calls Load(N), reads and
// writes, then Commit() makes version N+1 (as in Spark). A batch that is
// re-run after a crash loads the same N and commits N+1 again, replacing
// the files of the first attempt.
//
// Keys and values are opaque bytes; keys are ordered by memcmp.
//
// Thread safety: a StateStore is used by one thread at a time (it is not
// internally synchronized). Distinct stores (distinct `dir` and working
// dir) are independent and may be used from distinct threads.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "silt/base/result.h"
#include "silt/fs/file_system.h"

namespace silt::state {

struct StateStoreOptions {
  fs::FileSystemPtr file_system;  // the checkpoint's file system
  std::string dir;                // <checkpoint>/state/<operatorId>/<partitionId>
  // Local directory for the RocksDB working copy; its RocksDB contents are
  // discarded at Open. Empty: a fresh temporary directory under $TMPDIR (or
  // /tmp), removed when the store is destroyed.
  std::string working_dir;
  int64_t snapshot_interval =
      10;  // a snapshot file every K versions (Spark's minDeltasForSnapshot)
  int64_t block_cache_bytes = 8LL << 20;  // Spark's rocksdb.blockCacheSizeMB default 8
  int64_t write_buffer_bytes = 16LL << 20;
  int max_write_buffers = 2;
};

struct StateStoreMetrics {
  int64_t version = 0;
  int64_t num_rows = 0;         // keys in the committed+uncommitted state
  int64_t key_value_bytes = 0;  // sum of key and value sizes of those keys
  // RocksDB's block cache (index and filter blocks included) + memtables +
  // table readers, plus the buffered uncommitted changes.
  int64_t memory_bytes = 0;
  // Put and Delete calls of the current batch: reset by Load, Abort and the
  // first Put/Delete after a Commit, so that after Commit they describe the
  // batch just committed.
  int64_t num_updated = 0;
  int64_t num_removed = 0;
  int64_t commit_ms = 0;  // time of the last Commit (file upload included)
};

class StateStore {
 public:
  // Opens a store holding version 0 (empty) and lists `dir` once (no file is
  // read). Errors: InvalidArgument for missing options (file_system, dir,
  // snapshot_interval < 1); IOError when the working copy cannot be created
  // or `dir` cannot be listed.
  static Result<std::unique_ptr<StateStore>> Open(StateStoreOptions options);
  virtual ~StateStore();

  // Holds committed version `version` afterwards: the state after batches
  // 0..version-1. A no-op when the store holds it already (the next-batch
  // path); when the store holds an older version it replays the changelogs
  // after it, otherwise it rebuilds the working copy from the newest snapshot
  // <= version plus the changelogs after it. Discards uncommitted changes.
  // Errors: InvalidArgument for version < 0; NotFound when no file of
  // `version` exists; Corruption naming the file for a missing or damaged
  // file that is needed. After an error the store holds no version
  // (version() is -1) until a Load succeeds.
  virtual Status Load(int64_t version) = 0;
  // The committed version held; -1 after a failed Load.
  virtual int64_t version() const = 0;

  // Reads see the uncommitted changes of the current batch.
  // REQUIRES (all three, and Scan and Commit): version() >= 0, else
  // InvalidArgument.
  virtual Result<std::optional<std::string>> Get(std::string_view key) = 0;
  virtual Status Put(std::string_view key, std::string_view value) = 0;
  virtual Status Delete(std::string_view key) = 0;

  // Calls `fn` for the keys in [start, end) in byte order (memcmp),
  // uncommitted changes included; an empty `end` means no upper bound. `fn`
  // returns false to stop early, or an error to abort the scan with it.
  // `fn` may call Get, Put and Delete on this store, on any key: changes to
  // the key just visited or to keys already visited are safe (eviction
  // deletes as it scans). The scan reads ahead in chunks, so whether it sees
  // a change `fn` makes to a key it has not reached yet is unspecified.
  virtual Status Scan(
      std::string_view start, std::string_view end,
      const std::function<Result<bool>(std::string_view key, std::string_view value)>& fn) = 0;

  // Makes version()+1 durable: writes <v>.changelog (and <v>.snapshot when
  // v % snapshot_interval == 0) to `dir` so that a crash after Commit returns
  // cannot lose it, then applies the changes locally. Returns the new
  // version. Committing the same version again (a batch re-run after a
  // crash) replaces the files. Errors (IOError from the file system, ...)
  // leave the store at the old version with the changes discarded.
  virtual Result<int64_t> Commit() = 0;
  // Discards uncommitted changes.
  virtual void Abort() = 0;

  virtual StateStoreMetrics metrics() const = 0;

  // Deletes the files no longer needed to load any version >= min_version:
  // the snapshots older than the newest snapshot <= min_version and the
  // changelogs at or below it. Keeps everything when no snapshot <=
  // min_version exists. (Spark keeps minBatchesToRetain = 100 versions.)
  virtual Status Purge(int64_t min_version) = 0;
};

// Read-only access for `silt state` / `silt checkpoint`: no RocksDB, no
// working dir.

// The versions >= 1 that the files in `dir` can rebuild (by file names; the
// contents are not read), ascending. Version 0, the empty state, is always
// loadable and not listed. A missing `dir` gives an empty list.
Result<std::vector<int64_t>> ListStateVersions(const fs::FileSystemPtr& fs, const std::string& dir);

// Calls `fn` for every row of `version` in key order, merging the newest
// snapshot <= version with the changelogs after it while streaming them
// (memory stays bounded by a buffer per file). Errors as Load's, and
// Corruption when the rows do not add up to the row count the last file
// records; an error from `fn` ends the read with it.
Status ReadStateVersion(
    const fs::FileSystemPtr& fs, const std::string& dir, int64_t version,
    const std::function<Status(std::string_view key, std::string_view value)>& fn);

}  // namespace silt::state
