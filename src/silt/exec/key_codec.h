// KeyCodec: rows of group-key columns <-> byte strings, for hash grouping
// (HashAggregator, StreamingAggregator) and as the key of streaming
// aggregation state. Keys that Spark groups together (nulls with nulls, NaN
// with NaN, -0.0 with 0.0) encode to equal bytes and different keys to
// different bytes. The encoding is persisted in checkpoints: it is specified
// in docs/format/aggregate-state.md and changes only with a new format.
//
// Supported key types: boolean, byte, short, int, long, float, double,
// decimal, string, binary, date, timestamp, timestamp_ntz and structs of
// those (a window column is struct<start: timestamp, end: timestamp>).
//
// Thread safety: immutable after Make; share freely.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/column.h"

namespace silt::exec {

class KeyCodec {
 public:
  // Errors: NotSupported naming the first key type the encoding lacks.
  static Result<KeyCodec> Make(std::vector<columnar::TypePtr> key_types);

  // Appends one encoded key per row to `out`, one loop per column.
  // REQUIRES: `keys` has one column per type, of that type, with >= `rows` rows.
  void EncodeRows(const std::vector<columnar::ColumnPtr>& keys, int64_t rows,
                  std::vector<std::string>* out) const;

  // The key columns of `encoded`, one row per string, in order (float keys
  // come back normalized). Errors: Corruption when a string is truncated,
  // has bytes left over or holds an invalid tag.
  Result<std::vector<columnar::ColumnPtr>> Decode(
      const std::vector<std::string_view>& encoded) const;

  const std::vector<columnar::TypePtr>& types() const { return types_; }

 private:
  explicit KeyCodec(std::vector<columnar::TypePtr> types) : types_(std::move(types)) {}
  std::vector<columnar::TypePtr> types_;
};

}  // namespace silt::exec
