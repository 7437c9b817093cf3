// ParquetFileReader: reads a Parquet file into RecordBatches through
// fs::RandomAccessFile (footer first, then only the needed column chunks).
//
// Supports what ParquetFileWriter writes and the files Spark, pyarrow and
// delta-rs write: flat and nested columns (struct, standard 3-level and
// legacy 2-level lists, maps, at any depth; see parquet_schema.h for the
// backward-compatibility rules), PLAIN and dictionary encodings,
// RLE/bit-packed levels,
// data page v1 and v2, snappy/gzip/zstd/lz4_raw/brotli/lz4 (Hadoop framing
// or raw)/uncompressed, INT96 and
// TIMESTAMP(MILLIS|MICROS|NANOS) timestamps (converted to micros), decimals
// in INT32/INT64/FIXED_LEN_BYTE_ARRAY/BYTE_ARRAY.
//
// Thread safety: one reader per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/columnar/predicate.h"
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
  // naming the column and an unsupported encoding or codec (LZO).
  virtual Result<columnar::RecordBatchPtr> ReadRowGroup(
      int index, const std::vector<std::string>& columns = {}) = 0;

  // Bloom-filter lookup: whether row group `index` may hold `value` in
  // `column` (a top-level column or a dotted path through structs, typed
  // `type`, the value encoded as columnar/predicate.h says). nullopt when the
  // chunk has no bloom filter or the filter cannot answer for this value
  // (see pruning.h); false when the value is certainly absent. Errors:
  // InvalidArgument for an unknown column or row group; Corruption for a
  // malformed filter; NotSupported for filters other than split-block
  // xxHash.
  virtual Result<std::optional<bool>> BloomFilterMightContain(
      int index, const std::string& column, const columnar::TypePtr& type,
      const columnar::PredicateValue& value) = 0;

  // Pruning (see columnar/predicate.h; conservative). The indexes, ascending,
  // of the row groups that may hold a row satisfying `predicate`, judged by
  // column-chunk statistics and, for kEq/kIn, bloom filters when present.
  // Predicates on columns the file lacks or has no statistics for keep the
  // row group. The default keeps every row group.
  virtual Result<std::vector<int>> SelectRowGroups(const columnar::Conjunction& predicate) {
    (void)predicate;
    std::vector<int> all(static_cast<size_t>(num_row_groups()));
    for (int i = 0; i < num_row_groups(); ++i) all[static_cast<size_t>(i)] = i;
    return all;
  }
  // As ReadRowGroup, but pages that the page index rules out for
  // `predicate` may be skipped: the batch holds every row of the row group
  // that could satisfy it (a superset, whole pages, in file order); the
  // caller still filters. The default reads the whole row group.
  //
  // silt's reader: each predicate on an unrepeated leaf whose chunk has a
  // column index and an offset index yields the row ranges of its surviving
  // pages; the ranges are intersected across predicates. Projected flat
  // columns with an offset index then read and decode only the pages that
  // overlap the surviving rows (plus the dictionary page) and keep exactly
  // those rows; nested columns, struct-field projections and chunks without
  // an offset index are read whole and cut to the same rows, so every
  // column of the batch holds the same rows.
  virtual Result<columnar::RecordBatchPtr> ReadRowGroupPruned(
      int index, const std::vector<std::string>& columns, const columnar::Conjunction& predicate) {
    (void)predicate;
    return ReadRowGroup(index, columns);
  }
};

}  // namespace silt::parquet
