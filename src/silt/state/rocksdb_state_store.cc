// StateStore on a local RocksDB working copy. The uncommitted changes of the
// current batch live in an ordered in-memory overlay over the committed rows
// (reads consult it first; Abort clears it). Commit writes the files first
// and only then applies the overlay to RocksDB, so the working copy never
// runs ahead of the checkpoint. RocksDB's WAL is off: a lost working copy is
// rebuilt from the files.
//
// The overlay is a std::map rather than RocksDB's WriteBatchWithIndex: that
// index decodes both keys from its write batch on every comparison and keeps
// every overwritten value, which made a Put about ten times dearer.
#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/iterator.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "silt/base/logging.h"
#include "silt/state/state_dir.h"
#include "silt/state/state_file.h"
#include "silt/state/state_store.h"

namespace silt::state {

namespace {

// Temporary working copies are named silt-state-<pid>-XXXXXX: a process
// killed with SIGKILL cannot remove its own, so each new store removes those
// whose process is gone (a working copy is only a cache of checkpoint files).
constexpr const char* kWorkingDirPrefix = "silt-state-";

void RemoveWorkingDirsOfDeadProcesses(const std::string& base) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(base, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(kWorkingDirPrefix, 0) != 0) continue;
    const std::string rest = name.substr(std::strlen(kWorkingDirPrefix));
    const size_t dash = rest.find('-');
    if (dash == std::string::npos || dash == 0) continue;
    char* end = nullptr;
    const long pid = std::strtol(rest.c_str(), &end, 10);
    if (end != rest.c_str() + dash || pid <= 0) continue;
    if (kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    std::error_code remove_ec;
    std::filesystem::remove_all(entry.path(), remove_ec);
  }
}

// Replaying a file into RocksDB writes batches of about this many bytes.
constexpr size_t kApplyBatchBytes = 4 << 20;
// Scan copies this much ahead before calling back, so that the callback may
// write to the store while no iterator is open.
constexpr size_t kScanChunkRows = 512;
constexpr size_t kScanChunkBytes = 1 << 20;
// What an overlay entry costs beyond its key and value bytes (map node,
// string and optional headers), for the memory metric.
constexpr int64_t kOverlayEntryBytes = 112;

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
  explicit RocksDbStateStore(StateStoreOptions options) : options_(std::move(options)) {
    write_options_.disableWAL = true;
  }

  ~RocksDbStateStore() override {
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
      const char* env = std::getenv("TMPDIR");
      const std::string base = env && *env ? env : "/tmp";
      RemoveWorkingDirsOfDeadProcesses(base);
      std::string tmpl = base + "/" + kWorkingDirPrefix +
                         std::to_string(static_cast<int64_t>(getpid())) + "-XXXXXX";
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
    auto it = overlay_.find(key);
    if (it != overlay_.end()) return it->second;
    rocksdb::PinnableSlice value;
    SILT_ASSIGN_OR_RETURN(bool found, GetCommitted(key, &value));
    if (!found) return std::optional<std::string>();
    return std::optional<std::string>(value.ToString());
  }

  Status Put(std::string_view key, std::string_view value) override {
    SILT_RETURN_NOT_OK(RequireVersion());
    BeginBatchCounts();
    const auto value_size = static_cast<int64_t>(value.size());
    auto it = overlay_.lower_bound(key);
    if (it != overlay_.end() && it->first == key) {
      if (it->second) {
        const auto old_size = static_cast<int64_t>(it->second->size());
        bytes_delta_ += value_size - old_size;
        overlay_bytes_ += value_size - old_size;
        it->second->assign(value);
      } else {
        rows_delta_ += 1;
        bytes_delta_ += static_cast<int64_t>(key.size()) + value_size;
        overlay_bytes_ += value_size;
        it->second.emplace(value);
      }
    } else {
      rocksdb::PinnableSlice old;
      SILT_ASSIGN_OR_RETURN(bool found, GetCommitted(key, &old));
      if (found) {
        bytes_delta_ += value_size - static_cast<int64_t>(old.size());
      } else {
        rows_delta_ += 1;
        bytes_delta_ += static_cast<int64_t>(key.size()) + value_size;
      }
      overlay_.emplace_hint(it, std::string(key), std::string(value));
      overlay_bytes_ += static_cast<int64_t>(key.size()) + value_size + kOverlayEntryBytes;
    }
    ++num_updated_;
    return Status::OK();
  }

  Status Delete(std::string_view key) override {
    SILT_RETURN_NOT_OK(RequireVersion());
    BeginBatchCounts();
    ++num_removed_;
    auto it = overlay_.lower_bound(key);
    if (it != overlay_.end() && it->first == key) {
      if (!it->second) return Status::OK();  // deleted already
      const auto old_size = static_cast<int64_t>(it->second->size());
      rows_delta_ -= 1;
      bytes_delta_ -= static_cast<int64_t>(key.size()) + old_size;
      overlay_bytes_ -= old_size;
      // Kept as a delete: the key may be committed (if not, the changelog
      // holds a harmless delete of an absent key).
      it->second.reset();
      return Status::OK();
    }
    rocksdb::PinnableSlice old;
    SILT_ASSIGN_OR_RETURN(bool found, GetCommitted(key, &old));
    if (!found) return Status::OK();  // nothing to delete, nothing to log
    rows_delta_ -= 1;
    bytes_delta_ -= static_cast<int64_t>(key.size() + old.size());
    overlay_.emplace_hint(it, std::string(key), std::nullopt);
    overlay_bytes_ += static_cast<int64_t>(key.size()) + kOverlayEntryBytes;
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
      bool full = false;
      SILT_RETURN_NOT_OK(ForEachRow(cursor, end, [&](std::string_view key, std::string_view value) {
        if (rows == chunk.size()) chunk.emplace_back();
        chunk[rows].first.assign(key);
        chunk[rows].second.assign(value);
        bytes += key.size() + value.size();
        ++rows;
        full = rows == kScanChunkRows || bytes >= kScanChunkBytes;
        return Result<bool>(!full);
      }));
      for (size_t row_idx = 0; row_idx < rows; ++row_idx) {
        SILT_ASSIGN_OR_RETURN(bool more, fn(chunk[row_idx].first, chunk[row_idx].second));
        if (!more) return Status::OK();
      }
      if (!full) return Status::OK();
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
    memory += static_cast<uint64_t>(overlay_bytes_);
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

  // The committed value of `key`; false when there is none.
  Result<bool> GetCommitted(std::string_view key, rocksdb::PinnableSlice* value) {
    rocksdb::Status s = db_->Get(read_options_, db_->DefaultColumnFamily(), Rocks(key), value);
    if (s.IsNotFound()) return false;
    SILT_RETURN_NOT_OK(FromRocks(s, "get", working_dir_));
    return true;
  }

  // Calls fn(key, value) -> Result<bool> for the rows of the current state
  // (committed rows with the overlay on top) in [start, end) in key order,
  // until it returns false. fn must not change the store.
  template <typename Fn>
  Status ForEachRow(std::string_view start, std::string_view end, Fn&& fn) {
    std::unique_ptr<rocksdb::Iterator> db_it(db_->NewIterator(read_options_));
    db_it->Seek(Rocks(start));
    auto ov = overlay_.lower_bound(start);
    auto in_range = [&](std::string_view key) { return end.empty() || key < end; };
    while (true) {
      const bool db_ok = db_it->Valid() && in_range(View(db_it->key()));
      const bool ov_ok = ov != overlay_.end() && in_range(ov->first);
      if (!db_ok && !ov_ok) break;
      // < 0: a committed row alone; > 0: an overlay entry alone; 0: the
      // overlay entry replaces the committed row.
      const int cmp = !db_ok ? 1 : !ov_ok ? -1 : View(db_it->key()).compare(ov->first);
      if (cmp < 0) {
        SILT_ASSIGN_OR_RETURN(bool more, fn(View(db_it->key()), View(db_it->value())));
        if (!more) return Status::OK();
        db_it->Next();
        continue;
      }
      if (ov->second) {
        SILT_ASSIGN_OR_RETURN(bool more, fn(ov->first, *ov->second));
        if (!more) return Status::OK();
      }
      if (cmp == 0) db_it->Next();
      ++ov;
    }
    return FromRocks(db_it->status(), "scan", working_dir_);
  }

  void Discard() {
    overlay_.clear();
    overlay_bytes_ = 0;
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
      for (const auto& [key, value] : overlay_) {
        if (value) {
          SILT_RETURN_NOT_OK(writer->Add(RecordOp::kPut, key, *value));
          SILT_RETURN_NOT_OK(FromRocks(net->Put(key, *value), "commit", working_dir_));
        } else {
          SILT_RETURN_NOT_OK(writer->Add(RecordOp::kDelete, key, {}));
          SILT_RETURN_NOT_OK(FromRocks(net->Delete(key), "commit", working_dir_));
        }
      }
      SILT_RETURN_NOT_OK(writer->Finish(rows_ + rows_delta_, bytes_ + bytes_delta_));
    }
    if (version % options_.snapshot_interval != 0) return Status::OK();
    SILT_ASSIGN_OR_RETURN(
        auto writer, StateFileWriter::Open(fs(), snapshot_path, StateFileKind::kSnapshot, version));
    int64_t rows = 0;
    int64_t bytes = 0;
    SILT_RETURN_NOT_OK(
        ForEachRow("", "", [&](std::string_view key, std::string_view value) -> Result<bool> {
          SILT_RETURN_NOT_OK(writer->Add(RecordOp::kPut, key, value));
          ++rows;
          bytes += static_cast<int64_t>(key.size() + value.size());
          return Result<bool>(true);
        }));
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
  // The uncommitted changes in key order: a value, or nullopt for a delete.
  std::map<std::string, std::optional<std::string>, std::less<>> overlay_;
  int64_t overlay_bytes_ = 0;  // its keys and values plus kOverlayEntryBytes each
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
