#include "silt/parquet/nested_reader.h"

#include <limits>
#include <memory>

namespace silt::parquet {

using columnar::Column;
using columnar::ColumnPtr;
using columnar::TypeId;

namespace {

// Validity of the node's slots; null when every slot is valid.
struct Slots {
  int64_t count = 0;
  int64_t null_count = 0;
  std::shared_ptr<Buffer> validity;
};

Slots CountSlots(const LevelNode& node, const LeafLevels& l) {
  Slots s;
  const int16_t rep_level = static_cast<int16_t>(node.rep_level);
  const int16_t exist_def = static_cast<int16_t>(node.exist_def);
  const int16_t valid_def = static_cast<int16_t>(node.valid_def);
  for (int64_t i = 0; i < l.num_levels; ++i) {
    s.count += (l.rep[i] <= rep_level) & (l.def[i] >= exist_def);
  }
  if (valid_def <= exist_def) return s;
  s.validity = std::make_shared<Buffer>();
  s.validity->Resize((s.count + 7) / 8);
  uint8_t* bits = s.validity->mutable_data();
  int64_t slot = 0;
  for (int64_t i = 0; i < l.num_levels; ++i) {
    if (l.rep[i] <= rep_level && l.def[i] >= exist_def) {
      if (l.def[i] >= valid_def) {
        columnar::SetBit(bits, slot);
      } else {
        ++s.null_count;
      }
      ++slot;
    }
  }
  if (s.null_count == 0) s.validity.reset();
  return s;
}

Status CheckLength(const Column& child, int64_t expected, const char* what) {
  if (child.length != expected) {
    return Status::Corruption("nested levels disagree: ", what, " has ", child.length,
                              " rows, its parent implies ", expected);
  }
  return Status::OK();
}

}  // namespace

Result<ColumnPtr> AssembleNested(const LevelNode& node, const std::vector<LeafLevels>& leaves) {
  if (node.leaf >= 0) return leaves[static_cast<size_t>(node.leaf)].column;
  const LeafLevels& l = leaves[static_cast<size_t>(node.first_leaf)];
  Slots slots = CountSlots(node, l);
  auto column = std::make_shared<Column>();
  column->type = node.type;
  column->length = slots.count;
  column->null_count = slots.null_count;
  column->validity = std::move(slots.validity);
  switch (node.type->id()) {
    case TypeId::kStruct:
      for (const LevelNode& child : node.children) {
        SILT_ASSIGN_OR_RETURN(ColumnPtr c, AssembleNested(child, leaves));
        SILT_RETURN_NOT_OK(CheckLength(*c, slots.count, "a struct field"));
        column->children.push_back(std::move(c));
      }
      return ColumnPtr(std::move(column));
    case TypeId::kArray:
    case TypeId::kMap: {
      auto offsets = std::make_shared<Buffer>();
      offsets->Resize((slots.count + 1) * static_cast<int64_t>(sizeof(int32_t)));
      int32_t* offs = offsets->mutable_data_as<int32_t>();
      const int16_t rep_level = static_cast<int16_t>(node.rep_level);
      const int16_t exist_def = static_cast<int16_t>(node.exist_def);
      const int16_t child_def = static_cast<int16_t>(node.child_def);
      int64_t slot = 0;
      int64_t count = 0;
      for (int64_t i = 0; i < l.num_levels; ++i) {
        const int16_t r = l.rep[i];
        const int16_t d = l.def[i];
        if (r <= rep_level && d >= exist_def) offs[slot++] = static_cast<int32_t>(count);
        if (r <= rep_level + 1 && d >= child_def) {
          if (slot == 0) {
            return Status::Corruption("nested levels disagree: an element before its list");
          }
          ++count;
        }
      }
      if (count > std::numeric_limits<int32_t>::max()) {
        return Status::NotSupported("more than 2^31 - 1 list elements in one row group");
      }
      offs[slots.count] = static_cast<int32_t>(count);
      column->values = std::move(offsets);
      if (node.type->id() == TypeId::kArray) {
        SILT_ASSIGN_OR_RETURN(ColumnPtr element, AssembleNested(node.children[0], leaves));
        SILT_RETURN_NOT_OK(CheckLength(*element, count, "a list's elements"));
        column->children.push_back(std::move(element));
      } else {
        auto entries = std::make_shared<Column>();
        entries->type = node.type->map_entries_type();
        entries->length = count;
        for (const LevelNode& child : node.children) {
          SILT_ASSIGN_OR_RETURN(ColumnPtr c, AssembleNested(child, leaves));
          SILT_RETURN_NOT_OK(CheckLength(*c, count, "a map's keys or values"));
          entries->children.push_back(std::move(c));
        }
        column->children.push_back(std::move(entries));
      }
      return ColumnPtr(std::move(column));
    }
    default:
      return Status::Internal("nested Parquet node of type ", node.type->ToDdl(),
                              " without a leaf");
  }
}

}  // namespace silt::parquet
