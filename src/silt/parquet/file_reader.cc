#include "silt/parquet/file_reader.h"

#include <algorithm>
#include <cstring>

#include "silt/parquet/column_reader.h"
#include "silt/parquet/nested_reader.h"
#include "silt/parquet/parquet_metadata.h"
#include "silt/parquet/parquet_schema.h"

namespace silt::parquet {

namespace {

// Bytes read from the end of the file in the first request; most footers
// fit, so opening costs one ranged read.
constexpr int64_t kFooterReadSize = 64 * 1024;

class FileReaderImpl final : public ParquetFileReader {
 public:
  FileReaderImpl(std::string path, std::unique_ptr<fs::RandomAccessFile> file, int64_t size)
      : path_(std::move(path)), file_(std::move(file)), size_(size) {}

  Status Init() {
    const int64_t min_size = 2 * static_cast<int64_t>(kParquetMagic.size()) + 4;
    if (size_ < min_size) {
      return Status::Corruption(path_, ": ", size_,
                                " bytes is too small to be a Parquet file (truncated?)");
    }
    const int64_t tail_len = std::min(size_, kFooterReadSize);
    SILT_ASSIGN_OR_RETURN_CTX(std::string tail, ReadExactly(size_ - tail_len, tail_len, "footer"),
                              path_);
    std::string_view tail_view(tail);
    if (tail_view.substr(tail.size() - 4) != kParquetMagic) {
      if (tail_view.substr(tail.size() - 4) == "PARE") {
        return Status::NotSupported(path_, ": encrypted Parquet footers are not supported");
      }
      return Status::Corruption(path_,
                                ": not a Parquet file or truncated (no PAR1 magic at "
                                "its end)");
    }
    if (tail_len == size_ && tail_view.substr(0, 4) != kParquetMagic) {
      return Status::Corruption(path_, ": not a Parquet file (no PAR1 magic at its start)");
    }
    uint32_t footer_len;
    std::memcpy(&footer_len, tail.data() + tail.size() - 8, 4);
    if (footer_len > static_cast<uint64_t>(size_ - min_size)) {
      return Status::Corruption(path_, ": footer length ", footer_len, " exceeds the file size ",
                                size_, " (truncated?)");
    }
    footer_start_ = size_ - kFooterTrailerSize - footer_len;
    std::string footer;
    if (static_cast<int64_t>(footer_len) + kFooterTrailerSize <= tail_len) {
      footer =
          tail.substr(static_cast<size_t>(tail_len - kFooterTrailerSize - footer_len), footer_len);
    } else {
      SILT_ASSIGN_OR_RETURN_CTX(footer, ReadExactly(footer_start_, footer_len, "footer"), path_);
    }
    SILT_ASSIGN_OR_RETURN_CTX(metadata_, ParseFileMetaData(footer), path_, ": invalid footer");
    if (metadata_.encrypted) {
      return Status::NotSupported(path_, ": encrypted Parquet files are not supported");
    }
    SILT_ASSIGN_OR_RETURN_CTX(descriptors_, BuildColumnDescriptors(metadata_.schema), path_,
                              ": invalid schema");
    std::vector<columnar::Field> fields;
    int num_leaves = 0;
    for (const ColumnDescriptor& d : descriptors_) {
      fields.push_back(d.field);
      num_leaves += d.num_leaves;
    }
    schema_ = columnar::DataType::Struct(std::move(fields));
    for (size_t rg = 0; rg < metadata_.row_groups.size(); ++rg) {
      const RowGroup& group = metadata_.row_groups[rg];
      if (static_cast<int>(group.columns.size()) != num_leaves) {
        return Status::Corruption(path_, ": row group ", rg, " has ", group.columns.size(),
                                  " column chunks, the schema ", num_leaves, " leaf columns");
      }
      if (group.num_rows < 0) {
        return Status::Corruption(path_, ": row group ", rg, " has a negative row count");
      }
    }
    readers_.resize(static_cast<size_t>(num_leaves));
    return Status::OK();
  }

  const columnar::SchemaPtr& schema() const override { return schema_; }
  int64_t num_rows() const override { return metadata_.num_rows; }
  int num_row_groups() const override { return static_cast<int>(metadata_.row_groups.size()); }

  Result<columnar::RecordBatchPtr> ReadRowGroup(int index,
                                                const std::vector<std::string>& columns) override {
    if (index < 0 || index >= num_row_groups()) {
      return Status::InvalidArgument(path_, ": row group ", index, " out of range (the file has ",
                                     num_row_groups(), ")");
    }
    std::vector<Selection> selected;
    if (columns.empty()) {
      for (int i = 0; i < schema_->num_fields(); ++i) selected.push_back({i, nullptr, {}});
    } else {
      for (const std::string& name : columns) {
        int i = schema_->FieldIndex(name);
        if (i >= 0) {
          selected.push_back({i, nullptr, {}});
          continue;
        }
        SILT_ASSIGN_OR_RETURN(Selection sel, ResolveStructPath(name));
        selected.push_back(std::move(sel));
      }
    }
    const RowGroup& group = metadata_.row_groups[static_cast<size_t>(index)];
    auto batch = std::make_shared<columnar::RecordBatch>();
    batch->num_rows = group.num_rows;
    std::vector<columnar::Field> fields;
    for (const Selection& sel : selected) {
      if (sel.node == nullptr) {
        SILT_ASSIGN_OR_RETURN_CTX(columnar::ColumnPtr column, ReadColumn(group, sel.field_idx),
                                  path_, ": row group ", index);
        fields.push_back(schema_->field(sel.field_idx));
        batch->columns.push_back(std::move(column));
      } else {
        SILT_ASSIGN_OR_RETURN_CTX(columnar::ColumnPtr column, ReadStructPath(group, sel), path_,
                                  ": row group ", index);
        fields.push_back(sel.field);
        batch->columns.push_back(std::move(column));
      }
    }
    batch->schema = columns.empty() ? schema_ : columnar::DataType::Struct(std::move(fields));
    return columnar::RecordBatchPtr(std::move(batch));
  }

 private:
  // A requested column: a whole top-level field, or (node set) a field
  // reached through structs only, returned as its own column.
  struct Selection {
    int field_idx = 0;
    const LevelNode* node = nullptr;
    columnar::Field field;  // name = the requested path
  };

  // Resolves "a.b.c" through struct fields (case-insensitive).
  Result<Selection> ResolveStructPath(const std::string& name) {
    Selection sel;
    size_t start = 0;
    size_t dot = name.find('.');
    if (dot != std::string::npos) sel.field_idx = schema_->FieldIndex(name.substr(0, dot));
    if (dot == std::string::npos || sel.field_idx < 0) {
      return Status::InvalidArgument(path_, ": no column '", name, "' in the file (it has ",
                                     schema_->ToDdl(), ")");
    }
    const ColumnDescriptor& d = descriptors_[static_cast<size_t>(sel.field_idx)];
    SILT_RETURN_NOT_OK(d.unsupported);
    const LevelNode* node = d.levels.get();
    bool nullable = d.field.nullable;
    while (dot != std::string::npos) {
      start = dot + 1;
      dot = name.find('.', start);
      const std::string part = name.substr(start, dot == std::string::npos ? dot : dot - start);
      if (node == nullptr || node->type->id() != columnar::TypeId::kStruct) {
        return Status::InvalidArgument(path_, ": column '", name, "': '", name.substr(0, start - 1),
                                       "' is not a struct (only struct fields can be projected)");
      }
      const int k = node->type->FieldIndex(part);
      if (k < 0) {
        return Status::InvalidArgument(path_, ": column '", name, "': no field '", part, "' in ",
                                       node->type->ToDdl());
      }
      nullable = nullable || node->type->field(k).nullable;
      node = &node->children[static_cast<size_t>(k)];
    }
    sel.node = node;
    sel.field = columnar::Field{name, node->type, nullable, "{}"};
    return sel;
  }

  static int CountLeaves(const LevelNode& node) {
    if (node.leaf >= 0) return 1;
    int n = 0;
    for (const LevelNode& child : node.children) n += CountLeaves(child);
    return n;
  }

  // Reads only the leaves below sel.node and assembles its column.
  Result<columnar::ColumnPtr> ReadStructPath(const RowGroup& group, const Selection& sel) {
    const ColumnDescriptor& d = descriptors_[static_cast<size_t>(sel.field_idx)];
    std::vector<LeafLevels> leaves(d.leaves.size());
    SILT_RETURN_NOT_OK(ReadLeaves(group, d, sel.node->first_leaf, CountLeaves(*sel.node), &leaves));
    SILT_ASSIGN_OR_RETURN_CTX(columnar::ColumnPtr column, AssembleNested(*sel.node, leaves),
                              "column '", sel.field.name, "'");
    if (column->length != group.num_rows) {
      return Status::Corruption("column '", sel.field.name, "' holds ", column->length,
                                " rows, its row group ", group.num_rows);
    }
    return column;
  }

  Result<std::string> ReadExactly(int64_t offset, int64_t length, const char* what) {
    SILT_ASSIGN_OR_RETURN(std::string bytes, file_->ReadAt(offset, length));
    if (static_cast<int64_t>(bytes.size()) != length) {
      return Status::Corruption(what, " at offset ", offset, " truncated (", length,
                                " bytes expected, ", bytes.size(), " read)");
    }
    return bytes;
  }

  Result<columnar::ColumnPtr> ReadColumn(const RowGroup& group, int field_idx) {
    const ColumnDescriptor& d = descriptors_[static_cast<size_t>(field_idx)];
    if (d.unsupported.ok() && d.field.type->id() == columnar::TypeId::kNull) {
      return columnar::MakeNullColumn(d.field.type, group.num_rows);
    }
    SILT_RETURN_NOT_OK(d.unsupported);
    if (d.flat) return ReadLeaf(group, d);
    if (d.levels == nullptr) {
      return Status::Corruption("column '", d.field.name, "' has no readable leaves");
    }
    std::vector<LeafLevels> leaves(d.leaves.size());
    SILT_RETURN_NOT_OK(
        ReadLeaves(group, d, 0, static_cast<int>(d.leaves.size()), &leaves));
    SILT_ASSIGN_OR_RETURN_CTX(columnar::ColumnPtr column, AssembleNested(*d.levels, leaves),
                              "column '", d.field.name, "'");
    if (column->length != group.num_rows) {
      return Status::Corruption("column '", d.field.name, "' holds ", column->length,
                                " rows, its row group ", group.num_rows);
    }
    return column;
  }

  // Reads leaves [first, first + count) of nested field `d` into `leaves`.
  Status ReadLeaves(const RowGroup& group, const ColumnDescriptor& d, int first, int count,
                    std::vector<LeafLevels>* leaves) {
    for (int leaf_idx = first; leaf_idx < first + count; ++leaf_idx) {
      const ColumnDescriptor& leaf = d.leaves[static_cast<size_t>(leaf_idx)];
      SILT_ASSIGN_OR_RETURN(columnar::ColumnPtr column, ReadLeaf(group, leaf));
      const ColumnChunkReader& reader = *readers_[static_cast<size_t>(leaf.first_leaf)];
      LeafLevels l;
      l.column = std::move(column);
      if (reader.nested()) {
        l.def = reader.definition_levels().data();
        l.rep = reader.repetition_levels().data();
        l.num_levels = static_cast<int64_t>(reader.definition_levels().size());
      } else {
        // A leaf with at most one definition level and no repetition (a
        // required struct's field): its levels follow from its validity.
        l.owned_def.resize(static_cast<size_t>(l.column->length));
        for (int64_t i = 0; i < l.column->length; ++i) {
          l.owned_def[static_cast<size_t>(i)] =
              static_cast<int16_t>(leaf.max_definition_level > 0 && l.column->IsValid(i) ? 1 : 0);
        }
        l.owned_rep.assign(static_cast<size_t>(l.column->length), 0);
        l.def = l.owned_def.data();
        l.rep = l.owned_rep.data();
        l.num_levels = l.column->length;
      }
      (*leaves)[static_cast<size_t>(leaf_idx)] = std::move(l);
    }
    return Status::OK();
  }

  // Reads the chunk of one leaf column (a flat field or a nested field's
  // leaf); the reader stays in readers_ with the chunk's levels.
  Result<columnar::ColumnPtr> ReadLeaf(const RowGroup& group, const ColumnDescriptor& d) {
    const ColumnChunk& chunk = group.columns[static_cast<size_t>(d.first_leaf)];
    if (chunk.file_path) {
      return Status::NotSupported("column '", d.field.name, "' stored in another file (",
                                  *chunk.file_path, ")");
    }
    if (!chunk.meta_data) {
      return Status::Corruption("column '", d.field.name, "' has no column metadata");
    }
    const ColumnMetaData& md = *chunk.meta_data;
    int64_t start = md.data_page_offset;
    if (md.dictionary_page_offset && *md.dictionary_page_offset > 0 &&
        *md.dictionary_page_offset < start) {
      start = *md.dictionary_page_offset;
    }
    const int64_t length = md.total_compressed_size;
    if (start < static_cast<int64_t>(kParquetMagic.size()) || length < 0 || start > footer_start_ ||
        length > footer_start_ - start) {
      return Status::Corruption("column '", d.field.name, "': column chunk [", start, ", +", length,
                                ") lies outside the file's data (", footer_start_, " bytes)");
    }
    auto& reader = readers_[static_cast<size_t>(d.first_leaf)];
    if (reader == nullptr || reader->codec() != md.codec) {
      SILT_ASSIGN_OR_RETURN(reader, ColumnChunkReader::Make(d, md.codec));
    }
    SILT_ASSIGN_OR_RETURN(std::string bytes, ReadExactly(start, length, "column chunk"));
    return reader->Read(bytes, group.num_rows);
  }

  const std::string path_;
  std::unique_ptr<fs::RandomAccessFile> file_;
  const int64_t size_;
  int64_t footer_start_ = 0;
  FileMetaData metadata_;
  std::vector<ColumnDescriptor> descriptors_;
  columnar::SchemaPtr schema_;
  // One per leaf column chunk, indexed by leaf ordinal.
  std::vector<std::unique_ptr<ColumnChunkReader>> readers_;
};

}  // namespace

Result<std::unique_ptr<ParquetFileReader>> ParquetFileReader::Open(fs::FileSystem* fs,
                                                                   const std::string& path) {
  SILT_ASSIGN_OR_RETURN(std::unique_ptr<fs::RandomAccessFile> file, fs->OpenForRead(path));
  SILT_ASSIGN_OR_RETURN_CTX(int64_t size, file->Size(), "reading ", path);
  auto reader = std::make_unique<FileReaderImpl>(path, std::move(file), size);
  SILT_RETURN_NOT_OK(reader->Init());
  return std::unique_ptr<ParquetFileReader>(std::move(reader));
}

}  // namespace silt::parquet
