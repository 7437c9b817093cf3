// PLAIN encoding (Encodings.md, "PLAIN = 0") of dense (null-free) values:
// fixed-width numbers little-endian back to back, booleans bit-packed LSB
// first, BYTE_ARRAY as a 4-byte little-endian length and the bytes,
// FIXED_LEN_BYTE_ARRAY as the bytes. Decimals stored as FIXED_LEN_BYTE_ARRAY
// are big-endian two's complement of the column's byte width.
//
// All functions append to `out` and are tight loops (memcpy for fixed
// widths); callers strip nulls before encoding.
//
// Thread safety: stateless functions.
#pragma once

#include <bit>
#include <cstdint>
#include <string>
#include <string_view>

namespace silt::parquet {

static_assert(std::endian::native == std::endian::little,
              "PLAIN encoding via memcpy assumes a little-endian host");

// int32_t, int64_t, float, double.
template <typename T>
void PlainEncode(const T* values, int64_t count, std::string* out) {
  out->append(reinterpret_cast<const char*>(values), static_cast<size_t>(count) * sizeof(T));
}

// Values are 0 or 1, one per byte. Appends ceil(count / 8) bytes.
void PlainEncodeBooleans(const uint8_t* values, int64_t count, std::string* out);

void PlainEncodeByteArrays(const std::string_view* values, int64_t count, std::string* out);

// Writes the low `width` bytes of each value big-endian (1 <= width <= 16).
void PlainEncodeDecimalFlba(const __int128* values, int64_t count, int width, std::string* out);

// One decimal as `width` big-endian bytes (statistics use the same form).
std::string DecimalToBigEndian(__int128 value, int width);

// Reads a big-endian two's complement integer of 1..16 bytes, sign-extended.
// REQUIRES: 1 <= size <= 16.
inline __int128 DecimalFromBigEndian(const uint8_t* bytes, int size) {
  unsigned __int128 u = (bytes[0] & 0x80) ? ~static_cast<unsigned __int128>(0) : 0;
  for (int i = 0; i < size; ++i) u = (u << 8) | bytes[i];
  return static_cast<__int128>(u);
}

}  // namespace silt::parquet
