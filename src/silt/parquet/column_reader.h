// ColumnChunkReader: decodes the pages of one flat (top-level primitive)
// column chunk into a Column of the field's Spark type.
//
// The chunk's bytes arrive whole (one ranged read by the file reader). Pages
// are walked in order: a dictionary page is decoded once and converted to
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

#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/parquet/compression.h"
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

  CompressionCodec codec() const { return decompressor_->codec(); }

  // Decodes `chunk`, the bytes of a column chunk holding `num_rows` rows.
  // Errors: Corruption describing the first malformed page (the caller adds
  // path, row group and column); NotSupported for encodings silt does not
  // decode (DELTA_*, BYTE_STREAM_SPLIT), naming the encoding.
  Result<columnar::ColumnPtr> Read(std::string_view chunk, int64_t num_rows);

 protected:
  ColumnChunkReader(const ColumnDescriptor& descriptor, std::unique_ptr<Decompressor> d)
      : name_(descriptor.field.name),
        type_(descriptor.field.type),
        max_definition_level_(descriptor.max_definition_level),
        decompressor_(std::move(d)) {}

  // Typed hooks, called once per chunk / page.
  virtual void BeginChunk(int64_t num_rows) = 0;
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
  // Returns the page body uncompressed: `page` itself when the codec is
  // none, else a view of page_buffer_ / dict_buffer_.
  Result<std::string_view> Uncompress(std::string_view page, int64_t uncompressed_size,
                                      std::string* buffer);
  Status ReadDataPageV1(const PageHeader& header, std::string_view page, int64_t row_offset,
                        int64_t num_rows, int64_t* rows_read);
  Status ReadDataPageV2(const PageHeader& header, std::string_view page, int64_t row_offset,
                        int64_t num_rows, int64_t* rows_read);
  // Decodes `num_values` definition levels (bit width 1) into validity_ at
  // `row_offset`; returns how many were defined.
  Result<int64_t> DecodeLevels(const uint8_t* data, int64_t size, int64_t row_offset,
                               int64_t num_values);

  const int max_definition_level_;
  std::unique_ptr<Decompressor> decompressor_;
  std::string page_buffer_;
  std::string dict_buffer_;
  std::shared_ptr<Buffer> validity_;
  bool has_dictionary_ = false;
};

}  // namespace silt::parquet
