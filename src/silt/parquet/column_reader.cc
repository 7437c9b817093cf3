#include "silt/parquet/column_reader.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "silt/base/bits.h"
#include "silt/parquet/delta_encoding.h"
#include "silt/parquet/plain_encoder.h"
#include "silt/parquet/rle_decoder.h"

namespace silt::parquet {

using columnar::Column;
using columnar::ColumnPtr;
using columnar::TypeId;

namespace {

// Dictionary indices decoded per step.
constexpr int64_t kIndexBatch = 1024;

// Julian day number of 1970-01-01 (INT96 timestamps count Julian days).
constexpr int64_t kJulianEpochDay = 2440588;
constexpr int64_t kMicrosPerDay = 86400LL * 1000 * 1000;

struct Int96 {
  uint8_t bytes[12];
};
static_assert(sizeof(Int96) == 12);

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// Physical -> output value conversions. kIdentity lets PLAIN pages memcpy.
template <typename P, typename O>
struct Cast {
  static constexpr bool kIdentity = std::is_same_v<P, O>;
  static O Apply(P v) { return static_cast<O>(v); }
};
struct ZeroExtend32 {
  static constexpr bool kIdentity = false;
  static int64_t Apply(int32_t v) { return static_cast<int64_t>(static_cast<uint32_t>(v)); }
};
struct ZeroExtend64 {
  static constexpr bool kIdentity = false;
  static __int128 Apply(int64_t v) { return static_cast<__int128>(static_cast<uint64_t>(v)); }
};
struct MillisToMicros {
  static constexpr bool kIdentity = false;
  static int64_t Apply(int64_t v) { return static_cast<int64_t>(static_cast<uint64_t>(v) * 1000u); }
};
struct NanosToMicros {
  static constexpr bool kIdentity = false;
  static int64_t Apply(int64_t v) { return FloorDiv(v, 1000); }
};
struct Int96ToMicros {
  static constexpr bool kIdentity = false;
  static int64_t Apply(Int96 v) {
    int64_t nanos;
    int32_t julian_day;
    std::memcpy(&nanos, v.bytes, 8);
    std::memcpy(&julian_day, v.bytes + 8, 4);
    // Wrapping arithmetic: days far outside any real timestamp's range
    // (corrupt files) give a wrong value, not undefined behaviour.
    const uint64_t day_micros =
        static_cast<uint64_t>(julian_day - kJulianEpochDay) * static_cast<uint64_t>(kMicrosPerDay);
    return static_cast<int64_t>(day_micros + static_cast<uint64_t>(FloorDiv(nanos, 1000)));
  }
};

Status PlainTooShort(const std::string& column, int64_t size, int64_t values, int64_t width) {
  return Status::Corruption("column '", column, "': PLAIN page holds ", size, " bytes but ", values,
                            " values need ", values * width);
}

// Reads `n` PLAIN byte arrays (4-byte length + bytes) or fixed-length
// arrays (`width` > 0) from [data, data + size) into `views`.
Status ParseByteArrays(const std::string& column, const uint8_t* data, int64_t size, int64_t n,
                       int width, std::string_view* views) {
  SILT_RETURN_NOT_OK_CTX(ParsePlainByteArrays(data, size, n, width, views), "column '", column,
                         "'");
  return Status::OK();
}

// Decodes `n` dictionary indices (bit-width byte + RLE/bit-packed runs) and
// writes dict[index] to dst.
template <typename D>
Status GatherDictionary(const std::string& column, const uint8_t* data, int64_t size, int64_t n,
                        const D* dict, int64_t dict_size, D* dst, std::vector<uint32_t>* idx) {
  if (n == 0) return Status::OK();
  if (size < 1) return Status::Corruption("column '", column, "': empty dictionary-encoded page");
  RleDecoder decoder;
  SILT_RETURN_NOT_OK_CTX(
      StartDictionaryIndices(
          std::string_view(reinterpret_cast<const char*>(data), static_cast<size_t>(size)),
          &decoder),
      "column '", column, "'");
  idx->resize(static_cast<size_t>(kIndexBatch));
  uint32_t* ids = idx->data();
  int64_t done = 0;
  while (done < n) {
    const int64_t m = std::min(kIndexBatch, n - done);
    if (decoder.GetBatch(ids, m) != m) {
      return Status::Corruption("column '", column, "': dictionary indices end after ", done,
                                " of ", n, " values");
    }
    uint32_t max_id = 0;
    for (int64_t i = 0; i < m; ++i) max_id = std::max(max_id, ids[i]);
    if (max_id >= static_cast<uint64_t>(dict_size)) {
      return Status::Corruption("column '", column, "': dictionary index ", max_id,
                                " out of range for a dictionary of ", dict_size, " entries");
    }
    for (int64_t i = 0; i < m; ++i) dst[done + i] = dict[ids[i]];
    done += m;
  }
  return Status::OK();
}

Status UnsupportedEncoding(const std::string& column, Encoding encoding) {
  return Status::NotSupported("column '", column, "': Parquet encoding ", EncodingName(encoding),
                              " is not supported for this column's type");
}

// Byte arrays (width 0) or fixed-length arrays in the DELTA_* and
// BYTE_STREAM_SPLIT encodings as `n` views (into `data` or `*storage`).
Status DecodeByteArrayEncoding(const std::string& column, Encoding encoding, int width,
                               const uint8_t* data, int64_t size, int64_t n,
                               std::string_view* views, std::string* storage,
                               std::vector<int32_t>* lengths) {
  switch (encoding) {
    case Encoding::kDeltaLengthByteArray:
      if (width != 0) break;
      SILT_RETURN_NOT_OK_CTX(DeltaLengthByteArrayDecode(data, size, n, views, lengths), "column '",
                             column, "'");
      return Status::OK();
    case Encoding::kDeltaByteArray:
      SILT_RETURN_NOT_OK_CTX(DeltaByteArrayDecode(data, size, n, views, storage, lengths),
                             "column '", column, "'");
      if (width > 0) {
        for (int64_t i = 0; i < n; ++i) {
          if (static_cast<int64_t>(views[i].size()) != width) {
            return Status::Corruption("column '", column, "': DELTA_BYTE_ARRAY value of ",
                                      views[i].size(), " bytes in a ", width,
                                      "-byte FIXED_LEN_BYTE_ARRAY column");
          }
        }
      }
      return Status::OK();
    case Encoding::kByteStreamSplit: {
      if (width == 0) break;
      storage->resize(static_cast<size_t>(n * width));
      SILT_RETURN_NOT_OK_CTX(
          ByteStreamSplitDecode(data, size, n, width, reinterpret_cast<uint8_t*>(storage->data())),
          "column '", column, "'");
      for (int64_t i = 0; i < n; ++i) {
        views[i] = std::string_view(storage->data() + i * width, static_cast<size_t>(width));
      }
      return Status::OK();
    }
    default: break;
  }
  return UnsupportedEncoding(column, encoding);
}

// ---------------------------------------------------------------------------
// Fixed-width outputs (numbers, dates, timestamps, decimals, booleans as
// bytes before packing).

template <typename OutT>
class FixedOutputReader : public ColumnChunkReader {
 protected:
  using ColumnChunkReader::ColumnChunkReader;

  // Decodes `n` dense PLAIN values.
  virtual Status DecodePlain(const uint8_t* data, int64_t size, int64_t n, OutT* dst) = 0;
  // Decodes dictionary entries, converted to OutT.
  virtual Status DecodeDictionary(const uint8_t* data, int64_t size, int64_t n,
                                  std::vector<OutT>* dict) = 0;
  // Encodings beyond PLAIN and dictionary (booleans' RLE).
  virtual Status DecodeOther(Encoding encoding, const uint8_t*, int64_t, int64_t, OutT*) {
    return UnsupportedEncoding(name_, encoding);
  }

  void BeginChunk(int64_t num_rows) override {
    values_ = std::make_shared<Buffer>();
    values_->Resize(num_rows * static_cast<int64_t>(sizeof(OutT)));
    out_ = values_->mutable_data_as<OutT>();
  }

  void GrowChunk(int64_t num_rows) override {
    values_->Resize(num_rows * static_cast<int64_t>(sizeof(OutT)));
    out_ = values_->mutable_data_as<OutT>();
  }

  Status SetDictionary(const uint8_t* data, int64_t size, int64_t num_values) override {
    dict_.clear();
    return DecodeDictionary(data, size, num_values, &dict_);
  }

  Status DecodePage(Encoding encoding, const uint8_t* data, int64_t size, int64_t num_values,
                    int64_t num_non_null, int64_t row_offset, const uint8_t* validity) override {
    const bool scatter = validity != nullptr && num_non_null < num_values;
    OutT* dst = out_ + row_offset;
    if (scatter) {
      // One spare slot: the branch-free scatter below reads one past the
      // last value when the page ends with nulls.
      scratch_.resize(static_cast<size_t>(num_non_null) + 1);
      scratch_[static_cast<size_t>(num_non_null)] = OutT{};
      dst = scratch_.data();
    }
    switch (encoding) {
      case Encoding::kPlain: SILT_RETURN_NOT_OK(DecodePlain(data, size, num_non_null, dst)); break;
      case Encoding::kRleDictionary:
      case Encoding::kPlainDictionary:
        SILT_RETURN_NOT_OK(GatherDictionary(name_, data, size, num_non_null, dict_.data(),
                                            static_cast<int64_t>(dict_.size()), dst, &indices_));
        break;
      default: SILT_RETURN_NOT_OK(DecodeOther(encoding, data, size, num_non_null, dst)); break;
    }
    if (scatter) {
      // Branch-free: nulls in real data are unpredictable; null slots get
      // zero.
      OutT* out = out_ + row_offset;
      int64_t j = 0;
      for (int64_t i = 0; i < num_values; ++i) {
        const bool valid = columnar::GetBit(validity, row_offset + i);
        const OutT v = dst[j];
        out[i] = valid ? v : OutT{};
        j += valid;
      }
    }
    return Status::OK();
  }

  ColumnPtr FinishChunk(int64_t num_rows, BufferPtr validity, int64_t null_count) override {
    auto column = std::make_shared<Column>();
    column->type = type_;
    column->length = num_rows;
    column->null_count = null_count;
    column->validity = std::move(validity);
    column->values = std::move(values_);
    out_ = nullptr;
    return column;
  }

  std::shared_ptr<Buffer> values_;
  OutT* out_ = nullptr;
  std::vector<OutT> dict_;
  std::vector<OutT> scratch_;
  std::vector<uint32_t> indices_;
};

// PLAIN fixed-width physical values converted by Conv.
template <typename PhysT, typename OutT, typename Conv>
class FixedReader final : public FixedOutputReader<OutT> {
 public:
  FixedReader(const ColumnDescriptor& d, std::unique_ptr<Decompressor> dc)
      : FixedOutputReader<OutT>(d, std::move(dc)) {}

 protected:
  Status DecodePlain(const uint8_t* data, int64_t size, int64_t n, OutT* dst) override {
    constexpr int64_t kWidth = sizeof(PhysT);
    if (size / kWidth < n) return PlainTooShort(this->name_, size, n, kWidth);
    if constexpr (Conv::kIdentity) {
      if (n > 0) std::memcpy(dst, data, static_cast<size_t>(n * kWidth));
    } else {
      for (int64_t i = 0; i < n; ++i) {
        PhysT p;
        std::memcpy(&p, data + i * kWidth, kWidth);
        dst[i] = Conv::Apply(p);
      }
    }
    return Status::OK();
  }

  Status DecodeDictionary(const uint8_t* data, int64_t size, int64_t n,
                          std::vector<OutT>* dict) override {
    if (size / static_cast<int64_t>(sizeof(PhysT)) < n) {
      return PlainTooShort(this->name_, size, n, sizeof(PhysT));
    }
    dict->resize(static_cast<size_t>(n));
    return DecodePlain(data, size, n, dict->data());
  }

  Status DecodeOther(Encoding encoding, const uint8_t* data, int64_t size, int64_t n,
                     OutT* dst) override {
    if constexpr (std::is_same_v<PhysT, int32_t> || std::is_same_v<PhysT, int64_t>) {
      if (encoding == Encoding::kDeltaBinaryPacked) {
        int64_t consumed = 0;
        if constexpr (Conv::kIdentity) {
          SILT_RETURN_NOT_OK_CTX(DeltaBinaryPackedDecode<PhysT>(data, size, n, dst, &consumed),
                                 "column '", this->name_, "'");
        } else {
          phys_.resize(static_cast<size_t>(n));
          SILT_RETURN_NOT_OK_CTX(
              DeltaBinaryPackedDecode<PhysT>(data, size, n, phys_.data(), &consumed), "column '",
              this->name_, "'");
          for (int64_t i = 0; i < n; ++i) dst[i] = Conv::Apply(phys_[static_cast<size_t>(i)]);
        }
        return Status::OK();
      }
    }
    if constexpr (std::is_arithmetic_v<PhysT>) {
      if (encoding == Encoding::kByteStreamSplit) {
        phys_.resize(static_cast<size_t>(n));
        SILT_RETURN_NOT_OK_CTX(ByteStreamSplitDecode(data, size, n, sizeof(PhysT),
                                                     reinterpret_cast<uint8_t*>(phys_.data())),
                               "column '", this->name_, "'");
        for (int64_t i = 0; i < n; ++i) dst[i] = Conv::Apply(phys_[static_cast<size_t>(i)]);
        return Status::OK();
      }
    }
    return UnsupportedEncoding(this->name_, encoding);
  }

 private:
  std::vector<PhysT> phys_;
};

// Decimals stored as BYTE_ARRAY (width 0) or FIXED_LEN_BYTE_ARRAY.
class BytesDecimalReader final : public FixedOutputReader<__int128> {
 public:
  BytesDecimalReader(const ColumnDescriptor& d, std::unique_ptr<Decompressor> dc, int width)
      : FixedOutputReader<__int128>(d, std::move(dc)), width_(width) {}

 protected:
  Status DecodePlain(const uint8_t* data, int64_t size, int64_t n, __int128* dst) override {
    views_.resize(static_cast<size_t>(n));
    SILT_RETURN_NOT_OK(ParseByteArrays(name_, data, size, n, width_, views_.data()));
    return ConvertViews(n, dst);
  }

  Status DecodeOther(Encoding encoding, const uint8_t* data, int64_t size, int64_t n,
                     __int128* dst) override {
    views_.resize(static_cast<size_t>(n));
    SILT_RETURN_NOT_OK(DecodeByteArrayEncoding(name_, encoding, width_, data, size, n,
                                               views_.data(), &storage_, &lengths_));
    return ConvertViews(n, dst);
  }

  Status ConvertViews(int64_t n, __int128* dst) {
    for (int64_t i = 0; i < n; ++i) {
      const std::string_view v = views_[static_cast<size_t>(i)];
      if (v.empty()) {
        dst[i] = 0;
        continue;
      }
      if (v.size() > 16) {
        return Status::Corruption("column '", name_, "': decimal value of ", v.size(),
                                  " bytes (at most 16 supported)");
      }
      dst[i] = DecimalFromBigEndian(reinterpret_cast<const uint8_t*>(v.data()),
                                    static_cast<int>(v.size()));
    }
    return Status::OK();
  }

  Status DecodeDictionary(const uint8_t* data, int64_t size, int64_t n,
                          std::vector<__int128>* dict) override {
    const int min_entry = width_ > 0 ? width_ : 4;
    if (size / min_entry < n) return PlainTooShort(name_, size, n, min_entry);
    dict->resize(static_cast<size_t>(n));
    return DecodePlain(data, size, n, dict->data());
  }

 private:
  const int width_;
  std::vector<std::string_view> views_;
  std::string storage_;
  std::vector<int32_t> lengths_;
};

// Booleans: decoded to one byte per row, packed into bits at the end.
class BoolReader final : public FixedOutputReader<uint8_t> {
 public:
  BoolReader(const ColumnDescriptor& d, std::unique_ptr<Decompressor> dc)
      : FixedOutputReader<uint8_t>(d, std::move(dc)) {}

 protected:
  Status DecodePlain(const uint8_t* data, int64_t size, int64_t n, uint8_t* dst) override {
    if (size * 8 < n) return PlainTooShort(name_, size, n, 1);
    for (int64_t i = 0; i < n; ++i) dst[i] = columnar::GetBit(data, i);
    return Status::OK();
  }

  Status DecodeDictionary(const uint8_t* data, int64_t size, int64_t n,
                          std::vector<uint8_t>* dict) override {
    if (size * 8 < n) return PlainTooShort(name_, size, n, 1);
    dict->resize(static_cast<size_t>(n));
    return DecodePlain(data, size, n, dict->data());
  }

  // RLE booleans: 4-byte length prefix, then runs of bit width 1.
  Status DecodeOther(Encoding encoding, const uint8_t* data, int64_t size, int64_t n,
                     uint8_t* dst) override {
    if (encoding != Encoding::kRle) return UnsupportedEncoding(name_, encoding);
    if (n == 0) return Status::OK();
    if (size < 4) return Status::Corruption("column '", name_, "': truncated RLE booleans");
    uint32_t len;
    std::memcpy(&len, data, 4);
    if (len > static_cast<uint64_t>(size - 4)) {
      return Status::Corruption("column '", name_, "': RLE booleans claim ", len,
                                " bytes, the page has ", size - 4);
    }
    RleDecoder decoder(data + 4, len, 1);
    if (decoder.GetBatch(dst, n) != n) {
      return Status::Corruption("column '", name_, "': RLE booleans end early");
    }
    return Status::OK();
  }

  ColumnPtr FinishChunk(int64_t num_rows, BufferPtr validity, int64_t null_count) override {
    auto bits = std::make_shared<Buffer>();
    bits->Resize((num_rows + 7) / 8);
    uint8_t* b = bits->mutable_data();
    const uint8_t* bytes = values_->data();
    // Bytes are 0/1: gather eight at a time into one bitmap byte (the
    // multiply moves byte k's low bit to bit 56 + k, without carries).
    const int64_t full = num_rows / 8;
    for (int64_t i = 0; i < full; ++i) {
      uint64_t w;
      std::memcpy(&w, bytes + i * 8, 8);
      b[i] = static_cast<uint8_t>(((w & 0x0101010101010101ULL) * 0x0102040810204080ULL) >> 56);
    }
    for (int64_t i = full * 8; i < num_rows; ++i) {
      if (bytes[i]) columnar::SetBit(b, i);
    }
    values_ = std::move(bits);
    return FixedOutputReader<uint8_t>::FinishChunk(num_rows, std::move(validity), null_count);
  }
};

// BYTE_ARRAY (width 0) or FIXED_LEN_BYTE_ARRAY into string/binary columns.
class BinaryReader final : public ColumnChunkReader {
 public:
  BinaryReader(const ColumnDescriptor& d, std::unique_ptr<Decompressor> dc, int width)
      : ColumnChunkReader(d, std::move(dc)), width_(width) {}

 protected:
  void BeginChunk(int64_t num_rows) override {
    offsets_ = std::make_shared<Buffer>();
    offsets_->Resize((num_rows + 1) * static_cast<int64_t>(sizeof(int32_t)));
    data_ = std::make_shared<Buffer>();
    chunk_rows_ = num_rows;
  }

  void GrowChunk(int64_t num_rows) override {
    offsets_->Resize((num_rows + 1) * static_cast<int64_t>(sizeof(int32_t)));
    chunk_rows_ = num_rows;
  }

  Status SetDictionary(const uint8_t* data, int64_t size, int64_t num_values) override {
    // Every entry takes at least its width (FIXED_LEN_BYTE_ARRAY) or a
    // 4-byte length: reject impossible counts before allocating for them.
    if (size / (width_ > 0 ? width_ : 4) < num_values) {
      return PlainTooShort(name_, size, num_values, width_ > 0 ? width_ : 4);
    }
    dict_.resize(static_cast<size_t>(num_values));
    return ParseByteArrays(name_, data, size, num_values, width_, dict_.data());
  }

  Status DecodePage(Encoding encoding, const uint8_t* data, int64_t size, int64_t num_values,
                    int64_t num_non_null, int64_t row_offset, const uint8_t* validity) override {
    views_.resize(static_cast<size_t>(num_non_null));
    switch (encoding) {
      case Encoding::kPlain:
        SILT_RETURN_NOT_OK(ParseByteArrays(name_, data, size, num_non_null, width_, views_.data()));
        break;
      case Encoding::kRleDictionary:
      case Encoding::kPlainDictionary:
        SILT_RETURN_NOT_OK(GatherDictionary(name_, data, size, num_non_null, dict_.data(),
                                            static_cast<int64_t>(dict_.size()), views_.data(),
                                            &indices_));
        break;
      default:
        SILT_RETURN_NOT_OK(DecodeByteArrayEncoding(name_, encoding, width_, data, size,
                                                   num_non_null, views_.data(), &storage_,
                                                   &lengths_));
        break;
    }
    int64_t total = 0;
    for (const std::string_view& v : views_) total += static_cast<int64_t>(v.size());
    if (data_->size() + total > std::numeric_limits<int32_t>::max()) {
      return Status::NotSupported("column '", name_,
                                  "': more than 2 GiB of string data in one row group");
    }
    // Grow once for the whole chunk where possible: extrapolate this page's
    // bytes per row to the rows still to come (each growth copies the data
    // and touches fresh pages), else geometrically.
    const int64_t needed = data_->size() + total;
    if (needed > data_->capacity()) {
      const int64_t rows_left = std::max<int64_t>(0, chunk_rows_ - row_offset - num_values);
      const int64_t per_row = num_values > 0 ? total / num_values + 1 : 0;
      int64_t target = needed + std::min<int64_t>(rows_left * per_row + rows_left * per_row / 16,
                                                  std::numeric_limits<int32_t>::max());
      target = std::max(target, data_->capacity() + data_->capacity() / 2);
      data_->Reserve(
          std::min<int64_t>(std::max(needed, target), std::numeric_limits<int32_t>::max()));
    }
    int32_t* offs = offsets_->mutable_data_as<int32_t>();
    const bool scatter = validity != nullptr && num_non_null < num_values;
    if (!scatter) {
      for (int64_t i = 0; i < num_values; ++i) {
        const std::string_view v = views_[static_cast<size_t>(i)];
        data_->Append(v.data(), static_cast<int64_t>(v.size()));
        offs[row_offset + i + 1] = static_cast<int32_t>(data_->size());
      }
    } else {
      // Branch-free (nulls in real data are unpredictable): a null row
      // appends zero bytes of the spare empty view at the end.
      views_.push_back(std::string_view());
      size_t j = 0;
      for (int64_t i = 0; i < num_values; ++i) {
        const bool valid = columnar::GetBit(validity, row_offset + i);
        const std::string_view v = views_[j];
        data_->Append(v.data(), valid ? static_cast<int64_t>(v.size()) : 0);
        j += valid;
        offs[row_offset + i + 1] = static_cast<int32_t>(data_->size());
      }
    }
    return Status::OK();
  }

  ColumnPtr FinishChunk(int64_t num_rows, BufferPtr validity, int64_t null_count) override {
    auto column = std::make_shared<Column>();
    column->type = type_;
    column->length = num_rows;
    column->null_count = null_count;
    column->validity = std::move(validity);
    column->values = std::move(offsets_);
    column->data = std::move(data_);
    return column;
  }

 private:
  const int width_;
  int64_t chunk_rows_ = 0;
  std::shared_ptr<Buffer> offsets_;
  std::shared_ptr<Buffer> data_;
  std::vector<std::string_view> dict_;
  std::vector<std::string_view> views_;
  std::vector<uint32_t> indices_;
  std::string storage_;
  std::vector<int32_t> lengths_;
};

template <typename R, typename... Args>
std::unique_ptr<ColumnChunkReader> MakeReader(const ColumnDescriptor& d,
                                              std::unique_ptr<Decompressor> dc, Args... args) {
  return std::unique_ptr<ColumnChunkReader>(new R(d, std::move(dc), args...));
}

// Unit of an INT64 timestamp column from its annotations.
TimeUnit TimestampUnit(const SchemaElement& el) {
  if (el.logical_type && el.logical_type->kind == LogicalType::Kind::kTimestamp) {
    return el.logical_type->unit;
  }
  if (el.converted_type == ConvertedType::kTimestampMillis) return TimeUnit::kMillis;
  return TimeUnit::kMicros;
}

bool IsUnsignedInt64(const SchemaElement& el) {
  if (el.logical_type && el.logical_type->kind == LogicalType::Kind::kInteger) {
    return !el.logical_type->is_signed;
  }
  return el.converted_type == ConvertedType::kUint64;
}

}  // namespace

Result<std::unique_ptr<ColumnChunkReader>> ColumnChunkReader::Make(const ColumnDescriptor& d,
                                                                   CompressionCodec codec) {
  if (!d.flat || !d.leaf.type.has_value()) {
    return Status::NotSupported("reading nested Parquet column '", d.field.name, "' (",
                                d.field.type->ToDdl(), ")");
  }
  SILT_RETURN_NOT_OK(d.unsupported);
  SILT_ASSIGN_OR_RETURN_CTX(std::unique_ptr<Decompressor> dc, Decompressor::Make(codec), "column '",
                            d.field.name, "'");
  const PhysicalType physical = *d.leaf.type;
  const TypeId out = d.field.type->id();
  switch (physical) {
    case PhysicalType::kBoolean:
      if (out == TypeId::kBoolean) return MakeReader<BoolReader>(d, std::move(dc));
      break;
    case PhysicalType::kInt32:
      switch (out) {
        case TypeId::kByte:
          return MakeReader<FixedReader<int32_t, int8_t, Cast<int32_t, int8_t>>>(d, std::move(dc));
        case TypeId::kShort:
          return MakeReader<FixedReader<int32_t, int16_t, Cast<int32_t, int16_t>>>(d,
                                                                                   std::move(dc));
        case TypeId::kInt:
        case TypeId::kDate:
          return MakeReader<FixedReader<int32_t, int32_t, Cast<int32_t, int32_t>>>(d,
                                                                                   std::move(dc));
        case TypeId::kLong:  // UINT_32
          return MakeReader<FixedReader<int32_t, int64_t, ZeroExtend32>>(d, std::move(dc));
        case TypeId::kDecimal:
          return MakeReader<FixedReader<int32_t, __int128, Cast<int32_t, __int128>>>(d,
                                                                                     std::move(dc));
        default: break;
      }
      break;
    case PhysicalType::kInt64:
      switch (out) {
        case TypeId::kLong:
          return MakeReader<FixedReader<int64_t, int64_t, Cast<int64_t, int64_t>>>(d,
                                                                                   std::move(dc));
        case TypeId::kTimestamp:
        case TypeId::kTimestampNtz:
          switch (TimestampUnit(d.leaf)) {
            case TimeUnit::kMillis:
              return MakeReader<FixedReader<int64_t, int64_t, MillisToMicros>>(d, std::move(dc));
            case TimeUnit::kNanos:
              return MakeReader<FixedReader<int64_t, int64_t, NanosToMicros>>(d, std::move(dc));
            default:
              return MakeReader<FixedReader<int64_t, int64_t, Cast<int64_t, int64_t>>>(
                  d, std::move(dc));
          }
        case TypeId::kDecimal:
          if (IsUnsignedInt64(d.leaf)) {
            return MakeReader<FixedReader<int64_t, __int128, ZeroExtend64>>(d, std::move(dc));
          }
          return MakeReader<FixedReader<int64_t, __int128, Cast<int64_t, __int128>>>(d,
                                                                                     std::move(dc));
        default: break;
      }
      break;
    case PhysicalType::kInt96:
      if (out == TypeId::kTimestamp) {
        return MakeReader<FixedReader<Int96, int64_t, Int96ToMicros>>(d, std::move(dc));
      }
      break;
    case PhysicalType::kFloat:
      if (out == TypeId::kFloat) {
        return MakeReader<FixedReader<float, float, Cast<float, float>>>(d, std::move(dc));
      }
      break;
    case PhysicalType::kDouble:
      if (out == TypeId::kDouble) {
        return MakeReader<FixedReader<double, double, Cast<double, double>>>(d, std::move(dc));
      }
      break;
    case PhysicalType::kByteArray:
    case PhysicalType::kFixedLenByteArray: {
      const int width =
          physical == PhysicalType::kFixedLenByteArray ? d.leaf.type_length.value_or(0) : 0;
      if (out == TypeId::kDecimal) return MakeReader<BytesDecimalReader>(d, std::move(dc), width);
      if (out == TypeId::kString || out == TypeId::kBinary) {
        return MakeReader<BinaryReader>(d, std::move(dc), width);
      }
      break;
    }
  }
  return Status::NotSupported("column '", d.field.name, "': reading Parquet ",
                              PhysicalTypeName(physical), " as ", d.field.type->ToDdl());
}

Result<int64_t> ColumnChunkReader::DecodeLevels(const uint8_t* data, int64_t size,
                                                int64_t row_offset, int64_t num_values) {
  RleDecoder decoder(data, size, 1);
  int64_t ones = 0;
  if (decoder.GetBits(validity_->mutable_data(), row_offset, num_values, &ones) != num_values) {
    return Status::Corruption("column '", name_, "': definition levels end early");
  }
  return ones;
}

Status ColumnChunkReader::ReadDataPageV1(int64_t row_offset, int64_t num_rows, int64_t* rows_read) {
  const PageHeader& header = pages_.header();
  if (!header.data_page_header) {
    return Status::Corruption("column '", name_, "': data page without its header");
  }
  const int64_t n = header.data_page_header->num_values;
  if (n < 0 || n > num_rows - row_offset) {
    return Status::Corruption("column '", name_, "': data page of ", n, " values overflows the ",
                              num_rows, " rows of its row group");
  }
  SILT_ASSIGN_OR_RETURN_CTX(DataPage page, pages_.ReadDataPage(), "column '", name_, "'");
  const uint8_t* values = reinterpret_cast<const uint8_t*>(page.values.data());
  const int64_t values_size = static_cast<int64_t>(page.values.size());
  if (nested_) {
    if (max_definition_level_ > 0 && page.definition_level_encoding != Encoding::kRle) {
      return UnsupportedEncoding(name_, page.definition_level_encoding);
    }
    int64_t slots = 0;
    int64_t defined = 0;
    SILT_RETURN_NOT_OK(DecodeNestedLevels(page, n, &slots, &defined));
    const uint8_t* validity = defined < slots ? validity_->data() : nullptr;
    SILT_RETURN_NOT_OK(
        DecodePage(page.encoding, values, values_size, slots, defined, slot_pos_, validity));
    slot_pos_ += slots;
    *rows_read = n;
    return Status::OK();
  }
  int64_t non_null = n;
  if (max_definition_level_ > 0) {
    const uint8_t* levels = reinterpret_cast<const uint8_t*>(page.definition_levels.data());
    if (page.definition_level_encoding == Encoding::kRle) {
      SILT_ASSIGN_OR_RETURN(
          non_null,
          DecodeLevels(levels, static_cast<int64_t>(page.definition_levels.size()), row_offset, n));
    } else {
      // Deprecated BIT_PACKED levels: one bit per value, most significant
      // bit first.
      uint8_t* bits = validity_->mutable_data();
      non_null = 0;
      for (int64_t i = 0; i < n; ++i) {
        if ((levels[i / 8] >> (7 - (i & 7))) & 1) {
          columnar::SetBit(bits, row_offset + i);
          ++non_null;
        } else {
          columnar::ClearBit(bits, row_offset + i);
        }
      }
    }
  }
  const uint8_t* validity = non_null < n ? validity_->data() : nullptr;
  SILT_RETURN_NOT_OK(
      DecodePage(page.encoding, values, values_size, n, non_null, row_offset, validity));
  *rows_read = n;
  return Status::OK();
}

Status ColumnChunkReader::ReadDataPageV2(int64_t row_offset, int64_t num_rows, int64_t* rows_read) {
  const PageHeader& header = pages_.header();
  if (!header.data_page_header_v2) {
    return Status::Corruption("column '", name_, "': data page v2 without its header");
  }
  const int64_t n = header.data_page_header_v2->num_values;
  if (n < 0 || n > num_rows - row_offset) {
    return Status::Corruption("column '", name_, "': data page of ", n, " values overflows the ",
                              num_rows, " rows of its row group");
  }
  SILT_ASSIGN_OR_RETURN_CTX(DataPage page, pages_.ReadDataPage(), "column '", name_, "'");
  const int64_t num_nulls = page.num_nulls.value_or(0);
  const uint8_t* values = reinterpret_cast<const uint8_t*>(page.values.data());
  const int64_t values_size = static_cast<int64_t>(page.values.size());
  if (nested_) {
    int64_t slots = 0;
    int64_t defined = 0;
    SILT_RETURN_NOT_OK(DecodeNestedLevels(page, n, &slots, &defined));
    if (defined != n - num_nulls) {
      return Status::Corruption("column '", name_, "': data page v2 says ", num_nulls,
                                " nulls, its levels say ", n - defined);
    }
    const uint8_t* validity = defined < slots ? validity_->data() : nullptr;
    SILT_RETURN_NOT_OK(
        DecodePage(page.encoding, values, values_size, slots, defined, slot_pos_, validity));
    slot_pos_ += slots;
    *rows_read = n;
    return Status::OK();
  }
  int64_t non_null = n;
  if (max_definition_level_ > 0) {
    SILT_ASSIGN_OR_RETURN(
        non_null, DecodeLevels(reinterpret_cast<const uint8_t*>(page.definition_levels.data()),
                               static_cast<int64_t>(page.definition_levels.size()), row_offset, n));
    if (non_null != n - num_nulls) {
      return Status::Corruption("column '", name_, "': data page v2 says ", num_nulls,
                                " nulls, its levels say ", n - non_null);
    }
  }
  const uint8_t* validity = non_null < n ? validity_->data() : nullptr;
  SILT_RETURN_NOT_OK(
      DecodePage(page.encoding, values, values_size, n, non_null, row_offset, validity));
  *rows_read = n;
  return Status::OK();
}

Status ColumnChunkReader::CheckChunkHoldsRows(std::string_view chunk, int64_t num_rows) {
  // The footer's row count sizes the output buffers, and a corrupt footer
  // may claim any count: the page headers (cheap to parse again) must
  // account for the rows before anything is allocated for them.
  int64_t values = 0;
  pages_.Reset(chunk);
  while (values < num_rows && !pages_.at_end()) {
    Status st = pages_.Next();
    if (!st.ok()) {
      if (pages_.has_header()) break;  // ReadPages names the page
      return st.WithContextParts("column '", name_, "'");
    }
    const PageHeader& header = pages_.header();
    if (header.type == PageType::kDataPage && header.data_page_header) {
      values += std::max<int64_t>(0, header.data_page_header->num_values);
    } else if (header.type == PageType::kDataPageV2 && header.data_page_header_v2) {
      values += std::max<int64_t>(0, header.data_page_header_v2->num_values);
    }
  }
  if (values < num_rows) {
    return Status::Corruption("column '", name_, "': its pages hold ", values,
                              " values, fewer than the ", num_rows, " rows the row group claims");
  }
  return Status::OK();
}

std::string ColumnChunkReader::AtOffset(size_t pos) const {
  if (file_offset_ < 0) return std::string();
  return " at file offset " + std::to_string(file_offset_ + static_cast<int64_t>(pos));
}

Result<ColumnPtr> ColumnChunkReader::Read(std::string_view chunk, int64_t num_rows,
                                          int64_t file_offset) {
  file_offset_ = file_offset;
  if (num_rows < 0 || num_rows > std::numeric_limits<int32_t>::max()) {
    return Status::Corruption("column '", name_, "': row group of ", num_rows,
                              " rows (silt reads at most 2^31 - 1 per row group)");
  }
  if (nested_) return ReadNested(chunk, num_rows);
  SILT_RETURN_NOT_OK(CheckChunkHoldsRows(chunk, num_rows));
  BeginChunk(num_rows);
  if (max_definition_level_ > 0) {
    validity_ = std::make_shared<Buffer>();
    validity_->Resize((num_rows + 7) / 8);
  } else {
    validity_.reset();
  }
  SILT_RETURN_NOT_OK(ReadPages(chunk, num_rows));
  int64_t null_count = 0;
  BufferPtr validity;
  if (validity_ != nullptr) {
    null_count = num_rows - CountSetBits(validity_->data(), num_rows);
    if (null_count > 0) validity = std::move(validity_);
    validity_.reset();
  }
  return FinishChunk(num_rows, std::move(validity), null_count);
}

Status ColumnChunkReader::DecodeNestedLevels(const DataPage& page, int64_t n, int64_t* slots,
                                             int64_t* defined) {
  // The vectors hold exactly the levels decoded so far.
  if (max_repetition_level_ > 0) {
    RleDecoder decoder(reinterpret_cast<const uint8_t*>(page.repetition_levels.data()),
                       static_cast<int64_t>(page.repetition_levels.size()),
                       LevelBitWidth(max_repetition_level_));
    if (!AppendLevels(&decoder, n, &rep_levels_)) {
      return Status::Corruption("column '", name_, "': repetition levels end before the ", n,
                                " values the page header claims");
    }
  } else {
    rep_levels_.resize(rep_levels_.size() + static_cast<size_t>(n), 0);
  }
  if (max_definition_level_ > 0) {
    RleDecoder decoder(reinterpret_cast<const uint8_t*>(page.definition_levels.data()),
                       static_cast<int64_t>(page.definition_levels.size()),
                       LevelBitWidth(max_definition_level_));
    if (!AppendLevels(&decoder, n, &def_levels_)) {
      return Status::Corruption("column '", name_, "': definition levels end before the ", n,
                                " values the page header claims");
    }
  } else {
    def_levels_.resize(def_levels_.size() + static_cast<size_t>(n), 0);
  }
  const int16_t* reps = rep_levels_.data() + level_pos_;
  const int16_t* defs = def_levels_.data() + level_pos_;
  // The page's levels exist: room for up to n more slots.
  validity_->Resize((slot_pos_ + n + 7) / 8);
  if (max_repetition_level_ > 0) {
    int16_t max_rep = 0;
    for (int64_t i = 0; i < n; ++i) max_rep = std::max(max_rep, reps[i]);
    if (max_rep > max_repetition_level_) {
      return Status::Corruption("column '", name_, "': repetition level ", max_rep,
                                " above the maximum ", max_repetition_level_);
    }
  }
  if (level_pos_ == 0 && n > 0 && reps[0] != 0) {
    return Status::Corruption("column '", name_,
                              "': the column chunk starts in the middle of a row");
  }
  uint8_t* bits = validity_->mutable_data();
  const int16_t max_def = static_cast<int16_t>(max_definition_level_);
  const int16_t slot_def = static_cast<int16_t>(slot_definition_level_);
  int64_t slot = slot_pos_;
  int64_t valid = 0;
  int16_t top = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int16_t d = defs[i];
    top = std::max(top, d);
    if (d >= slot_def) {
      if (d == max_def) {
        columnar::SetBit(bits, slot);
        ++valid;
      } else {
        columnar::ClearBit(bits, slot);
      }
      ++slot;
    }
  }
  if (top > max_def) {
    return Status::Corruption("column '", name_, "': definition level ", top, " above the maximum ",
                              max_definition_level_);
  }
  level_pos_ += n;
  *slots = slot - slot_pos_;
  *defined = valid;
  GrowChunk(slot);
  return Status::OK();
}

Result<ColumnPtr> ColumnChunkReader::ReadNested(std::string_view chunk, int64_t num_rows) {
  // The level count is the sum of the data pages' value counts. Those are
  // claims: the buffers grow page by page as the levels decode
  // (DecodeNestedLevels), never by the claimed total up front.
  int64_t total = 0;
  pages_.Reset(chunk);
  while (!pages_.at_end()) {
    Status st = pages_.Next();
    const size_t page_start = static_cast<size_t>(pages_.page_offset());
    if (!st.ok()) {
      if (!pages_.has_header()) {
        return st.WithContextParts("column '", name_, "': page header", AtOffset(page_start));
      }
      return Status::Corruption("column '", name_, "': page", AtOffset(page_start), " of ",
                                pages_.header().compressed_page_size,
                                " bytes runs past the end of the column chunk");
    }
    const PageHeader& header = pages_.header();
    int64_t n = 0;
    if (header.type == PageType::kDataPage && header.data_page_header) {
      n = header.data_page_header->num_values;
    } else if (header.type == PageType::kDataPageV2 && header.data_page_header_v2) {
      n = header.data_page_header_v2->num_values;
    }
    if (n < 0) {
      return Status::Corruption("column '", name_, "': page", AtOffset(page_start),
                                " claims a negative value count");
    }
    total += n;
    if (total > std::numeric_limits<int32_t>::max()) {
      return Status::Corruption("column '", name_, "': more than 2^31 - 1 values in a chunk");
    }
  }
  BeginChunk(0);
  validity_ = std::make_shared<Buffer>();
  def_levels_.clear();
  rep_levels_.clear();
  level_pos_ = 0;
  slot_pos_ = 0;
  SILT_RETURN_NOT_OK(ReadPages(chunk, total));
  int64_t rows = 0;
  for (int16_t r : rep_levels_) rows += r == 0;
  if (rows != num_rows) {
    return Status::Corruption("column '", name_, "': column chunk holds ", rows,
                              " rows, its row group ", num_rows);
  }
  const int64_t slots = slot_pos_;
  const int64_t valid = CountSetBits(validity_->data(), slots);
  BufferPtr validity;
  if (valid < slots) validity = std::move(validity_);
  validity_.reset();
  return FinishChunk(slots, std::move(validity), slots - valid);
}

Status ColumnChunkReader::ReadPages(std::string_view chunk, int64_t num_rows) {
  has_dictionary_ = false;
  pages_.Reset(chunk);
  int64_t rows = 0;
  int page_index = 0;
  while (rows < num_rows) {
    if (pages_.at_end()) {
      return Status::Corruption("column '", name_, "': column chunk ends after ", rows, " of ",
                                num_rows, " rows");
    }
    Status st = pages_.Next();
    const size_t page_start = static_cast<size_t>(pages_.page_offset());
    SILT_RETURN_NOT_OK_CTX(st, "column '", name_, "', page ", page_index, AtOffset(page_start));
    const PageHeader& header = pages_.header();
    int64_t page_rows = 0;
    switch (header.type) {
      case PageType::kDictionaryPage: {
        Result<DictionaryPage> dict = pages_.ReadDictionary();
        if (!dict.ok()) {
          return dict.status()
              .WithContextParts("column '", name_, "'")
              .WithContextParts("dictionary page", AtOffset(page_start));
        }
        SILT_RETURN_NOT_OK_CTX(
            SetDictionary(reinterpret_cast<const uint8_t*>(dict->values.data()),
                          static_cast<int64_t>(dict->values.size()), dict->num_values),
            "dictionary page", AtOffset(page_start));
        has_dictionary_ = true;
        break;
      }
      case PageType::kDataPage:
      case PageType::kDataPageV2: {
        const Encoding enc =
            header.type == PageType::kDataPage
                ? (header.data_page_header ? header.data_page_header->encoding : Encoding::kPlain)
                : (header.data_page_header_v2 ? header.data_page_header_v2->encoding
                                              : Encoding::kPlain);
        if ((enc == Encoding::kRleDictionary || enc == Encoding::kPlainDictionary) &&
            !has_dictionary_) {
          return Status::Corruption("column '", name_, "', page ", page_index,
                                    ": dictionary-encoded page before any dictionary page");
        }
        if (header.type == PageType::kDataPage) {
          SILT_RETURN_NOT_OK_CTX(ReadDataPageV1(rows, num_rows, &page_rows), "page ", page_index,
                                 AtOffset(page_start));
        } else {
          SILT_RETURN_NOT_OK_CTX(ReadDataPageV2(rows, num_rows, &page_rows), "page ", page_index,
                                 AtOffset(page_start));
        }
        break;
      }
      default: break;  // index pages and unknown page types carry no values
    }
    rows += page_rows;
    ++page_index;
  }
  return Status::OK();
}

}  // namespace silt::parquet
