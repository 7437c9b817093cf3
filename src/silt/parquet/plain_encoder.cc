#include "silt/parquet/plain_encoder.h"

#include <cstring>

namespace silt::parquet {

void PlainEncodeBooleans(const uint8_t* values, int64_t count, std::string* out) {
  const size_t start = out->size();
  out->resize(start + static_cast<size_t>((count + 7) / 8));
  uint8_t* dst = reinterpret_cast<uint8_t*>(out->data()) + start;
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    dst[i / 8] = static_cast<uint8_t>(
        values[i] | (values[i + 1] << 1) | (values[i + 2] << 2) | (values[i + 3] << 3) |
        (values[i + 4] << 4) | (values[i + 5] << 5) | (values[i + 6] << 6) | (values[i + 7] << 7));
  }
  if (i < count) {
    uint8_t b = 0;
    for (int j = 0; i + j < count; ++j) b |= static_cast<uint8_t>(values[i + j] << j);
    dst[i / 8] = b;
  }
}

void PlainEncodeByteArrays(const std::string_view* values, int64_t count, std::string* out) {
  size_t total = 0;
  for (int64_t i = 0; i < count; ++i) total += 4 + values[i].size();
  // Appended value by value into reserved capacity: growing the string by
  // resize() would first zero every byte that is then overwritten
  // (std::string has no uninitialised resize before C++23), which cost
  // more than the appends' capacity checks.
  out->reserve(out->size() + total);
  for (int64_t i = 0; i < count; ++i) {
    const uint32_t len = static_cast<uint32_t>(values[i].size());
    char prefix[4];
    std::memcpy(prefix, &len, 4);
    out->append(prefix, 4);
    out->append(values[i].data(), values[i].size());
  }
}

void PlainEncodeDecimalFlba(const __int128* values, int64_t count, int width, std::string* out) {
  size_t pos = out->size();
  out->resize(pos + static_cast<size_t>(count) * static_cast<size_t>(width));
  uint8_t* dst = reinterpret_cast<uint8_t*>(out->data()) + pos;
  for (int64_t i = 0; i < count; ++i) {
    unsigned __int128 u = static_cast<unsigned __int128>(values[i]);
    for (int b = width - 1; b >= 0; --b) {
      dst[b] = static_cast<uint8_t>(u & 0xFF);
      u >>= 8;
    }
    dst += width;
  }
}

std::string DecimalToBigEndian(__int128 value, int width) {
  std::string out;
  PlainEncodeDecimalFlba(&value, 1, width, &out);
  return out;
}

}  // namespace silt::parquet
