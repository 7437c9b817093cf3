// ParquetFileWriter: writes RecordBatches of one schema into a standard
// Parquet file through fs::WritableFile, readable by pyarrow, Spark, delta-rs
// and DuckDB.
//
// Mapping (Spark's conventions): boolean BOOLEAN; byte INT32 INT(8,true);
// short INT32 INT(16,true); int INT32; long INT64; float FLOAT; double DOUBLE;
// decimal(p,s) INT32 (p<=9) / INT64 (p<=18) / FIXED_LEN_BYTE_ARRAY (minimal
// bytes for p) with DECIMAL(p,s); string BYTE_ARRAY STRING; binary
// BYTE_ARRAY; date INT32 DATE; timestamp INT64 TIMESTAMP(MICROS,
// isAdjustedToUTC=true); timestamp_ntz INT64 TIMESTAMP(MICROS, false);
// struct a group; array a LIST group with a repeated group "list" and an
// "element"; map a MAP group with a repeated group "key_value" holding a
// required "key" and a "value" -- at any depth, with Dremel repetition and
// definition levels. Pages of nested columns end at row boundaries.
//
// Encodings: dictionary (RLE_DICTIONARY data pages + PLAIN dictionary page)
// with fallback to PLAIN when the dictionary outgrows its limit or, judged
// on a chunk's first page, would not be smaller than the values PLAIN, or per
// column PLAIN, DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY,
// DELTA_BYTE_ARRAY or BYTE_STREAM_SPLIT; RLE/bit-packed hybrid levels; data
// page v1 (default) or v2. Column chunk statistics
// (min_value/max_value/null_count) per Parquet's ordering rules, the page
// index (per-page bounds, null counts and locations), and optional
// split-block bloom filters per column (bloom_filter.h).
//
// Memory: pages are encoded and compressed as batches arrive; a row group is
// flushed when its buffered encoded size reaches row_group_bytes.
//
// Thread safety: one writer per thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/fs/file_system.h"

namespace silt::parquet {

enum class Compression { kUncompressed, kSnappy, kGzip, kZstd, kLz4Raw };

// "snappy", "zstd", "gzip", "lz4" / "lz4_raw", "none" / "uncompressed".
// Errors: InvalidArgument naming the value.
Result<Compression> ParseCompression(std::string_view name);
// File-name infix Spark uses: "snappy", "zstd", "gz", "lz4raw", "" (none).
std::string_view CompressionFileExtension(Compression c);

// Value encoding for one column (WriterOptions::column_encodings).
// kDictionary: dictionary with PLAIN fallback (the default); kPlain: PLAIN
// only; the others as Parquet defines them: DELTA_BINARY_PACKED (int-backed
// types: byte/short/int/long/date/timestamps/decimal(p<=18)),
// DELTA_LENGTH_BYTE_ARRAY (string/binary), DELTA_BYTE_ARRAY (string/binary,
// decimal(p>18)), BYTE_STREAM_SPLIT (float/double and the int-backed and
// fixed-length types).
enum class ColumnEncoding {
  kDictionary,
  kPlain,
  kDeltaBinaryPacked,
  kDeltaLengthByteArray,
  kDeltaByteArray,
  kByteStreamSplit,
};

// "dictionary", "plain", "delta_binary_packed", "delta_length_byte_array",
// "delta_byte_array", "byte_stream_split" (case-insensitive).
// Errors: InvalidArgument naming the value.
Result<ColumnEncoding> ParseColumnEncoding(std::string_view name);

// A split-block bloom filter for one column (WriterOptions::bloom_filters).
struct BloomFilterOptions {
  // Distinct values expected per column chunk; sizes the filter. 0 = size
  // it from the distinct values actually written. Either way the writer
  // keeps the chunk's distinct 64-bit value hashes until the row group is
  // flushed (8 bytes per distinct value).
  int64_t ndv = 0;
  // Target false-positive probability, in (0, 1).
  double fpp = 0.01;
};

struct WriterOptions {
  Compression compression = Compression::kSnappy;
  int zstd_level = 3;
  int64_t row_group_bytes = 128LL * 1024 * 1024;
  int64_t page_bytes = 1024 * 1024;
  int64_t dictionary_page_bytes_limit = 1024 * 1024;
  bool enable_dictionary = true;
  // Extra key/value metadata stored in the footer.
  std::vector<std::pair<std::string, std::string>> key_value_metadata;
  // Per-column value encodings, keyed by top-level column name or, for a
  // leaf of a nested column, its dotted Parquet path ("m.key_value.key").
  // A column listed here is not dictionary-encoded. Open fails with
  // InvalidArgument when an encoding does not fit the column's type or a key
  // names no column.
  std::map<std::string, ColumnEncoding> column_encodings;
  // Data page v2 (levels uncompressed in front of the compressed values)
  // instead of v1.
  bool data_page_v2 = false;
  // Write the page index (column index + offset index per column chunk,
  // between the last row group and the footer).
  bool write_page_index = true;
  // A CRC-32 in every page header, as parquet-mr writes by default
  // (parquet.page.write-checksum.enabled); readers that check it turn a
  // flipped bit into an error.
  bool page_checksums = true;
  // Columns that get a split-block bloom filter per column chunk, keyed like
  // column_encodings (top-level name or a nested leaf's dotted path). The
  // filters are written after the last row group, before the page index,
  // and located by ColumnMetaData.bloom_filter_offset/length. Open fails
  // with InvalidArgument when a key names no column or a boolean one.
  std::map<std::string, BloomFilterOptions> bloom_filters;
};

// Per-leaf-column statistics gathered while writing, for Delta add.stats.
// min/max are typed values in a Column of length 1 each (null column when no
// non-null value was seen or the type has no order). Strings carry their
// full min/max (Delta truncates). float/double follow Spark's ordering, where
// NaN sorts above every number: max is NaN when the column holds a NaN, min
// is NaN only when nothing else is there (the footer statistics, by
// Parquet's rules, leave NaN out).
// For a nested (struct/array/map) column: its top-level null count only.
struct ColumnStats {
  std::string name;
  int64_t null_count = 0;
  columnar::ColumnPtr min;  // length-1 column of the column's type, or null
  columnar::ColumnPtr max;
};

struct WriteResult {
  int64_t num_rows = 0;
  int64_t file_size = 0;
  std::vector<ColumnStats> column_stats;  // one per top-level column, schema order
};

class ParquetFileWriter {
 public:
  // How the file appears under its path: complete at Close (kAtomic,
  // fs::FileSystem::OpenForWrite), or written there in place
  // (kInPlace, OpenForWriteInPlace: for files readers find only through
  // something written after Close, such as Delta data files).
  enum class Publish { kAtomic, kInPlace };
  // Opens `path` on `fs` for writing. Errors: NotSupported naming the first
  // column whose type cannot be written; IOError from the file system.
  static Result<std::unique_ptr<ParquetFileWriter>> Open(fs::FileSystem* fs,
                                                         const std::string& path,
                                                         columnar::SchemaPtr schema,
                                                         WriterOptions options = {},
                                                         Publish publish = Publish::kAtomic);
  virtual ~ParquetFileWriter() = default;

  // REQUIRES: batch.schema equals the writer's schema (same field order/types).
  virtual Status WriteBatch(const columnar::RecordBatch& batch) = 0;
  // Writes rows[0], ..., rows.back() of `batch`, in that order, as
  // WriteBatch(TakeBatch(batch, rows)) would, without copying them into
  // columns of their own first (a partition's rows of a batch).
  // REQUIRES: as WriteBatch; every index < batch.num_rows.
  virtual Status WriteRows(const columnar::RecordBatch& batch, std::span<const int64_t> rows) = 0;
  // Rows written so far.
  virtual int64_t num_rows() const = 0;
  // Bytes the file will have if closed now (approximate until Close).
  virtual int64_t estimated_size() const = 0;
  // Flushes the last row group, writes the footer and makes the file visible.
  virtual Result<WriteResult> Close() = 0;
  // Discards the file.
  virtual Status Abort() = 0;
};

}  // namespace silt::parquet
