// DELETE and UPDATE: one pass over the files the condition's target
// conjuncts do not rule out; in each, the rows where the condition is TRUE
// go (DELETE) or are replaced by their updated values (UPDATE).

#include <algorithm>

#include "silt/base/clock.h"
#include "silt/delta/partition_utils.h"
#include "silt/delta/stats.h"
#include "silt/dml/clauses.h"
#include "silt/dml/dml.h"
#include "silt/dml/operation.h"
#include "silt/dml/rewrite.h"
#include "silt/dml/scope.h"
#include "silt/expr/parse/ast_walk.h"

namespace silt::dml {

namespace {

class VectorSource final : public RowSource {
 public:
  VectorSource(columnar::SchemaPtr schema, std::vector<columnar::RecordBatchPtr> batches)
      : schema_(std::move(schema)), batches_(std::move(batches)) {}
  const columnar::SchemaPtr& schema() const override { return schema_; }
  Result<columnar::RecordBatchPtr> Next() override {
    if (next_ >= batches_.size()) return columnar::RecordBatchPtr();
    return batches_[next_++];
  }

 private:
  columnar::SchemaPtr schema_;
  std::vector<columnar::RecordBatchPtr> batches_;
  size_t next_ = 0;
};

// True when `resolved` (null: no condition) reads partition columns only.
bool OnlyPartitionColumns(const expr::NodePtr& resolved, const columnar::Schema& table_schema,
                          const std::vector<std::string>& partition_columns) {
  if (resolved == nullptr) return true;
  bool only = true;
  expr::VisitNodes(*resolved, [&](const expr::Node& n) {
    if (n.kind() != expr::NodeKind::kColumnRef) return;
    const std::string& name = static_cast<const expr::ColumnRefNode&>(n).parts()[0];
    if (name.rfind("__t", 0) != 0) {
      only = false;
      return;
    }
    const int column = std::stoi(name.substr(3));
    const std::string& field = table_schema.field(column).name;
    only &= std::find(partition_columns.begin(), partition_columns.end(), field) !=
            partition_columns.end();
  });
  return only;
}

Result<DmlResult> RunTargetOnly(delta::DeltaTable* table, bool is_update,
                                const std::vector<expr::Assignment>* set,
                                const expr::NodePtr& condition, const DmlOptions& options) {
  const char* operation = is_update ? "UPDATE" : "DELETE";
  const int64_t start_ms = NowMillis();
  SILT_ASSIGN_OR_RETURN(delta::SnapshotPtr snapshot, SnapshotForDml(table, options, operation));
  DmlResult result;
  result.version = snapshot->version();
  if (TxnAlreadyRecorded(*snapshot, options)) {
    result.skipped_duplicate = true;
    return result;
  }
  const std::string context = std::string(operation) + " on Delta table " + table->path();
  Scope scope(options.target_alias, snapshot->schema(), "", nullptr);
  const columnar::SchemaPtr& side = scope.side_schema(Scope::kTarget);

  expr::NodePtr resolved;
  std::vector<expr::NodePtr> conjuncts;
  expr::BoundExpressionPtr bound;
  if (condition != nullptr) {
    SILT_ASSIGN_OR_RETURN(resolved, scope.Resolve(condition, context, nullptr));
    SplitConjuncts(resolved, &conjuncts);
    SILT_ASSIGN_OR_RETURN(
        bound, BindCondition(resolved, side, options.eval, "the condition of " + context));
  }
  std::unique_ptr<ClauseList> clauses;
  std::unique_ptr<WriteRules> rules;
  if (is_update) {
    SILT_ASSIGN_OR_RETURN(rules, WriteRules::Make(*snapshot, table->path(), options.eval));
    ClauseSpec spec;
    spec.kind = ActionKind::kUpdate;
    spec.text = context;
    SILT_ASSIGN_OR_RETURN(ResolvedAssignments resolved,
                          ResolveAssignments(scope, *set, true, false, context));
    spec.values = std::move(resolved.values);
    spec.assigned = std::move(resolved.assigned);
    SILT_ASSIGN_OR_RETURN(clauses, ClauseList::Make(scope, {spec}, options.eval, rules.get()));
  }
  SILT_ASSIGN_OR_RETURN(columnar::Conjunction pruning,
                        TargetConjunction(conjuncts, snapshot->schema(), options.eval));
  std::vector<const delta::AddFile*> files = SelectFiles(*snapshot, pruning);

  expr::EvalContext ctx;
  ctx.current_timestamp_micros =
      options.now_micros != 0 ? options.now_micros : SystemClock().NowMicros();
  const WriteMode mode = WriteModeFor(*snapshot);
  SILT_ASSIGN_OR_RETURN(std::unique_ptr<DmlWriter> writer, DmlWriter::Make(table, snapshot, mode));
  // delta-spark writes change data for UPDATE, and for a DELETE that
  // rewrites files; a DELETE by deletion vector or of whole partitions
  // leaves the changes to the adds and removes.
  const bool partition_only =
      OnlyPartitionColumns(resolved, *snapshot->schema(), snapshot->partition_columns());
  if (ChangeDataFeedOn(*snapshot) &&
      (is_update || (mode == WriteMode::kCopyOnWrite && !partition_only))) {
    SILT_RETURN_NOT_OK(writer->WriteChangeData());
  }
  int64_t changed = 0;
  int64_t scan_ms = 0;
  auto fail = [&](Status st) {
    writer->DeleteWritten();
    return st;
  };
  // A DELETE whose condition reads partition columns only removes the files
  // whose partition values satisfy it without reading them, as
  // delta-spark's metadata-only delete does, counting their rows from the
  // stats (a file without numRecords is read).
  const bool metadata_only = !is_update && partition_only;
  for (const delta::AddFile* file : files) {
    if (metadata_only) {
      std::optional<int64_t> records =
          file->stats ? delta::StatsNumRecords(*file->stats) : std::optional<int64_t>();
      if (records) {
        bool holds = true;
        if (bound != nullptr) {
          auto values = std::make_shared<columnar::RecordBatch>();
          values->schema = snapshot->schema();
          values->num_rows = 1;
          for (const columnar::Field& f : snapshot->schema()->fields()) {
            const bool is_partition = std::find(snapshot->partition_columns().begin(),
                                                snapshot->partition_columns().end(),
                                                f.name) != snapshot->partition_columns().end();
            if (!is_partition) {
              values->columns.push_back(columnar::MakeNullColumn(f.type, 1));
              continue;
            }
            Result<columnar::ColumnPtr> column = delta::MakePartitionColumn(
                f.type, delta::FindPartitionValue(file->partition_values, f.name), 1);
            if (!column.ok()) return fail(column.status().WithContextParts(file->path));
            values->columns.push_back(*column);
          }
          Result<std::vector<uint8_t>> result =
              EvaluateTrue(bound.get(), *scope.AsSide(Scope::kTarget, values), ctx);
          if (!result.ok()) return fail(result.status().WithContextParts(context));
          holds = (*result)[0] != 0;
        }
        if (holds) {
          writer->RemoveWhole(*file);
          changed += *records - (file->deletion_vector ? file->deletion_vector->cardinality : 0);
        }
        continue;
      }
    }
    const int64_t read_start = NowMillis();
    Result<TargetRows> rows = ReadTargetFile(*table, snapshot, *file);
    if (!rows.ok()) return fail(rows.status());
    scan_ms += NowMillis() - read_start;
    columnar::RecordBatchPtr target = scope.AsSide(Scope::kTarget, rows->rows);
    FileChange change;
    change.file = file;
    change.rows = rows->rows;
    change.row_metadata = rows->row_metadata;
    change.all_updated = is_update;
    if (bound != nullptr) {
      Result<std::vector<uint8_t>> holds = EvaluateTrue(bound.get(), *target, ctx);
      if (!holds.ok()) return fail(holds.status().WithContextParts(context));
      for (int64_t i = 0; i < target->num_rows; ++i) {
        if ((*holds)[static_cast<size_t>(i)]) change.dropped.push_back(i);
      }
    } else {
      change.dropped.resize(static_cast<size_t>(target->num_rows));
      for (int64_t i = 0; i < target->num_rows; ++i) change.dropped[static_cast<size_t>(i)] = i;
    }
    if (change.dropped.empty()) continue;
    changed += static_cast<int64_t>(change.dropped.size());
    if (is_update) {
      columnar::RecordBatchPtr updated =
          static_cast<int64_t>(change.dropped.size()) == target->num_rows
              ? target
              : columnar::TakeBatch(*target, change.dropped);
      Result<ClauseList::Outcome> outcome = clauses->Apply(updated, ctx);
      if (!outcome.ok()) return fail(outcome.status().WithContextParts(context));
      change.replacement = outcome->written;
      for (int64_t from : outcome->written_from) {
        change.replacement_of.push_back(change.dropped[static_cast<size_t>(from)]);
      }
    }
    Status st = writer->Apply(change);
    if (!st.ok()) return fail(st);
  }

  DmlCommit commit;
  commit.operation = operation;
  commit.rules = rules.get();
  commit.parameters["predicate"] =
      JsonStrings(condition != nullptr ? std::vector<std::string>{condition->ToString()}
                                       : std::vector<std::string>{});
  if (!is_update && condition == nullptr) commit.parameters["predicate"] = "[]";
  commit.read.whole_table = pruning.empty();
  if (!pruning.empty()) commit.read.predicates.push_back(pruning);
  for (const delta::AddFile* f : files) commit.read.files.push_back(f->path);
  // Metrics are known once the writer is finished; CommitDml finishes it,
  // so they are computed from what Apply counted.
  SILT_RETURN_NOT_OK(writer->Finish().WithContextParts(context));
  // delta-spark 3.2's counts. Copy-on-write: every touched file is
  // removed. With deletion vectors, UPDATE counts every touched file as
  // removed and no removed bytes, DELETE only the files left without rows,
  // and their bytes only when its condition reads partition columns alone
  // (delta-spark then deletes whole files from the metadata); UPDATE does
  // not count the vectors of files it removes whole.
  int64_t n_removed = writer->removed_files();
  int64_t removed_bytes = writer->removed_bytes();
  int64_t dv_removed = writer->deletion_vectors_removed();
  if (mode == WriteMode::kDeletionVectors) {
    if (is_update) {
      n_removed = writer->touched_files();
      removed_bytes = 0;
      dv_removed -= writer->removed_files_with_vector();
    } else if (!partition_only) {
      removed_bytes = 0;
    }
  }
  const std::string elapsed = std::to_string(NowMillis() - start_ms);
  commit.metrics = {
      {"numRemovedFiles", std::to_string(n_removed)},
      {"numAddedFiles", std::to_string(writer->new_files())},
      {is_update ? "numUpdatedRows" : "numDeletedRows", std::to_string(changed)},
      {"numCopiedRows", std::to_string(writer->copied_rows())},
      {"numAddedChangeFiles", std::to_string(writer->cdc_files().size())},
      {"numDeletionVectorsAdded", std::to_string(writer->deletion_vectors_added())},
      {"numDeletionVectorsRemoved", std::to_string(dv_removed)},
      {"numDeletionVectorsUpdated", std::to_string(writer->deletion_vectors_updated())},
      {"numRemovedBytes", std::to_string(removed_bytes)},
      {"numAddedBytes", std::to_string(writer->new_bytes())},
      {"executionTimeMs", elapsed},
      {"scanTimeMs", std::to_string(scan_ms)},
      {"rewriteTimeMs", std::to_string(NowMillis() - start_ms - scan_ms)}};
  result.num_affected_rows = changed;
  if (is_update) {
    result.num_updated_rows = changed;
  } else {
    result.num_deleted_rows = changed;
  }
  SILT_RETURN_NOT_OK(CommitDml(table, snapshot, writer.get(), std::move(commit), options, &result));
  return result;
}

}  // namespace

std::unique_ptr<RowSource> MakeBatchSource(columnar::SchemaPtr schema,
                                           std::vector<columnar::RecordBatchPtr> batches) {
  return std::make_unique<VectorSource>(std::move(schema), std::move(batches));
}

Result<DmlResult> Delete(delta::DeltaTable* table, const expr::NodePtr& condition,
                         const DmlOptions& options) {
  return RunTargetOnly(table, false, nullptr, condition, options);
}

Result<DmlResult> Update(delta::DeltaTable* table, const std::vector<expr::Assignment>& set,
                         const expr::NodePtr& condition, const DmlOptions& options) {
  return RunTargetOnly(table, true, &set, condition, options);
}

}  // namespace silt::dml
