#include "silt/columnar/variant.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "silt/base/json_writer.h"
#include "silt/base/utf8.h"
#include "silt/columnar/temporal.h"

namespace silt::columnar {

namespace {

// Basic types (the low two bits of a value's header byte).
constexpr int kPrimitive = 0;
constexpr int kShortString = 1;
constexpr int kObject = 2;
constexpr int kArray = 3;

// Primitive type ids.
constexpr int kNullId = 0;
constexpr int kTrueId = 1;
constexpr int kFalseId = 2;
constexpr int kInt8Id = 3;
constexpr int kInt16Id = 4;
constexpr int kInt32Id = 5;
constexpr int kInt64Id = 6;
constexpr int kDoubleId = 7;
constexpr int kDecimal4Id = 8;
constexpr int kDecimal8Id = 9;
constexpr int kDecimal16Id = 10;
constexpr int kDateId = 11;
constexpr int kTimestampId = 12;
constexpr int kTimestampNtzId = 13;
constexpr int kFloatId = 14;
constexpr int kBinaryId = 15;
constexpr int kStringId = 16;
constexpr int kUuidId = 20;

constexpr int kMaxShortStringSize = 63;
constexpr int kMaxDecimalPrecision = 38;
// Nesting Spark's JSON parser (Jackson's StreamReadConstraints) accepts.
constexpr int kMaxJsonDepth = 1000;
// Jackson's limit on a number's length.
constexpr size_t kMaxNumberLength = 1000;
// Depth at which reading a variant stops recursing (a malformed value can
// nest without bound).
constexpr int kMaxVariantDepth = 10000;
// Objects at least this large are searched by binary search (as Spark).
constexpr uint32_t kBinarySearchThreshold = 32;

uint64_t ReadUnsigned(const char* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}

int64_t ReadSigned(const char* p, int n) {
  uint64_t v = ReadUnsigned(p, n);
  if (n < 8 && (v >> (8 * n - 1)) & 1) v |= ~uint64_t{0} << (8 * n);
  return static_cast<int64_t>(v);
}

void WriteUnsigned(char* p, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

void AppendUnsigned(std::string* out, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// The narrowest unsigned width (1..4 bytes) for `v`.
int IntegerSize(uint64_t v) {
  if (v <= 0xff) return 1;
  if (v <= 0xffff) return 2;
  if (v <= 0xffffff) return 3;
  return 4;
}

// Size of a primitive's payload after the header byte, or -1 for unknown
// ids; variable-length ones (binary, string) return 4 (the length field).
int PrimitivePayload(int id) {
  switch (id) {
    case kNullId:
    case kTrueId:
    case kFalseId: return 0;
    case kInt8Id: return 1;
    case kInt16Id: return 2;
    case kInt32Id:
    case kDateId:
    case kFloatId: return 4;
    case kInt64Id:
    case kDoubleId:
    case kTimestampId:
    case kTimestampNtzId: return 8;
    case kDecimal4Id: return 5;
    case kDecimal8Id: return 9;
    case kDecimal16Id: return 17;
    case kBinaryId:
    case kStringId: return 4;
    case kUuidId: return 16;
    default: return -1;
  }
}

}  // namespace

int DecimalDigits(__int128 v) {
  unsigned __int128 u =
      v < 0 ? static_cast<unsigned __int128>(-(v + 1)) + 1 : static_cast<unsigned __int128>(v);
  int digits = 1;
  while (u >= 10) {
    u /= 10;
    ++digits;
  }
  return digits;
}

void StripTrailingZeros(__int128* unscaled, int* scale) {
  if (*unscaled == 0) {
    *scale = 0;
    return;
  }
  while (*unscaled % 10 == 0) {
    *unscaled /= 10;
    --*scale;
  }
}

void AppendDecimalPlainText(__int128 unscaled, int scale, std::string* out) {
  const bool negative = unscaled < 0;
  unsigned __int128 u = negative ? static_cast<unsigned __int128>(-(unscaled + 1)) + 1
                                 : static_cast<unsigned __int128>(unscaled);
  char digits[48];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + static_cast<int>(u % 10));
    u /= 10;
  } while (u != 0);
  if (negative) out->push_back('-');
  if (scale <= 0) {
    for (int i = n - 1; i >= 0; --i) out->push_back(digits[i]);
    out->append(static_cast<size_t>(-scale), '0');
    return;
  }
  if (n <= scale) {
    out->append("0.");
    out->append(static_cast<size_t>(scale - n), '0');
    for (int i = n - 1; i >= 0; --i) out->push_back(digits[i]);
    return;
  }
  for (int i = n - 1; i >= scale; --i) out->push_back(digits[i]);
  out->push_back('.');
  for (int i = scale - 1; i >= 0; --i) out->push_back(digits[i]);
}

int CompareVariantKeys(std::string_view a, std::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  if (i == n) return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
  // Back up to the first byte of the differing characters (the same start
  // in both: everything before is equal).
  size_t start = i;
  while (start > 0 && (static_cast<uint8_t>(a[start]) & 0xC0) == 0x80) --start;
  const uint8_t ca = static_cast<uint8_t>(a[start]);
  const uint8_t cb = static_cast<uint8_t>(b[start]);
  // Supplementary characters (4-byte UTF-8, lead >= 0xF0) are surrogate
  // pairs in UTF-16 (0xD800..0xDFFF), which sort before U+E000..U+FFFF
  // (lead 0xEE, 0xEF) and after everything below U+D800.
  const bool sa = ca >= 0xF0;
  const bool sb = cb >= 0xF0;
  if (sa != sb) {
    const uint8_t other = sa ? cb : ca;
    const bool other_high = other == 0xEE || other == 0xEF;
    if (other_high) return sa ? -1 : 1;
  }
  return static_cast<uint8_t>(a[i]) < static_cast<uint8_t>(b[i]) ? -1 : 1;
}

// ---------------------------------------------------------------------------
// VariantMetadata

bool VariantMetadata::Init(std::string_view bytes) {
  bytes_ = bytes;
  size_ = 0;
  if (bytes.empty()) return false;
  const uint8_t header = static_cast<uint8_t>(bytes[0]);
  if ((header & 0x0F) != 1) return false;
  offset_size_ = ((header >> 6) & 3) + 1;
  if (bytes.size() < 1 + static_cast<size_t>(offset_size_)) return false;
  const uint64_t size = ReadUnsigned(bytes.data() + 1, offset_size_);
  offsets_start_ = 1 + static_cast<size_t>(offset_size_);
  const uint64_t offsets_bytes = (size + 1) * static_cast<uint64_t>(offset_size_);
  if (offsets_bytes > bytes.size() - offsets_start_) return false;
  strings_start_ = offsets_start_ + static_cast<size_t>(offsets_bytes);
  size_ = static_cast<uint32_t>(size);
  return true;
}

bool VariantMetadata::Key(uint32_t id, std::string_view* key) const {
  if (id >= size_) return false;
  const char* offsets = bytes_.data() + offsets_start_;
  const uint64_t begin =
      ReadUnsigned(offsets + static_cast<size_t>(id) * offset_size_, offset_size_);
  const uint64_t end =
      ReadUnsigned(offsets + (static_cast<size_t>(id) + 1) * offset_size_, offset_size_);
  if (begin > end || end > bytes_.size() - strings_start_) return false;
  *key = bytes_.substr(strings_start_ + begin, end - begin);
  return true;
}

// ---------------------------------------------------------------------------
// VariantValue

int VariantValue::primitive_id() const {
  if (bytes_.empty()) return -1;
  const uint8_t header = static_cast<uint8_t>(bytes_[0]);
  return (header & 3) == kPrimitive ? header >> 2 : -1;
}

size_t VariantValue::size() const {
  if (bytes_.empty()) return 0;
  const uint8_t header = static_cast<uint8_t>(bytes_[0]);
  const int info = header >> 2;
  switch (header & 3) {
    case kShortString: {
      const size_t n = 1 + static_cast<size_t>(info);
      return n <= bytes_.size() ? n : 0;
    }
    case kObject:
    case kArray: {
      Container c;
      if (!GetContainer(&c)) return 0;
      const size_t last_pos = c.offsets_start + static_cast<size_t>(c.num_elements) * c.offset_size;
      const uint64_t data_size = ReadUnsigned(bytes_.data() + last_pos, c.offset_size);
      if (data_size > bytes_.size() - c.data_start) return 0;
      return c.data_start + static_cast<size_t>(data_size);
    }
    default: {
      const int payload = PrimitivePayload(info);
      if (payload < 0 || bytes_.size() < 1 + static_cast<size_t>(payload)) return 0;
      if (info == kBinaryId || info == kStringId) {
        const uint64_t len = ReadUnsigned(bytes_.data() + 1, 4);
        if (len > bytes_.size() - 5) return 0;
        return 5 + static_cast<size_t>(len);
      }
      return 1 + static_cast<size_t>(payload);
    }
  }
}

VariantType VariantValue::type() const {
  if (bytes_.empty()) return VariantType::kInvalid;
  const uint8_t header = static_cast<uint8_t>(bytes_[0]);
  const int info = header >> 2;
  switch (header & 3) {
    case kShortString:
      return 1 + static_cast<size_t>(info) <= bytes_.size() ? VariantType::kString
                                                            : VariantType::kInvalid;
    case kObject:
    case kArray: {
      Container c;
      if (!GetContainer(&c)) return VariantType::kInvalid;
      return (header & 3) == kObject ? VariantType::kObject : VariantType::kArray;
    }
    default: break;
  }
  if (size() == 0) return VariantType::kInvalid;
  switch (info) {
    case kNullId: return VariantType::kNull;
    case kTrueId:
    case kFalseId: return VariantType::kBoolean;
    case kInt8Id:
    case kInt16Id:
    case kInt32Id:
    case kInt64Id: return VariantType::kLong;
    case kDoubleId: return VariantType::kDouble;
    case kDecimal4Id:
    case kDecimal8Id:
    case kDecimal16Id: {
      __int128 unscaled = 0;
      int scale = 0;
      return GetDecimal(&unscaled, &scale) ? VariantType::kDecimal : VariantType::kInvalid;
    }
    case kDateId: return VariantType::kDate;
    case kTimestampId: return VariantType::kTimestamp;
    case kTimestampNtzId: return VariantType::kTimestampNtz;
    case kFloatId: return VariantType::kFloat;
    case kBinaryId: return VariantType::kBinary;
    case kStringId: return VariantType::kString;
    case kUuidId: return VariantType::kUuid;
    default: return VariantType::kInvalid;
  }
}

bool VariantValue::GetBoolean() const { return primitive_id() == kTrueId; }

int64_t VariantValue::GetLong() const {
  switch (primitive_id()) {
    case kInt8Id: return ReadSigned(bytes_.data() + 1, 1);
    case kInt16Id: return ReadSigned(bytes_.data() + 1, 2);
    case kInt32Id:
    case kDateId: return ReadSigned(bytes_.data() + 1, 4);
    default: return ReadSigned(bytes_.data() + 1, 8);
  }
}

double VariantValue::GetDouble() const {
  const uint64_t bits = ReadUnsigned(bytes_.data() + 1, 8);
  double d;
  std::memcpy(&d, &bits, sizeof(d));
  return d;
}

float VariantValue::GetFloat() const {
  const uint32_t bits = static_cast<uint32_t>(ReadUnsigned(bytes_.data() + 1, 4));
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

bool VariantValue::GetDecimal(__int128* unscaled, int* scale) const {
  const int id = primitive_id();
  if (bytes_.size() < 2) return false;
  *scale = static_cast<uint8_t>(bytes_[1]);
  int max_precision = 0;
  switch (id) {
    case kDecimal4Id:
      if (bytes_.size() < 6) return false;
      *unscaled = ReadSigned(bytes_.data() + 2, 4);
      max_precision = 9;
      break;
    case kDecimal8Id:
      if (bytes_.size() < 10) return false;
      *unscaled = ReadSigned(bytes_.data() + 2, 8);
      max_precision = 18;
      break;
    case kDecimal16Id: {
      if (bytes_.size() < 18) return false;
      const uint64_t lo = ReadUnsigned(bytes_.data() + 2, 8);
      const uint64_t hi = ReadUnsigned(bytes_.data() + 10, 8);
      *unscaled = static_cast<__int128>((static_cast<unsigned __int128>(hi) << 64) | lo);
      max_precision = 38;
      break;
    }
    default: return false;
  }
  // Spark's checkDecimal: the digits and the scale must fit the width.
  return *scale <= max_precision && DecimalDigits(*unscaled) <= max_precision;
}

std::string_view VariantValue::GetString() const {
  const uint8_t header = static_cast<uint8_t>(bytes_[0]);
  if ((header & 3) == kShortString) return bytes_.substr(1, header >> 2);
  const uint64_t len = ReadUnsigned(bytes_.data() + 1, 4);
  return bytes_.substr(5, static_cast<size_t>(len));
}

std::string_view VariantValue::GetBinary() const { return GetString(); }

std::string_view VariantValue::GetUuid() const { return bytes_.substr(1, 16); }

bool VariantValue::GetContainer(Container* c) const {
  if (bytes_.empty()) return false;
  const uint8_t header = static_cast<uint8_t>(bytes_[0]);
  const int basic = header & 3;
  const int info = header >> 2;
  bool large = false;
  if (basic == kObject) {
    large = (info >> 4) & 1;
    c->id_size = ((info >> 2) & 3) + 1;
    c->offset_size = (info & 3) + 1;
  } else if (basic == kArray) {
    large = (info >> 2) & 1;
    c->id_size = 0;
    c->offset_size = (info & 3) + 1;
  } else {
    return false;
  }
  const int size_bytes = large ? 4 : 1;
  if (bytes_.size() < 1 + static_cast<size_t>(size_bytes)) return false;
  c->num_elements = static_cast<uint32_t>(ReadUnsigned(bytes_.data() + 1, size_bytes));
  c->ids_start = 1 + static_cast<size_t>(size_bytes);
  const uint64_t ids_bytes = static_cast<uint64_t>(c->num_elements) * c->id_size;
  const uint64_t offsets_bytes = (static_cast<uint64_t>(c->num_elements) + 1) * c->offset_size;
  if (ids_bytes + offsets_bytes > bytes_.size() - c->ids_start) return false;
  c->offsets_start = c->ids_start + static_cast<size_t>(ids_bytes);
  c->data_start = c->offsets_start + static_cast<size_t>(offsets_bytes);
  return true;
}

bool VariantValue::ObjectField(const Container& c, uint32_t index, uint32_t* key_id,
                               VariantValue* value) const {
  *key_id = static_cast<uint32_t>(ReadUnsigned(
      bytes_.data() + c.ids_start + static_cast<size_t>(index) * c.id_size, c.id_size));
  return ArrayElement(c, index, value);
}

bool VariantValue::ArrayElement(const Container& c, uint32_t index, VariantValue* value) const {
  const uint64_t offset = ReadUnsigned(
      bytes_.data() + c.offsets_start + static_cast<size_t>(index) * c.offset_size, c.offset_size);
  if (offset >= bytes_.size() - c.data_start) return false;
  *value = VariantValue(bytes_.substr(c.data_start + static_cast<size_t>(offset)));
  return true;
}

int VariantValue::FindField(const VariantMetadata& metadata, std::string_view key,
                            VariantValue* value) const {
  Container c;
  if (!GetContainer(&c)) return -1;
  uint32_t id = 0;
  std::string_view name;
  if (c.num_elements < kBinarySearchThreshold) {
    for (uint32_t i = 0; i < c.num_elements; ++i) {
      id = static_cast<uint32_t>(ReadUnsigned(
          bytes_.data() + c.ids_start + static_cast<size_t>(i) * c.id_size, c.id_size));
      if (!metadata.Key(id, &name)) return -1;
      if (name == key) return ArrayElement(c, i, value) ? 1 : -1;
    }
    return 0;
  }
  int64_t low = 0;
  int64_t high = static_cast<int64_t>(c.num_elements) - 1;
  while (low <= high) {
    const int64_t mid = (low + high) / 2;
    id = static_cast<uint32_t>(ReadUnsigned(
        bytes_.data() + c.ids_start + static_cast<size_t>(mid) * c.id_size, c.id_size));
    if (!metadata.Key(id, &name)) return -1;
    const int cmp = CompareVariantKeys(name, key);
    if (cmp < 0) {
      low = mid + 1;
    } else if (cmp > 0) {
      high = mid - 1;
    } else {
      return ArrayElement(c, static_cast<uint32_t>(mid), value) ? 1 : -1;
    }
  }
  return 0;
}

// ---------------------------------------------------------------------------
// VariantBuilder

void VariantBuilder::Reset() {
  value_.clear();
  keys_.clear();
  key_ids_.clear();
}

void VariantBuilder::AppendLong(int64_t v) {
  if (v == static_cast<int8_t>(v)) {
    value_.push_back(static_cast<char>(kInt8Id << 2));
    AppendUnsigned(&value_, static_cast<uint64_t>(v), 1);
  } else if (v == static_cast<int16_t>(v)) {
    value_.push_back(static_cast<char>(kInt16Id << 2));
    AppendUnsigned(&value_, static_cast<uint64_t>(v), 2);
  } else if (v == static_cast<int32_t>(v)) {
    value_.push_back(static_cast<char>(kInt32Id << 2));
    AppendUnsigned(&value_, static_cast<uint64_t>(v), 4);
  } else {
    value_.push_back(static_cast<char>(kInt64Id << 2));
    AppendUnsigned(&value_, static_cast<uint64_t>(v), 8);
  }
}

void VariantBuilder::AppendDouble(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  value_.push_back(static_cast<char>(kDoubleId << 2));
  AppendUnsigned(&value_, bits, 8);
}

void VariantBuilder::AppendFloat(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  value_.push_back(static_cast<char>(kFloatId << 2));
  AppendUnsigned(&value_, bits, 4);
}

void VariantBuilder::AppendDecimal(__int128 unscaled, int scale) {
  const int precision = DecimalDigits(unscaled);
  if (scale <= 9 && precision <= 9) {
    value_.push_back(static_cast<char>(kDecimal4Id << 2));
    value_.push_back(static_cast<char>(scale));
    AppendUnsigned(&value_, static_cast<uint64_t>(static_cast<int64_t>(unscaled)), 4);
  } else if (scale <= 18 && precision <= 18) {
    value_.push_back(static_cast<char>(kDecimal8Id << 2));
    value_.push_back(static_cast<char>(scale));
    AppendUnsigned(&value_, static_cast<uint64_t>(static_cast<int64_t>(unscaled)), 8);
  } else {
    value_.push_back(static_cast<char>(kDecimal16Id << 2));
    value_.push_back(static_cast<char>(scale));
    const auto u = static_cast<unsigned __int128>(unscaled);
    AppendUnsigned(&value_, static_cast<uint64_t>(u), 8);
    AppendUnsigned(&value_, static_cast<uint64_t>(u >> 64), 8);
  }
}

void VariantBuilder::AppendDate(int32_t days) {
  value_.push_back(static_cast<char>(kDateId << 2));
  AppendUnsigned(&value_, static_cast<uint32_t>(days), 4);
}

void VariantBuilder::AppendTimestamp(int64_t micros) {
  value_.push_back(static_cast<char>(kTimestampId << 2));
  AppendUnsigned(&value_, static_cast<uint64_t>(micros), 8);
}

void VariantBuilder::AppendTimestampNtz(int64_t micros) {
  value_.push_back(static_cast<char>(kTimestampNtzId << 2));
  AppendUnsigned(&value_, static_cast<uint64_t>(micros), 8);
}

void VariantBuilder::AppendString(std::string_view v) {
  if (v.size() <= static_cast<size_t>(kMaxShortStringSize)) {
    value_.push_back(static_cast<char>((v.size() << 2) | kShortString));
  } else {
    value_.push_back(static_cast<char>(kStringId << 2));
    AppendUnsigned(&value_, v.size(), 4);
  }
  value_.append(v);
}

void VariantBuilder::AppendBinary(std::string_view v) {
  value_.push_back(static_cast<char>(kBinaryId << 2));
  AppendUnsigned(&value_, v.size(), 4);
  value_.append(v);
}

void VariantBuilder::AppendUuid(std::string_view bytes16) {
  value_.push_back(static_cast<char>(kUuidId << 2));
  value_.append(bytes16.substr(0, 16));
}

uint32_t VariantBuilder::AddKey(std::string_view key) {
  auto it = key_ids_.find(key);
  if (it != key_ids_.end()) return it->second;
  const uint32_t id = static_cast<uint32_t>(keys_.size());
  keys_.emplace_back(key);
  key_ids_.emplace(keys_.back(), id);
  return id;
}

Status VariantBuilder::FinishObject(size_t start, std::vector<FieldEntry>* fields,
                                    bool allow_duplicate_keys) {
  const size_t data_size = value_.size() - start;
  std::stable_sort(fields->begin(), fields->end(),
                   [this](const FieldEntry& a, const FieldEntry& b) {
                     return CompareVariantKeys(keys_[a.id], keys_[b.id]) < 0;
                   });
  // Equal keys share one dictionary id, so duplicates are adjacent equal ids.
  for (size_t i = 1; i < fields->size(); ++i) {
    if ((*fields)[i].id != (*fields)[i - 1].id) continue;
    if (!allow_duplicate_keys) {
      return Status::InvalidArgument(
          "[VARIANT_DUPLICATE_KEY] Failed to build variant because of a "
          "duplicate object key `",
          keys_[(*fields)[i].id], "`");
    }
  }
  if (allow_duplicate_keys && fields->size() > 1) {
    // Keep the last occurrence of each key (the stable sort left it last).
    size_t kept = 0;
    for (size_t i = 0; i < fields->size(); ++i) {
      if (i + 1 < fields->size() && (*fields)[i + 1].id == (*fields)[i].id) continue;
      (*fields)[kept++] = (*fields)[i];
    }
    fields->resize(kept);
  }
  const size_t size = fields->size();
  const bool large = size > 0xff;
  const int size_bytes = large ? 4 : 1;
  uint32_t max_id = 0;
  for (const FieldEntry& f : *fields) max_id = std::max(max_id, f.id);
  const int id_size = IntegerSize(max_id);
  const int offset_size = IntegerSize(data_size);
  const size_t header_size = 1 + size_bytes + size * id_size + (size + 1) * offset_size;
  value_.resize(value_.size() + header_size);
  char* base = value_.data() + start;
  std::memmove(base + header_size, base, data_size);
  base[0] = static_cast<char>(((large ? 1 : 0) << 6) | ((id_size - 1) << 4) |
                              ((offset_size - 1) << 2) | kObject);
  WriteUnsigned(base + 1, size, size_bytes);
  char* ids = base + 1 + size_bytes;
  char* offsets = ids + size * id_size;
  for (size_t i = 0; i < size; ++i) {
    WriteUnsigned(ids + i * id_size, (*fields)[i].id, id_size);
    WriteUnsigned(offsets + i * offset_size, (*fields)[i].offset, offset_size);
  }
  WriteUnsigned(offsets + size * offset_size, data_size, offset_size);
  return Status::OK();
}

void VariantBuilder::FinishArray(size_t start, const std::vector<uint32_t>& offsets) {
  const size_t data_size = value_.size() - start;
  const size_t size = offsets.size();
  const bool large = size > 0xff;
  const int size_bytes = large ? 4 : 1;
  const int offset_size = IntegerSize(data_size);
  const size_t header_size = 1 + size_bytes + (size + 1) * offset_size;
  value_.resize(value_.size() + header_size);
  char* base = value_.data() + start;
  std::memmove(base + header_size, base, data_size);
  base[0] = static_cast<char>(((large ? 1 : 0) << 4) | ((offset_size - 1) << 2) | kArray);
  WriteUnsigned(base + 1, size, size_bytes);
  char* out = base + 1 + size_bytes;
  for (size_t i = 0; i < size; ++i) WriteUnsigned(out + i * offset_size, offsets[i], offset_size);
  WriteUnsigned(out + size * offset_size, data_size, offset_size);
}

Status VariantBuilder::AppendVariant(const VariantMetadata& metadata, const VariantValue& value) {
  return AppendVariantRec(metadata, value, 0);
}

Status VariantBuilder::AppendVariantRec(const VariantMetadata& metadata, const VariantValue& value,
                                        int depth) {
  if (depth > kMaxVariantDepth) return Status::Corruption("variant nested too deeply");
  const VariantType type = value.type();
  if (type == VariantType::kInvalid) return Status::Corruption("malformed variant value");
  if (type == VariantType::kObject || type == VariantType::kArray) {
    VariantValue::Container c;
    value.GetContainer(&c);
    if (field_stack_.size() <= static_cast<size_t>(depth)) {
      field_stack_.resize(static_cast<size_t>(depth) + 1);
      offset_stack_.resize(static_cast<size_t>(depth) + 1);
    }
    const size_t start = value_.size();
    if (type == VariantType::kObject) {
      std::vector<FieldEntry>& fields = field_stack_[static_cast<size_t>(depth)];
      fields.clear();
      for (uint32_t i = 0; i < c.num_elements; ++i) {
        uint32_t key_id = 0;
        VariantValue child;
        std::string_view key;
        if (!value.ObjectField(c, i, &key_id, &child) || !metadata.Key(key_id, &key)) {
          return Status::Corruption("malformed variant object");
        }
        const uint32_t id = AddKey(key);
        field_stack_[static_cast<size_t>(depth)].push_back(
            FieldEntry{id, static_cast<uint32_t>(value_.size() - start)});
        SILT_RETURN_NOT_OK(AppendVariantRec(metadata, child, depth + 1));
      }
      return FinishObject(start, &field_stack_[static_cast<size_t>(depth)]);
    }
    std::vector<uint32_t>& offsets = offset_stack_[static_cast<size_t>(depth)];
    offsets.clear();
    for (uint32_t i = 0; i < c.num_elements; ++i) {
      VariantValue child;
      if (!value.ArrayElement(c, i, &child)) return Status::Corruption("malformed variant array");
      offset_stack_[static_cast<size_t>(depth)].push_back(
          static_cast<uint32_t>(value_.size() - start));
      SILT_RETURN_NOT_OK(AppendVariantRec(metadata, child, depth + 1));
    }
    FinishArray(start, offset_stack_[static_cast<size_t>(depth)]);
    return Status::OK();
  }
  const size_t n = value.size();
  if (n == 0) return Status::Corruption("malformed variant value");
  value_.append(value.bytes().substr(0, n));
  return Status::OK();
}

Status VariantBuilder::Finish(std::string* value, std::string* metadata) const {
  if (static_cast<int64_t>(value_.size()) > kVariantSizeLimit) {
    return Status::InvalidArgument("[VARIANT_SIZE_LIMIT] Cannot build variant bigger than ",
                                   kVariantSizeLimit, " bytes");
  }
  uint64_t strings = 0;
  for (const std::string& key : keys_) strings += key.size();
  const int offset_size = IntegerSize(std::max<uint64_t>(strings, keys_.size()));
  const uint64_t total = 1 + offset_size + (keys_.size() + 1) * offset_size + strings;
  if (total > static_cast<uint64_t>(kVariantSizeLimit)) {
    return Status::InvalidArgument("[VARIANT_SIZE_LIMIT] Cannot build variant bigger than ",
                                   kVariantSizeLimit, " bytes");
  }
  value->append(value_);
  metadata->reserve(metadata->size() + total);
  metadata->push_back(static_cast<char>(1 | ((offset_size - 1) << 6)));
  AppendUnsigned(metadata, keys_.size(), offset_size);
  uint64_t offset = 0;
  for (const std::string& key : keys_) {
    AppendUnsigned(metadata, offset, offset_size);
    offset += key.size();
  }
  AppendUnsigned(metadata, offset, offset_size);
  for (const std::string& key : keys_) metadata->append(key);
  return Status::OK();
}

// ---------------------------------------------------------------------------
// JSON -> variant, following Jackson's strict parser as Spark configures it.

class JsonVariantParser {
 public:
  JsonVariantParser(std::string_view text, bool allow_duplicate_keys, VariantBuilder* builder,
                    JsonToVariantError* error)
      : text_(text), allow_dup_(allow_duplicate_keys), b_(builder), error_(error) {}

  bool Run() {
    SkipSpace();
    if (pos_ >= text_.size()) return Fail("no JSON value (empty input)");
    const char c = text_[pos_];
    if (!Value(0)) return false;
    // Jackson reads no further after a root value, except that a number or
    // literal must be followed by whitespace / a delimiter.
    if (c == '-' || (c >= '0' && c <= '9')) {
      if (pos_ < text_.size() && !IsSpace(text_[pos_])) {
        return Fail("expected space separating root-level values");
      }
    }
    return true;
  }

 private:
  static bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

  void SkipSpace() {
    while (pos_ < text_.size() && IsSpace(text_[pos_])) ++pos_;
  }

  bool Fail(std::string_view what) {
    error_->kind = JsonToVariantError::Kind::kMalformed;
    error_->message = Status::Concat(what, " at offset ", pos_);
    return false;
  }

  bool Value(int depth) {
    if (pos_ >= text_.size()) return Fail("unexpected end of input");
    const char c = text_[pos_];
    switch (c) {
      case '{': return Object(depth + 1);
      case '[': return Array(depth + 1);
      case '"': {
        ++pos_;
        if (!String(&scratch_)) return false;
        b_->AppendString(scratch_);
        return true;
      }
      case 't': return Literal("true", [this] { b_->AppendBoolean(true); });
      case 'f': return Literal("false", [this] { b_->AppendBoolean(false); });
      case 'n': return Literal("null", [this] { b_->AppendNull(); });
      default:
        if (c == '-' || (c >= '0' && c <= '9')) return Number();
        return Fail("unexpected character");
    }
  }

  template <typename Append>
  bool Literal(std::string_view word, Append append) {
    if (text_.substr(pos_, word.size()) != word) return Fail("unrecognized token");
    pos_ += word.size();
    if (pos_ < text_.size()) {
      // Jackson's _matchToken: a following identifier character makes the
      // token unrecognized ("truex", "null1").
      const unsigned char next = static_cast<unsigned char>(text_[pos_]);
      const bool ident = next >= 0x80 || (next >= '0' && next <= '9') ||
                         (next >= 'a' && next <= 'z') || (next >= 'A' && next <= 'Z') ||
                         next == '_' || next == '$';
      if (ident) return Fail("unrecognized token");
    }
    append();
    return true;
  }

  bool Object(int depth) {
    if (depth > kMaxJsonDepth) return Fail("document nesting depth exceeds the maximum (1000)");
    ++pos_;
    if (stack_.size() < static_cast<size_t>(depth)) stack_.resize(static_cast<size_t>(depth));
    std::vector<VariantBuilder::FieldEntry>& fields = Fields(depth);
    fields.clear();
    const size_t start = b_->position();
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == '}') {
      ++pos_;
      return FinishObject(depth, start);
    }
    while (true) {
      SkipSpace();
      if (pos_ >= text_.size()) return Fail("unexpected end of input in an object");
      if (text_[pos_] != '"') return Fail("expected a double-quoted field name");
      ++pos_;
      if (!String(&scratch_)) return false;
      const uint32_t id = b_->AddKey(scratch_);
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != ':')
        return Fail("expected ':' after a field name");
      ++pos_;
      SkipSpace();
      Fields(depth).push_back(
          VariantBuilder::FieldEntry{id, static_cast<uint32_t>(b_->position() - start)});
      if (!Value(depth)) return false;
      SkipSpace();
      if (pos_ >= text_.size()) return Fail("unexpected end of input in an object");
      if (text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (text_[pos_] == '}') {
        ++pos_;
        return FinishObject(depth, start);
      }
      return Fail("expected ',' or '}' in an object");
    }
  }

  bool FinishObject(int depth, size_t start) {
    Status st = b_->FinishObject(start, &Fields(depth), allow_dup_);
    if (!st.ok()) {
      error_->kind = JsonToVariantError::Kind::kDuplicateKey;
      error_->message = st.message();
      return false;
    }
    return CheckSize();
  }

  bool Array(int depth) {
    if (depth > kMaxJsonDepth) return Fail("document nesting depth exceeds the maximum (1000)");
    ++pos_;
    Offsets(depth).clear();
    const size_t start = b_->position();
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == ']') {
      ++pos_;
      b_->FinishArray(start, Offsets(depth));
      return CheckSize();
    }
    while (true) {
      SkipSpace();
      Offsets(depth).push_back(static_cast<uint32_t>(b_->position() - start));
      if (!Value(depth)) return false;
      SkipSpace();
      if (pos_ >= text_.size()) return Fail("unexpected end of input in an array");
      if (text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (text_[pos_] == ']') {
        ++pos_;
        b_->FinishArray(start, Offsets(depth));
        return CheckSize();
      }
      return Fail("expected ',' or ']' in an array");
    }
  }

  bool CheckSize() {
    if (static_cast<int64_t>(b_->value_size()) > kVariantSizeLimit) {
      error_->kind = JsonToVariantError::Kind::kSizeLimit;
      error_->message = Status::Concat("[VARIANT_SIZE_LIMIT] Cannot build variant bigger than ",
                                       kVariantSizeLimit, " bytes");
      return false;
    }
    return true;
  }

  std::vector<VariantBuilder::FieldEntry>& Fields(int depth) {
    if (stack_.size() < static_cast<size_t>(depth)) stack_.resize(static_cast<size_t>(depth));
    return stack_[static_cast<size_t>(depth) - 1];
  }
  std::vector<uint32_t>& Offsets(int depth) {
    if (offsets_.size() < static_cast<size_t>(depth)) offsets_.resize(static_cast<size_t>(depth));
    return offsets_[static_cast<size_t>(depth) - 1];
  }

  static int Hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  bool Hex4(uint32_t* out) {
    if (text_.size() - pos_ < 4) return Fail("unexpected end of input in a \\u escape");
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      const int h = Hex(text_[pos_ + static_cast<size_t>(i)]);
      if (h < 0) return Fail("expected a hex digit in a \\u escape");
      v = (v << 4) | static_cast<uint32_t>(h);
    }
    pos_ += 4;
    *out = v;
    return true;
  }

  // After the opening quote; leaves pos_ after the closing one.
  bool String(std::string* out) {
    out->clear();
    size_t run = pos_;
    while (true) {
      if (pos_ >= text_.size()) return Fail("unexpected end of input in a string");
      const unsigned char c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"') {
        out->append(text_.substr(run, pos_ - run));
        ++pos_;
        return true;
      }
      if (c < 0x20) return Fail("illegal unquoted control character in a string");
      if (c != '\\') {
        ++pos_;
        continue;
      }
      out->append(text_.substr(run, pos_ - run));
      ++pos_;
      if (pos_ >= text_.size()) return Fail("unexpected end of input in an escape");
      const char e = text_[pos_++];
      switch (e) {
        case '"': out->push_back('"'); break;
        case '\\': out->push_back('\\'); break;
        case '/': out->push_back('/'); break;
        case 'b': out->push_back('\b'); break;
        case 'f': out->push_back('\f'); break;
        case 'n': out->push_back('\n'); break;
        case 'r': out->push_back('\r'); break;
        case 't': out->push_back('\t'); break;
        case 'u': {
          uint32_t cp = 0;
          if (!Hex4(&cp)) return false;
          if (cp >= 0xD800 && cp <= 0xDBFF && text_.size() - pos_ >= 6 && text_[pos_] == '\\' &&
              text_[pos_ + 1] == 'u') {
            const size_t save = pos_;
            pos_ += 2;
            uint32_t low = 0;
            if (!Hex4(&low)) return false;
            if (low >= 0xDC00 && low <= 0xDFFF) {
              AppendUtf8(0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00), out);
              break;
            }
            pos_ = save;
          }
          // Spark 4 validates the text: a lone surrogate is malformed.
          if (cp >= 0xD800 && cp <= 0xDFFF) return Fail("invalid Unicode (a lone surrogate)");
          AppendUtf8(cp, out);
          break;
        }
        default: return Fail("unrecognized character escape");
      }
      run = pos_;
    }
  }

  bool Number() {
    const size_t start = pos_;
    bool negative = false;
    if (text_[pos_] == '-') {
      negative = true;
      ++pos_;
    }
    const size_t int_start = pos_;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
    const size_t int_digits = pos_ - int_start;
    if (int_digits == 0) return Fail("expected a digit after '-'");
    if (int_digits > 1 && text_[int_start] == '0') return Fail("leading zeroes not allowed");
    bool is_float = false;
    bool has_exponent = false;
    if (pos_ < text_.size() && text_[pos_] == '.') {
      is_float = true;
      ++pos_;
      const size_t frac_start = pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
      if (pos_ == frac_start) return Fail("decimal point not followed by a digit");
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      is_float = true;
      has_exponent = true;
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      const size_t exp_start = pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
      if (pos_ == exp_start) return Fail("exponent indicator not followed by a digit");
    }
    const std::string_view number = text_.substr(start, pos_ - start);
    if (number.size() > kMaxNumberLength) return Fail("number longer than 1000 characters");
    if (!is_float && int_digits <= 18) {
      int64_t v = 0;
      for (size_t i = int_start; i < pos_; ++i) v = v * 10 + (text_[i] - '0');
      b_->AppendLong(negative ? -v : v);
      return true;
    }
    if (!is_float && int_digits == 19) {
      // Fits a long unless above 9223372036854775807 (…808 when negative).
      unsigned __int128 v = 0;
      for (size_t i = int_start; i < pos_; ++i) v = v * 10 + static_cast<unsigned>(text_[i] - '0');
      const unsigned __int128 limit =
          static_cast<unsigned __int128>(INT64_MAX) + (negative ? 1 : 0);
      if (v <= limit) {
        b_->AppendLong(negative ? static_cast<int64_t>(-static_cast<__int128>(v))
                                : static_cast<int64_t>(v));
        return true;
      }
    }
    if (!has_exponent) {
      // Spark's tryParseDecimal: digits with an optional point, as a
      // BigDecimal, when precision and scale are at most 38.
      int scale = 0;
      unsigned __int128 unscaled = 0;
      int digits = 0;  // significant digits (precision) so far
      bool fraction = false;
      bool overflow = false;
      for (size_t i = int_start; i < pos_; ++i) {
        const char c = text_[i];
        if (c == '.') {
          fraction = true;
          continue;
        }
        if (fraction) ++scale;
        if (digits > 0 || c != '0') ++digits;
        if (digits > kMaxDecimalPrecision) {
          overflow = true;
          continue;
        }
        unscaled = unscaled * 10 + static_cast<unsigned>(c - '0');
      }
      if (!overflow && scale <= kMaxDecimalPrecision) {
        const __int128 value = static_cast<__int128>(unscaled);
        b_->AppendDecimal(negative ? -value : value, scale);
        return true;
      }
    }
    // Double.parseDouble: correctly rounded; overflow gives Infinity.
    char buf[kMaxNumberLength + 1];
    std::memcpy(buf, number.data(), number.size());
    buf[number.size()] = '\0';
    const double d = std::strtod(buf, nullptr);
    b_->AppendDouble(d);
    return true;
  }

  std::string_view text_;
  size_t pos_ = 0;
  bool allow_dup_;
  VariantBuilder* b_;
  JsonToVariantError* error_;
  std::string scratch_;
  std::vector<std::vector<VariantBuilder::FieldEntry>> stack_;
  std::vector<std::vector<uint32_t>> offsets_;
};

bool JsonToVariant(std::string_view json, bool allow_duplicate_keys, VariantBuilder* builder,
                   JsonToVariantError* error) {
  builder->Reset();
  // Spark hands Jackson a Java string: ill-formed UTF-8 reads as U+FFFD.
  std::string repaired;
  if (!IsValidUtf8(json)) {
    repaired = ReplaceInvalidUtf8(json);
    json = repaired;
  }
  JsonVariantParser parser(json, allow_duplicate_keys, builder, error);
  return parser.Run();
}

// ---------------------------------------------------------------------------
// variant -> JSON

namespace {

void AppendQuotedEscaped(std::string_view s, std::string* out) {
  out->push_back('"');
  if (IsValidUtf8(s)) {
    AppendJsonEscaped(out, s);
  } else {
    AppendJsonEscaped(out, ReplaceInvalidUtf8(s));
  }
  out->push_back('"');
}

void AppendTwo(int v, std::string* out) {
  out->push_back(static_cast<char>('0' + v / 10));
  out->push_back(static_cast<char>('0' + v % 10));
}

// ISO_LOCAL_DATE ' ' ISO_LOCAL_TIME of local micros: the fraction only when
// non-zero, without trailing zeros.
void AppendLocalDateTime(int64_t local, std::string* out) {
  const int32_t days = DaysFromMicros(local);
  const int64_t of_day = local - int64_t{days} * kMicrosPerDay;
  out->append(FormatDate(days));
  out->push_back(' ');
  const int64_t seconds = of_day / kMicrosPerSecond;
  int64_t fraction = of_day % kMicrosPerSecond;
  AppendTwo(static_cast<int>(seconds / 3600), out);
  out->push_back(':');
  AppendTwo(static_cast<int>(seconds / 60 % 60), out);
  out->push_back(':');
  AppendTwo(static_cast<int>(seconds % 60), out);
  if (fraction != 0) {
    char digits[6];
    for (int i = 5; i >= 0; --i) {
      digits[i] = static_cast<char>('0' + fraction % 10);
      fraction /= 10;
    }
    int len = 6;
    while (len > 0 && digits[len - 1] == '0') --len;
    out->push_back('.');
    out->append(digits, static_cast<size_t>(len));
  }
}

void AppendBase64(std::string_view bytes, std::string* out) {
  static const char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t v = (static_cast<uint8_t>(bytes[i]) << 16) |
                       (static_cast<uint8_t>(bytes[i + 1]) << 8) |
                       static_cast<uint8_t>(bytes[i + 2]);
    out->push_back(kAlphabet[(v >> 18) & 63]);
    out->push_back(kAlphabet[(v >> 12) & 63]);
    out->push_back(kAlphabet[(v >> 6) & 63]);
    out->push_back(kAlphabet[v & 63]);
  }
  const size_t rest = bytes.size() - i;
  if (rest == 1) {
    const uint32_t v = static_cast<uint8_t>(bytes[i]) << 16;
    out->push_back(kAlphabet[(v >> 18) & 63]);
    out->push_back(kAlphabet[(v >> 12) & 63]);
    out->append("==");
  } else if (rest == 2) {
    const uint32_t v =
        (static_cast<uint8_t>(bytes[i]) << 16) | (static_cast<uint8_t>(bytes[i + 1]) << 8);
    out->push_back(kAlphabet[(v >> 18) & 63]);
    out->push_back(kAlphabet[(v >> 12) & 63]);
    out->push_back(kAlphabet[(v >> 6) & 63]);
    out->push_back('=');
  }
}

void AppendUuidText(std::string_view b, std::string* out) {
  static const char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out->push_back('-');
    const uint8_t c = static_cast<uint8_t>(b[i]);
    out->push_back(kHex[c >> 4]);
    out->push_back(kHex[c & 15]);
  }
}

bool AppendJsonRec(const VariantMetadata& metadata, const VariantValue& value,
                   const VariantJsonOptions& options, std::string* out, int depth) {
  if (depth > kMaxVariantDepth) return false;
  switch (value.type()) {
    case VariantType::kInvalid: return false;
    case VariantType::kNull: out->append("null"); return true;
    case VariantType::kBoolean: out->append(value.GetBoolean() ? "true" : "false"); return true;
    case VariantType::kLong: out->append(std::to_string(value.GetLong())); return true;
    case VariantType::kDouble: {
      const double d = value.GetDouble();
      // Jackson's writeNumber quotes the non-finite values.
      if (!std::isfinite(d)) {
        out->push_back('"');
        AppendDoubleJava(out, d);
        out->push_back('"');
      } else {
        AppendDoubleJava(out, d);
      }
      return true;
    }
    case VariantType::kFloat: {
      const float f = value.GetFloat();
      if (!std::isfinite(f)) out->push_back('"');
      out->append(FormatFloatJava(f));
      if (!std::isfinite(f)) out->push_back('"');
      return true;
    }
    case VariantType::kDecimal: {
      __int128 unscaled = 0;
      int scale = 0;
      value.GetDecimal(&unscaled, &scale);
      StripTrailingZeros(&unscaled, &scale);
      AppendDecimalPlainText(unscaled, scale, out);
      return true;
    }
    case VariantType::kString: AppendQuotedEscaped(value.GetString(), out); return true;
    case VariantType::kDate:
      out->push_back('"');
      out->append(FormatDate(static_cast<int32_t>(value.GetLong())));
      out->push_back('"');
      return true;
    case VariantType::kTimestamp: {
      const int64_t micros = value.GetLong();
      const int32_t offset =
          options.offset_seconds != nullptr ? options.offset_seconds(options.zone, micros) : 0;
      int64_t local = 0;
      if (__builtin_add_overflow(micros, int64_t{offset} * kMicrosPerSecond, &local)) {
        local = micros;
      }
      out->push_back('"');
      AppendLocalDateTime(local, out);
      const int32_t a = offset < 0 ? -offset : offset;
      out->push_back(offset < 0 ? '-' : '+');
      AppendTwo(a / 3600, out);
      out->push_back(':');
      AppendTwo(a / 60 % 60, out);
      out->push_back('"');
      return true;
    }
    case VariantType::kTimestampNtz:
      out->push_back('"');
      AppendLocalDateTime(value.GetLong(), out);
      out->push_back('"');
      return true;
    case VariantType::kBinary:
      out->push_back('"');
      AppendBase64(value.GetBinary(), out);
      out->push_back('"');
      return true;
    case VariantType::kUuid:
      out->push_back('"');
      AppendUuidText(value.GetUuid(), out);
      out->push_back('"');
      return true;
    case VariantType::kObject: {
      VariantValue::Container c;
      value.GetContainer(&c);
      out->push_back('{');
      for (uint32_t i = 0; i < c.num_elements; ++i) {
        uint32_t id = 0;
        VariantValue child;
        std::string_view key;
        if (!value.ObjectField(c, i, &id, &child) || !metadata.Key(id, &key)) return false;
        if (i > 0) out->push_back(',');
        AppendQuotedEscaped(key, out);
        out->push_back(':');
        if (!AppendJsonRec(metadata, child, options, out, depth + 1)) return false;
      }
      out->push_back('}');
      return true;
    }
    case VariantType::kArray: {
      VariantValue::Container c;
      value.GetContainer(&c);
      out->push_back('[');
      for (uint32_t i = 0; i < c.num_elements; ++i) {
        VariantValue child;
        if (!value.ArrayElement(c, i, &child)) return false;
        if (i > 0) out->push_back(',');
        if (!AppendJsonRec(metadata, child, options, out, depth + 1)) return false;
      }
      out->push_back(']');
      return true;
    }
  }
  return false;
}

}  // namespace

bool AppendVariantJson(const VariantMetadata& metadata, const VariantValue& value,
                       const VariantJsonOptions& options, std::string* out) {
  return AppendJsonRec(metadata, value, options, out, 0);
}

}  // namespace silt::columnar
