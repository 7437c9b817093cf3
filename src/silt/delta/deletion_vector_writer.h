// Writing deletion vectors (PROTOCOL.md "Deletion Vectors" and "Deletion
// Vector Format"): the row indices a DELETE, UPDATE or MERGE hides in a data
// file, serialized as a RoaringBitmapArray (CRoaring's portable format per
// 32-bit bucket), stored in one `deletion_vector_<uuid>.bin` per operation at
// the table root, and the remove/add pairs that attach them to data files.
// deletion_vector.h reads what this writes; Spark and delta-rs read it too.
//
// Thread safety: the free functions are pure; a DeletionVectorFileWriter is
// used from one thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "silt/base/result.h"
#include "silt/delta/actions.h"
#include "silt/fs/file_system.h"

namespace silt::delta {

// Serializes `rows` (sorted ascending, no duplicates) as a RoaringBitmapArray:
// the 4-byte little-endian magic, the bucket count (8 bytes), then per bucket
// its key (the upper 32 bits, 4 bytes) and a run-optimized 32-bit roaring
// bitmap of the lower 32 bits in the portable format. Errors: InvalidArgument when
// `rows` is not sorted and unique.
Result<std::string> SerializeRoaringBitmapArray(const std::vector<uint64_t>& rows);

// Encodes bytes whose length is a multiple of 4 as Z85 (ZeroMQ RFC 32).
// Errors: InvalidArgument for another length.
Result<std::string> EncodeZ85(std::string_view bytes);

// Collects the deletion vectors of one operation and writes them as one new
// file: the format version byte 1, then per vector its size (4 bytes
// big-endian), the RoaringBitmapArray and its CRC-32 (4 bytes big-endian).
// Each descriptor's offset is the position of its size field, as delta-spark
// records it.
class DeletionVectorFileWriter {
 public:
  DeletionVectorFileWriter(fs::FileSystem* fs, std::string table_path);

  // Adds the vector of one data file; `rows` sorted and unique, not empty.
  // The descriptor is valid once Finish succeeds.
  Result<DeletionVectorDescriptor> Add(const std::vector<uint64_t>& rows);

  // Writes the file (no file when nothing was added). Call once.
  Status Finish();

  // The file's path, for cleanup when the commit fails; "" before the first Add.
  const std::string& file_path() const { return file_path_; }

 private:
  fs::FileSystem* fs_;
  std::string table_path_;
  std::string encoded_id_;  // Z85 of the file's UUID: the descriptors' pathOrInlineDv
  std::string file_path_;
  std::string contents_;
};

// One data file losing rows: the live add (with its current deletion vector,
// if any) and the row indices to delete, sorted and unique. Rows already
// deleted by the current vector may be repeated; they are not counted twice.
struct RowDeletion {
  AddFile file;
  std::vector<uint64_t> rows;
};

// What deleting rows by deletion vector commits.
struct DeletionVectorChanges {
  // One per file: the live add as a remove, with its current vector.
  std::vector<RemoveFile> removes;
  // One per file keeping rows: the same data file with the union vector,
  // stats kept with "tightBounds":false. A file whose every row is deleted
  // (numRecords from its stats) gets no add, as delta-spark does.
  std::vector<AddFile> adds;
  int64_t num_deleted_rows = 0;  // rows newly deleted, overlap excluded
  int64_t num_files_fully_deleted = 0;
  int64_t num_deletion_vectors_added = 0;
  int64_t num_deletion_vectors_removed = 0;  // files that had a vector before
  int64_t num_deletion_vectors_updated = 0;  // ... and got a new one
  std::string deletion_vector_file;          // "" when no vector was written
};

// Loads each file's current vector, unites it with the new rows, writes the
// new vectors into one file and returns the actions to commit. Files whose
// rows are all already deleted are left out. Errors: InvalidArgument for unsorted
// rows; Corruption / IOError from the current vectors or the write.
Result<DeletionVectorChanges> DeleteRowsByDeletionVector(fs::FileSystem* fs,
                                                         const std::string& table_path,
                                                         const std::vector<RowDeletion>& deletions,
                                                         int64_t now_ms);

// `stats_json` with "tightBounds":false set (added or replaced): the
// statistics of a file with deleted rows still bound the live rows, but not
// tightly. Unparseable stats are returned unchanged.
std::string StatsWithLooseBounds(const std::string& stats_json);

}  // namespace silt::delta
