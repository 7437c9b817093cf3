// FileSystem: the only road from silt to storage. Local disk, S3 and memory
// implement it; tests wrap it to inject faults (ForwardingFileSystem).
//
// Paths are absolute strings in the implementation's namespace: a local path
// ("/data/table/_delta_log/00000000000000000000.json") or a URI whose scheme
// selects the implementation ("s3://bucket/key", "memory://x"). Directories
// are implicit on object stores: List() returns entries under a prefix, and
// writing a file creates its parents.
//
// Durability contract: a file written with WriteFile or PutIfAbsent is durable
// (fsync'd locally, acknowledged by the store) when the call returns OK, and
// becomes visible all at once: readers never see a partial file. The one
// exception is asked for by name: PutIfAbsentUnsynced publishes a file
// without syncing it, for files whose loss a reader recovers from (see
// there). A crash of the process alone never loses an acknowledged write;
// "durable" is about crashes of the machine (power loss, kernel panic).
//
// Errors (every method): NotFound when the path does not exist (named in the
// message); IOError for anything else the storage reports, with `retryable`
// set when repeating the same call may succeed.
//
// Thread safety: implementations are safe to call concurrently from several
// threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "silt/base/result.h"

namespace silt::fs {

struct FileInfo {
  std::string path;  // full path, same form as the listed directory + "/" + name
  int64_t size = 0;
  int64_t modification_time_ms = 0;
  bool is_dir = false;
};

// A file opened for reading with random access (ranged reads on S3).
class RandomAccessFile {
 public:
  virtual ~RandomAccessFile() = default;
  virtual Result<int64_t> Size() = 0;
  // Reads up to `length` bytes at `offset`; fewer only at end of file.
  virtual Result<std::string> ReadAt(int64_t offset, int64_t length) = 0;
};

// A file being written sequentially. Nothing is visible under the final path
// until Close() returns OK; Abort() (or destruction without Close) discards it.
class WritableFile {
 public:
  virtual ~WritableFile() = default;
  virtual Status Append(std::string_view data) = 0;
  // Makes the whole file durable and visible. The file must not be used after.
  virtual Status Close() = 0;
  virtual Status Abort() = 0;
  virtual int64_t bytes_written() const = 0;
};

class FileSystem {
 public:
  virtual ~FileSystem() = default;

  // Name for messages ("local", "s3", "memory").
  virtual std::string_view name() const = 0;

  virtual Result<std::unique_ptr<RandomAccessFile>> OpenForRead(const std::string& path) = 0;
  // Whole-file convenience read.
  virtual Result<std::string> ReadFile(const std::string& path);

  // Creates or replaces `path` atomically (write temp, sync, rename locally;
  // single PUT on S3). Creates parent directories as needed.
  virtual Status WriteFile(const std::string& path, std::string_view data) = 0;

  // Creates `path` with `data` only if nothing exists there. Returns
  // AlreadyExists if another writer created it first — on the same machine or
  // another one sharing the store. Used for Delta commits and checkpoint
  // files. The file is durable and complete when OK is returned.
  virtual Status PutIfAbsent(const std::string& path, std::string_view data) = 0;

  // PutIfAbsent without the durability: the file is complete and visible
  // all at once when OK is returned, and a second writer still loses with
  // AlreadyExists, but nothing is synced. A crash of the process loses
  // nothing; after a crash of the machine the file may be missing, or be
  // there empty or cut short, so only files a reader can do without may be
  // written this way, and their readers must treat an unreadable one as
  // absent (Spark's commits/N: decision 157). The local file system skips
  // both fsyncs (the file's and its directory's); the default, for stores
  // whose every write is durable (S3, memory), is PutIfAbsent.
  virtual Status PutIfAbsentUnsynced(const std::string& path, std::string_view data) {
    return PutIfAbsent(path, data);
  }

  // Streaming writer for large files (Parquet data files). Visible only after
  // Close(). Replaces any existing file at `path`.
  virtual Result<std::unique_ptr<WritableFile>> OpenForWrite(const std::string& path) = 0;

  // OpenForWrite for a new file that no reader looks for by its name until
  // the writer names it somewhere else (a Delta data file, which readers
  // find only in a commit written after Close): the file may be written in
  // place, under `path` itself. Close() makes it durable (its bytes and its
  // directory entry) as OpenForWrite's does, but until then a listing of
  // the directory may show it partial, and a crash may leave it so; Abort()
  // deletes it. REQUIRES: nothing exists at `path` (the local file system
  // refuses to replace a file: IOError). The default, for stores whose
  // objects appear only complete (S3, memory) and for wrappers, is
  // OpenForWrite.
  virtual Result<std::unique_ptr<WritableFile>> OpenForWriteInPlace(const std::string& path) {
    return OpenForWrite(path);
  }

  virtual Result<FileInfo> GetFileInfo(const std::string& path) = 0;
  // True when a file (or, locally, a directory) exists at `path`.
  virtual Result<bool> Exists(const std::string& path);

  // Entries directly under directory `dir` (not recursive), sorted by path.
  // A missing directory yields an empty list, not NotFound.
  virtual Result<std::vector<FileInfo>> ListDir(const std::string& dir) = 0;
  // All files under `dir` at any depth, sorted by path (no directories).
  virtual Result<std::vector<FileInfo>> ListRecursive(const std::string& dir) = 0;

  // The temp files under `dir` (any depth) that writes of this file system
  // left unpublished because the process died mid-write (the local file
  // system's hidden ".<name>.<pid>-<nonce>-<n>.tmp"; listings skip them).
  // A live writer's temp is listed too: callers delete only old ones. The
  // default lists none (object-store writes leave no object behind).
  virtual Result<std::vector<FileInfo>> ListOrphanedTemps(const std::string& dir) {
    (void)dir;
    return std::vector<FileInfo>();
  }

  // Deletes a file. NotFound if it does not exist.
  virtual Status DeleteFile(const std::string& path) = 0;
  // Deletes many files (vacuum); files already gone are not an error. Object
  // stores override it with batch requests (S3 DeleteObjects, 1000 keys per
  // request); the default deletes one at a time. After an error, some of the
  // files may be deleted and others not.
  virtual Status DeleteFiles(const std::vector<std::string>& paths);
  // Creates a directory and its parents (no-op on object stores).
  virtual Status CreateDir(const std::string& path) = 0;
  // CreateDir for each of `paths`, where a store can do it for less than one
  // call each: the local file system creates every missing directory first
  // and then syncs each of their parents once (a batch's new partition
  // directories mostly share a parent) instead of once per directory. When
  // it returns OK, every directory exists and its entry is durable. The
  // default calls CreateDir for each path.
  virtual Status CreateDirs(const std::vector<std::string>& paths);
  // Deletes a directory tree (tests, vacuum of empty dirs). A missing
  // directory is not an error: object stores have no empty directories.
  virtual Status DeleteDirRecursive(const std::string& path) = 0;
};

using FileSystemPtr = std::shared_ptr<FileSystem>;

// Forwards every call to a wrapped FileSystem; test doubles override the
// methods they want to break.
class ForwardingFileSystem : public FileSystem {
 public:
  explicit ForwardingFileSystem(FileSystemPtr target) : target_(std::move(target)) {}
  std::string_view name() const override { return target_->name(); }
  Result<std::unique_ptr<RandomAccessFile>> OpenForRead(const std::string& path) override {
    return target_->OpenForRead(path);
  }
  Result<std::string> ReadFile(const std::string& path) override { return target_->ReadFile(path); }
  Status WriteFile(const std::string& path, std::string_view data) override {
    return target_->WriteFile(path, data);
  }
  Status PutIfAbsent(const std::string& path, std::string_view data) override {
    return target_->PutIfAbsent(path, data);
  }
  Status PutIfAbsentUnsynced(const std::string& path, std::string_view data) override {
    return target_->PutIfAbsentUnsynced(path, data);
  }
  Result<std::unique_ptr<WritableFile>> OpenForWrite(const std::string& path) override {
    return target_->OpenForWrite(path);
  }
  // OpenForWriteInPlace is not forwarded: the default calls this object's
  // OpenForWrite, so a double that overrides OpenForWrite (to drop unsynced
  // data, to fail) sees data files too.
  Result<FileInfo> GetFileInfo(const std::string& path) override {
    return target_->GetFileInfo(path);
  }
  Result<bool> Exists(const std::string& path) override { return target_->Exists(path); }
  Result<std::vector<FileInfo>> ListDir(const std::string& dir) override {
    return target_->ListDir(dir);
  }
  Result<std::vector<FileInfo>> ListRecursive(const std::string& dir) override {
    return target_->ListRecursive(dir);
  }
  Result<std::vector<FileInfo>> ListOrphanedTemps(const std::string& dir) override {
    return target_->ListOrphanedTemps(dir);
  }
  Status DeleteFile(const std::string& path) override { return target_->DeleteFile(path); }
  Status DeleteFiles(const std::vector<std::string>& paths) override {
    return target_->DeleteFiles(paths);
  }
  Status CreateDir(const std::string& path) override { return target_->CreateDir(path); }
  // CreateDirs is not forwarded either: the default calls this object's
  // CreateDir.
  Status DeleteDirRecursive(const std::string& path) override {
    return target_->DeleteDirRecursive(path);
  }

 protected:
  const FileSystemPtr& target() const { return target_; }

 private:
  FileSystemPtr target_;
};

// The local disk. Paths are absolute local paths ("file://" prefix accepted).
FileSystemPtr MakeLocalFileSystem();
// An in-memory store, private to the returned object.
FileSystemPtr MakeMemoryFileSystem();

// Picks the file system for a path or URI: "s3://", "s3a://" -> S3 with the
// process-wide settings (SetS3Settings in s3_file_system.h, else the
// environment), "memory://" -> a process-wide memory store, anything else ->
// local. Relative local paths are made absolute.
Result<FileSystemPtr> FileSystemForPath(const std::string& path_or_uri);
// Normalizes a user path: relative local paths become absolute, "file://" is
// stripped, trailing slashes dropped.
std::string NormalizePath(const std::string& path_or_uri);
// Joins `dir` and `name` with exactly one '/' ("memory://" + "x" gives
// "memory://x"); an empty `dir` yields `name`.
std::string JoinPath(std::string_view dir, std::string_view name);
// The last component of a path ("c" for "/a/b/c" and "s3://b/c"; trailing
// slashes ignored).
std::string_view BaseName(std::string_view path);
// Everything before the last '/', but never less than the root: "/a/b" for
// "/a/b/c", "/" for "/a", "memory://" for "memory://a", "" for "a".
std::string_view DirName(std::string_view path);

}  // namespace silt::fs
