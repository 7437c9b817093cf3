// FindPlainRunEnd: where a run of "plain" string bytes ends, the inner loop
// of FlatObjectScanner (issue #22). A plain byte is printable ASCII but '"'
// and '\\'; a run ends at a quote, a backslash, a control character (below
// 0x20) or a non-ASCII byte (0x80 and above).
//
// Sixteen bytes at a time with SSE2 on x86-64 and NEON on little-endian
// aarch64 (the baseline of each, so there is no run-time dispatch), eight at
// a time in a 64-bit word elsewhere, byte by byte for what is left. It never
// reads outside [begin, end): the last partial block is read as the last 16
// bytes of the text, which start at or after begin, with the bytes before p
// masked off.
//
// simdjson, which is linked, does the same inside its string parser but
// exposes no byte-class search in its public API (decision 181).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#define SILT_PLAIN_RUN_SIMD 1
#elif defined(__aarch64__) && defined(__ARM_NEON) && defined(__BYTE_ORDER__) && \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#include <arm_neon.h>
#define SILT_PLAIN_RUN_SIMD 1
#else
#define SILT_PLAIN_RUN_SIMD 0
#endif

namespace silt::json::internal {

namespace plain_run {

#if SILT_PLAIN_RUN_SIMD
#if defined(__SSE2__)
// Bits of the mask per byte of the block: movemask gives one.
inline constexpr int kBitsPerByte = 1;

// A mask of the special bytes of the 16 at p, byte i at bit i.
inline uint64_t SpecialBits16(const char* p) {
  const __m128i block = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i quote = _mm_cmpeq_epi8(block, _mm_set1_epi8('"'));
  const __m128i backslash = _mm_cmpeq_epi8(block, _mm_set1_epi8('\\'));
  // As signed bytes, both the control characters and the non-ASCII bytes
  // (negative) are below 0x20: one comparison for the two.
  const __m128i low_or_high = _mm_cmplt_epi8(block, _mm_set1_epi8(0x20));
  return static_cast<uint32_t>(
      _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, backslash), low_or_high)));
}
#else
// NEON has no movemask: narrowing each 16-bit lane by 4 bits keeps four
// bits per byte in a 64-bit word.
inline constexpr int kBitsPerByte = 4;

inline uint64_t SpecialBits16(const char* p) {
  const uint8x16_t block = vld1q_u8(reinterpret_cast<const uint8_t*>(p));
  const uint8x16_t quote = vceqq_u8(block, vdupq_n_u8('"'));
  const uint8x16_t backslash = vceqq_u8(block, vdupq_n_u8('\\'));
  // Signed, as above: control characters and non-ASCII bytes are below 0x20.
  const uint8x16_t low_or_high = vcltq_s8(vreinterpretq_s8_u8(block), vdupq_n_s8(0x20));
  const uint8x16_t special = vorrq_u8(vorrq_u8(quote, backslash), low_or_high);
  const uint8x8_t narrowed = vshrn_n_u16(vreinterpretq_u16_u8(special), 4);
  return vget_lane_u64(vreinterpret_u64_u8(narrowed), 0);
}
#endif
#endif

// The portable path: a 64-bit word, the byte at p lowest.
inline uint64_t Load64(const char* p) {
  uint64_t word = 0;
  std::memcpy(&word, p, sizeof(word));
  if constexpr (std::endian::native == std::endian::big) word = __builtin_bswap64(word);
  return word;
}

inline constexpr uint64_t kOnes = 0x0101010101010101ULL;
inline constexpr uint64_t kHighBits = 0x8080808080808080ULL;

// The high bit of each byte equal to `byte` (exact up to the first such
// byte; bits above it may be spurious, so only the lowest set bit counts).
inline uint64_t BytesEqual(uint64_t word, uint8_t byte) {
  const uint64_t diff = word ^ (kOnes * byte);
  return (diff - kOnes) & ~diff & kHighBits;
}

// The high bit of each special byte of `word` (lowest set bit exact).
inline uint64_t SpecialBytes64(uint64_t word) {
  // A byte below 0x20 borrows into its high bit when 0x20 is subtracted; a
  // non-ASCII byte has it already.
  const uint64_t control_or_high = ((word - kOnes * 0x20) | word) & kHighBits;
  return control_or_high | BytesEqual(word, '"') | BytesEqual(word, '\\');
}

inline bool IsPlain(char c) {
  const auto byte = static_cast<unsigned char>(c);
  return byte >= 0x20 && byte < 0x80 && c != '"' && c != '\\';
}

// Eight bytes at a time, then byte by byte, from p to end.
inline const char* FindPlainRunEndPortable(const char* p, const char* end) {
  while (end - p >= 8) {
    const uint64_t special = SpecialBytes64(Load64(p));
    if (special != 0) return p + (std::countr_zero(special) >> 3);
    p += 8;
  }
  while (p != end && IsPlain(*p)) ++p;
  return p;
}

}  // namespace plain_run

// The first byte in [p, end) that is not plain, or end. Reads only bytes
// in [begin, end), where begin <= p <= end.
inline const char* FindPlainRunEnd([[maybe_unused]] const char* begin, const char* p,
                                   const char* end) {
#if SILT_PLAIN_RUN_SIMD
  using plain_run::kBitsPerByte;
  while (end - p >= 16) {
    const uint64_t special = plain_run::SpecialBits16(p);
    if (special != 0) return p + std::countr_zero(special) / kBitsPerByte;
    p += 16;
  }
  if (p == end) return end;
  if (end - begin >= 16) {
    // The last 16 bytes of the text, without the (16 - (end - p)) bytes
    // before p, which were read already.
    const auto before = static_cast<int>(16 - (end - p));
    const uint64_t special = plain_run::SpecialBits16(end - 16) >> (before * kBitsPerByte);
    return special != 0 ? p + std::countr_zero(special) / kBitsPerByte : end;
  }
#endif
  return plain_run::FindPlainRunEndPortable(p, end);
}

}  // namespace silt::json::internal
