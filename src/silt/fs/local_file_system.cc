// The local (POSIX) file system.
//
// Every file is written to a hidden temp file in the destination directory
// (".<name>.<pid>-<nonce>-<counter>.tmp"), fsync'd, and only then published
// under its final name: rename(2) for replace semantics, renameat2(2) with
// RENAME_NOREPLACE for create-if-absent (it fails with EEXIST when the name
// is taken, atomically; file systems without it, such as NFS, get link(2),
// which is as atomic, and an unlink of the temp name). The directory is
// fsync'd after publishing so the new entry survives a power loss. Readers
// therefore never see a partial file, and a crash leaves at most an orphaned
// temp file, which listings skip. PutIfAbsentUnsynced publishes the same way
// and skips both fsyncs. OpenForWriteInPlace writes the file under its own
// name (no temp, no rename) and syncs it and its directory at Close.

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <random>
#include <system_error>

#include "silt/fs/file_system.h"
#include "silt/fs/page_cache.h"
#include "silt/fs/path_internal.h"

namespace silt::fs {

namespace {

// Errors name the action and path first, then the OS reason, like
// "Cannot open '/x/y': No such file or directory".
Status PosixError(std::string_view action, std::string_view path, int err) {
  std::string reason = std::generic_category().message(err);
  if (err == ENOENT || err == ENOTDIR) {
    return Status::NotFound("Cannot ", action, " '", path, "': ", reason);
  }
  // Conditions that typically clear up on their own (a busy NFS server, a
  // signal, a full kernel queue): repeating the call may succeed.
  bool retryable = err == EINTR || err == EAGAIN || err == EBUSY || err == ETIMEDOUT;
  return Status(StatusCode::kIOError, Status::Concat("Cannot ", action, " '", path, "': ", reason),
                retryable);
}

// As PosixError, but always IOError: for writes, a missing or non-directory
// parent is a failure to write, not a missing file.
Status PosixWriteError(std::string_view action, std::string_view path, int err) {
  Status st = PosixError(action, path, err);
  if (st.IsNotFound()) return Status::IOError(st.message());
  return st;
}

// Our in-flight temp files: hidden and ending in ".tmp". Listings skip them.
bool IsTempFileName(std::string_view name) {
  return name.size() > 5 && name.front() == '.' && name.ends_with(".tmp");
}

// The OS path for `path`: "file://" stripped. Other URI schemes are refused
// rather than turned into odd local directories named "s3:".
Result<std::string> ToLocalPath(const std::string& path) {
  if (path.empty()) return Status::InvalidArgument("empty path given to the local file system");
  std::string_view local = internal::StripFileScheme(path);
  std::string_view scheme = internal::Scheme(local);
  if (!scheme.empty()) {
    return Status::InvalidArgument("'", path, "' is not a local path (scheme '", scheme,
                                   "://' belongs to another file system)");
  }
  return std::string(internal::StripTrailingSlashes(local));
}

// Owns a file descriptor.
class ScopedFd {
 public:
  explicit ScopedFd(int fd = -1) : fd_(fd) {}
  ~ScopedFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  int get() const { return fd_; }
  // Takes ownership of `fd`. REQUIRES: no descriptor is owned yet.
  void Adopt(int fd) { fd_ = fd; }
  // Closes and reports the error close(2) gives (NFS reports write-back
  // failures there).
  Status Close(std::string_view path) {
    int fd = fd_;
    fd_ = -1;
    if (fd >= 0 && ::close(fd) != 0) return PosixError("close", path, errno);
    return Status::OK();
  }

 private:
  int fd_;
};

// Opens a directory and fsyncs it so that entries created, renamed or linked
// in it are durable.
Status SyncDir(std::string_view dir) {
  std::string name = dir.empty() ? std::string(".") : std::string(dir);
  ScopedFd fd(::open(name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) return PosixError("open directory", name, errno);
  // Some file systems cannot fsync a directory (EINVAL); their entries are
  // as durable as they get.
  if (::fsync(fd.get()) != 0 && errno != EINVAL) return PosixError("sync directory", name, errno);
  return fd.Close(name);
}

// mkdir -p that also fsyncs the parent of each directory it creates, so a
// table's new "_delta_log" directory survives a power loss with its files.
// With `unsynced_parents`, those parents are appended there instead, for the
// caller to sync (CreateDirs: once each, after creating all its directories).
Status MakeDirs(const std::string& dir, std::vector<std::string>* unsynced_parents = nullptr) {
  if (dir.empty() || dir == "/") return Status::OK();
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (::mkdir(dir.c_str(), 0777) == 0) {
      if (unsynced_parents == nullptr) return SyncDir(DirName(dir));
      unsynced_parents->emplace_back(DirName(dir));
      return Status::OK();
    }
    int err = errno;
    if (err == EEXIST) {
      struct stat st;
      if (::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return Status::OK();
      return PosixWriteError("create directory", dir, ENOTDIR);
    }
    if (err != ENOENT || attempt > 0) return PosixWriteError("create directory", dir, err);
    SILT_RETURN_NOT_OK(MakeDirs(std::string(DirName(dir)), unsynced_parents));
  }
  return Status::OK();
}

// A unique name for a temp file next to `path`. pid + per-process nonce +
// counter: unique across threads, forked children and hosts sharing an NFS
// directory.
std::string TempPathFor(const std::string& path) {
  static const unsigned nonce = std::random_device{}();
  static std::atomic<uint64_t> counter{0};
  constexpr size_t kMaxBaseChars = 100;  // keeps the temp name below NAME_MAX
  std::string_view base = BaseName(path).substr(0, kMaxBaseChars);
  std::string name = Status::Concat(".", base, ".", static_cast<long long>(::getpid()), "-", nonce,
                                    "-", counter.fetch_add(1), ".tmp");
  return JoinPath(DirName(path), name);
}

struct TempFile {
  ScopedFd fd;
  std::string path;
};

// Creates a fresh temp file for `path`, creating missing parent directories.
Result<std::unique_ptr<TempFile>> CreateTempFile(const std::string& path) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto temp = std::make_unique<TempFile>();
    temp->path = TempPathFor(path);
    int fd = ::open(temp->path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      temp->fd.Adopt(fd);
      return temp;
    }
    int err = errno;
    if (err == ENOENT) {
      SILT_RETURN_NOT_OK(MakeDirs(std::string(DirName(path))));
    } else if (err != EEXIST) {
      return PosixWriteError("create", path, err);
    }
  }
  return Status::IOError("Cannot create a temp file next to '", path, "'");
}

// Creates `path` itself for writing in place (OpenForWriteInPlace),
// creating missing parent directories; refuses to replace a file.
Result<std::unique_ptr<TempFile>> CreateInPlace(const std::string& path) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      auto file = std::make_unique<TempFile>();
      file->fd.Adopt(fd);
      file->path = path;
      return file;
    }
    int err = errno;
    if (err != ENOENT || attempt > 0) return PosixWriteError("create", path, err);
    SILT_RETURN_NOT_OK(MakeDirs(std::string(DirName(path))));
  }
  return Status::IOError("Cannot create '", path, "'");
}

Status WriteAll(int fd, std::string_view data, std::string_view path) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return PosixError("write", path, errno);
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::OK();
}

// Writes `data` to a new temp file for `path` and, with `sync`, makes it
// durable. Returns the temp file's path; the caller publishes or unlinks it.
Result<std::string> WriteTemp(const std::string& path, std::string_view data, bool sync) {
  SILT_ASSIGN_OR_RETURN(std::unique_ptr<TempFile> temp, CreateTempFile(path));
  // Errors name the final path: the temp file is our detail, not the user's.
  Status st = WriteAll(temp->fd.get(), data, path);
  if (st.ok() && sync && ::fsync(temp->fd.get()) != 0) st = PosixError("sync", path, errno);
  Status close_st = temp->fd.Close(path);
  if (st.ok()) st = close_st;
  if (!st.ok()) {
    ::unlink(temp->path.c_str());
    return st;
  }
  return std::move(temp->path);
}

// Publishes the temp file `temp` under `local` (shown as `path`) unless that
// name exists: AlreadyExists then, and the temp file is gone either way.
// renameat2's RENAME_NOREPLACE leaves no second name behind; link(2) (where
// the file system has no such rename) does, and unlinking it frees an inode:
// ext4 skips inodes freed in the last minutes when it allocates the next
// one, so a stream that dropped three temp names a batch paid for them in
// every later file creation.
Status PublishIfAbsent(const std::string& temp, const std::string& local, const std::string& path) {
  if (::renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, local.c_str(), RENAME_NOREPLACE) == 0) {
    return Status::OK();
  }
  const int rename_errno = errno;
  if (rename_errno != EINVAL && rename_errno != ENOSYS && rename_errno != EOPNOTSUPP) {
    ::unlink(temp.c_str());
    if (rename_errno == EEXIST) return Status::AlreadyExists("'", path, "' already exists");
    return PosixWriteError("create", path, rename_errno);
  }
  // link(2) publishes the complete file under its final name only if that
  // name is free; there is no window in which another writer can see or
  // replace a partial file.
  int link_result = ::link(temp.c_str(), local.c_str());
  int link_errno = errno;
  ::unlink(temp.c_str());
  if (link_result != 0) {
    if (link_errno == EEXIST) return Status::AlreadyExists("'", path, "' already exists");
    return PosixWriteError("create", path, link_errno);
  }
  return Status::OK();
}

Result<struct stat> Stat(const std::string& local, std::string_view display) {
  struct stat st;
  if (::stat(local.c_str(), &st) != 0) return PosixError("stat", display, errno);
  return st;
}

FileInfo MakeInfo(std::string path, const struct stat& st) {
  FileInfo info;
  info.path = std::move(path);
  info.is_dir = S_ISDIR(st.st_mode);
  info.size = info.is_dir ? 0 : static_cast<int64_t>(st.st_size);
  info.modification_time_ms = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 +
                              static_cast<int64_t>(st.st_mtim.tv_nsec) / 1000000;
  return info;
}

class PosixRandomAccessFile final : public RandomAccessFile {
 public:
  PosixRandomAccessFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}

  Result<int64_t> Size() override {
    struct stat st;
    if (::fstat(fd_.get(), &st) != 0) return PosixError("stat", path_, errno);
    return static_cast<int64_t>(st.st_size);
  }

  Result<std::string> ReadAt(int64_t offset, int64_t length) override {
    if (offset < 0 || length < 0) {
      return Status::InvalidArgument("Cannot read '", path_, "': negative offset ", offset,
                                     " or length ", length);
    }
    // Clamp to the file size so that "read the rest" callers may pass a huge
    // length without allocating it.
    SILT_ASSIGN_OR_RETURN(int64_t size, Size());
    if (offset >= size) return std::string();
    int64_t want = std::min(length, size - offset);
    std::string out(static_cast<size_t>(want), '\0');
    int64_t done = 0;
    while (done < want) {
      ssize_t n = ::pread(fd_.get(), out.data() + done, static_cast<size_t>(want - done),
                          static_cast<off_t>(offset + done));
      if (n < 0) {
        if (errno == EINTR) continue;
        return PosixError("read", path_, errno);
      }
      if (n == 0) break;  // the file shrank since Size(): return what is there
      done += n;
    }
    out.resize(static_cast<size_t>(done));
    return out;
  }

 private:
  ScopedFd fd_;
  std::string path_;
};

// Writes a temp file that Close() renames to `local_path`, or, when the
// temp's path is `local_path` itself (OpenForWriteInPlace), the file in
// place: then Close() has nothing to rename, and the directory's fsync
// after the file's finds the new entry already written on file systems
// that sync a new file's entry with it (ext4), where a rename would have
// changed the directory again.
class PosixWritableFile final : public WritableFile {
 public:
  PosixWritableFile(std::unique_ptr<TempFile> temp, std::string local_path)
      : temp_(std::move(temp)), path_(std::move(local_path)), in_place_(temp_->path == path_) {}

  ~PosixWritableFile() override {
    if (!done_) Abort().IgnoreError("a writer destroyed without Close() discards its file");
  }

  Status Append(std::string_view data) override {
    if (done_) return Status::InvalidArgument("Cannot append to '", path_, "': already closed");
    bytes_written_ += static_cast<int64_t>(data.size());
    if (buffer_.size() + data.size() <= kBufferSize) {
      buffer_.append(data);
      return Status::OK();
    }
    SILT_RETURN_NOT_OK(Flush());
    if (data.size() >= kBufferSize) return WriteAll(temp_->fd.get(), data, path_);
    buffer_.append(data);
    return Status::OK();
  }

  Status Close() override {
    if (done_) return Status::InvalidArgument("Cannot close '", path_, "': already closed");
    done_ = true;
    Status st = Flush();
    if (st.ok() && ::fsync(temp_->fd.get()) != 0) st = PosixError("sync", path_, errno);
    Status close_st = temp_->fd.Close(path_);
    if (st.ok()) st = close_st;
    if (st.ok() && !in_place_ && ::rename(temp_->path.c_str(), path_.c_str()) != 0) {
      st = PosixWriteError("replace", path_, errno);
    }
    if (!st.ok()) {
      ::unlink(temp_->path.c_str());
      return st;
    }
    return SyncDir(DirName(path_));
  }

  Status Abort() override {
    if (done_) return Status::OK();
    done_ = true;
    temp_->fd.Close(path_).IgnoreError("the data is being discarded");
    if (::unlink(temp_->path.c_str()) != 0 && errno != ENOENT) {
      return PosixError("delete", temp_->path, errno);
    }
    return Status::OK();
  }

  int64_t bytes_written() const override { return bytes_written_; }

 private:
  // Small appends (Parquet page headers, footers) are gathered so that each
  // write(2) moves a useful amount of data.
  static constexpr size_t kBufferSize = 64 * 1024;

  Status Flush() {
    if (buffer_.empty()) return Status::OK();
    Status st = WriteAll(temp_->fd.get(), buffer_, path_);
    buffer_.clear();
    return st;
  }

  std::unique_ptr<TempFile> temp_;
  std::string path_;
  bool in_place_;
  std::string buffer_;
  int64_t bytes_written_ = 0;
  bool done_ = false;
};

// Appends the entries of `local_dir` to `out` with paths under `display_dir`.
// Recurses into directories (following symlinks) when `recursive`, then
// reporting files only.
// With `temps`, only our orphaned temp files are reported (which the
// normal listing skips).
Status ListLocal(const std::string& local_dir, const std::string& display_dir, bool recursive,
                 std::vector<FileInfo>* out, bool temps = false) {
  DIR* dir = ::opendir(local_dir.c_str());
  if (dir == nullptr) {
    // Like an object store, a missing directory (or a file, which has no
    // children) lists as empty.
    if (errno == ENOENT || errno == ENOTDIR) return Status::OK();
    return PosixError("list", display_dir, errno);
  }
  std::vector<std::string> subdirs;
  Status st;
  while (true) {
    errno = 0;
    struct dirent* entry = ::readdir(dir);
    if (entry == nullptr) {
      if (errno != 0) st = PosixError("list", display_dir, errno);
      break;
    }
    std::string_view name(entry->d_name);
    if (name == "." || name == "..") continue;
    const bool temp = IsTempFileName(name);
    if (temp && !temps) continue;
    struct stat info;
    if (::fstatat(::dirfd(dir), entry->d_name, &info, 0) != 0) {
      // Deleted between readdir and stat (a concurrent vacuum): not listed.
      if (errno == ENOENT) continue;
      st = PosixError("stat", JoinPath(display_dir, name), errno);
      break;
    }
    if (recursive && S_ISDIR(info.st_mode)) {
      subdirs.emplace_back(name);
    } else if (temp == temps) {
      out->push_back(MakeInfo(JoinPath(display_dir, name), info));
    }
  }
  ::closedir(dir);
  SILT_RETURN_NOT_OK(st);
  for (const std::string& name : subdirs) {
    SILT_RETURN_NOT_OK(
        ListLocal(JoinPath(local_dir, name), JoinPath(display_dir, name), recursive, out, temps));
  }
  return Status::OK();
}

void SortByPath(std::vector<FileInfo>* infos) {
  std::sort(infos->begin(), infos->end(),
            [](const FileInfo& a, const FileInfo& b) { return a.path < b.path; });
}

class LocalFileSystem final : public FileSystem {
 public:
  std::string_view name() const override { return "local"; }

  Result<std::unique_ptr<RandomAccessFile>> OpenForRead(const std::string& path) override {
    SILT_ASSIGN_OR_RETURN(std::string local, ToLocalPath(path));
    int fd = ::open(local.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return PosixError("open", path, errno);
    auto file = std::make_unique<PosixRandomAccessFile>(fd, path);
    struct stat st;
    if (::fstat(fd, &st) != 0) return PosixError("stat", path, errno);
    if (S_ISDIR(st.st_mode)) return PosixError("read", path, EISDIR);
    return std::unique_ptr<RandomAccessFile>(std::move(file));
  }

  Status WriteFile(const std::string& path, std::string_view data) override {
    SILT_ASSIGN_OR_RETURN(std::string local, ToLocalPath(path));
    SILT_ASSIGN_OR_RETURN(std::string temp, WriteTemp(local, data, /*sync=*/true));
    if (::rename(temp.c_str(), local.c_str()) != 0) {
      Status st = PosixWriteError("replace", path, errno);
      ::unlink(temp.c_str());
      return st;
    }
    return SyncDir(DirName(local));
  }

  Status PutIfAbsent(const std::string& path, std::string_view data) override {
    SILT_ASSIGN_OR_RETURN(std::string local, ToLocalPath(path));
    SILT_ASSIGN_OR_RETURN(std::string temp, WriteTemp(local, data, /*sync=*/true));
    SILT_RETURN_NOT_OK(PublishIfAbsent(temp, local, path));
    return SyncDir(DirName(local));
  }

  Status PutIfAbsentUnsynced(const std::string& path, std::string_view data) override {
    SILT_ASSIGN_OR_RETURN(std::string local, ToLocalPath(path));
    SILT_ASSIGN_OR_RETURN(std::string temp, WriteTemp(local, data, /*sync=*/false));
    return PublishIfAbsent(temp, local, path);
  }

  Result<std::unique_ptr<WritableFile>> OpenForWrite(const std::string& path) override {
    SILT_ASSIGN_OR_RETURN(std::string local, ToLocalPath(path));
    SILT_ASSIGN_OR_RETURN(std::unique_ptr<TempFile> temp, CreateTempFile(local));
    return std::unique_ptr<WritableFile>(
        std::make_unique<PosixWritableFile>(std::move(temp), std::move(local)));
  }

  Result<std::unique_ptr<WritableFile>> OpenForWriteInPlace(const std::string& path) override {
    SILT_ASSIGN_OR_RETURN(std::string local, ToLocalPath(path));
    SILT_ASSIGN_OR_RETURN(std::unique_ptr<TempFile> file, CreateInPlace(local));
    return std::unique_ptr<WritableFile>(
        std::make_unique<PosixWritableFile>(std::move(file), std::move(local)));
  }

  Result<FileInfo> GetFileInfo(const std::string& path) override {
    SILT_ASSIGN_OR_RETURN(std::string local, ToLocalPath(path));
    SILT_ASSIGN_OR_RETURN(struct stat st, Stat(local, path));
    return MakeInfo(path, st);
  }

  Result<std::vector<FileInfo>> ListDir(const std::string& dir) override {
    SILT_ASSIGN_OR_RETURN(std::string local, ToLocalPath(dir));
    std::vector<FileInfo> out;
    SILT_RETURN_NOT_OK(
        ListLocal(local, std::string(internal::StripTrailingSlashes(dir)), false, &out));
    SortByPath(&out);
    return out;
  }

  Result<std::vector<FileInfo>> ListRecursive(const std::string& dir) override {
    SILT_ASSIGN_OR_RETURN(std::string local, ToLocalPath(dir));
    std::vector<FileInfo> out;
    SILT_RETURN_NOT_OK(
        ListLocal(local, std::string(internal::StripTrailingSlashes(dir)), true, &out));
    SortByPath(&out);
    return out;
  }

  Result<std::vector<FileInfo>> ListOrphanedTemps(const std::string& dir) override {
    SILT_ASSIGN_OR_RETURN(std::string local, ToLocalPath(dir));
    std::vector<FileInfo> out;
    SILT_RETURN_NOT_OK(ListLocal(local, std::string(internal::StripTrailingSlashes(dir)), true,
                                 &out, /*temps=*/true));
    SortByPath(&out);
    return out;
  }

  Status DeleteFile(const std::string& path) override {
    SILT_ASSIGN_OR_RETURN(std::string local, ToLocalPath(path));
    if (::unlink(local.c_str()) != 0) return PosixError("delete", path, errno);
    return Status::OK();
  }

  Status CreateDir(const std::string& path) override {
    SILT_ASSIGN_OR_RETURN(std::string local, ToLocalPath(path));
    return MakeDirs(local);
  }

  Status CreateDirs(const std::vector<std::string>& paths) override {
    std::vector<std::string> parents;
    for (const std::string& path : paths) {
      SILT_ASSIGN_OR_RETURN(std::string local, ToLocalPath(path));
      SILT_RETURN_NOT_OK(MakeDirs(local, &parents));
    }
    std::sort(parents.begin(), parents.end());
    parents.erase(std::unique(parents.begin(), parents.end()), parents.end());
    for (const std::string& parent : parents) SILT_RETURN_NOT_OK(SyncDir(parent));
    return Status::OK();
  }

  Status DeleteDirRecursive(const std::string& path) override {
    SILT_ASSIGN_OR_RETURN(std::string local, ToLocalPath(path));
    std::error_code ec;
    std::filesystem::remove_all(local, ec);
    if (ec) return Status::IOError("Cannot delete directory '", path, "': ", ec.message());
    return Status::OK();
  }
};

}  // namespace

FileSystemPtr MakeLocalFileSystem() { return std::make_shared<LocalFileSystem>(); }

void DropCachedPages(FileSystem* fs, const std::string& path) {
  if (fs == nullptr || fs->name() != "local") return;
  Result<std::string> local = ToLocalPath(path);
  if (!local.ok()) return;
  ScopedFd fd(::open(local->c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return;
  (void)::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_DONTNEED);
}

}  // namespace silt::fs
