// Parquet file metadata: the subset of parquet.thrift (apache/parquet-format)
// that silt writes and reads, as plain structs with Write/Read through the
// Thrift compact protocol. Field ids and enum values are those of
// parquet.thrift; fields silt does not model are skipped when reading, so
// files from newer writers still parse.
//
// File layout: "PAR1" <column chunks> <FileMetaData> <u32 LE footer length>
// "PAR1". Each column chunk is a sequence of pages, each a PageHeader followed
// by the (possibly compressed) page body.
//
// Thread safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "silt/base/result.h"
#include "silt/parquet/thrift_compact.h"

namespace silt::parquet {

inline constexpr std::string_view kParquetMagic = "PAR1";
// Magic + footer length + magic.
inline constexpr int64_t kFooterTrailerSize = 8;

// Enums keep parquet.thrift's numbers; values outside the named ones are
// preserved as read (enum class with a fixed underlying type).
enum class PhysicalType : int32_t {
  kBoolean = 0,
  kInt32 = 1,
  kInt64 = 2,
  kInt96 = 3,
  kFloat = 4,
  kDouble = 5,
  kByteArray = 6,
  kFixedLenByteArray = 7,
};

enum class ConvertedType : int32_t {
  kUtf8 = 0,
  kMap = 1,
  kMapKeyValue = 2,
  kList = 3,
  kEnum = 4,
  kDecimal = 5,
  kDate = 6,
  kTimeMillis = 7,
  kTimeMicros = 8,
  kTimestampMillis = 9,
  kTimestampMicros = 10,
  kUint8 = 11,
  kUint16 = 12,
  kUint32 = 13,
  kUint64 = 14,
  kInt8 = 15,
  kInt16 = 16,
  kInt32 = 17,
  kInt64 = 18,
  kJson = 19,
  kBson = 20,
  kInterval = 21,
};

enum class Repetition : int32_t { kRequired = 0, kOptional = 1, kRepeated = 2 };

enum class Encoding : int32_t {
  kPlain = 0,
  kPlainDictionary = 2,
  kRle = 3,
  kBitPacked = 4,
  kDeltaBinaryPacked = 5,
  kDeltaLengthByteArray = 6,
  kDeltaByteArray = 7,
  kRleDictionary = 8,
  kByteStreamSplit = 9,
};

enum class CompressionCodec : int32_t {
  kUncompressed = 0,
  kSnappy = 1,
  kGzip = 2,
  kLzo = 3,
  kBrotli = 4,
  kLz4 = 5,
  kZstd = 6,
  kLz4Raw = 7,
};

enum class PageType : int32_t {
  kDataPage = 0,
  kIndexPage = 1,
  kDictionaryPage = 2,
  kDataPageV2 = 3,
};

enum class TimeUnit : int32_t { kMillis = 1, kMicros = 2, kNanos = 3 };

std::string_view PhysicalTypeName(PhysicalType t);
std::string_view EncodingName(Encoding e);
std::string_view CodecName(CompressionCodec c);

// The LogicalType union. `kind` is the union member's field id; members silt
// has no parameters for are kept by id only.
struct LogicalType {
  enum class Kind : int16_t {
    kNone = 0,
    kString = 1,
    kMap = 2,
    kList = 3,
    kEnum = 4,
    kDecimal = 5,
    kDate = 6,
    kTime = 7,
    kTimestamp = 8,
    kInteger = 10,
    kUnknown = 11,  // always-null column
    kJson = 12,
    kBson = 13,
    kUuid = 14,
    kFloat16 = 15,
    kVariant = 16,
    kGeometry = 17,
    kGeography = 18,
  };
  Kind kind = Kind::kNone;
  // kDecimal
  int32_t scale = 0;
  int32_t precision = 0;
  // kTime, kTimestamp
  bool is_adjusted_to_utc = false;
  TimeUnit unit = TimeUnit::kMicros;
  // kInteger
  int8_t bit_width = 0;
  bool is_signed = true;

  static LogicalType String() { return Make(Kind::kString); }
  static LogicalType Date() { return Make(Kind::kDate); }
  static LogicalType List() { return Make(Kind::kList); }
  static LogicalType Map() { return Make(Kind::kMap); }
  static LogicalType Decimal(int32_t precision, int32_t scale);
  static LogicalType Timestamp(bool utc, TimeUnit unit);
  static LogicalType Integer(int8_t bit_width, bool is_signed);

  void Write(thrift::CompactWriter* w) const;
  void Read(thrift::CompactReader* r);

 private:
  static LogicalType Make(Kind k) {
    LogicalType t;
    t.kind = k;
    return t;
  }
};

struct Statistics {
  std::optional<std::string> max;  // legacy, signed order
  std::optional<std::string> min;
  std::optional<int64_t> null_count;
  std::optional<int64_t> distinct_count;
  std::optional<std::string> max_value;
  std::optional<std::string> min_value;
  std::optional<bool> is_max_value_exact;
  std::optional<bool> is_min_value_exact;
  std::optional<int64_t> nan_count;

  void Write(thrift::CompactWriter* w) const;
  void Read(thrift::CompactReader* r);
};

struct SchemaElement {
  std::optional<PhysicalType> type;
  std::optional<int32_t> type_length;
  std::optional<Repetition> repetition_type;
  std::string name;
  std::optional<int32_t> num_children;
  std::optional<ConvertedType> converted_type;
  std::optional<int32_t> scale;
  std::optional<int32_t> precision;
  std::optional<int32_t> field_id;
  std::optional<LogicalType> logical_type;

  void Write(thrift::CompactWriter* w) const;
  void Read(thrift::CompactReader* r);
};

struct KeyValue {
  std::string key;
  std::optional<std::string> value;

  void Write(thrift::CompactWriter* w) const;
  void Read(thrift::CompactReader* r);
};

struct PageEncodingStats {
  PageType page_type = PageType::kDataPage;
  Encoding encoding = Encoding::kPlain;
  int32_t count = 0;

  void Write(thrift::CompactWriter* w) const;
  void Read(thrift::CompactReader* r);
};

struct ColumnMetaData {
  PhysicalType type = PhysicalType::kBoolean;
  std::vector<Encoding> encodings;
  std::vector<std::string> path_in_schema;
  CompressionCodec codec = CompressionCodec::kUncompressed;
  int64_t num_values = 0;
  int64_t total_uncompressed_size = 0;
  int64_t total_compressed_size = 0;
  std::vector<KeyValue> key_value_metadata;
  int64_t data_page_offset = 0;
  std::optional<int64_t> index_page_offset;
  std::optional<int64_t> dictionary_page_offset;
  std::optional<Statistics> statistics;
  std::vector<PageEncodingStats> encoding_stats;
  // Split-block bloom filter (BloomFilter.md): its header's offset and, when
  // the writer recorded it, header + bitset length.
  std::optional<int64_t> bloom_filter_offset;
  std::optional<int32_t> bloom_filter_length;

  void Write(thrift::CompactWriter* w) const;
  void Read(thrift::CompactReader* r);
};

struct ColumnChunk {
  std::optional<std::string> file_path;
  int64_t file_offset = 0;
  std::optional<ColumnMetaData> meta_data;
  // Page index locations (PageIndex.md).
  std::optional<int64_t> offset_index_offset;
  std::optional<int32_t> offset_index_length;
  std::optional<int64_t> column_index_offset;
  std::optional<int32_t> column_index_length;

  void Write(thrift::CompactWriter* w) const;
  void Read(thrift::CompactReader* r);
};

// The page index (PageIndex.md): where each data page of a column chunk
// starts and which rows it holds, and per-page bounds.
struct PageLocation {
  int64_t offset = 0;
  int32_t compressed_page_size = 0;  // header included
  int64_t first_row_index = 0;

  void Write(thrift::CompactWriter* w) const;
  void Read(thrift::CompactReader* r);
};

struct OffsetIndex {
  std::vector<PageLocation> page_locations;

  void Write(thrift::CompactWriter* w) const;
  void Read(thrift::CompactReader* r);
};

enum class BoundaryOrder : int32_t { kUnordered = 0, kAscending = 1, kDescending = 2 };

struct ColumnIndex {
  std::vector<bool> null_pages;
  std::vector<std::string> min_values;  // encoded like Statistics.min_value
  std::vector<std::string> max_values;
  BoundaryOrder boundary_order = BoundaryOrder::kUnordered;
  std::vector<int64_t> null_counts;

  void Write(thrift::CompactWriter* w) const;
  void Read(thrift::CompactReader* r);
};

struct RowGroup {
  std::vector<ColumnChunk> columns;
  int64_t total_byte_size = 0;
  int64_t num_rows = 0;
  std::optional<int64_t> file_offset;
  std::optional<int64_t> total_compressed_size;
  std::optional<int16_t> ordinal;

  void Write(thrift::CompactWriter* w) const;
  void Read(thrift::CompactReader* r);
};

// The ColumnOrder union: which member is set (1 = TYPE_ORDER).
enum class ColumnOrder : int16_t {
  kUnknown = 0,
  kTypeDefinedOrder = 1,
  kIeee754TotalOrder = 2,
  kInt96TimestampOrder = 3,
};

struct FileMetaData {
  int32_t version = 1;
  std::vector<SchemaElement> schema;
  int64_t num_rows = 0;
  std::vector<RowGroup> row_groups;
  std::vector<KeyValue> key_value_metadata;
  std::optional<std::string> created_by;
  std::vector<ColumnOrder> column_orders;
  // True when the footer announces encryption (field 8); silt does not
  // decrypt.
  bool encrypted = false;

  void Write(thrift::CompactWriter* w) const;
  void Read(thrift::CompactReader* r);
};

struct DataPageHeader {
  int32_t num_values = 0;
  Encoding encoding = Encoding::kPlain;
  Encoding definition_level_encoding = Encoding::kRle;
  Encoding repetition_level_encoding = Encoding::kRle;
  std::optional<Statistics> statistics;

  void Write(thrift::CompactWriter* w) const;
  void Read(thrift::CompactReader* r);
};

struct DictionaryPageHeader {
  int32_t num_values = 0;
  Encoding encoding = Encoding::kPlain;
  std::optional<bool> is_sorted;

  void Write(thrift::CompactWriter* w) const;
  void Read(thrift::CompactReader* r);
};

struct DataPageHeaderV2 {
  int32_t num_values = 0;
  int32_t num_nulls = 0;
  int32_t num_rows = 0;
  Encoding encoding = Encoding::kPlain;
  int32_t definition_levels_byte_length = 0;
  int32_t repetition_levels_byte_length = 0;
  bool is_compressed = true;
  std::optional<Statistics> statistics;

  void Write(thrift::CompactWriter* w) const;
  void Read(thrift::CompactReader* r);
};

struct PageHeader {
  PageType type = PageType::kDataPage;
  int32_t uncompressed_page_size = 0;
  int32_t compressed_page_size = 0;
  std::optional<int32_t> crc;
  std::optional<DataPageHeader> data_page_header;
  std::optional<DictionaryPageHeader> dictionary_page_header;
  std::optional<DataPageHeaderV2> data_page_header_v2;

  void Write(thrift::CompactWriter* w) const;
  void Read(thrift::CompactReader* r);
};

// Serializes `value` (anything with Write) to compact-protocol bytes.
template <typename T>
std::string SerializeThrift(const T& value) {
  std::string out;
  thrift::CompactWriter w(&out);
  value.Write(&w);
  return out;
}

// Parses a footer. Errors: Corruption describing the malformed bytes or a
// missing required field.
Result<FileMetaData> ParseFileMetaData(std::string_view bytes);

struct ParsedPageHeader {
  PageHeader header;
  int64_t header_size = 0;  // bytes the header took
};
// Parses the page header at the start of `bytes` (which may continue with
// the page body and further pages). Errors: Corruption.
Result<ParsedPageHeader> ParsePageHeader(std::string_view bytes);

}  // namespace silt::parquet
