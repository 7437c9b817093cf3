// Assembly of nested columns (struct, array, map at any depth) from the
// leaf columns and the repetition/definition levels of a Parquet field.
//
// Each leaf arrives as a Column with one row per leaf slot (see
// column_reader.h) plus its level entries. One pass over the levels of a
// node's first leaf yields that node's validity (and, for lists and maps,
// its offsets); children are assembled recursively, then checked to have the
// lengths their parent implies, so corrupt levels give Corruption, never an
// inconsistent column.
//
// Thread safety: stateless functions.
#pragma once

#include <cstdint>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/parquet/parquet_schema.h"

namespace silt::parquet {

struct LeafLevels {
  columnar::ColumnPtr column;  // one row per leaf slot
  const int16_t* def = nullptr;
  const int16_t* rep = nullptr;
  int64_t num_levels = 0;
  // Storage for levels synthesized by the caller (def/rep may point here).
  std::vector<int16_t> owned_def;
  std::vector<int16_t> owned_rep;
};

// Builds the column of `node` (its rows are the slots its level entries
// open). `leaves` is indexed by LevelNode::leaf. Errors: Corruption when
// the levels disagree with each other or with the leaf columns.
Result<columnar::ColumnPtr> AssembleNested(const LevelNode& node,
                                           const std::vector<LeafLevels>& leaves);

}  // namespace silt::parquet
