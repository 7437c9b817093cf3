#include "silt/stream/checkpoint/checkpoint_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace silt::stream {

namespace {

constexpr char kLockFile[] = ".silt-lock";

std::string ReadOwner(int fd) {
  char buf[32] = {};
  ssize_t n = ::pread(fd, buf, sizeof(buf) - 1, 0);
  std::string owner = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
  while (!owner.empty() && (owner.back() == '\n' || owner.back() == ' ')) owner.pop_back();
  return owner.empty() ? "unknown" : owner;
}

}  // namespace

Result<std::unique_ptr<CheckpointLock>> CheckpointLock::Acquire(const std::string& local_dir) {
  std::error_code ec;
  std::filesystem::create_directories(local_dir, ec);
  if (ec) {
    return Status::IOError("cannot create checkpoint directory '", local_dir, "': ", ec.message());
  }
  std::string path = local_dir + "/" + kLockFile;
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Status::IOError("cannot open lock file '", path, "': ", std::strerror(errno));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    if (err == EWOULDBLOCK) {
      std::string owner = ReadOwner(fd);
      ::close(fd);
      return Status::Conflict("checkpoint ", local_dir, " is in use by another silt process (pid ",
                              owner, ")");
    }
    ::close(fd);
    return Status::IOError("cannot lock '", path, "': ", std::strerror(err));
  }
  // Best effort: the pid only improves the message a second starter sees.
  std::string pid = std::to_string(static_cast<long long>(::getpid())) + "\n";
  if (::ftruncate(fd, 0) == 0) {
    ssize_t written = ::pwrite(fd, pid.data(), pid.size(), 0);
    (void)written;
  }
  return std::unique_ptr<CheckpointLock>(new CheckpointLock(fd));
}

CheckpointLock::~CheckpointLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace silt::stream
