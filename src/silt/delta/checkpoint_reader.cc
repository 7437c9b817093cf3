#include "silt/delta/checkpoint_reader.h"

#include <simdjson.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string_view>

#include "silt/base/json_writer.h"
#include "silt/parquet/compression.h"
#include "silt/parquet/page_reader.h"
#include "silt/parquet/parquet_metadata.h"
#include "silt/parquet/rle_decoder.h"

namespace silt::delta {

namespace {

using parquet::ConvertedType;
using parquet::Encoding;
using parquet::PageType;
using parquet::PhysicalType;
using parquet::Repetition;
using parquet::SchemaElement;

// The action columns a checkpoint may hold that snapshot reconstruction uses.
bool IsActionColumn(std::string_view name) {
  return name == "add" || name == "remove" || name == "metaData" || name == "protocol" ||
         name == "txn" || name == "domainMetadata" || name == "sidecar" ||
         name == "checkpointMetadata";
}

// The fields of add and remove that snapshot reconstruction uses (ParseAdd
// and ParseRemove in actions.cc); the others (stats_parsed,
// partitionValues_parsed, ...) are not read.
bool IsReadFileActionField(std::string_view action, std::string_view name) {
  if (action == "add") {
    return name == "path" || name == "partitionValues" || name == "size" ||
           name == "modificationTime" || name == "dataChange" || name == "stats" ||
           name == "tags" || name == "deletionVector" || name == "baseRowId" ||
           name == "defaultRowCommitVersion" || name == "clusteringProvider";
  }
  if (action == "remove") {
    return name == "path" || name == "deletionTimestamp" || name == "dataChange" ||
           name == "extendedFileMetadata" || name == "partitionValues" || name == "size" ||
           name == "deletionVector" || name == "baseRowId" || name == "defaultRowCommitVersion";
  }
  return true;
}

bool IsReadablePhysicalType(PhysicalType type) {
  return type == PhysicalType::kBoolean || type == PhysicalType::kInt32 ||
         type == PhysicalType::kInt64 || type == PhysicalType::kByteArray;
}

// One node of the Parquet schema tree.
struct Node {
  std::string name;
  const SchemaElement* element = nullptr;
  std::vector<int> children;  // indices into the node list
  int parent = -1;
  // Definition / repetition level of a value that reaches this node.
  int def_level = 0;
  int rep_level = 0;
  bool is_leaf = false;
  int column_index = -1;  // leaves: index of the column chunk in a row group
  bool selected = false;  // the node (and all of its leaves) is read
  int peek_leaf = -1;     // a selected leaf below (or at) this node, by leaf slot
  bool is_map = false;
  bool is_list = false;
};

// One selected leaf column chunk of the current row group, read and decoded
// one page at a time (memory stays at about one page per leaf, whatever the
// number of rows): the levels and values of the current page, with a cursor.
struct LeafData {
  PhysicalType type = PhysicalType::kInt64;
  int max_def = 0;
  int max_rep = 0;
  int64_t num_values = 0;  // level entries in the chunk (column metadata)
  int64_t values_left = 0;
  // The chunk's pages, read from the file one at a time; it owns the
  // buffers the views below point into.
  std::unique_ptr<parquet::PageReader> pages;
  // Dictionary values; strings point into the reader's dictionary page.
  std::vector<std::string_view> dictionary_strings;
  std::vector<int64_t> dictionary_ints;
  // The current page, decoded as the cursor reaches it: levels in batches,
  // values one defined entry at a time.
  int64_t page_levels_left = 0;  // level entries of the page not decoded yet
  parquet::RleDecoder rep_decoder;
  parquet::RleDecoder def_decoder;
  // The current batch of levels; `rep` stays empty when max_rep is 0.
  std::vector<uint8_t> rep;
  std::vector<uint8_t> def;
  size_t pos = 0;  // next level entry of the batch
  Encoding encoding = Encoding::kPlain;
  std::string_view values;            // PLAIN: the values not read yet
  int64_t bit_pos = 0;                // PLAIN booleans: the next bit of `values`
  parquet::RleDecoder value_decoder;  // dictionary indices, RLE booleans
  std::vector<uint32_t> value_batch;  // decoded by value_decoder, not read yet
  size_t value_batch_pos = 0;
};

// A MAP<string, string> field (partitionValues, tags) of a file action.
struct StringMapLayout {
  int map = -1;      // node index; -1 when the file has no such field
  int entries = -1;  // node index of the repeated key_value group
  int key = -1;      // leaf slots
  int value = -1;
};

// Where the fields of the add or remove column are, for assembling rows
// straight into AddFile / RemoveFile (no JSON in between). Leaf slots, -1
// for fields the file does not have. `direct` is false when a field has a
// shape delta-spark does not write; the column then goes through the JSON
// assembly and ParseCommit, which reports what is wrong with it.
struct FileActionLayout {
  bool direct = false;
  int path = -1;
  int size = -1;
  int modification_time = -1;
  int deletion_timestamp = -1;
  int data_change = -1;
  int extended_file_metadata = -1;
  int stats = -1;
  int base_row_id = -1;
  int default_row_commit_version = -1;
  int clustering_provider = -1;
  StringMapLayout partition_values;
  StringMapLayout tags;
  int dv = -1;  // node index of the deletionVector struct
  int dv_storage_type = -1;
  int dv_path = -1;
  int dv_offset = -1;
  int dv_size = -1;
  int dv_cardinality = -1;
  int dv_max_row_index = -1;
};

class CheckpointFile {
 public:
  CheckpointFile(fs::FileSystem* fs, std::string path) : fs_(fs), path_(std::move(path)) {}

  Result<CommitActions> Read() {
    SILT_ASSIGN_OR_RETURN(file_, fs_->OpenForRead(path_));
    SILT_ASSIGN_OR_RETURN(int64_t size, file_->Size());
    file_size_ = size;
    if (size < 12) return Corrupt("is too small to be a Parquet file");
    SILT_ASSIGN_OR_RETURN(std::string trailer, file_->ReadAt(size - 8, 8));
    if (trailer.substr(4) != parquet::kParquetMagic) {
      return Corrupt("does not end in the Parquet magic PAR1");
    }
    uint32_t footer_len = 0;
    std::memcpy(&footer_len, trailer.data(), 4);
    if (static_cast<int64_t>(footer_len) > size - 12) return Corrupt("has a truncated footer");
    SILT_ASSIGN_OR_RETURN(std::string footer, file_->ReadAt(size - 8 - footer_len, footer_len));
    SILT_ASSIGN_OR_RETURN_CTX(metadata_, parquet::ParseFileMetaData(footer), "checkpoint ", path_);
    if (metadata_.encrypted) return Corrupt("is encrypted");
    SILT_RETURN_NOT_OK(BuildTree());
    if (add_layout_.direct && metadata_.num_rows > 0) {
      adds_.reserve(static_cast<size_t>(metadata_.num_rows));
    }
    std::string text;  // JSON lines of the actions other than direct adds/removes
    for (size_t rg = 0; rg < metadata_.row_groups.size(); ++rg) {
      SILT_RETURN_NOT_OK(ReadRowGroup(static_cast<int>(rg), &text));
    }
    leaves_.clear();
    SILT_ASSIGN_OR_RETURN(CommitActions out, ParseCommit(text, path_));
    if (add_layout_.direct) out.adds = std::move(adds_);
    if (remove_layout_.direct) out.removes = std::move(removes_);
    return out;
  }

 private:
  template <typename... Args>
  Status Corrupt(Args&&... args) const {
    return Status::Corruption("Delta checkpoint ", path_, " ", std::forward<Args>(args)...);
  }

  // Flattened schema -> tree, with levels, leaf column indices and the
  // selection of what to read.
  Status BuildTree() {
    const auto& schema = metadata_.schema;
    if (schema.empty()) return Corrupt("has an empty Parquet schema");
    nodes_.clear();
    nodes_.push_back(Node{});
    nodes_[0].name = schema[0].name;
    nodes_[0].element = &schema[0];
    size_t next = 1;
    int column_index = 0;
    SILT_RETURN_NOT_OK(BuildChildren(0, schema[0].num_children.value_or(0), &next, &column_index));
    for (int child : std::vector<int>(nodes_[0].children)) {
      if (!IsActionColumn(nodes_[child].name) || !Select(child, "")) continue;
      if (nodes_[child].name == "add") {
        add_index_ = child;
        add_layout_ = LayoutOf(child);
      } else if (nodes_[child].name == "remove") {
        remove_index_ = child;
        remove_layout_ = LayoutOf(child);
      }
    }
    return Status::OK();
  }

  Status BuildChildren(int parent, int num_children, size_t* next, int* column_index) {
    const auto& schema = metadata_.schema;
    for (int i = 0; i < num_children; ++i) {
      if (*next >= schema.size()) return Corrupt("has a malformed Parquet schema tree");
      const SchemaElement& element = schema[*next];
      ++*next;
      Node node;
      node.name = element.name;
      node.element = &element;
      node.parent = parent;
      node.def_level = nodes_[parent].def_level;
      node.rep_level = nodes_[parent].rep_level;
      Repetition repetition = element.repetition_type.value_or(Repetition::kRequired);
      if (repetition != Repetition::kRequired) ++node.def_level;
      if (repetition == Repetition::kRepeated) ++node.rep_level;
      int children = element.num_children.value_or(0);
      node.is_leaf = children == 0;
      if (node.is_leaf) {
        if (!element.type) return Corrupt("has a leaf without a type (", element.name, ")");
        node.column_index = (*column_index)++;
      }
      bool map =
          element.converted_type == ConvertedType::kMap ||
          element.converted_type == ConvertedType::kMapKeyValue ||
          (element.logical_type && element.logical_type->kind == parquet::LogicalType::Kind::kMap);
      bool list =
          element.converted_type == ConvertedType::kList ||
          (element.logical_type && element.logical_type->kind == parquet::LogicalType::Kind::kList);
      node.is_map = map && children == 1;
      node.is_list = list && children == 1;
      int index = static_cast<int>(nodes_.size());
      nodes_.push_back(std::move(node));
      nodes_[parent].children.push_back(index);
      if (children > 0) SILT_RETURN_NOT_OK(BuildChildren(index, children, next, column_index));
    }
    return Status::OK();
  }

  // Marks `index` selected when every leaf below it can be decoded; returns
  // whether it was. Unreadable or unused struct fields are left out (readers
  // then see them as absent).
  bool Select(int index, std::string_view parent_name) {
    Node& node = nodes_[index];
    if (!IsReadFileActionField(parent_name, node.name)) return false;
    if (node.is_leaf) {
      if (!IsReadablePhysicalType(*node.element->type)) return false;
      node.selected = true;
      node.peek_leaf = LeafSlot(index);
      return true;
    }
    bool is_struct =
        !node.is_map && !node.is_list && node.element->repetition_type != Repetition::kRepeated;
    bool any = false;
    bool all = true;
    std::string name = node.name;
    for (int child : std::vector<int>(node.children)) {
      bool ok = Select(child, name);
      any = any || ok;
      all = all && ok;
    }
    // A struct may drop fields; a map or list needs its whole element.
    bool selected = is_struct ? any : all;
    if (!selected) {
      Unselect(index);
      return false;
    }
    Node& again = nodes_[index];
    again.selected = true;
    for (int child : again.children) {
      if (nodes_[child].selected) {
        again.peek_leaf = nodes_[child].peek_leaf;
        break;
      }
    }
    return true;
  }

  void Unselect(int index) {
    nodes_[index].selected = false;
    for (int child : nodes_[index].children) Unselect(child);
  }

  int LeafSlot(int node_index) {
    leaf_nodes_.push_back(node_index);
    return static_cast<int>(leaf_nodes_.size()) - 1;
  }

  // ---- direct assembly of add and remove rows ----

  // A selected, non-repeated leaf of physical type `type` (INT32 counts as
  // INT64): its slot in *slot.
  bool LeafOf(int index, PhysicalType type, int* slot) const {
    const Node& node = nodes_[index];
    if (!node.is_leaf || !node.selected || node.element->repetition_type == Repetition::kRepeated) {
      return false;
    }
    PhysicalType actual = *node.element->type;
    if (actual == PhysicalType::kInt32) actual = PhysicalType::kInt64;
    if (actual != type) return false;
    *slot = node.peek_leaf;
    return true;
  }

  bool StringMapOf(int index, StringMapLayout* out) const {
    const Node& node = nodes_[index];
    if (!node.is_map || node.children.size() != 1) return false;
    const Node& entries = nodes_[node.children[0]];
    if (entries.element->repetition_type != Repetition::kRepeated || entries.children.size() != 2) {
      return false;
    }
    out->map = index;
    out->entries = node.children[0];
    return LeafOf(entries.children[0], PhysicalType::kByteArray, &out->key) &&
           LeafOf(entries.children[1], PhysicalType::kByteArray, &out->value);
  }

  bool DeletionVectorOf(int index, FileActionLayout* out) const {
    const Node& node = nodes_[index];
    if (node.is_leaf || node.is_map || node.is_list ||
        node.element->repetition_type == Repetition::kRepeated) {
      return false;
    }
    out->dv = index;
    for (int child : node.children) {
      const Node& field = nodes_[child];
      if (!field.selected) continue;
      bool ok = false;
      if (field.name == "storageType") {
        ok = LeafOf(child, PhysicalType::kByteArray, &out->dv_storage_type);
      } else if (field.name == "pathOrInlineDv") {
        ok = LeafOf(child, PhysicalType::kByteArray, &out->dv_path);
      } else if (field.name == "offset") {
        ok = LeafOf(child, PhysicalType::kInt64, &out->dv_offset);
      } else if (field.name == "sizeInBytes") {
        ok = LeafOf(child, PhysicalType::kInt64, &out->dv_size);
      } else if (field.name == "cardinality") {
        ok = LeafOf(child, PhysicalType::kInt64, &out->dv_cardinality);
      } else if (field.name == "maxRowIndex") {
        ok = LeafOf(child, PhysicalType::kInt64, &out->dv_max_row_index);
      }
      if (!ok) return false;
    }
    return true;
  }

  FileActionLayout LayoutOf(int index) const {
    FileActionLayout layout;
    const Node& action = nodes_[index];
    if (action.is_leaf || action.is_map || action.is_list ||
        action.element->repetition_type == Repetition::kRepeated) {
      return layout;
    }
    for (int child : action.children) {
      const Node& field = nodes_[child];
      if (!field.selected) continue;
      const std::string& name = field.name;
      bool ok = false;
      if (name == "path") {
        ok = LeafOf(child, PhysicalType::kByteArray, &layout.path);
      } else if (name == "stats") {
        ok = LeafOf(child, PhysicalType::kByteArray, &layout.stats);
      } else if (name == "size") {
        ok = LeafOf(child, PhysicalType::kInt64, &layout.size);
      } else if (name == "modificationTime") {
        ok = LeafOf(child, PhysicalType::kInt64, &layout.modification_time);
      } else if (name == "deletionTimestamp") {
        ok = LeafOf(child, PhysicalType::kInt64, &layout.deletion_timestamp);
      } else if (name == "dataChange") {
        ok = LeafOf(child, PhysicalType::kBoolean, &layout.data_change);
      } else if (name == "extendedFileMetadata") {
        ok = LeafOf(child, PhysicalType::kBoolean, &layout.extended_file_metadata);
      } else if (name == "partitionValues") {
        ok = StringMapOf(child, &layout.partition_values);
      } else if (name == "tags") {
        ok = StringMapOf(child, &layout.tags);
      } else if (name == "deletionVector") {
        ok = DeletionVectorOf(child, &layout);
      } else if (name == "baseRowId") {
        ok = LeafOf(child, PhysicalType::kInt64, &layout.base_row_id);
      } else if (name == "defaultRowCommitVersion") {
        ok = LeafOf(child, PhysicalType::kInt64, &layout.default_row_commit_version);
      } else if (name == "clusteringProvider") {
        ok = LeafOf(child, PhysicalType::kByteArray, &layout.clustering_provider);
      }
      if (!ok) return FileActionLayout{};
    }
    layout.direct = true;
    return layout;
  }

  template <typename... Args>
  Status RowError(int rg, int64_t row, Args&&... args) const {
    return Corrupt("row group ", rg, " row ", row, ": ", std::forward<Args>(args)...);
  }

  // Consumes one level entry of leaf `slot` (-1: a field the file does not
  // have): the value, or nullopt when it is null at any level. The string
  // stays valid until the leaf's next entry is read.
  // A page that cannot be decoded sets error_ and reads as null.
  std::optional<std::string_view> TakeString(int slot) {
    if (slot < 0 || !HasEntry(slot)) return std::nullopt;
    LeafData& leaf = leaves_[slot];
    bool defined = leaf.def[leaf.pos] == leaf.max_def;
    ++leaf.pos;
    if (!defined) return std::nullopt;
    std::string_view value;
    Status st = ReadString(&leaf, &value);
    if (!st.ok()) {
      SetError(slot, st);
      return std::nullopt;
    }
    return value;
  }

  std::optional<int64_t> TakeInt(int slot) {
    if (slot < 0 || !HasEntry(slot)) return std::nullopt;
    LeafData& leaf = leaves_[slot];
    bool defined = leaf.def[leaf.pos] == leaf.max_def;
    ++leaf.pos;
    if (!defined) return std::nullopt;
    int64_t value = 0;
    Status st = ReadInt(&leaf, &value);
    if (!st.ok()) {
      SetError(slot, st);
      return std::nullopt;
    }
    return value;
  }

  // Calls fn(key, value) for each entry of the map at the cursor (none when
  // it is null or empty); null keys read as "".
  template <typename Fn>
  void TakeStringMap(const StringMapLayout& layout, Fn&& fn) {
    if (layout.map < 0) return;
    const Node& map = nodes_[layout.map];
    if (PeekDef(map.peek_leaf) < map.def_level) {
      Skip(layout.map);
      return;
    }
    const Node& entries = nodes_[layout.entries];
    if (PeekDef(entries.peek_leaf) < entries.def_level) {
      Skip(layout.entries);
      return;
    }
    do {
      std::string_view key = TakeString(layout.key).value_or(std::string_view());
      fn(key, TakeString(layout.value));
    } while (HasEntry(entries.peek_leaf) && PeekRep(entries.peek_leaf) == entries.rep_level);
  }

  // partitionValues: null and "" both read as a null value (as ParseAdd).
  PartitionValues TakePartitionValues(const StringMapLayout& layout) {
    PartitionValues out;
    TakeStringMap(layout, [&](std::string_view key, std::optional<std::string_view> value) {
      std::optional<std::string> parsed;
      if (value && !value->empty()) parsed.emplace(*value);
      out.emplace_back(std::string(key), std::move(parsed));
    });
    return out;
  }

  Result<std::optional<DeletionVectorDescriptor>> TakeDeletionVector(const FileActionLayout& layout,
                                                                     std::string_view action,
                                                                     int rg, int64_t row) {
    if (layout.dv < 0) return std::optional<DeletionVectorDescriptor>();
    const Node& node = nodes_[layout.dv];
    if (PeekDef(node.peek_leaf) < node.def_level) {
      Skip(layout.dv);
      return std::optional<DeletionVectorDescriptor>();
    }
    DeletionVectorDescriptor dv;
    std::optional<std::string_view> storage_type = TakeString(layout.dv_storage_type);
    if (storage_type) dv.storage_type = *storage_type;
    std::optional<std::string_view> path = TakeString(layout.dv_path);
    if (path) dv.path_or_inline_dv = *path;
    dv.offset = TakeInt(layout.dv_offset);
    std::optional<int64_t> size = TakeInt(layout.dv_size);
    std::optional<int64_t> cardinality = TakeInt(layout.dv_cardinality);
    dv.max_row_index = TakeInt(layout.dv_max_row_index);
    const char* missing = !storage_type  ? "storageType"
                          : !path        ? "pathOrInlineDv"
                          : !size        ? "sizeInBytes"
                          : !cardinality ? "cardinality"
                                         : nullptr;
    if (missing != nullptr) {
      SILT_RETURN_NOT_OK(error_);
      return RowError(rg, row, action, ".deletionVector.", missing, " is missing or null");
    }
    dv.size_in_bytes = *size;
    dv.cardinality = *cardinality;
    return std::optional<DeletionVectorDescriptor>(std::move(dv));
  }

  // As ParseAdd (actions.cc) on the row's JSON.
  Result<AddFile> TakeAdd(int rg, int64_t row) {
    const FileActionLayout& layout = add_layout_;
    AddFile add;
    std::optional<std::string_view> path = TakeString(layout.path);
    if (!path) {
      SILT_RETURN_NOT_OK(error_);
      return RowError(rg, row, "add.path is missing or null");
    }
    add.path = *path;
    add.partition_values = TakePartitionValues(layout.partition_values);
    add.size = TakeInt(layout.size).value_or(0);
    add.modification_time = TakeInt(layout.modification_time).value_or(0);
    add.data_change = TakeInt(layout.data_change).value_or(1) != 0;
    if (std::optional<std::string_view> stats = TakeString(layout.stats)) add.stats.emplace(*stats);
    TakeStringMap(layout.tags, [&](std::string_view key, std::optional<std::string_view> value) {
      if (value) add.tags.emplace(std::string(key), std::string(*value));
    });
    SILT_ASSIGN_OR_RETURN(add.deletion_vector, TakeDeletionVector(layout, "add", rg, row));
    add.base_row_id = TakeInt(layout.base_row_id);
    add.default_row_commit_version = TakeInt(layout.default_row_commit_version);
    if (std::optional<std::string_view> provider = TakeString(layout.clustering_provider)) {
      add.clustering_provider.emplace(*provider);
    }
    return add;
  }

  // As ParseRemove (actions.cc) on the row's JSON.
  Result<RemoveFile> TakeRemove(int rg, int64_t row) {
    const FileActionLayout& layout = remove_layout_;
    RemoveFile remove;
    std::optional<std::string_view> path = TakeString(layout.path);
    if (!path) {
      SILT_RETURN_NOT_OK(error_);
      return RowError(rg, row, "remove.path is missing or null");
    }
    remove.path = *path;
    remove.deletion_timestamp = TakeInt(layout.deletion_timestamp);
    remove.data_change = TakeInt(layout.data_change).value_or(1) != 0;
    remove.extended_file_metadata = TakeInt(layout.extended_file_metadata).value_or(0) != 0;
    remove.partition_values = TakePartitionValues(layout.partition_values);
    remove.size = TakeInt(layout.size);
    SILT_ASSIGN_OR_RETURN(remove.deletion_vector, TakeDeletionVector(layout, "remove", rg, row));
    remove.base_row_id = TakeInt(layout.base_row_id);
    remove.default_row_commit_version = TakeInt(layout.default_row_commit_version);
    return remove;
  }

  // ---- rows ----

  Status ReadRowGroup(int rg, std::string* text) {
    const parquet::RowGroup& group = metadata_.row_groups[rg];
    leaves_.clear();
    leaves_.resize(leaf_nodes_.size());
    for (size_t slot = 0; slot < leaf_nodes_.size(); ++slot) {
      const Node& node = nodes_[leaf_nodes_[slot]];
      if (node.column_index >= static_cast<int>(group.columns.size()) ||
          !group.columns[node.column_index].meta_data) {
        return Corrupt("row group ", rg, " has no column chunk for ", ColumnPath(node));
      }
      LeafData& leaf = leaves_[slot];
      leaf.type = *node.element->type;
      leaf.max_def = node.def_level;
      leaf.max_rep = node.rep_level;
      if (leaf.max_def > 255 || leaf.max_rep > 255) {
        return Corrupt("row group ", rg, " column ", ColumnPath(node), " nests too deeply");
      }
      SILT_RETURN_NOT_OK_CTX(OpenChunk(*group.columns[node.column_index].meta_data, &leaf),
                             "Delta checkpoint ", path_, " row group ", rg, " column ",
                             ColumnPath(node));
    }
    rg_ = rg;
    JsonWriter w;
    for (int64_t row_idx = 0; row_idx < group.num_rows; ++row_idx) {
      for (int child : nodes_[0].children) {
        const Node& node = nodes_[child];
        if (!node.selected) continue;
        if (!HasEntry(node.peek_leaf)) {
          SILT_RETURN_NOT_OK(error_);
          return Corrupt("row group ", rg, " column ", ColumnPath(node), " ends before row ",
                         row_idx);
        }
        if (PeekDef(node.peek_leaf) < node.def_level) {
          Skip(child);
          continue;
        }
        if (child == add_index_ && add_layout_.direct) {
          SILT_ASSIGN_OR_RETURN(AddFile add, TakeAdd(rg, row_idx));
          adds_.push_back(std::move(add));
          continue;
        }
        if (child == remove_index_ && remove_layout_.direct) {
          SILT_ASSIGN_OR_RETURN(RemoveFile remove, TakeRemove(rg, row_idx));
          removes_.push_back(std::move(remove));
          continue;
        }
        w.Clear();
        w.BeginObject();
        w.Key(node.name);
        Emit(child, &w);
        w.EndObject();
        text->append(w.str());
        text->push_back('\n');
      }
      SILT_RETURN_NOT_OK(error_);
    }
    for (size_t slot = 0; slot < leaves_.size(); ++slot) {
      const LeafData& leaf = leaves_[slot];
      if (leaf.pos < leaf.def.size() || leaf.page_levels_left > 0 || leaf.values_left > 0) {
        return Corrupt("row group ", rg, " column ", ColumnPath(nodes_[leaf_nodes_[slot]]),
                       " holds more values than its ", group.num_rows, " rows");
      }
    }
    return Status::OK();
  }

  std::string ColumnPath(const Node& node) const {
    std::string out = node.name;
    for (int p = node.parent; p > 0; p = nodes_[p].parent) out = nodes_[p].name + "." + out;
    return out;
  }

  // True when leaf `slot` has a level entry at its cursor, decoding its next
  // page when the current one is used up. A decoding error is kept in
  // error_ (and reads as the end of the column).
  bool HasEntry(int slot) {
    LeafData& leaf = leaves_[slot];
    while (leaf.pos >= leaf.def.size()) {
      if (!error_.ok()) return false;
      Status st;
      if (leaf.page_levels_left > 0) {
        st = NextLevels(&leaf);
      } else if (leaf.values_left > 0) {
        st = NextPage(&leaf);
      } else {
        return false;
      }
      if (!st.ok()) {
        SetError(slot, st);
        return false;
      }
    }
    return true;
  }

  void SetError(int slot, const Status& st) {
    if (!error_.ok()) return;
    error_ = st.WithContextParts("Delta checkpoint ", path_, " row group ", rg_, " column ",
                                 ColumnPath(nodes_[leaf_nodes_[slot]]));
  }

  int PeekDef(int slot) { return HasEntry(slot) ? leaves_[slot].def[leaves_[slot].pos] : 0; }
  int PeekRep(int slot) {
    if (leaves_[slot].max_rep == 0 || !HasEntry(slot)) return 0;
    return leaves_[slot].rep[leaves_[slot].pos];
  }

  // Consumes one level entry from every selected leaf under `index` (a
  // value that is null or empty at this node has exactly one entry per leaf).
  void Skip(int index) {
    for (int slot : SelectedLeaves(index)) ConsumeLeaf(slot);
  }

  // The slots of the selected leaves under node `index` (cached: every row
  // skips the action columns it does not hold).
  const std::vector<int>& SelectedLeaves(int index) {
    if (leaves_under_.empty()) leaves_under_.resize(nodes_.size());
    std::vector<int>& out = leaves_under_[index];
    if (out.empty()) CollectLeaves(index, &out);
    return out;
  }

  void CollectLeaves(int index, std::vector<int>* out) const {
    const Node& node = nodes_[index];
    if (node.is_leaf) {
      if (node.selected) out->push_back(node.peek_leaf);
      return;
    }
    for (int child : node.children) {
      if (nodes_[child].selected) CollectLeaves(child, out);
    }
  }

  void ConsumeLeaf(int slot) {
    LeafData& leaf = leaves_[slot];
    if (leaf.pos < leaf.def.size() && leaf.def[leaf.pos] < leaf.max_def) {
      ++leaf.pos;  // null: no value to step over
      return;
    }
    if (leaf.type == PhysicalType::kByteArray) {
      TakeString(slot);
    } else {
      TakeInt(slot);
    }
  }

  void WriteLeafValue(int slot, JsonWriter* w) {
    if (leaves_[slot].type == PhysicalType::kByteArray) {
      std::optional<std::string_view> value = TakeString(slot);
      if (value) {
        w->String(*value);
      } else {
        w->Null();
      }
      return;
    }
    std::optional<int64_t> value = TakeInt(slot);
    if (!value) {
      w->Null();
    } else if (leaves_[slot].type == PhysicalType::kBoolean) {
      w->Bool(*value != 0);
    } else {
      w->Int(*value);
    }
  }

  // Writes the value at node `index` for the current row, consuming its
  // level entries. The caller has checked that the parents are defined.
  void Emit(int index, JsonWriter* w) {
    const Node& node = nodes_[index];
    if (node.is_leaf) {
      WriteLeafValue(node.peek_leaf, w);
      return;
    }
    if (PeekDef(node.peek_leaf) < node.def_level) {
      w->Null();
      Skip(index);
      return;
    }
    if (node.is_map || node.is_list) {
      EmitRepeated(node.children[0], node.is_map, w);
      return;
    }
    w->BeginObject();
    for (int child : node.children) {
      if (!nodes_[child].selected) continue;
      w->Key(nodes_[child].name);
      Emit(child, w);
    }
    w->EndObject();
  }

  // The repeated group of a MAP or LIST: entries until the repetition level
  // says the next entry belongs to an outer value.
  void EmitRepeated(int index, bool as_map, JsonWriter* w) {
    const Node& node = nodes_[index];
    if (as_map) {
      w->BeginObject();
    } else {
      w->BeginArray();
    }
    if (PeekDef(node.peek_leaf) < node.def_level) {
      Skip(index);  // empty
    } else {
      while (true) {
        EmitElement(index, as_map, w);
        if (!HasEntry(node.peek_leaf) || PeekRep(node.peek_leaf) != node.rep_level) break;
      }
    }
    if (as_map) {
      w->EndObject();
    } else {
      w->EndArray();
    }
  }

  void EmitElement(int index, bool as_map, JsonWriter* w) {
    const Node& node = nodes_[index];
    if (as_map) {
      // key_value { key, value }: the key is a required string.
      int key = node.children.size() >= 1 ? node.children[0] : -1;
      int value = node.children.size() >= 2 ? node.children[1] : -1;
      std::string key_text;
      if (key >= 0 && nodes_[key].is_leaf) {
        int slot = nodes_[key].peek_leaf;
        if (leaves_[slot].type == PhysicalType::kByteArray) {
          key_text = TakeString(slot).value_or(std::string_view());
        } else if (std::optional<int64_t> v = TakeInt(slot)) {
          key_text = std::to_string(*v);
        }
      } else if (key >= 0) {
        Skip(key);
      }
      w->Key(key_text);
      if (value >= 0) {
        Emit(value, w);
      } else {
        w->Null();
      }
      return;
    }
    if (node.is_leaf) {  // two-level list: the repeated field is the element
      WriteLeafValue(node.peek_leaf, w);
      return;
    }
    if (node.children.size() == 1) {
      Emit(node.children[0], w);
      return;
    }
    w->BeginObject();
    for (int child : node.children) {
      w->Key(nodes_[child].name);
      Emit(child, w);
    }
    w->EndObject();
  }

  // ---- column chunk decoding ----

  // Checks the column chunk's extent; its pages are read and decoded as
  // the rows reach them.
  Status OpenChunk(const parquet::ColumnMetaData& meta, LeafData* leaf) {
    int64_t start = meta.data_page_offset;
    if (meta.dictionary_page_offset && *meta.dictionary_page_offset > 0 &&
        *meta.dictionary_page_offset < start) {
      start = *meta.dictionary_page_offset;
    }
    if (start < 0 || meta.total_compressed_size < 0 || meta.num_values < 0 ||
        start > file_size_ - meta.total_compressed_size) {
      return Status::Corruption("invalid column chunk offsets");
    }
    SILT_ASSIGN_OR_RETURN(std::unique_ptr<parquet::Decompressor> decompressor,
                          parquet::Decompressor::Make(meta.codec));
    leaf->pages = std::make_unique<parquet::PageReader>(std::move(decompressor), leaf->max_rep,
                                                        leaf->max_def);
    leaf->pages->Reset(file_.get(), start, meta.total_compressed_size);
    leaf->num_values = meta.num_values;
    leaf->values_left = meta.num_values;
    return Status::OK();
  }

  // Decodes the next data page of `leaf` into its current page (reading a
  // dictionary page on the way). REQUIRES: leaf->values_left > 0.
  Status NextPage(LeafData* leaf) {
    leaf->rep.clear();
    leaf->def.clear();
    leaf->pos = 0;
    leaf->page_levels_left = 0;
    parquet::PageReader& pages = *leaf->pages;
    while (true) {
      if (pages.at_end()) {
        return Status::Corruption("column chunk holds ", leaf->num_values - leaf->values_left,
                                  " values, metadata says ", leaf->num_values);
      }
      SILT_RETURN_NOT_OK(pages.Next());
      const PageType type = pages.header().type;
      if (type == PageType::kDictionaryPage) {
        SILT_ASSIGN_OR_RETURN(parquet::DictionaryPage dict, pages.ReadDictionary());
        leaf->dictionary_strings.clear();
        leaf->dictionary_ints.clear();
        SILT_RETURN_NOT_OK(DecodePlain(leaf->type, dict.values, dict.num_values,
                                       &leaf->dictionary_strings, &leaf->dictionary_ints));
        continue;
      }
      if (type != PageType::kDataPage && type != PageType::kDataPageV2) {
        continue;  // index pages carry nothing a reader needs
      }
      SILT_ASSIGN_OR_RETURN(parquet::DataPage page, pages.ReadDataPage());
      if (leaf->max_rep > 0) {
        SILT_RETURN_NOT_OK(StartLevels(page.repetition_level_encoding, page.repetition_levels,
                                       leaf->max_rep, &leaf->rep_decoder));
      }
      if (leaf->max_def > 0) {
        SILT_RETURN_NOT_OK(StartLevels(page.definition_level_encoding, page.definition_levels,
                                       leaf->max_def, &leaf->def_decoder));
      }
      SILT_RETURN_NOT_OK(StartValues(page.encoding, page.values, leaf));
      if (page.num_values > leaf->values_left) {
        return Status::Corruption("column chunk holds more values than its metadata's ",
                                  leaf->num_values);
      }
      leaf->values_left -= page.num_values;
      leaf->page_levels_left = page.num_values;
      return Status::OK();
    }
  }

  // Levels arrive as RLE hybrid runs (BIT_PACKED is deprecated, and no
  // Delta writer uses it).
  static Status StartLevels(parquet::Encoding encoding, std::string_view section, int max_level,
                            parquet::RleDecoder* decoder) {
    if (encoding != Encoding::kRle) {
      return Status::NotSupported("Parquet level encoding ", parquet::EncodingName(encoding),
                                  " in a Delta checkpoint");
    }
    decoder->Reset(reinterpret_cast<const uint8_t*>(section.data()),
                   static_cast<int64_t>(section.size()), parquet::LevelBitWidth(max_level));
    return Status::OK();
  }

  static constexpr int64_t kLevelBatch = 4096;

  // Decodes the next batch of the current page's levels.
  static Status NextLevels(LeafData* leaf) {
    int64_t n = std::min(leaf->page_levels_left, kLevelBatch);
    leaf->pos = 0;
    SILT_RETURN_NOT_OK(DecodeLevels(&leaf->def_decoder, n, leaf->max_def, &leaf->def));
    if (leaf->max_rep > 0) {
      SILT_RETURN_NOT_OK(DecodeLevels(&leaf->rep_decoder, n, leaf->max_rep, &leaf->rep));
    }
    leaf->page_levels_left -= n;
    return Status::OK();
  }

  static Status DecodeLevels(parquet::RleDecoder* decoder, int64_t n, int max_level,
                             std::vector<uint8_t>* out) {
    out->resize(static_cast<size_t>(n));
    if (max_level == 0) {
      std::fill(out->begin(), out->end(), 0);
      return Status::OK();
    }
    if (decoder->GetBatch(out->data(), n) != n) return Status::Corruption("levels end early");
    for (uint8_t level : *out) {
      if (level > max_level) return Status::Corruption("level above its maximum");
    }
    return Status::OK();
  }

  static bool IsDictionaryEncoding(Encoding encoding) {
    return encoding == Encoding::kRleDictionary || encoding == Encoding::kPlainDictionary;
  }

  // Prepares reading the values of a data page (`data`, kept alive by the
  // leaf's buffers).
  static Status StartValues(Encoding encoding, std::string_view data, LeafData* leaf) {
    leaf->encoding = encoding;
    leaf->values = {};
    leaf->bit_pos = 0;
    leaf->value_batch.clear();
    leaf->value_batch_pos = 0;
    auto bytes = reinterpret_cast<const uint8_t*>(data.data());
    if (encoding == Encoding::kPlain) {
      leaf->values = data;
    } else if (IsDictionaryEncoding(encoding)) {
      // An empty page has no defined values (reading one is an error).
      SILT_RETURN_NOT_OK(parquet::StartDictionaryIndices(data, &leaf->value_decoder));
    } else if (encoding == Encoding::kRle && leaf->type == PhysicalType::kBoolean) {
      if (data.size() < 4) return Status::Corruption("truncated RLE booleans");
      leaf->value_decoder.Reset(bytes + 4, static_cast<int64_t>(data.size()) - 4, 1);
    } else {
      return Status::NotSupported("Parquet encoding ", parquet::EncodingName(encoding),
                                  " in a Delta checkpoint");
    }
    return Status::OK();
  }

  // The next value decoded by value_decoder.
  static Status NextDecoded(LeafData* leaf, uint32_t* out) {
    if (leaf->value_batch_pos >= leaf->value_batch.size()) {
      leaf->value_batch.resize(1024);
      int64_t got = leaf->value_decoder.GetBatch(leaf->value_batch.data(), 1024);
      leaf->value_batch.resize(static_cast<size_t>(got));
      leaf->value_batch_pos = 0;
      if (got == 0) {
        return Status::Corruption(IsDictionaryEncoding(leaf->encoding)
                                      ? "dictionary indices end early"
                                      : "RLE booleans end early");
      }
    }
    *out = leaf->value_batch[leaf->value_batch_pos++];
    return Status::OK();
  }

  // The value of the next defined entry of a BYTE_ARRAY leaf; it points
  // into the page or dictionary buffer.
  static Status ReadString(LeafData* leaf, std::string_view* out) {
    if (IsDictionaryEncoding(leaf->encoding)) {
      uint32_t index = 0;
      SILT_RETURN_NOT_OK(NextDecoded(leaf, &index));
      if (index >= leaf->dictionary_strings.size()) {
        return Status::Corruption("dictionary index out of range");
      }
      *out = leaf->dictionary_strings[index];
      return Status::OK();
    }
    return parquet::NextPlainByteArray(&leaf->values, out);
  }

  // The value of the next defined entry of an INT32, INT64 or BOOLEAN leaf.
  static Status ReadInt(LeafData* leaf, int64_t* out) {
    if (IsDictionaryEncoding(leaf->encoding)) {
      uint32_t index = 0;
      SILT_RETURN_NOT_OK(NextDecoded(leaf, &index));
      if (index >= leaf->dictionary_ints.size()) {
        return Status::Corruption("dictionary index out of range");
      }
      *out = leaf->dictionary_ints[index];
      return Status::OK();
    }
    std::string_view& values = leaf->values;
    switch (leaf->type) {
      case PhysicalType::kBoolean: {
        if (leaf->encoding == Encoding::kRle) {
          uint32_t bit = 0;
          SILT_RETURN_NOT_OK(NextDecoded(leaf, &bit));
          *out = bit;
          return Status::OK();
        }
        if (static_cast<uint64_t>(leaf->bit_pos / 8) >= values.size()) {
          return Status::Corruption("truncated PLAIN booleans");
        }
        *out = (static_cast<uint8_t>(values[leaf->bit_pos / 8]) >> (leaf->bit_pos % 8)) & 1;
        ++leaf->bit_pos;
        return Status::OK();
      }
      case PhysicalType::kInt32: {
        if (values.size() < 4) return Status::Corruption("truncated PLAIN int32 values");
        int32_t v = 0;
        std::memcpy(&v, values.data(), 4);
        values.remove_prefix(4);
        *out = v;
        return Status::OK();
      }
      default: {
        if (values.size() < 8) return Status::Corruption("truncated PLAIN int64 values");
        std::memcpy(out, values.data(), 8);
        values.remove_prefix(8);
        return Status::OK();
      }
    }
  }

  // PLAIN dictionary values; strings point into `data`.
  static Status DecodePlain(PhysicalType type, std::string_view data, int64_t n,
                            std::vector<std::string_view>* strings, std::vector<int64_t>* ints) {
    const char* p = data.data();
    const char* end = data.data() + data.size();
    switch (type) {
      case PhysicalType::kByteArray:
        // Every entry takes at least its 4-byte length: an impossible count
        // fails before anything is allocated for it.
        if (end - p < 4 * n) return Status::Corruption("truncated PLAIN byte array");
        strings->resize(static_cast<size_t>(n));
        return parquet::ParsePlainByteArrays(reinterpret_cast<const uint8_t*>(p), end - p, n, 0,
                                             strings->data());
      case PhysicalType::kInt32:
        if (end - p < 4 * n) return Status::Corruption("truncated PLAIN int32 values");
        for (int64_t i = 0; i < n; ++i) {
          int32_t v = 0;
          std::memcpy(&v, p + 4 * i, 4);
          ints->push_back(v);
        }
        return Status::OK();
      case PhysicalType::kInt64:
        if (end - p < 8 * n) return Status::Corruption("truncated PLAIN int64 values");
        for (int64_t i = 0; i < n; ++i) {
          int64_t v = 0;
          std::memcpy(&v, p + 8 * i, 8);
          ints->push_back(v);
        }
        return Status::OK();
      case PhysicalType::kBoolean:
        if ((end - p) * 8 < n) return Status::Corruption("truncated PLAIN booleans");
        for (int64_t i = 0; i < n; ++i) {
          ints->push_back((static_cast<uint8_t>(p[i / 8]) >> (i % 8)) & 1);
        }
        return Status::OK();
      default:
        return Status::NotSupported("Parquet type ", parquet::PhysicalTypeName(type),
                                    " in a Delta checkpoint");
    }
  }

  fs::FileSystem* fs_;
  std::string path_;
  std::unique_ptr<fs::RandomAccessFile> file_;
  int64_t file_size_ = 0;
  parquet::FileMetaData metadata_;
  std::vector<Node> nodes_;
  std::vector<int> leaf_nodes_;  // leaf slot -> node index
  std::vector<LeafData> leaves_;
  std::vector<std::vector<int>> leaves_under_;  // by node index, see SelectedLeaves
  int rg_ = 0;                                  // the row group being read
  Status error_;                                // the first page decoding error of the row group
  int add_index_ = -1;                          // node indices of the add and remove columns
  int remove_index_ = -1;
  FileActionLayout add_layout_;
  FileActionLayout remove_layout_;
  std::vector<AddFile> adds_;  // directly assembled rows
  std::vector<RemoveFile> removes_;
};

}  // namespace

Result<CommitActions> ReadParquetCheckpoint(fs::FileSystem* fs, const std::string& path) {
  CheckpointFile file(fs, path);
  return file.Read();
}

Result<std::vector<std::string>> SidecarPaths(const CommitActions& actions,
                                              std::string_view source) {
  std::vector<std::string> out;
  bool any = false;
  for (const std::string& key : actions.other_action_keys) any = any || key == "sidecar";
  if (!any) return out;
  simdjson::dom::parser parser;
  for (const std::string& line : actions.raw_lines) {
    if (line.find("\"sidecar\"") == std::string::npos) continue;
    simdjson::dom::element root;
    if (parser.parse(line).get(root) != simdjson::SUCCESS) continue;
    simdjson::dom::element sidecar;
    if (root.at_key("sidecar").get(sidecar) != simdjson::SUCCESS) continue;
    std::string_view path;
    if (sidecar.at_key("path").get_string().get(path) != simdjson::SUCCESS) {
      return Status::Corruption(source, ": a sidecar action has no path");
    }
    out.emplace_back(path);
  }
  return out;
}

}  // namespace silt::delta
