// ParquetFileReader: reads a Parquet file into RecordBatches through
// fs::RandomAccessFile (footer first, then only the needed column chunks).
//
// Supports what ParquetFileWriter writes and the files Spark, pyarrow and
// delta-rs write: flat and nested columns (struct, standard 3-level and
// legacy 2-level lists, maps, at any depth; see parquet_schema.h for the
// backward-compatibility rules), PLAIN and dictionary encodings,
// RLE/bit-packed levels,
// data page v1 and v2, snappy/gzip/zstd/lz4_raw/uncompressed, INT96 and
// TIMESTAMP(MILLIS|MICROS|NANOS) timestamps (converted to micros), decimals
// in INT32/INT64/FIXED_LEN_BYTE_ARRAY/BYTE_ARRAY.
//
// Thread safety: one reader per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/fs/file_system.h"

namespace silt::parquet {

class ParquetFileReader {
 public:
  // Reads the footer. Errors: Corruption naming the path and what is wrong
  // (bad magic, truncated footer); NotFound; IOError.
  static Result<std::unique_ptr<ParquetFileReader>> Open(fs::FileSystem* fs,
                                                         const std::string& path);
  virtual ~ParquetFileReader() = default;

  // The file's schema mapped to Spark types (logical types honoured; see
  // parquet_schema.h for the mapping). A column whose Parquet type silt
  // cannot read (TIME, INTERVAL, FLOAT16, ...) appears as void; reading it
  // returns NotSupported naming the column.
  virtual const columnar::SchemaPtr& schema() const = 0;
  virtual int64_t num_rows() const = 0;
  virtual int num_row_groups() const = 0;

  // Reads row group `index`, only the top-level columns named in `columns`
  // (case-insensitive; empty = all), in the order given. A dotted name
  // "s.a.b" that is not a top-level column selects a field reached through
  // structs only: it is returned as a column of that name, null where it or
  // any enclosing struct is null, and only its leaf chunks are read. A requested column
  // absent from the file is an error (the caller adds null columns for
  // schema evolution). Errors: InvalidArgument for an unknown column or
  // row group; Corruption naming path, row group and column; NotSupported
  // naming the column and an unsupported encoding or codec (LZO, BROTLI,
  // Hadoop LZ4).
  virtual Result<columnar::RecordBatchPtr> ReadRowGroup(
      int index, const std::vector<std::string>& columns = {}) = 0;
};

}  // namespace silt::parquet
