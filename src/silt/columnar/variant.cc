// Reading variants (variant.h): the metadata dictionary, values and their
// containers, checked against the bytes; and the decimal and key-order
// helpers the builder and the printer share.
#include "silt/columnar/variant.h"

#include <algorithm>
#include <cstring>

#include "silt/columnar/variant_encoding_internal.h"

namespace silt::columnar {

namespace {

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

}  // namespace silt::columnar
