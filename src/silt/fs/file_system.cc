#include "silt/fs/file_system.h"

#include <cctype>
#include <filesystem>
#include <system_error>

#include "silt/base/strings.h"
#include "silt/fs/path_internal.h"
#include "silt/fs/s3_file_system.h"

namespace silt::fs {

namespace internal {

namespace {

bool IsSchemeChar(char c, bool first) {
  if (std::isalpha(static_cast<unsigned char>(c))) return true;
  if (first) return false;
  return std::isdigit(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.';
}

}  // namespace

std::string_view Scheme(std::string_view path) {
  size_t end = path.find("://");
  if (end == std::string_view::npos || end == 0) return {};
  for (size_t i = 0; i < end; ++i) {
    if (!IsSchemeChar(path[i], i == 0)) return {};
  }
  return path.substr(0, end);
}

size_t RootLength(std::string_view path) {
  std::string_view scheme = Scheme(path);
  if (!scheme.empty()) return scheme.size() + 3;
  return !path.empty() && path[0] == '/' ? 1 : 0;
}

std::string_view StripTrailingSlashes(std::string_view path) {
  size_t root = RootLength(path);
  size_t end = path.size();
  while (end > root && path[end - 1] == '/') --end;
  return path.substr(0, end);
}

std::string_view StripFileScheme(std::string_view path) {
  if (StartsWithIgnoreCase(path, "file://localhost/")) return path.substr(16);
  if (StartsWithIgnoreCase(path, "file://")) return path.substr(7);
  // Hadoop and Spark print local URIs as "file:/tmp/x".
  if (StartsWithIgnoreCase(path, "file:/")) return path.substr(5);
  return path;
}

}  // namespace internal

Result<std::string> FileSystem::ReadFile(const std::string& path) {
  SILT_ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessFile> file, OpenForRead(path));
  SILT_ASSIGN_OR_RETURN(int64_t size, file->Size());
  return file->ReadAt(0, size);
}

Result<bool> FileSystem::Exists(const std::string& path) {
  Result<FileInfo> info = GetFileInfo(path);
  if (info.ok()) return true;
  if (info.status().IsNotFound()) return false;
  return info.status();
}

Status FileSystem::DeleteFiles(const std::vector<std::string>& paths) {
  for (const std::string& path : paths) {
    Status st = DeleteFile(path);
    if (!st.ok() && !st.IsNotFound()) return st;
  }
  return Status::OK();
}

Status FileSystem::CreateDirs(const std::vector<std::string>& paths) {
  for (const std::string& path : paths) SILT_RETURN_NOT_OK(CreateDir(path));
  return Status::OK();
}

Result<FileSystemPtr> FileSystemForPath(const std::string& path_or_uri) {
  std::string_view scheme = internal::Scheme(path_or_uri);
  if (scheme.empty() || EqualsIgnoreCase(scheme, "file")) {
    // One shared instance: the local file system holds no state.
    static const FileSystemPtr local = MakeLocalFileSystem();
    return local;
  }
  if (EqualsIgnoreCase(scheme, "memory")) {
    static const FileSystemPtr memory = MakeMemoryFileSystem();
    return memory;
  }
  if (EqualsIgnoreCase(scheme, "s3") || EqualsIgnoreCase(scheme, "s3a")) {
    Result<FileSystemPtr> s3 = DefaultS3FileSystem();
    if (!s3.ok()) return s3.status().WithContextParts("Cannot open '", path_or_uri, "'");
    return s3;
  }
  return Status::NotSupported("storage scheme '", scheme, "://' in '", path_or_uri,
                              "' (supported: local paths, file://, s3://, s3a://, memory://)");
}

std::string NormalizePath(const std::string& path_or_uri) {
  if (path_or_uri.empty()) return {};
  std::string_view stripped = internal::StripFileScheme(path_or_uri);
  if (!internal::Scheme(stripped).empty()) {
    return std::string(internal::StripTrailingSlashes(stripped));
  }
  std::filesystem::path local(stripped);
  if (local.is_relative()) {
    std::error_code ec;
    std::filesystem::path cwd = std::filesystem::current_path(ec);
    // Without a working directory the path stays relative; the first I/O on
    // it then reports the problem with the path in the message.
    if (!ec) local = cwd / local;
  }
  std::string normal = local.lexically_normal().string();
  return std::string(internal::StripTrailingSlashes(normal));
}

std::string JoinPath(std::string_view dir, std::string_view name) {
  std::string_view head = internal::StripTrailingSlashes(dir);
  size_t first = name.find_first_not_of('/');
  std::string_view tail = first == std::string_view::npos ? std::string_view() : name.substr(first);
  if (head.empty()) return std::string(tail);
  std::string out(head);
  if (tail.empty()) return out;
  if (out.back() != '/') out.push_back('/');
  out.append(tail);
  return out;
}

std::string_view BaseName(std::string_view path) {
  std::string_view p = internal::StripTrailingSlashes(path);
  size_t root = internal::RootLength(p);
  size_t slash = p.rfind('/');
  if (slash == std::string_view::npos) return p;
  if (slash < root) return p.substr(root);
  return p.substr(slash + 1);
}

std::string_view DirName(std::string_view path) {
  std::string_view p = internal::StripTrailingSlashes(path);
  size_t root = internal::RootLength(p);
  size_t slash = p.rfind('/');
  if (slash == std::string_view::npos) return {};
  if (slash < root) return p.substr(0, root);
  return internal::StripTrailingSlashes(p.substr(0, slash));
}

}  // namespace silt::fs
