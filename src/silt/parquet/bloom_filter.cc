#include "silt/parquet/bloom_filter.h"

#include <xxhash.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "silt/parquet/thrift_compact.h"

namespace silt::parquet {

namespace {

constexpr uint32_t kSalt[8] = {0x47b6137bU, 0x44974d91U, 0x8824ad5bU, 0xa2b7289dU,
                               0x705495c7U, 0x2df1424bU, 0x9efc4947U, 0x5c6bfb31U};

using thrift::CType;

// Reads a union whose only accepted member is field 1 holding an empty
// struct; returns false when another member is set.
bool ReadUnitUnion(thrift::CompactReader* r, CType t) {
  if (t != CType::kStruct) {
    r->Fail("BloomFilterHeader union is not a structure");
    return false;
  }
  bool found = false;
  r->StructBegin();
  int16_t id;
  CType ft;
  while (r->NextField(&id, &ft)) {
    if (id == 1) found = true;
    r->Skip(ft);
  }
  r->StructEnd();
  return found;
}

}  // namespace

int64_t SplitBlockBloomFilter::OptimalBytes(int64_t ndv, double fpp) {
  if (ndv < 1) ndv = 1;
  if (!(fpp > 0 && fpp < 1)) fpp = 0.01;
  const double bits = -8.0 * static_cast<double>(ndv) / std::log(1.0 - std::pow(fpp, 1.0 / 8.0));
  if (!(bits < static_cast<double>(kMaxBytes) * 8)) return kMaxBytes;
  int64_t bytes = static_cast<int64_t>(std::ceil(bits / 8));
  bytes = static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(std::max<int64_t>(bytes, 1))));
  return std::clamp(bytes, kMinBytes, kMaxBytes);
}

SplitBlockBloomFilter::SplitBlockBloomFilter(int64_t num_bytes)
    : words_(static_cast<size_t>(num_bytes / 4), 0) {}

uint64_t SplitBlockBloomFilter::Hash(std::string_view plain_bytes) {
  return XXH64(plain_bytes.data(), plain_bytes.size(), 0);
}
uint64_t SplitBlockBloomFilter::HashInt32(int32_t v) { return XXH64(&v, sizeof(v), 0); }
uint64_t SplitBlockBloomFilter::HashInt64(int64_t v) { return XXH64(&v, sizeof(v), 0); }
uint64_t SplitBlockBloomFilter::HashFloat(float v) { return XXH64(&v, sizeof(v), 0); }
uint64_t SplitBlockBloomFilter::HashDouble(double v) { return XXH64(&v, sizeof(v), 0); }

void SplitBlockBloomFilter::Insert(uint64_t hash) {
  const uint64_t num_blocks = words_.size() / 8;
  const uint64_t block = ((hash >> 32) * num_blocks) >> 32;
  const auto key = static_cast<uint32_t>(hash);
  uint32_t* words = words_.data() + block * 8;
  for (int i = 0; i < 8; ++i) words[i] |= 1U << ((key * kSalt[i]) >> 27);
}

bool SplitBlockBloomFilter::MightContain(uint64_t hash) const {
  const uint64_t num_blocks = words_.size() / 8;
  if (num_blocks == 0) return true;
  const uint64_t block = ((hash >> 32) * num_blocks) >> 32;
  const auto key = static_cast<uint32_t>(hash);
  const uint32_t* words = words_.data() + block * 8;
  for (int i = 0; i < 8; ++i) {
    if ((words[i] & (1U << ((key * kSalt[i]) >> 27))) == 0) return false;
  }
  return true;
}

void SplitBlockBloomFilter::Serialize(std::string* out) const {
  thrift::CompactWriter w(out);
  w.StructBegin();
  w.FieldI32(1, static_cast<int32_t>(num_bytes()));
  for (int16_t id = 2; id <= 4; ++id) {
    w.FieldStructBegin(id);  // the union
    w.FieldStructBegin(1);   // BLOCK / XXHASH / UNCOMPRESSED: empty structs
    w.StructEnd();
    w.StructEnd();
  }
  w.StructEnd();
  // The bitset: little-endian words (the hosts silt builds for are).
  static_assert(std::endian::native == std::endian::little);
  out->append(reinterpret_cast<const char*>(words_.data()), words_.size() * 4);
}

Status SplitBlockBloomFilter::ParseHeader(std::string_view data, int64_t* num_bytes,
                                          int64_t* header_size) {
  thrift::CompactReader r(reinterpret_cast<const uint8_t*>(data.data()),
                          static_cast<int64_t>(data.size()));
  int32_t bytes = -1;
  bool block = false, xxhash = false, uncompressed = false;
  r.StructBegin();
  int16_t id;
  CType t;
  while (r.NextField(&id, &t)) {
    switch (id) {
      case 1: bytes = r.ReadI32(t); break;
      case 2: block = ReadUnitUnion(&r, t); break;
      case 3: xxhash = ReadUnitUnion(&r, t); break;
      case 4: uncompressed = ReadUnitUnion(&r, t); break;
      default: r.Skip(t); break;
    }
  }
  r.StructEnd();
  if (!r.ok()) return Status::Corruption("bloom filter header: ", r.error());
  if (!block || !xxhash || !uncompressed) {
    return Status::NotSupported(
        "bloom filter: only the split-block algorithm with xxHash, uncompressed, is supported");
  }
  if (bytes < kMinBytes || bytes > kMaxBytes || bytes % kBytesPerBlock != 0) {
    return Status::Corruption("bloom filter header: bitset of ", bytes,
                              " bytes (must be a multiple of 32 within [32, 128 MiB])");
  }
  *num_bytes = bytes;
  *header_size = r.position();
  return Status::OK();
}

Result<SplitBlockBloomFilter> SplitBlockBloomFilter::Parse(std::string_view data) {
  int64_t bytes = 0, header = 0;
  SILT_RETURN_NOT_OK(ParseHeader(data, &bytes, &header));
  if (bytes > static_cast<int64_t>(data.size()) - header) {
    return Status::Corruption("bloom filter: bitset of ", bytes, " bytes runs past the ",
                              data.size() - static_cast<size_t>(header), " bytes available");
  }
  SplitBlockBloomFilter filter(bytes);
  std::memcpy(filter.words_.data(), data.data() + header, static_cast<size_t>(bytes));
  return filter;
}

}  // namespace silt::parquet
