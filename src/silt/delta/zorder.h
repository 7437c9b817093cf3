// Z-order clustering for OPTIMIZE ZORDER BY: rows are sorted by a Morton
// code built from the named columns, so rows close in every one of those
// columns land in the same data files and per-file min/max statistics skip
// well on any of them.
//
// As delta-spark does (range_partition_id + interleave_bits), each column is
// first normalized to its rank range: the rows' values are sorted and each
// row gets floor(rank * 2^bits / rows), where equal values share the rank of
// their first occurrence and nulls rank first. Normalizing by rank rather
// than by value keeps skewed columns (timestamps, ids) from collapsing into a
// few codes. The normalized values are then interleaved bit by bit, most
// significant bits first, first column first.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/column.h"

namespace silt::delta {

// Bits given to each of `num_columns` columns so that the interleaved code
// fits 64 bits (at most 32 per column).
int ZOrderBitsPerColumn(int num_columns);

// Interleaves the low `bits_per_value` bits of each value, most significant
// bit first and values[0] first within each bit position: for values
// {0b10, 0b01} and 2 bits the code is 0b1001.
// REQUIRES: values.size() * bits_per_value <= 64.
uint64_t InterleaveBits(std::span<const uint32_t> values, int bits_per_value);

// The rank-normalized value of each row of `column` in [0, 2^bits).
// Errors: NotSupported for nested columns (struct, array, map).
Result<std::vector<uint32_t>> RankNormalize(const columnar::Column& column, int bits);

// The row order that sorts `batch` by the Z-order code of `columns` (ties in
// input order). Errors: InvalidArgument naming a column that is not in the
// batch; NotSupported for nested columns.
Result<std::vector<int64_t>> ZOrderPermutation(const columnar::RecordBatch& batch,
                                               const std::vector<std::string>& columns);

}  // namespace silt::delta
