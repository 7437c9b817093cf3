// Counting the set bits of a bitmap: validity bitmaps of columns (Arrow
// layout), definition-level bitmaps of Parquet pages, captured-value masks.
// One copy for every module, so each caller gets the fast loop.
//
// Bitmaps are LSB first: bit i is (bits[i / 8] >> (i % 8)) & 1, as in Arrow
// and in Parquet's bit-packed runs.
//
// Thread safety: pure function; reads only the bytes it is given.
#pragma once

#include <cstdint>

namespace silt {

// The number of set bits among the first `length` bits of `bits`. Reads
// exactly ceil(length / 8) bytes; bits at or past `length` in the last byte
// do not count, so the bitmap need not be zero-padded. `bits` needs no
// alignment and may be null when `length` is 0.
// REQUIRES: length >= 0.
//
// Counts 8 bytes at a time with a branch-free (SWAR) popcount: the build
// does not assume the POPCNT instruction, so std::popcount on a 64-bit word
// compiles to a libgcc call, about 3x slower per word.
int64_t CountSetBits(const uint8_t* bits, int64_t length);

}  // namespace silt
