#include "silt/parquet/column_writer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "silt/columnar/builder.h"
#include "silt/parquet/bloom_filter.h"
#include "silt/parquet/compression.h"
#include "silt/parquet/delta_encoding.h"
#include "silt/parquet/dictionary_encoder.h"
#include "silt/parquet/gather_internal.h"
#include "silt/parquet/page_writer.h"
#include "silt/parquet/parquet_schema.h"
#include "silt/parquet/plain_encoder.h"
#include "silt/parquet/rle_encoder.h"
#include "silt/parquet/scratch_internal.h"
#include "silt/parquet/statistics.h"

namespace silt::parquet {

using columnar::Column;
using columnar::ColumnPtr;
using columnar::DataType;
using columnar::Field;
using columnar::TypeId;

namespace {

using internal::GatherAtFn;
using internal::Gatherers;
using internal::GatherFn;

// Rows encoded per step at most: bounds the gather scratch and how far a
// dictionary can overshoot its limit before the writer notices.
constexpr int64_t kMaxSliceRows = 4096;

// A dictionary-encoded page holding at least this many indices closes
// before a slice whose indices need a wider bit width (a page stores its
// indices at one width): the narrower width saves at least 1 KiB, more than
// another page's header and page-index entries cost.
constexpr size_t kWidthSplitIndices = 8192;
// The same for a chunk's first page, which is also the sample on which the
// writer decides whether the dictionary pays off: values repeat more as a
// chunk goes on, so a small sample would underrate the dictionary.
constexpr size_t kFirstPageWidthSplitIndices = 65536;
// A chunk whose first kDictionarySample values hold more than
// kDictionarySampleDistinct distinct ones starts PLAIN without hashing the
// rest of its first page (decision 163): such a column (event timestamps,
// raw JSON payloads) is (nearly) all distinct, so the first page's verdict
// would drop the dictionary anyway. Either encoding reads the same in every
// reader, and the statistics do not depend on it.
constexpr int64_t kDictionarySample = 512;
constexpr int64_t kDictionarySampleDistinct = kDictionarySample * 15 / 16;

CompressionCodec ToCodec(Compression c) {
  switch (c) {
    case Compression::kUncompressed: return CompressionCodec::kUncompressed;
    case Compression::kSnappy: return CompressionCodec::kSnappy;
    case Compression::kGzip: return CompressionCodec::kGzip;
    case Compression::kZstd: return CompressionCodec::kZstd;
    case Compression::kLz4Raw: return CompressionCodec::kLz4Raw;
  }
  return CompressionCodec::kUncompressed;
}

// The Parquet encoding WriterOptions asks for column `name` (PLAIN when
// none, or when it asks for PLAIN / the default).
Encoding ValueEncoding(const WriterOptions& options, const std::string& name) {
  auto it = options.column_encodings.find(name);
  if (it == options.column_encodings.end()) return Encoding::kPlain;
  switch (it->second) {
    case ColumnEncoding::kDeltaBinaryPacked: return Encoding::kDeltaBinaryPacked;
    case ColumnEncoding::kDeltaLengthByteArray: return Encoding::kDeltaLengthByteArray;
    case ColumnEncoding::kDeltaByteArray: return Encoding::kDeltaByteArray;
    case ColumnEncoding::kByteStreamSplit: return Encoding::kByteStreamSplit;
    case ColumnEncoding::kPlain:
    case ColumnEncoding::kDictionary: return Encoding::kPlain;
  }
  return Encoding::kPlain;
}

// Bytes kept of a string bound in the column index (parquet-mr's default).
constexpr size_t kIndexBoundBytes = 64;

// Shortens column-index bounds of byte arrays: the min to a prefix (still a
// lower bound), the max to a prefix with its last byte below 0xff
// incremented (still an upper bound); a max of only 0xff bytes stays whole.
void TruncateBounds(std::string* lo, std::string* hi) {
  if (lo->size() > kIndexBoundBytes) lo->resize(kIndexBoundBytes);
  if (hi->size() <= kIndexBoundBytes) return;
  for (size_t len = kIndexBoundBytes; len > 0; --len) {
    const auto byte = static_cast<unsigned char>((*hi)[len - 1]);
    if (byte != 0xff) {
      hi->resize(len);
      (*hi)[len - 1] = static_cast<char>(byte + 1);
      return;
    }
  }
}

// Whether column `name` starts dictionary-encoded.
bool WantsDictionary(const WriterOptions& options, const std::string& name) {
  auto it = options.column_encodings.find(name);
  if (it == options.column_encodings.end()) return options.enable_dictionary;
  return it->second == ColumnEncoding::kDictionary;
}

// Whether `encoding` applies to the physical type.
bool EncodingFits(Encoding encoding, PhysicalType physical) {
  switch (encoding) {
    case Encoding::kPlain: return true;
    case Encoding::kDeltaBinaryPacked:
      return physical == PhysicalType::kInt32 || physical == PhysicalType::kInt64;
    case Encoding::kDeltaLengthByteArray: return physical == PhysicalType::kByteArray;
    case Encoding::kDeltaByteArray:
      return physical == PhysicalType::kByteArray || physical == PhysicalType::kFixedLenByteArray;
    case Encoding::kByteStreamSplit:
      return physical == PhysicalType::kFloat || physical == PhysicalType::kDouble ||
             physical == PhysicalType::kInt32 || physical == PhysicalType::kInt64 ||
             physical == PhysicalType::kFixedLenByteArray;
    default: return false;
  }
}

// ---------------------------------------------------------------------------
// Statistics -> Delta ColumnStats (typed length-1 columns).

template <typename T>
ColumnPtr StatColumn(const columnar::TypePtr& type, const T& v) {
  columnar::ColumnBuilder b(type);
  switch (type->id()) {
    case TypeId::kBoolean:
      if constexpr (std::is_arithmetic_v<T>) b.AppendBool(v != 0);
      break;
    case TypeId::kByte:
      if constexpr (std::is_arithmetic_v<T>) b.Append<int8_t>(static_cast<int8_t>(v));
      break;
    case TypeId::kShort:
      if constexpr (std::is_arithmetic_v<T>) b.Append<int16_t>(static_cast<int16_t>(v));
      break;
    case TypeId::kInt:
    case TypeId::kDate:
      if constexpr (std::is_arithmetic_v<T>) b.Append<int32_t>(static_cast<int32_t>(v));
      break;
    case TypeId::kLong:
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz:
      if constexpr (std::is_arithmetic_v<T>) b.Append<int64_t>(static_cast<int64_t>(v));
      break;
    case TypeId::kFloat:
      if constexpr (std::is_arithmetic_v<T>) b.Append<float>(static_cast<float>(v));
      break;
    case TypeId::kDouble:
      if constexpr (std::is_arithmetic_v<T>) b.Append<double>(static_cast<double>(v));
      break;
    case TypeId::kDecimal:
      if constexpr (std::is_integral_v<T> || std::is_same_v<T, __int128>) {
        b.Append<__int128>(static_cast<__int128>(v));
      }
      break;
    case TypeId::kString:
    case TypeId::kBinary:
      if constexpr (std::is_same_v<T, std::string>) b.AppendString(v);
      break;
    default: break;
  }
  return b.Finish();
}

// ---------------------------------------------------------------------------

template <typename T>
class TypedColumnWriter final : public ColumnWriter {
 public:
  static constexpr bool kIsBool = std::is_same_v<T, uint8_t>;
  static constexpr bool kIsString = std::is_same_v<T, std::string_view>;
  static constexpr bool kIsFlbaDecimal = std::is_same_v<T, __int128>;

  TypedColumnWriter(Field field, SchemaElement element, LeafLayout layout, Gatherers<T> gatherers,
                    const WriterOptions& options, std::unique_ptr<Compressor> compressor)
      : field_(std::move(field)),
        layout_(std::move(layout)),
        element_(std::move(element)),
        gatherers_(gatherers),
        options_(options),
        compressor_(std::move(compressor)),
        physical_type_(*element_.type),
        value_width_(kIsFlbaDecimal ? element_.type_length.value_or(16)
                                    : static_cast<int>(kIsString ? 4 : sizeof(T))),
        optional_(layout_.max_definition_level > 0),
        def_bits_(BitWidthFor(static_cast<uint64_t>(layout_.max_definition_level))),
        rep_bits_(BitWidthFor(static_cast<uint64_t>(layout_.max_repetition_level))),
        value_encoding_(ValueEncoding(options, field_.name)),
        use_dictionary_(!kIsBool && WantsDictionary(options, field_.name)) {
    if constexpr (!kIsBool) {
      auto it = options.bloom_filters.find(field_.name);
      if (it != options.bloom_filters.end()) {
        bloom_ = true;
        bloom_options_ = it->second;
      }
    }
    def_levels_.Reset(def_bits_);
    rep_levels_.Reset(rep_bits_);
  }

  const SchemaElement& schema_element() const override { return element_; }

  Status Write(const Column& column, int64_t offset, int64_t length) override {
    const bool has_nulls = column.validity != nullptr && column.null_count > 0;
    const GatherFn<T> gather = has_nulls ? gatherers_.with_nulls : gatherers_.no_nulls;
    int64_t done = 0;
    while (done < length) {
      const int64_t n = SliceRows(column, offset + done, length - done);
      int64_t count = 0;
      const T* values = gather(column, offset + done, n, &scratch_, &count);
      SILT_RETURN_NOT_OK(
          AddSlice(column, internal::RangeRows{offset + done}, n, has_nulls, values, count));
      done += n;
      SILT_RETURN_NOT_OK(AfterSlice());
    }
    return Status::OK();
  }

  Status WriteRows(const Column& column, const int64_t* rows, int64_t length) override {
    const bool has_nulls = column.validity != nullptr && column.null_count > 0;
    const GatherAtFn<T> gather = has_nulls ? gatherers_.at_with_nulls : gatherers_.at_no_nulls;
    int64_t done = 0;
    while (done < length) {
      const int64_t n = SliceListedRows(column, rows + done, length - done);
      int64_t count = 0;
      const T* values = gather(column, rows + done, n, &scratch_, &count);
      SILT_RETURN_NOT_OK(
          AddSlice(column, internal::ListedRows{rows + done}, n, has_nulls, values, count));
      done += n;
      SILT_RETURN_NOT_OK(AfterSlice());
    }
    return Status::OK();
  }

  Status WriteLevels(const Column& values, int64_t values_offset, const int16_t* def,
                     const int16_t* rep, int64_t num_levels) override {
    const GatherFn<T> gather = gatherers_.no_nulls;
    const int16_t max_def = static_cast<int16_t>(layout_.max_definition_level);
    int64_t value_pos = values_offset;
    int64_t done = 0;
    while (done < num_levels) {
      // Slices end at row boundaries (repetition level 0) so that pages
      // never split a row.
      int64_t end = std::min(num_levels, done + kMaxSliceRows);
      while (end < num_levels && rep[end] != 0) ++end;
      const int64_t n = end - done;
      int64_t defined = 0;
      for (int64_t i = done; i < end; ++i) defined += def[i] == max_def;
      int64_t count = 0;
      const T* dense =
          defined > 0 ? gather(values, value_pos, defined, &scratch_, &count) : nullptr;
      value_pos += defined;
      // Values first: they may close the open page, which then must not
      // hold this slice's levels.
      if (count > 0) SILT_RETURN_NOT_OK(AddValues(dense, count));
      if (optional_) {
        for (int64_t i = done; i < end; ++i) def_levels_.Put(static_cast<uint32_t>(def[i]));
      }
      if (rep_bits_ > 0) {
        for (int64_t i = done; i < end; ++i) rep_levels_.Put(static_cast<uint32_t>(rep[i]));
      }
      page_num_values_ += n;
      page_num_nulls_ += n - defined;
      for (int64_t i = done; i < end; ++i) page_num_rows_ += rep[i] == 0;
      page_stats_.AddNulls(n - count);
      page_stats_.Update(dense, count);
      if (bloom_) AddToBloom(dense, count);
      done = end;
      if (use_dictionary_ &&
          dict_.plain_size(value_width_) > options_.dictionary_page_bytes_limit) {
        SILT_RETURN_NOT_OK(FinishPage());
        use_dictionary_ = false;
      }
      if (PageBytes() >= options_.page_bytes) SILT_RETURN_NOT_OK(FinishPage());
    }
    return Status::OK();
  }

  int64_t buffered_bytes() const override {
    return chunk_pages_bytes_ + PageBytes() +
           (dict_.size() > 0 ? dict_.plain_size(value_width_) : 0);
  }

  Result<ColumnChunk> FlushChunk(int64_t file_offset, fs::WritableFile* file) override {
    SILT_RETURN_NOT_OK(FinishPage());
    ColumnMetaData md;
    md.type = physical_type_;
    md.path_in_schema = layout_.path;
    md.codec = compressor_->codec();
    md.num_values = chunk_num_values_;

    int64_t pos = file_offset;
    if (dict_pages_ > 0) {
      body_.clear();
      AppendPlain(dict_.entries(), dict_.size(), &body_);
      PageHeader header;
      header.type = PageType::kDictionaryPage;
      header.dictionary_page_header.emplace();
      header.dictionary_page_header->num_values = static_cast<int32_t>(dict_.size());
      header.dictionary_page_header->encoding = Encoding::kPlain;
      std::string page;
      SILT_RETURN_NOT_OK(AppendPage({{}, {}, body_}, compressor_.get(), options_.page_checksums,
                                    field_.name, &header, &page));
      dict_uncompressed_ = static_cast<int64_t>(page.size()) - header.compressed_page_size +
                           header.uncompressed_page_size;
      md.dictionary_page_offset = pos;
      SILT_RETURN_NOT_OK(file->Append(page));
      pos += static_cast<int64_t>(page.size());
      md.encoding_stats.push_back({PageType::kDictionaryPage, Encoding::kPlain, 1});
    }
    md.data_page_offset = pos;
    const PageType data_page_type =
        options_.data_page_v2 ? PageType::kDataPageV2 : PageType::kDataPage;
    for (const std::string& page : chunk_pages_) {
      SILT_RETURN_NOT_OK(file->Append(page));
      pos += static_cast<int64_t>(page.size());
    }
    if (dict_pages_ > 0) {
      md.encoding_stats.push_back({data_page_type, Encoding::kRleDictionary, dict_pages_});
    }
    if (plain_pages_ > 0) {
      md.encoding_stats.push_back({data_page_type, Encoding::kPlain, plain_pages_});
    }
    if (other_pages_ > 0) {
      md.encoding_stats.push_back({data_page_type, value_encoding_, other_pages_});
    }
    // Encodings in ascending enum order: PLAIN (dictionary page or plain
    // pages), RLE (levels), the chosen value encoding, RLE_DICTIONARY.
    if (dict_pages_ > 0 || plain_pages_ > 0) md.encodings.push_back(Encoding::kPlain);
    md.encodings.push_back(Encoding::kRle);
    if (other_pages_ > 0) md.encodings.push_back(value_encoding_);
    if (dict_pages_ > 0) md.encodings.push_back(Encoding::kRleDictionary);
    md.total_uncompressed_size = chunk_uncompressed_ + dict_uncompressed_;
    md.total_compressed_size = pos - file_offset;
    md.statistics = chunk_stats_.ToThrift(physical_type_, value_width_);

    ColumnChunk cc;
    cc.file_offset = file_offset;
    cc.meta_data = std::move(md);

    column_index_bytes_.clear();
    offset_index_bytes_.clear();
    if (options_.write_page_index) {
      OffsetIndex oi;
      oi.page_locations = std::move(page_locations_);
      for (PageLocation& loc : oi.page_locations) loc.offset += cc.meta_data->data_page_offset;
      offset_index_bytes_ = SerializeThrift(oi);
      if (column_index_valid_) column_index_bytes_ = SerializeThrift(column_index_);
    }
    bloom_bytes_.clear();
    if (bloom_) BuildBloomFilter();
    page_locations_.clear();
    column_index_ = ColumnIndex();
    column_index_valid_ = true;
    chunk_rows_ = 0;

    file_stats_.Merge(chunk_stats_);
    chunk_stats_.Reset();
    chunk_pages_.clear();
    chunk_pages_bytes_ = 0;
    chunk_num_values_ = 0;
    chunk_uncompressed_ = 0;
    dict_uncompressed_ = 0;
    dict_pages_ = 0;
    plain_pages_ = 0;
    other_pages_ = 0;
    dict_.Clear();
    return cc;
  }

  void TakePageIndex(std::string* column_index, std::string* offset_index) override {
    *column_index = std::move(column_index_bytes_);
    *offset_index = std::move(offset_index_bytes_);
    column_index_bytes_.clear();
    offset_index_bytes_.clear();
  }

  std::string TakeBloomFilter() override {
    std::string out = std::move(bloom_bytes_);
    bloom_bytes_.clear();
    return out;
  }

  ColumnStats FileStats() const override {
    ColumnStats s;
    s.name = field_.name;
    s.null_count = file_stats_.null_count();
    const columnar::TypePtr& type = field_.type;
    if constexpr (std::is_floating_point_v<T>) {
      // Spark orders NaN above every number, so a chunk holding NaN has max
      // NaN (and min NaN only when nothing else is there); data skipping on
      // these bounds then never drops rows Spark would return.
      const T nan = std::numeric_limits<T>::quiet_NaN();
      if (file_stats_.nan_count() > 0) {
        s.min = StatColumn(type, file_stats_.has_min_max() ? file_stats_.min() : nan);
        s.max = StatColumn(type, nan);
        return s;
      }
    }
    if (file_stats_.has_min_max()) {
      s.min = StatColumn(type, file_stats_.min());
      s.max = StatColumn(type, file_stats_.max());
    }
    return s;
  }

 private:
  // Rows for the next slice: enough to fill the open page, at least one.
  int64_t SliceRows(const Column& column, int64_t offset, int64_t remaining) const {
    int64_t cap = std::min(remaining, kMaxSliceRows);
    const int64_t room = std::max<int64_t>(1, options_.page_bytes - PageBytes());
    if (use_dictionary_) {
      const int bits = std::max(1, BitWidthFor(static_cast<uint64_t>(dict_.size())));
      return std::clamp<int64_t>(room * 8 / bits, 1, cap);
    }
    if constexpr (kIsString) {
      // PLAIN byte arrays: binary search the last row that still fits.
      const int32_t* offs = column.offsets();
      int64_t lo = 1;
      int64_t hi = cap;
      while (lo < hi) {
        int64_t mid = lo + (hi - lo + 1) / 2;
        int64_t bytes = (offs[offset + mid] - offs[offset]) + 4 * mid;
        if (bytes <= room)
          lo = mid;
        else
          hi = mid - 1;
      }
      return lo;
    } else if constexpr (kIsBool) {
      (void)column;
      (void)offset;
      return std::clamp<int64_t>(room * 8, 1, cap);
    } else {
      (void)column;
      (void)offset;
      return std::clamp<int64_t>(room / value_width_ + 1, 1, cap);
    }
  }

  // Rows for the next slice of listed rows: as SliceRows, with PLAIN byte
  // arrays summed row by row (the rows' bytes are not contiguous).
  int64_t SliceListedRows(const Column& column, const int64_t* rows, int64_t remaining) const {
    if constexpr (kIsString) {
      if (!use_dictionary_) {
        const int64_t cap = std::min(remaining, kMaxSliceRows);
        const int64_t room = std::max<int64_t>(1, options_.page_bytes - PageBytes());
        const int32_t* offs = column.offsets();
        int64_t bytes = 0;
        int64_t k = 0;
        while (k < cap) {
          const int64_t row_bytes = offs[rows[k] + 1] - offs[rows[k]] + 4;
          if (k > 0 && bytes + row_bytes > room) break;
          bytes += row_bytes;
          ++k;
        }
        return k;
      }
    }
    return SliceRows(column, 0, remaining);
  }

  // After each slice: a dictionary past its limit freezes (pages written so
  // far keep their indices; it is written at the row group flush; the rest
  // goes PLAIN), and a full page closes.
  Status AfterSlice() {
    if (use_dictionary_ && dict_.plain_size(value_width_) > options_.dictionary_page_bytes_limit) {
      SILT_RETURN_NOT_OK(FinishPage());
      use_dictionary_ = false;
    }
    if (PageBytes() >= options_.page_bytes) SILT_RETURN_NOT_OK(FinishPage());
    return Status::OK();
  }

  // Adds one slice of `n` rows (`rows[i]` of `column`), whose `count`
  // non-null values were gathered into `values`.
  template <typename Rows>
  Status AddSlice(const Column& column, Rows rows, int64_t n, bool has_nulls, const T* values,
                  int64_t count) {
    // Values first: they may close the open page, which then must not hold
    // this slice's levels.
    if (count > 0) SILT_RETURN_NOT_OK(AddValues(values, count));
    if (optional_) {
      if (!has_nulls) {
        def_levels_.PutRun(1, n);
      } else {
        const uint8_t* valid = column.validity->data();
        for (int64_t i = 0; i < n; ++i) def_levels_.Put(columnar::GetBit(valid, rows[i]));
      }
    }
    page_num_values_ += n;
    page_num_nulls_ += n - count;
    page_num_rows_ += n;
    page_stats_.AddNulls(n - count);
    page_stats_.Update(values, count);
    if (bloom_) AddToBloom(values, count);
    return Status::OK();
  }

  // Appends `count` values to the open page: dictionary indices, or PLAIN
  // bytes once the column has fallen back. A page keeps its indices at the
  // width of its largest one, so when this slice needs a wider width than
  // the page so far and the page already holds kWidthSplitIndices indices,
  // the page closes first and the slice starts the next one. Closing the
  // chunk's first page may find the dictionary not worth it (FinishPage),
  // in which case the slice goes PLAIN; so does a chunk whose first
  // kDictionarySample values are nearly all distinct, found before the rest
  // are hashed.
  Status AddValues(const T* values, int64_t count) {
    if (use_dictionary_) {
      const size_t before = page_indices_.size();
      int64_t sampled = 0;
      if (dict_pages_ == 0 && before == 0 && dict_.size() == 0 && count >= kDictionarySample) {
        dict_.Encode(values, kDictionarySample, &page_indices_);
        sampled = kDictionarySample;
        if (dict_.size() > kDictionarySampleDistinct) {
          DictionaryToPlain();
          AppendPlain(values + sampled, count - sampled, &page_plain_);
          return Status::OK();
        }
      }
      dict_.Encode(values + sampled, count - sampled, &page_indices_);
      uint32_t slice_max = 0;
      for (size_t i = before; i < page_indices_.size(); ++i) {
        slice_max = std::max(slice_max, page_indices_[i]);
      }
      const size_t split_at = dict_pages_ == 0 ? kFirstPageWidthSplitIndices : kWidthSplitIndices;
      if (before < split_at || BitWidthFor(slice_max) <= BitWidthFor(page_max_index_)) {
        page_max_index_ = std::max(page_max_index_, slice_max);
        return Status::OK();
      }
      page_indices_.resize(before);
      SILT_RETURN_NOT_OK(FinishPage());
      if (use_dictionary_) {
        // The values are in the dictionary now: lookups only.
        dict_.Encode(values, count, &page_indices_);
        page_max_index_ = slice_max;
        return Status::OK();
      }
    }
    AppendPlain(values, count, &page_plain_);
    return Status::OK();
  }

  // Whether the open page's dictionary indices (`index_bytes` encoded) plus
  // the dictionary page come out smaller than the same values PLAIN. Asked
  // when a chunk's first page closes, as parquet-mr does: a column of
  // (nearly) distinct values, such as event timestamps, is smaller PLAIN.
  bool DictionaryPaysOff(int64_t index_bytes) const {
    // The page uses entries [0, page_max_index_] (indices are handed out in
    // arrival order); later ones came from a slice that moved to the next
    // page.
    const int64_t used = static_cast<int64_t>(page_max_index_) + 1;
    int64_t dictionary = used * value_width_;
    int64_t plain = static_cast<int64_t>(page_indices_.size()) * value_width_;
    if constexpr (kIsString) {
      const std::string_view* entries = dict_.entries();
      for (int64_t i = 0; i < used; ++i) dictionary += static_cast<int64_t>(entries[i].size());
      for (uint32_t idx : page_indices_) plain += static_cast<int64_t>(entries[idx].size());
    }
    return dictionary + index_bytes < plain;
  }

  // Turns the open page's dictionary indices into PLAIN values and drops
  // the dictionary: the column stays PLAIN for the rest of the file.
  void DictionaryToPlain() {
    plain_values_.resize(page_indices_.size());
    const T* entries = dict_.entries();
    for (size_t i = 0; i < page_indices_.size(); ++i) plain_values_[i] = entries[page_indices_[i]];
    AppendPlain(plain_values_.data(), static_cast<int64_t>(plain_values_.size()), &page_plain_);
    plain_values_.clear();
    page_indices_.clear();
    page_max_index_ = 0;
    dict_.Clear();
    use_dictionary_ = false;
  }

  // Hashes of the values for the chunk's bloom filter, kept (deduplicated
  // now and then) until the flush sizes the filter.
  void AddToBloom(const T* values, int64_t count) {
    if constexpr (!kIsBool) {
      const size_t start = bloom_hashes_.size();
      bloom_hashes_.resize(start + static_cast<size_t>(count));
      uint64_t* out = bloom_hashes_.data() + start;
      for (int64_t i = 0; i < count; ++i) out[i] = BloomHash(values[i]);
      if (bloom_hashes_.size() >= bloom_dedup_at_) {
        std::sort(bloom_hashes_.begin(), bloom_hashes_.end());
        bloom_hashes_.erase(std::unique(bloom_hashes_.begin(), bloom_hashes_.end()),
                            bloom_hashes_.end());
        bloom_dedup_at_ = std::max<size_t>(1 << 16, bloom_hashes_.size() * 2);
      }
    } else {
      (void)values;
      (void)count;
    }
  }

  uint64_t BloomHash(const T& v) const {
    if constexpr (kIsString) {
      return SplitBlockBloomFilter::Hash(v);
    } else if constexpr (kIsFlbaDecimal) {
      // The FIXED_LEN_BYTE_ARRAY bytes: big-endian two's complement.
      char buf[16];
      unsigned __int128 u = static_cast<unsigned __int128>(v);
      for (int i = value_width_ - 1; i >= 0; --i) {
        buf[i] = static_cast<char>(static_cast<uint8_t>(u));
        u >>= 8;
      }
      return SplitBlockBloomFilter::Hash(std::string_view(buf, static_cast<size_t>(value_width_)));
    } else if constexpr (std::is_same_v<T, float>) {
      return SplitBlockBloomFilter::HashFloat(v);
    } else if constexpr (std::is_same_v<T, double>) {
      return SplitBlockBloomFilter::HashDouble(v);
    } else if constexpr (std::is_same_v<T, int32_t>) {
      return SplitBlockBloomFilter::HashInt32(v);
    } else if constexpr (std::is_same_v<T, int64_t>) {
      return SplitBlockBloomFilter::HashInt64(v);
    } else {
      (void)v;
      return 0;
    }
  }

  void BuildBloomFilter() {
    std::sort(bloom_hashes_.begin(), bloom_hashes_.end());
    bloom_hashes_.erase(std::unique(bloom_hashes_.begin(), bloom_hashes_.end()),
                        bloom_hashes_.end());
    const int64_t ndv =
        bloom_options_.ndv > 0 ? bloom_options_.ndv : static_cast<int64_t>(bloom_hashes_.size());
    SplitBlockBloomFilter filter(SplitBlockBloomFilter::OptimalBytes(ndv, bloom_options_.fpp));
    for (uint64_t h : bloom_hashes_) filter.Insert(h);
    filter.Serialize(&bloom_bytes_);
    bloom_hashes_.clear();
    bloom_hashes_.shrink_to_fit();
    bloom_dedup_at_ = 1 << 16;
  }

  void AppendPlain(const T* values, int64_t count, std::string* out) const {
    if constexpr (kIsBool) {
      out->append(reinterpret_cast<const char*>(values), static_cast<size_t>(count));
    } else if constexpr (kIsString) {
      PlainEncodeByteArrays(values, count, out);
    } else if constexpr (kIsFlbaDecimal) {
      PlainEncodeDecimalFlba(values, count, value_width_, out);
    } else {
      PlainEncode(values, count, out);
    }
  }

  // Estimated encoded size of the open page.
  int64_t PageBytes() const {
    int64_t bytes = optional_ && page_num_values_ > 0 ? def_levels_.EstimatedSize() : 0;
    if (rep_bits_ > 0 && page_num_values_ > 0) bytes += rep_levels_.EstimatedSize();
    if (!page_indices_.empty()) {
      const int bits = std::max(1, BitWidthFor(static_cast<uint64_t>(dict_.size())));
      bytes += static_cast<int64_t>(page_indices_.size()) * bits / 8 + 1;
    }
    if constexpr (kIsBool) {
      bytes += static_cast<int64_t>(page_plain_.size()) / 8;
    } else {
      bytes += static_cast<int64_t>(page_plain_.size());
    }
    return bytes;
  }

  // Encodes page_plain_ (PLAIN values) in the column's chosen encoding.
  void TranscodePlain(std::string* out) {
    const int64_t bytes = static_cast<int64_t>(page_plain_.size());
    const uint8_t* plain = reinterpret_cast<const uint8_t*>(page_plain_.data());
    if (value_encoding_ == Encoding::kByteStreamSplit) {
      ByteStreamSplitEncode(plain, bytes / value_width_, value_width_, out);
      return;
    }
    if constexpr (std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>) {
      // kDeltaBinaryPacked (the only other encoding allowed for integers).
      transcode_ints_.resize(static_cast<size_t>(bytes) / sizeof(T));
      if (bytes > 0) std::memcpy(transcode_ints_.data(), plain, static_cast<size_t>(bytes));
      DeltaBinaryPackedEncode<T>(transcode_ints_.data(),
                                 static_cast<int64_t>(transcode_ints_.size()), out);
    } else if constexpr (kIsString || kIsFlbaDecimal) {
      // PLAIN byte arrays (4-byte length prefixes) or fixed-width arrays.
      transcode_views_.clear();
      int64_t pos = 0;
      while (pos < bytes) {
        uint32_t len = static_cast<uint32_t>(value_width_);
        if constexpr (kIsString) {
          std::memcpy(&len, plain + pos, 4);
          pos += 4;
        }
        transcode_views_.emplace_back(reinterpret_cast<const char*>(plain + pos), len);
        pos += len;
      }
      const int64_t n = static_cast<int64_t>(transcode_views_.size());
      if (value_encoding_ == Encoding::kDeltaLengthByteArray) {
        DeltaLengthByteArrayEncode(transcode_views_.data(), n, out);
      } else {
        DeltaByteArrayEncode(transcode_views_.data(), n, out);
      }
    }
  }

  Status FinishPage() {
    if (page_num_values_ == 0) return Status::OK();
    const bool v2 = options_.data_page_v2;
    // Levels: v1 prefixes each run with its 4-byte length; v2 records the
    // lengths in the page header.
    levels_.clear();
    int32_t rep_len = 0;
    int32_t def_len = 0;
    if (rep_bits_ > 0) {
      std::string_view levels = rep_levels_.Finish();
      rep_len = static_cast<int32_t>(levels.size());
      if (!v2) levels_.append(reinterpret_cast<const char*>(&rep_len), 4);
      levels_.append(levels);
    }
    if (optional_) {
      std::string_view levels = def_levels_.Finish();
      def_len = static_cast<int32_t>(levels.size());
      if (!v2) levels_.append(reinterpret_cast<const char*>(&def_len), 4);
      levels_.append(levels);
    }
    // The body is built in body_ except PLAIN values, which go from
    // page_plain_ to the compressor as they are; a v1 page's levels precede
    // it (AppendPage).
    body_.clear();
    bool plain_in_place = false;
    // The chunk's first dictionary page first asks whether the dictionary
    // pays off at all; if not, the page's values go PLAIN.
    std::string_view indices;
    int bits = 0;
    if (!page_indices_.empty()) {
      // The page's own width: its largest index, not the dictionary's size
      // (readers take the width from the page). Width 0 is legal for a
      // one-entry dictionary, but some readers mishandle it; one bit costs
      // nothing.
      bits = std::max(1, BitWidthFor(page_max_index_));
      index_encoder_.Reset(bits);
      index_encoder_.PutMany(page_indices_.data(), static_cast<int64_t>(page_indices_.size()));
      indices = index_encoder_.Finish();
      if (dict_pages_ == 0 && !DictionaryPaysOff(static_cast<int64_t>(indices.size()) + 1)) {
        DictionaryToPlain();
      }
    }
    Encoding encoding = Encoding::kPlain;
    if (!page_indices_.empty()) {
      encoding = Encoding::kRleDictionary;
      body_.push_back(static_cast<char>(bits));
      body_.append(indices);
      ++dict_pages_;
    } else if (value_encoding_ != Encoding::kPlain) {
      encoding = value_encoding_;
      TranscodePlain(&body_);
      ++other_pages_;
    } else {
      if constexpr (kIsBool) {
        PlainEncodeBooleans(reinterpret_cast<const uint8_t*>(page_plain_.data()),
                            static_cast<int64_t>(page_plain_.size()), &body_);
      } else {
        plain_in_place = true;
      }
      ++plain_pages_;
    }
    PageHeader header;
    if (v2) {
      header.type = PageType::kDataPageV2;
      header.data_page_header_v2.emplace();
      DataPageHeaderV2& h = *header.data_page_header_v2;
      h.num_values = static_cast<int32_t>(page_num_values_);
      h.num_nulls = static_cast<int32_t>(page_num_nulls_);
      h.num_rows = static_cast<int32_t>(page_num_rows_);
      h.encoding = encoding;
      h.definition_levels_byte_length = def_len;
      h.repetition_levels_byte_length = rep_len;
      h.is_compressed = compressor_->codec() != CompressionCodec::kUncompressed;
    } else {
      header.type = PageType::kDataPage;
      header.data_page_header.emplace();
      header.data_page_header->num_values = static_cast<int32_t>(page_num_values_);
      header.data_page_header->encoding = encoding;
      header.data_page_header->definition_level_encoding = Encoding::kRle;
      header.data_page_header->repetition_level_encoding = Encoding::kRle;
    }
    // Each page in its own string: no growing (copying) of one chunk-wide
    // buffer; the flush appends them in order.
    const std::string_view body = plain_in_place ? page_plain_ : body_;
    std::string page;
    page.reserve(body.size() / 2 + levels_.size() + 64);
    PageParts parts;
    (v2 ? parts.v2_levels : parts.body_prefix) = levels_;
    parts.body = body;
    SILT_RETURN_NOT_OK(
        AppendPage(parts, compressor_.get(), options_.page_checksums, field_.name, &header, &page));
    const auto before = static_cast<size_t>(chunk_pages_bytes_);
    const size_t page_size = page.size();
    chunk_pages_bytes_ += static_cast<int64_t>(page_size);
    chunk_pages_.push_back(std::move(page));
    if (options_.write_page_index) AddPageToIndex(before, page_size);
    chunk_stats_.Merge(page_stats_);
    page_stats_.Reset();
    chunk_uncompressed_ += static_cast<int64_t>(page_size) - header.compressed_page_size +
                           header.uncompressed_page_size;
    chunk_num_values_ += page_num_values_;

    page_num_values_ = 0;
    page_num_nulls_ = 0;
    page_num_rows_ = 0;
    page_indices_.clear();
    page_max_index_ = 0;
    page_plain_.clear();
    def_levels_.Reset(def_bits_);
    rep_levels_.Reset(rep_bits_);
    return Status::OK();
  }

  // Records the page just encoded (at `offset` in chunk_pages_) in the
  // offset index and its bounds in the column index.
  void AddPageToIndex(size_t offset, size_t size) {
    PageLocation loc;
    loc.offset = static_cast<int64_t>(offset);  // made absolute at flush
    loc.compressed_page_size = static_cast<int32_t>(size);
    loc.first_row_index = chunk_rows_;
    page_locations_.push_back(loc);
    chunk_rows_ += page_num_rows_;
    const Statistics st = page_stats_.ToThrift(physical_type_, value_width_);
    const bool all_null = page_stats_.null_count() == page_num_values_;
    if (!all_null && (!st.min_value || !st.max_value)) {
      // A page with values but no bounds (it holds NaN): no valid column
      // index, as parquet-mr invalidates its own.
      column_index_valid_ = false;
    }
    std::string lo = all_null ? std::string() : st.min_value.value_or("");
    std::string hi = all_null ? std::string() : st.max_value.value_or("");
    if constexpr (kIsString) TruncateBounds(&lo, &hi);
    column_index_.null_pages.push_back(all_null);
    column_index_.min_values.push_back(std::move(lo));
    column_index_.max_values.push_back(std::move(hi));
    column_index_.null_counts.push_back(page_stats_.null_count());
  }

  const Field field_;
  const LeafLayout layout_;
  const SchemaElement element_;
  const Gatherers<T> gatherers_;
  const WriterOptions options_;
  std::unique_ptr<Compressor> compressor_;
  const PhysicalType physical_type_;
  const int value_width_;  // PLAIN bytes per value (FLBA width; 4 for strings' prefix)
  const bool optional_;    // has definition levels
  const int def_bits_;
  const int rep_bits_;
  const Encoding value_encoding_;  // encoding of non-dictionary pages
  bool use_dictionary_;
  bool bloom_ = false;
  BloomFilterOptions bloom_options_;
  std::vector<uint64_t> bloom_hashes_;  // current chunk's value hashes
  size_t bloom_dedup_at_ = 1 << 16;
  std::string bloom_bytes_;  // the last flushed chunk's filter

  // Open page.
  int64_t page_num_values_ = 0;
  int64_t page_num_nulls_ = 0;
  int64_t page_num_rows_ = 0;
  RleEncoder def_levels_{1};
  RleEncoder rep_levels_{1};
  internal::ScratchVector<uint32_t> page_indices_;
  uint32_t page_max_index_ = 0;  // largest of page_indices_
  std::string page_plain_;

  // Current row group's chunk.
  DictionaryEncoder<T> dict_;
  std::vector<std::string> chunk_pages_;  // encoded data pages, in order
  int64_t chunk_pages_bytes_ = 0;
  int64_t chunk_num_values_ = 0;
  int64_t chunk_uncompressed_ = 0;
  int64_t dict_uncompressed_ = 0;
  int32_t dict_pages_ = 0;
  int32_t plain_pages_ = 0;
  int32_t other_pages_ = 0;  // pages in value_encoding_ (DELTA_*, BYTE_STREAM_SPLIT)
  TypedStatistics<T> chunk_stats_;
  TypedStatistics<T> page_stats_;
  // Page index of the current chunk, and the serialized indexes of the
  // chunk last flushed.
  std::vector<PageLocation> page_locations_;
  ColumnIndex column_index_;
  bool column_index_valid_ = true;
  int64_t chunk_rows_ = 0;
  std::string column_index_bytes_;
  std::string offset_index_bytes_;
  TypedStatistics<T> file_stats_;

  // Scratch reused across slices and pages.
  internal::ScratchVector<T> scratch_;
  internal::ScratchVector<T> plain_values_;  // DictionaryToPlain
  RleEncoder index_encoder_;
  std::string levels_;
  std::string body_;
  internal::ScratchVector<T> transcode_ints_;
  std::vector<std::string_view> transcode_views_;
};

template <typename T>
Result<std::unique_ptr<ColumnWriter>> MakeTyped(const Field& field, SchemaElement element,
                                                const LeafLayout& layout, Gatherers<T> gatherers,
                                                const WriterOptions& options) {
  // zstd_level is zstd's; gzip keeps zlib's default level.
  const int level = options.compression == Compression::kZstd ? options.zstd_level : 0;
  SILT_ASSIGN_OR_RETURN(std::unique_ptr<Compressor> compressor,
                        Compressor::Make(ToCodec(options.compression), level));
  return std::unique_ptr<ColumnWriter>(new TypedColumnWriter<T>(
      field, std::move(element), layout, gatherers, options, std::move(compressor)));
}

}  // namespace

Result<std::unique_ptr<ColumnWriter>> ColumnWriter::Make(const Field& field,
                                                         const WriterOptions& options) {
  SILT_ASSIGN_OR_RETURN(SchemaElement element, ParquetElementForField(field));
  LeafLayout layout;
  layout.path = {field.name};
  layout.max_definition_level = field.nullable ? 1 : 0;
  return MakeLeaf(field, std::move(element), std::move(layout), options);
}

Result<std::unique_ptr<ColumnWriter>> ColumnWriter::MakeLeaf(const Field& field,
                                                             SchemaElement element,
                                                             LeafLayout layout,
                                                             const WriterOptions& options) {
  const Encoding encoding = ValueEncoding(options, field.name);
  if (element.type && !EncodingFits(encoding, *element.type)) {
    return Status::InvalidArgument("column '", field.name, "': encoding ", EncodingName(encoding),
                                   " does not apply to Parquet ", PhysicalTypeName(*element.type),
                                   " values");
  }
  switch (field.type->id()) {
    case TypeId::kBoolean:
      return MakeTyped<uint8_t>(field, std::move(element), layout, internal::BoolGatherers(),
                                options);
    case TypeId::kByte:
      return MakeTyped<int32_t>(field, std::move(element), layout,
                                internal::FixedGatherers<int8_t, int32_t>(), options);
    case TypeId::kShort:
      return MakeTyped<int32_t>(field, std::move(element), layout,
                                internal::FixedGatherers<int16_t, int32_t>(), options);
    case TypeId::kInt:
    case TypeId::kDate:
      return MakeTyped<int32_t>(field, std::move(element), layout,
                                internal::FixedGatherers<int32_t, int32_t>(), options);
    case TypeId::kLong:
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz:
      return MakeTyped<int64_t>(field, std::move(element), layout,
                                internal::FixedGatherers<int64_t, int64_t>(), options);
    case TypeId::kFloat:
      return MakeTyped<float>(field, std::move(element), layout,
                              internal::FixedGatherers<float, float>(), options);
    case TypeId::kDouble:
      return MakeTyped<double>(field, std::move(element), layout,
                               internal::FixedGatherers<double, double>(), options);
    case TypeId::kDecimal:
      if (*element.type == PhysicalType::kInt32) {
        return MakeTyped<int32_t>(field, std::move(element), layout,
                                  internal::FixedGatherers<__int128, int32_t>(), options);
      }
      if (*element.type == PhysicalType::kInt64) {
        return MakeTyped<int64_t>(field, std::move(element), layout,
                                  internal::FixedGatherers<__int128, int64_t>(), options);
      }
      return MakeTyped<__int128>(field, std::move(element), layout,
                                 internal::FixedGatherers<__int128, __int128>(), options);
    case TypeId::kString:
    case TypeId::kBinary:
      return MakeTyped<std::string_view>(field, std::move(element), layout,
                                         internal::StringGatherers(), options);
    default: break;
  }
  return Status::NotSupported("writing column '", field.name, "' of type ", field.type->ToDdl(),
                              " to Parquet");
}

}  // namespace silt::parquet
