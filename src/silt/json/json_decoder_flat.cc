// JsonDecoder's flat fast path (decision 145): a schema of STRING fields
// over a row the single-pass scanner read, appended as the DOM path would
// append it, or handed back to the DOM path; and the embedded objects of a
// field that get_json_object reads (decision 197).
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
  const int chosen_embedded = embedded_field >= 0 ? slots[embedded_field] : -1;
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
  if (embedded_field >= 0) {
    // The row's embedded object is indexed when the field's value is the
    // member the scanner read it from (row: this row's index in the batch).
    const int slot = scanner.embedded_member();
    if (slot >= 0 && slot == chosen_embedded) {
      // A text too long for the index is left to the evaluator's scan.
      embedded_index->AddRow(root_builder->length(), members[slot].text, scanner.embedded());
    }
  }
  root_builder->AppendValid();
  return true;
}

void JsonDecoder::Impl::StartEmbedded() {
  internal::EmbeddedObjects& objects = internal::EmbeddedObjects::ForThread();
  embedded_field = -1;
  for (size_t field_idx = 0; field_idx < field_demands.size(); ++field_idx) {
    // The previous batch's entry goes first, so that its index is this
    // decoder's alone again and can be reused.
    objects.Withdraw(field_demands[field_idx].get());
    if (embedded_field < 0 && field_demands[field_idx]->wanted.load(std::memory_order_relaxed)) {
      embedded_field = static_cast<int>(field_idx);
    }
  }
  scanner.set_embedded_key(embedded_field >= 0 ? field_names[embedded_field] : std::string_view());
  if (embedded_field < 0) return;
  if (embedded_index == nullptr || embedded_index.use_count() > 1) {
    embedded_index = std::make_shared<internal::EmbeddedObjectIndex>();
  }
  embedded_index->Clear();
}

void JsonDecoder::Impl::PublishEmbedded(const columnar::Column& out) {
  internal::EmbeddedObjects& objects = internal::EmbeddedObjects::ForThread();
  for (size_t field_idx = 0; field_idx < field_demands.size(); ++field_idx) {
    objects.Publish(field_demands[field_idx], *out.children[field_idx],
                    static_cast<int>(field_idx) == embedded_field ? embedded_index : nullptr);
  }
}

}  // namespace silt::json
