#include "silt/delta/checkpoint_reader.h"

#include <simdjson.h>

#include <bit>
#include <cstring>
#include <memory>
#include <string_view>

#include "silt/base/json_writer.h"
#include "silt/parquet/compression.h"
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

// Parsed caches of other fields: silt reads the JSON forms instead.
bool IsSkippedField(std::string_view parent, std::string_view name) {
  return (parent == "add" || parent == "remove") &&
         (name == "stats_parsed" || name == "partitionValues_parsed");
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

// The decoded levels and values of one leaf column chunk, with a cursor.
struct LeafData {
  PhysicalType type = PhysicalType::kInt64;
  int max_def = 0;
  int max_rep = 0;
  std::vector<int16_t> rep;
  std::vector<int16_t> def;
  std::vector<std::string> strings;  // BYTE_ARRAY values, defined entries only
  std::vector<int64_t> ints;         // INT32 / INT64 / BOOLEAN values
  int64_t pos = 0;                   // next level entry
  int64_t value_pos = 0;             // next defined value

  bool AtEnd() const { return pos >= static_cast<int64_t>(def.size()); }
  int16_t PeekDef() const { return AtEnd() ? 0 : def[pos]; }
  int16_t PeekRep() const { return AtEnd() ? 0 : rep[pos]; }
};

int BitWidth(int max_level) { return max_level == 0 ? 0 : std::bit_width(static_cast<unsigned>(max_level)); }

class CheckpointFile {
 public:
  CheckpointFile(fs::FileSystem* fs, std::string path) : fs_(fs), path_(std::move(path)) {}

  Result<CommitActions> Read() {
    SILT_ASSIGN_OR_RETURN(file_, fs_->OpenForRead(path_));
    SILT_ASSIGN_OR_RETURN(int64_t size, file_->Size());
    if (size < 12) return Corrupt("is too small to be a Parquet file");
    SILT_ASSIGN_OR_RETURN(std::string trailer, file_->ReadAt(size - 8, 8));
    if (trailer.substr(4) != parquet::kParquetMagic) {
      return Corrupt("does not end in the Parquet magic PAR1");
    }
    uint32_t footer_len = 0;
    std::memcpy(&footer_len, trailer.data(), 4);
    if (static_cast<int64_t>(footer_len) > size - 12) return Corrupt("has a truncated footer");
    SILT_ASSIGN_OR_RETURN(std::string footer, file_->ReadAt(size - 8 - footer_len, footer_len));
    SILT_ASSIGN_OR_RETURN_CTX(metadata_, parquet::ParseFileMetaData(footer), "checkpoint ",
                              path_);
    if (metadata_.encrypted) return Corrupt("is encrypted");
    SILT_RETURN_NOT_OK(BuildTree());
    std::string text;
    for (size_t rg = 0; rg < metadata_.row_groups.size(); ++rg) {
      SILT_RETURN_NOT_OK(ReadRowGroup(static_cast<int>(rg), &text));
    }
    return ParseCommit(text, path_);
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
      if (IsActionColumn(nodes_[child].name)) Select(child, "");
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
      bool map = element.converted_type == ConvertedType::kMap ||
                 element.converted_type == ConvertedType::kMapKeyValue ||
                 (element.logical_type && element.logical_type->kind ==
                                              parquet::LogicalType::Kind::kMap);
      bool list = element.converted_type == ConvertedType::kList ||
                  (element.logical_type &&
                   element.logical_type->kind == parquet::LogicalType::Kind::kList);
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
  // whether it was. Unreadable or skipped struct fields are left out of the
  // JSON (readers then see them as absent).
  bool Select(int index, std::string_view parent_name) {
    Node& node = nodes_[index];
    if (IsSkippedField(parent_name, node.name)) return false;
    if (node.is_leaf) {
      if (!IsReadablePhysicalType(*node.element->type)) return false;
      node.selected = true;
      node.peek_leaf = LeafSlot(index);
      return true;
    }
    bool is_struct = !node.is_map && !node.is_list &&
                     node.element->repetition_type != Repetition::kRepeated;
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

  Status ReadRowGroup(int rg, std::string* text) {
    const parquet::RowGroup& group = metadata_.row_groups[rg];
    leaves_.assign(leaf_nodes_.size(), LeafData{});
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
      SILT_RETURN_NOT_OK_CTX(ReadChunk(*group.columns[node.column_index].meta_data, &leaf),
                             "Delta checkpoint ", path_, " row group ", rg, " column ",
                             ColumnPath(node));
    }
    JsonWriter w;
    for (int64_t row_idx = 0; row_idx < group.num_rows; ++row_idx) {
      for (int child : nodes_[0].children) {
        const Node& node = nodes_[child];
        if (!node.selected) continue;
        if (leaves_[node.peek_leaf].AtEnd()) {
          return Corrupt("row group ", rg, " column ", ColumnPath(node), " ends before row ",
                         row_idx);
        }
        if (leaves_[node.peek_leaf].PeekDef() < node.def_level) {
          Skip(child);
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
    }
    return Status::OK();
  }

  std::string ColumnPath(const Node& node) const {
    std::string out = node.name;
    for (int p = node.parent; p > 0; p = nodes_[p].parent) out = nodes_[p].name + "." + out;
    return out;
  }

  // Consumes one level entry from every selected leaf under `index` (a
  // value that is null or empty at this node has exactly one entry per leaf).
  void Skip(int index) {
    const Node& node = nodes_[index];
    if (node.is_leaf) {
      ConsumeLeaf(node.peek_leaf);
      return;
    }
    for (int child : node.children) {
      if (nodes_[child].selected) Skip(child);
    }
  }

  void ConsumeLeaf(int slot) {
    LeafData& leaf = leaves_[slot];
    if (leaf.AtEnd()) return;
    if (leaf.def[leaf.pos] == leaf.max_def) ++leaf.value_pos;
    ++leaf.pos;
  }

  void WriteLeafValue(int slot, JsonWriter* w) {
    LeafData& leaf = leaves_[slot];
    if (leaf.AtEnd() || leaf.def[leaf.pos] < leaf.max_def) {
      w->Null();
      if (!leaf.AtEnd()) ++leaf.pos;
      return;
    }
    int64_t v = leaf.value_pos++;
    ++leaf.pos;
    switch (leaf.type) {
      case PhysicalType::kByteArray:
        w->String(leaf.strings[v]);
        break;
      case PhysicalType::kBoolean:
        w->Bool(leaf.ints[v] != 0);
        break;
      default:
        w->Int(leaf.ints[v]);
        break;
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
    if (leaves_[node.peek_leaf].PeekDef() < node.def_level) {
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
    if (leaves_[node.peek_leaf].PeekDef() < node.def_level) {
      Skip(index);  // empty
    } else {
      while (true) {
        EmitElement(index, as_map, w);
        const LeafData& peek = leaves_[node.peek_leaf];
        if (peek.AtEnd() || peek.PeekRep() != node.rep_level) break;
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
      LeafData* key_leaf = key >= 0 && nodes_[key].is_leaf ? &leaves_[nodes_[key].peek_leaf]
                                                           : nullptr;
      std::string key_text;
      if (key_leaf != nullptr && !key_leaf->AtEnd() &&
          key_leaf->def[key_leaf->pos] == key_leaf->max_def) {
        if (key_leaf->type == PhysicalType::kByteArray) {
          key_text = key_leaf->strings[key_leaf->value_pos];
        } else {
          key_text = std::to_string(key_leaf->ints[key_leaf->value_pos]);
        }
      }
      if (key >= 0) Skip(key);
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

  Status ReadChunk(const parquet::ColumnMetaData& meta, LeafData* leaf) {
    int64_t start = meta.data_page_offset;
    if (meta.dictionary_page_offset && *meta.dictionary_page_offset > 0 &&
        *meta.dictionary_page_offset < start) {
      start = *meta.dictionary_page_offset;
    }
    if (start < 0 || meta.total_compressed_size < 0) {
      return Status::Corruption("invalid column chunk offsets");
    }
    SILT_ASSIGN_OR_RETURN(std::string chunk, file_->ReadAt(start, meta.total_compressed_size));
    if (static_cast<int64_t>(chunk.size()) != meta.total_compressed_size) {
      return Status::Corruption("column chunk is truncated");
    }
    SILT_ASSIGN_OR_RETURN(auto decompressor, parquet::Decompressor::Make(meta.codec));
    dict_strings_.clear();
    dict_ints_.clear();
    std::string_view rest = chunk;
    int64_t values_read = 0;
    while (values_read < meta.num_values && !rest.empty()) {
      SILT_ASSIGN_OR_RETURN(auto parsed, parquet::ParsePageHeader(rest));
      const parquet::PageHeader& header = parsed.header;
      int64_t body_size = header.compressed_page_size;
      if (body_size < 0 || parsed.header_size + body_size > static_cast<int64_t>(rest.size())) {
        return Status::Corruption("page runs past the end of the column chunk");
      }
      std::string_view body = rest.substr(parsed.header_size, body_size);
      rest.remove_prefix(parsed.header_size + body_size);
      if (header.type == PageType::kDictionaryPage) {
        if (!header.dictionary_page_header) return Status::Corruption("dictionary page header");
        std::string plain;
        SILT_RETURN_NOT_OK(Uncompress(decompressor.get(), body, header.uncompressed_page_size,
                                      &plain));
        SILT_RETURN_NOT_OK(DecodePlain(leaf->type, plain, header.dictionary_page_header->num_values,
                                       &dict_strings_, &dict_ints_));
      } else if (header.type == PageType::kDataPage) {
        if (!header.data_page_header) return Status::Corruption("data page header");
        std::string page;
        SILT_RETURN_NOT_OK(Uncompress(decompressor.get(), body, header.uncompressed_page_size,
                                      &page));
        const auto& dp = *header.data_page_header;
        std::string_view data = page;
        SILT_RETURN_NOT_OK(DecodeLevelsV1(&data, dp.num_values, leaf->max_rep, &leaf->rep));
        SILT_RETURN_NOT_OK(DecodeLevelsV1(&data, dp.num_values, leaf->max_def, &leaf->def));
        SILT_RETURN_NOT_OK(DecodeValues(dp.encoding, data, dp.num_values, leaf));
        values_read += dp.num_values;
      } else if (header.type == PageType::kDataPageV2) {
        if (!header.data_page_header_v2) return Status::Corruption("data page v2 header");
        const auto& dp = *header.data_page_header_v2;
        int64_t levels = static_cast<int64_t>(dp.repetition_levels_byte_length) +
                         dp.definition_levels_byte_length;
        if (dp.repetition_levels_byte_length < 0 || dp.definition_levels_byte_length < 0 ||
            levels > body_size) {
          return Status::Corruption("data page v2 level lengths exceed the page");
        }
        SILT_RETURN_NOT_OK(DecodeLevels(body.substr(0, dp.repetition_levels_byte_length),
                                        dp.num_values, leaf->max_rep, &leaf->rep));
        SILT_RETURN_NOT_OK(DecodeLevels(
            body.substr(dp.repetition_levels_byte_length, dp.definition_levels_byte_length),
            dp.num_values, leaf->max_def, &leaf->def));
        std::string_view values = body.substr(levels);
        std::string buffer;
        if (dp.is_compressed) {
          SILT_RETURN_NOT_OK(Uncompress(decompressor.get(), values,
                                        header.uncompressed_page_size - levels, &buffer));
          values = buffer;
        }
        SILT_RETURN_NOT_OK(DecodeValues(dp.encoding, values, dp.num_values, leaf));
        values_read += dp.num_values;
      }
      // Index pages carry nothing a reader needs.
    }
    if (values_read != meta.num_values) {
      return Status::Corruption("column chunk holds ", values_read, " values, metadata says ",
                                meta.num_values);
    }
    return Status::OK();
  }

  static Status Uncompress(parquet::Decompressor* decompressor, std::string_view input,
                           int64_t size, std::string* out) {
    if (size < 0) return Status::Corruption("negative uncompressed page size");
    if (decompressor->codec() == parquet::CompressionCodec::kUncompressed) {
      out->assign(input);
      return Status::OK();
    }
    SILT_RETURN_NOT_OK(decompressor->CheckUncompressedSize(input, size));
    out->resize(size);
    return decompressor->Decompress(input, reinterpret_cast<uint8_t*>(out->data()), size);
  }

  // Data page v1 levels: a 4-byte length, then the RLE hybrid runs.
  static Status DecodeLevelsV1(std::string_view* data, int64_t n, int max_level,
                               std::vector<int16_t>* out) {
    if (max_level == 0) {
      out->insert(out->end(), n, 0);
      return Status::OK();
    }
    if (data->size() < 4) return Status::Corruption("truncated levels");
    uint32_t len = 0;
    std::memcpy(&len, data->data(), 4);
    if (len > data->size() - 4) return Status::Corruption("levels run past the page");
    SILT_RETURN_NOT_OK(DecodeLevels(data->substr(4, len), n, max_level, out));
    data->remove_prefix(4 + len);
    return Status::OK();
  }

  static Status DecodeLevels(std::string_view data, int64_t n, int max_level,
                             std::vector<int16_t>* out) {
    size_t base = out->size();
    out->resize(base + n, 0);
    if (max_level == 0) return Status::OK();
    parquet::RleDecoder decoder(reinterpret_cast<const uint8_t*>(data.data()),
                                static_cast<int64_t>(data.size()), BitWidth(max_level));
    if (decoder.GetBatch(out->data() + base, n) != n) {
      return Status::Corruption("levels end early");
    }
    for (int64_t i = 0; i < n; ++i) {
      if ((*out)[base + i] > max_level) return Status::Corruption("level above its maximum");
    }
    return Status::OK();
  }

  Status DecodeValues(Encoding encoding, std::string_view data, int64_t num_values,
                      LeafData* leaf) {
    int64_t defined = 0;
    for (int64_t i = static_cast<int64_t>(leaf->def.size()) - num_values;
         i < static_cast<int64_t>(leaf->def.size()); ++i) {
      if (leaf->def[i] == leaf->max_def) ++defined;
    }
    if (encoding == Encoding::kPlain) {
      return DecodePlain(leaf->type, data, defined, &leaf->strings, &leaf->ints);
    }
    if (encoding == Encoding::kRleDictionary || encoding == Encoding::kPlainDictionary) {
      if (data.empty()) {
        if (defined == 0) return Status::OK();
        return Status::Corruption("empty dictionary-encoded page");
      }
      int bit_width = static_cast<uint8_t>(data[0]);
      if (bit_width > 32) return Status::Corruption("dictionary index bit width ", bit_width);
      parquet::RleDecoder decoder(reinterpret_cast<const uint8_t*>(data.data()) + 1,
                                  static_cast<int64_t>(data.size()) - 1, bit_width);
      std::vector<uint32_t> indices(defined);
      if (decoder.GetBatch(indices.data(), defined) != defined) {
        return Status::Corruption("dictionary indices end early");
      }
      bool strings = leaf->type == PhysicalType::kByteArray;
      size_t dict_size = strings ? dict_strings_.size() : dict_ints_.size();
      for (uint32_t index : indices) {
        if (index >= dict_size) return Status::Corruption("dictionary index out of range");
        if (strings) {
          leaf->strings.push_back(dict_strings_[index]);
        } else {
          leaf->ints.push_back(dict_ints_[index]);
        }
      }
      return Status::OK();
    }
    if (encoding == Encoding::kRle && leaf->type == PhysicalType::kBoolean) {
      if (data.size() < 4) return Status::Corruption("truncated RLE booleans");
      parquet::RleDecoder decoder(reinterpret_cast<const uint8_t*>(data.data()) + 4,
                                  static_cast<int64_t>(data.size()) - 4, 1);
      size_t base = leaf->ints.size();
      leaf->ints.resize(base + defined);
      if (decoder.GetBatch(leaf->ints.data() + base, defined) != defined) {
        return Status::Corruption("RLE booleans end early");
      }
      return Status::OK();
    }
    return Status::NotSupported("Parquet encoding ", parquet::EncodingName(encoding),
                                " in a Delta checkpoint");
  }

  static Status DecodePlain(PhysicalType type, std::string_view data, int64_t n,
                            std::vector<std::string>* strings, std::vector<int64_t>* ints) {
    const char* p = data.data();
    const char* end = data.data() + data.size();
    switch (type) {
      case PhysicalType::kByteArray:
        for (int64_t i = 0; i < n; ++i) {
          if (end - p < 4) return Status::Corruption("truncated PLAIN byte array");
          uint32_t len = 0;
          std::memcpy(&len, p, 4);
          p += 4;
          if (static_cast<uint64_t>(end - p) < len) {
            return Status::Corruption("PLAIN byte array runs past the page");
          }
          strings->emplace_back(p, len);
          p += len;
        }
        return Status::OK();
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
  parquet::FileMetaData metadata_;
  std::vector<Node> nodes_;
  std::vector<int> leaf_nodes_;  // leaf slot -> node index
  std::vector<LeafData> leaves_;
  std::vector<std::string> dict_strings_;
  std::vector<int64_t> dict_ints_;
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
