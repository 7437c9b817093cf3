#include "silt/parquet/nested_writer.h"

#include <utility>

namespace silt::parquet {

using columnar::Column;
using columnar::ColumnPtr;
using columnar::TypeId;

NestedFieldWriter::NestedFieldWriter(columnar::Field field, std::vector<SchemaElement> elements,
                                     std::shared_ptr<const LevelNode> levels,
                                     std::vector<std::unique_ptr<ColumnWriter>> leaves)
    : field_(std::move(field)),
      elements_(std::move(elements)),
      levels_(std::move(levels)),
      leaves_(std::move(leaves)),
      buffers_(leaves_.size()) {}

Result<std::unique_ptr<NestedFieldWriter>> NestedFieldWriter::Make(const columnar::Field& field,
                                                                   const WriterOptions& options) {
  SILT_ASSIGN_OR_RETURN(std::vector<SchemaElement> elements, ParquetElementsForField(field));
  // The reader's schema conversion yields the levels of exactly the tree
  // written, so writer and reader agree by construction.
  std::vector<SchemaElement> schema;
  SchemaElement root;
  root.name = "schema";
  root.num_children = 1;
  schema.push_back(std::move(root));
  schema.insert(schema.end(), elements.begin(), elements.end());
  SILT_ASSIGN_OR_RETURN(std::vector<ColumnDescriptor> descriptors, BuildColumnDescriptors(schema));
  ColumnDescriptor& d = descriptors[0];
  SILT_RETURN_NOT_OK(d.unsupported);
  if (d.levels == nullptr) {
    return Status::Internal("column '", field.name, "': nested field without a level tree");
  }
  std::vector<std::unique_ptr<ColumnWriter>> leaves;
  for (ColumnDescriptor& leaf : d.leaves) {
    LeafLayout layout;
    layout.path = leaf.path;
    layout.max_definition_level = leaf.max_definition_level;
    layout.max_repetition_level = leaf.max_repetition_level;
    SILT_ASSIGN_OR_RETURN_CTX(
        std::unique_ptr<ColumnWriter> w,
        ColumnWriter::MakeLeaf(leaf.field, leaf.leaf, std::move(layout), options), "column '",
        field.name, "'");
    leaves.push_back(std::move(w));
  }
  return std::unique_ptr<NestedFieldWriter>(
      new NestedFieldWriter(field, std::move(elements), d.levels, std::move(leaves)));
}

void NestedFieldWriter::EmitEmpty(const LevelNode& node, int16_t def, int16_t rep) {
  if (node.leaf >= 0) {
    LeafBuffer& b = buffers_[static_cast<size_t>(node.leaf)];
    b.def.push_back(def);
    b.rep.push_back(rep);
    return;
  }
  for (const LevelNode& child : node.children) EmitEmpty(child, def, rep);
}

void NestedFieldWriter::Emit(const LevelNode& node, const Column& column, int64_t row, int16_t rep,
                             int parent_def) {
  if (node.valid_def > parent_def && column.IsNull(row)) {
    EmitEmpty(node, static_cast<int16_t>(parent_def), rep);
    return;
  }
  if (node.leaf >= 0) {
    LeafBuffer& b = buffers_[static_cast<size_t>(node.leaf)];
    b.def.push_back(static_cast<int16_t>(node.valid_def));
    b.rep.push_back(rep);
    b.indices.push_back(row);
    b.column = &column;
    return;
  }
  switch (column.type->id()) {
    case TypeId::kStruct:
      for (size_t c = 0; c < node.children.size(); ++c) {
        Emit(node.children[c], *column.children[c], row, rep, node.valid_def);
      }
      return;
    case TypeId::kVariant:
      // Written as value, metadata (ParquetElementsForField); the column
      // holds metadata, value.
      Emit(node.children[0], *column.children[1], row, rep, node.valid_def);
      Emit(node.children[1], *column.children[0], row, rep, node.valid_def);
      return;
    case TypeId::kArray:
    case TypeId::kMap: {
      const int32_t* offs = column.offsets();
      const int64_t start = offs[row];
      const int64_t end = offs[row + 1];
      if (start == end) {
        EmitEmpty(node, static_cast<int16_t>(node.valid_def), rep);
        return;
      }
      const int16_t inner_rep = static_cast<int16_t>(node.rep_level + 1);
      const Column& child = *column.children[0];
      for (int64_t k = start; k < end; ++k) {
        const int16_t r = k == start ? rep : inner_rep;
        if (column.type->id() == TypeId::kArray) {
          Emit(node.children[0], child, k, r, node.child_def);
        } else {
          Emit(node.children[0], *child.children[0], k, r, node.child_def);
          Emit(node.children[1], *child.children[1], k, r, node.child_def);
        }
      }
      return;
    }
    default: return;
  }
}

Status NestedFieldWriter::Write(const Column& column, int64_t offset, int64_t length) {
  for (LeafBuffer& b : buffers_) {
    b.def.clear();
    b.rep.clear();
    b.indices.clear();
    b.column = nullptr;
  }
  for (int64_t row = offset; row < offset + length; ++row) {
    null_count_ += column.IsNull(row);
    Emit(*levels_, column, row, 0, 0);
  }
  for (size_t leaf_idx = 0; leaf_idx < leaves_.size(); ++leaf_idx) {
    LeafBuffer& b = buffers_[leaf_idx];
    if (b.def.empty()) continue;
    ColumnPtr taken;
    const Column* values = b.column;
    int64_t values_offset = 0;
    if (!b.indices.empty()) {
      const int64_t first = b.indices.front();
      const int64_t n = static_cast<int64_t>(b.indices.size());
      if (b.indices.back() - first + 1 == n) {
        // Defined values are contiguous rows of the leaf: no copy.
        values_offset = first;
      } else {
        taken = columnar::TakeColumn(*b.column, b.indices);
        values = taken.get();
      }
    }
    SILT_RETURN_NOT_OK(leaves_[leaf_idx]->WriteLevels(values == nullptr ? column : *values,
                                                      values_offset, b.def.data(), b.rep.data(),
                                                      static_cast<int64_t>(b.def.size())));
  }
  return Status::OK();
}

int64_t NestedFieldWriter::buffered_bytes() const {
  int64_t total = 0;
  for (const auto& leaf : leaves_) total += leaf->buffered_bytes();
  return total;
}

ColumnStats NestedFieldWriter::FileStats() const {
  ColumnStats s;
  s.name = field_.name;
  s.null_count = null_count_;
  return s;
}

}  // namespace silt::parquet
