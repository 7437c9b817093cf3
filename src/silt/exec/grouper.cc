#include <xxhash.h>

#include "silt/exec/grouper_internal.h"
#include "silt/exec/value_codec_internal.h"

namespace silt::exec::internal {

size_t GroupKeyHash::operator()(const std::string& key) const {
  return static_cast<size_t>(XXH3_64bits(key.data(), key.size()));
}

void Grouper::Assign(const std::vector<columnar::ColumnPtr>& keys, int64_t rows,
                     std::vector<int32_t>* gids, std::vector<int64_t>* new_group_rows) {
  // The row keys are reused across chunks to keep their capacity; the bytes
  // are KeyCodec::EncodeRows's.
  if (row_keys_.size() < static_cast<size_t>(rows)) row_keys_.resize(static_cast<size_t>(rows));
  for (int64_t i = 0; i < rows; ++i) row_keys_[static_cast<size_t>(i)].clear();
  for (const columnar::ColumnPtr& key : keys) {
    EncodeColumn(*key, /*normalize=*/true, nullptr, rows, row_keys_.data());
  }
  gids->resize(static_cast<size_t>(rows));
  for (int64_t i = 0; i < rows; ++i) {
    const std::string& key = row_keys_[static_cast<size_t>(i)];
    auto it = groups_.find(key);
    if (it == groups_.end()) {
      it = groups_.emplace(key, static_cast<int32_t>(keys_.size())).first;
      keys_.push_back(&it->first);
      new_group_rows->push_back(i);
    }
    (*gids)[static_cast<size_t>(i)] = it->second;
  }
}

void Grouper::Clear() {
  groups_.clear();
  keys_.clear();
}

}  // namespace silt::exec::internal
