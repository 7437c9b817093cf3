// Split-block bloom filters as Parquet defines them (BloomFilter.md): a
// bitset of 256-bit blocks (eight 32-bit words); a value's 64-bit xxHash
// (XXH64, seed 0) picks a block with its upper 32 bits and sets one bit in
// each word from its lower 32 bits and eight salt constants.
//
// What is hashed is the value's PLAIN encoding without a length prefix:
// INT32/FLOAT 4 little-endian bytes, INT64/DOUBLE 8, INT96 12, BYTE_ARRAY and
// FIXED_LEN_BYTE_ARRAY their bytes. BOOLEAN columns get no filter.
//
// On disk a filter is a thrift BloomFilterHeader (numBytes, algorithm BLOCK,
// hash XXHASH, compression UNCOMPRESSED) followed by numBytes of bitset;
// ColumnMetaData.bloom_filter_offset points at the header.
//
// Thread safety: one writer per thread; a parsed filter is immutable.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "silt/base/result.h"

namespace silt::parquet {

class SplitBlockBloomFilter {
 public:
  static constexpr int64_t kBytesPerBlock = 32;
  static constexpr int64_t kMinBytes = 32;
  static constexpr int64_t kMaxBytes = 128LL * 1024 * 1024;

  // Bitset bytes for `ndv` distinct values at false-positive probability
  // `fpp` (0 < fpp < 1): the spec's formula, rounded up to a power of two
  // within [kMinBytes, kMaxBytes].
  static int64_t OptimalBytes(int64_t ndv, double fpp);

  // An empty filter of `num_bytes` (a power of two within the bounds).
  explicit SplitBlockBloomFilter(int64_t num_bytes);

  static uint64_t Hash(std::string_view plain_bytes);
  static uint64_t HashInt32(int32_t v);
  static uint64_t HashInt64(int64_t v);
  static uint64_t HashFloat(float v);
  static uint64_t HashDouble(double v);

  void Insert(uint64_t hash);
  // False when the value with this hash is certainly absent.
  bool MightContain(uint64_t hash) const;

  int64_t num_bytes() const { return static_cast<int64_t>(words_.size()) * 4; }

  // Appends the header and bitset to `out`.
  void Serialize(std::string* out) const;

  // Parses a serialized filter from `data` (header + bitset; extra bytes
  // after the bitset are ignored). `*consumed`, when given, receives the
  // header's size. Errors: Corruption for a malformed header or a bitset
  // outside the bounds or the data; NotSupported for other algorithms,
  // hashes or compressions.
  static Result<SplitBlockBloomFilter> Parse(std::string_view data);
  // Parses only the header: the bitset's size and the header's length.
  static Status ParseHeader(std::string_view data, int64_t* num_bytes, int64_t* header_size);

 private:
  std::vector<uint32_t> words_;
};

}  // namespace silt::parquet
