// JsonDecoder's flat fast path (decision 145): a schema of STRING fields
// over a row the single-pass scanner read, appended as the DOM path would
// append it, or handed back to the DOM path.
#include <algorithm>

#include "silt/json/json_decoder_internal.h"

namespace silt::json {

using columnar::ColumnBuilder;
using internal::FieldLookup;

bool JsonDecoder::Impl::DecodeFlat() {
  // Raw pointers: the appends below store bytes, which would otherwise make
  // the compiler reload every vector's data after each one.
  const internal::FlatMember* const members = scanner.members().data();
  const size_t num_members = scanner.members().size();
  int* const slots = flat_member.data();
  const FieldLookup& lookup = *root->lookup;
  // flat_member is all -1 between rows: the loop below resets what it used.
  for (size_t member_idx = 0; member_idx < num_members; ++member_idx) {
    const internal::FlatMember& member = members[member_idx];
    const int field_idx = lookup.Find(member.key, member_idx);
    if (field_idx < 0) continue;
    // Other values are re-printed as text, and a repeated field has Spark's
    // occurrence rules: both left to the DOM path.
    int& slot = slots[field_idx];
    if ((member.kind != internal::FlatKind::kString && member.kind != internal::FlatKind::kNull) ||
        slot >= 0) {
      std::fill(flat_member.begin(), flat_member.end(), -1);
      return false;
    }
    slot = static_cast<int>(member_idx);
  }
  row_lone_surrogates = false;
  markers = false;
  ColumnBuilder* const* const builders = flat_builders.data();
  const size_t num_fields = flat_builders.size();
  for (size_t field_idx = 0; field_idx < num_fields; ++field_idx) {
    ColumnBuilder* builder = builders[field_idx];
    const int slot = slots[field_idx];
    slots[field_idx] = -1;
    if (slot < 0 || members[slot].kind == internal::FlatKind::kNull) {
      builder->AppendNull();
    } else {
      builder->AppendString(members[slot].text);
    }
  }
  root_builder->AppendValid();
  return true;
}

}  // namespace silt::json
