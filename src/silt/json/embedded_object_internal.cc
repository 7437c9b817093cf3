#include "silt/json/embedded_object_internal.h"

#include <algorithm>
#include <limits>

namespace silt::json::internal {

bool EmbeddedObjectIndex::AddRow(int64_t row, std::string_view text,
                                 const std::vector<FlatMember>& members) {
  constexpr size_t kMaxOffset = std::numeric_limits<uint32_t>::max();
  if (text.size() > kMaxOffset || members_.size() + members.size() > kMaxOffset) return false;
  const char* const base = text.data();
  rows_.push_back({row, static_cast<uint32_t>(members_.size()),
                   static_cast<uint32_t>(members.size()), static_cast<uint32_t>(text.size())});
  for (const FlatMember& member : members) {
    members_.push_back({static_cast<uint32_t>(member.key.data() - base),
                        static_cast<uint32_t>(member.key.size()),
                        static_cast<uint32_t>(member.text.data() - base),
                        static_cast<uint32_t>(member.text.size()), member.int_value,
                        member.double_value, member.kind});
  }
  return true;
}

bool EmbeddedObjectIndex::Reader::Members(int64_t row, std::string_view text,
                                          std::vector<FlatMember>* members) {
  const std::vector<Row>& rows = index_.rows_;
  while (next_ < rows.size() && rows[next_].row < row) ++next_;
  if (next_ == rows.size() || rows[next_].row != row || rows[next_].text_size != text.size()) {
    return false;
  }
  const Row& indexed = rows[next_++];
  members->resize(indexed.count);
  const Member* source = index_.members_.data() + indexed.begin;
  const char* const base = text.data();
  for (FlatMember& member : *members) {
    member.key = std::string_view(base + source->key_offset, source->key_size);
    member.text = std::string_view(base + source->text_offset, source->text_size);
    member.kind = source->kind;
    member.int_value = source->int_value;
    member.double_value = source->double_value;
    ++source;
  }
  return true;
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
