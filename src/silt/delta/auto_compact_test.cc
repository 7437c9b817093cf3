#include "silt/delta/auto_compact.h"

#include <gtest/gtest.h>

#include "silt/columnar/builder.h"
#include "silt/delta/table.h"
#include "silt/fs/file_system.h"
#include "silt/testing/gtest_util.h"

namespace silt::delta {
namespace {

using columnar::ColumnBuilder;
using columnar::DataType;
using columnar::Field;

// One commit of one small file per call.
void Append(const fs::FileSystemPtr& fs, DeltaTable* table, const columnar::SchemaPtr& schema,
            int64_t id) {
  ColumnBuilder column(DataType::Long());
  column.Append<int64_t>(id);
  columnar::RecordBatch batch;
  batch.schema = schema;
  batch.num_rows = 1;
  batch.columns = {column.Finish()};
  ASSERT_OK_AND_ASSIGN(auto writer, TableWriter::Make(fs, "/t", schema, {}));
  ASSERT_OK(writer->Write(batch));
  ASSERT_OK_AND_ASSIGN(std::vector<AddFile> adds, writer->Finish());
  SnapshotPtr snapshot;
  ASSERT_OK_AND_ASSIGN(bool exists, table->Exists());
  CommitRequest request;
  if (exists) {
    ASSERT_OK_AND_ASSIGN(snapshot, table->LatestSnapshot());
  } else {
    Metadata metadata;
    metadata.schema = schema;
    request.new_metadata = metadata;
  }
  request.adds = adds;
  ASSERT_OK(Commit(table, snapshot, request).status());
}

TEST(AutoCompactorTest, CompactsInTheBackgroundEveryNCommits) {
  fs::FileSystemPtr fs = fs::MakeMemoryFileSystem();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<DeltaTable> table, DeltaTable::Open(fs, "/t"));
  auto schema = DataType::Struct({Field{"id", DataType::Long()}});
  AutoCompactOptions options;
  options.every_n_commits = 3;
  options.min_num_files = 2;
  {
    AutoCompactor compactor(fs, "/t", options);
    for (int64_t i = 0; i < 2; ++i) {
      Append(fs, table.get(), schema, i);
      compactor.OnCommit();
    }
    // Two commits: below every_n_commits, nothing has started.
    EXPECT_EQ(compactor.compactions(), 0);
    Append(fs, table.get(), schema, 2);
    compactor.OnCommit();
  }  // waits for the compaction
  ASSERT_OK_AND_ASSIGN(SnapshotPtr snapshot, table->LatestSnapshot());
  EXPECT_EQ(snapshot->files().size(), 1u);
  EXPECT_EQ(snapshot->version(), 3);
}

}  // namespace
}  // namespace silt::delta
