#include "silt/base/bits.h"

#include <cstring>

namespace silt {

namespace {

// Set bits of one 64-bit word: per 2-, 4- and 8-bit field sums, then one
// multiply adds the eight byte sums into the top byte.
inline int64_t PopCount64(uint64_t word) {
  word = word - ((word >> 1) & 0x5555555555555555ULL);
  word = (word & 0x3333333333333333ULL) + ((word >> 2) & 0x3333333333333333ULL);
  word = (word + (word >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
  return static_cast<int64_t>((word * 0x0101010101010101ULL) >> 56);
}

}  // namespace

int64_t CountSetBits(const uint8_t* bits, int64_t length) {
  const int64_t whole_bytes = length / 8;
  int64_t count = 0;
  int64_t byte_idx = 0;
  for (; byte_idx + 8 <= whole_bytes; byte_idx += 8) {
    uint64_t word;
    std::memcpy(&word, bits + byte_idx, sizeof(word));
    count += PopCount64(word);
  }
  // The rest, under 64 bits (up to 7 whole bytes and the partial byte), as
  // one word: tail byte k goes to bits 8k..8k+7, so masking off all but the
  // low `tail_bits` drops the bits at or past `length`.
  const int64_t tail_bits = length - byte_idx * 8;
  if (tail_bits > 0) {
    uint64_t word = 0;
    const auto tail_bytes = static_cast<size_t>((tail_bits + 7) / 8);
    const uint8_t* tail = bits + byte_idx;
    for (size_t k = 0; k < tail_bytes; ++k) word |= static_cast<uint64_t>(tail[k]) << (8 * k);
    count += PopCount64(word & ((uint64_t{1} << tail_bits) - 1));
  }
  return count;
}

}  // namespace silt
