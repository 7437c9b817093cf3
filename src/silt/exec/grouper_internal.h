// Grouper: maps rows to dense group ids through their KeyCodec encoding,
// numbering new groups in order of first appearance. The grouping half of
// HashAggregator and StreamingAggregator.
//
// Thread safety: one grouper per thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "silt/columnar/column.h"
#include "silt/exec/key_codec.h"

namespace silt::exec::internal {

// Hashes group keys with XXH3: std::hash<std::string> made grouping 100k
// groups of ~20-byte keys about 25% slower (commit message of this change).
struct GroupKeyHash {
  size_t operator()(const std::string& key) const;
};

class Grouper {
 public:
  explicit Grouper(KeyCodec codec) : codec_(std::move(codec)) {}

  // Sets gids[0..rows) to the group of each row and appends the first row of
  // every group the chunk creates to `new_group_rows`.
  // REQUIRES: `keys` match codec().types() and have >= `rows` rows.
  void Assign(const std::vector<columnar::ColumnPtr>& keys, int64_t rows,
              std::vector<int32_t>* gids, std::vector<int64_t>* new_group_rows);

  size_t num_groups() const { return keys_.size(); }
  // Valid until Clear.
  std::string_view key(size_t g) const { return *keys_[g]; }
  const KeyCodec& codec() const { return codec_; }
  void Clear();

 private:
  KeyCodec codec_;
  std::unordered_map<std::string, int32_t, GroupKeyHash> groups_;
  // Group id -> its key (map nodes do not move).
  std::vector<const std::string*> keys_;
  std::vector<std::string> row_keys_;
};

}  // namespace silt::exec::internal
