#include "silt/stream/source/mqtt_wal.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>

#include "silt/base/logging.h"

namespace silt::stream {

namespace {

constexpr std::string_view kMagic("SILTMQW1", 8);
constexpr int64_t kHeaderBytes = 16;  // magic + first seq
constexpr int64_t kFrameBytes = 8;    // body length + CRC-32C
// seq, arrival, message id, qos, flags, topic length.
constexpr int64_t kBodyFixedBytes = 8 + 8 + 2 + 1 + 1 + 4;

// CRC-32C (Castagnoli), reflected, as in iSCSI and RocksDB.
uint32_t Crc32c(std::string_view data) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0x82F63B78u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char ch : data) crc = table[(crc ^ ch) & 0xFF] ^ (crc >> 8);
  return crc ^ 0xFFFFFFFFu;
}

void PutLE(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

uint64_t GetLE(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
  return v;
}

void EncodeRecord(const MqttWalRecord& r, std::string* out) {
  std::string body;
  body.reserve(static_cast<size_t>(kBodyFixedBytes) + r.topic.size() + r.payload.size());
  PutLE(&body, static_cast<uint64_t>(r.seq), 8);
  PutLE(&body, static_cast<uint64_t>(r.arrival_micros), 8);
  PutLE(&body, static_cast<uint64_t>(r.message_id), 2);
  PutLE(&body, static_cast<uint64_t>(r.qos), 1);
  PutLE(&body, r.retained ? 1 : 0, 1);
  PutLE(&body, r.topic.size(), 4);
  body += r.topic;
  body += r.payload;
  PutLE(out, body.size(), 4);
  PutLE(out, Crc32c(body), 4);
  *out += body;
}

// Decodes the record at `pos` of `data`. Returns false (leaving `pos`) when
// what is there is not a whole valid record.
bool DecodeRecord(std::string_view data, int64_t* pos, MqttWalRecord* r) {
  const int64_t left = static_cast<int64_t>(data.size()) - *pos;
  if (left < kFrameBytes) return false;
  const char* p = data.data() + *pos;
  const int64_t body_len = static_cast<int64_t>(GetLE(p, 4));
  const uint32_t crc = static_cast<uint32_t>(GetLE(p + 4, 4));
  if (body_len < kBodyFixedBytes || body_len > left - kFrameBytes) return false;
  std::string_view body(p + kFrameBytes, static_cast<size_t>(body_len));
  if (Crc32c(body) != crc) return false;
  const char* b = body.data();
  const int64_t topic_len = static_cast<int64_t>(GetLE(b + 20, 4));
  if (topic_len > body_len - kBodyFixedBytes) return false;
  r->seq = static_cast<int64_t>(GetLE(b, 8));
  r->arrival_micros = static_cast<int64_t>(GetLE(b + 8, 8));
  r->message_id = static_cast<int32_t>(GetLE(b + 16, 2));
  r->qos = static_cast<int32_t>(GetLE(b + 18, 1));
  r->retained = (GetLE(b + 19, 1) & 1) != 0;
  r->topic.assign(b + kBodyFixedBytes, static_cast<size_t>(topic_len));
  r->payload.assign(b + kBodyFixedBytes + topic_len,
                    static_cast<size_t>(body_len - kBodyFixedBytes - topic_len));
  *pos += kFrameBytes + body_len;
  return true;
}

Status Errno(std::string_view what, const std::string& path) {
  return Status::IOError(what, " ", path, ": ", std::strerror(errno));
}

Result<std::string> ReadWholeFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Errno("opening MQTT WAL segment", path);
  std::string data;
  char buf[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      Status st = Errno("reading MQTT WAL segment", path);
      ::close(fd);
      return st;
    }
    if (n == 0) break;
    data.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return data;
}

Status FsyncDir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Errno("opening directory", dir);
  int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) return Errno("fsyncing directory", dir);
  return Status::OK();
}

Status WriteAll(int fd, std::string_view data, const std::string& path) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("writing MQTT WAL segment", path);
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::OK();
}

std::string SegmentName(int64_t first_seq) {
  char name[40];
  std::snprintf(name, sizeof(name), "wal-%020lld.log", static_cast<long long>(first_seq));
  return name;
}

}  // namespace

Result<std::unique_ptr<MqttWal>> MqttWal::Open(const Options& options) {
  std::unique_ptr<MqttWal> wal(new MqttWal(options));
  SILT_RETURN_NOT_OK(wal->Recover());
  return wal;
}

MqttWal::~MqttWal() {
  if (fd_ >= 0) ::close(fd_);
}

Status MqttWal::Recover() {
  const std::string& dir = options_.dir;
  // mkdir -p: the checkpoint's sources/<i> may not exist yet.
  for (size_t i = 1; i <= dir.size(); ++i) {
    if (i == dir.size() || dir[i] == '/') {
      std::string part = dir.substr(0, i);
      if (::mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) {
        return Errno("creating MQTT WAL directory", part);
      }
    }
  }
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return Errno("listing MQTT WAL directory", dir);
  std::vector<int64_t> firsts;
  while (dirent* e = ::readdir(d)) {
    std::string_view name(e->d_name);
    if (name.size() != 28 || name.substr(0, 4) != "wal-" || name.substr(24) != ".log") continue;
    int64_t v = 0;
    bool ok = true;
    for (char c : name.substr(4, 20)) {
      ok = ok && c >= '0' && c <= '9';
      v = v * 10 + (c - '0');
    }
    if (ok) firsts.push_back(v);
  }
  ::closedir(d);
  std::sort(firsts.begin(), firsts.end());

  // The newest segment may end in a torn record or even a torn header; the
  // older ones were closed after a Sync and are only checked at their header.
  // A log whose only segment lost its header starts again at that segment's
  // sequence number (trimming never leaves such a segment alone, but the
  // numbering must not restart at 0 if it does).
  int64_t restart_at = 0;
  while (!firsts.empty()) {
    const int64_t first = firsts.back();
    const std::string path = dir + "/" + SegmentName(first);
    SILT_ASSIGN_OR_RETURN(std::string data, ReadWholeFile(path));
    if (static_cast<int64_t>(data.size()) < kHeaderBytes ||
        std::string_view(data).substr(0, 8) != kMagic ||
        static_cast<int64_t>(GetLE(data.data() + 8, 8)) != first) {
      if (static_cast<int64_t>(data.size()) <= kHeaderBytes) {
        // A segment whose header never became durable: created just before
        // a crash, so it holds nothing (records follow a synced header).
        SILT_LOG_WARN("stream", "MQTT WAL ", path, ": incomplete segment header; removed");
        if (::unlink(path.c_str()) != 0) return Errno("removing", path);
        restart_at = first;
        firsts.pop_back();
        continue;
      }
      return Status::Corruption("MQTT WAL segment ", path, ": bad header");
    }
    int64_t pos = kHeaderBytes;
    int64_t seq = first;
    MqttWalRecord r;
    while (DecodeRecord(data, &pos, &r)) {
      if (r.seq != seq) break;
      ++seq;
    }
    if (pos != static_cast<int64_t>(data.size())) {
      SILT_LOG_WARN("stream", "MQTT WAL ", path, ": cutting ",
                    static_cast<int64_t>(data.size()) - pos, " bytes of unsynced tail at offset ",
                    pos, " (messages never acknowledged)");
      if (::truncate(path.c_str(), pos) != 0) return Errno("truncating", path);
    }
    fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd_ < 0) return Errno("opening MQTT WAL segment", path);
    if (::fdatasync(fd_) != 0) return Errno("fsyncing", path);
    next_seq_ = seq;
    end_seq_.store(seq, std::memory_order_release);
    int64_t total = 0;
    for (size_t i = 0; i < firsts.size(); ++i) {
      Segment s;
      s.first_seq = firsts[i];
      s.path = dir + "/" + SegmentName(firsts[i]);
      if (i + 1 == firsts.size()) {
        s.bytes = pos;
      } else {
        struct stat st;
        if (::stat(s.path.c_str(), &st) != 0) return Errno("stat", s.path);
        s.bytes = st.st_size;
        if (firsts[i + 1] <= firsts[i]) {
          return Status::Corruption("MQTT WAL ", dir, ": segments out of order");
        }
      }
      total += s.bytes;
      segments_.push_back(std::move(s));
    }
    if (segments_.back().first_seq > seq) {
      return Status::Corruption("MQTT WAL ", dir, ": segment ", path, " starts after its data");
    }
    size_bytes_.store(total, std::memory_order_release);
    return Status::OK();
  }
  next_seq_ = restart_at;
  end_seq_.store(restart_at, std::memory_order_release);
  return StartSegment(restart_at);
}

Status MqttWal::StartSegment(int64_t first_seq) {
  Segment s;
  s.first_seq = first_seq;
  s.path = options_.dir + "/" + SegmentName(first_seq);
  int fd = ::open(s.path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("creating MQTT WAL segment", s.path);
  std::string header(kMagic);
  PutLE(&header, static_cast<uint64_t>(first_seq), 8);
  Status st = WriteAll(fd, header, s.path);
  if (st.ok() && ::fdatasync(fd) != 0) st = Errno("fsyncing", s.path);
  if (st.ok()) st = FsyncDir(options_.dir);
  if (!st.ok()) {
    ::close(fd);
    return st;
  }
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
  s.bytes = kHeaderBytes;
  size_bytes_.fetch_add(kHeaderBytes, std::memory_order_acq_rel);
  std::lock_guard<std::mutex> lock(mu_);
  segments_.push_back(std::move(s));
  return Status::OK();
}

void MqttWal::Append(MqttWalRecord record) {
  record.seq = next_seq_++;
  pending_bytes_ += static_cast<int64_t>(record.topic.size() + record.payload.size());
  pending_.push_back(std::move(record));
}

Status MqttWal::Sync() {
  if (pending_.empty()) return Status::OK();
  if (fd_ < 0) return Status::IOError("MQTT WAL ", options_.dir, ": not writable after an error");
  std::string data;
  for (const MqttWalRecord& r : pending_) EncodeRecord(r, &data);
  std::string path;
  {
    std::lock_guard<std::mutex> lock(mu_);
    path = segments_.back().path;
  }
  Status st = WriteAll(fd_, data, path);
  if (st.ok() && ::fdatasync(fd_) != 0) st = Errno("fsyncing", path);
  if (!st.ok()) {
    ::close(fd_);
    fd_ = -1;
    return st;
  }
  const int64_t written = static_cast<int64_t>(data.size());
  int64_t segment_bytes = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    segments_.back().bytes += written;
    segment_bytes = segments_.back().bytes;
  }
  size_bytes_.fetch_add(written, std::memory_order_acq_rel);
  end_seq_.store(next_seq_, std::memory_order_release);
  pending_.clear();
  pending_bytes_ = 0;
  if (segment_bytes >= options_.segment_bytes) return StartSegment(next_seq_);
  return Status::OK();
}

int64_t MqttWal::begin_seq() const {
  std::lock_guard<std::mutex> lock(mu_);
  return segments_.empty() ? end_seq() : segments_.front().first_seq;
}

Result<std::vector<MqttWalRecord>> MqttWal::Read(int64_t from, int64_t to, int64_t max_records,
                                                 int64_t max_bytes) const {
  std::vector<Segment> segments;
  {
    std::lock_guard<std::mutex> lock(mu_);
    segments = segments_;
  }
  const int64_t end = end_seq();
  if (segments.empty() || from < segments.front().first_seq || to > end || from > to) {
    return Status::InvalidArgument(
        "MQTT WAL ", options_.dir, ": range [", from, ", ", to, ") is not held (the log has [",
        segments.empty() ? end : segments.front().first_seq, ", ", end, "))");
  }
  std::vector<MqttWalRecord> out;
  int64_t bytes = 0;
  // The segment holding `from`: the last one starting at or before it.
  size_t i = 0;
  while (i + 1 < segments.size() && segments[i + 1].first_seq <= from) ++i;
  int64_t seq = from;
  for (; i < segments.size() && seq < to; ++i) {
    SILT_ASSIGN_OR_RETURN(std::string data, ReadWholeFile(segments[i].path));
    if (static_cast<int64_t>(data.size()) < kHeaderBytes ||
        std::string_view(data).substr(0, 8) != kMagic ||
        static_cast<int64_t>(GetLE(data.data() + 8, 8)) != segments[i].first_seq) {
      return Status::Corruption("MQTT WAL segment ", segments[i].path, ": bad header");
    }
    int64_t pos = kHeaderBytes;
    MqttWalRecord r;
    while (seq < to) {
      if (!DecodeRecord(data, &pos, &r)) break;
      if (r.seq < seq) continue;
      if (r.seq != seq) {
        return Status::Corruption("MQTT WAL segment ", segments[i].path, ": expected record ", seq,
                                  ", found ", r.seq);
      }
      bytes += static_cast<int64_t>(r.payload.size() + r.topic.size());
      out.push_back(std::move(r));
      ++seq;
      if (static_cast<int64_t>(out.size()) >= max_records || bytes >= max_bytes) return out;
    }
    if (seq < to && i + 1 < segments.size() && segments[i + 1].first_seq != seq) {
      return Status::Corruption("MQTT WAL segment ", segments[i].path, " ends at record ", seq,
                                " but the next segment starts at ", segments[i + 1].first_seq);
    }
  }
  if (seq < to) {
    return Status::Corruption("MQTT WAL ", options_.dir, ": record ", seq, " is missing");
  }
  return out;
}

Status MqttWal::TrimBefore(int64_t seq) {
  std::vector<std::string> doomed;
  int64_t freed = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    size_t keep = 0;
    while (keep + 1 < segments_.size() && segments_[keep + 1].first_seq <= seq) {
      doomed.push_back(segments_[keep].path);
      freed += segments_[keep].bytes;
      ++keep;
    }
    segments_.erase(segments_.begin(), segments_.begin() + static_cast<int64_t>(keep));
  }
  size_bytes_.fetch_sub(freed, std::memory_order_acq_rel);
  for (const std::string& path : doomed) {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) return Errno("removing", path);
  }
  return Status::OK();
}

Result<std::vector<MqttWalRecord>> MqttWal::Tail(int64_t n) const {
  const int64_t end = end_seq();
  const int64_t from = std::max(begin_seq(), end - n);
  return Read(from, end, n, std::numeric_limits<int64_t>::max());
}

}  // namespace silt::stream
