// Replays the Parquet fuzz corpus (tests/fuzz/corpus/parquet) through the
// reader in every build, with byte-flipped variants of each file: any input
// must read into valid batches or fail with a Status (the fuzz target's
// rule, tests/fuzz/parquet_reader_fuzzer.cc, without needing clang).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "silt/columnar/column.h"
#include "silt/fs/file_system.h"
#include "silt/parquet/file_reader.h"

namespace silt::parquet {
namespace {

// Reads every row group; returns how many row groups read OK.
int ReadAll(fs::FileSystem* fs, const std::string& path, const std::string& what) {
  auto reader = ParquetFileReader::Open(fs, path);
  if (!reader.ok()) return 0;
  int ok = 0;
  for (int rg = 0; rg < (*reader)->num_row_groups(); ++rg) {
    auto batch = (*reader)->ReadRowGroup(rg);
    if (!batch.ok()) continue;
    Status valid = columnar::ValidateBatch(**batch);
    EXPECT_TRUE(valid.ok()) << what << " row group " << rg << ": " << valid.ToString();
    ++ok;
  }
  return ok;
}

TEST(CorpusReplayTest, SeedsAndTheirByteFlipsReadOrFailCleanly) {
  const std::filesystem::path dir = SILT_PARQUET_CORPUS_DIR;
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
  auto fs = fs::MakeMemoryFileSystem();
  std::mt19937 rng(42);
  int seeds = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string seed = buffer.str();
    if (seed.size() < 16) continue;
    ++seeds;
    ASSERT_TRUE(fs->WriteFile("/seed.parquet", seed).ok());
    const int read = ReadAll(fs.get(), "/seed.parquet", entry.path().string());
    // Named *.parquet seeds are real files and read; regression_* seeds
    // (fuzzer findings) and the inputs `make fuzz` adds under their content
    // hash (no extension) may be corrupt and only have to fail cleanly.
    const std::string name = entry.path().filename().string();
    if (name.ends_with(".parquet") && !name.starts_with("regression_")) {
      EXPECT_GT(read, 0) << entry.path();
    }
    for (int i = 0; i < 40; ++i) {
      std::string bytes = seed;
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int f = 0; f < flips; ++f) {
        bytes[4 + rng() % (bytes.size() - 12)] = static_cast<char>(rng() & 0xff);
      }
      ASSERT_TRUE(fs->WriteFile("/flip.parquet", bytes).ok());
      ReadAll(fs.get(), "/flip.parquet", entry.path().string() + " flip " + std::to_string(i));
    }
  }
  EXPECT_GT(seeds, 0);
}

}  // namespace
}  // namespace silt::parquet
