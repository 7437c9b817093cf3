// RowGroupCopier: row groups of two files copied into a third read back as
// the same rows, their pages byte for byte at new offsets.
#include "silt/parquet/row_group_copy.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "silt/columnar/builder.h"
#include "silt/parquet/file_reader.h"
#include "silt/parquet/file_writer.h"
#include "silt/testing/gtest_util.h"

namespace silt::parquet {
namespace {

using columnar::ColumnBuilder;
using columnar::DataType;
using columnar::Field;

columnar::SchemaPtr Schema() {
  return DataType::Struct({Field{"id", DataType::Long()}, Field{"name", DataType::String()},
                           Field{"s", DataType::Struct({Field{"k", DataType::String()}})}});
}

// Writes rows [first, first + n) in row groups of `per_group` rows.
void WriteFile(fs::FileSystem* fs, const std::string& path, int64_t first, int64_t n,
               int64_t per_group, bool dictionary = true) {
  WriterOptions options;
  options.row_group_bytes = 1;  // every batch ends a row group
  options.enable_dictionary = dictionary;
  options.page_bytes = 256;  // several pages per column chunk
  auto writer = ParquetFileWriter::Open(fs, path, Schema(), options).ValueOrDie();
  for (int64_t start = first; start < first + n; start += per_group) {
    ColumnBuilder id(DataType::Long());
    ColumnBuilder name(DataType::String());
    ColumnBuilder s(Schema()->field(2).type);
    const int64_t end = std::min(first + n, start + per_group);
    for (int64_t i = start; i < end; ++i) {
      id.Append<int64_t>(i);
      if (i % 5 == 0) {
        name.AppendNull();
        s.AppendNull();
      } else {
        name.AppendString("name-" + std::to_string(i % 7));  // dictionary-encoded
        s.child(0)->AppendString("k" + std::to_string(i));
        s.AppendValid();
      }
    }
    columnar::RecordBatch batch;
    batch.schema = Schema();
    batch.num_rows = end - start;
    batch.columns = {id.Finish(), name.Finish(), s.Finish()};
    ASSERT_OK(writer->WriteBatch(batch));
  }
  ASSERT_OK(writer->Close().status());
}

std::vector<int64_t> ReadIds(fs::FileSystem* fs, const std::string& path,
                             std::vector<std::string>* names) {
  auto reader = ParquetFileReader::Open(fs, path).ValueOrDie();
  std::vector<int64_t> ids;
  for (int g = 0; g < reader->num_row_groups(); ++g) {
    auto batch = reader->ReadRowGroup(g).ValueOrDie();
    const auto& id = batch->columns[0];
    const auto& name = batch->columns[1];
    const auto& s = batch->columns[2];
    for (int64_t i = 0; i < batch->num_rows; ++i) {
      ids.push_back(id->Value<int64_t>(i));
      names->push_back(name->IsNull(i) ? "<null>" : std::string(name->StringValue(i)));
      if (!s->IsNull(i)) {
        EXPECT_EQ(s->children[0]->StringValue(i), "k" + std::to_string(ids.back()));
      } else {
        EXPECT_EQ(ids.back() % 5, 0);
      }
    }
  }
  return ids;
}

struct Opened {
  std::unique_ptr<fs::RandomAccessFile> file;
  FileMetaData meta;
};

Opened OpenFooter(fs::FileSystem* fs, const std::string& path) {
  Opened o;
  o.file = fs->OpenForRead(path).ValueOrDie();
  o.meta = ReadFooter(o.file.get(), o.file->Size().ValueOrDie(), path).ValueOrDie();
  return o;
}

TEST(RowGroupCopierTest, CopiedRowGroupsReadBackAsWrittenWithTheirPagesUnchanged) {
  auto fs = fs::MakeMemoryFileSystem();
  WriteFile(fs.get(), "/a.parquet", 0, 300, 100);   // 3 row groups
  WriteFile(fs.get(), "/b.parquet", 1000, 50, 50);  // 1 row group
  Opened a = OpenFooter(fs.get(), "/a.parquet");
  Opened b = OpenFooter(fs.get(), "/b.parquet");
  ASSERT_EQ(a.meta.row_groups.size(), 3u);
  ASSERT_EQ(b.meta.row_groups.size(), 1u);

  ASSERT_OK_AND_ASSIGN(auto copier, RowGroupCopier::Open(fs.get(), "/c.parquet"));
  ASSERT_OK(copier->Append(a.file.get(), a.meta, 0, 2, "/a.parquet"));  // rows 0..199
  ASSERT_OK(copier->Append(b.file.get(), b.meta, 0, 1, "/b.parquet"));  // rows 1000..1049
  EXPECT_EQ(copier->num_rows(), 250);
  EXPECT_EQ(copier->num_row_groups(), 3u);
  ASSERT_OK_AND_ASSIGN(int64_t size, copier->Close());
  ASSERT_OK_AND_ASSIGN(fs::FileInfo info, fs->GetFileInfo("/c.parquet"));
  EXPECT_EQ(info.size, size);

  std::vector<std::string> names;
  std::vector<int64_t> ids = ReadIds(fs.get(), "/c.parquet", &names);
  std::vector<std::string> a_names;
  std::vector<int64_t> a_ids = ReadIds(fs.get(), "/a.parquet", &a_names);
  std::vector<std::string> b_names;
  std::vector<int64_t> b_ids = ReadIds(fs.get(), "/b.parquet", &b_names);
  std::vector<int64_t> expected_ids(a_ids.begin(), a_ids.begin() + 200);
  expected_ids.insert(expected_ids.end(), b_ids.begin(), b_ids.end());
  std::vector<std::string> expected_names(a_names.begin(), a_names.begin() + 200);
  expected_names.insert(expected_names.end(), b_names.begin(), b_names.end());
  EXPECT_EQ(ids, expected_ids);
  EXPECT_EQ(names, expected_names);

  // Every column chunk's bytes are the source's, at the new offsets.
  Opened c = OpenFooter(fs.get(), "/c.parquet");
  ASSERT_EQ(c.meta.row_groups.size(), 3u);
  EXPECT_EQ(c.meta.num_rows, 250);
  const std::vector<std::pair<const Opened*, size_t>> sources = {{&a, 0}, {&a, 1}, {&b, 0}};
  for (size_t g = 0; g < 3; ++g) {
    const RowGroup& from = sources[g].first->meta.row_groups[sources[g].second];
    const RowGroup& to = c.meta.row_groups[g];
    ASSERT_EQ(from.columns.size(), to.columns.size());
    EXPECT_EQ(to.ordinal, static_cast<int16_t>(g));
    for (size_t col = 0; col < from.columns.size(); ++col) {
      const ColumnMetaData& fm = *from.columns[col].meta_data;
      const ColumnMetaData& tm = *to.columns[col].meta_data;
      const int64_t fstart = fm.dictionary_page_offset.value_or(fm.data_page_offset);
      const int64_t tstart = tm.dictionary_page_offset.value_or(tm.data_page_offset);
      EXPECT_EQ(tm.data_page_offset - tstart, fm.data_page_offset - fstart);
      EXPECT_EQ(tm.total_compressed_size, fm.total_compressed_size);
      EXPECT_EQ(SerializeThrift(*tm.statistics), SerializeThrift(*fm.statistics));
      EXPECT_EQ(sources[g].first->file->ReadAt(fstart, fm.total_compressed_size).ValueOrDie(),
                c.file->ReadAt(tstart, tm.total_compressed_size).ValueOrDie());
      EXPECT_FALSE(to.columns[col].offset_index_offset.has_value());
    }
  }
}

// AppendMerged: row groups of two files (without dictionaries) copied as one
// row group read back as the rows of both, each column chunk the pages of
// the parts' chunks in turn; a group with a dictionary page is refused.
TEST(RowGroupCopierTest, MergedRowGroupsReadBackAsOneGroupOfTheirPages) {
  auto fs = fs::MakeMemoryFileSystem();
  WriteFile(fs.get(), "/a.parquet", 0, 300, 100, /*dictionary=*/false);  // 3 row groups
  WriteFile(fs.get(), "/b.parquet", 1000, 50, 50, /*dictionary=*/false);
  WriteFile(fs.get(), "/d.parquet", 2000, 10, 10, /*dictionary=*/true);
  Opened a = OpenFooter(fs.get(), "/a.parquet");
  Opened b = OpenFooter(fs.get(), "/b.parquet");
  Opened d = OpenFooter(fs.get(), "/d.parquet");
  const std::string a_path = "/a.parquet";
  const std::string b_path = "/b.parquet";
  const std::string d_path = "/d.parquet";

  ASSERT_OK_AND_ASSIGN(auto copier, RowGroupCopier::Open(fs.get(), "/c.parquet"));
  ASSERT_OK(copier->Append(a.file.get(), a.meta, 0, 1, a_path));  // rows 0..99
  ASSERT_OK(copier->AppendMerged({{a.file.get(), &a.meta, 1, &a_path},
                                  {a.file.get(), &a.meta, 2, &a_path},
                                  {b.file.get(), &b.meta, 0, &b_path}}));  // 100..299, 1000..
  EXPECT_EQ(copier->num_rows(), 350);
  EXPECT_EQ(copier->num_row_groups(), 2u);
  // A dictionary page cannot follow data pages in a chunk; an empty merge.
  Status st = copier->AppendMerged(
      {{a.file.get(), &a.meta, 0, &a_path}, {d.file.get(), &d.meta, 0, &d_path}});
  EXPECT_TRUE(st.IsInvalidArgument()) << st.ToString();
  EXPECT_TRUE(copier->AppendMerged({}).IsInvalidArgument());
  EXPECT_TRUE(copier->AppendMerged({{b.file.get(), &b.meta, 1, &b_path}}).IsInvalidArgument());
  ASSERT_OK(copier->Close().status());

  std::vector<std::string> names;
  std::vector<int64_t> ids = ReadIds(fs.get(), "/c.parquet", &names);
  std::vector<std::string> expected_names;
  std::vector<int64_t> expected_ids = ReadIds(fs.get(), "/a.parquet", &expected_names);
  std::vector<int64_t> b_ids = ReadIds(fs.get(), "/b.parquet", &expected_names);
  expected_ids.insert(expected_ids.end(), b_ids.begin(), b_ids.end());
  EXPECT_EQ(ids, expected_ids);
  EXPECT_EQ(names, expected_names);

  Opened c = OpenFooter(fs.get(), "/c.parquet");
  ASSERT_EQ(c.meta.row_groups.size(), 2u);
  const RowGroup& merged = c.meta.row_groups[1];
  EXPECT_EQ(merged.num_rows, 250);
  EXPECT_EQ(merged.ordinal, static_cast<int16_t>(1));
  const std::vector<const RowGroup*> parts = {&a.meta.row_groups[1], &a.meta.row_groups[2],
                                              &b.meta.row_groups[0]};
  const std::vector<const Opened*> files = {&a, &a, &b};
  int64_t group_bytes = 0;
  for (size_t col = 0; col < merged.columns.size(); ++col) {
    const ColumnMetaData& tm = *merged.columns[col].meta_data;
    std::string pages;
    int64_t values = 0;
    int64_t nulls = 0;
    for (size_t p = 0; p < parts.size(); ++p) {
      const ColumnMetaData& fm = *parts[p]->columns[col].meta_data;
      EXPECT_FALSE(fm.dictionary_page_offset.has_value());
      pages += files[p]->file->ReadAt(fm.data_page_offset, fm.total_compressed_size).ValueOrDie();
      values += fm.num_values;
      nulls += *fm.statistics->null_count;
    }
    EXPECT_EQ(c.file->ReadAt(tm.data_page_offset, tm.total_compressed_size).ValueOrDie(), pages);
    EXPECT_EQ(tm.num_values, values);
    ASSERT_TRUE(tm.statistics.has_value());
    EXPECT_EQ(tm.statistics->null_count, nulls);
    EXPECT_FALSE(tm.statistics->min_value.has_value());
    EXPECT_FALSE(tm.statistics->max_value.has_value());
    group_bytes += tm.total_compressed_size;
  }
  EXPECT_EQ(merged.total_compressed_size, group_bytes);
  EXPECT_EQ(merged.file_offset, merged.columns[0].meta_data->data_page_offset);
}

TEST(RowGroupCopierTest, RefusesAnotherSchemaAndBadRanges) {
  auto fs = fs::MakeMemoryFileSystem();
  WriteFile(fs.get(), "/a.parquet", 0, 10, 10);
  {
    auto writer = ParquetFileWriter::Open(fs.get(), "/other.parquet",
                                          DataType::Struct({Field{"id", DataType::Int()}}))
                      .ValueOrDie();
    ASSERT_OK(writer->Close().status());
  }
  Opened a = OpenFooter(fs.get(), "/a.parquet");
  Opened other = OpenFooter(fs.get(), "/other.parquet");
  ASSERT_OK_AND_ASSIGN(auto copier, RowGroupCopier::Open(fs.get(), "/c.parquet"));
  EXPECT_TRUE(copier->Append(a.file.get(), a.meta, 0, 2, "/a.parquet").IsInvalidArgument());
  ASSERT_OK(copier->Append(a.file.get(), a.meta, 0, 1, "/a.parquet"));
  Status st = copier->Append(other.file.get(), other.meta, 0, 0, "/other.parquet");
  EXPECT_TRUE(st.IsInvalidArgument()) << st.ToString();
  ASSERT_OK(copier->Abort());
  ASSERT_OK_AND_ASSIGN(bool exists, fs->Exists("/c.parquet"));
  EXPECT_FALSE(exists);

  // Not a Parquet file.
  ASSERT_OK(fs->WriteFile("/junk", "not parquet at all"));
  auto junk = fs->OpenForRead("/junk").ValueOrDie();
  EXPECT_TRUE(ReadFooter(junk.get(), 18, "/junk").status().IsCorruption());
}

}  // namespace
}  // namespace silt::parquet
