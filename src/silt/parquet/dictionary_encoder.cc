#include "silt/parquet/dictionary_encoder.h"

namespace silt::parquet::dict_internal {

namespace {

uint64_t Load64(const char* p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}

uint64_t Load32(const char* p) {
  uint32_t w;
  std::memcpy(&w, p, 4);
  return w;
}

// The 128-bit product of a and b, its halves folded together (the step of
// wyhash and its kin: one multiplication mixes sixteen bytes).
uint64_t MulFold(uint64_t a, uint64_t b) {
  const unsigned __int128 product = static_cast<unsigned __int128>(a) * b;
  return static_cast<uint64_t>(product) ^ static_cast<uint64_t>(product >> 64);
}

constexpr uint64_t kSeed0 = 0xa0761d6478bd642fULL;
constexpr uint64_t kSeed1 = 0xe7037ed1a0b428dbULL;
constexpr uint64_t kSeed2 = 0x8ebc6af09c88c6e3ULL;

}  // namespace

uint64_t HashBytes(const char* data, size_t size) {
  // Sixteen bytes per multiplication; the tail (0..16 bytes) is read as two
  // possibly overlapping words, never past the end, so no byte-wise copy.
  // Only probing depends on the hash (indices follow arrival order), so its
  // choice leaves the written bytes unchanged. The length seeds the state
  // so prefixes of one another hash apart.
  uint64_t h = kSeed0 ^ (size * kSeed1);
  size_t pos = 0;
  for (; pos + 16 < size; pos += 16) {
    h = MulFold(Load64(data + pos) ^ kSeed1, Load64(data + pos + 8) ^ h);
  }
  const size_t rest = size - pos;  // 0..16
  uint64_t a = 0;
  uint64_t b = 0;
  if (rest > 8) {
    a = Load64(data + pos);
    b = Load64(data + size - 8);
  } else if (rest >= 4) {
    a = Load32(data + pos);
    b = Load32(data + size - 4);
  } else if (rest > 0) {
    const auto byte = [&](size_t at) {
      return static_cast<uint64_t>(static_cast<uint8_t>(data[at]));
    };
    a = (byte(pos) << 16) | (byte(pos + rest / 2) << 8) | byte(size - 1);
  }
  // The folded product mixes every input bit into the low bits the table
  // indexes by; no final mixer needed.
  return MulFold(a ^ kSeed2, b ^ h);
}

}  // namespace silt::parquet::dict_internal
