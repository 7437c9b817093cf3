#include "silt/json/embedded_object_internal.h"

#include <algorithm>

namespace silt::json::internal {

bool EmbeddedObjectIndex::AddRow(int64_t row, std::string_view text,
                                 const std::vector<FlatMember>& members) {
  // FlatMember is trivially copyable: one block copy per row.
  rows_.push_back({row, members_.size(), members.size(), text.size(),
                   reinterpret_cast<uintptr_t>(text.data())});
  members_.insert(members_.end(), members.begin(), members.end());
  return true;
}

const FlatMember* EmbeddedObjectIndex::Reader::Members(int64_t row, std::string_view text,
                                                       size_t* count, uintptr_t* shift) {
  const std::vector<Row>& rows = index_.rows_;
  while (next_ < rows.size() && rows[next_].row < row) ++next_;
  if (next_ == rows.size() || rows[next_].row != row || rows[next_].text_size != text.size()) {
    return nullptr;
  }
  const Row& indexed = rows[next_++];
  *count = indexed.count;
  // Unsigned: wraps when the column's text is below the scanned one.
  *shift = reinterpret_cast<uintptr_t>(text.data()) - indexed.base;
  return index_.members_.data() + indexed.begin;
}

EmbeddedObjects& EmbeddedObjects::ForThread() {
  thread_local EmbeddedObjects objects;
  return objects;
}

void EmbeddedObjects::Publish(const std::shared_ptr<FieldDemand>& demand,
                              const columnar::Column& column,
                              std::shared_ptr<const EmbeddedObjectIndex> index) {
  // Entries of decoders gone (their columns too) are dropped here.
  std::erase_if(entries_, [&demand](const Entry& entry) {
    return entry.demand == demand || entry.data_alive.expired();
  });
  if (column.values == nullptr || column.data == nullptr) return;
  Entry entry;
  entry.demand = demand;
  entry.offsets = column.values.get();
  entry.data = column.data.get();
  entry.offsets_alive = column.values;
  entry.data_alive = column.data;
  entry.length = column.length;
  entry.index = std::move(index);
  entries_.push_back(std::move(entry));
}

void EmbeddedObjects::Withdraw(const FieldDemand* demand) {
  std::erase_if(entries_, [demand](const Entry& entry) { return entry.demand.get() == demand; });
}

std::shared_ptr<const EmbeddedObjectIndex> EmbeddedObjects::Find(const columnar::Column& column) {
  for (Entry& entry : entries_) {
    // Weak references: a buffer freed and another allocated at its address
    // is expired here, so an address never matches another column's data.
    if (column.values.get() != entry.offsets || column.data.get() != entry.data ||
        column.length > entry.length || entry.offsets_alive.expired() ||
        entry.data_alive.expired()) {
      continue;
    }
    if (entry.index == nullptr) entry.demand->wanted.store(true, std::memory_order_relaxed);
    return entry.index;
  }
  return nullptr;
}

}  // namespace silt::json::internal
