// Page compression codecs (Compression.md): SNAPPY (raw snappy), GZIP (RFC
// 1952 members via zlib), ZSTD, LZ4_RAW (LZ4 block format) and UNCOMPRESSED;
// for reading also BROTLI (libbrotlidec) and the deprecated LZ4 (Hadoop's
// framing of LZ4 blocks, with a fallback to one raw LZ4 block as Arrow
// does). Page bodies are fed to the libraries as-is otherwise.
//
// A Compressor/Decompressor keeps its library context (zstd, zlib) across
// pages; make one per column writer or reader, not per page.
//
// Thread safety: one instance per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "silt/base/result.h"
#include "silt/parquet/parquet_metadata.h"

namespace silt::parquet {

class Compressor {
 public:
  // `level` applies to zstd and gzip (gzip: 1..9, out of range = default).
  // Errors: NotSupported for codecs silt does not write (LZO, BROTLI, LZ4).
  static Result<std::unique_ptr<Compressor>> Make(CompressionCodec codec, int level);
  ~Compressor();

  CompressionCodec codec() const { return codec_; }
  // Replaces `*output` with the compressed form of `input`.
  // Errors: Internal when the library fails.
  Status Compress(std::string_view input, std::string* output);
  // The compressed form of `first` followed by `second` (a page body built
  // in two buffers), without joining them where the codec reads pieces
  // (snappy); uncompressed, an empty `first` gives `second` itself. The
  // view lives until the next call on this compressor. Errors: as Compress.
  Result<std::string_view> CompressPieces(std::string_view first, std::string_view second);

 private:
  Compressor(CompressionCodec codec, int level);
  CompressionCodec codec_;
  int level_;
  struct State;
  std::unique_ptr<State> state_;
};

class Decompressor {
 public:
  // Errors: NotSupported naming codecs silt cannot read (LZO).
  static Result<std::unique_ptr<Decompressor>> Make(CompressionCodec codec);
  ~Decompressor();

  CompressionCodec codec() const { return codec_; }
  // Checks, before any buffer is allocated, that `input` can plausibly
  // decompress to `output_size` bytes (the size a page header claims):
  // snappy and zstd record the size, LZ4 and deflate bound the ratio.
  // Errors: Corruption.
  Status CheckUncompressedSize(std::string_view input, int64_t output_size) const;

  // Decompresses `input` into exactly `output_size` bytes at `output`.
  // Errors: Corruption when the input is malformed or its decompressed size
  // differs from `output_size`.
  Status Decompress(std::string_view input, uint8_t* output, int64_t output_size);

 private:
  explicit Decompressor(CompressionCodec codec);
  CompressionCodec codec_;
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace silt::parquet
