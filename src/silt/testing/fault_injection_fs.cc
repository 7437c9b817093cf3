#include "silt/testing/fault_injection_fs.h"

#include <array>
#include <mutex>
#include <optional>
#include <random>
#include <vector>

namespace silt::testing {

namespace {

constexpr size_t kNumCountedOps = static_cast<size_t>(FsOp::kAny);

bool IsRead(FsOp op) { return op <= FsOp::kListRecursive; }

bool IsFileWrite(FsOp op) {
  return op == FsOp::kWriteFile || op == FsOp::kPutIfAbsent || op == FsOp::kOpenForWrite;
}

bool Matches(FsOp selector, FsOp op) {
  switch (selector) {
    case FsOp::kAny: return true;
    case FsOp::kAnyRead: return IsRead(op);
    case FsOp::kAnyWrite: return !IsRead(op);
    default: return selector == op;
  }
}

}  // namespace

std::string_view FsOpName(FsOp op) {
  switch (op) {
    case FsOp::kOpenForRead: return "OpenForRead";
    case FsOp::kReadAt: return "ReadAt";
    case FsOp::kReadFile: return "ReadFile";
    case FsOp::kGetFileInfo: return "GetFileInfo";
    case FsOp::kExists: return "Exists";
    case FsOp::kListDir: return "ListDir";
    case FsOp::kListRecursive: return "ListRecursive";
    case FsOp::kWriteFile: return "WriteFile";
    case FsOp::kPutIfAbsent: return "PutIfAbsent";
    case FsOp::kOpenForWrite: return "OpenForWrite";
    case FsOp::kAppend: return "Append";
    case FsOp::kClose: return "Close";
    case FsOp::kDeleteFile: return "DeleteFile";
    case FsOp::kCreateDir: return "CreateDir";
    case FsOp::kDeleteDirRecursive: return "DeleteDirRecursive";
    case FsOp::kAny: return "any operation";
    case FsOp::kAnyRead: return "any read";
    case FsOp::kAnyWrite: return "any write";
  }
  return "unknown operation";
}

// The armed faults and counters, shared by the wrapper and the files it
// opened. All state is guarded by mutex_.
class FaultInjectionFileSystem::Injector {
 public:
  // What to do with one operation.
  struct Decision {
    Status before;  // fail without running the operation
    Status after;   // run the operation, then fail
    bool crash = false;
    AfterCrash after_crash = AfterCrash::kKeepRunning;
  };

  Decision Decide(FsOp op, std::string_view path) {
    std::lock_guard<std::mutex> lock(mutex_);
    Decision decision;
    if (down_) {
      ++injected_;
      decision.before = Status::IOError(
          "file system is down after a simulated crash: ", FsOpName(op), " '", path, "'");
      return decision;
    }
    ++counts_[static_cast<size_t>(op)];

    if (IsFileWrite(op)) {
      for (auto it = crashes_.begin(); it != crashes_.end(); ++it) {
        if (path.find(it->path_substring) == std::string_view::npos) continue;
        if (--it->remaining > 0) continue;
        decision.crash = true;
        decision.after_crash = it->after;
        crashes_.erase(it);
        ++injected_;
        return decision;
      }
    }

    // Every armed FailNth counts this operation; the first to reach its Nth
    // strikes.
    std::optional<NthFault> fired;
    for (auto it = nth_faults_.begin(); it != nth_faults_.end();) {
      if (Matches(it->op, op) && --it->remaining == 0) {
        if (!fired) fired = std::move(*it);
        it = nth_faults_.erase(it);
      } else {
        ++it;
      }
    }
    if (fired) {
      ++injected_;
      (fired->timing == FaultTiming::kBeforeOp ? decision.before : decision.after) =
          std::move(fired->status);
      return decision;
    }

    for (const PathFault& fault : path_faults_) {
      if (Matches(fault.op, op) && path.find(fault.path_substring) != std::string_view::npos) {
        ++injected_;
        decision.before = fault.status;
        return decision;
      }
    }

    double probability = IsRead(op) ? read_probability_ : write_probability_;
    if (rng_ && probability > 0 &&
        std::uniform_real_distribution<double>(0, 1)(*rng_) < probability) {
      ++injected_;
      decision.before =
          Status(StatusCode::kIOError,
                 Status::Concat("injected random failure: ", FsOpName(op), " '", path, "'"),
                 /*retryable=*/true);
    }
    return decision;
  }

  // Records that a simulated crash struck and builds the error the dying
  // write returns.
  Status Crash(AfterCrash after, std::string_view path) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (after == AfterCrash::kStayDown) down_ = true;
    return Status::IOError("simulated crash while writing '", path, "'");
  }

  void AddNth(FsOp op, int64_t n, Status status, FaultTiming timing) {
    std::lock_guard<std::mutex> lock(mutex_);
    nth_faults_.push_back(NthFault{op, n, std::move(status), timing});
  }

  void AddPath(FsOp op, std::string path_substring, Status status) {
    std::lock_guard<std::mutex> lock(mutex_);
    path_faults_.push_back(PathFault{op, std::move(path_substring), std::move(status)});
  }

  void AddCrash(std::string path_substring, int64_t n, AfterCrash after) {
    std::lock_guard<std::mutex> lock(mutex_);
    crashes_.push_back(CrashFault{std::move(path_substring), n, after});
  }

  void SetRandom(uint64_t seed, double read_probability, double write_probability) {
    std::lock_guard<std::mutex> lock(mutex_);
    rng_.emplace(seed);
    read_probability_ = read_probability;
    write_probability_ = write_probability;
  }

  void Clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    nth_faults_.clear();
    path_faults_.clear();
    crashes_.clear();
    rng_.reset();
    read_probability_ = 0;
    write_probability_ = 0;
  }

  bool down() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return down_;
  }

  void Restart() {
    std::lock_guard<std::mutex> lock(mutex_);
    down_ = false;
  }

  int64_t count(FsOp selector) const {
    std::lock_guard<std::mutex> lock(mutex_);
    int64_t total = 0;
    for (size_t op_idx = 0; op_idx < kNumCountedOps; ++op_idx) {
      if (Matches(selector, static_cast<FsOp>(op_idx))) total += counts_[op_idx];
    }
    return total;
  }

  int64_t injected() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return injected_;
  }

  void ResetCounters() {
    std::lock_guard<std::mutex> lock(mutex_);
    counts_.fill(0);
    injected_ = 0;
  }

 private:
  struct NthFault {
    FsOp op;
    int64_t remaining;
    Status status;
    FaultTiming timing;
  };
  struct PathFault {
    FsOp op;
    std::string path_substring;
    Status status;
  };
  struct CrashFault {
    std::string path_substring;
    int64_t remaining;
    AfterCrash after;
  };

  mutable std::mutex mutex_;
  std::array<int64_t, kNumCountedOps> counts_{};
  int64_t injected_ = 0;
  std::vector<NthFault> nth_faults_;
  std::vector<PathFault> path_faults_;
  std::vector<CrashFault> crashes_;
  std::optional<std::mt19937_64> rng_;
  double read_probability_ = 0;
  double write_probability_ = 0;
  bool down_ = false;
};

namespace {

using Injector = FaultInjectionFileSystem::Injector;

// Runs `fn` (returning Status or Result<T>) under the injector's decision for
// `op` on `path`.
template <typename Fn>
auto RunWithFaults(Injector& injector, FsOp op, std::string_view path, Fn&& fn) -> decltype(fn()) {
  Injector::Decision decision = injector.Decide(op, path);
  if (!decision.before.ok()) return decision.before;
  auto result = fn();
  if (!decision.after.ok()) return decision.after;
  return result;
}

class FaultRandomAccessFile final : public fs::RandomAccessFile {
 public:
  FaultRandomAccessFile(std::unique_ptr<fs::RandomAccessFile> target, std::string path,
                        std::shared_ptr<Injector> injector)
      : target_(std::move(target)), path_(std::move(path)), injector_(std::move(injector)) {}

  Result<int64_t> Size() override { return target_->Size(); }

  Result<std::string> ReadAt(int64_t offset, int64_t length) override {
    return RunWithFaults(*injector_, FsOp::kReadAt, path_,
                         [&] { return target_->ReadAt(offset, length); });
  }

 private:
  std::unique_ptr<fs::RandomAccessFile> target_;
  std::string path_;
  std::shared_ptr<Injector> injector_;
};

class FaultWritableFile final : public fs::WritableFile {
 public:
  FaultWritableFile(std::unique_ptr<fs::WritableFile> target, std::string path,
                    std::shared_ptr<Injector> injector, std::optional<AfterCrash> crash)
      : target_(std::move(target)),
        path_(std::move(path)),
        injector_(std::move(injector)),
        crash_(crash) {}

  Status Append(std::string_view data) override {
    return RunWithFaults(*injector_, FsOp::kAppend, path_, [&] { return target_->Append(data); });
  }

  Status Close() override {
    Injector::Decision decision = injector_->Decide(FsOp::kClose, path_);
    if (!decision.before.ok()) return decision.before;
    if (crash_) {
      // The process "dies" after the last byte and before publishing: the
      // target discards its unpublished file, as a real restart would find
      // only an orphaned temp file.
      target_->Abort().IgnoreError("the simulated crash discards the file");
      return injector_->Crash(*crash_, path_);
    }
    Status st = target_->Close();
    if (!decision.after.ok()) return decision.after;
    return st;
  }

  Status Abort() override { return target_->Abort(); }

  int64_t bytes_written() const override { return target_->bytes_written(); }

 private:
  std::unique_ptr<fs::WritableFile> target_;
  std::string path_;
  std::shared_ptr<Injector> injector_;
  std::optional<AfterCrash> crash_;
};

}  // namespace

FaultInjectionFileSystem::FaultInjectionFileSystem(fs::FileSystemPtr target)
    : ForwardingFileSystem(std::move(target)), injector_(std::make_shared<Injector>()) {}

FaultInjectionFileSystem::~FaultInjectionFileSystem() = default;

void FaultInjectionFileSystem::FailNth(FsOp op, int64_t n, Status status, FaultTiming timing) {
  injector_->AddNth(op, n, std::move(status), timing);
}

void FaultInjectionFileSystem::FailWhenPathContains(FsOp op, std::string path_substring,
                                                    Status status) {
  injector_->AddPath(op, std::move(path_substring), std::move(status));
}

void FaultInjectionFileSystem::CrashMidWrite(std::string path_substring, int64_t n,
                                             AfterCrash after) {
  injector_->AddCrash(std::move(path_substring), n, after);
}

void FaultInjectionFileSystem::SetRandomFailures(uint64_t seed, double read_probability,
                                                 double write_probability) {
  injector_->SetRandom(seed, read_probability, write_probability);
}

void FaultInjectionFileSystem::ClearFaults() { injector_->Clear(); }
bool FaultInjectionFileSystem::is_down() const { return injector_->down(); }
void FaultInjectionFileSystem::Restart() { injector_->Restart(); }
int64_t FaultInjectionFileSystem::count(FsOp op) const { return injector_->count(op); }
int64_t FaultInjectionFileSystem::injected_failures() const { return injector_->injected(); }
void FaultInjectionFileSystem::ResetCounters() { injector_->ResetCounters(); }

Result<std::unique_ptr<fs::RandomAccessFile>> FaultInjectionFileSystem::OpenForRead(
    const std::string& path) {
  return RunWithFaults(
      *injector_, FsOp::kOpenForRead, path, [&]() -> Result<std::unique_ptr<fs::RandomAccessFile>> {
        SILT_ASSIGN_OR_RETURN(std::unique_ptr<fs::RandomAccessFile> file,
                              target()->OpenForRead(path));
        return std::unique_ptr<fs::RandomAccessFile>(
            std::make_unique<FaultRandomAccessFile>(std::move(file), path, injector_));
      });
}

Result<std::string> FaultInjectionFileSystem::ReadFile(const std::string& path) {
  return RunWithFaults(*injector_, FsOp::kReadFile, path, [&] { return target()->ReadFile(path); });
}

Status FaultInjectionFileSystem::WriteFile(const std::string& path, std::string_view data) {
  Injector::Decision decision = injector_->Decide(FsOp::kWriteFile, path);
  if (!decision.before.ok()) return decision.before;
  // A crash before publishing leaves the old contents (or nothing) at `path`.
  if (decision.crash) return injector_->Crash(decision.after_crash, path);
  Status st = target()->WriteFile(path, data);
  if (!decision.after.ok()) return decision.after;
  return st;
}

Status FaultInjectionFileSystem::PutIfAbsent(const std::string& path, std::string_view data) {
  Injector::Decision decision = injector_->Decide(FsOp::kPutIfAbsent, path);
  if (!decision.before.ok()) return decision.before;
  if (decision.crash) return injector_->Crash(decision.after_crash, path);
  Status st = target()->PutIfAbsent(path, data);
  if (!decision.after.ok()) return decision.after;
  return st;
}

Status FaultInjectionFileSystem::PutIfAbsentUnsynced(const std::string& path,
                                                     std::string_view data) {
  Injector::Decision decision = injector_->Decide(FsOp::kPutIfAbsent, path);
  if (!decision.before.ok()) return decision.before;
  if (decision.crash) return injector_->Crash(decision.after_crash, path);
  Status st = target()->PutIfAbsentUnsynced(path, data);
  if (!decision.after.ok()) return decision.after;
  return st;
}

Result<std::unique_ptr<fs::WritableFile>> FaultInjectionFileSystem::OpenForWrite(
    const std::string& path) {
  Injector::Decision decision = injector_->Decide(FsOp::kOpenForWrite, path);
  if (!decision.before.ok()) return decision.before;
  SILT_ASSIGN_OR_RETURN(std::unique_ptr<fs::WritableFile> file, target()->OpenForWrite(path));
  if (!decision.after.ok()) return decision.after;
  std::optional<AfterCrash> crash;
  if (decision.crash) crash = decision.after_crash;
  return std::unique_ptr<fs::WritableFile>(
      std::make_unique<FaultWritableFile>(std::move(file), path, injector_, crash));
}

Result<fs::FileInfo> FaultInjectionFileSystem::GetFileInfo(const std::string& path) {
  return RunWithFaults(*injector_, FsOp::kGetFileInfo, path,
                       [&] { return target()->GetFileInfo(path); });
}

Result<bool> FaultInjectionFileSystem::Exists(const std::string& path) {
  return RunWithFaults(*injector_, FsOp::kExists, path, [&] { return target()->Exists(path); });
}

Result<std::vector<fs::FileInfo>> FaultInjectionFileSystem::ListDir(const std::string& dir) {
  return RunWithFaults(*injector_, FsOp::kListDir, dir, [&] { return target()->ListDir(dir); });
}

Result<std::vector<fs::FileInfo>> FaultInjectionFileSystem::ListRecursive(const std::string& dir) {
  return RunWithFaults(*injector_, FsOp::kListRecursive, dir,
                       [&] { return target()->ListRecursive(dir); });
}

Status FaultInjectionFileSystem::DeleteFile(const std::string& path) {
  return RunWithFaults(*injector_, FsOp::kDeleteFile, path,
                       [&] { return target()->DeleteFile(path); });
}

Status FaultInjectionFileSystem::CreateDir(const std::string& path) {
  return RunWithFaults(*injector_, FsOp::kCreateDir, path,
                       [&] { return target()->CreateDir(path); });
}

Status FaultInjectionFileSystem::DeleteDirRecursive(const std::string& path) {
  return RunWithFaults(*injector_, FsOp::kDeleteDirRecursive, path,
                       [&] { return target()->DeleteDirRecursive(path); });
}

}  // namespace silt::testing
