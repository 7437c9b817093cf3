#include "silt/parquet/dictionary_encoder.h"

namespace silt::parquet::dict_internal {

uint64_t HashBytes(const char* data, size_t size) {
  // Eight bytes per step through the 64-bit mixer; the length seeds the
  // state so prefixes of one another hash apart.
  uint64_t h = 0x9e3779b97f4a7c15ULL ^ (size * 0xff51afd7ed558ccdULL);
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t w;
    std::memcpy(&w, data + i, 8);
    h = Mix(h ^ w) + 0x632be59bd9b4e019ULL;
  }
  if (i < size) {
    uint64_t w = 0;
    std::memcpy(&w, data + i, size - i);
    h = Mix(h ^ w);
  }
  return Mix(h);
}

}  // namespace silt::parquet::dict_internal
