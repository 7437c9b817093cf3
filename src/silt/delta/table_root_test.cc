#include "silt/delta/table_root.h"

#include <gtest/gtest.h>

#include "silt/testing/gtest_util.h"

namespace silt::delta {
namespace {

TEST(NormalizeStoragePathTest, AppliesDotSegmentsLexically) {
  EXPECT_EQ(NormalizeStoragePath("/t/a/../b//./c"), "/t/b/c");
  EXPECT_EQ(NormalizeStoragePath("/t/"), "/t");
  EXPECT_EQ(NormalizeStoragePath("/"), "/");
  EXPECT_EQ(NormalizeStoragePath("t/./x"), "t/x");
  EXPECT_EQ(NormalizeStoragePath("s3://bucket/t/../u"), "s3://bucket/u");
  EXPECT_EQ(NormalizeStoragePath("file:///t/x"), "/t/x");
  EXPECT_EQ(NormalizeStoragePath("file:/t/x"), "/t/x");
  EXPECT_EQ(NormalizeStoragePath("file://localhost/t/x"), "/t/x");
  EXPECT_EQ(NormalizeStoragePath("/.."), std::nullopt);
  EXPECT_EQ(NormalizeStoragePath("s3://bucket/../other/x"), std::nullopt);
}

TEST(ResolvePathInsideTableTest, KeepsPathsBelowTheRoot) {
  EXPECT_EQ(ResolvePathInsideTable("/t", "part-0.parquet").ValueOrDie(), "/t/part-0.parquet");
  EXPECT_EQ(ResolvePathInsideTable("/t/", "p=a%20b/x.parquet").ValueOrDie(), "/t/p=a b/x.parquet");
  EXPECT_EQ(ResolvePathInsideTable("/t", "p=1/../x.parquet").ValueOrDie(), "/t/x.parquet");
  EXPECT_EQ(ResolvePathInsideTable("/t", "/t/x.parquet").ValueOrDie(), "/t/x.parquet");
  EXPECT_EQ(ResolvePathInsideTable("/t", "file:///t/x.parquet").ValueOrDie(), "/t/x.parquet");
  EXPECT_EQ(ResolvePathInsideTable("file:///t", "x.parquet").ValueOrDie(), "/t/x.parquet");
  EXPECT_EQ(ResolvePathInsideTable("s3://b/t", "x.parquet").ValueOrDie(), "s3://b/t/x.parquet");
  EXPECT_EQ(ResolvePathInsideTable("s3://b/t", "s3://b/t/x").ValueOrDie(), "s3://b/t/x");
  EXPECT_EQ(ResolvePathInsideTable("rel/t", "x").ValueOrDie(), "rel/t/x");
}

// Regression (issue #23, point 2): `silt vacuum --lite` deleted ../x.
TEST(ResolvePathInsideTableTest, RefusesEveryWayOut) {
  for (const char* hostile :
       {"../x.parquet", "%2E%2E/x.parquet", "%2e%2e/x.parquet", "a/../../x.parquet",
        "p=1/%2E%2E/%2E%2E/x.parquet", "/etc/passwd", "/t2/x.parquet", "/t", "/t/..",
        "file:///etc/passwd", "file:/x.parquet", "s3://other/t/x.parquet",
        "s3://b/t/../u/x.parquet", "hdfs://nn/t/x.parquet", "."}) {
    Result<std::string> file = ResolvePathInsideTable("/t", hostile);
    ASSERT_FALSE(file.ok()) << hostile << " -> " << *file;
    EXPECT_TRUE(file.status().IsInvalidArgument()) << file.status().ToString();
    EXPECT_NE(file.status().ToString().find("outside the table root /t"), std::string::npos)
        << file.status().ToString();
  }
  EXPECT_FALSE(ResolvePathInsideTable("s3://b/t", "s3://b/t/../u/x").ok());
  EXPECT_FALSE(ResolvePathInsideTable("s3://b/t", "s3://b/tt/x").ok());
  EXPECT_FALSE(ResolvePathInsideTable("s3://b/t", "/t/x").ok());
  EXPECT_FALSE(ResolvePathInsideTable("rel/t", "../../x").ok());
  // A malformed escape names no file at all.
  EXPECT_FALSE(ResolvePathInsideTable("/t", "%zz/x").ok());
}

TEST(CheckInsideTableTest, DoesNotDecodeAgain) {
  // A file literally named "%2E%2E" is a file, not a parent directory.
  EXPECT_EQ(CheckInsideTable("/t", "/t/%2E%2E/x").ValueOrDie(), "/t/%2E%2E/x");
  EXPECT_FALSE(CheckInsideTable("/t", "/t/../x").ok());
  EXPECT_FALSE(CheckInsideTable("/t/_delta_log", "/t/x.json").ok());
  EXPECT_EQ(CheckInsideTable("/t/_delta_log", "/t/_delta_log/0.json").ValueOrDie(),
            "/t/_delta_log/0.json");
}

}  // namespace
}  // namespace silt::delta
