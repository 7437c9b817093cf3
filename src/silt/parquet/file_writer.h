// ParquetFileWriter: writes RecordBatches of one schema into a standard
// Parquet file through fs::WritableFile, readable by pyarrow, Spark, delta-rs
// and DuckDB.
//
// Mapping (Spark's conventions): boolean BOOLEAN; byte INT32 INT(8,true);
// short INT32 INT(16,true); int INT32; long INT64; float FLOAT; double DOUBLE;
// decimal(p,s) INT32 (p<=9) / INT64 (p<=18) / FIXED_LEN_BYTE_ARRAY (minimal
// bytes for p) with DECIMAL(p,s); string BYTE_ARRAY STRING; binary
// BYTE_ARRAY; date INT32 DATE; timestamp INT64 TIMESTAMP(MICROS,
// isAdjustedToUTC=true); timestamp_ntz INT64 TIMESTAMP(MICROS, false).
// Nested types (struct/array/map) return NotSupported until the Parquet issue
// lands them.
//
// Encodings: dictionary (RLE_DICTIONARY data pages + PLAIN dictionary page)
// with fallback to PLAIN when the dictionary outgrows its limit; RLE/bit-
// packed hybrid definition levels; data page v1. Column chunk statistics
// (min_value/max_value/null_count) per Parquet's ordering rules.
//
// Memory: pages are encoded and compressed as batches arrive; a row group is
// flushed when its buffered encoded size reaches row_group_bytes.
//
// Thread safety: one writer per thread.
#pragma once

#include <cstdint>
#include <memory>
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

struct WriterOptions {
  Compression compression = Compression::kSnappy;
  int zstd_level = 3;
  int64_t row_group_bytes = 128LL * 1024 * 1024;
  int64_t page_bytes = 1024 * 1024;
  int64_t dictionary_page_bytes_limit = 1024 * 1024;
  bool enable_dictionary = true;
  // Extra key/value metadata stored in the footer.
  std::vector<std::pair<std::string, std::string>> key_value_metadata;
};

// Per-leaf-column statistics gathered while writing, for Delta add.stats.
// min/max are typed values in a Column of length 1 each (null column when no
// non-null value was seen or the type has no order). Strings carry their
// full min/max (Delta truncates). float/double follow Spark's ordering, where
// NaN sorts above every number: max is NaN when the column holds a NaN, min
// is NaN only when nothing else is there (the footer statistics, by
// Parquet's rules, leave NaN out).
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
  // Opens `path` on `fs` for writing. Errors: NotSupported naming the first
  // column whose type cannot be written; IOError from the file system.
  static Result<std::unique_ptr<ParquetFileWriter>> Open(fs::FileSystem* fs,
                                                         const std::string& path,
                                                         columnar::SchemaPtr schema,
                                                         WriterOptions options = {});
  virtual ~ParquetFileWriter() = default;

  // REQUIRES: batch.schema equals the writer's schema (same field order/types).
  virtual Status WriteBatch(const columnar::RecordBatch& batch) = 0;
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
