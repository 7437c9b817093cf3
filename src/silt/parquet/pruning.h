// Judging column predicates (columnar/predicate.h) against what a Parquet
// file records about a leaf column: column-chunk statistics, the column
// index's per-page bounds and null counts, and split-block bloom filters.
//
// Every answer is conservative: "may match" unless the recorded facts prove
// that no row can satisfy the predicate. Bounds are decoded by the leaf's
// physical and logical type with Parquet's orderings: signed integers,
// unsigned for UINT_* / INT(_, false), IEEE doubles (NaN-free bounds;
// since Spark sorts NaN above every number and Parquet's bounds leave NaN
// out, a float column is never pruned for >, >= or !=), unsigned bytes for
// strings and binary (truncated bounds stay valid bounds), two's-complement
// big-endian for FIXED_LEN_BYTE_ARRAY/BYTE_ARRAY decimals, and timestamps in
// MILLIS/MICROS/NANOS scaled to micros (rounded outwards). INT96 and
// unsigned 64-bit columns, and predicates whose type does not match the
// leaf's (another type family, or a decimal of another scale), are never
// pruned. Only the new min_value/max_value statistics are trusted, plus the
// legacy min/max for types whose legacy order was already right (signed
// integers, floats, booleans).
//
// Thread safety: stateless functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "silt/columnar/predicate.h"
#include "silt/parquet/parquet_metadata.h"
#include "silt/parquet/parquet_schema.h"

namespace silt::parquet {

// What is known about the values of a column chunk or one of its pages.
struct LeafFacts {
  const std::string* min = nullptr;  // encoded like Statistics.min_value; null = unknown
  const std::string* max = nullptr;
  std::optional<int64_t> null_count;
  int64_t num_values = -1;  // level entries (= rows for unrepeated leaves); -1 = unknown
  bool all_null = false;    // the column index's null_pages entry
};

// The facts of a column chunk's statistics (honouring the ordering rules
// above). `stats` may be null.
LeafFacts ChunkFacts(const ColumnDescriptor& leaf, const Statistics* stats, int64_t num_values);

// False only when no row described by `facts` can satisfy `pred` (a
// predicate on the unrepeated leaf `leaf`).
bool MayMatch(const ColumnDescriptor& leaf, const columnar::ColumnPredicate& pred,
              const LeafFacts& facts);

// The bloom-filter hash of `value` for `leaf` (the xxHash of its plain
// encoding); nullopt when the filter cannot answer for it (types it does
// not cover, values with several encodings such as -0.0/0.0 or NaN, or a
// predicate type that does not match the leaf's).
std::optional<uint64_t> BloomHashFor(const ColumnDescriptor& leaf,
                                     const columnar::ColumnPredicate& pred,
                                     const columnar::PredicateValue& value);

}  // namespace silt::parquet
