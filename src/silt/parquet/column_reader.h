// ColumnChunkReader: decodes the pages of one leaf column chunk into a
// Column of the leaf's Spark type.
//
// For a top-level primitive the column has one row per file row. For a leaf
// of a nested field (max repetition level > 0 or max definition level > 1)
// the reader also keeps the chunk's repetition and definition levels, and
// the column holds one row per leaf slot: each level entry whose definition
// level reaches slot_definition_level (entries below it stand for null or
// empty ancestors); the slot is valid when the level is the maximum. The
// file reader assembles the nested column from these (see nested_reader.h).
//
// The chunk's bytes arrive whole (one ranged read by the file reader). Pages
// are walked in order by a PageReader (page_reader.h: headers,
// decompression, level sections): a dictionary page is decoded once and converted to
// the output type; each data page (v1 or v2) has its definition levels
// decoded straight into the validity bitmap, then one virtual call hands the
// values to a typed decoder that writes them at their rows: a memcpy for
// null-free PLAIN data of the output's own width, a dense decode plus scatter
// when the page has nulls, and a gather from the converted dictionary for
// RLE_DICTIONARY / PLAIN_DICTIONARY pages.
//
// Readers keep their scratch buffers and decompression contexts between
// chunks; the file reader keeps one per column.
//
// Thread safety: one reader per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/parquet/compression.h"
#include "silt/parquet/page_reader.h"
#include "silt/parquet/parquet_metadata.h"
#include "silt/parquet/parquet_schema.h"

namespace silt::parquet {

class ColumnChunkReader {
 public:
  // Picks the decoder for `descriptor` (which must be flat and supported).
  // Errors: NotSupported naming the column for shapes or codecs silt cannot
  // read.
  static Result<std::unique_ptr<ColumnChunkReader>> Make(const ColumnDescriptor& descriptor,
                                                         CompressionCodec codec);
  virtual ~ColumnChunkReader() = default;

  CompressionCodec codec() const { return pages_.codec(); }

  // Decodes `chunk`, the bytes of a column chunk holding `num_rows` rows,
  // which start at `file_offset` in the file (-1: not one contiguous range;
  // errors then give no file offsets).
  // Errors: Corruption describing the first malformed page with its file
  // offset (the caller adds path and row group); NotSupported for encodings
  // silt does not decode, naming the encoding.
  //
  // Memory: output buffers are sized by counts the file declares only once
  // the chunk's pages account for them: a flat column's row count must be
  // covered by its pages' value counts; a nested leaf grows its levels and
  // values page by page as the levels actually decode, so a page header
  // claiming more values than its levels hold fails before buffers are
  // sized by the claim.
  Result<columnar::ColumnPtr> Read(std::string_view chunk, int64_t num_rows,
                                   int64_t file_offset = -1);

  // True when the leaf has repetition or more than one definition level; the
  // levels below are then filled by Read (one entry per level, in order).
  bool nested() const { return nested_; }
  const std::vector<int16_t>& definition_levels() const { return def_levels_; }
  const std::vector<int16_t>& repetition_levels() const { return rep_levels_; }

 protected:
  ColumnChunkReader(const ColumnDescriptor& descriptor, std::unique_ptr<Decompressor> d)
      : name_(descriptor.field.name),
        type_(descriptor.field.type),
        max_definition_level_(descriptor.max_definition_level),
        max_repetition_level_(descriptor.max_repetition_level),
        slot_definition_level_(descriptor.slot_definition_level),
        nested_(descriptor.max_repetition_level > 0 || descriptor.max_definition_level > 1),
        pages_(std::move(d), descriptor.max_repetition_level, descriptor.max_definition_level) {}

  // Typed hooks, called once per chunk / page.
  virtual void BeginChunk(int64_t num_rows) = 0;
  // Grows the output buffers to hold `num_rows` rows (nested leaves, whose
  // slot count is known only page by page), keeping the rows decoded.
  virtual void GrowChunk(int64_t num_rows) = 0;
  // `data` holds `num_values` PLAIN entries (possibly followed by slack).
  virtual Status SetDictionary(const uint8_t* data, int64_t size, int64_t num_values) = 0;
  // Decodes the values section of a data page holding `num_values` rows, of
  // which `num_non_null` are defined, placed at rows [row_offset, row_offset
  // + num_values). `validity` is the chunk's bitmap, or null when the page
  // has no nulls.
  virtual Status DecodePage(Encoding encoding, const uint8_t* data, int64_t size,
                            int64_t num_values, int64_t num_non_null, int64_t row_offset,
                            const uint8_t* validity) = 0;
  virtual columnar::ColumnPtr FinishChunk(int64_t num_rows, BufferPtr validity,
                                          int64_t null_count) = 0;

  const std::string name_;
  const columnar::TypePtr type_;

 private:
  // The current page of pages_, a data page v1 / v2.
  Status ReadDataPageV1(int64_t row_offset, int64_t num_rows, int64_t* rows_read);
  Status ReadDataPageV2(int64_t row_offset, int64_t num_rows, int64_t* rows_read);
  // Decodes `num_values` definition levels (bit width 1) into validity_ at
  // `row_offset`; returns how many were defined.
  Result<int64_t> DecodeLevels(const uint8_t* data, int64_t size, int64_t row_offset,
                               int64_t num_values);

  // Nested leaves: decodes the page's levels at level_pos_, marks the leaf
  // slots they open in validity_ from slot_pos_, and returns the slot count
  // and the number of defined values.
  Status DecodeNestedLevels(const DataPage& page, int64_t n, int64_t* slots, int64_t* defined);
  Result<columnar::ColumnPtr> ReadNested(std::string_view chunk, int64_t num_rows);
  Status ReadPages(std::string_view chunk, int64_t num_rows);
  // " at file offset N" for the byte at `pos` of the chunk, or "" when the
  // chunk's file offset is unknown.
  std::string AtOffset(size_t pos) const;
  // Corruption unless the chunk's data pages declare at least `num_rows`
  // values (checked before output buffers are sized by num_rows).
  Status CheckChunkHoldsRows(std::string_view chunk, int64_t num_rows);

  const int max_definition_level_;
  const int max_repetition_level_;
  const int slot_definition_level_;
  const bool nested_;
  std::vector<int16_t> def_levels_;
  std::vector<int16_t> rep_levels_;
  int64_t level_pos_ = 0;     // nested: level entries decoded so far
  int64_t slot_pos_ = 0;      // nested: leaf slots filled so far
  int64_t file_offset_ = -1;  // of the chunk being read
  PageReader pages_;
  std::shared_ptr<Buffer> validity_;
  bool has_dictionary_ = false;
};

}  // namespace silt::parquet
