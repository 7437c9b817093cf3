#include "silt/delta/deletion_vector.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "silt/delta/partition_utils.h"

namespace silt::delta {

namespace {

constexpr std::string_view kZ85Alphabet =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";
constexpr uint32_t kRoaringArrayMagic = 1681511377;
constexpr uint32_t kSerialCookieNoRuns = 12346;
constexpr uint32_t kSerialCookie = 12347;
constexpr int64_t kNoOffsetThreshold = 4;
constexpr int64_t kMaxArrayContainer = 4096;

// Little-endian reads over untrusted bytes.
class ByteReader {
 public:
  explicit ByteReader(std::string_view bytes) : bytes_(bytes) {}
  bool Has(size_t n) const { return bytes_.size() - pos_ >= n; }
  template <typename T>
  bool Read(T* out) {
    if (!Has(sizeof(T))) return false;
    std::memcpy(out, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }
  bool Skip(size_t n) {
    if (!Has(n)) return false;
    pos_ += n;
    return true;
  }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
};

// One 32-bit roaring bitmap (portable format) whose values get `high` as
// their upper 32 bits.
Status ParseRoaring32(ByteReader* r, uint64_t high, std::vector<uint64_t>* out) {
  uint32_t cookie = 0;
  if (!r->Read(&cookie)) return Status::Corruption("truncated roaring bitmap header");
  int64_t num_containers = 0;
  std::vector<uint8_t> run_flags;
  bool has_runs = (cookie & 0xFFFF) == kSerialCookie;
  if (has_runs) {
    num_containers = static_cast<int64_t>(cookie >> 16) + 1;
    run_flags.resize(static_cast<size_t>((num_containers + 7) / 8));
    for (uint8_t& flag : run_flags) {
      if (!r->Read(&flag)) return Status::Corruption("truncated roaring run flags");
    }
  } else if (cookie == kSerialCookieNoRuns) {
    uint32_t n = 0;
    if (!r->Read(&n)) return Status::Corruption("truncated roaring container count");
    num_containers = n;
  } else {
    return Status::Corruption("unknown roaring bitmap cookie ", cookie);
  }
  if (!r->Has(static_cast<size_t>(num_containers) * 4)) {
    return Status::Corruption("truncated roaring container headers");
  }
  std::vector<std::pair<uint16_t, int64_t>> headers;  // key, cardinality
  headers.reserve(static_cast<size_t>(num_containers));
  for (int64_t idx = 0; idx < num_containers; ++idx) {
    uint16_t key = 0;
    uint16_t card_minus_one = 0;
    r->Read(&key);
    r->Read(&card_minus_one);
    headers.emplace_back(key, static_cast<int64_t>(card_minus_one) + 1);
  }
  if (!has_runs || num_containers >= kNoOffsetThreshold) {
    if (!r->Skip(static_cast<size_t>(num_containers) * 4)) {
      return Status::Corruption("truncated roaring offsets");
    }
  }
  for (int64_t idx = 0; idx < num_containers; ++idx) {
    const uint64_t base = (high << 32) | (static_cast<uint64_t>(headers[idx].first) << 16);
    const int64_t cardinality = headers[idx].second;
    bool is_run = has_runs && ((run_flags[static_cast<size_t>(idx / 8)] >> (idx % 8)) & 1);
    if (is_run) {
      uint16_t num_runs = 0;
      if (!r->Read(&num_runs)) return Status::Corruption("truncated roaring run container");
      for (uint16_t run = 0; run < num_runs; ++run) {
        uint16_t start = 0;
        uint16_t length_minus_one = 0;
        if (!r->Read(&start) || !r->Read(&length_minus_one)) {
          return Status::Corruption("truncated roaring run");
        }
        for (uint32_t v = start; v <= static_cast<uint32_t>(start) + length_minus_one; ++v) {
          out->push_back(base | v);
        }
      }
    } else if (cardinality <= kMaxArrayContainer) {
      for (int64_t i = 0; i < cardinality; ++i) {
        uint16_t v = 0;
        if (!r->Read(&v)) return Status::Corruption("truncated roaring array container");
        out->push_back(base | v);
      }
    } else {
      for (uint32_t word_idx = 0; word_idx < 1024; ++word_idx) {
        uint64_t word = 0;
        if (!r->Read(&word)) return Status::Corruption("truncated roaring bitmap container");
        while (word != 0) {
          int bit = __builtin_ctzll(word);
          out->push_back(base | (word_idx * 64 + static_cast<uint32_t>(bit)));
          word &= word - 1;
        }
      }
    }
  }
  return Status::OK();
}

std::string UuidText(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    auto b = static_cast<uint8_t>(bytes[i]);
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

}  // namespace

Result<std::string> DecodeZ85(std::string_view text) {
  if (text.size() % 5 != 0) {
    return Status::Corruption("Z85 text of length ", static_cast<int64_t>(text.size()),
                              " is not a multiple of 5");
  }
  std::array<int8_t, 256> index;
  index.fill(-1);
  for (size_t i = 0; i < kZ85Alphabet.size(); ++i) {
    index[static_cast<uint8_t>(kZ85Alphabet[i])] = static_cast<int8_t>(i);
  }
  std::string out;
  out.reserve(text.size() / 5 * 4);
  for (size_t pos = 0; pos < text.size(); pos += 5) {
    uint64_t value = 0;
    for (size_t i = 0; i < 5; ++i) {
      int8_t digit = index[static_cast<uint8_t>(text[pos + i])];
      if (digit < 0) return Status::Corruption("invalid Z85 character at offset ", pos + i);
      value = value * 85 + static_cast<uint64_t>(digit);
    }
    if (value > 0xFFFFFFFFull) return Status::Corruption("Z85 group out of range");
    for (int shift = 24; shift >= 0; shift -= 8) {
      out.push_back(static_cast<char>((value >> shift) & 0xFF));
    }
  }
  return out;
}

Result<std::vector<uint64_t>> ParseRoaringBitmapArray(std::string_view bytes) {
  ByteReader r(bytes);
  uint32_t magic = 0;
  if (!r.Read(&magic) || magic != kRoaringArrayMagic) {
    return Status::Corruption("deletion vector does not start with the RoaringBitmapArray magic");
  }
  uint64_t num_bitmaps = 0;
  if (!r.Read(&num_bitmaps)) return Status::Corruption("truncated RoaringBitmapArray");
  std::vector<uint64_t> rows;
  for (uint64_t idx = 0; idx < num_bitmaps; ++idx) {
    uint32_t key = 0;
    if (!r.Read(&key)) return Status::Corruption("truncated RoaringBitmapArray bitmap key");
    SILT_RETURN_NOT_OK(ParseRoaring32(&r, key, &rows));
  }
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

Result<std::string> DeletionVectorFilePath(const std::string& table_path,
                                           const DeletionVectorDescriptor& dv) {
  if (dv.storage_type == "u") {
    const std::string& encoded = dv.path_or_inline_dv;
    if (encoded.size() < 20) {
      return Status::Corruption("deletion vector id '", encoded, "' is shorter than 20 characters");
    }
    std::string prefix = encoded.substr(0, encoded.size() - 20);
    SILT_ASSIGN_OR_RETURN_CTX(std::string uuid, DecodeZ85(encoded.substr(encoded.size() - 20)),
                              "deletion vector id '", encoded, "'");
    std::string name = "deletion_vector_" + UuidText(uuid) + ".bin";
    return prefix.empty() ? fs::JoinPath(table_path, name)
                          : fs::JoinPath(fs::JoinPath(table_path, prefix), name);
  }
  if (dv.storage_type == "p") return ResolveDataFilePath(table_path, dv.path_or_inline_dv);
  return Status::NotSupported("deletion vector storage type '", dv.storage_type, "' has no file");
}

Result<std::vector<uint64_t>> LoadDeletionVector(fs::FileSystem* fs, const std::string& table_path,
                                                 const DeletionVectorDescriptor& dv) {
  if (dv.storage_type == "i") {
    SILT_ASSIGN_OR_RETURN_CTX(std::string bytes, DecodeZ85(dv.path_or_inline_dv),
                              "inline deletion vector");
    if (dv.size_in_bytes < 0 || dv.size_in_bytes > static_cast<int64_t>(bytes.size())) {
      return Status::Corruption("inline deletion vector is shorter than its sizeInBytes ",
                                dv.size_in_bytes);
    }
    bytes.resize(static_cast<size_t>(dv.size_in_bytes));
    SILT_ASSIGN_OR_RETURN_CTX(auto rows, ParseRoaringBitmapArray(bytes), "inline deletion vector");
    return rows;
  }
  SILT_ASSIGN_OR_RETURN(std::string file, DeletionVectorFilePath(table_path, dv));
  SILT_ASSIGN_OR_RETURN(auto input, fs->OpenForRead(file));
  // At `offset`: the size as a 4-byte big-endian integer, then the bitmap.
  const int64_t offset = dv.offset.value_or(1);
  SILT_ASSIGN_OR_RETURN_CTX(std::string header, input->ReadAt(offset, 4), "deletion vector ", file);
  if (header.size() != 4) return Status::Corruption("deletion vector ", file, " is truncated");
  const auto* h = reinterpret_cast<const uint8_t*>(header.data());
  int64_t size = (static_cast<int64_t>(h[0]) << 24) | (h[1] << 16) | (h[2] << 8) | h[3];
  if (size != dv.size_in_bytes) {
    return Status::Corruption("deletion vector ", file, " at offset ", offset, " holds ", size,
                              " bytes, the log says ", dv.size_in_bytes);
  }
  SILT_ASSIGN_OR_RETURN_CTX(std::string bytes, input->ReadAt(offset + 4, size), "deletion vector ",
                            file);
  if (static_cast<int64_t>(bytes.size()) != size) {
    return Status::Corruption("deletion vector ", file, " is truncated");
  }
  SILT_ASSIGN_OR_RETURN_CTX(auto rows, ParseRoaringBitmapArray(bytes), "deletion vector ", file,
                            " at offset ", offset);
  return rows;
}

}  // namespace silt::delta
