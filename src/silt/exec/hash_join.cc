#include "silt/exec/hash_join.h"

namespace silt::exec {

std::vector<bool> RowsWithNullKey(const std::vector<columnar::ColumnPtr>& keys, int64_t rows) {
  std::vector<bool> out(static_cast<size_t>(rows), false);
  for (const columnar::ColumnPtr& key : keys) {
    if (key->null_count == 0) continue;
    for (int64_t row = 0; row < rows; ++row) {
      if (key->IsNull(row)) out[static_cast<size_t>(row)] = true;
    }
  }
  return out;
}

Result<JoinHashTable> JoinHashTable::Build(const std::vector<columnar::ColumnPtr>& keys,
                                           int64_t rows) {
  std::vector<columnar::TypePtr> types;
  for (const columnar::ColumnPtr& key : keys) types.push_back(key->type);
  SILT_ASSIGN_OR_RETURN(KeyCodec codec, KeyCodec::Make(std::move(types)));
  JoinHashTable table(std::move(codec));
  table.num_build_rows_ = rows;
  table.next_.assign(static_cast<size_t>(rows), -1);
  std::vector<std::string> encoded;
  encoded.reserve(static_cast<size_t>(rows));
  table.codec_.EncodeRows(keys, rows, &encoded);
  const std::vector<bool> null_key = RowsWithNullKey(keys, rows);
  table.first_.reserve(static_cast<size_t>(rows));
  // Walk backwards so each row is pushed in front of the later ones: the
  // chains come out in build order.
  for (int64_t row = rows - 1; row >= 0; --row) {
    const auto idx = static_cast<size_t>(row);
    if (null_key[idx]) continue;
    auto [it, inserted] = table.first_.try_emplace(std::move(encoded[idx]), row);
    if (!inserted) {
      table.next_[idx] = it->second;
      it->second = row;
    }
  }
  return table;
}

void JoinHashTable::Probe(const std::vector<columnar::ColumnPtr>& keys, int64_t rows, JoinType type,
                          JoinMatches* out) const {
  std::vector<std::string> encoded;
  encoded.reserve(static_cast<size_t>(rows));
  codec_.EncodeRows(keys, rows, &encoded);
  const std::vector<bool> null_key = RowsWithNullKey(keys, rows);
  for (int64_t row = 0; row < rows; ++row) {
    const auto idx = static_cast<size_t>(row);
    int64_t match = -1;
    if (!null_key[idx]) {
      auto it = first_.find(encoded[idx]);
      if (it != first_.end()) match = it->second;
    }
    if (type == JoinType::kLeftSemi || type == JoinType::kLeftAnti) {
      if ((match >= 0) == (type == JoinType::kLeftSemi)) out->probe_rows.push_back(row);
      continue;
    }
    if (match < 0) {
      if (type == JoinType::kLeftOuter) {
        out->probe_rows.push_back(row);
        out->build_rows.push_back(JoinMatches::kNoMatch);
      }
      continue;
    }
    for (; match >= 0; match = next_[static_cast<size_t>(match)]) {
      out->probe_rows.push_back(row);
      out->build_rows.push_back(match);
    }
  }
}

}  // namespace silt::exec
