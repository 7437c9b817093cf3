// ColumnWriter: encodes one leaf column of a Parquet file (a top-level
// primitive, or a leaf of a nested field fed with levels by
// nested_writer.h), one row group's column chunk at a time.
//
// Per slice of rows, the writer makes one dispatch on nullability, then runs
// typed loops: definition levels into an RLE encoder (a single run when the
// slice has no nulls), non-null values gathered into a dense array of the
// physical type (no copy at all for null-free int/long/float/double data),
// statistics, and either dictionary indices or PLAIN bytes for the open
// page. Pages close at WriterOptions::page_bytes; each is compressed and
// buffered with its header until the row group is flushed, when the
// dictionary page (PLAIN entries) is written first, followed by the data
// pages. A dictionary whose PLAIN size passes dictionary_page_bytes_limit
// closes the current page and switches the column to PLAIN for the rest of
// the file; so does a dictionary that, when a chunk's first page closes,
// is not smaller (entries + indices) than that page's values PLAIN, and
// that page is then written PLAIN. Each dictionary-encoded page stores its
// indices at the bit width of its largest one, and closes early rather
// than widen once it holds enough indices.
//
// Thread safety: one writer per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/fs/file_system.h"
#include "silt/parquet/file_writer.h"
#include "silt/parquet/parquet_metadata.h"

namespace silt::parquet {

// Where a leaf sits in its field: its path from the root and its maximum
// levels. A top-level primitive has path {name}, repetition 0 and
// definition 1 when nullable.
struct LeafLayout {
  std::vector<std::string> path;
  int max_definition_level = 0;
  int max_repetition_level = 0;
};

class ColumnWriter {
 public:
  // Errors: NotSupported naming the field when its type cannot be written
  // (nested, void); NotSupported for an unknown compression codec.
  static Result<std::unique_ptr<ColumnWriter>> Make(const columnar::Field& field,
                                                    const WriterOptions& options);
  // A writer for one leaf of a nested field: `field` carries the leaf's
  // Spark type, `element` its schema element. Errors as Make.
  static Result<std::unique_ptr<ColumnWriter>> MakeLeaf(const columnar::Field& field,
                                                        SchemaElement element, LeafLayout layout,
                                                        const WriterOptions& options);
  virtual ~ColumnWriter() = default;

  // The leaf's schema element (name, physical and logical type, repetition).
  virtual const SchemaElement& schema_element() const = 0;

  // Encodes rows [offset, offset + length) of `column`.
  // REQUIRES: column.type equals the field's type; offset + length <=
  // column.length; no nulls in that range when the field is not nullable.
  // Errors: Internal when a compression library fails.
  virtual Status Write(const columnar::Column& column, int64_t offset, int64_t length) = 0;

  // Encodes rows rows[0], ..., rows[length - 1] of `column`, in that order,
  // as Write would encode a column holding just those rows.
  // REQUIRES: as Write, for each listed row (every rows[i] < column.length).
  virtual Status WriteRows(const columnar::Column& column, const int64_t* rows, int64_t length) = 0;

  // Encodes `num_levels` level entries of a nested leaf. `values` holds the
  // defined values densely from row `values_offset` (their nulls are
  // ignored): one per entry whose definition level is the maximum, in order.
  // Pages end only where a row starts.
  // REQUIRES: rep[0] == 0; enough rows in `values`.
  virtual Status WriteLevels(const columnar::Column& values, int64_t values_offset,
                             const int16_t* def, const int16_t* rep, int64_t num_levels) = 0;

  // Encoded bytes held for the current row group: finished pages, the open
  // page and the dictionary.
  virtual int64_t buffered_bytes() const = 0;

  // Closes the open page, appends the column chunk (dictionary page, then
  // data pages) to `file`, whose next byte is at `file_offset`, and returns
  // the chunk's metadata with offsets filled in. Resets for the next row
  // group. Errors: IOError from the file; Internal from compression.
  virtual Result<ColumnChunk> FlushChunk(int64_t file_offset, fs::WritableFile* file) = 0;

  // The serialized ColumnIndex and OffsetIndex of the chunk FlushChunk
  // returned last (empty when WriterOptions::write_page_index is off; the
  // column index is also empty when a page has values but no bounds). The
  // offset index holds absolute file offsets.
  virtual void TakePageIndex(std::string* column_index, std::string* offset_index) = 0;

  // The serialized bloom filter (header + bitset) of the chunk FlushChunk
  // returned last; empty when the column has none.
  virtual std::string TakeBloomFilter() = 0;

  // Statistics over every chunk flushed so far, as Delta needs them.
  virtual ColumnStats FileStats() const = 0;
};

}  // namespace silt::parquet
