// Building variants (variant.h): VariantBuilder, which writes values and
// their containers (object fields in key order) in the Variant binary
// encoding, and the metadata dictionary of their keys.
#include <algorithm>
#include <cstring>

#include "silt/columnar/variant.h"
#include "silt/columnar/variant_encoding_internal.h"

namespace silt::columnar {

namespace {

constexpr int kMaxShortStringSize = 63;

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

}  // namespace

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

}  // namespace silt::columnar
