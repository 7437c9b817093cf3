// PageReader: the pages of one column chunk, one at a time: page headers
// (dictionary, data page v1 and v2), decompression, and the split of a data
// page into its repetition levels, definition levels and values. Also the
// small decoders every reader of those sections needs: levels in bounded
// steps, dictionary indices, PLAIN byte arrays.
//
// Both Parquet readers use it: ColumnChunkReader (column_reader.h) over a
// chunk read whole into memory, and the Delta checkpoint reader
// (delta/checkpoint_reader.cc) straight from a file, one page per column at
// a time. What the values mean (types, conversions, the output column or
// the rows they are assembled into) stays with them.
//
// Buffers. The reader owns every buffer it fills; the caller owns the chunk
// (memory source) or the file (file source), which must outlive the reader
// or its next Reset. Views into the current page (DataPage, the header) are
// valid until the next call of Next or Reset (read each page's body once:
// ReadDictionary / ReadDataPage); the DictionaryPage view stays
// valid until the next dictionary page is read or Reset (the reader copies
// an uncompressed dictionary out of a file-source page for that).
//
// Corrupt input. Every length a header declares is checked against the
// bytes actually there before anything is allocated for it: a page body
// must lie inside the chunk, decompressed sizes are capped by what the
// compressed bytes can hold (Decompressor::CheckUncompressedSize), level
// sections must lie inside their page. A page's value count is a claim:
// AppendLevels decodes levels in bounded steps so memory grows only as far
// as the encoded runs reach. Errors are Corruption (NotSupported for
// encodings not decoded here) with bare messages; callers add the column and
// the page position.
//
// Thread safety: one reader per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "silt/base/result.h"
#include "silt/fs/file_system.h"
#include "silt/parquet/compression.h"
#include "silt/parquet/parquet_metadata.h"
#include "silt/parquet/rle_decoder.h"

namespace silt::parquet {

// The values of a dictionary page: `num_values` PLAIN entries,
// uncompressed (possibly followed by slack).
struct DictionaryPage {
  int64_t num_values = 0;
  std::string_view values;
};

// A data page (v1 or v2), uncompressed and split into its sections.
struct DataPage {
  int64_t num_values = 0;                // level entries (rows for a flat column)
  std::optional<int64_t> num_nulls;      // the v2 header's count; v1 does not state it
  Encoding encoding = Encoding::kPlain;  // of the values
  // RLE (the hybrid runs, without v1's length prefix) or, v1 only,
  // BIT_PACKED. A section is empty when its maximum level is 0.
  Encoding repetition_level_encoding = Encoding::kRle;
  Encoding definition_level_encoding = Encoding::kRle;
  std::string_view repetition_levels;
  std::string_view definition_levels;
  std::string_view values;
};

class PageReader {
 public:
  // `decompressor` decodes the chunk's codec; the maximum levels say which
  // level sections a data page has.
  PageReader(std::unique_ptr<Decompressor> decompressor, int max_repetition_level,
             int max_definition_level);

  CompressionCodec codec() const { return decompressor_->codec(); }

  // Starts over on a chunk held in memory.
  void Reset(std::string_view chunk);
  // Starts over on the chunk at [offset, offset + size) of `file`, read page
  // by page. REQUIRES: the range lies inside the file (checked by the caller
  // against the file size).
  void Reset(fs::RandomAccessFile* file, int64_t offset, int64_t size);

  // True when no page is left in the chunk.
  bool at_end() const { return next_ >= size_; }
  // Offset in the chunk of the current page's header (set by Next, also
  // when it fails).
  int64_t page_offset() const { return page_offset_; }

  // Moves to the next page: parses its header and locates its body (a
  // file source reads it). Nothing is decompressed yet.
  // Errors: Corruption when the header is malformed or the body runs past
  // the chunk; IOError from the file.
  Status Next();
  // True when the last Next got as far as parsing a header (so header()
  // is set even if the page then ran past the chunk).
  bool has_header() const { return has_header_; }
  const PageHeader& header() const { return header_; }

  // The current page, which must be a dictionary page (PLAIN or
  // PLAIN_DICTIONARY), decompressed.
  Result<DictionaryPage> ReadDictionary();
  // The current page, which must be a data page (v1 or v2), decompressed
  // and split. Levels of v1 pages must be RLE (or BIT_PACKED for the
  // definition levels of a column whose maximum definition level is 1).
  Result<DataPage> ReadDataPage();

 private:
  Result<std::string_view> Uncompress(std::string_view page, int64_t uncompressed_size,
                                      std::string* buffer);
  Status ReadFilePage();
  // Frees raw_ once nothing points into it (file source).
  void ReleaseRaw();
  Result<DataPage> SplitV1();
  Result<DataPage> SplitV2();

  std::unique_ptr<Decompressor> decompressor_;
  const int max_repetition_level_;
  const int max_definition_level_;
  // Memory source: the chunk. File source: file_ and the range.
  std::string_view chunk_;
  fs::RandomAccessFile* file_ = nullptr;
  int64_t file_offset_ = 0;
  int64_t size_ = 0;         // of the chunk
  int64_t next_ = 0;         // offset of the next page's header
  int64_t page_offset_ = 0;  // offset of the current page's header
  bool has_header_ = false;
  PageHeader header_;
  std::string_view body_;  // the current page as stored
  std::string raw_;        // file source: bytes read for the current page
  std::string page_buffer_;
  std::string dict_buffer_;
};

// Bit width of level values up to `max_level` (0 for 0).
int LevelBitWidth(int max_level);

// Decodes `n` levels from `decoder` onto the end of `levels` in steps of at
// most 2^16 entries, so the vector grows only as far as the encoded runs
// actually reach (a page header may claim any count). Returns false when
// the levels end early (`levels` then holds those decoded).
bool AppendLevels(RleDecoder* decoder, int64_t n, std::vector<int16_t>* levels);

// Points `decoder` at the dictionary indices of a values section (a bit
// width byte, then RLE/bit-packed runs). An empty section decodes no
// index. Errors: Corruption for a bit width above 32.
Status StartDictionaryIndices(std::string_view values, RleDecoder* decoder);

// Reads `n` PLAIN byte arrays (4-byte length + bytes), or fixed-length
// arrays when `width` > 0, from [data, data + size) into `views`, which
// point into the data. Errors: Corruption when they run past the end.
Status ParsePlainByteArrays(const uint8_t* data, int64_t size, int64_t n, int width,
                            std::string_view* views);

// The PLAIN byte array at the start of *values, which then starts after it.
// Errors: Corruption when it runs past the end.
Status NextPlainByteArray(std::string_view* values, std::string_view* out);

}  // namespace silt::parquet
