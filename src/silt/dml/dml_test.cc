#include "silt/dml/dml.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "silt/columnar/builder.h"
#include "silt/delta/change_feed.h"
#include "silt/delta/generated_columns.h"
#include "silt/delta/protocol.h"
#include "silt/delta/row_tracking.h"
#include "silt/dml/constraint_ddl.h"
#include "silt/dml/rewrite.h"
#include "silt/expr/parse/dml_statement.h"
#include "silt/expr/parse/parser.h"
#include "silt/fs/file_system.h"
#include "silt/testing/gtest_util.h"

namespace silt::dml {
namespace {

using columnar::ColumnBuilder;
using columnar::DataType;
using columnar::Field;

expr::NodePtr Parse(std::string_view text) {
  Result<expr::NodePtr> node = expr::ParseNode(text);
  EXPECT_TRUE(node.ok()) << node.status().ToString();
  return node.ok() ? *node : nullptr;
}

class DmlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs_ = fs::MakeMemoryFileSystem();
    ASSERT_OK_AND_ASSIGN(table_, delta::DeltaTable::Open(fs_, "/t"));
    schema_ = DataType::Struct({Field{"id", DataType::Long()}, Field{"v", DataType::Int()},
                                Field{"p", DataType::String()}});
  }

  columnar::RecordBatchPtr Rows(const std::vector<std::tuple<int64_t, int32_t, std::string>>& rows,
                                columnar::SchemaPtr schema = nullptr) {
    ColumnBuilder id(DataType::Long());
    ColumnBuilder v(DataType::Int());
    ColumnBuilder p(DataType::String());
    for (const auto& [i, x, part] : rows) {
      id.Append<int64_t>(i);
      v.Append<int32_t>(x);
      p.AppendString(part);
    }
    auto batch = std::make_shared<columnar::RecordBatch>();
    batch->schema = schema ? schema : schema_;
    batch->num_rows = static_cast<int64_t>(rows.size());
    batch->columns = {id.Finish(), v.Finish(), p.Finish()};
    return batch;
  }

  // Appends rows as one commit (one file per partition); `blind` marks the
  // commit a blind append as a streaming append would be.
  void Append(const std::vector<std::tuple<int64_t, int32_t, std::string>>& rows,
              bool blind = true) {
    ASSERT_OK_AND_ASSIGN(auto writer, delta::TableWriter::Make(fs_, "/t", schema_, {"p"}));
    ASSERT_OK(writer->Write(*Rows(rows)));
    ASSERT_OK_AND_ASSIGN(std::vector<delta::AddFile> adds, writer->Finish());
    delta::SnapshotPtr snapshot;
    ASSERT_OK_AND_ASSIGN(bool exists, table_->Exists());
    delta::CommitRequest request;
    if (exists) {
      ASSERT_OK_AND_ASSIGN(snapshot, table_->LatestSnapshot());
    } else {
      delta::Metadata metadata;
      metadata.schema = schema_;
      metadata.partition_columns = {"p"};
      metadata.configuration = configuration_;
      request.new_metadata = metadata;
      ASSERT_OK_AND_ASSIGN(request.new_protocol, delta::ProtocolForNewTable(configuration_));
    }
    request.adds = adds;
    request.is_blind_append = blind;
    ASSERT_OK(delta::Commit(table_.get(), snapshot, request).status());
  }

  // Every row as "id:v:p", sorted.
  std::vector<std::string> Table() {
    std::vector<std::string> out;
    auto snapshot = table_->LatestSnapshot();
    EXPECT_TRUE(snapshot.ok());
    auto scan = delta::TableScan::Make(fs_, "/t", *snapshot);
    EXPECT_TRUE(scan.ok());
    while (true) {
      auto batch = (*scan)->Next();
      EXPECT_TRUE(batch.ok()) << batch.status().ToString();
      if (!batch.ok() || *batch == nullptr) break;
      const auto& b = **batch;
      for (int64_t i = 0; i < b.num_rows; ++i) {
        std::string v =
            b.column(1)->IsNull(i) ? "null" : std::to_string(b.column(1)->Value<int32_t>(i));
        out.push_back(std::to_string(b.column(0)->Value<int64_t>(i)) + ":" + v + ":" +
                      std::string(b.column(2)->StringValue(i)));
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  void Seed() {
    Append({{1, 10, "a"}, {2, 20, "a"}, {3, 30, "b"}});
    Append({{4, 40, "b"}, {5, 50, "c"}});
  }

  delta::CommitActions LastCommit() {
    auto versions = table_->ListVersions();
    EXPECT_TRUE(versions.ok());
    auto commit = table_->ReadCommit(versions->back());
    EXPECT_TRUE(commit.ok());
    return *commit;
  }

  fs::FileSystemPtr fs_;
  std::unique_ptr<delta::DeltaTable> table_;
  columnar::SchemaPtr schema_;
  std::map<std::string, std::string> configuration_;
};

TEST_F(DmlTest, DeleteRewritesOnlyTheFilesWithMatchingRows) {
  Seed();  // files: a{1,2}, b{3}, b{4}, c{5}
  ASSERT_OK_AND_ASSIGN(DmlResult r, Delete(table_.get(), Parse("v >= 20 AND p = 'a'")));
  EXPECT_EQ(r.num_affected_rows, 1);
  EXPECT_EQ(r.num_files_removed, 1);
  EXPECT_EQ(r.num_files_added, 1);
  EXPECT_EQ(r.operation_metrics["numCopiedRows"], "1");
  EXPECT_EQ(Table(), (std::vector<std::string>{"1:10:a", "3:30:b", "4:40:b", "5:50:c"}));
  delta::CommitActions commit = LastCommit();
  ASSERT_EQ(commit.removes.size(), 1u);
  EXPECT_TRUE(commit.removes[0].data_change);
  ASSERT_EQ(commit.adds.size(), 1u);
  EXPECT_TRUE(commit.adds[0].stats.has_value());
  EXPECT_NE(commit.commit_info_json->find("\"operation\":\"DELETE\""), std::string::npos);
}

TEST_F(DmlTest, DeleteOfWholeFileAddsNothingAndNoMatchCommitsNothing) {
  Seed();
  ASSERT_OK_AND_ASSIGN(DmlResult r, Delete(table_.get(), Parse("p = 'c'")));
  EXPECT_EQ(r.num_affected_rows, 1);
  EXPECT_EQ(r.num_files_added, 0);
  EXPECT_EQ(r.num_files_removed, 1);
  ASSERT_OK_AND_ASSIGN(DmlResult none, Delete(table_.get(), Parse("v IS NULL")));
  EXPECT_FALSE(none.committed);
  EXPECT_EQ(none.num_affected_rows, 0);
}

// id -> {stable row id, stable row commit version}, as Spark's
// _metadata.row_id / row_commit_version read them.
std::map<int64_t, std::pair<int64_t, int64_t>> RowIds(const fs::FileSystemPtr& fs,
                                                      delta::DeltaTable* table) {
  std::map<int64_t, std::pair<int64_t, int64_t>> out;
  auto snapshot = table->LatestSnapshot();
  EXPECT_TRUE(snapshot.ok());
  delta::ScanOptions options;
  options.row_tracking = true;
  auto scan = delta::TableScan::Make(fs, "/t", *snapshot, options);
  EXPECT_TRUE(scan.ok()) << scan.status().ToString();
  while (scan.ok()) {
    auto batch = (*scan)->Next();
    EXPECT_TRUE(batch.ok()) << batch.status().ToString();
    if (!batch.ok() || *batch == nullptr) break;
    const auto& b = **batch;
    const columnar::Column& metadata = *b.columns.back();
    for (int64_t i = 0; i < b.num_rows; ++i) {
      out[b.column(0)->Value<int64_t>(i)] = {metadata.children[0]->Value<int64_t>(i),
                                             metadata.children[1]->Value<int64_t>(i)};
    }
  }
  return out;
}

// UPDATE, copy-on-write or deletion-vector DELETE and MERGE on a
// row-tracking table: copied rows keep id and version, updated rows keep
// their id and take the commit's version, inserted rows get fresh ids.
void CheckRowIdsKeptThroughDml(
    const fs::FileSystemPtr& fs, delta::DeltaTable* table, const columnar::SchemaPtr& schema,
    const std::function<columnar::RecordBatchPtr(
        const std::vector<std::tuple<int64_t, int32_t, std::string>>&)>& rows) {
  std::map<int64_t, std::pair<int64_t, int64_t>> before = RowIds(fs, table);
  ASSERT_EQ(before.size(), 5u);

  ASSERT_OK_AND_ASSIGN(DmlResult updated,
                       Update(table, {{{"v"}, Parse("v + 1")}}, Parse("id = 1 OR id = 4")));
  std::map<int64_t, std::pair<int64_t, int64_t>> after = RowIds(fs, table);
  for (const auto& [id, ids] : before) {
    const bool changed = id == 1 || id == 4;
    EXPECT_EQ(after[id].first, ids.first) << id;
    EXPECT_EQ(after[id].second, changed ? updated.version : ids.second) << id;
  }

  ASSERT_OK_AND_ASSIGN(DmlResult deleted, Delete(table, Parse("id = 2")));
  (void)deleted;
  std::map<int64_t, std::pair<int64_t, int64_t>> survivors = RowIds(fs, table);
  after.erase(2);
  EXPECT_EQ(survivors, after);

  auto source = MakeBatchSource(schema, {rows({{3, 300, "b"}, {9, 900, "a"}})});
  MergeSpec spec;
  spec.target_alias = "t";
  spec.source_alias = "s";
  spec.on = Parse("t.id = s.id");
  spec.clauses.push_back(
      {expr::MergeMatch::kMatched, nullptr, expr::MergeActionKind::kUpdateAll, {}});
  spec.clauses.push_back(
      {expr::MergeMatch::kNotMatched, nullptr, expr::MergeActionKind::kInsertAll, {}});
  ASSERT_OK_AND_ASSIGN(DmlResult merged, Merge(table, source.get(), spec));
  std::map<int64_t, std::pair<int64_t, int64_t>> final_ids = RowIds(fs, table);
  ASSERT_EQ(final_ids.size(), 5u);
  for (const auto& [id, ids] : survivors) {
    EXPECT_EQ(final_ids[id].first, ids.first) << id;
    EXPECT_EQ(final_ids[id].second, id == 3 ? merged.version : ids.second) << id;
  }
  // The inserted row: a fresh id above every id assigned before, this
  // commit's version.
  int64_t max_before = 0;
  for (const auto& [id, ids] : before) max_before = std::max(max_before, ids.first);
  EXPECT_GT(final_ids[9].first, max_before);
  EXPECT_EQ(final_ids[9].second, merged.version);

  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> versions, table->ListVersions());
  ASSERT_OK_AND_ASSIGN(delta::CommitActions commit, table->ReadCommit(versions.back()));
  EXPECT_NE(commit.commit_info_json->find(R"("tags":{"delta.rowTracking.preserved":"true"})"),
            std::string::npos)
      << *commit.commit_info_json;
}

TEST_F(DmlTest, RowTrackingKeepsRowIdsThroughCopyOnWriteDml) {
  configuration_ = {{"delta.enableRowTracking", "true"}};
  Seed();
  CheckRowIdsKeptThroughDml(fs_, table_.get(), schema_,
                            [this](const auto& rows) { return Rows(rows); });
  // Rewritten files hold the materialized columns, the stats only the
  // table's.
  ASSERT_OK_AND_ASSIGN(delta::SnapshotPtr snapshot, table_->LatestSnapshot());
  const std::string hidden =
      snapshot->metadata().configuration.at(std::string(delta::kMaterializedRowIdColumnName));
  for (const delta::AddFile& add : snapshot->files()) {
    ASSERT_TRUE(add.stats.has_value());
    EXPECT_EQ(add.stats->find(hidden), std::string::npos) << *add.stats;
  }
}

TEST_F(DmlTest, RowTrackingKeepsRowIdsThroughDeletionVectorDml) {
  configuration_ = {{"delta.enableRowTracking", "true"}, {"delta.enableDeletionVectors", "true"}};
  Seed();
  CheckRowIdsKeptThroughDml(fs_, table_.get(), schema_,
                            [this](const auto& rows) { return Rows(rows); });
}

TEST_F(DmlTest, UpdateCastsValuesAndKeepsOtherColumns) {
  Seed();
  ASSERT_OK_AND_ASSIGN(DmlResult r,
                       Update(table_.get(), {{{"v"}, Parse("v * 2L")}}, Parse("id > 3")));
  EXPECT_EQ(r.num_affected_rows, 2);
  EXPECT_EQ(Table(), (std::vector<std::string>{"1:10:a", "2:20:a", "3:30:b", "4:80:b", "5:100:c"}));
  // ANSI store assignment: an overflow is an error, not a NULL.
  EXPECT_FALSE(Update(table_.get(), {{{"v"}, Parse("3000000000L")}}, nullptr).ok());
}

TEST_F(DmlTest, UpdateRefusesConflictingAndNonStructAssignments) {
  Seed();
  Result<DmlResult> twice =
      Update(table_.get(), {{{"v"}, Parse("1")}, {{"V"}, Parse("2")}}, nullptr);
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("[DELTA_CONFLICT_SET_COLUMN]"), std::string::npos)
      << twice.status().ToString();
  Result<DmlResult> field = Update(table_.get(), {{{"v", "x"}, Parse("1")}}, nullptr);
  ASSERT_FALSE(field.ok());
  EXPECT_NE(field.status().message().find("[INVALID_EXTRACT_BASE_FIELD_TYPE]"), std::string::npos)
      << field.status().ToString();
  EXPECT_EQ(Table(), (std::vector<std::string>{"1:10:a", "2:20:a", "3:30:b", "4:40:b", "5:50:c"}));
}

TEST_F(DmlTest, MergeUpsertsAndInsertOnlyRewritesNothing) {
  Seed();
  auto source = MakeBatchSource(schema_, {Rows({{2, 200, "a"}, {6, 600, "c"}})});
  MergeSpec spec;
  spec.target_alias = "t";
  spec.source_alias = "s";
  spec.on = Parse("t.id = s.id");
  spec.clauses.push_back(
      {expr::MergeMatch::kMatched, nullptr, expr::MergeActionKind::kUpdateAll, {}});
  spec.clauses.push_back(
      {expr::MergeMatch::kNotMatched, nullptr, expr::MergeActionKind::kInsertAll, {}});
  ASSERT_OK_AND_ASSIGN(DmlResult r, Merge(table_.get(), source.get(), spec));
  EXPECT_EQ(r.num_updated_rows, 1);
  EXPECT_EQ(r.num_inserted_rows, 1);
  EXPECT_EQ(r.num_files_removed, 1);
  EXPECT_EQ(Table(), (std::vector<std::string>{"1:10:a", "2:200:a", "3:30:b", "4:40:b", "5:50:c",
                                               "6:600:c"}));

  MergeSpec insert_only;
  insert_only.on = Parse("t.id = s.id");
  insert_only.target_alias = "t";
  insert_only.source_alias = "s";
  insert_only.clauses.push_back(
      {expr::MergeMatch::kNotMatched, nullptr, expr::MergeActionKind::kInsertAll, {}});
  auto more = MakeBatchSource(schema_, {Rows({{1, 0, "a"}, {7, 70, "a"}})});
  ASSERT_OK_AND_ASSIGN(DmlResult ins, Merge(table_.get(), more.get(), insert_only));
  EXPECT_EQ(ins.num_inserted_rows, 1);
  EXPECT_EQ(ins.num_files_removed, 0);
}

TEST_F(DmlTest, MergeRefusesTwoSourceRowsForOneTargetRow) {
  Seed();
  auto source = MakeBatchSource(schema_, {Rows({{2, 1, "a"}, {2, 2, "a"}})});
  MergeSpec spec;
  spec.on = Parse("t.id = s.id");
  spec.target_alias = "t";
  spec.source_alias = "s";
  spec.clauses.push_back(
      {expr::MergeMatch::kMatched, nullptr, expr::MergeActionKind::kUpdateAll, {}});
  Result<DmlResult> r = Merge(table_.get(), source.get(), spec);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE"),
            std::string::npos);
  // An unconditional DELETE as the only matched clause allows it.
  spec.clauses = {{expr::MergeMatch::kMatched, nullptr, expr::MergeActionKind::kDelete, {}}};
  auto again = MakeBatchSource(schema_, {Rows({{2, 1, "a"}, {2, 2, "a"}})});
  ASSERT_OK(Merge(table_.get(), again.get(), spec).status());
  EXPECT_EQ(Table(), (std::vector<std::string>{"1:10:a", "3:30:b", "4:40:b", "5:50:c"}));
}

TEST_F(DmlTest, MergeTxnIsRecordedOnceAndARerunIsSkipped) {
  Seed();
  MergeSpec spec;
  spec.on = Parse("t.id = s.id");
  spec.target_alias = "t";
  spec.source_alias = "s";
  spec.clauses.push_back(
      {expr::MergeMatch::kNotMatched, nullptr, expr::MergeActionKind::kInsertAll, {}});
  DmlOptions options;
  options.txn = delta::Txn{"query-1", 7, std::nullopt};
  options.commit_info = {{"queryId", "query-1"}};
  auto source = MakeBatchSource(schema_, {Rows({{9, 90, "a"}})});
  ASSERT_OK_AND_ASSIGN(DmlResult first, Merge(table_.get(), source.get(), spec, options));
  EXPECT_TRUE(first.committed);
  EXPECT_EQ(LastCommit().txns.size(), 1u);
  EXPECT_NE(LastCommit().commit_info_json->find("\"queryId\":\"query-1\""), std::string::npos);
  auto rerun = MakeBatchSource(schema_, {Rows({{9, 90, "a"}})});
  ASSERT_OK_AND_ASSIGN(DmlResult second, Merge(table_.get(), rerun.get(), spec, options));
  EXPECT_TRUE(second.skipped_duplicate);
  EXPECT_EQ(Table().size(), 6u);
}

TEST_F(DmlTest, RewrittenFileWithDeletionVectorIsReadThroughIt) {
  Seed();
  // Positions map to physical rows around an existing deletion vector:
  // with rows 0 and 2 deleted, live positions 0, 1 are physical 1, 3.
  ASSERT_OK_AND_ASSIGN(delta::SnapshotPtr snapshot, table_->LatestSnapshot());
  delta::AddFile file = snapshot->files()[0];
  FileChange change;
  change.file = &file;
  change.dropped = {0, 1};
  ASSERT_OK_AND_ASSIGN(std::vector<uint64_t> none, PhysicalRows(*table_, change));
  EXPECT_EQ(none, (std::vector<uint64_t>{0, 1}));
}

// Conflicts with a commit that lands between the operation's read and its
// commit (DmlOptions::before_commit), by Delta's rules.
class DmlConflictTest : public DmlTest {
 protected:
  Status UpdatePartitionA(const std::function<void()>& concurrent) {
    DmlOptions options;
    options.before_commit = [&] {
      concurrent();
      return Status::OK();
    };
    return Update(table_.get(), {{{"v"}, Parse("0")}}, Parse("p = 'a'"), options).status();
  }
};

TEST_F(DmlConflictTest, BlindAppendToAnotherPartitionRetries) {
  Seed();
  ASSERT_OK(UpdatePartitionA([&] { Append({{8, 80, "b"}}); }));
  EXPECT_EQ(Table(),
            (std::vector<std::string>{"1:0:a", "2:0:a", "3:30:b", "4:40:b", "5:50:c", "8:80:b"}));
}

TEST_F(DmlConflictTest, AppendIntoAReadPartitionIsConcurrentAppend) {
  Seed();
  // WriteSerializable (the default) lets a blind append commute ...
  ASSERT_OK(UpdatePartitionA([&] { Append({{8, 80, "a"}}); }));
  // ... but not an add by an operation that read the table.
  Status st = UpdatePartitionA([&] { Append({{9, 90, "a"}}, /*blind=*/false); });
  ASSERT_TRUE(st.IsConflict()) << st.ToString();
  EXPECT_NE(st.message().find("ConcurrentAppendException"), std::string::npos) << st.ToString();
  // The operation's files are gone again; the table has the winner's row.
  EXPECT_EQ(Table().size(), 7u);
}

TEST_F(DmlConflictTest, SerializableTableRefusesABlindAppendIntoAReadPartition) {
  configuration_ = {{"delta.isolationLevel", "Serializable"}};
  Seed();
  Status st = UpdatePartitionA([&] { Append({{8, 80, "a"}}); });
  EXPECT_NE(st.message().find("ConcurrentAppendException"), std::string::npos) << st.ToString();
  ASSERT_OK(UpdatePartitionA([&] { Append({{9, 90, "b"}}); }));
}

TEST_F(DmlConflictTest, RemoveOfAReadFileIsConcurrentDeleteRead) {
  Seed();
  // The winner deletes a whole file the update read (adding none: an add
  // into partition a would be reported first, as ConcurrentAppend, as
  // Delta checks added files before removed ones).
  Status st =
      UpdatePartitionA([&] { ASSERT_OK(Delete(table_.get(), Parse("id IN (1, 2)")).status()); });
  EXPECT_NE(st.message().find("ConcurrentDeleteReadException"), std::string::npos) << st.ToString();
}

TEST_F(DmlConflictTest, MetadataAndProtocolChangesConflict) {
  Seed();
  Status st = UpdatePartitionA([&] {
    ASSERT_OK_AND_ASSIGN(delta::SnapshotPtr s, table_->LatestSnapshot());
    delta::CommitRequest request;
    delta::Metadata m = s->metadata();
    m.configuration["delta.appendOnly"] = "false";
    request.new_metadata = m;
    ASSERT_OK(delta::Commit(table_.get(), s, request).status());
  });
  EXPECT_NE(st.message().find("MetadataChangedException"), std::string::npos) << st.ToString();
  st = UpdatePartitionA([&] {
    ASSERT_OK_AND_ASSIGN(delta::SnapshotPtr s, table_->LatestSnapshot());
    delta::CommitRequest request;
    request.new_protocol = delta::Protocol{1, 3, std::nullopt, std::nullopt};
    ASSERT_OK(delta::Commit(table_.get(), s, request).status());
  });
  EXPECT_NE(st.message().find("ProtocolChangedException"), std::string::npos) << st.ToString();
}

TEST_F(DmlConflictTest, BothRemovingOneFileIsConcurrentDeleteDelete) {
  Seed();
  // A remove of a file the operation did not read (Delta checks reads
  // first) conflicts as delete/delete.
  ASSERT_OK_AND_ASSIGN(delta::SnapshotPtr s, table_->LatestSnapshot());
  const delta::AddFile victim = s->files()[0];
  delta::RemoveFile remove;
  remove.path = victim.path;
  remove.deletion_timestamp = 1;
  delta::CommitRequest theirs;
  theirs.removes = {remove};
  theirs.is_blind_append = false;
  ASSERT_OK(delta::Commit(table_.get(), s, theirs).status());
  delta::CommitRequest ours = theirs;
  ours.read_set = delta::CommitRequest::ReadSet{};
  Result<delta::CommitResult> r = delta::Commit(table_.get(), s, ours);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("ConcurrentDeleteDeleteException"), std::string::npos)
      << r.status().ToString();
}

TEST_F(DmlTest, DeletionVectorTablesGetVectorsNotCopies) {
  configuration_ = {{"delta.enableDeletionVectors", "true"}};
  Seed();  // files: a{1,2}, b{3}, b{4}, c{5}
  ASSERT_OK_AND_ASSIGN(DmlResult r, Delete(table_.get(), Parse("id = 2")));
  EXPECT_EQ(r.num_affected_rows, 1);
  EXPECT_EQ(r.operation_metrics["numDeletionVectorsAdded"], "1");
  EXPECT_EQ(r.operation_metrics["numRemovedFiles"], "0");
  EXPECT_EQ(r.operation_metrics["numCopiedRows"], "0");
  delta::CommitActions commit = LastCommit();
  ASSERT_EQ(commit.adds.size(), 1u);
  ASSERT_EQ(commit.removes.size(), 1u);
  EXPECT_EQ(commit.adds[0].path, commit.removes[0].path);
  ASSERT_TRUE(commit.adds[0].deletion_vector.has_value());
  EXPECT_EQ(commit.adds[0].deletion_vector->cardinality, 1);
  EXPECT_NE(commit.adds[0].stats->find("\"tightBounds\":false"), std::string::npos);
  EXPECT_EQ(commit.removes[0].stats, std::optional<std::string>("{\"numRecords\":2}"));
  EXPECT_EQ(Table(), (std::vector<std::string>{"1:10:a", "3:30:b", "4:40:b", "5:50:c"}));

  // The file's last live row updated: the file goes, the new row goes to a
  // new file; UPDATE counts the touched file as removed.
  ASSERT_OK_AND_ASSIGN(r, Update(table_.get(), {{{"v"}, Parse("0")}}, Parse("id = 1")));
  EXPECT_EQ(r.operation_metrics["numRemovedFiles"], "1");
  EXPECT_EQ(r.operation_metrics["numAddedFiles"], "1");
  EXPECT_EQ(r.operation_metrics["numDeletionVectorsAdded"], "0");
  commit = LastCommit();
  ASSERT_EQ(commit.removes.size(), 1u);
  ASSERT_TRUE(commit.removes[0].deletion_vector.has_value());
  ASSERT_EQ(commit.adds.size(), 1u);
  EXPECT_FALSE(commit.adds[0].deletion_vector.has_value());
  EXPECT_EQ(Table(), (std::vector<std::string>{"1:0:a", "3:30:b", "4:40:b", "5:50:c"}));
}

TEST_F(DmlTest, TheChangeFeedReadsBackWhatDmlChanged) {
  configuration_ = {{"delta.enableChangeDataFeed", "true"}};
  Seed();
  ASSERT_OK(Update(table_.get(), {{{"v"}, Parse("0")}}, Parse("id = 1")).status());
  ASSERT_OK(Delete(table_.get(), Parse("id = 4")).status());   // rewrites: change files
  ASSERT_OK(Delete(table_.get(), Parse("p = 'c'")).status());  // whole partition: none
  EXPECT_TRUE(LastCommit().cdc_files.empty());
  delta::ChangeFeedOptions options;
  options.starting_version = 2;
  ASSERT_OK_AND_ASSIGN(auto reader, delta::ChangeFeedReader::Make(table_.get(), options));
  ASSERT_EQ(reader->schema()->num_fields(), 6);
  std::vector<std::string> changes;
  while (true) {
    ASSERT_OK_AND_ASSIGN(columnar::RecordBatchPtr b, reader->Next());
    if (b == nullptr) break;
    for (int64_t i = 0; i < b->num_rows; ++i) {
      changes.push_back(std::to_string(b->column(4)->Value<int64_t>(i)) + " " +
                        std::string(b->column(3)->StringValue(i)) + " " +
                        std::to_string(b->column(0)->Value<int64_t>(i)) + ":" +
                        std::to_string(b->column(1)->Value<int32_t>(i)));
    }
  }
  std::sort(changes.begin(), changes.end());
  EXPECT_EQ(changes, (std::vector<std::string>{"2 update_postimage 1:0", "2 update_preimage 1:10",
                                               "3 delete 4:40", "4 delete 5:50"}));
}

TEST_F(DmlTest, ChangeDataFeedTablesGetChangeFiles) {
  configuration_ = {{"delta.enableChangeDataFeed", "true"}};
  Seed();
  ASSERT_OK_AND_ASSIGN(DmlResult r, Update(table_.get(), {{{"v"}, Parse("0")}}, Parse("id = 1")));
  EXPECT_EQ(r.num_updated_rows, 1);
  ASSERT_OK_AND_ASSIGN(delta::CommitActions c, table_->ReadCommit(r.version));
  ASSERT_FALSE(c.cdc_files.empty());
  EXPECT_EQ(c.cdc_files[0].path.rfind("_change_data/", 0), 0u) << c.cdc_files[0].path;
  EXPECT_EQ(r.operation_metrics["numAddedChangeFiles"], std::to_string(c.cdc_files.size()));
}

}  // namespace
}  // namespace silt::dml

namespace silt::dml {
namespace {

TEST_F(DmlTest, UpdateAndMergeRefuseRowsViolatingCheckConstraints) {
  configuration_["delta.constraints.pos"] = "v > 0";
  Seed();
  const int64_t before = LastCommit().version;
  Result<DmlResult> bad = Update(table_.get(), {{{"v"}, Parse("-v")}}, Parse("id = 2"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("[DELTA_VIOLATE_CONSTRAINT_WITH_VALUES] CHECK constraint "
                                        "pos (v > 0) violated by row with values:\n - v : -20"),
            std::string::npos)
      << bad.status().ToString();
  // A NULL result violates too, as delta-spark checks.
  EXPECT_FALSE(Update(table_.get(), {{{"v"}, Parse("NULL")}}, Parse("id = 2")).ok());
  auto source = MakeBatchSource(schema_, {Rows({{9, -1, "a"}})});
  MergeSpec spec;
  spec.on = Parse("t.id = s.id");
  spec.target_alias = "t";
  spec.source_alias = "s";
  spec.clauses.push_back(
      {expr::MergeMatch::kNotMatched, nullptr, expr::MergeActionKind::kInsertAll, {}});
  EXPECT_FALSE(Merge(table_.get(), source.get(), spec).ok());
  EXPECT_EQ(LastCommit().version, before);
  ASSERT_OK(Update(table_.get(), {{{"v"}, Parse("v + 1")}}, nullptr).status());
  EXPECT_EQ(Table(), (std::vector<std::string>{"1:11:a", "2:21:a", "3:31:b", "4:41:b", "5:51:c"}));
}

TEST_F(DmlTest, AddConstraintChecksExistingRowsAndUpgradesTheProtocol) {
  Seed();
  Status violated = AddCheckConstraint(table_.get(), "Big", "v > 15");
  ASSERT_FALSE(violated.ok());
  EXPECT_NE(violated.message().find("[DELTA_NEW_CHECK_CONSTRAINT_VIOLATION] 1 rows in delta.`/t` "
                                    "violate the new CHECK constraint (v > 15)"),
            std::string::npos)
      << violated.ToString();
  ASSERT_OK(AddCheckConstraint(table_.get(), "Big", "v > 5"));
  ASSERT_OK_AND_ASSIGN(delta::SnapshotPtr snapshot, table_->LatestSnapshot());
  EXPECT_EQ(snapshot->metadata().configuration.at("delta.constraints.big"), "v > 5");
  EXPECT_EQ(snapshot->protocol().min_writer_version, 3);
  Status twice = AddCheckConstraint(table_.get(), "BIG", "v > 1");
  EXPECT_NE(twice.message().find("[DELTA_CONSTRAINT_ALREADY_EXISTS]"), std::string::npos);
  // The commit gate accepts the constraint for writers that check it.
  Result<DmlResult> bad = Update(table_.get(), {{{"v"}, Parse("1")}}, Parse("id = 1"));
  EXPECT_NE(bad.status().message().find("CHECK constraint big (v > 5)"), std::string::npos)
      << bad.status().ToString();
  ASSERT_OK(DropCheckConstraint(table_.get(), "BIG", false));
  Status missing = DropCheckConstraint(table_.get(), "big", false);
  EXPECT_NE(missing.message().find("[DELTA_CONSTRAINT_DOES_NOT_EXIST]"), std::string::npos);
  ASSERT_OK(DropCheckConstraint(table_.get(), "big", true));
  ASSERT_OK(Update(table_.get(), {{{"v"}, Parse("1")}}, Parse("id = 1")).status());
}

TEST_F(DmlTest, MergeInsertsGetIdentityValuesAndRaiseTheHighWaterMark) {
  ASSERT_OK_AND_ASSIGN(Field id, delta::WithIdentity(schema_->field(0), 100, 10, false));
  schema_ = DataType::Struct({id, schema_->field(1), schema_->field(2)});
  Seed();
  auto source = MakeBatchSource(schema_, {Rows({{1, 0, "a"}, {7, 70, "a"}, {8, 80, "b"}})});
  MergeSpec spec;
  spec.on = Parse("t.v = s.v");
  spec.target_alias = "t";
  spec.source_alias = "s";
  spec.clauses.push_back({expr::MergeMatch::kNotMatched,
                          nullptr,
                          expr::MergeActionKind::kInsert,
                          {{{"v"}, Parse("s.v")}, {{"p"}, Parse("s.p")}}});
  ASSERT_OK(Merge(table_.get(), source.get(), spec).status());
  EXPECT_EQ(Table(), (std::vector<std::string>{"100:0:a", "110:70:a", "120:80:b", "1:10:a",
                                               "2:20:a", "3:30:b", "4:40:b", "5:50:c"}));
  ASSERT_OK_AND_ASSIGN(delta::SnapshotPtr snapshot, table_->LatestSnapshot());
  ASSERT_OK_AND_ASSIGN(std::vector<delta::IdentityColumn> identity,
                       delta::IdentityColumns(*snapshot->schema()));
  ASSERT_EQ(identity.size(), 1u);
  EXPECT_EQ(identity[0].high_water_mark, 120);
  // GENERATED ALWAYS: no explicit values, no updates.
  spec.clauses[0].assignments.push_back({{"id"}, Parse("s.id")});
  Result<DmlResult> explicit_id = Merge(table_.get(), source.get(), spec);
  EXPECT_NE(
      explicit_id.status().message().find("[DELTA_IDENTITY_COLUMNS_EXPLICIT_INSERT_NOT_SUPPORTED]"),
      std::string::npos)
      << explicit_id.status().ToString();
  Result<DmlResult> update = Update(table_.get(), {{{"id"}, Parse("1")}}, nullptr);
  EXPECT_NE(update.status().message().find("[DELTA_IDENTITY_COLUMNS_UPDATE_NOT_SUPPORTED]"),
            std::string::npos);
}

}  // namespace
}  // namespace silt::dml
