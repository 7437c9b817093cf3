#include "silt/delta/deletion_vector_writer.h"

#include <gtest/gtest.h>

#include <random>

#include "silt/delta/deletion_vector.h"
#include "silt/testing/gtest_util.h"

namespace silt::delta {
namespace {

struct Dir {
  std::string path() const { return "/t"; }
};

// Every container kind: a sparse array, a dense bitmap (> 4096 values in one
// 16-bit chunk), long runs, and buckets above 2^32.
std::vector<std::vector<uint64_t>> Shapes() {
  std::vector<std::vector<uint64_t>> shapes;
  shapes.push_back({0});
  shapes.push_back({3, 7, 65535, 65536, 70000});
  std::vector<uint64_t> dense;
  std::mt19937_64 rng(7);
  for (uint64_t v = 0; v < 65536; ++v) {
    if (rng() % 3 == 0) dense.push_back(v);
  }
  shapes.push_back(dense);
  std::vector<uint64_t> runs;
  for (uint64_t v = 100; v < 200000; ++v) runs.push_back(v);
  shapes.push_back(runs);
  shapes.push_back({1, (uint64_t{1} << 32) + 5, (uint64_t{3} << 32) | 0xFFFFFFFFu});
  return shapes;
}

TEST(SerializeRoaringBitmapArrayTest, RoundTripsThroughTheReader) {
  for (const auto& rows : Shapes()) {
    ASSERT_OK_AND_ASSIGN(std::string bytes, SerializeRoaringBitmapArray(rows));
    ASSERT_OK_AND_ASSIGN(auto back, ParseRoaringBitmapArray(bytes));
    EXPECT_EQ(back, rows);
  }
  ASSERT_OK_AND_ASSIGN(std::string empty, SerializeRoaringBitmapArray({}));
  EXPECT_EQ(empty.size(), 12u);  // magic + bucket count
  ASSERT_RAISES(InvalidArgument, SerializeRoaringBitmapArray({5, 5}));
  ASSERT_RAISES(InvalidArgument, SerializeRoaringBitmapArray({6, 5}));
}

std::string FromHex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

// The file delta-spark 3.2.1 wrote for `DELETE ... WHERE id % 10 = 3` on a
// 100-row file (rows 3, 13, ..., 93): version byte, size, bitmap, CRC-32.
constexpr std::string_view kSparkFile =
    "0100000034d1d339640100000000000000000000003a30000001000000000009001000000003000d0017002100"
    "2b0035003f00490053005d00857dc826";

TEST(DeletionVectorFileWriterTest, WritesTheBytesDeltaSparkWrites) {
  std::vector<uint64_t> rows;
  for (uint64_t v = 3; v < 100; v += 10) rows.push_back(v);
  fs::FileSystemPtr fs = fs::MakeMemoryFileSystem();
  DeletionVectorFileWriter writer(fs.get(), "/t");
  ASSERT_OK_AND_ASSIGN(DeletionVectorDescriptor dv, writer.Add(rows));
  ASSERT_OK(writer.Finish());
  EXPECT_EQ(dv.offset, 1);
  EXPECT_EQ(dv.size_in_bytes, 52);  // as Spark's log says for this vector
  EXPECT_EQ(dv.cardinality, 10);
  ASSERT_OK_AND_ASSIGN(std::string bytes, fs->ReadFile(writer.file_path()));
  EXPECT_EQ(bytes, FromHex(kSparkFile));
}

TEST(SerializeRoaringBitmapArrayTest, RunsAreCompact) {
  std::vector<uint64_t> rows;
  for (uint64_t v = 0; v < 1000000; ++v) rows.push_back(v);
  ASSERT_OK_AND_ASSIGN(std::string bytes, SerializeRoaringBitmapArray(rows));
  // 16 run containers of one run each, against 128 KiB as bitmaps.
  EXPECT_LT(bytes.size(), 400u);
}

TEST(Z85Test, EncodeInvertsDecode) {
  ASSERT_OK_AND_ASSIGN(std::string text,
                       EncodeZ85(std::string("\x86\x4F\xD2\x6F\xB5\x59\xF7\x5B", 8)));
  EXPECT_EQ(text, "HelloWorld");
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes.push_back(static_cast<char>(i));
  ASSERT_OK_AND_ASSIGN(text, EncodeZ85(bytes));
  ASSERT_OK_AND_ASSIGN(std::string back, DecodeZ85(text));
  EXPECT_EQ(back, bytes);
  ASSERT_RAISES(InvalidArgument, EncodeZ85("abc"));
}

TEST(DeletionVectorFileWriterTest, DescriptorsLoadBack) {
  fs::FileSystemPtr fs_ptr = fs::MakeMemoryFileSystem();
  fs::FileSystem& fs = *fs_ptr;
  const Dir dir;
  DeletionVectorFileWriter writer(&fs, dir.path());
  std::vector<DeletionVectorDescriptor> dvs;
  const auto shapes = Shapes();
  for (const auto& rows : shapes) {
    ASSERT_OK_AND_ASSIGN(DeletionVectorDescriptor dv, writer.Add(rows));
    dvs.push_back(dv);
  }
  ASSERT_OK(writer.Finish());
  EXPECT_EQ(dvs[0].offset, 1);
  for (size_t i = 0; i < shapes.size(); ++i) {
    EXPECT_EQ(dvs[i].storage_type, "u");
    EXPECT_EQ(dvs[i].path_or_inline_dv.size(), 20u);
    EXPECT_EQ(dvs[i].cardinality, static_cast<int64_t>(shapes[i].size()));
    ASSERT_OK_AND_ASSIGN(std::string path, DeletionVectorFilePath(dir.path(), dvs[i]));
    EXPECT_EQ(path, writer.file_path());
    ASSERT_OK_AND_ASSIGN(auto rows, LoadDeletionVector(&fs, dir.path(), dvs[i]));
    EXPECT_EQ(rows, shapes[i]);
  }
  ASSERT_RAISES(InvalidArgument, writer.Add({}));
}

TEST(DeletionVectorFileWriterTest, WritesNothingWithoutVectors) {
  fs::FileSystemPtr fs_ptr = fs::MakeMemoryFileSystem();
  fs::FileSystem& fs = *fs_ptr;
  const Dir dir;
  DeletionVectorFileWriter writer(&fs, dir.path());
  ASSERT_OK(writer.Finish());
  EXPECT_EQ(writer.file_path(), "");
  auto listing = fs.ListRecursive(dir.path());
  EXPECT_TRUE(!listing.ok() || listing->empty());
}

TEST(StatsWithLooseBoundsTest, SetsTightBoundsFalse) {
  EXPECT_EQ(StatsWithLooseBounds(R"({"numRecords":3,"minValues":{"a":"x\"tightBounds\":true"}})"),
            R"({"numRecords":3,"minValues":{"a":"x\"tightBounds\":true"},"tightBounds":false})");
  EXPECT_EQ(StatsWithLooseBounds(R"({"numRecords":3,"tightBounds":true})"),
            R"({"numRecords":3,"tightBounds":false})");
  EXPECT_EQ(StatsWithLooseBounds("not json"), "not json");
}

TEST(DeleteRowsByDeletionVectorTest, UnitesWithTheCurrentVectorAndDropsEmptiedFiles) {
  fs::FileSystemPtr fs_ptr = fs::MakeMemoryFileSystem();
  fs::FileSystem& fs = *fs_ptr;
  const Dir dir;
  DeletionVectorFileWriter first(&fs, dir.path());
  ASSERT_OK_AND_ASSIGN(DeletionVectorDescriptor current, first.Add({1, 2}));
  ASSERT_OK(first.Finish());

  AddFile with_dv;
  with_dv.path = "part-0.parquet";
  with_dv.size = 100;
  with_dv.stats = R"({"numRecords":10})";
  with_dv.deletion_vector = current;
  AddFile small;
  small.path = "part-1.parquet";
  small.stats = R"({"numRecords":2})";
  AddFile untouched = small;
  untouched.path = "part-2.parquet";

  std::vector<RowDeletion> deletions = {{with_dv, {2, 5}}, {small, {0, 1}}, {untouched, {}}};
  ASSERT_OK_AND_ASSIGN(DeletionVectorChanges changes,
                       DeleteRowsByDeletionVector(&fs, dir.path(), deletions, 1234));
  EXPECT_EQ(changes.num_deleted_rows, 3);  // row 2 was deleted already
  EXPECT_EQ(changes.num_files_fully_deleted, 1);
  EXPECT_EQ(changes.num_deletion_vectors_added, 1);
  EXPECT_EQ(changes.num_deletion_vectors_removed, 1);
  EXPECT_EQ(changes.num_deletion_vectors_updated, 1);
  ASSERT_EQ(changes.removes.size(), 2u);
  EXPECT_EQ(changes.removes[0].path, "part-0.parquet");
  ASSERT_TRUE(changes.removes[0].deletion_vector.has_value());
  EXPECT_EQ(changes.removes[0].deletion_vector->UniqueId(), current.UniqueId());
  EXPECT_EQ(changes.removes[0].deletion_timestamp, 1234);
  EXPECT_EQ(changes.removes[1].path, "part-1.parquet");
  ASSERT_EQ(changes.adds.size(), 1u);
  const AddFile& add = changes.adds[0];
  EXPECT_EQ(add.path, "part-0.parquet");
  EXPECT_EQ(add.size, 100);
  EXPECT_EQ(*add.stats, R"({"numRecords":10,"tightBounds":false})");
  ASSERT_TRUE(add.deletion_vector.has_value());
  EXPECT_EQ(add.deletion_vector->cardinality, 3);
  ASSERT_OK_AND_ASSIGN(auto rows, LoadDeletionVector(&fs, dir.path(), *add.deletion_vector));
  EXPECT_EQ(rows, (std::vector<uint64_t>{1, 2, 5}));
  ASSERT_RAISES(InvalidArgument, DeleteRowsByDeletionVector(&fs, dir.path(), {{small, {1, 0}}}, 0));
}

}  // namespace
}  // namespace silt::delta
