#include "silt/parquet/row_group_copy.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

namespace silt::parquet {

namespace {

constexpr std::string_view kMagic = "PAR1";
constexpr int64_t kTrailerSize = 8;  // footer length + magic

// Where a column chunk's pages start: its dictionary page when it has one
// (written before the data pages), else its first data page.
int64_t ChunkStart(const ColumnMetaData& m) {
  if (m.dictionary_page_offset && *m.dictionary_page_offset > 0 &&
      *m.dictionary_page_offset < m.data_page_offset) {
    return *m.dictionary_page_offset;
  }
  return m.data_page_offset;
}

std::string ColumnName(const ColumnMetaData& m) {
  std::string name;
  for (const std::string& part : m.path_in_schema) {
    if (!name.empty()) name += '.';
    name += part;
  }
  return name;
}

}  // namespace

Result<FileMetaData> ReadFooter(fs::RandomAccessFile* file, int64_t size, const std::string& path) {
  if (size < static_cast<int64_t>(kMagic.size()) + kTrailerSize) {
    return Status::Corruption(path, ": not a Parquet file (", size, " bytes)");
  }
  SILT_ASSIGN_OR_RETURN_CTX(std::string tail, file->ReadAt(size - kTrailerSize, kTrailerSize),
                            "reading the footer of ", path);
  if (static_cast<int64_t>(tail.size()) != kTrailerSize || tail.substr(4) != kMagic) {
    return Status::Corruption(path, ": not a Parquet file (no PAR1 magic at its end)");
  }
  uint32_t footer_len;
  std::memcpy(&footer_len, tail.data(), 4);
  if (static_cast<int64_t>(footer_len) >
      size - kTrailerSize - static_cast<int64_t>(kMagic.size())) {
    return Status::Corruption(path, ": footer length ", footer_len, " exceeds the file size ",
                              size);
  }
  const int64_t footer_start = size - kTrailerSize - footer_len;
  SILT_ASSIGN_OR_RETURN_CTX(std::string footer, file->ReadAt(footer_start, footer_len),
                            "reading the footer of ", path);
  if (footer.size() != footer_len) {
    return Status::Corruption(path, ": footer truncated at offset ", footer_start);
  }
  SILT_ASSIGN_OR_RETURN_CTX(FileMetaData meta, ParseFileMetaData(footer), path, ": invalid footer");
  if (meta.encrypted) return Status::Corruption(path, ": encrypted footer");
  return meta;
}

RowGroupCopier::RowGroupCopier(std::unique_ptr<fs::WritableFile> out, std::string path)
    : out_(std::move(out)), path_(std::move(path)) {}

RowGroupCopier::~RowGroupCopier() {
  if (!closed_ && out_ != nullptr) (void)out_->Abort();
}

Result<std::unique_ptr<RowGroupCopier>> RowGroupCopier::Open(fs::FileSystem* fs,
                                                             const std::string& path) {
  SILT_ASSIGN_OR_RETURN_CTX(std::unique_ptr<fs::WritableFile> out, fs->OpenForWrite(path),
                            "writing ", path);
  std::unique_ptr<RowGroupCopier> copier(new RowGroupCopier(std::move(out), path));
  SILT_RETURN_NOT_OK_CTX(copier->out_->Append(kMagic), "writing ", path);
  copier->position_ = static_cast<int64_t>(kMagic.size());
  return copier;
}

Status RowGroupCopier::CopyRange(fs::RandomAccessFile* source, int64_t offset, int64_t length,
                                 const std::string& source_path) {
  while (length > 0) {
    const int64_t n = std::min<int64_t>(length, kCopyChunkBytes);
    SILT_ASSIGN_OR_RETURN_CTX(std::string bytes, source->ReadAt(offset, n), "reading ",
                              source_path);
    if (static_cast<int64_t>(bytes.size()) != n) {
      return Status::Corruption(source_path, ": column chunk bytes at offset ", offset,
                                " run past the end of the file");
    }
    SILT_RETURN_NOT_OK_CTX(out_->Append(bytes), "writing ", path_);
    position_ += n;
    offset += n;
    length -= n;
  }
  return Status::OK();
}

Status RowGroupCopier::CheckSchema(const FileMetaData& meta, const std::string& source_path) {
  if (!has_schema_) {
    footer_.version = meta.version;
    footer_.schema = meta.schema;
    footer_.key_value_metadata = meta.key_value_metadata;
    footer_.created_by = meta.created_by;
    footer_.column_orders = meta.column_orders;
    has_schema_ = true;
  } else {
    if (meta.schema.size() != footer_.schema.size()) {
      return Status::InvalidArgument(source_path, " has ", meta.schema.size(), " schema elements, ",
                                     path_, " ", footer_.schema.size());
    }
    for (size_t i = 0; i < meta.schema.size(); ++i) {
      if (SerializeThrift(meta.schema[i]) != SerializeThrift(footer_.schema[i])) {
        return Status::InvalidArgument(source_path, ": schema element ", i, " (",
                                       meta.schema[i].name, ") differs from that of ", path_);
      }
    }
  }
  return Status::OK();
}

std::optional<int16_t> RowGroupCopier::NextOrdinal() const {
  const size_t ordinal = footer_.row_groups.size();
  if (ordinal <= static_cast<size_t>(std::numeric_limits<int16_t>::max())) {
    return static_cast<int16_t>(ordinal);
  }
  return std::nullopt;
}

Status RowGroupCopier::Append(fs::RandomAccessFile* source, const FileMetaData& meta, size_t first,
                              size_t last, const std::string& source_path) {
  if (closed_) return Status::InvalidArgument("RowGroupCopier: ", path_, " is closed");
  if (first > last || last > meta.row_groups.size()) {
    return Status::InvalidArgument("row groups [", first, ", ", last, ") of ", source_path,
                                   ", which has ", meta.row_groups.size());
  }
  SILT_RETURN_NOT_OK(CheckSchema(meta, source_path));
  for (size_t g = first; g < last; ++g) {
    RowGroup group = meta.row_groups[g];
    int64_t group_start = -1;
    int64_t compressed = 0;
    for (ColumnChunk& chunk : group.columns) {
      if (!chunk.meta_data || chunk.file_path) {
        return Status::InvalidArgument(source_path, ": row group ", g,
                                       " has a column chunk without metadata or in another file");
      }
      ColumnMetaData& m = *chunk.meta_data;
      const int64_t start = ChunkStart(m);
      const int64_t length = m.total_compressed_size;
      if (start < static_cast<int64_t>(kMagic.size()) || length < 0) {
        return Status::Corruption(source_path, ": row group ", g, " column ", ColumnName(m),
                                  " starts at offset ", start, " with ", length, " bytes");
      }
      const int64_t shift = position_ - start;
      SILT_RETURN_NOT_OK_CTX(CopyRange(source, start, length, source_path), "row group ", g,
                             " column ", ColumnName(m));
      m.data_page_offset += shift;
      if (m.dictionary_page_offset) *m.dictionary_page_offset += shift;
      if (m.index_page_offset) *m.index_page_offset += shift;
      m.bloom_filter_offset.reset();
      m.bloom_filter_length.reset();
      if (chunk.file_offset != 0) chunk.file_offset += shift;
      chunk.offset_index_offset.reset();
      chunk.offset_index_length.reset();
      chunk.column_index_offset.reset();
      chunk.column_index_length.reset();
      if (group_start < 0) group_start = start + shift;
      compressed += length;
    }
    if (group_start >= 0) group.file_offset = group_start;
    group.total_compressed_size = compressed;
    group.ordinal = NextOrdinal();
    footer_.num_rows += group.num_rows;
    footer_.row_groups.push_back(std::move(group));
  }
  return Status::OK();
}

Status RowGroupCopier::AppendMerged(const std::vector<Part>& parts) {
  if (closed_) return Status::InvalidArgument("RowGroupCopier: ", path_, " is closed");
  if (parts.empty()) return Status::InvalidArgument("RowGroupCopier: no row groups to merge");
  for (const Part& part : parts) {
    if (part.group >= part.meta->row_groups.size()) {
      return Status::InvalidArgument("row group ", part.group, " of ", *part.source_path,
                                     ", which has ", part.meta->row_groups.size());
    }
    SILT_RETURN_NOT_OK(CheckSchema(*part.meta, *part.source_path));
  }
  const RowGroup& first = parts[0].meta->row_groups[parts[0].group];
  RowGroup group;
  group.columns.reserve(first.columns.size());
  for (const Part& part : parts) {
    const RowGroup& g = part.meta->row_groups[part.group];
    if (g.columns.size() != first.columns.size()) {
      return Status::InvalidArgument(*part.source_path, ": row group ", part.group, " has ",
                                     g.columns.size(), " column chunks, not ",
                                     first.columns.size());
    }
    group.num_rows += g.num_rows;
    group.total_byte_size += g.total_byte_size;
  }
  int64_t group_compressed = 0;
  for (size_t c = 0; c < first.columns.size(); ++c) {
    ColumnChunk chunk;
    ColumnMetaData& m = chunk.meta_data.emplace();
    bool null_counts = true;
    bool encoding_stats = true;
    for (size_t p = 0; p < parts.size(); ++p) {
      const Part& part = parts[p];
      const ColumnChunk& src = part.meta->row_groups[part.group].columns[c];
      if (!src.meta_data || src.file_path) {
        return Status::InvalidArgument(*part.source_path, ": row group ", part.group,
                                       " has a column chunk without metadata or in another file");
      }
      const ColumnMetaData& s = *src.meta_data;
      if ((s.dictionary_page_offset && *s.dictionary_page_offset > 0) || s.index_page_offset) {
        return Status::InvalidArgument(*part.source_path, ": row group ", part.group, " column ",
                                       ColumnName(s),
                                       " has a dictionary or index page: it cannot be merged");
      }
      if (p == 0) {
        m.type = s.type;
        m.path_in_schema = s.path_in_schema;
        m.codec = s.codec;
        m.key_value_metadata = s.key_value_metadata;
        m.data_page_offset = position_;
      } else if (s.type != m.type || s.codec != m.codec) {
        return Status::InvalidArgument(*part.source_path, ": row group ", part.group, " column ",
                                       ColumnName(s), " has another type or codec than ",
                                       *parts[0].source_path, "'s");
      }
      const int64_t start = s.data_page_offset;
      const int64_t length = s.total_compressed_size;
      if (start < static_cast<int64_t>(kMagic.size()) || length < 0) {
        return Status::Corruption(*part.source_path, ": row group ", part.group, " column ",
                                  ColumnName(s), " starts at offset ", start, " with ", length,
                                  " bytes");
      }
      SILT_RETURN_NOT_OK_CTX(CopyRange(part.source, start, length, *part.source_path), "row group ",
                             part.group, " column ", ColumnName(s));
      m.num_values += s.num_values;
      m.total_compressed_size += length;
      m.total_uncompressed_size += s.total_uncompressed_size;
      for (Encoding e : s.encodings) {
        if (std::find(m.encodings.begin(), m.encodings.end(), e) == m.encodings.end()) {
          m.encodings.push_back(e);
        }
      }
      if (s.encoding_stats.empty()) encoding_stats = false;
      for (const PageEncodingStats& es : s.encoding_stats) {
        auto same = std::find_if(m.encoding_stats.begin(), m.encoding_stats.end(),
                                 [&](const PageEncodingStats& x) {
                                   return x.page_type == es.page_type && x.encoding == es.encoding;
                                 });
        if (same == m.encoding_stats.end()) {
          m.encoding_stats.push_back(es);
        } else {
          same->count += es.count;
        }
      }
      if (!s.statistics || !s.statistics->null_count) {
        null_counts = false;
      } else if (null_counts) {
        if (!m.statistics) m.statistics.emplace().null_count = 0;
        *m.statistics->null_count += *s.statistics->null_count;
      }
    }
    if (!encoding_stats) m.encoding_stats.clear();
    if (!null_counts) m.statistics.reset();
    chunk.file_offset = m.data_page_offset;
    if (c == 0) group.file_offset = m.data_page_offset;
    group_compressed += m.total_compressed_size;
    group.columns.push_back(std::move(chunk));
  }
  group.total_compressed_size = group_compressed;
  group.ordinal = NextOrdinal();
  footer_.num_rows += group.num_rows;
  footer_.row_groups.push_back(std::move(group));
  return Status::OK();
}

Result<int64_t> RowGroupCopier::Close() {
  if (closed_) return Status::InvalidArgument("RowGroupCopier: ", path_, " is closed");
  if (!has_schema_) {
    return Status::InvalidArgument("RowGroupCopier: nothing was appended to ", path_);
  }
  std::string footer = SerializeThrift(footer_);
  const uint32_t footer_len = static_cast<uint32_t>(footer.size());
  footer.append(reinterpret_cast<const char*>(&footer_len), 4);
  footer.append(kMagic);
  SILT_RETURN_NOT_OK_CTX(out_->Append(footer), "writing the footer of ", path_);
  position_ += static_cast<int64_t>(footer.size());
  closed_ = true;
  SILT_RETURN_NOT_OK_CTX(out_->Close(), "publishing ", path_);
  return position_;
}

Status RowGroupCopier::Abort() {
  if (closed_) return Status::OK();
  closed_ = true;
  return out_->Abort();
}

}  // namespace silt::parquet
