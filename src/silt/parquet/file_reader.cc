#include "silt/parquet/file_reader.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>

#include "silt/columnar/builder.h"
#include "silt/parquet/bloom_filter.h"
#include "silt/parquet/column_reader.h"
#include "silt/parquet/nested_reader.h"
#include "silt/parquet/parquet_metadata.h"
#include "silt/parquet/parquet_schema.h"
#include "silt/parquet/pruning.h"
#include "silt/parquet/thrift_compact.h"

namespace silt::parquet {

namespace {

// Bytes read from the end of the file in the first request; most footers
// fit, so opening costs one ranged read.
constexpr int64_t kFooterReadSize = 64 * 1024;
// Bytes read for a bloom filter header when its length is not recorded.
constexpr int64_t kBloomHeaderReadSize = 64;

// Sorted, disjoint [begin, end) row ranges of a row group.
using RowRanges = std::vector<std::pair<int64_t, int64_t>>;

RowRanges Intersect(const RowRanges& a, const RowRanges& b) {
  RowRanges out;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const int64_t lo = std::max(a[i].first, b[j].first);
    const int64_t hi = std::min(a[i].second, b[j].second);
    if (lo < hi) out.emplace_back(lo, hi);
    if (a[i].second < b[j].second) {
      ++i;
    } else {
      ++j;
    }
  }
  return out;
}

int64_t CountRows(const RowRanges& r) {
  int64_t n = 0;
  for (const auto& [b, e] : r) n += e - b;
  return n;
}

// Rows `ranges` of `column`, whose row 0 is row `base` of the row group and
// which holds the rows of `covered` (sorted, disjoint; a superset of
// `ranges`) back to back.
columnar::ColumnPtr TakeRanges(const columnar::ColumnPtr& column, const RowRanges& covered,
                               const RowRanges& ranges) {
  auto single = std::make_shared<columnar::RecordBatch>();
  single->schema = columnar::DataType::Struct({columnar::Field{"c", column->type, true, "{}"}});
  single->num_rows = column->length;
  single->columns.push_back(column);
  std::vector<columnar::RecordBatchPtr> parts;
  size_t c = 0;
  int64_t covered_pos = 0;  // position of covered[c].first in `column`
  for (const auto& [b, e] : ranges) {
    while (c < covered.size() && covered[c].second <= b) {
      covered_pos += covered[c].second - covered[c].first;
      ++c;
    }
    // ranges lie inside covered; a range never spans two covered runs
    // because covered runs are separated by rows not in any range.
    const int64_t start = covered_pos + (b - covered[c].first);
    parts.push_back(columnar::SliceBatch(*single, start, e - b));
  }
  if (parts.size() == 1) return parts[0]->columns[0];
  return columnar::ConcatBatches(parts)->columns[0];
}

template <typename T>
Result<T> ParseThriftStruct(std::string_view bytes, const char* what) {
  thrift::CompactReader r(reinterpret_cast<const uint8_t*>(bytes.data()),
                          static_cast<int64_t>(bytes.size()));
  T value;
  value.Read(&r);
  if (!r.ok()) return Status::Corruption(what, ": ", r.error());
  return value;
}

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
    return ReadRowGroupRanges(index, columns, nullptr);
  }

  Result<std::optional<bool>> BloomFilterMightContain(
      int index, const std::string& column, const columnar::TypePtr& type,
      const columnar::PredicateValue& value) override {
    SILT_RETURN_NOT_OK(CheckRowGroupIndex(index));
    const ColumnDescriptor* leaf = FindLeaf(column);
    if (leaf == nullptr) {
      return Status::InvalidArgument(path_, ": no unrepeated primitive column '", column,
                                     "' in the file");
    }
    columnar::ColumnPredicate pred;
    pred.column = column;
    pred.type = type;
    pred.op = columnar::PredicateOp::kEq;
    const ColumnChunk& chunk = metadata_.row_groups[static_cast<size_t>(index)]
                                   .columns[static_cast<size_t>(leaf->first_leaf)];
    SILT_ASSIGN_OR_RETURN_CTX(std::optional<SplitBlockBloomFilter> filter, LoadBloomFilter(chunk),
                              path_, ": row group ", index, ", column '", column, "'");
    if (!filter) return std::optional<bool>();
    const std::optional<uint64_t> hash = BloomHashFor(*leaf, pred, value);
    if (!hash) return std::optional<bool>();
    return std::optional<bool>(filter->MightContain(*hash));
  }

  Result<std::vector<int>> SelectRowGroups(const columnar::Conjunction& predicate) override {
    std::vector<int> kept;
    for (int rg = 0; rg < num_row_groups(); ++rg) {
      SILT_ASSIGN_OR_RETURN(bool may, RowGroupMayMatch(rg, predicate));
      if (may) kept.push_back(rg);
    }
    return kept;
  }

  Result<columnar::RecordBatchPtr> ReadRowGroupPruned(
      int index, const std::vector<std::string>& columns,
      const columnar::Conjunction& predicate) override {
    SILT_RETURN_NOT_OK(CheckRowGroupIndex(index));
    const RowGroup& group = metadata_.row_groups[static_cast<size_t>(index)];
    RowRanges ranges{{0, group.num_rows}};
    if (group.num_rows == 0) return ReadRowGroupRanges(index, columns, nullptr);
    for (const columnar::ColumnPredicate& pred : predicate) {
      const ColumnDescriptor* leaf = FindLeaf(pred.column);
      if (leaf == nullptr) continue;
      SILT_ASSIGN_OR_RETURN_CTX(std::optional<RowRanges> kept, PageRanges(group, *leaf, pred),
                                path_, ": row group ", index, ", page index of column '",
                                pred.column, "'");
      if (kept) ranges = Intersect(ranges, *kept);
      if (ranges.empty()) break;
    }
    if (CountRows(ranges) == group.num_rows) return ReadRowGroupRanges(index, columns, nullptr);
    return ReadRowGroupRanges(index, columns, &ranges);
  }

 private:
  Status CheckRowGroupIndex(int index) const {
    if (index < 0 || index >= num_row_groups()) {
      return Status::InvalidArgument(path_, ": row group ", index, " out of range (the file has ",
                                     num_row_groups(), ")");
    }
    return Status::OK();
  }

  // Reads row group `index`; with `ranges`, only those rows (sorted,
  // disjoint, possibly none).
  Result<columnar::RecordBatchPtr> ReadRowGroupRanges(int index,
                                                      const std::vector<std::string>& columns,
                                                      const RowRanges* ranges) {
    SILT_RETURN_NOT_OK(CheckRowGroupIndex(index));
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
    batch->num_rows = ranges ? CountRows(*ranges) : group.num_rows;
    std::vector<columnar::Field> fields;
    for (const Selection& sel : selected) {
      fields.push_back(sel.node == nullptr ? schema_->field(sel.field_idx) : sel.field);
      if (ranges != nullptr && ranges->empty()) {
        batch->columns.push_back(columnar::ColumnBuilder(fields.back().type).Finish());
        continue;
      }
      if (sel.node == nullptr) {
        const ColumnDescriptor& d = descriptors_[static_cast<size_t>(sel.field_idx)];
        columnar::ColumnPtr column;
        if (ranges != nullptr && d.flat && d.unsupported.ok() &&
            !group.columns[static_cast<size_t>(d.first_leaf)].file_path &&
            group.columns[static_cast<size_t>(d.first_leaf)].offset_index_offset) {
          SILT_ASSIGN_OR_RETURN_CTX(column, ReadLeafPages(group, d, *ranges), path_, ": row group ",
                                    index);
        } else {
          SILT_ASSIGN_OR_RETURN_CTX(column, ReadColumn(group, sel.field_idx), path_, ": row group ",
                                    index);
          if (ranges != nullptr) column = TakeRanges(column, {{0, group.num_rows}}, *ranges);
        }
        batch->columns.push_back(std::move(column));
      } else {
        SILT_ASSIGN_OR_RETURN_CTX(columnar::ColumnPtr column, ReadStructPath(group, sel), path_,
                                  ": row group ", index);
        if (ranges != nullptr) column = TakeRanges(column, {{0, group.num_rows}}, *ranges);
        batch->columns.push_back(std::move(column));
      }
    }
    batch->schema = columns.empty() ? schema_ : columnar::DataType::Struct(std::move(fields));
    return columnar::RecordBatchPtr(std::move(batch));
  }

  // The unrepeated primitive leaf a predicate names: a flat top-level
  // column or a field reached through structs; null when there is none.
  const ColumnDescriptor* FindLeaf(const std::string& name) const {
    int i = schema_->FieldIndex(name);
    if (i >= 0) {
      const ColumnDescriptor& d = descriptors_[static_cast<size_t>(i)];
      if (!d.flat || !d.unsupported.ok() || d.max_repetition_level > 0) return nullptr;
      return &d;
    }
    size_t dot = name.find('.');
    if (dot == std::string::npos) return nullptr;
    i = schema_->FieldIndex(name.substr(0, dot));
    if (i < 0) return nullptr;
    const ColumnDescriptor& d = descriptors_[static_cast<size_t>(i)];
    if (!d.unsupported.ok() || d.levels == nullptr) return nullptr;
    const LevelNode* node = d.levels.get();
    while (dot != std::string::npos) {
      const size_t start = dot + 1;
      dot = name.find('.', start);
      const std::string part = name.substr(start, dot == std::string::npos ? dot : dot - start);
      if (node->type->id() != columnar::TypeId::kStruct) return nullptr;
      const int k = node->type->FieldIndex(part);
      if (k < 0) return nullptr;
      node = &node->children[static_cast<size_t>(k)];
    }
    if (node->leaf < 0 || static_cast<size_t>(node->leaf) >= d.leaves.size()) return nullptr;
    const ColumnDescriptor& leaf = d.leaves[static_cast<size_t>(node->leaf)];
    if (!leaf.flat || leaf.max_repetition_level > 0) return nullptr;
    return &leaf;
  }

  // The chunk's bloom filter, or nullopt when it has none.
  Result<std::optional<SplitBlockBloomFilter>> LoadBloomFilter(const ColumnChunk& chunk) {
    if (!chunk.meta_data || !chunk.meta_data->bloom_filter_offset) {
      return std::optional<SplitBlockBloomFilter>();
    }
    const int64_t offset = *chunk.meta_data->bloom_filter_offset;
    if (offset < static_cast<int64_t>(kParquetMagic.size()) || offset >= footer_start_) {
      return Status::Corruption("bloom filter offset ", offset, " lies outside the file's data");
    }
    const int64_t available = footer_start_ - offset;
    std::string bytes;
    if (chunk.meta_data->bloom_filter_length && *chunk.meta_data->bloom_filter_length > 0) {
      const int64_t length = *chunk.meta_data->bloom_filter_length;
      if (length > available) {
        return Status::Corruption("bloom filter of ", length, " bytes at offset ", offset,
                                  " runs past the file's data");
      }
      SILT_ASSIGN_OR_RETURN(bytes, ReadExactly(offset, length, "bloom filter"));
    } else {
      SILT_ASSIGN_OR_RETURN(bytes, ReadExactly(offset, std::min(available, kBloomHeaderReadSize),
                                               "bloom filter header"));
      int64_t num_bytes = 0, header = 0;
      SILT_RETURN_NOT_OK(SplitBlockBloomFilter::ParseHeader(bytes, &num_bytes, &header));
      if (num_bytes > available - header) {
        return Status::Corruption("bloom filter of ", num_bytes, " bytes at offset ", offset,
                                  " runs past the file's data");
      }
      SILT_ASSIGN_OR_RETURN(bytes, ReadExactly(offset, header + num_bytes, "bloom filter"));
    }
    SILT_ASSIGN_OR_RETURN(SplitBlockBloomFilter filter, SplitBlockBloomFilter::Parse(bytes));
    return std::optional<SplitBlockBloomFilter>(std::move(filter));
  }

  Result<bool> RowGroupMayMatch(int rg, const columnar::Conjunction& predicate) {
    const RowGroup& group = metadata_.row_groups[static_cast<size_t>(rg)];
    for (const columnar::ColumnPredicate& pred : predicate) {
      const ColumnDescriptor* leaf = FindLeaf(pred.column);
      if (leaf == nullptr) continue;
      const ColumnChunk& chunk = group.columns[static_cast<size_t>(leaf->first_leaf)];
      if (!chunk.meta_data) continue;
      const ColumnMetaData& md = *chunk.meta_data;
      const LeafFacts facts =
          ChunkFacts(*leaf, md.statistics ? &*md.statistics : nullptr, md.num_values);
      if (!MayMatch(*leaf, pred, facts)) return false;
      if ((pred.op == columnar::PredicateOp::kEq || pred.op == columnar::PredicateOp::kIn) &&
          md.bloom_filter_offset && !pred.values.empty()) {
        SILT_ASSIGN_OR_RETURN_CTX(std::optional<SplitBlockBloomFilter> filter,
                                  LoadBloomFilter(chunk), path_, ": row group ", rg, ", column '",
                                  pred.column, "'");
        if (!filter) continue;
        bool any = false;
        for (const columnar::PredicateValue& v : pred.values) {
          const std::optional<uint64_t> hash = BloomHashFor(*leaf, pred, v);
          if (!hash || filter->MightContain(*hash)) {
            any = true;
            break;
          }
        }
        if (!any) return false;
      }
    }
    return true;
  }

  Result<OffsetIndex> LoadOffsetIndex(const ColumnChunk& chunk, int64_t num_rows) {
    const int64_t offset = *chunk.offset_index_offset;
    const int64_t length = chunk.offset_index_length.value_or(-1);
    if (offset < 4 || length <= 0 || offset >= size_ || length > size_ - offset) {
      return Status::Corruption("offset index [", offset, ", +", length, ") lies outside the file");
    }
    SILT_ASSIGN_OR_RETURN(std::string bytes, ReadExactly(offset, length, "offset index"));
    SILT_ASSIGN_OR_RETURN(OffsetIndex oi, ParseThriftStruct<OffsetIndex>(bytes, "offset index"));
    int64_t prev = -1;
    for (const PageLocation& loc : oi.page_locations) {
      if (loc.first_row_index <= prev || loc.first_row_index >= num_rows ||
          loc.compressed_page_size <= 0 || loc.offset < 4 || loc.offset >= footer_start_ ||
          loc.compressed_page_size > footer_start_ - loc.offset) {
        return Status::Corruption("offset index entry (offset ", loc.offset, ", size ",
                                  loc.compressed_page_size, ", first row ", loc.first_row_index,
                                  ") is inconsistent");
      }
      prev = loc.first_row_index;
    }
    if (oi.page_locations.empty() || oi.page_locations[0].first_row_index != 0) {
      return Status::Corruption("offset index does not start at row 0");
    }
    return oi;
  }

  // Row ranges of the pages of `leaf` the column index cannot rule out for
  // `pred`; nullopt when the chunk has no usable page index.
  Result<std::optional<RowRanges>> PageRanges(const RowGroup& group, const ColumnDescriptor& leaf,
                                              const columnar::ColumnPredicate& pred) {
    const ColumnChunk& chunk = group.columns[static_cast<size_t>(leaf.first_leaf)];
    if (!chunk.column_index_offset || !chunk.offset_index_offset) return std::optional<RowRanges>();
    SILT_ASSIGN_OR_RETURN(OffsetIndex oi, LoadOffsetIndex(chunk, group.num_rows));
    const int64_t offset = *chunk.column_index_offset;
    const int64_t length = chunk.column_index_length.value_or(-1);
    if (offset < 4 || length <= 0 || offset >= size_ || length > size_ - offset) {
      return Status::Corruption("column index [", offset, ", +", length, ") lies outside the file");
    }
    SILT_ASSIGN_OR_RETURN(std::string bytes, ReadExactly(offset, length, "column index"));
    SILT_ASSIGN_OR_RETURN(ColumnIndex ci, ParseThriftStruct<ColumnIndex>(bytes, "column index"));
    const size_t pages = oi.page_locations.size();
    if (ci.null_pages.size() != pages || ci.min_values.size() != pages ||
        ci.max_values.size() != pages ||
        (!ci.null_counts.empty() && ci.null_counts.size() != pages)) {
      return Status::Corruption("column index lists ", ci.null_pages.size(),
                                " pages, the offset index ", pages);
    }
    RowRanges kept;
    for (size_t p = 0; p < pages; ++p) {
      const int64_t begin = oi.page_locations[p].first_row_index;
      const int64_t end = p + 1 < pages ? oi.page_locations[p + 1].first_row_index : group.num_rows;
      LeafFacts facts;
      facts.all_null = ci.null_pages[p];
      if (!facts.all_null) {
        facts.min = &ci.min_values[p];
        facts.max = &ci.max_values[p];
      }
      if (!ci.null_counts.empty()) facts.null_count = ci.null_counts[p];
      facts.num_values = end - begin;
      if (!MayMatch(leaf, pred, facts)) continue;
      if (!kept.empty() && kept.back().second == begin) {
        kept.back().second = end;
      } else {
        kept.emplace_back(begin, end);
      }
    }
    return std::optional<RowRanges>(std::move(kept));
  }

  // Reads the pages of flat column `d` that overlap `ranges` (and its
  // dictionary page) and returns exactly the rows of `ranges`.
  Result<columnar::ColumnPtr> ReadLeafPages(const RowGroup& group, const ColumnDescriptor& d,
                                            const RowRanges& ranges) {
    const ColumnChunk& chunk = group.columns[static_cast<size_t>(d.first_leaf)];
    SILT_ASSIGN_OR_RETURN_CTX(OffsetIndex oi, LoadOffsetIndex(chunk, group.num_rows), "column '",
                              d.field.name, "': offset index");
    SILT_ASSIGN_OR_RETURN(int64_t start, ChunkStart(chunk, d));
    const std::vector<PageLocation>& locs = oi.page_locations;
    // Pages overlapping the ranges, their rows, and the byte runs to read.
    RowRanges covered;
    std::vector<std::pair<int64_t, int64_t>> byte_runs;                         // [offset, end)
    if (locs[0].offset > start) byte_runs.emplace_back(start, locs[0].offset);  // dictionary
    size_t r = 0;
    for (size_t p = 0; p < locs.size(); ++p) {
      const int64_t begin = locs[p].first_row_index;
      const int64_t end = p + 1 < locs.size() ? locs[p + 1].first_row_index : group.num_rows;
      while (r < ranges.size() && ranges[r].second <= begin) ++r;
      if (r == ranges.size()) break;
      if (ranges[r].first >= end) continue;
      if (!covered.empty() && covered.back().second == begin) {
        covered.back().second = end;
      } else {
        covered.emplace_back(begin, end);
      }
      const int64_t b = locs[p].offset;
      const int64_t e = b + locs[p].compressed_page_size;
      if (!byte_runs.empty() && byte_runs.back().second == b) {
        byte_runs.back().second = e;
      } else {
        byte_runs.emplace_back(b, e);
      }
    }
    std::string bytes;
    for (const auto& [b, e] : byte_runs) {
      SILT_ASSIGN_OR_RETURN(std::string part, ReadExactly(b, e - b, "column pages"));
      bytes += part;
    }
    SILT_ASSIGN_OR_RETURN(ColumnChunkReader * reader, ReaderFor(d, *chunk.meta_data));
    SILT_ASSIGN_OR_RETURN_CTX(columnar::ColumnPtr column, reader->Read(bytes, CountRows(covered)),
                              "column '", d.field.name, "'");
    return TakeRanges(column, covered, ranges);
  }

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
    SILT_RETURN_NOT_OK(ReadLeaves(group, d, 0, static_cast<int>(d.leaves.size()), &leaves));
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
    SILT_ASSIGN_OR_RETURN(int64_t start, ChunkStart(chunk, d));
    const ColumnMetaData& md = *chunk.meta_data;
    SILT_ASSIGN_OR_RETURN(ColumnChunkReader * reader, ReaderFor(d, md));
    SILT_ASSIGN_OR_RETURN(std::string bytes,
                          ReadExactly(start, md.total_compressed_size, "column chunk"));
    return reader->Read(bytes, group.num_rows, start);
  }

  // The first byte of a chunk (its dictionary page, else its first data
  // page), checked to lie with the whole chunk inside the file's data.
  Result<int64_t> ChunkStart(const ColumnChunk& chunk, const ColumnDescriptor& d) const {
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
    return start;
  }

  // The (cached) chunk reader of leaf `d`.
  Result<ColumnChunkReader*> ReaderFor(const ColumnDescriptor& d, const ColumnMetaData& md) {
    auto& reader = readers_[static_cast<size_t>(d.first_leaf)];
    if (reader == nullptr || reader->codec() != md.codec) {
      SILT_ASSIGN_OR_RETURN(reader, ColumnChunkReader::Make(d, md.codec));
    }
    return reader.get();
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
