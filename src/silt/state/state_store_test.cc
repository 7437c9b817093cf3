#include "silt/state/state_store.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "silt/state/state_file.h"
#include "silt/testing/fault_injection_fs.h"
#include "silt/testing/gtest_util.h"
#include "silt/testing/temp_dir.h"

namespace silt::state {
namespace {

using Rows = std::map<std::string, std::string>;

// Runs every test against the in-memory and the local file system.
class StateStoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() {
    // RocksDB fsyncs as it creates a working copy, which takes tens of
    // milliseconds on a busy disk; tmpfs makes the many opens here cheap.
    // An explicit TMPDIR wins.
    if (std::filesystem::is_directory("/dev/shm")) setenv("TMPDIR", "/dev/shm", /*overwrite=*/0);
  }

  void SetUp() override {
    if (GetParam() == "local") {
      fs_ = fs::MakeLocalFileSystem();
      dir_ = temp_.path() + "/ckpt/state/0/3";
    } else {
      fs_ = fs::MakeMemoryFileSystem();
      dir_ = "memory://ckpt/state/0/3";
    }
  }

  StateStoreOptions Options(int64_t snapshot_interval = 10) {
    StateStoreOptions options;
    options.file_system = fs_;
    options.dir = dir_;
    options.snapshot_interval = snapshot_interval;
    return options;
  }

  std::unique_ptr<StateStore> OpenStore(int64_t snapshot_interval = 10) {
    auto store = StateStore::Open(Options(snapshot_interval));
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(store).MoveValueUnsafe() : nullptr;
  }

  static Rows Contents(StateStore* store, std::string_view start = "", std::string_view end = "") {
    Rows rows;
    std::string last;
    Status st = store->Scan(start, end, [&](std::string_view key, std::string_view value) {
      EXPECT_TRUE(rows.empty() || key > last) << "scan out of order at " << key;
      last.assign(key);
      rows.emplace(key, value);
      return Result<bool>(true);
    });
    EXPECT_TRUE(st.ok()) << st.ToString();
    return rows;
  }

  Result<Rows> FileContents(int64_t version) {
    Rows rows;
    SILT_RETURN_NOT_OK(
        ReadStateVersion(fs_, dir_, version, [&](std::string_view key, std::string_view value) {
          rows.emplace(key, value);
          return Status::OK();
        }));
    return rows;
  }

  std::string Path(int64_t version, StateFileKind kind) {
    return fs::JoinPath(dir_, StateFileName(version, kind));
  }
  bool Exists(int64_t version, StateFileKind kind) {
    auto exists = fs_->Exists(Path(version, kind));
    EXPECT_TRUE(exists.ok()) << exists.status().ToString();
    return exists.ok() && *exists;
  }

  // Applies batch `version` (deterministic in `seed`) to `model` and, unless
  // null, to the store.
  static void RunBatch(StateStore* store, Rows* model, int64_t version, uint32_t seed = 0) {
    std::mt19937 rng(static_cast<uint32_t>(version) * 7919 + seed);
    for (int i = 0; i < 50; ++i) {
      const std::string key = "k" + std::to_string(rng() % 200);
      if (rng() % 4 == 0) {
        if (store) ASSERT_OK(store->Delete(key));
        model->erase(key);
      } else {
        const std::string value = "v" + std::to_string(version) + "." + std::to_string(rng());
        if (store) ASSERT_OK(store->Put(key, value));
        (*model)[key] = value;
      }
    }
  }

  testing::TempDir temp_;
  fs::FileSystemPtr fs_;
  std::string dir_;
};

INSTANTIATE_TEST_SUITE_P(FileSystems, StateStoreTest, ::testing::Values("memory", "local"),
                         [](const auto& info) { return info.param; });

TEST_P(StateStoreTest, ReadsSeeUncommittedChanges) {
  auto store = OpenStore();
  ASSERT_OK(store->Load(0));
  EXPECT_EQ(store->version(), 0);
  ASSERT_OK_AND_ASSIGN(auto missing, store->Get("a"));
  EXPECT_FALSE(missing);
  ASSERT_OK(store->Put("b", "2"));
  ASSERT_OK(store->Put("a", "1"));
  ASSERT_OK(store->Put(std::string("a\0", 2), "zero"));
  ASSERT_OK(store->Put("c", "3"));
  ASSERT_OK(store->Put("b", "22"));
  ASSERT_OK(store->Delete("c"));
  ASSERT_OK(store->Delete("never"));
  ASSERT_OK_AND_ASSIGN(auto b, store->Get("b"));
  EXPECT_EQ(b, std::optional<std::string>("22"));
  ASSERT_OK_AND_ASSIGN(auto c, store->Get("c"));
  EXPECT_FALSE(c);
  EXPECT_EQ(Contents(store.get()),
            (Rows{{"a", "1"}, {std::string("a\0", 2), "zero"}, {"b", "22"}}));
  StateStoreMetrics m = store->metrics();
  EXPECT_EQ(m.num_rows, 3);
  EXPECT_EQ(m.key_value_bytes, 1 + 1 + 2 + 4 + 1 + 2);
  EXPECT_EQ(m.num_updated, 5);
  EXPECT_EQ(m.num_removed, 2);
  EXPECT_GT(m.memory_bytes, 0);

  ASSERT_OK_AND_ASSIGN(int64_t v1, store->Commit());
  EXPECT_EQ(v1, 1);
  EXPECT_EQ(store->version(), 1);
  // After the commit the counts describe the committed batch ...
  EXPECT_EQ(store->metrics().num_updated, 5);
  ASSERT_OK(store->Put("d", "4"));
  ASSERT_OK(store->Delete("a"));
  // ... and the next batch starts its own.
  EXPECT_EQ(store->metrics().num_updated, 1);
  EXPECT_EQ(store->metrics().num_removed, 1);
  EXPECT_EQ(store->metrics().num_rows, 3);
  EXPECT_EQ(Contents(store.get()),
            (Rows{{std::string("a\0", 2), "zero"}, {"b", "22"}, {"d", "4"}}));
  // Ranges: [start, end), end "" unbounded.
  EXPECT_EQ(Contents(store.get(), "a", "b"), (Rows{{std::string("a\0", 2), "zero"}}));
  EXPECT_EQ(Contents(store.get(), "b", ""), (Rows{{"b", "22"}, {"d", "4"}}));
  EXPECT_EQ(Contents(store.get(), "c", "d"), Rows{});
}

TEST_P(StateStoreTest, AbortDiscardsUncommittedChanges) {
  auto store = OpenStore();
  ASSERT_OK(store->Put("a", "1"));
  ASSERT_OK(store->Commit());
  ASSERT_OK(store->Put("a", "2"));
  ASSERT_OK(store->Put("b", "2"));
  store->Abort();
  EXPECT_EQ(Contents(store.get()), (Rows{{"a", "1"}}));
  EXPECT_EQ(store->metrics().num_rows, 1);
  EXPECT_EQ(store->metrics().num_updated, 0);
  // Load discards too, also on the no-op path.
  ASSERT_OK(store->Delete("a"));
  ASSERT_OK(store->Load(1));
  EXPECT_EQ(Contents(store.get()), (Rows{{"a", "1"}}));
  ASSERT_OK_AND_ASSIGN(int64_t v, store->Commit());
  EXPECT_EQ(v, 2);
  ASSERT_OK_AND_ASSIGN(Rows files, FileContents(2));
  EXPECT_EQ(files, (Rows{{"a", "1"}}));
}

TEST_P(StateStoreTest, ScanCallbackMayDeleteAndPutWhatItVisits) {
  auto store = OpenStore();
  Rows model;
  // More than one read-ahead chunk of the scan, committed and uncommitted.
  for (int i = 0; i < 3000; ++i) {
    char key[16];
    std::snprintf(key, sizeof key, "k%05d", i);
    ASSERT_OK(store->Put(key, std::to_string(i)));
    model[key] = std::to_string(i);
    if (i == 1500) ASSERT_OK(store->Commit());
  }
  int64_t visited = 0;
  ASSERT_OK(store->Scan("", "", [&](std::string_view key, std::string_view value) -> Result<bool> {
    ++visited;
    const int n = std::stoi(std::string(value));
    if (n % 2 == 0) {
      SILT_RETURN_NOT_OK(store->Delete(key));
      model.erase(std::string(key));
    } else {
      SILT_RETURN_NOT_OK(store->Put(key, "odd"));
      model[std::string(key)] = "odd";
    }
    return true;
  }));
  EXPECT_EQ(visited, 3000);
  EXPECT_EQ(Contents(store.get()), model);
  EXPECT_EQ(store->metrics().num_rows, 1500);
  // Early stop and an error from the callback.
  visited = 0;
  ASSERT_OK(store->Scan(
      "", "", [&](std::string_view, std::string_view) -> Result<bool> { return ++visited < 10; }));
  EXPECT_EQ(visited, 10);
  Status st = store->Scan("", "", [&](std::string_view, std::string_view) -> Result<bool> {
    return Status::Cancelled("stop here");
  });
  EXPECT_TRUE(st.IsCancelled()) << st.ToString();
  ASSERT_OK(store->Commit());
  ASSERT_OK_AND_ASSIGN(Rows files, FileContents(2));
  EXPECT_EQ(files, model);
}

TEST_P(StateStoreTest, CommittedVersionsReloadInANewStore) {
  Rows model;
  std::vector<Rows> models = {model};
  {
    auto store = OpenStore();
    for (int64_t v = 0; v < 5; ++v) {
      ASSERT_OK(store->Load(v));
      RunBatch(store.get(), &model, v);
      ASSERT_OK_AND_ASSIGN(int64_t committed, store->Commit());
      EXPECT_EQ(committed, v + 1);
      models.push_back(model);
    }
  }
  auto store = OpenStore();
  ASSERT_OK(store->Load(5));
  EXPECT_EQ(store->version(), 5);
  EXPECT_EQ(Contents(store.get()), model);
  EXPECT_EQ(store->metrics().num_rows, static_cast<int64_t>(model.size()));
  // Older versions too, and forward again (replaying changelogs).
  for (int64_t v : {3, 1, 4, 0, 5}) {
    ASSERT_OK(store->Load(v));
    EXPECT_EQ(Contents(store.get()), models[static_cast<size_t>(v)]) << v;
    EXPECT_EQ(store->metrics().num_rows,
              static_cast<int64_t>(models[static_cast<size_t>(v)].size()));
  }
  ASSERT_OK_AND_ASSIGN(auto versions, ListStateVersions(fs_, dir_));
  EXPECT_EQ(versions, (std::vector<int64_t>{1, 2, 3, 4, 5}));
  EXPECT_RAISES(NotFound, store->Load(6));
  EXPECT_EQ(store->version(), -1);
  EXPECT_RAISES(InvalidArgument, store->Put("a", "b"));
  ASSERT_OK(store->Load(2));
  EXPECT_EQ(Contents(store.get()), models[2]);
}

TEST_P(StateStoreTest, SnapshotsEveryKRebuildTheSameStateAsChangelogsAlone) {
  Rows model;
  {
    auto store = OpenStore(/*snapshot_interval=*/3);
    for (int64_t v = 0; v < 10; ++v) {
      ASSERT_OK(store->Load(v));
      RunBatch(store.get(), &model, v);
      ASSERT_OK(store->Commit());
    }
  }
  for (int64_t v = 1; v <= 10; ++v) {
    EXPECT_TRUE(Exists(v, StateFileKind::kChangelog)) << v;
    EXPECT_EQ(Exists(v, StateFileKind::kSnapshot), v % 3 == 0) << v;
  }
  Rows from_snapshot;
  {
    auto store = OpenStore(3);
    ASSERT_OK(store->Load(10));
    from_snapshot = Contents(store.get());
  }
  ASSERT_OK_AND_ASSIGN(Rows files, FileContents(10));
  for (int64_t v : {3, 6, 9}) ASSERT_OK(fs_->DeleteFile(Path(v, StateFileKind::kSnapshot)));
  auto store = OpenStore(3);
  ASSERT_OK(store->Load(10));
  EXPECT_EQ(from_snapshot, model);
  EXPECT_EQ(Contents(store.get()), model);
  EXPECT_EQ(files, model);
  ASSERT_OK_AND_ASSIGN(Rows files_without_snapshots, FileContents(10));
  EXPECT_EQ(files_without_snapshots, model);
}

TEST_P(StateStoreTest, RecommitAfterACrashReplacesTheFiles) {
  Rows model;
  {
    auto store = OpenStore(5);
    for (int64_t v = 0; v < 5; ++v) {
      ASSERT_OK(store->Load(v));
      RunBatch(store.get(), &model, v);
      ASSERT_OK(store->Commit());
    }
  }
  ASSERT_TRUE(Exists(5, StateFileKind::kSnapshot));
  // The process died after the store committed version 5 but before the
  // query committed batch 4: batch 4 runs again, here with other changes and
  // a snapshot interval under which 5 gets no snapshot.
  Rows model4;
  {
    auto store = OpenStore(5);
    ASSERT_OK(store->Load(4));
    model4 = Contents(store.get());
  }
  for (int snapshot_interval : {5, 7}) {
    Rows rerun = model4;
    auto store = OpenStore(snapshot_interval);
    ASSERT_OK(store->Load(4));
    RunBatch(store.get(), &rerun, 4, /*seed=*/static_cast<uint32_t>(snapshot_interval));
    ASSERT_OK_AND_ASSIGN(int64_t v, store->Commit());
    EXPECT_EQ(v, 5);
    EXPECT_EQ(Exists(5, StateFileKind::kSnapshot), snapshot_interval == 5);
    auto reopened = OpenStore(snapshot_interval);
    ASSERT_OK(reopened->Load(5));
    EXPECT_EQ(Contents(reopened.get()), rerun) << snapshot_interval;
    ASSERT_OK_AND_ASSIGN(Rows files, FileContents(5));
    EXPECT_EQ(files, rerun);
  }
}

TEST_P(StateStoreTest, FailedCommitKeepsTheOldVersionAndDiscardsTheChanges) {
  auto faulty = std::make_shared<testing::FaultInjectionFileSystem>(fs_);
  StateStoreOptions options = Options(1);
  options.file_system = faulty;
  ASSERT_OK_AND_ASSIGN(auto store, StateStore::Open(options));
  ASSERT_OK(store->Put("a", "1"));
  ASSERT_OK(store->Commit());
  for (const char* file : {".changelog", ".snapshot"}) {
    ASSERT_OK(store->Put("a", "2"));
    ASSERT_OK(store->Put("b", "2"));
    faulty->CrashMidWrite(file);
    auto failed = store->Commit();
    EXPECT_TRUE(failed.status().IsIOError()) << failed.status().ToString();
    EXPECT_EQ(store->version(), 1);
    EXPECT_EQ(Contents(store.get()), (Rows{{"a", "1"}})) << file;
    EXPECT_EQ(store->metrics().num_rows, 1);
  }
  ASSERT_OK(store->Put("c", "3"));
  ASSERT_OK_AND_ASSIGN(int64_t v, store->Commit());
  EXPECT_EQ(v, 2);
  ASSERT_OK_AND_ASSIGN(Rows files, FileContents(2));
  EXPECT_EQ(files, (Rows{{"a", "1"}, {"c", "3"}}));
}

// Kill-and-recover: every write of a run of batches fails in turn, before
// or after it happened (a lost acknowledgement); the query then restarts
// from the last version it saw committed and re-runs the batches. Whatever
// was acknowledged must load, and the re-run must end in the same state.
TEST_P(StateStoreTest, EveryFailedWriteRecoversByReRunningTheBatch) {
  constexpr int64_t kBatches = 7;
  std::vector<Rows> models = {Rows{}};
  for (int64_t v = 0; v < kBatches; ++v) {
    Rows next = models.back();
    RunBatch(nullptr, &next, v);
    models.push_back(next);
  }
  for (auto timing : {testing::FaultTiming::kBeforeOp, testing::FaultTiming::kAfterOp}) {
    for (int64_t n = 1;; ++n) {
      ASSERT_OK(fs_->DeleteDirRecursive(dir_));
      auto faulty = std::make_shared<testing::FaultInjectionFileSystem>(fs_);
      StateStoreOptions options = Options(3);
      options.file_system = faulty;
      int64_t committed = 0;  // what the query saw
      bool failed = false;
      {
        ASSERT_OK_AND_ASSIGN(auto store, StateStore::Open(options));
        faulty->FailNth(testing::FsOp::kAnyWrite, n, Status::IOError("injected"), timing);
        for (int64_t v = 0; v < kBatches && !failed; ++v) {
          ASSERT_OK(store->Load(v));
          Rows ignored;
          RunBatch(store.get(), &ignored, v);
          auto result = store->Commit();
          if (result.ok()) {
            committed = *result;
          } else {
            failed = true;
            EXPECT_EQ(store->version(), v);
          }
        }
      }
      faulty->ClearFaults();
      if (!failed) {
        EXPECT_GT(n, 20) << "too few writes";
        break;  // n is past the last write of the run
      }
      // Restart: a new process loads the last committed version and re-runs.
      ASSERT_OK_AND_ASSIGN(auto store, StateStore::Open(options));
      SCOPED_TRACE(::testing::Message() << "failing write " << n);
      ASSERT_OK(store->Load(committed));
      EXPECT_EQ(Contents(store.get()), models[static_cast<size_t>(committed)]) << "n=" << n;
      for (int64_t v = committed; v < kBatches; ++v) {
        ASSERT_OK(store->Load(v));
        Rows ignored;
        RunBatch(store.get(), &ignored, v);
        ASSERT_OK(store->Commit());
      }
      ASSERT_OK_AND_ASSIGN(Rows files, FileContents(kBatches));
      EXPECT_EQ(files, models.back()) << "n=" << n;
      auto fresh = OpenStore(3);
      ASSERT_OK(fresh->Load(kBatches));
      EXPECT_EQ(Contents(fresh.get()), models.back()) << "n=" << n;
    }
  }
}

TEST_P(StateStoreTest, DamagedTruncatedOrMissingFilesAreCorruptionNamingTheFile) {
  Rows model;
  {
    auto store = OpenStore(3);
    for (int64_t v = 0; v < 5; ++v) {
      ASSERT_OK(store->Load(v));
      RunBatch(store.get(), &model, v);
      ASSERT_OK(store->Commit());
    }
  }
  const std::string changelog = Path(5, StateFileKind::kChangelog);
  const std::string snapshot = Path(3, StateFileKind::kSnapshot);
  ASSERT_OK_AND_ASSIGN(std::string good_changelog, fs_->ReadFile(changelog));
  ASSERT_OK_AND_ASSIGN(std::string good_snapshot, fs_->ReadFile(snapshot));
  auto expect_corruption = [&](const std::string& path) {
    auto store = OpenStore(3);
    Status st = store->Load(5);
    EXPECT_TRUE(st.IsCorruption()) << st.ToString();
    EXPECT_NE(st.message().find(path), std::string::npos) << st.ToString();
    st = FileContents(5).status();
    EXPECT_TRUE(st.IsCorruption()) << st.ToString();
    EXPECT_NE(st.message().find(path), std::string::npos) << st.ToString();
  };
  std::string damaged = good_changelog;
  damaged[damaged.size() / 2] ^= 0x20;
  ASSERT_OK(fs_->WriteFile(changelog, damaged));
  expect_corruption(changelog);
  ASSERT_OK(fs_->WriteFile(changelog, good_changelog.substr(0, good_changelog.size() - 3)));
  expect_corruption(changelog);
  ASSERT_OK(fs_->WriteFile(changelog, good_changelog));
  ASSERT_OK(fs_->WriteFile(snapshot, good_snapshot.substr(0, good_snapshot.size() / 2)));
  expect_corruption(snapshot);
  ASSERT_OK(fs_->WriteFile(snapshot, good_snapshot));
  const std::string changelog4 = Path(4, StateFileKind::kChangelog);
  ASSERT_OK(fs_->DeleteFile(changelog4));
  expect_corruption(changelog4);
  // A file of another version under this name.
  ASSERT_OK(fs_->WriteFile(changelog4, good_changelog));
  expect_corruption(changelog4);
  ASSERT_OK(fs_->DeleteFile(changelog4));

  // Versions 1..3 are still whole; 4 and 5 are not listed.
  ASSERT_OK_AND_ASSIGN(auto versions, ListStateVersions(fs_, dir_));
  EXPECT_EQ(versions, (std::vector<int64_t>{1, 2, 3}));
  auto store = OpenStore(3);
  ASSERT_OK(store->Load(3));
}

TEST_P(StateStoreTest, PurgeKeepsWhatLaterVersionsNeed) {
  Rows model;
  std::vector<Rows> models = {model};
  auto store = OpenStore(3);
  for (int64_t v = 0; v < 10; ++v) {
    ASSERT_OK(store->Load(v));
    RunBatch(store.get(), &model, v);
    ASSERT_OK(store->Commit());
    models.push_back(model);
  }
  ASSERT_OK(store->Purge(7));
  for (int64_t v = 1; v <= 10; ++v) {
    EXPECT_EQ(Exists(v, StateFileKind::kChangelog), v > 6) << v;
    EXPECT_EQ(Exists(v, StateFileKind::kSnapshot), v == 6 || v == 9) << v;
  }
  ASSERT_OK_AND_ASSIGN(auto versions, ListStateVersions(fs_, dir_));
  EXPECT_EQ(versions, (std::vector<int64_t>{6, 7, 8, 9, 10}));
  auto reopened = OpenStore(3);
  for (int64_t v = 6; v <= 10; ++v) {
    ASSERT_OK(reopened->Load(v));
    EXPECT_EQ(Contents(reopened.get()), models[static_cast<size_t>(v)]) << v;
    ASSERT_OK_AND_ASSIGN(Rows files, FileContents(v));
    EXPECT_EQ(files, models[static_cast<size_t>(v)]) << v;
  }
  EXPECT_RAISES(NotFound, reopened->Load(5));
  // A purged changelog below a kept one is needed by no version >= 7.
  ASSERT_OK(fs_->WriteFile(Path(5, StateFileKind::kChangelog), "stale"));
  EXPECT_RAISES(Corruption, reopened->Load(5));
  // Nothing to purge below the first snapshot; purging again is a no-op.
  ASSERT_OK(store->Purge(7));
  ASSERT_OK(store->Purge(2));
  ASSERT_OK_AND_ASSIGN(versions, ListStateVersions(fs_, dir_));
  EXPECT_EQ(versions, (std::vector<int64_t>{6, 7, 8, 9, 10}));
}

TEST_P(StateStoreTest, ChurnOfManyKeysKeepsTheCountsRight) {
  // The file system adds nothing here but time.
  if (GetParam() == "local") GTEST_SKIP() << "runs on the memory file system";
  Rows model;
  int64_t model_bytes = 0;
  auto store = OpenStore(3);
  std::mt19937 rng(7);
  constexpr int kKeys = 100000;
  for (int64_t v = 0; v < 5; ++v) {
    ASSERT_OK(store->Load(v));
    for (int i = 0; i < kKeys / 2; ++i) {
      const std::string key = "key" + std::to_string(rng() % kKeys);
      auto it = model.find(key);
      if (rng() % 3 == 0) {
        ASSERT_OK(store->Delete(key));
        if (it != model.end()) {
          model_bytes -= static_cast<int64_t>(key.size() + it->second.size());
          model.erase(it);
        }
      } else {
        const std::string value(rng() % 20, 'v');
        ASSERT_OK(store->Put(key, value));
        if (it != model.end()) {
          model_bytes +=
              static_cast<int64_t>(value.size()) - static_cast<int64_t>(it->second.size());
          it->second = value;
        } else {
          model_bytes += static_cast<int64_t>(key.size() + value.size());
          model.emplace(key, value);
        }
      }
    }
    EXPECT_EQ(store->metrics().num_rows, static_cast<int64_t>(model.size()));
    ASSERT_OK(store->Commit());
    EXPECT_EQ(store->metrics().num_rows, static_cast<int64_t>(model.size()));
    EXPECT_EQ(store->metrics().key_value_bytes, model_bytes);
  }
  auto reopened = OpenStore(3);
  ASSERT_OK(reopened->Load(5));
  EXPECT_EQ(reopened->metrics().num_rows, static_cast<int64_t>(model.size()));
  EXPECT_EQ(reopened->metrics().key_value_bytes, model_bytes);
  EXPECT_EQ(Contents(reopened.get()), model);
  ASSERT_OK_AND_ASSIGN(Rows files, FileContents(5));
  EXPECT_EQ(files, model);
}

TEST_P(StateStoreTest, AGivenWorkingDirIsUsedAndATemporaryOneRemoved) {
  testing::TempDir work;
  StateStoreOptions options = Options();
  options.working_dir = work.path() + "/rocks";
  {
    ASSERT_OK_AND_ASSIGN(auto store, StateStore::Open(options));
    ASSERT_OK(store->Put("a", "1"));
    ASSERT_OK(store->Commit());
    EXPECT_TRUE(std::filesystem::exists(options.working_dir + "/CURRENT"));
    // A second store cannot share a working copy.
    EXPECT_FALSE(StateStore::Open(options).ok());
  }
  // The working copy of an earlier store is discarded at Open.
  ASSERT_OK_AND_ASSIGN(auto store, StateStore::Open(options));
  EXPECT_EQ(Contents(store.get()), Rows{});
  ASSERT_OK(store->Load(1));
  EXPECT_EQ(Contents(store.get()), (Rows{{"a", "1"}}));

  // Temporary working copies go under TMPDIR, a private one here so other
  // processes' stores do not change the count.
  testing::TempDir tmp;
  const char* saved = std::getenv("TMPDIR");
  const std::string saved_tmpdir = saved ? saved : "";
  setenv("TMPDIR", tmp.path().c_str(), 1);
  const std::string& base = tmp.path();
  auto count_temp = [&] {
    int n = 0;
    for (const auto& entry : std::filesystem::directory_iterator(base)) {
      n += entry.path().filename().string().starts_with("silt-state-");
    }
    return n;
  };
  // The working copy of a process that died (kill -9 leaves it) is removed
  // by the next store; a live process's is not.
  pid_t child = fork();
  if (child == 0) _exit(0);
  ASSERT_GT(child, 0);
  waitpid(child, nullptr, 0);
  const std::string dead = base + "/silt-state-" + std::to_string(child) + "-abc123";
  const std::string alive = base + "/silt-state-" + std::to_string(getpid()) + "-def456";
  std::filesystem::create_directories(dead + "/sub");
  std::filesystem::create_directories(alive);
  EXPECT_EQ(count_temp(), 2);
  {
    auto temp_store = OpenStore();
    EXPECT_FALSE(std::filesystem::exists(dead));
    EXPECT_TRUE(std::filesystem::exists(alive));
    EXPECT_EQ(count_temp(), 2);  // the live one and the store's own
  }
  EXPECT_EQ(count_temp(), 1);
  if (saved) {
    setenv("TMPDIR", saved_tmpdir.c_str(), 1);
  } else {
    unsetenv("TMPDIR");
  }
}

TEST(StateStoreOptionsTest, RejectsMissingOptions) {
  StateStoreOptions options;
  EXPECT_RAISES(InvalidArgument, StateStore::Open(options));
  options.file_system = fs::MakeMemoryFileSystem();
  EXPECT_RAISES(InvalidArgument, StateStore::Open(options));
  options.dir = "memory://s";
  options.snapshot_interval = 0;
  EXPECT_RAISES(InvalidArgument, StateStore::Open(options));
  EXPECT_RAISES(InvalidArgument,
                ReadStateVersion(options.file_system, options.dir, -1,
                                 [](std::string_view, std::string_view) { return Status::OK(); }));
  ASSERT_OK_AND_ASSIGN(auto versions, ListStateVersions(options.file_system, "memory://none"));
  EXPECT_TRUE(versions.empty());
}

}  // namespace
}  // namespace silt::state
