// Spark's xxhash64 of a value (XxHash64Function, the hash behind Spark's
// xxhash64() and approx_count_distinct): the 64-bit XXH64 of the value's
// bytes as Spark feeds them:
//
//   boolean, byte, short, int, date   the value as a 4-byte int (1/0 for
//                                     booleans, sign-extended), little-endian
//   long, timestamp, timestamp_ntz    8 bytes little-endian
//   float                             4 bytes of its IEEE bits
//   double                            8 bytes of its IEEE bits
//   decimal(p <= 18, s)               the unscaled value as an 8-byte long
//   decimal(p > 18, s)                the unscaled value's minimal big-endian
//                                     two's complement (Java's
//                                     BigInteger.toByteArray)
//   string, binary                    the bytes
//
// -0.0 hashes as 0.0 and every NaN as the canonical quiet NaN (Spark's hash
// and floatToIntBits), so approx_count_distinct's float normalization is
// built in.
//
// Thread safety: stateless functions.
#pragma once

#include <cstdint>

#include "silt/columnar/column.h"

namespace silt::exec {

// The types SparkXxHash64 hashes.
bool SparkHashableType(const columnar::DataType& type);

// out[i] = Spark's xxhash64 of row i of `column` with `seed`, for each
// non-null row i in [0, rows); null rows' entries are left alone.
// REQUIRES: SparkHashableType(*column.type).
void SparkXxHash64(const columnar::Column& column, uint64_t seed, int64_t rows, uint64_t* out);

}  // namespace silt::exec
