// The state store's files: `<v>.changelog` (the changes that make version v)
// and `<v>.snapshot` (every row of version v), both a header, records in
// strictly increasing key order and a trailer. The byte layout is specified in
// docs/format/state-store.md; the constants below are its source of truth.
//
// StateFileWriter streams records into a file that becomes visible all at
// once on Finish (fs::WritableFile); StateFileReader streams them back,
// checking every CRC, the key order and the trailer, and names the file in
// every Corruption it returns.
//
// Thread safety: a writer or reader is used by one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "silt/base/result.h"
#include "silt/fs/file_system.h"

namespace silt::state {

enum class StateFileKind : uint8_t { kChangelog = 1, kSnapshot = 2 };
enum class RecordOp : uint8_t { kPut = 1, kDelete = 2 };

inline constexpr std::string_view kStateFileMagic = "SILTSTAT";  // 8 bytes
inline constexpr uint32_t kStateFileFormatVersion = 1;
// magic(8) format(4) kind(1) reserved(3) version(8) crc(4)
inline constexpr int64_t kStateFileHeaderSize = 28;
// The op byte that starts the trailer instead of a record.
inline constexpr uint8_t kTrailerOp = 0xFF;
// op(1) record_count(8) num_rows(8) key_value_bytes(8) crc(4)
inline constexpr int64_t kStateFileTrailerSize = 29;

// "42.changelog", "40.snapshot".
std::string StateFileName(int64_t version, StateFileKind kind);
// The version and kind of a file name; nullopt for other names (temporary
// files of the local file system, anything foreign).
struct ParsedStateFileName {
  int64_t version;
  StateFileKind kind;
};
std::optional<ParsedStateFileName> ParseStateFileName(std::string_view name);

// What a file's trailer records: its record count and the state of its
// version (rows and key+value bytes) after it.
struct StateFileStats {
  int64_t record_count = 0;
  int64_t num_rows = 0;
  int64_t key_value_bytes = 0;
};

class StateFileWriter {
 public:
  // Starts `path` (replacing any file there once Finish succeeds).
  static Result<std::unique_ptr<StateFileWriter>> Open(fs::FileSystem* fs, std::string path,
                                                       StateFileKind kind, int64_t version);
  // Discards the file unless Finish succeeded.
  ~StateFileWriter();

  // REQUIRES: key greater than the previous key (else Internal); op kPut in a
  // snapshot. `value` is ignored for kDelete.
  Status Add(RecordOp op, std::string_view key, std::string_view value);
  // Writes the trailer and makes the file durable and visible.
  Status Finish(int64_t num_rows, int64_t key_value_bytes);

  int64_t record_count() const { return record_count_; }

 private:
  StateFileWriter(std::string path, StateFileKind kind, std::unique_ptr<fs::WritableFile> file);
  Status FlushIfFull();

  std::string path_;
  StateFileKind kind_;
  std::unique_ptr<fs::WritableFile> file_;
  std::string buffer_;
  std::string last_key_;
  int64_t record_count_ = 0;
  bool finished_ = false;
};

class StateFileReader {
 public:
  // Opens `path` and checks its header against `kind` and `version`.
  // Errors: NotFound when it does not exist; Corruption naming it for a bad
  // header.
  static Result<std::unique_ptr<StateFileReader>> Open(fs::FileSystem* fs, std::string path,
                                                       StateFileKind kind, int64_t version);

  // Moves to the next record: true with op()/key()/value() set, false at the
  // trailer (then stats() is valid and the file was read to its end).
  // Corruption naming the file for a bad CRC, key order or length, a
  // truncated file or bytes after the trailer.
  Result<bool> Next();
  // Valid until the next call of Next().
  RecordOp op() const { return op_; }
  std::string_view key() const { return key_; }
  std::string_view value() const { return value_; }
  const StateFileStats& stats() const { return stats_; }
  const std::string& path() const { return path_; }

 private:
  StateFileReader(std::string path, std::unique_ptr<fs::RandomAccessFile> file, int64_t size);
  // Makes at least `n` bytes available at pos_; false at end of file first.
  Result<bool> Ensure(int64_t n);
  Result<uint64_t> ReadVarint();
  Status Corrupt(std::string_view what) const;

  std::string path_;
  std::unique_ptr<fs::RandomAccessFile> file_;
  int64_t size_;
  int64_t file_offset_ = 0;  // of buffer_[0]
  std::string buffer_;
  int64_t pos_ = 0;   // in buffer_
  int64_t mark_ = 0;  // in buffer_: the start of the record being read, kept by Ensure
  int64_t records_read_ = 0;
  RecordOp op_ = RecordOp::kPut;
  std::string_view key_;
  std::string_view value_;
  std::string last_key_;
  bool done_ = false;
  StateFileKind kind_ = StateFileKind::kChangelog;
  StateFileStats stats_;
};

}  // namespace silt::state
