// FaultInjectionFileSystem: a FileSystem wrapper for fault and crash tests.
// It forwards every call to a target file system (usually the memory one,
// or local in a TempDir) and, as armed by the test, fails chosen operations:
//
//   - the Nth operation of a kind (FailNth), before it runs or after it ran
//     (a lost acknowledgement: the write happened, the caller sees an error);
//   - every operation of a kind on paths containing a substring
//     (FailWhenPathContains), until cleared;
//   - a simulated process crash in the middle of writing a file
//     (CrashMidWrite): nothing appears at the final path, as the atomic
//     visibility contract promises, the call returns IOError, and optionally
//     the file system stays down until Restart(), like a dead process;
//   - seeded random retryable IOErrors on reads and writes (SetRandomFailures).
//
// It also counts every operation attempted (count()), failed or not.
//
// Injected errors are IOError unless the test supplies its own Status.
// Operations are counted when attempted, so a failed attempt counts too.
//
// Thread safety: all methods may be called concurrently; files opened through
// the wrapper share its fault state and may outlive it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "silt/base/status.h"
#include "silt/fs/file_system.h"

namespace silt::testing {

// Operations the wrapper counts and can fail. The last three are selectors
// that match a group (kAnyRead: the first seven; kAnyWrite: the rest) and are
// only meaningful as arguments.
enum class FsOp {
  kOpenForRead,
  kReadAt,  // RandomAccessFile::ReadAt on a file opened through the wrapper
  kReadFile,
  kGetFileInfo,
  kExists,
  kListDir,
  kListRecursive,
  kWriteFile,
  kPutIfAbsent,
  kOpenForWrite,
  kAppend,  // WritableFile::Append
  kClose,   // WritableFile::Close
  kDeleteFile,
  kCreateDir,
  kDeleteDirRecursive,
  kAny,
  kAnyRead,
  kAnyWrite,
};

std::string_view FsOpName(FsOp op);

// When a FailNth fault strikes relative to the real operation.
enum class FaultTiming {
  kBeforeOp,  // the operation does not happen
  kAfterOp,   // the operation happens, then the error is returned
};

// What a simulated crash leaves behind.
enum class AfterCrash {
  kKeepRunning,  // later operations proceed normally
  kStayDown,     // every later operation fails with IOError until Restart()
};

class FaultInjectionFileSystem : public fs::ForwardingFileSystem {
 public:
  explicit FaultInjectionFileSystem(fs::FileSystemPtr target);
  ~FaultInjectionFileSystem() override;

  // Makes the `n`th (1-based, counted from this call) operation matching `op`
  // return `status`. One-shot; several may be armed at once.
  // REQUIRES: n >= 1, !status.ok().
  void FailNth(FsOp op, int64_t n, Status status, FaultTiming timing = FaultTiming::kBeforeOp);

  // Makes every operation matching `op` on a path containing `path_substring`
  // return `status` (the operation does not happen), until ClearFaults().
  // REQUIRES: !status.ok().
  void FailWhenPathContains(FsOp op, std::string path_substring, Status status);

  // Simulates the process dying while writing the `n`th file (WriteFile,
  // PutIfAbsent or a file opened with OpenForWrite, counted from this call)
  // whose path contains `path_substring` ("" matches every path). The write
  // returns IOError and nothing becomes visible at its path: WriteFile and
  // PutIfAbsent are not forwarded, a WritableFile forwards its appends and is
  // aborted at Close(). One-shot.
  void CrashMidWrite(std::string path_substring, int64_t n = 1,
                     AfterCrash after = AfterCrash::kKeepRunning);

  // Fails reads (kAnyRead) and writes (kAnyWrite) at random with the given
  // probabilities, with IOErrors whose retryable() is true. The same seed
  // and call sequence give the same failures. Probabilities of 0 disable.
  void SetRandomFailures(uint64_t seed, double read_probability, double write_probability);

  // Disarms every fault (FailNth, FailWhenPathContains, CrashMidWrite,
  // random failures). Does not restart a downed file system.
  void ClearFaults();

  // True after a crash armed with AfterCrash::kStayDown struck.
  bool is_down() const;
  // Brings a downed file system back, like restarting the process.
  void Restart();

  // Operations attempted since construction or ResetCounters(); a selector
  // sums its group.
  int64_t count(FsOp op) const;
  // Operations failed or crashed by injection.
  int64_t injected_failures() const;
  void ResetCounters();

  Result<std::unique_ptr<fs::RandomAccessFile>> OpenForRead(const std::string& path) override;
  Result<std::string> ReadFile(const std::string& path) override;
  Status WriteFile(const std::string& path, std::string_view data) override;
  Status PutIfAbsent(const std::string& path, std::string_view data) override;
  // Counted and failed as kPutIfAbsent (the same operation, unsynced).
  Status PutIfAbsentUnsynced(const std::string& path, std::string_view data) override;
  Result<std::unique_ptr<fs::WritableFile>> OpenForWrite(const std::string& path) override;
  Result<fs::FileInfo> GetFileInfo(const std::string& path) override;
  Result<bool> Exists(const std::string& path) override;
  Result<std::vector<fs::FileInfo>> ListDir(const std::string& dir) override;
  Result<std::vector<fs::FileInfo>> ListRecursive(const std::string& dir) override;
  Status DeleteFile(const std::string& path) override;
  Status CreateDir(const std::string& path) override;
  Status DeleteDirRecursive(const std::string& path) override;

  class Injector;  // the shared fault state; defined in the .cc

 private:
  std::shared_ptr<Injector> injector_;
};

}  // namespace silt::testing
