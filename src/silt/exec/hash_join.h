// JoinHashTable: the build side of an equi-join held in memory (a broadcast
// hash join: the small side is hashed once, every batch of the large side
// probes it). Keys compare as Spark's join keys do: a row with a NULL key
// matches nothing, NaN equals NaN and -0.0 equals 0.0 (Spark normalizes
// floating join keys), strings and binaries compare by bytes.
//
// Probe writes row indices, not rows, so the caller gathers each side's
// columns once per batch (columnar::TakeColumn) instead of row by row.
//
// Thread safety: immutable after Build; Probe may run concurrently.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/exec/key_codec.h"

namespace silt::exec {

enum class JoinType {
  kInner,      // probe rows with at least one match, once per match
  kLeftOuter,  // kInner, plus each probe row without a match once
  kLeftSemi,   // each probe row with a match, once
  kLeftAnti,   // each probe row without a match, once
};

// The pairs a probe found, in probe-row order (matches of one probe row in
// build-row order). build_rows[i] == kNoMatch for an unmatched probe row of
// a left outer join; semi and anti joins fill only probe_rows.
struct JoinMatches {
  static constexpr int64_t kNoMatch = -1;
  std::vector<int64_t> probe_rows;
  std::vector<int64_t> build_rows;
};

class JoinHashTable {
 public:
  // Hashes `rows` rows of `keys` (one column per key, all of `rows` rows).
  // Errors: NotSupported naming a key type KeyCodec cannot encode.
  static Result<JoinHashTable> Build(const std::vector<columnar::ColumnPtr>& keys, int64_t rows);

  // Appends the matches of `rows` probe rows to `out`. REQUIRES: `keys`
  // has the build keys' types, in the same order.
  void Probe(const std::vector<columnar::ColumnPtr>& keys, int64_t rows, JoinType type,
             JoinMatches* out) const;

  int64_t num_build_rows() const { return num_build_rows_; }

 private:
  explicit JoinHashTable(KeyCodec codec) : codec_(std::move(codec)) {}

  KeyCodec codec_;
  int64_t num_build_rows_ = 0;
  // Encoded key -> the first build row with it; next_[row] chains the rest
  // in build order (-1 ends a chain).
  std::unordered_map<std::string, int64_t> first_;
  std::vector<int64_t> next_;
};

// Per row of `keys`, whether any key is NULL (such a row joins nothing).
std::vector<bool> RowsWithNullKey(const std::vector<columnar::ColumnPtr>& keys, int64_t rows);

}  // namespace silt::exec
