// The Variant binary encoding (Apache Parquet's VariantEncoding.md, which
// Delta's variantType feature and Spark 4's VARIANT type use): reading a
// value through its metadata dictionary, building values, parsing JSON text
// into a variant as Spark's parse_json does, and printing a variant as
// Spark's Variant.toJson does.
//
// A variant is two byte strings: the metadata (a header byte, the
// dictionary of object keys) and the value (one self-describing value; an
// object refers to its keys by dictionary id). In a Column of type VARIANT
// they are the two binary children, metadata first (types.h).
//
// Everything here reads untrusted bytes (data files): readers check every
// offset against the buffer and report a malformed variant instead of
// reading past it. Spark's errors for those are MALFORMED_VARIANT.
//
// Thread safety: views are immutable; a builder is used by one thread.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "silt/base/result.h"

namespace silt::columnar {

// Spark's VariantUtil.SIZE_LIMIT: neither the value nor the metadata of a
// variant Spark builds may exceed 128 MiB.
inline constexpr int64_t kVariantSizeLimit = int64_t{128} << 20;

// What a value is, as Spark's Variant.getType groups the physical types
// (int8..int64 are kLong, short and long strings kString, decimal4/8/16
// kDecimal). kInvalid: the bytes are malformed or name a type id silt does
// not know (TIME, nanosecond timestamps).
enum class VariantType : uint8_t {
  kNull,
  kBoolean,
  kLong,
  kDouble,
  kDecimal,
  kDate,
  kTimestamp,
  kTimestampNtz,
  kFloat,
  kBinary,
  kString,
  kUuid,
  kObject,
  kArray,
  kInvalid,
};

// The metadata of one variant: the key dictionary.
class VariantMetadata {
 public:
  // Reads the header. False when the bytes are not version-1 metadata with
  // a dictionary that fits in them.
  bool Init(std::string_view bytes);
  std::string_view bytes() const { return bytes_; }
  uint32_t size() const { return size_; }
  // Dictionary entry `id`. False when `id` is out of range or its offsets
  // are inconsistent.
  bool Key(uint32_t id, std::string_view* key) const;

 private:
  std::string_view bytes_;
  uint32_t size_ = 0;
  int offset_size_ = 1;
  size_t offsets_start_ = 0;
  size_t strings_start_ = 0;
};

// One value: the bytes of a variant value buffer from its header byte on
// (the value may end before the buffer does). Accessors REQUIRE the type
// their name says and a value that type() did not report kInvalid for;
// every read is bounds-checked against the buffer, and a value whose
// payload runs past it is kInvalid.
class VariantValue {
 public:
  VariantValue() = default;
  explicit VariantValue(std::string_view bytes) : bytes_(bytes) {}

  std::string_view bytes() const { return bytes_; }
  VariantType type() const;
  // The primitive type id (0..20) of a primitive, -1 for other basic types.
  int primitive_id() const;
  // The value's encoded size in bytes (header included); 0 when malformed.
  size_t size() const;

  bool GetBoolean() const;
  // int8..int64, and the day count of a date / micros of a timestamp.
  int64_t GetLong() const;
  double GetDouble() const;
  float GetFloat() const;
  // The unscaled value and the scale as stored. False when malformed
  // (scale above 38, or more digits than the decimal width allows).
  bool GetDecimal(__int128* unscaled, int* scale) const;
  std::string_view GetString() const;
  std::string_view GetBinary() const;
  // 16 bytes, big-endian.
  std::string_view GetUuid() const;

  // Objects and arrays. False when malformed.
  struct Container {
    uint32_t num_elements = 0;
    int id_size = 0;  // objects only
    int offset_size = 0;
    size_t ids_start = 0;  // objects only
    size_t offsets_start = 0;
    size_t data_start = 0;
  };
  bool GetContainer(Container* out) const;
  // Field `index` of an object / element `index` of an array (REQUIRES:
  // index < num_elements). False when malformed.
  bool ObjectField(const Container& c, uint32_t index, uint32_t* key_id, VariantValue* value) const;
  bool ArrayElement(const Container& c, uint32_t index, VariantValue* value) const;
  // The object's field named `key` (exact, case-sensitive): linear for small
  // objects, binary search over the sorted ids for large ones (as Spark's
  // getFieldByKey). 1 found, 0 absent, -1 malformed.
  int FindField(const VariantMetadata& metadata, std::string_view key, VariantValue* value) const;

 private:
  std::string_view bytes_;
};

// Compares object keys the way Spark orders them: java.lang.String's
// compareTo, i.e. by UTF-16 code units (which differs from byte order only
// between supplementary characters and U+E000..U+FFFF).
int CompareVariantKeys(std::string_view a, std::string_view b);

// Builds one variant (value and metadata) from appended parts, as Spark's
// VariantBuilder: integers in the smallest of int8..int64, strings under 64
// bytes as short strings, the dictionary in first-use order, object fields
// sorted by key, and the narrowest offset and id widths.
class VariantBuilder {
 public:
  struct FieldEntry {
    uint32_t id;
    uint32_t offset;  // from the object's start position
  };

  // Forgets everything appended (capacity is kept).
  void Reset();

  void AppendNull() { value_.push_back(0); }
  void AppendBoolean(bool v) { value_.push_back(static_cast<char>(v ? 0x04 : 0x08)); }
  void AppendLong(int64_t v);
  void AppendDouble(double v);
  void AppendFloat(float v);
  // REQUIRES: 0 <= scale <= 38 and |unscaled| < 10^38. Stored in the
  // narrowest of decimal4/8/16 that holds the value's precision and scale.
  void AppendDecimal(__int128 unscaled, int scale);
  void AppendDate(int32_t days);
  void AppendTimestamp(int64_t micros);
  void AppendTimestampNtz(int64_t micros);
  void AppendString(std::string_view v);
  void AppendBinary(std::string_view v);
  // 16 bytes, big-endian.
  void AppendUuid(std::string_view bytes16);

  // The dictionary id of `key`, adding it when new.
  uint32_t AddKey(std::string_view key);
  // The write position; objects and arrays record it before their children.
  size_t position() const { return value_.size(); }
  // Ends an object whose fields were appended from `start` on, each with an
  // entry made before appending it. Sorts the entries by key. A key that
  // appears twice is an error unless `allow_duplicate_keys`, which keeps
  // the last one (Spark's spark.sql.variant.allowDuplicateKeys).
  // Errors: InvalidArgument "VARIANT_DUPLICATE_KEY" naming the key.
  Status FinishObject(size_t start, std::vector<FieldEntry>* fields,
                      bool allow_duplicate_keys = false);
  // Ends an array whose elements were appended from `start` on, at
  // `offsets` (relative to start).
  void FinishArray(size_t start, const std::vector<uint32_t>& offsets);

  // Appends a value of another variant, re-keying its objects into this
  // builder's dictionary. Errors: Corruption when it is malformed.
  Status AppendVariant(const VariantMetadata& metadata, const VariantValue& value);

  // Bytes appended so far (the size limit is checked by Finish).
  size_t value_size() const { return value_.size(); }

  // The finished value and metadata (appended to the outputs' ends).
  // Errors: InvalidArgument "VARIANT_SIZE_LIMIT" when either exceeds
  // kVariantSizeLimit.
  Status Finish(std::string* value, std::string* metadata) const;

 private:
  friend class JsonVariantParser;
  Status AppendVariantRec(const VariantMetadata& metadata, const VariantValue& value, int depth);

  std::string value_;
  // A deque: the map's views stay valid as keys are added.
  std::deque<std::string> keys_;
  std::unordered_map<std::string_view, uint32_t> key_ids_;
  // Scratch for FinishObject and AppendVariant, reused across calls.
  std::vector<std::vector<FieldEntry>> field_stack_;
  std::vector<std::vector<uint32_t>> offset_stack_;
  std::string scratch_;
};

// Why parse_json rejected its input.
struct JsonToVariantError {
  enum class Kind : uint8_t { kMalformed, kDuplicateKey, kSizeLimit };
  Kind kind = Kind::kMalformed;
  // What is wrong and where (byte offset), or the duplicate key.
  std::string message;
};

// Spark's parse_json: `json` (one JSON value; a \u escape of a lone
// surrogate is malformed; what follows a complete object
// or array is ignored, as Spark's Jackson parser leaves it unread) into
// `builder` (which is Reset first). Numbers: integers that fit a long as
// int8..int64; other numbers without an exponent as a decimal when they
// have at most 38 digits and scale, else as a double (1e3 is a double).
// Returns false and fills `error` when the text is not JSON, a key repeats
// (unless allowed) or the variant would exceed the size limit.
bool JsonToVariant(std::string_view json, bool allow_duplicate_keys, VariantBuilder* builder,
                   JsonToVariantError* error);

// Spark's Variant.toJson: compact JSON, object keys in their stored
// (sorted) order, doubles and floats as Java prints them (NaN and Infinity
// quoted, as Spark 4.2's Jackson generator writes them), decimals in plain notation without
// trailing zeros, dates yyyy-MM-dd, timestamps "yyyy-MM-dd HH:mm:ss[.ffffff]+hh:mm" in the given
// zone, timestamp_ntz without the offset, binary as base64, uuids in their
// 8-4-4-4-12 form.
struct VariantJsonOptions {
  // The zone's offset (seconds east of UTC) at a UTC instant (micros);
  // null for UTC.
  int32_t (*offset_seconds)(const void* zone, int64_t utc_micros) = nullptr;
  const void* zone = nullptr;
};
// Appends the JSON text of `value`. False when the variant is malformed
// (`out` then holds a partial text).
bool AppendVariantJson(const VariantMetadata& metadata, const VariantValue& value,
                       const VariantJsonOptions& options, std::string* out);

// Decimal text helpers shared with the expression kernels: Java's
// BigDecimal.stripTrailingZeros() (scale may go negative for integers with
// trailing zeros, e.g. 100 -> 1E+2), and toPlainString().
void StripTrailingZeros(__int128* unscaled, int* scale);
void AppendDecimalPlainText(__int128 unscaled, int scale, std::string* out);
// Decimal digits of |v| (1 for 0): BigDecimal.precision().
int DecimalDigits(__int128 v);

}  // namespace silt::columnar
