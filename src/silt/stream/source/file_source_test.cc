#include "silt/stream/source/file_source.h"

#include <gtest/gtest.h>

#include "silt/testing/gtest_util.h"

namespace silt::stream {
namespace {

class FileSourceTest : public ::testing::Test {
 protected:
  void SetUp() override { fs_ = fs::MakeMemoryFileSystem(); }

  std::unique_ptr<FileSource> Make(std::map<std::string, std::string> options,
                                   std::string schema = "", std::string format = "json") {
    SourceSpec spec;
    spec.format = format;
    spec.options = std::move(options);
    spec.options.emplace("path", "memory://in");
    spec.schema_ddl = std::move(schema);
    Result<FileSourceOptions> parsed = FileSourceOptions::FromSpec(spec);
    EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
    SourceContext context;
    context.checkpoint_fs = fs_;
    context.metadata_dir = "memory://ckpt/sources/0";
    context.data_fs = fs_;
    Result<std::unique_ptr<FileSource>> source = FileSource::Make(*parsed, context);
    EXPECT_TRUE(source.ok()) << source.status().ToString();
    auto out = std::move(source).ValueOrDie();
    Status restored = out->Restore(std::nullopt);
    EXPECT_TRUE(restored.ok()) << restored.ToString();
    return out;
  }

  void Put(const std::string& name, const std::string& content) {
    ASSERT_OK(fs_->WriteFile("memory://in/" + name, content));
  }

  // Every row of a batch as "v1,v2,..." with NULL for nulls (strings and
  // ints only, which is what these tests use).
  static std::vector<std::string> ReadAll(FileSource* source,
                                          const std::optional<std::string>& start,
                                          const std::string& end) {
    std::vector<std::string> rows;
    Result<std::unique_ptr<BatchReader>> reader = source->GetBatch(start, end);
    EXPECT_TRUE(reader.ok()) << reader.status().ToString();
    if (!reader.ok()) return rows;
    while (true) {
      Result<columnar::RecordBatchPtr> batch = (*reader)->Next();
      EXPECT_TRUE(batch.ok()) << batch.status().ToString();
      if (!batch.ok() || *batch == nullptr) break;
      for (int64_t row = 0; row < (*batch)->num_rows; ++row) {
        std::string text;
        for (int col = 0; col < (*batch)->num_columns(); ++col) {
          const columnar::Column& column = *(*batch)->column(col);
          if (col > 0) text += ",";
          if (column.IsNull(row)) {
            text += "NULL";
          } else if (column.type->id() == columnar::TypeId::kInt) {
            text += std::to_string(column.Value<int32_t>(row));
          } else {
            text += std::string(column.StringValue(row));
          }
        }
        rows.push_back(text);
      }
    }
    return rows;
  }

  fs::FileSystemPtr fs_;
};

TEST(FileSourceOptionsTest, SparkParsingOptionsSiltDoesNotImplementAreRefusedUnlessDefault) {
  SourceSpec spec;
  spec.format = "json";
  spec.key_path = "source";
  spec.schema_ddl = "id BIGINT";
  spec.options = {{"path", "/in"}, {"multiLine", "false"}, {"samplingRatio", "0.5"}};
  ASSERT_OK(FileSourceOptions::FromSpec(spec).status());
  spec.options["multiLine"] = "true";
  Result<FileSourceOptions> multi = FileSourceOptions::FromSpec(spec);
  ASSERT_RAISES(InvalidArgument, multi.status());
  EXPECT_NE(multi.status().message().find("source.options.multiLine"), std::string::npos);
  spec.options.erase("multiLine");
  spec.options["maxFilesPerTriger"] = "1";
  Result<FileSourceOptions> typo = FileSourceOptions::FromSpec(spec);
  ASSERT_RAISES(InvalidArgument, typo.status());
  EXPECT_NE(typo.status().message().find("did you mean maxFilesPerTrigger?"), std::string::npos)
      << typo.status().ToString();
}

TEST(FileLogTest, SparkEntryFormat) {
  std::vector<FileLogEntry> entries = {{"file:///in/a.json", 1700000000123, 4},
                                       {"file:///in/b%20c.json", 1700000000456, 4}};
  std::string text = SerializeFileLog(entries);
  EXPECT_EQ(text,
            "v1\n"
            R"({"path":"file:///in/a.json","timestamp":1700000000123,"batchId":4})"
            "\n"
            R"({"path":"file:///in/b%20c.json","timestamp":1700000000456,"batchId":4})");
  ASSERT_OK_AND_ASSIGN(std::vector<FileLogEntry> back, ParseFileLog(text, "sources/0/4"));
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[1].path, "file:///in/b%20c.json");
  EXPECT_EQ(back[1].timestamp_ms, 1700000000456);
  EXPECT_EQ(back[1].batch_id, 4);
  ASSERT_RAISES(Corruption, ParseFileLog("v2\n{}", "x"));
}

TEST(FileLogTest, LocalPathsAreFileUris) {
  EXPECT_EQ(FilePathToLogUri("/data/in/a b%.json"), "file:///data/in/a%20b%25.json");
  EXPECT_EQ(LogUriToFilePath("file:///data/in/a%20b%25.json"), "/data/in/a b%.json");
  // Hadoop's short form, as older Spark versions log it.
  EXPECT_EQ(LogUriToFilePath("file:/data/in/x.json"), "/data/in/x.json");
  EXPECT_EQ(FilePathToLogUri("memory://in/x.json"), "memory://in/x.json");
  EXPECT_EQ(LogUriToFilePath("s3a://bucket/in/x.json"), "s3a://bucket/in/x.json");
}

TEST(FileSourceOffsetTest, SparkOffsetForms) {
  EXPECT_EQ(FileSource::OffsetJson(3), R"({"logOffset":3})");
  EXPECT_EQ(*FileSource::ParseOffset(R"({"logOffset":12})"), 12);
  EXPECT_EQ(*FileSource::ParseOffset("7"), 7);
  ASSERT_RAISES(InvalidArgument, FileSource::ParseOffset(R"({"other":1})"));
}

TEST_F(FileSourceTest, DiscoversVisibleFilesAndLogsThemBeforeTheOffset) {
  Put("b.json", "{\"a\":2}\n");
  Put("a.json", "{\"a\":1}\n");
  Put("_temporary/x.json", "{\"a\":9}\n");
  Put(".hidden.json", "{\"a\":9}\n");
  Put("_SUCCESS", "");
  Put("sub/c.json", "{\"a\":3}\n");
  auto source = Make({}, "a INT");
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> end, source->LatestOffset(std::nullopt, {}));
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(*end, R"({"logOffset":0})");
  ASSERT_OK_AND_ASSIGN(std::string log, fs_->ReadFile("memory://ckpt/sources/0/0"));
  ASSERT_OK_AND_ASSIGN(std::vector<FileLogEntry> entries, ParseFileLog(log, "log"));
  std::vector<std::string> paths;
  for (const FileLogEntry& entry : entries) {
    paths.push_back(entry.path);
    EXPECT_EQ(entry.batch_id, 0);
    EXPECT_GT(entry.timestamp_ms, 0);
  }
  std::sort(paths.begin(), paths.end());
  EXPECT_EQ(paths, (std::vector<std::string>{"memory://in/a.json", "memory://in/b.json",
                                             "memory://in/sub/c.json"}));
  std::vector<std::string> rows = ReadAll(source.get(), std::nullopt, *end);
  std::sort(rows.begin(), rows.end());
  EXPECT_EQ(rows, (std::vector<std::string>{"1", "2", "3"}));

  // Nothing new: no batch. A new file: the next log entry.
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> idle, source->LatestOffset(end, {}));
  EXPECT_FALSE(idle.has_value());
  Put("d.json", "{\"a\":4}\n");
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> next, source->LatestOffset(end, {}));
  EXPECT_EQ(*next, R"({"logOffset":1})");
  EXPECT_EQ(ReadAll(source.get(), end, *next), std::vector<std::string>{"4"});
}

TEST_F(FileSourceTest, MissingDirectoryHasNoDataYet) {
  auto source = Make({}, "a INT");
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> end, source->LatestOffset(std::nullopt, {}));
  EXPECT_FALSE(end.has_value());
}

TEST_F(FileSourceTest, MaxFilesPerTriggerSplitsInModificationOrder) {
  Put("f1.json", "{\"a\":1}");
  Put("f2.json", "{\"a\":2}");
  Put("f3.json", "{\"a\":3}");
  auto source = Make({{"maxFilesPerTrigger", "2"}}, "a INT");
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> first, source->LatestOffset(std::nullopt, {}));
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> second, source->LatestOffset(first, {}));
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> third, source->LatestOffset(second, {}));
  EXPECT_FALSE(third.has_value());
  EXPECT_EQ(ReadAll(source.get(), std::nullopt, *first), (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(ReadAll(source.get(), first, *second), std::vector<std::string>{"3"});
}

TEST_F(FileSourceTest, RestartTakesLoggedFilesBeforeListingAgain) {
  Put("f1.json", "{\"a\":1}");
  {
    auto crashed = Make({}, "a INT");
    // Log entry 0 is written; the process dies before offsets/N.
    ASSERT_OK_AND_ASSIGN(std::optional<std::string> end, crashed->LatestOffset(std::nullopt, {}));
    ASSERT_TRUE(end.has_value());
  }
  Put("f2.json", "{\"a\":2}");
  auto restarted = Make({}, "a INT");
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> end, restarted->LatestOffset(std::nullopt, {}));
  EXPECT_EQ(*end, R"({"logOffset":0})");
  EXPECT_EQ(ReadAll(restarted.get(), std::nullopt, *end), std::vector<std::string>{"1"});
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> next, restarted->LatestOffset(end, {}));
  EXPECT_EQ(*next, R"({"logOffset":1})");
  EXPECT_EQ(ReadAll(restarted.get(), end, *next), std::vector<std::string>{"2"});
}

TEST_F(FileSourceTest, EveryTenthLogEntryIsACompactFileWithAllEntries) {
  auto source = Make({}, "a INT");
  std::optional<std::string> offset;
  for (int i = 0; i < 11; ++i) {
    Put("f" + std::to_string(i) + ".json", "{\"a\":" + std::to_string(i) + "}");
    ASSERT_OK_AND_ASSIGN(std::optional<std::string> end, source->LatestOffset(offset, {}));
    ASSERT_TRUE(end.has_value());
    offset = end;
  }
  ASSERT_OK_AND_ASSIGN(bool plain9, fs_->Exists("memory://ckpt/sources/0/9"));
  EXPECT_FALSE(plain9);
  ASSERT_OK_AND_ASSIGN(std::string compact, fs_->ReadFile("memory://ckpt/sources/0/9.compact"));
  ASSERT_OK_AND_ASSIGN(std::vector<FileLogEntry> entries, ParseFileLog(compact, "9.compact"));
  EXPECT_EQ(entries.size(), 10u);
  EXPECT_EQ(entries.front().batch_id, 0);
  EXPECT_EQ(entries.back().batch_id, 9);
  // A restarted source reads the compact file and the entry after it.
  auto restarted = Make({}, "a INT");
  EXPECT_EQ(ReadAll(restarted.get(), FileSource::OffsetJson(8), FileSource::OffsetJson(10)),
            (std::vector<std::string>{"9", "10"}));
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> idle, restarted->LatestOffset(offset, {}));
  EXPECT_FALSE(idle.has_value());
}

// A wrong-typed field is NULL and, as in Spark, the raw line is kept in the
// corrupt-record column too.
TEST_F(FileSourceTest, PermissiveKeepsMalformedLinesInTheCorruptRecordColumn) {
  Put("in.json",
      "{\"id\":1,\"name\":\"a\"}\n"
      "{not json\n"
      "\n"
      "{\"id\":\"two\",\"name\":\"b\"}\n");
  auto source = Make({}, "id INT, name STRING, _corrupt_record STRING");
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> end, source->LatestOffset(std::nullopt, {}));
  EXPECT_EQ(ReadAll(source.get(), std::nullopt, *end),
            (std::vector<std::string>{"1,a,NULL", "NULL,NULL,{not json",
                                      R"(NULL,b,{"id":"two","name":"b"})"}));
}

TEST_F(FileSourceTest, PermissiveWithoutCorruptColumnGivesNullRows) {
  Put("in.json", "{\"id\":1}\n[1,2]\n");
  auto source = Make({}, "id INT");
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> end, source->LatestOffset(std::nullopt, {}));
  EXPECT_EQ(ReadAll(source.get(), std::nullopt, *end), (std::vector<std::string>{"1", "NULL"}));
}

TEST_F(FileSourceTest, DropMalformedDropsMalformedLinesAndWrongTypedFields) {
  Put("in.json", "{\"id\":1}\n{oops\n{\"id\":\"x\"}\n{\"id\":3000000000}\n{\"id\":3}\n");
  auto source = Make({{"mode", "DROPMALFORMED"}}, "id INT");
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> end, source->LatestOffset(std::nullopt, {}));
  // As in Spark, a field of the wrong type or out of range makes a bad record.
  EXPECT_EQ(ReadAll(source.get(), std::nullopt, *end), (std::vector<std::string>{"1", "3"}));
}

TEST_F(FileSourceTest, FailFastStopsAtAWrongTypedField) {
  Put("bad.json", "{\"id\":1}\n{\"id\":\"x\"}\n");
  auto source = Make({{"mode", "FAILFAST"}}, "id INT");
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> end, source->LatestOffset(std::nullopt, {}));
  ASSERT_OK_AND_ASSIGN(auto reader, source->GetBatch(std::nullopt, *end));
  Result<columnar::RecordBatchPtr> batch = reader->Next();
  ASSERT_RAISES(Corruption, batch);
  EXPECT_NE(batch.status().message().find("memory://in/bad.json' at line 2"), std::string::npos)
      << batch.status().message();
}

TEST_F(FileSourceTest, FailFastNamesFileAndLine) {
  Put("bad.json", "{\"id\":1}\n\n{\"id\":2}\n{broken\n");
  auto source = Make({{"mode", "failfast"}}, "id INT");
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> end, source->LatestOffset(std::nullopt, {}));
  ASSERT_OK_AND_ASSIGN(auto reader, source->GetBatch(std::nullopt, *end));
  Result<columnar::RecordBatchPtr> batch = reader->Next();
  ASSERT_RAISES(Corruption, batch);
  EXPECT_NE(batch.status().message().find("memory://in/bad.json' at line 4"), std::string::npos)
      << batch.status().message();
  EXPECT_NE(batch.status().message().find("{broken"), std::string::npos);
}

TEST_F(FileSourceTest, TextSourceHasOneRowPerLine) {
  Put("t.txt", "first\n\nthird\r\nlast");
  auto source = Make({}, "", "text");
  EXPECT_EQ(source->schema()->ToDdl(), "STRUCT<value: STRING>");
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> end, source->LatestOffset(std::nullopt, {}));
  EXPECT_EQ(ReadAll(source.get(), std::nullopt, *end),
            (std::vector<std::string>{"first", "", "third", "last"}));
}

TEST(FileSourceOptionsTest, ErrorsNameTheKey) {
  SourceSpec spec;
  spec.format = "json";
  spec.options = {{"path", "/in"}};
  Result<FileSourceOptions> no_schema = FileSourceOptions::FromSpec(spec);
  ASSERT_RAISES(InvalidArgument, no_schema);
  EXPECT_NE(no_schema.status().message().find("source.schema"), std::string::npos);
  spec.schema_ddl = "a INT";
  spec.options = {{"path", "/in"}, {"mode", "LENIENT"}};
  Result<FileSourceOptions> bad_mode = FileSourceOptions::FromSpec(spec);
  ASSERT_RAISES(InvalidArgument, bad_mode);
  EXPECT_NE(bad_mode.status().message().find("source.options.mode"), std::string::npos);
  spec.options = {};
  ASSERT_RAISES(InvalidArgument, FileSourceOptions::FromSpec(spec));
  spec.options = {{"path", "/in"}, {"maxFilesPerTrigger", "0"}};
  ASSERT_RAISES(InvalidArgument, FileSourceOptions::FromSpec(spec));
  spec.options = {{"path", "/in"}};
  spec.schema_ddl = "a INT, _corrupt_record INT";
  ASSERT_RAISES(InvalidArgument, FileSourceOptions::FromSpec(spec));
}

}  // namespace
}  // namespace silt::stream
