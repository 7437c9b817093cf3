// Simple column predicates that storage layers can test against metadata
// without evaluating expressions: Parquet row-group statistics, the page
// index and bloom filters; Delta partition values and file statistics.
//
// A Conjunction is the AND of its predicates. Users of it prune
// conservatively: a row group, page or file may be skipped only when no row in
// it can satisfy the conjunction; everything not skipped is still filtered by
// the full expression. Predicates are produced from bound expressions by the
// query layer (only `column op literal` shapes; anything else is left out of
// the conjunction, which only makes pruning weaker, never wrong).
//
// Thread safety: plain values; share freely.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "silt/columnar/types.h"

namespace silt::columnar {

enum class PredicateOp : uint8_t {
  kEq,
  kNotEq,
  kLt,
  kLtEq,
  kGt,
  kGtEq,
  kIn,         // values holds the candidates (none of them null)
  kIsNull,     // values empty
  kIsNotNull,  // values empty
};

// A non-null literal, encoded as the column's physical value (see types.h):
// boolean, byte, short, int, long, date (days) and timestamps (micros) in
// `i64`; float and double in `f64`; string and binary bytes in `str`;
// decimal as the unscaled value in `i128` at the column type's scale.
struct PredicateValue {
  int64_t i64 = 0;
  double f64 = 0;
  __int128 i128 = 0;
  std::string str;
};

struct ColumnPredicate {
  // A top-level column, or a dotted path to a field reached through structs
  // ("payload.sensor_id"); matched case-insensitively.
  std::string column;
  // The column's type; `values` are encoded for it.
  TypePtr type;
  PredicateOp op = PredicateOp::kEq;
  std::vector<PredicateValue> values;
};

using Conjunction = std::vector<ColumnPredicate>;

}  // namespace silt::columnar
