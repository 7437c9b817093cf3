// RowGroupCopier: a new Parquet file made of row groups of existing ones,
// copied byte for byte (pages are neither decoded nor re-encoded); only the
// footer is written anew, with every offset moved to where the column chunk
// now lies.
//
// What is copied: each column chunk's pages (dictionary page, data pages)
// and its ColumnMetaData (statistics, encodings, sizes). What is left out:
// the page index (column and offset indexes) and bloom filters, which live
// outside the row groups; readers do without them (they only prune). Every
// source must have the same Parquet schema (the same SchemaElements), and
// the footer takes the first source's key/value metadata, created_by and
// column orders.
//
// AppendMerged writes several row groups as one: column by column, the
// pages of each part's column chunk one after the other (a column chunk may
// hold any number of data pages), still neither decoded nor re-encoded. A
// chunk holds at most one dictionary page, so parts must have none.
//
// Memory: one copy buffer (at most kCopyChunkBytes) plus the footers.
//
// Thread safety: one copier per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "silt/base/result.h"
#include "silt/fs/file_system.h"
#include "silt/parquet/parquet_metadata.h"

namespace silt::parquet {

// The footer of the Parquet file `file` of `size` bytes (`path` names it in
// errors). Errors: Corruption naming the path (bad magic, footer length
// out of range, malformed thrift, encrypted footer); IOError.
Result<FileMetaData> ReadFooter(fs::RandomAccessFile* file, int64_t size, const std::string& path);

class RowGroupCopier {
 public:
  // Largest single read while copying.
  static constexpr int64_t kCopyChunkBytes = 4LL * 1024 * 1024;

  // Opens `path` on `fs` for writing (published by Close, discarded by
  // Abort or the destructor). Errors: IOError.
  static Result<std::unique_ptr<RowGroupCopier>> Open(fs::FileSystem* fs, const std::string& path);
  ~RowGroupCopier();

  // Appends row groups [first, last) of `source` (whose footer is `meta`;
  // `source_path` names it in errors). Errors: InvalidArgument when the
  // range is out of bounds or the schema differs from the first source's
  // (naming the first differing column); Corruption when a column chunk
  // lies outside the file; IOError.
  Status Append(fs::RandomAccessFile* source, const FileMetaData& meta, size_t first, size_t last,
                const std::string& source_path);

  // One row group of a source, for AppendMerged.
  struct Part {
    fs::RandomAccessFile* source = nullptr;
    const FileMetaData* meta = nullptr;  // the source's footer
    size_t group = 0;
    const std::string* source_path = nullptr;  // names it in errors
  };

  // Appends one row group holding the rows of `parts`, in order: its column
  // chunk c is the pages of column chunk c of every part, copied; its
  // metadata sums the parts' values, sizes and null counts, unions their
  // encodings and page encoding stats, and leaves min/max statistics out
  // (readers only prune with them). Errors: InvalidArgument when `parts` is
  // empty, a group is out of bounds, a schema differs from the first
  // source's, or a column chunk has a dictionary or index page, another
  // codec or type than the first part's, or no metadata; Corruption when a
  // column chunk lies outside its file; IOError.
  Status AppendMerged(const std::vector<Part>& parts);

  int64_t num_rows() const { return footer_.num_rows; }
  size_t num_row_groups() const { return footer_.row_groups.size(); }

  // Writes the footer and publishes the file; returns its size in bytes.
  // Errors: InvalidArgument when nothing was appended; IOError.
  Result<int64_t> Close();
  Status Abort();

 private:
  RowGroupCopier(std::unique_ptr<fs::WritableFile> out, std::string path);
  // Takes the schema from the first source, checks later ones against it.
  Status CheckSchema(const FileMetaData& meta, const std::string& source_path);
  // The next row group's ordinal, as Append writes it.
  std::optional<int16_t> NextOrdinal() const;
  Status CopyRange(fs::RandomAccessFile* source, int64_t offset, int64_t length,
                   const std::string& source_path);

  std::unique_ptr<fs::WritableFile> out_;
  std::string path_;
  FileMetaData footer_;
  bool has_schema_ = false;
  bool closed_ = false;
  int64_t position_ = 0;
};

}  // namespace silt::parquet
