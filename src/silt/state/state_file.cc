#include "silt/state/state_file.h"

#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <cstring>

namespace silt::state {

namespace {

constexpr std::string_view kChangelogSuffix = ".changelog";
constexpr std::string_view kSnapshotSuffix = ".snapshot";
// Appends go to the file in chunks of about this size; reads fetch this much.
constexpr size_t kWriteChunk = 1 << 20;
constexpr int64_t kReadChunk = 256 << 10;

uint32_t Crc(std::string_view data) {
  uLong crc = crc32(0L, Z_NULL, 0);
  // zlib takes uInt lengths; records may in principle exceed 4 GiB.
  while (!data.empty()) {
    const size_t n = std::min<size_t>(data.size(), 1u << 30);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(n));
    data.remove_prefix(n);
  }
  return static_cast<uint32_t>(crc);
}

void PutFixed32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
void PutFixed64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}
uint32_t GetFixed32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}
uint64_t GetFixed64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}

std::string_view KindName(StateFileKind kind) {
  return kind == StateFileKind::kSnapshot ? "snapshot" : "changelog";
}

}  // namespace

std::string StateFileName(int64_t version, StateFileKind kind) {
  return std::to_string(version) +
         std::string(kind == StateFileKind::kSnapshot ? kSnapshotSuffix : kChangelogSuffix);
}

std::optional<ParsedStateFileName> ParseStateFileName(std::string_view name) {
  StateFileKind kind;
  if (name.ends_with(kChangelogSuffix)) {
    kind = StateFileKind::kChangelog;
    name.remove_suffix(kChangelogSuffix.size());
  } else if (name.ends_with(kSnapshotSuffix)) {
    kind = StateFileKind::kSnapshot;
    name.remove_suffix(kSnapshotSuffix.size());
  } else {
    return std::nullopt;
  }
  // Canonical decimal only: "007.changelog" is not a state file.
  if (name.empty() || (name.size() > 1 && name[0] == '0')) return std::nullopt;
  int64_t version = 0;
  auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), version);
  if (ec != std::errc() || end != name.data() + name.size() || version < 0) return std::nullopt;
  return ParsedStateFileName{version, kind};
}

// ---------------------------------------------------------------------------
// Writer

StateFileWriter::StateFileWriter(std::string path, StateFileKind kind,
                                 std::unique_ptr<fs::WritableFile> file)
    : path_(std::move(path)), kind_(kind), file_(std::move(file)) {}

StateFileWriter::~StateFileWriter() {
  if (!finished_ && file_) file_->Abort().IgnoreError("the file is discarded");
}

Result<std::unique_ptr<StateFileWriter>> StateFileWriter::Open(fs::FileSystem* fs, std::string path,
                                                               StateFileKind kind,
                                                               int64_t version) {
  SILT_ASSIGN_OR_RETURN(auto file, fs->OpenForWrite(path));
  std::unique_ptr<StateFileWriter> writer(
      new StateFileWriter(std::move(path), kind, std::move(file)));
  std::string& b = writer->buffer_;
  b.reserve(kWriteChunk + 4096);
  b.append(kStateFileMagic);
  PutFixed32(&b, kStateFileFormatVersion);
  b.push_back(static_cast<char>(kind));
  b.append(3, '\0');
  PutFixed64(&b, static_cast<uint64_t>(version));
  PutFixed32(&b, Crc(b));
  return writer;
}

Status StateFileWriter::Add(RecordOp op, std::string_view key, std::string_view value) {
  if (record_count_ > 0 && key <= std::string_view(last_key_)) {
    return Status::Internal("state file ", path_, ": keys not in increasing order");
  }
  if (kind_ == StateFileKind::kSnapshot && op != RecordOp::kPut) {
    return Status::Internal("state file ", path_, ": a snapshot holds puts only");
  }
  last_key_.assign(key);
  const size_t start = buffer_.size();
  buffer_.push_back(static_cast<char>(op));
  PutVarint(&buffer_, key.size());
  buffer_.append(key);
  if (op == RecordOp::kPut) {
    PutVarint(&buffer_, value.size());
    buffer_.append(value);
  }
  PutFixed32(&buffer_, Crc(std::string_view(buffer_).substr(start)));
  ++record_count_;
  return FlushIfFull();
}

Status StateFileWriter::FlushIfFull() {
  if (buffer_.size() < kWriteChunk) return Status::OK();
  SILT_RETURN_NOT_OK_CTX(file_->Append(buffer_), "writing ", path_);
  buffer_.clear();
  return Status::OK();
}

Status StateFileWriter::Finish(int64_t num_rows, int64_t key_value_bytes) {
  const size_t start = buffer_.size();
  buffer_.push_back(static_cast<char>(kTrailerOp));
  PutFixed64(&buffer_, static_cast<uint64_t>(record_count_));
  PutFixed64(&buffer_, static_cast<uint64_t>(num_rows));
  PutFixed64(&buffer_, static_cast<uint64_t>(key_value_bytes));
  PutFixed32(&buffer_, Crc(std::string_view(buffer_).substr(start)));
  SILT_RETURN_NOT_OK_CTX(file_->Append(buffer_), "writing ", path_);
  buffer_.clear();
  SILT_RETURN_NOT_OK_CTX(file_->Close(), "writing ", path_);
  finished_ = true;
  return Status::OK();
}

// ---------------------------------------------------------------------------
// Reader

StateFileReader::StateFileReader(std::string path, std::unique_ptr<fs::RandomAccessFile> file,
                                 int64_t size)
    : path_(std::move(path)), file_(std::move(file)), size_(size) {}

Status StateFileReader::Corrupt(std::string_view what) const {
  return Status::Corruption("state file ", path_, ": ", what);
}

Result<std::unique_ptr<StateFileReader>> StateFileReader::Open(fs::FileSystem* fs, std::string path,
                                                               StateFileKind kind,
                                                               int64_t version) {
  SILT_ASSIGN_OR_RETURN(auto file, fs->OpenForRead(path));
  SILT_ASSIGN_OR_RETURN(int64_t size, file->Size());
  std::unique_ptr<StateFileReader> reader(
      new StateFileReader(std::move(path), std::move(file), size));
  reader->kind_ = kind;
  SILT_ASSIGN_OR_RETURN(bool have, reader->Ensure(kStateFileHeaderSize));
  if (!have) return reader->Corrupt("truncated header");
  const char* h = reader->buffer_.data();
  if (std::string_view(h, kStateFileMagic.size()) != kStateFileMagic) {
    return reader->Corrupt("bad magic (not a state store file)");
  }
  if (Crc(std::string_view(h, kStateFileHeaderSize - 4)) != GetFixed32(h + 24)) {
    return reader->Corrupt("header CRC mismatch");
  }
  const uint32_t format = GetFixed32(h + 8);
  if (format != kStateFileFormatVersion) {
    return Status::NotSupported("state file ", reader->path_, ": format version ", format,
                                " (this build reads ", kStateFileFormatVersion, ")");
  }
  if (static_cast<uint8_t>(h[12]) != static_cast<uint8_t>(kind)) {
    return reader->Corrupt(Status::Concat("header says kind ", static_cast<int>(h[12]),
                                          ", expected a ", KindName(kind)));
  }
  const int64_t file_version = static_cast<int64_t>(GetFixed64(h + 16));
  if (file_version != version) {
    return reader->Corrupt(
        Status::Concat("header says version ", file_version, ", expected ", version));
  }
  reader->pos_ = kStateFileHeaderSize;
  return reader;
}

Result<bool> StateFileReader::Ensure(int64_t n) {
  const int64_t available = static_cast<int64_t>(buffer_.size()) - pos_;
  if (available >= n) return true;
  const int64_t file_pos = file_offset_ + static_cast<int64_t>(buffer_.size());
  if (file_pos + (n - available) > size_) return false;
  // Drop what precedes the current record, then read at least what is
  // missing.
  buffer_.erase(0, static_cast<size_t>(mark_));
  file_offset_ += mark_;
  pos_ -= mark_;
  mark_ = 0;
  const int64_t want = std::min(size_ - file_pos, std::max(n - available, kReadChunk));
  SILT_ASSIGN_OR_RETURN(std::string chunk, file_->ReadAt(file_pos, want));
  if (static_cast<int64_t>(chunk.size()) != want) {
    return Status::IOError("state file ", path_, ": short read at offset ", file_pos);
  }
  buffer_.append(chunk);
  return true;
}

Result<uint64_t> StateFileReader::ReadVarint() {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    SILT_ASSIGN_OR_RETURN(bool have, Ensure(1));
    if (!have) return Corrupt("truncated (no trailer)");
    const auto byte = static_cast<uint8_t>(buffer_[static_cast<size_t>(pos_++)]);
    v |= static_cast<uint64_t>(byte & 0x7F) << shift;
    if ((byte & 0x80) == 0) return v;
  }
  return Corrupt("bad length");
}

Result<bool> StateFileReader::Next() {
  if (done_) return false;
  // key_ points into buffer_, valid until the Ensure calls below.
  if (records_read_ > 0) last_key_.assign(key_);
  mark_ = pos_;
  SILT_ASSIGN_OR_RETURN(bool have, Ensure(1));
  if (!have) return Corrupt("truncated (no trailer)");
  const int64_t record_start = file_offset_ + pos_;
  const auto op = static_cast<uint8_t>(buffer_[static_cast<size_t>(pos_)]);
  if (op == kTrailerOp) {
    SILT_ASSIGN_OR_RETURN(have, Ensure(kStateFileTrailerSize));
    if (!have) return Corrupt("truncated trailer");
    const char* t = buffer_.data() + pos_;
    if (Crc(std::string_view(t, kStateFileTrailerSize - 4)) != GetFixed32(t + 25)) {
      return Corrupt("trailer CRC mismatch");
    }
    stats_.record_count = static_cast<int64_t>(GetFixed64(t + 1));
    stats_.num_rows = static_cast<int64_t>(GetFixed64(t + 9));
    stats_.key_value_bytes = static_cast<int64_t>(GetFixed64(t + 17));
    pos_ += kStateFileTrailerSize;
    if (file_offset_ + pos_ != size_) return Corrupt("bytes after the trailer");
    if (stats_.record_count != records_read_) {
      return Corrupt(
          Status::Concat("trailer counts ", stats_.record_count, " records, read ", records_read_));
    }
    key_ = value_ = {};
    done_ = true;
    return false;
  }
  if (op != static_cast<uint8_t>(RecordOp::kPut) && op != static_cast<uint8_t>(RecordOp::kDelete)) {
    return Corrupt(
        Status::Concat("bad record type ", static_cast<int>(op), " at offset ", record_start));
  }
  if (kind_ == StateFileKind::kSnapshot && op != static_cast<uint8_t>(RecordOp::kPut)) {
    return Corrupt(Status::Concat("a delete record in a snapshot at offset ", record_start));
  }
  // Ensure keeps buffer_ from mark_ (the record start) on but may move it,
  // so positions are kept as file offsets until the record is complete.
  ++pos_;
  SILT_ASSIGN_OR_RETURN(uint64_t key_len, ReadVarint());
  if (key_len > static_cast<uint64_t>(size_)) return Corrupt("bad key length");
  SILT_ASSIGN_OR_RETURN(have, Ensure(static_cast<int64_t>(key_len)));
  if (!have) return Corrupt("truncated (no trailer)");
  const int64_t key_pos = file_offset_ + pos_;
  pos_ += static_cast<int64_t>(key_len);
  uint64_t value_len = 0;
  int64_t value_pos = file_offset_ + pos_;
  if (op == static_cast<uint8_t>(RecordOp::kPut)) {
    SILT_ASSIGN_OR_RETURN(value_len, ReadVarint());
    if (value_len > static_cast<uint64_t>(size_)) return Corrupt("bad value length");
    SILT_ASSIGN_OR_RETURN(have, Ensure(static_cast<int64_t>(value_len) + 4));
    if (!have) return Corrupt("truncated (no trailer)");
    value_pos = file_offset_ + pos_;
    pos_ += static_cast<int64_t>(value_len);
  } else {
    SILT_ASSIGN_OR_RETURN(have, Ensure(4));
    if (!have) return Corrupt("truncated (no trailer)");
  }
  const int64_t rec_in_buf = record_start - file_offset_;
  const char* base = buffer_.data();
  const std::string_view record(base + rec_in_buf, static_cast<size_t>(pos_ - rec_in_buf));
  if (Crc(record) != GetFixed32(base + pos_)) {
    return Corrupt(Status::Concat("record CRC mismatch at offset ", record_start));
  }
  pos_ += 4;
  op_ = static_cast<RecordOp>(op);
  key_ = std::string_view(base + (key_pos - file_offset_), key_len);
  value_ = op_ == RecordOp::kPut ? std::string_view(base + (value_pos - file_offset_), value_len)
                                 : std::string_view();
  if (records_read_ > 0 && key_ <= std::string_view(last_key_)) {
    return Corrupt(Status::Concat("keys out of order at offset ", record_start));
  }
  ++records_read_;
  return true;
}

}  // namespace silt::state
