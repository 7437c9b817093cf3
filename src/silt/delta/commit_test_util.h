// Test-only, shared by the commit tests (commit_test.cc) and the tests of
// an appender's elided state (elide_checkpointed_files_test.cc): a small
// partitioned table's metadata, add actions and streaming appends, and the
// CommitTest fixture (a table at /t on a fault-injecting memory file
// system); and by the table maintenance tests (optimize, vacuum,
// auto-compaction): a batch written and committed in one call.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "silt/columnar/column.h"
#include "silt/columnar/types.h"
#include "silt/delta/table.h"
#include "silt/testing/fault_injection_fs.h"
#include "silt/testing/gtest_util.h"

namespace silt::delta::test_util {

// id BIGINT, p STRING, partitioned by p.
inline Metadata NewTableMetadata() {
  Metadata m;
  m.schema = columnar::DataType::Struct({columnar::Field{"id", columnar::DataType::Long()},
                                         columnar::Field{"p", columnar::DataType::String()}});
  m.partition_columns = {"p"};
  return m;
}

// An add of `path` in partition p=x with `rows` records.
inline AddFile Add(std::string path, int64_t rows = 1) {
  AddFile a;
  a.path = std::move(path);
  a.partition_values = {{"p", "x"}};
  a.size = 10;
  a.modification_time = 1;
  a.stats = R"({"numRecords":)" + std::to_string(rows) + "}";
  return a;
}

// A streaming append of one file, with `txn` when given.
inline CommitRequest Append(std::string path, std::optional<Txn> txn = std::nullopt) {
  CommitRequest r;
  r.operation = "STREAMING UPDATE";
  r.operation_parameters = {{"outputMode", "Append"}, {"epochId", "1"}};
  r.adds = {Add(std::move(path))};
  r.txn = std::move(txn);
  return r;
}

// Writes `batch` into `table` (on `fs`) and commits its files as one
// commit; when the table does not exist yet, that commit creates it with the
// batch's schema, partitioned by `partition_columns`.
inline void WriteAndCommit(const fs::FileSystemPtr& fs, DeltaTable* table,
                           const columnar::RecordBatch& batch,
                           const std::vector<std::string>& partition_columns) {
  ASSERT_OK_AND_ASSIGN(auto writer,
                       TableWriter::Make(fs, table->path(), batch.schema, partition_columns));
  ASSERT_OK(writer->Write(batch));
  CommitRequest request;
  ASSERT_OK_AND_ASSIGN(request.adds, writer->Finish());
  SnapshotPtr snapshot;
  ASSERT_OK_AND_ASSIGN(bool exists, table->Exists());
  if (exists) {
    ASSERT_OK_AND_ASSIGN(snapshot, table->LatestSnapshot());
  } else {
    Metadata metadata;
    metadata.schema = batch.schema;
    metadata.partition_columns = partition_columns;
    request.new_metadata = metadata;
  }
  ASSERT_OK(Commit(table, snapshot, request).status());
}

class CommitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs_ = std::make_shared<testing::FaultInjectionFileSystem>(fs::MakeMemoryFileSystem());
    ASSERT_OK_AND_ASSIGN(table_, DeltaTable::Open(fs_, "/t"));
  }

  // Creates the table (version 0) and returns its snapshot.
  SnapshotPtr Create() {
    CommitRequest create;
    create.new_metadata = NewTableMetadata();
    create.operation = "CREATE TABLE";
    auto result = Commit(table_.get(), nullptr, create);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    auto snapshot = table_->LatestSnapshot();
    EXPECT_TRUE(snapshot.ok()) << snapshot.status().ToString();
    return snapshot.ok() ? *snapshot : nullptr;
  }

  std::shared_ptr<testing::FaultInjectionFileSystem> fs_;
  std::unique_ptr<DeltaTable> table_;
};

}  // namespace silt::delta::test_util
