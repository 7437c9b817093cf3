// An in-memory FileSystem with object-store semantics: a sorted map from path
// to immutable contents. Directories are implicit (a path is a directory when
// some file lies under it), CreateDir is a no-op, and a file becomes visible
// in a single step under the store's mutex, which gives WriteFile,
// PutIfAbsent and WritableFile::Close the same all-or-nothing visibility as
// the local file system.

#include <algorithm>
#include <iterator>
#include <map>
#include <mutex>

#include "silt/base/clock.h"
#include "silt/fs/file_system.h"
#include "silt/fs/path_internal.h"

namespace silt::fs {

namespace {

struct Entry {
  // Shared so that open readers keep the bytes they opened after a replace.
  std::shared_ptr<const std::string> data;
  int64_t modification_time_ms = 0;
};

// The store shared by the file system and its open writers.
struct Store {
  std::mutex mutex;
  std::map<std::string, Entry, std::less<>> files;  // guarded by mutex

  static int64_t NowMs() { return SystemClock().NowMicros() / 1000; }

  void Put(const std::string& key, std::string data) {
    Entry entry{std::make_shared<const std::string>(std::move(data)), NowMs()};
    std::lock_guard<std::mutex> lock(mutex);
    files[key] = std::move(entry);
  }
};

Result<std::string> ToKey(const std::string& path) {
  if (path.empty()) return Status::InvalidArgument("empty path given to the memory file system");
  return std::string(internal::StripTrailingSlashes(path));
}

// "dir/" as a key prefix; the root of a URI ("memory://") already ends in '/'.
std::string ChildPrefix(const std::string& dir_key) {
  if (!dir_key.empty() && dir_key.back() == '/') return dir_key;
  return dir_key + "/";
}

// REQUIRES: the store's mutex is held.
bool HasChildren(const Store& store, const std::string& dir_key) {
  std::string prefix = ChildPrefix(dir_key);
  auto it = store.files.lower_bound(prefix);
  return it != store.files.end() && it->first.starts_with(prefix);
}

Status NotFoundError(std::string_view action, std::string_view path) {
  return Status::NotFound("Cannot ", action, " '", path, "': No such file");
}

class MemoryRandomAccessFile final : public RandomAccessFile {
 public:
  MemoryRandomAccessFile(std::shared_ptr<const std::string> data, std::string path)
      : data_(std::move(data)), path_(std::move(path)) {}

  Result<int64_t> Size() override { return static_cast<int64_t>(data_->size()); }

  Result<std::string> ReadAt(int64_t offset, int64_t length) override {
    if (offset < 0 || length < 0) {
      return Status::InvalidArgument("Cannot read '", path_, "': negative offset ", offset,
                                     " or length ", length);
    }
    int64_t size = static_cast<int64_t>(data_->size());
    if (offset >= size) return std::string();
    int64_t n = std::min(length, size - offset);
    return data_->substr(static_cast<size_t>(offset), static_cast<size_t>(n));
  }

 private:
  std::shared_ptr<const std::string> data_;
  std::string path_;
};

class MemoryWritableFile final : public WritableFile {
 public:
  MemoryWritableFile(std::shared_ptr<Store> store, std::string key)
      : store_(std::move(store)), key_(std::move(key)) {}

  Status Append(std::string_view data) override {
    if (done_) return Status::InvalidArgument("Cannot append to '", key_, "': already closed");
    buffer_.append(data);
    bytes_written_ += static_cast<int64_t>(data.size());
    return Status::OK();
  }

  Status Close() override {
    if (done_) return Status::InvalidArgument("Cannot close '", key_, "': already closed");
    done_ = true;
    store_->Put(key_, std::move(buffer_));
    return Status::OK();
  }

  Status Abort() override {
    done_ = true;
    buffer_.clear();
    return Status::OK();
  }

  int64_t bytes_written() const override { return bytes_written_; }

 private:
  std::shared_ptr<Store> store_;
  std::string key_;
  std::string buffer_;
  int64_t bytes_written_ = 0;
  bool done_ = false;
};

class MemoryFileSystem final : public FileSystem {
 public:
  MemoryFileSystem() : store_(std::make_shared<Store>()) {}

  std::string_view name() const override { return "memory"; }

  Result<std::unique_ptr<RandomAccessFile>> OpenForRead(const std::string& path) override {
    SILT_ASSIGN_OR_RETURN(std::string key, ToKey(path));
    std::lock_guard<std::mutex> lock(store_->mutex);
    auto it = store_->files.find(key);
    if (it == store_->files.end()) {
      if (HasChildren(*store_, key)) {
        return Status::IOError("Cannot read '", path, "': Is a directory");
      }
      return NotFoundError("open", path);
    }
    return std::unique_ptr<RandomAccessFile>(
        std::make_unique<MemoryRandomAccessFile>(it->second.data, path));
  }

  Status WriteFile(const std::string& path, std::string_view data) override {
    SILT_ASSIGN_OR_RETURN(std::string key, ToKey(path));
    store_->Put(key, std::string(data));
    return Status::OK();
  }

  Status PutIfAbsent(const std::string& path, std::string_view data) override {
    SILT_ASSIGN_OR_RETURN(std::string key, ToKey(path));
    Entry entry{std::make_shared<const std::string>(data), Store::NowMs()};
    std::lock_guard<std::mutex> lock(store_->mutex);
    if (store_->files.contains(key) || HasChildren(*store_, key)) {
      return Status::AlreadyExists("'", path, "' already exists");
    }
    store_->files.emplace(std::move(key), std::move(entry));
    return Status::OK();
  }

  Result<std::unique_ptr<WritableFile>> OpenForWrite(const std::string& path) override {
    SILT_ASSIGN_OR_RETURN(std::string key, ToKey(path));
    return std::unique_ptr<WritableFile>(
        std::make_unique<MemoryWritableFile>(store_, std::move(key)));
  }

  Result<FileInfo> GetFileInfo(const std::string& path) override {
    SILT_ASSIGN_OR_RETURN(std::string key, ToKey(path));
    std::lock_guard<std::mutex> lock(store_->mutex);
    FileInfo info;
    info.path = path;
    auto it = store_->files.find(key);
    if (it != store_->files.end()) {
      info.size = static_cast<int64_t>(it->second.data->size());
      info.modification_time_ms = it->second.modification_time_ms;
      return info;
    }
    if (!HasChildren(*store_, key)) return NotFoundError("stat", path);
    info.is_dir = true;
    return info;
  }

  Result<std::vector<FileInfo>> ListDir(const std::string& dir) override {
    SILT_ASSIGN_OR_RETURN(std::string key, ToKey(dir));
    std::string prefix = ChildPrefix(key);
    std::vector<FileInfo> out;
    std::lock_guard<std::mutex> lock(store_->mutex);
    for (auto it = store_->files.lower_bound(prefix);
         it != store_->files.end() && it->first.starts_with(prefix); ++it) {
      std::string_view rest = std::string_view(it->first).substr(prefix.size());
      size_t slash = rest.find('/');
      if (slash == std::string_view::npos) {
        out.push_back(FileInfo{it->first, static_cast<int64_t>(it->second.data->size()),
                               it->second.modification_time_ms, false});
        continue;
      }
      // All keys under "dir/sub/" are contiguous in the map: report the
      // subdirectory once and jump past them ('0' follows '/').
      std::string sub = prefix + std::string(rest.substr(0, slash));
      it = std::prev(store_->files.lower_bound(sub + "0"));
      out.push_back(FileInfo{std::move(sub), 0, 0, true});
    }
    // A subdirectory "a" is found after files such as "a.b" ('.' < '/').
    std::sort(out.begin(), out.end(),
              [](const FileInfo& a, const FileInfo& b) { return a.path < b.path; });
    return out;
  }

  Result<std::vector<FileInfo>> ListRecursive(const std::string& dir) override {
    SILT_ASSIGN_OR_RETURN(std::string key, ToKey(dir));
    std::string prefix = ChildPrefix(key);
    std::vector<FileInfo> out;
    std::lock_guard<std::mutex> lock(store_->mutex);
    // Map order is path order, so the result is already sorted.
    for (auto it = store_->files.lower_bound(prefix);
         it != store_->files.end() && it->first.starts_with(prefix); ++it) {
      out.push_back(FileInfo{it->first, static_cast<int64_t>(it->second.data->size()),
                             it->second.modification_time_ms, false});
    }
    return out;
  }

  Status DeleteFile(const std::string& path) override {
    SILT_ASSIGN_OR_RETURN(std::string key, ToKey(path));
    std::lock_guard<std::mutex> lock(store_->mutex);
    if (store_->files.erase(key) == 0) return NotFoundError("delete", path);
    return Status::OK();
  }

  Status CreateDir(const std::string& path) override {
    // Directories are implicit; only the argument is checked.
    return ToKey(path).status();
  }

  Status DeleteDirRecursive(const std::string& path) override {
    SILT_ASSIGN_OR_RETURN(std::string key, ToKey(path));
    std::string prefix = ChildPrefix(key);
    std::lock_guard<std::mutex> lock(store_->mutex);
    auto first = store_->files.lower_bound(prefix);
    auto last = first;
    while (last != store_->files.end() && last->first.starts_with(prefix)) ++last;
    store_->files.erase(first, last);
    return Status::OK();
  }

 private:
  std::shared_ptr<Store> store_;
};

}  // namespace

FileSystemPtr MakeMemoryFileSystem() { return std::make_shared<MemoryFileSystem>(); }

}  // namespace silt::fs
