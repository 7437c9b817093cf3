// StateStore on a local RocksDB working copy. Uncommitted changes of the
// current batch live in a WriteBatchWithIndex (read-your-writes through
// GetFromBatchAndDB / NewIteratorWithBase; Abort clears it); Commit writes
// the files first and only then applies the batch to RocksDB, so the working
// copy never runs ahead of the checkpoint. RocksDB's WAL is off: a lost
// working copy is rebuilt from the files.
#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/iterator.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/write_batch_with_index.h>
#include <rocksdb/write_batch.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <utility>
#include <vector>

#include "silt/base/logging.h"
#include "silt/state/state_dir.h"
#include "silt/state/state_file.h"
#include "silt/state/state_store.h"

namespace silt::state {

namespace {

// Replaying a file into RocksDB writes batches of about this many bytes.
constexpr size_t kApplyBatchBytes = 4 << 20;
// Scan copies this much ahead before calling back, so that the callback may
// write to the store while no iterator is open.
constexpr size_t kScanChunkRows = 512;
constexpr size_t kScanChunkBytes = 1 << 20;

Status FromRocks(const rocksdb::Status& s, std::string_view what, const std::string& where) {
  if (s.ok()) return Status::OK();
  return Status::IOError("state store working copy ", where, ": ", what, ": ", s.ToString());
}

std::string_view View(const rocksdb::Slice& s) { return std::string_view(s.data(), s.size()); }
rocksdb::Slice Rocks(std::string_view s) { return rocksdb::Slice(s.data(), s.size()); }

int64_t ElapsedMs(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               start)
      .count();
}

class RocksDbStateStore final : public StateStore {
 public:
  explicit RocksDbStateStore(StateStoreOptions options)
      : options_(std::move(options)),
        batch_(rocksdb::BytewiseComparator(), 0, /*overwrite_key=*/true) {
    write_options_.disableWAL = true;
  }

  ~RocksDbStateStore() override {
    batch_.Clear();
    CloseDb();
    if (remove_working_dir_) {
      std::error_code ec;
      std::filesystem::remove_all(working_dir_, ec);
      if (ec) {
        Log(LogLevel::kWarn, "state", "cannot remove state working dir ", working_dir_, ": ",
            ec.message());
      }
    }
  }

  Status Init() {
    if (options_.working_dir.empty()) {
      const char* base = std::getenv("TMPDIR");
      std::string tmpl = std::string(base && *base ? base : "/tmp") + "/silt-state-XXXXXX";
      if (mkdtemp(tmpl.data()) == nullptr) {
        return Status::IOError("cannot create a state working dir ", tmpl, ": ",
                               std::strerror(errno));
      }
      working_dir_ = tmpl;
      remove_working_dir_ = true;
    } else {
      working_dir_ = options_.working_dir;
      std::error_code ec;
      std::filesystem::create_directories(working_dir_, ec);
      if (ec) {
        return Status::IOError("cannot create state working dir ", working_dir_, ": ",
                               ec.message());
      }
    }
    cache_ = rocksdb::NewLRUCache(static_cast<size_t>(options_.block_cache_bytes));
    rocksdb::BlockBasedTableOptions table;
    table.block_cache = cache_;
    // Index and filter blocks count against the cache instead of growing
    // outside it with the number of files.
    table.cache_index_and_filter_blocks = true;
    table.pin_l0_filter_and_index_blocks_in_cache = true;
    // Every Put and Delete looks its key up first (row counts), mostly misses.
    table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
    db_options_.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
    db_options_.create_if_missing = true;
    db_options_.write_buffer_size = static_cast<size_t>(options_.write_buffer_bytes);
    db_options_.max_write_buffer_number = options_.max_write_buffers;
    db_options_.compression = rocksdb::kLZ4Compression;
    // The working copy is a cache of the checkpoint files: nothing to save
    // at shutdown, and its log is for debugging only.
    db_options_.avoid_flush_during_shutdown = true;
    db_options_.info_log_level = rocksdb::WARN_LEVEL;
    db_options_.keep_log_file_num = 2;
    db_options_.max_log_file_size = 1 << 20;
    SILT_RETURN_NOT_OK(ResetDb());
    SILT_ASSIGN_OR_RETURN(StateDir listing, StateDir::List(fs(), options_.dir));
    known_snapshots_ = std::move(listing.snapshots);
    return Status::OK();
  }

  Status Load(int64_t version) override {
    if (version < 0) return Status::InvalidArgument("state version ", version, " < 0");
    Discard();
    ResetBatchCounts();
    if (db_trusted_ && version_ == version) return Status::OK();
    Status st = Rebuild(version);
    if (!st.ok()) {
      version_ = -1;
      db_trusted_ = false;
    }
    return st;
  }

  int64_t version() const override { return version_; }

  Result<std::optional<std::string>> Get(std::string_view key) override {
    SILT_RETURN_NOT_OK(RequireVersion());
    std::string value;
    rocksdb::Status s = batch_.GetFromBatchAndDB(db_, read_options_, Rocks(key), &value);
    if (s.IsNotFound()) return std::optional<std::string>();
    SILT_RETURN_NOT_OK(FromRocks(s, "get", working_dir_));
    return std::optional<std::string>(std::move(value));
  }

  Status Put(std::string_view key, std::string_view value) override {
    SILT_RETURN_NOT_OK(RequireVersion());
    BeginBatchCounts();
    rocksdb::PinnableSlice old;
    rocksdb::Status s = batch_.GetFromBatchAndDB(db_, read_options_, Rocks(key), &old);
    int64_t rows = 0;
    int64_t bytes = 0;
    if (s.ok()) {
      bytes = static_cast<int64_t>(value.size()) - static_cast<int64_t>(old.size());
    } else if (s.IsNotFound()) {
      rows = 1;
      bytes = static_cast<int64_t>(key.size() + value.size());
    } else {
      return FromRocks(s, "get", working_dir_);
    }
    SILT_RETURN_NOT_OK(FromRocks(batch_.Put(Rocks(key), Rocks(value)), "put", working_dir_));
    rows_delta_ += rows;
    bytes_delta_ += bytes;
    ++num_updated_;
    return Status::OK();
  }

  Status Delete(std::string_view key) override {
    SILT_RETURN_NOT_OK(RequireVersion());
    BeginBatchCounts();
    rocksdb::PinnableSlice old;
    rocksdb::Status s = batch_.GetFromBatchAndDB(db_, read_options_, Rocks(key), &old);
    if (s.IsNotFound()) {
      ++num_removed_;
      return Status::OK();  // nothing to delete, nothing to log
    }
    SILT_RETURN_NOT_OK(FromRocks(s, "get", working_dir_));
    const int64_t bytes = static_cast<int64_t>(key.size() + old.size());
    SILT_RETURN_NOT_OK(FromRocks(batch_.Delete(Rocks(key)), "delete", working_dir_));
    rows_delta_ -= 1;
    bytes_delta_ -= bytes;
    ++num_removed_;
    return Status::OK();
  }

  Status Scan(std::string_view start, std::string_view end,
              const std::function<Result<bool>(std::string_view, std::string_view)>& fn) override {
    SILT_RETURN_NOT_OK(RequireVersion());
    std::string cursor(start);
    std::vector<std::pair<std::string, std::string>> chunk;
    while (true) {
      size_t rows = 0;
      size_t bytes = 0;
      bool exhausted = false;
      {
        std::unique_ptr<rocksdb::Iterator> it(
            batch_.NewIteratorWithBase(db_->NewIterator(read_options_)));
        for (it->Seek(Rocks(cursor));; it->Next()) {
          if (!it->Valid()) {
            SILT_RETURN_NOT_OK(FromRocks(it->status(), "scan", working_dir_));
            exhausted = true;
            break;
          }
          const std::string_view key = View(it->key());
          if (!end.empty() && key >= end) {
            exhausted = true;
            break;
          }
          if (rows == kScanChunkRows || bytes >= kScanChunkBytes) break;
          if (rows == chunk.size()) chunk.emplace_back();
          chunk[rows].first.assign(key);
          chunk[rows].second.assign(View(it->value()));
          bytes += key.size() + it->value().size();
          ++rows;
        }
      }
      for (size_t row_idx = 0; row_idx < rows; ++row_idx) {
        SILT_ASSIGN_OR_RETURN(bool more, fn(chunk[row_idx].first, chunk[row_idx].second));
        if (!more) return Status::OK();
      }
      if (exhausted) return Status::OK();
      // The smallest key after the last one visited.
      cursor = chunk[rows - 1].first;
      cursor.push_back('\0');
    }
  }

  Result<int64_t> Commit() override {
    SILT_RETURN_NOT_OK(RequireVersion());
    const auto start = std::chrono::steady_clock::now();
    const int64_t version = version_ + 1;
    // The batch's net change per key: the write batch itself holds every
    // overwritten value too, which a hot key (an aggregate updated per row)
    // multiplies.
    rocksdb::WriteBatch net;
    Status st = WriteFiles(version, &net);
    bool applied_in_part = false;
    if (st.ok()) {
      db_empty_ = false;
      st = FromRocks(db_->Write(write_options_, &net), "apply", working_dir_);
      applied_in_part = !st.ok();
    }
    if (!st.ok()) {
      Discard();
      if (applied_in_part) {
        // The working copy may hold part of the batch: back to the old
        // version from the files (which reach it, as they reach `version`).
        const int64_t old_version = version_;
        db_trusted_ = false;
        Status rebuilt = Rebuild(old_version);
        if (!rebuilt.ok()) {
          version_ = -1;
          Log(LogLevel::kWarn, "state", "cannot restore state version ", old_version, " of ",
              options_.dir, " after a failed commit: ", rebuilt.ToString());
        }
      }
      commit_ms_ = ElapsedMs(start);
      return st.WithContextParts("committing state version ", version, " of ", options_.dir);
    }
    commit_ms_ = ElapsedMs(start);
    rows_ += rows_delta_;
    bytes_ += bytes_delta_;
    Discard();
    version_ = version;
    counts_from_commit_ = true;
    return version;
  }

  void Abort() override {
    Discard();
    ResetBatchCounts();
  }

  StateStoreMetrics metrics() const override {
    StateStoreMetrics m;
    m.version = version_;
    m.num_rows = rows_ + rows_delta_;
    m.key_value_bytes = bytes_ + bytes_delta_;
    uint64_t memory = cache_ ? cache_->GetUsage() : 0;
    if (db_ != nullptr) {
      uint64_t value = 0;
      if (db_->GetIntProperty("rocksdb.cur-size-all-mem-tables", &value)) memory += value;
      if (db_->GetIntProperty("rocksdb.estimate-table-readers-mem", &value)) memory += value;
    }
    memory += batch_.GetDataSize();
    m.memory_bytes = static_cast<int64_t>(memory);
    m.num_updated = num_updated_;
    m.num_removed = num_removed_;
    m.commit_ms = commit_ms_;
    return m;
  }

  Status Purge(int64_t min_version) override {
    SILT_ASSIGN_OR_RETURN(StateDir listing, StateDir::List(fs(), options_.dir));
    std::vector<std::string> paths = listing.Purgeable(min_version);
    known_snapshots_ = listing.snapshots;
    if (paths.empty()) return Status::OK();
    SILT_RETURN_NOT_OK_CTX(fs()->DeleteFiles(paths), "purging state files of ", options_.dir,
                           " below version ", min_version);
    for (const std::string& path : paths) {
      auto parsed = ParseStateFileName(fs::BaseName(path));
      if (parsed && parsed->kind == StateFileKind::kSnapshot)
        known_snapshots_.erase(parsed->version);
    }
    return Status::OK();
  }

 private:
  fs::FileSystem* fs() const { return options_.file_system.get(); }

  Status RequireVersion() const {
    if (version_ < 0) {
      return Status::InvalidArgument("state store of ", options_.dir,
                                     " holds no version: the last Load failed");
    }
    return Status::OK();
  }

  void Discard() {
    batch_.Clear();
    rows_delta_ = 0;
    bytes_delta_ = 0;
  }
  void ResetBatchCounts() {
    num_updated_ = 0;
    num_removed_ = 0;
    counts_from_commit_ = false;
  }
  // The first change after a Commit starts the next batch's counts.
  void BeginBatchCounts() {
    if (counts_from_commit_) ResetBatchCounts();
  }

  void CloseDb() {
    if (db_ == nullptr) return;
    db_->Close().PermitUncheckedError();
    delete db_;
    db_ = nullptr;
  }

  // An empty working copy.
  Status ResetDb() {
    CloseDb();
    db_empty_ = false;
    SILT_RETURN_NOT_OK(
        FromRocks(rocksdb::DestroyDB(working_dir_, db_options_), "destroy", working_dir_));
    SILT_RETURN_NOT_OK(
        FromRocks(rocksdb::DB::Open(db_options_, working_dir_, &db_), "open", working_dir_));
    db_empty_ = true;
    return Status::OK();
  }

  Status Rebuild(int64_t version) {
    SILT_ASSIGN_OR_RETURN(StateDir listing, StateDir::List(fs(), options_.dir));
    known_snapshots_ = listing.snapshots;
    const int64_t held = db_trusted_ ? version_ : -1;
    SILT_ASSIGN_OR_RETURN(LoadPlan plan, listing.Plan(version, held));
    const bool reuse = held >= 0 && plan.base == held && !plan.from_snapshot;
    db_trusted_ = false;
    if (!reuse) {
      if (!db_empty_) SILT_RETURN_NOT_OK(ResetDb());
      rows_ = 0;
      bytes_ = 0;
      if (plan.from_snapshot) {
        SILT_ASSIGN_OR_RETURN(StateFileStats stats,
                              Apply(listing.Path(plan.base, StateFileKind::kSnapshot),
                                    StateFileKind::kSnapshot, plan.base, version));
        if (stats.record_count != stats.num_rows) {
          return Status::Corruption("state file ",
                                    listing.Path(plan.base, StateFileKind::kSnapshot), ": holds ",
                                    stats.record_count, " rows, its trailer says ", stats.num_rows);
        }
        rows_ = stats.num_rows;
        bytes_ = stats.key_value_bytes;
      }
    }
    for (int64_t v : plan.changelogs) {
      SILT_ASSIGN_OR_RETURN(StateFileStats stats, Apply(listing.Path(v, StateFileKind::kChangelog),
                                                        StateFileKind::kChangelog, v, version));
      rows_ = stats.num_rows;
      bytes_ = stats.key_value_bytes;
    }
    version_ = version;
    db_trusted_ = true;
    return Status::OK();
  }

  // Replays the file of `version` into the working copy, on the way to
  // `target`.
  Result<StateFileStats> Apply(const std::string& path, StateFileKind kind, int64_t version,
                               int64_t target) {
    auto opened = StateFileReader::Open(fs(), path, kind, version);
    if (opened.status().IsNotFound()) {
      return Status::Corruption("state file ", path, " is missing (needed to rebuild version ",
                                target, ")");
    }
    SILT_ASSIGN_OR_RETURN(auto reader, std::move(opened));
    rocksdb::WriteBatch batch;
    db_empty_ = false;
    while (true) {
      SILT_ASSIGN_OR_RETURN(bool more, reader->Next());
      if (!more) break;
      rocksdb::Status s = reader->op() == RecordOp::kPut
                              ? batch.Put(Rocks(reader->key()), Rocks(reader->value()))
                              : batch.Delete(Rocks(reader->key()));
      SILT_RETURN_NOT_OK(FromRocks(s, "replay", working_dir_));
      if (batch.GetDataSize() >= kApplyBatchBytes) {
        SILT_RETURN_NOT_OK(FromRocks(db_->Write(write_options_, &batch), "replay", working_dir_));
        batch.Clear();
      }
    }
    SILT_RETURN_NOT_OK(FromRocks(db_->Write(write_options_, &batch), "replay", working_dir_));
    return reader->stats();
  }

  // Writes the files of `version` and collects the changes in `net`.
  Status WriteFiles(int64_t version, rocksdb::WriteBatch* net) {
    const std::string snapshot_path =
        fs::JoinPath(options_.dir, StateFileName(version, StateFileKind::kSnapshot));
    // A snapshot of an earlier attempt at this version must not outlive the
    // changelog this attempt writes: the two could disagree.
    if (known_snapshots_.count(version) > 0) {
      Status st = fs()->DeleteFile(snapshot_path);
      if (!st.ok() && !st.IsNotFound()) return st;
      known_snapshots_.erase(version);
    }
    {
      SILT_ASSIGN_OR_RETURN(
          auto writer,
          StateFileWriter::Open(
              fs(), fs::JoinPath(options_.dir, StateFileName(version, StateFileKind::kChangelog)),
              StateFileKind::kChangelog, version));
      std::unique_ptr<rocksdb::WBWIIterator> it(batch_.NewIterator());
      for (it->SeekToFirst(); it->Valid(); it->Next()) {
        const rocksdb::WriteEntry entry = it->Entry();
        if (entry.type == rocksdb::kPutRecord) {
          SILT_RETURN_NOT_OK(writer->Add(RecordOp::kPut, View(entry.key), View(entry.value)));
          SILT_RETURN_NOT_OK(FromRocks(net->Put(entry.key, entry.value), "commit", working_dir_));
        } else if (entry.type == rocksdb::kDeleteRecord) {
          SILT_RETURN_NOT_OK(writer->Add(RecordOp::kDelete, View(entry.key), {}));
          SILT_RETURN_NOT_OK(FromRocks(net->Delete(entry.key), "commit", working_dir_));
        } else {
          return Status::Internal("state store: unexpected write batch entry type ",
                                  static_cast<int>(entry.type));
        }
      }
      SILT_RETURN_NOT_OK(FromRocks(it->status(), "changelog", working_dir_));
      SILT_RETURN_NOT_OK(writer->Finish(rows_ + rows_delta_, bytes_ + bytes_delta_));
    }
    if (version % options_.snapshot_interval != 0) return Status::OK();
    SILT_ASSIGN_OR_RETURN(
        auto writer, StateFileWriter::Open(fs(), snapshot_path, StateFileKind::kSnapshot, version));
    int64_t rows = 0;
    int64_t bytes = 0;
    {
      std::unique_ptr<rocksdb::Iterator> it(
          batch_.NewIteratorWithBase(db_->NewIterator(read_options_)));
      for (it->SeekToFirst(); it->Valid(); it->Next()) {
        SILT_RETURN_NOT_OK(writer->Add(RecordOp::kPut, View(it->key()), View(it->value())));
        ++rows;
        bytes += static_cast<int64_t>(it->key().size() + it->value().size());
      }
      SILT_RETURN_NOT_OK(FromRocks(it->status(), "snapshot", working_dir_));
    }
    SILT_RETURN_NOT_OK(writer->Finish(rows, bytes));
    if (rows != rows_ + rows_delta_ || bytes != bytes_ + bytes_delta_) {
      Log(LogLevel::kWarn, "state", "state version ", version, " of ", options_.dir, " has ", rows,
          " rows of ", bytes, " bytes, the store counted ", rows_ + rows_delta_, " of ",
          bytes_ + bytes_delta_, "; using the snapshot's counts");
      rows_delta_ = rows - rows_;
      bytes_delta_ = bytes - bytes_;
    }
    return Status::OK();
  }

  StateStoreOptions options_;
  std::string working_dir_;
  bool remove_working_dir_ = false;
  std::shared_ptr<rocksdb::Cache> cache_;
  rocksdb::Options db_options_;
  rocksdb::DB* db_ = nullptr;  // owned; closed and deleted by CloseDb
  rocksdb::WriteBatchWithIndex batch_;
  rocksdb::WriteOptions write_options_;
  rocksdb::ReadOptions read_options_;
  std::set<int64_t> known_snapshots_;  // in dir, as last listed or written

  int64_t version_ = 0;
  // False when the working copy may not match version_ (a failed Load or
  // local write): the next Load rebuilds it.
  bool db_trusted_ = true;
  // Nothing was written to the working copy since it was created: a
  // rebuild can start on it (Open followed by Load, the restart path).
  bool db_empty_ = false;
  int64_t rows_ = 0;  // of the committed version
  int64_t bytes_ = 0;
  int64_t rows_delta_ = 0;  // of the uncommitted changes
  int64_t bytes_delta_ = 0;
  int64_t num_updated_ = 0;
  int64_t num_removed_ = 0;
  bool counts_from_commit_ = false;
  int64_t commit_ms_ = 0;
};

}  // namespace

StateStore::~StateStore() = default;

Result<std::unique_ptr<StateStore>> StateStore::Open(StateStoreOptions options) {
  if (options.file_system == nullptr) {
    return Status::InvalidArgument("state store: no file system");
  }
  if (options.dir.empty()) return Status::InvalidArgument("state store: no dir");
  if (options.snapshot_interval < 1) {
    return Status::InvalidArgument("state store: snapshot_interval ", options.snapshot_interval,
                                   " < 1");
  }
  if (options.block_cache_bytes < 0 || options.write_buffer_bytes < 1 ||
      options.max_write_buffers < 1) {
    return Status::InvalidArgument("state store ", options.dir,
                                   ": block cache, write buffer sizes and count must be positive");
  }
  auto store = std::make_unique<RocksDbStateStore>(std::move(options));
  SILT_RETURN_NOT_OK(store->Init());
  return std::unique_ptr<StateStore>(std::move(store));
}

}  // namespace silt::state
