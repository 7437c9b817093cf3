// Damaged Parquet files: truncated, garbled footers and pages, random
// bytes flipped; the reader reports Corruption naming the path and never
// crashes.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>

#include "silt/parquet/file_reader.h"
#include "silt/parquet/file_test_util.h"
#include "silt/parquet/file_writer.h"
#include "silt/testing/gtest_util.h"

namespace silt::parquet {
namespace {

using columnar::SchemaPtr;
using test_util::AllTypesSchema;
using test_util::MakeBatch;
using test_util::WriteFile;

// Opening and reading a damaged file fails with Corruption naming the path.
Status OpenAndReadAll(fs::FileSystem* fs, const std::string& path) {
  SILT_ASSIGN_OR_RETURN(auto reader, ParquetFileReader::Open(fs, path));
  for (int rg = 0; rg < reader->num_row_groups(); ++rg) {
    SILT_RETURN_NOT_OK(reader->ReadRowGroup(rg).status());
  }
  return Status::OK();
}

TEST(ParquetFileTest, TruncatedOrDamagedFilesAreCorruptionNamingThePath) {
  auto fs = fs::MakeMemoryFileSystem();
  SchemaPtr schema = AllTypesSchema();
  const std::string file =
      WriteFile(fs.get(), "/t/good.parquet", schema, {MakeBatch(schema, 0, 500)}, WriterOptions());
  const std::string path = "/t/bad.parquet";
  auto expect_corruption = [&](const std::string& bytes, const std::string& what) {
    ASSERT_OK(fs->WriteFile(path, bytes));
    Status s = OpenAndReadAll(fs.get(), path);
    EXPECT_EQ(s.code(), StatusCode::kCorruption) << what << ": " << s.ToString();
    EXPECT_NE(s.message().find(path), std::string::npos) << what << ": " << s.ToString();
  };
  for (size_t len : {size_t{0}, size_t{3}, size_t{11}, file.size() / 2, file.size() - 1}) {
    expect_corruption(file.substr(0, len), "truncated to " + std::to_string(len));
  }
  expect_corruption("this is definitely not a parquet file, not at all", "text");
  // Damage the footer's length word.
  std::string bad_len = file;
  bad_len[bad_len.size() - 7] = '\x7f';
  expect_corruption(bad_len, "footer length");
  // Garbage inside the footer.
  std::string bad_footer = file;
  uint32_t footer_len;
  std::memcpy(&footer_len, file.data() + file.size() - 8, 4);
  for (size_t i = file.size() - 8 - footer_len; i < file.size() - 8; i += 3) bad_footer[i] = '\xee';
  expect_corruption(bad_footer, "footer bytes");
  // Garbage across the column chunks (page headers and bodies).
  std::string bad_pages = file;
  for (size_t i = 4; i < 4 + 64; ++i) bad_pages[i] = '\x99';
  expect_corruption(bad_pages, "page bytes");
}

TEST(ParquetFileTest, RandomDamageNeverCrashes) {
  auto fs = fs::MakeMemoryFileSystem();
  SchemaPtr schema = AllTypesSchema();
  WriterOptions options;
  options.page_bytes = 1024;
  const std::string file =
      WriteFile(fs.get(), "/t/good.parquet", schema, {MakeBatch(schema, 0, 300)}, options);
  std::mt19937 rng(1234);
  for (int iteration = 0; iteration < 300; ++iteration) {
    std::string damaged = file;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < flips; ++i) {
      damaged[rng() % damaged.size()] = static_cast<char>(rng());
    }
    ASSERT_OK(fs->WriteFile("/t/damaged.parquet", damaged));
    Status s = OpenAndReadAll(fs.get(), "/t/damaged.parquet");
    // Damage to value bytes may go unnoticed; anything noticed is reported
    // as Corruption (or NotSupported when a type/encoding id was hit).
    EXPECT_TRUE(s.ok() || s.IsCorruption() || s.IsNotSupported()) << s.ToString();
  }
}

}  // namespace
}  // namespace silt::parquet
