// Test-only, shared by the commit tests (commit_test.cc) and the tests of
// an appender's elided state (elide_checkpointed_files_test.cc): a small
// partitioned table's metadata, add actions and streaming appends, and the
// CommitTest fixture (a table at /t on a fault-injecting memory file
// system).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>

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
