#include "silt/parquet/compression.h"

#include <brotli/decode.h>
#include <lz4.h>
#include <snappy-sinksource.h>
#include <snappy.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <limits>

namespace silt::parquet {

namespace {

// zlib's windowBits: 15 (32 KiB window) + 16 selects the gzip wrapper when
// compressing; + 32 auto-detects gzip or zlib headers when inflating.
constexpr int kGzipWindowBits = 15 + 16;
constexpr int kAutoDetectWindowBits = 15 + 32;

uint32_t LoadBigEndian32(const char* p) {
  const auto* u = reinterpret_cast<const uint8_t*>(p);
  return (static_cast<uint32_t>(u[0]) << 24) | (static_cast<uint32_t>(u[1]) << 16) |
         (static_cast<uint32_t>(u[2]) << 8) | static_cast<uint32_t>(u[3]);
}

// Hadoop's LZ4 framing (the legacy LZ4 codec as parquet-mr writes it):
// blocks of [uncompressed size, compressed size] (4-byte big-endian each)
// followed by an LZ4 block. False when `input` is not exactly such a
// sequence filling `output_size` bytes.
bool DecompressHadoopLz4(std::string_view input, uint8_t* output, int64_t output_size) {
  const char* p = input.data();
  size_t left = input.size();
  int64_t produced = 0;
  while (left > 0) {
    if (left < 8) return false;
    const uint32_t raw = LoadBigEndian32(p);
    const uint32_t packed = LoadBigEndian32(p + 4);
    p += 8;
    left -= 8;
    if (packed > left || static_cast<int64_t>(raw) > output_size - produced ||
        packed > static_cast<uint32_t>(std::numeric_limits<int>::max())) {
      return false;
    }
    const int n = LZ4_decompress_safe(p, reinterpret_cast<char*>(output + produced),
                                      static_cast<int>(packed), static_cast<int>(raw));
    if (n < 0 || static_cast<uint32_t>(n) != raw) return false;
    produced += n;
    p += packed;
    left -= packed;
  }
  return produced == output_size;
}

// Two buffers read as one by snappy: its compressor copies a 64 KiB block
// into its own scratch only where the block spans both, so the output is
// byte for byte RawCompress's of the joined input.
class TwoPieceSource final : public snappy::Source {
 public:
  TwoPieceSource(std::string_view first, std::string_view second)
      : first_(first), second_(second) {}
  size_t Available() const override { return first_.size() + second_.size(); }
  const char* Peek(size_t* len) override {
    std::string_view piece = first_.empty() ? second_ : first_;
    *len = piece.size();
    return piece.data();
  }
  void Skip(size_t n) override {
    const size_t from_first = std::min(n, first_.size());
    first_.remove_prefix(from_first);
    second_.remove_prefix(n - from_first);
  }

 private:
  std::string_view first_;
  std::string_view second_;
};

}  // namespace

struct Compressor::State {
  ZSTD_CCtx* zstd = nullptr;
  z_stream zlib;
  bool zlib_ready = false;
  // Snappy's output bound, kept across pages: sizing the output string to
  // the bound zero-filled it on every page only for most of it to be cut.
  std::unique_ptr<char[]> scratch;
  size_t scratch_size = 0;
  // CompressPieces: the joined input where a codec needs one buffer, and
  // the output of the codecs that write a string.
  std::string joined;
  std::string output;
  ~State() {
    if (zstd != nullptr) ZSTD_freeCCtx(zstd);
    if (zlib_ready) deflateEnd(&zlib);
  }
};

struct Decompressor::State {
  ZSTD_DCtx* zstd = nullptr;
  z_stream zlib;
  bool zlib_ready = false;
  ~State() {
    if (zstd != nullptr) ZSTD_freeDCtx(zstd);
    if (zlib_ready) inflateEnd(&zlib);
  }
};

Result<std::unique_ptr<Compressor>> Compressor::Make(CompressionCodec codec, int level) {
  std::unique_ptr<Compressor> c(new Compressor(codec, level));
  switch (codec) {
    case CompressionCodec::kUncompressed:
    case CompressionCodec::kSnappy:
    case CompressionCodec::kLz4Raw: break;
    case CompressionCodec::kZstd:
      c->state_->zstd = ZSTD_createCCtx();
      if (c->state_->zstd == nullptr) return Status::Internal("cannot create a zstd context");
      break;
    case CompressionCodec::kGzip: {
      std::memset(&c->state_->zlib, 0, sizeof(z_stream));
      int gz_level = level >= 1 && level <= 9 ? level : Z_DEFAULT_COMPRESSION;
      if (deflateInit2(&c->state_->zlib, gz_level, Z_DEFLATED, kGzipWindowBits, 8,
                       Z_DEFAULT_STRATEGY) != Z_OK) {
        return Status::Internal("cannot initialise zlib for gzip compression");
      }
      c->state_->zlib_ready = true;
      break;
    }
    default: return Status::NotSupported("writing Parquet compression codec ", CodecName(codec));
  }
  return c;
}

Compressor::Compressor(CompressionCodec codec, int level)
    : codec_(codec), level_(level), state_(std::make_unique<State>()) {}

Compressor::~Compressor() = default;

Status Compressor::Compress(std::string_view input, std::string* output) {
  switch (codec_) {
    case CompressionCodec::kUncompressed:
      output->assign(input.data(), input.size());
      return Status::OK();
    case CompressionCodec::kSnappy: {
      const size_t bound = snappy::MaxCompressedLength(input.size());
      if (state_->scratch_size < bound) {
        state_->scratch = std::make_unique_for_overwrite<char[]>(bound);
        state_->scratch_size = bound;
      }
      size_t n = 0;
      snappy::RawCompress(input.data(), input.size(), state_->scratch.get(), &n);
      output->assign(state_->scratch.get(), n);
      return Status::OK();
    }
    case CompressionCodec::kZstd: {
      output->resize(ZSTD_compressBound(input.size()));
      size_t n = ZSTD_compressCCtx(state_->zstd, output->data(), output->size(), input.data(),
                                   input.size(), level_);
      if (ZSTD_isError(n)) {
        return Status::Internal("zstd compression failed: ", ZSTD_getErrorName(n));
      }
      output->resize(n);
      return Status::OK();
    }
    case CompressionCodec::kLz4Raw: {
      if (input.size() > static_cast<size_t>(LZ4_MAX_INPUT_SIZE)) {
        return Status::Internal("page of ", input.size(), " bytes is too large for LZ4");
      }
      output->resize(static_cast<size_t>(LZ4_compressBound(static_cast<int>(input.size()))));
      int n = LZ4_compress_default(input.data(), output->data(), static_cast<int>(input.size()),
                                   static_cast<int>(output->size()));
      if (n <= 0 && !input.empty()) return Status::Internal("lz4 compression failed");
      output->resize(static_cast<size_t>(n));
      return Status::OK();
    }
    case CompressionCodec::kGzip: {
      z_stream& zs = state_->zlib;
      if (deflateReset(&zs) != Z_OK) return Status::Internal("zlib deflateReset failed");
      output->resize(deflateBound(&zs, static_cast<uLong>(input.size())));
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input.data()));
      zs.avail_in = static_cast<uInt>(input.size());
      zs.next_out = reinterpret_cast<Bytef*>(output->data());
      zs.avail_out = static_cast<uInt>(output->size());
      int rc = deflate(&zs, Z_FINISH);
      if (rc != Z_STREAM_END)
        return Status::Internal("gzip compression failed (zlib code ", rc, ")");
      output->resize(zs.total_out);
      return Status::OK();
    }
    default: return Status::NotSupported("writing Parquet compression codec ", CodecName(codec_));
  }
}

Result<std::string_view> Compressor::CompressPieces(std::string_view first,
                                                    std::string_view second) {
  if (codec_ == CompressionCodec::kSnappy) {
    TwoPieceSource source(first, second);
    const size_t bound = snappy::MaxCompressedLength(source.Available());
    if (state_->scratch_size < bound) {
      state_->scratch = std::make_unique_for_overwrite<char[]>(bound);
      state_->scratch_size = bound;
    }
    snappy::UncheckedByteArraySink sink(state_->scratch.get());
    const size_t n = snappy::Compress(&source, &sink);
    return std::string_view(state_->scratch.get(), n);
  }
  std::string_view input = first.empty() ? second : first;
  if (!first.empty() && !second.empty()) {
    state_->joined.assign(first);
    state_->joined.append(second);
    input = state_->joined;
  }
  if (codec_ == CompressionCodec::kUncompressed) return input;
  SILT_RETURN_NOT_OK(Compress(input, &state_->output));
  return std::string_view(state_->output);
}

Result<std::unique_ptr<Decompressor>> Decompressor::Make(CompressionCodec codec) {
  std::unique_ptr<Decompressor> d(new Decompressor(codec));
  switch (codec) {
    case CompressionCodec::kUncompressed:
    case CompressionCodec::kSnappy:
    case CompressionCodec::kLz4Raw:
    case CompressionCodec::kLz4:
    case CompressionCodec::kBrotli: break;
    case CompressionCodec::kZstd:
      d->state_->zstd = ZSTD_createDCtx();
      if (d->state_->zstd == nullptr) return Status::Internal("cannot create a zstd context");
      break;
    case CompressionCodec::kGzip:
      std::memset(&d->state_->zlib, 0, sizeof(z_stream));
      if (inflateInit2(&d->state_->zlib, kAutoDetectWindowBits) != Z_OK) {
        return Status::Internal("cannot initialise zlib for gzip decompression");
      }
      d->state_->zlib_ready = true;
      break;
    default: return Status::NotSupported("Parquet compression codec ", CodecName(codec));
  }
  return d;
}

Decompressor::Decompressor(CompressionCodec codec)
    : codec_(codec), state_(std::make_unique<State>()) {}

Decompressor::~Decompressor() = default;

Status Decompressor::CheckUncompressedSize(std::string_view input, int64_t output_size) const {
  if (output_size < 0) return Status::Corruption("negative uncompressed page size");
  const int64_t in = static_cast<int64_t>(input.size());
  auto implausible = [&]() {
    return Status::Corruption(CodecName(codec_), " page of ", in, " bytes cannot hold the ",
                              output_size, " bytes its header claims");
  };
  switch (codec_) {
    case CompressionCodec::kUncompressed:
      if (in != output_size) return implausible();
      return Status::OK();
    case CompressionCodec::kSnappy: {
      // Snappy's densest element, a 3-byte copy of 64 bytes, expands 21.3:1;
      // the stream's own length prefix is as much a claim as the header.
      if (output_size > in * 22 + 16) return implausible();
      size_t n = 0;
      if (!snappy::GetUncompressedLength(input.data(), input.size(), &n)) {
        return Status::Corruption("invalid snappy data");
      }
      if (static_cast<int64_t>(n) != output_size) {
        return Status::Corruption("snappy page decompresses to ", n, " bytes, header says ",
                                  output_size);
      }
      return Status::OK();
    }
    case CompressionCodec::kZstd: {
      // A 128 KiB block shrinks to 4 bytes at best; frame headers, which
      // usually record the content size, are claims too.
      if (output_size > in * 32768 + (1 << 20)) return implausible();
      // Frames usually record their size; the sum must match the header.
      unsigned long long n = 0;
      const char* p = input.data();
      size_t left = input.size();
      while (left > 0 && n != ZSTD_CONTENTSIZE_UNKNOWN) {
        const size_t frame = ZSTD_findFrameCompressedSize(p, left);
        const unsigned long long content = ZSTD_getFrameContentSize(p, left);
        if (ZSTD_isError(frame) || content == ZSTD_CONTENTSIZE_ERROR) {
          return Status::Corruption("invalid zstd data");
        }
        n = content == ZSTD_CONTENTSIZE_UNKNOWN ? content : n + content;
        p += frame;
        left -= frame;
      }
      if (n != ZSTD_CONTENTSIZE_UNKNOWN) {
        if (n != static_cast<unsigned long long>(output_size)) {
          return Status::Corruption("zstd page decompresses to ", n, " bytes, header says ",
                                    output_size);
        }
        return Status::OK();
      }
      return Status::OK();
    }
    case CompressionCodec::kLz4Raw:
    case CompressionCodec::kLz4:
      // LZ4 expands at most ~255:1.
      if (output_size > in * 255 + 64) return implausible();
      return Status::OK();
    case CompressionCodec::kBrotli:
      // Brotli records no size; bound it like zstd without sizes.
      if (output_size > in * 65536 + (1 << 20)) return implausible();
      return Status::OK();
    case CompressionCodec::kGzip:
      // Deflate expands at most ~1032:1.
      if (output_size > in * 1032 + 1024) return implausible();
      return Status::OK();
    default: return Status::NotSupported("Parquet compression codec ", CodecName(codec_));
  }
}

Status Decompressor::Decompress(std::string_view input, uint8_t* output, int64_t output_size) {
  auto size_mismatch = [&](uint64_t actual) {
    return Status::Corruption(CodecName(codec_), " page decompressed to ", actual,
                              " bytes, header says ", output_size);
  };
  switch (codec_) {
    case CompressionCodec::kUncompressed:
      if (static_cast<int64_t>(input.size()) != output_size) return size_mismatch(input.size());
      if (output_size > 0) std::memcpy(output, input.data(), input.size());
      return Status::OK();
    case CompressionCodec::kSnappy: {
      size_t n = 0;
      if (!snappy::GetUncompressedLength(input.data(), input.size(), &n)) {
        return Status::Corruption("invalid snappy data");
      }
      if (static_cast<int64_t>(n) != output_size) return size_mismatch(n);
      if (!snappy::RawUncompress(input.data(), input.size(), reinterpret_cast<char*>(output))) {
        return Status::Corruption("invalid snappy data");
      }
      return Status::OK();
    }
    case CompressionCodec::kZstd: {
      size_t n = ZSTD_decompressDCtx(state_->zstd, output, static_cast<size_t>(output_size),
                                     input.data(), input.size());
      if (ZSTD_isError(n)) return Status::Corruption("invalid zstd data: ", ZSTD_getErrorName(n));
      if (static_cast<int64_t>(n) != output_size) return size_mismatch(n);
      return Status::OK();
    }
    case CompressionCodec::kLz4Raw: {
      if (input.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
          output_size > std::numeric_limits<int>::max()) {
        return Status::Corruption("LZ4 page too large");
      }
      int n = LZ4_decompress_safe(input.data(), reinterpret_cast<char*>(output),
                                  static_cast<int>(input.size()), static_cast<int>(output_size));
      if (n < 0) return Status::Corruption("invalid lz4 data");
      if (n != output_size) return size_mismatch(static_cast<uint64_t>(n));
      return Status::OK();
    }
    case CompressionCodec::kLz4: {
      // Hadoop-framed blocks, else (as Arrow does, for files older writers
      // made) one raw LZ4 block.
      if (DecompressHadoopLz4(input, output, output_size)) return Status::OK();
      if (input.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
          output_size > std::numeric_limits<int>::max()) {
        return Status::Corruption("LZ4 page too large");
      }
      int n = LZ4_decompress_safe(input.data(), reinterpret_cast<char*>(output),
                                  static_cast<int>(input.size()), static_cast<int>(output_size));
      if (n < 0) return Status::Corruption("invalid lz4 data (neither Hadoop-framed nor raw)");
      if (n != output_size) return size_mismatch(static_cast<uint64_t>(n));
      return Status::OK();
    }
    case CompressionCodec::kBrotli: {
      size_t n = static_cast<size_t>(output_size);
      const BrotliDecoderResult rc = BrotliDecoderDecompress(
          input.size(), reinterpret_cast<const uint8_t*>(input.data()), &n, output);
      if (rc != BROTLI_DECODER_RESULT_SUCCESS) {
        return Status::Corruption(rc == BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT
                                      ? "brotli page decompresses to more than the header says"
                                      : "invalid brotli data");
      }
      if (static_cast<int64_t>(n) != output_size) return size_mismatch(n);
      return Status::OK();
    }
    case CompressionCodec::kGzip: {
      // A page may hold several gzip members back to back; inflate them in
      // turn until the input is used up.
      z_stream& zs = state_->zlib;
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input.data()));
      zs.avail_in = static_cast<uInt>(input.size());
      zs.next_out = output;
      zs.avail_out = static_cast<uInt>(output_size);
      int64_t produced = 0;
      while (true) {
        if (inflateReset(&zs) != Z_OK) return Status::Internal("zlib inflateReset failed");
        uInt out_before = zs.avail_out;
        int rc = inflate(&zs, Z_FINISH);
        produced += out_before - zs.avail_out;
        if (rc == Z_STREAM_END) {
          if (zs.avail_in == 0) break;
          continue;
        }
        if (rc == Z_BUF_ERROR && zs.avail_out == 0) {
          return Status::Corruption("gzip page decompresses to more than ", output_size, " bytes");
        }
        return Status::Corruption("invalid gzip data (zlib code ", rc, ")");
      }
      if (produced != output_size) return size_mismatch(static_cast<uint64_t>(produced));
      return Status::OK();
    }
    default: return Status::NotSupported("Parquet compression codec ", CodecName(codec_));
  }
}

}  // namespace silt::parquet
