#include "silt/dml/operation.h"

#include "silt/base/clock.h"
#include "silt/base/json_writer.h"
#include "silt/base/logging.h"
#include "silt/delta/column_mapping.h"
#include "silt/delta/data_skipping.h"
#include "silt/delta/row_tracking.h"
#include "silt/delta/table_properties.h"
#include "silt/dml/scope.h"
#include "silt/query/predicate_extractor.h"

namespace silt::dml {

namespace {

bool PropertyIs(const delta::Metadata& metadata, std::string_view key, std::string_view value) {
  std::optional<std::string> v = delta::GetTableProperty(metadata.configuration, key);
  if (!v) return false;
  if (v->size() != value.size()) return false;
  for (size_t i = 0; i < value.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>((*v)[i])) !=
        std::tolower(static_cast<unsigned char>(value[i]))) {
      return false;
    }
  }
  return true;
}

}  // namespace

int64_t NowMillis() { return SystemClock().NowMicros() / 1000; }

Result<delta::SnapshotPtr> SnapshotForDml(delta::DeltaTable* table, const DmlOptions& options,
                                          const char* operation) {
  delta::SnapshotPtr snapshot = options.snapshot;
  if (snapshot == nullptr) {
    SILT_ASSIGN_OR_RETURN(snapshot, table->LatestSnapshot());
  }
  // Column mapping in name and id modes: DmlWriter writes physical names.
  SILT_RETURN_NOT_OK_CTX(delta::ColumnMappingModeOf(snapshot->metadata().configuration).status(),
                         operation, " on Delta table ", table->path());
  return snapshot;
}

bool ChangeDataFeedOn(const delta::Snapshot& snapshot) {
  return PropertyIs(snapshot.metadata(), "delta.enableChangeDataFeed", "true");
}

bool TxnAlreadyRecorded(const delta::Snapshot& snapshot, const DmlOptions& options) {
  if (!options.txn) return false;
  std::optional<int64_t> recorded = snapshot.TxnVersion(options.txn->app_id);
  return recorded && *recorded >= options.txn->version;
}

std::vector<const delta::AddFile*> SelectFiles(const delta::Snapshot& snapshot,
                                               const columnar::Conjunction& predicate) {
  std::vector<const delta::AddFile*> out;
  delta::FileSkipper skipper = delta::FileSkipper::Make(snapshot.metadata(), predicate);
  for (const delta::AddFile& file : snapshot.files()) {
    if (skipper.empty() || skipper.Decide(file) == delta::SkipDecision::kKeep) {
      out.push_back(&file);
    }
  }
  return out;
}

Result<columnar::Conjunction> TargetConjunction(const std::vector<expr::NodePtr>& conjuncts,
                                                const columnar::SchemaPtr& table_schema,
                                                const expr::EvalOptions& options) {
  columnar::Conjunction out;
  for (const expr::NodePtr& c : conjuncts) {
    expr::NodePtr plain = ToTargetNames(c, *table_schema);
    SILT_ASSIGN_OR_RETURN(columnar::Conjunction part,
                          query::ExtractConjunction(*plain, table_schema, options));
    out.insert(out.end(), part.begin(), part.end());
  }
  return out;
}

std::string JsonStrings(const std::vector<std::string>& values) {
  JsonWriter w;
  w.BeginArray();
  for (const std::string& v : values) w.String(v);
  w.EndArray();
  return w.Take();
}

Status CommitDml(delta::DeltaTable* table, const delta::SnapshotPtr& snapshot, DmlWriter* writer,
                 DmlCommit commit, const DmlOptions& options, DmlResult* result) {
  result->version = snapshot->version();
  SILT_RETURN_NOT_OK(writer->Finish());
  result->num_files_added = static_cast<int64_t>(writer->adds().size());
  result->num_files_removed = static_cast<int64_t>(writer->removes().size());
  for (const auto& [key, value] : commit.metrics) result->operation_metrics[key] = value;
  if (writer->adds().empty() && writer->removes().empty() && writer->cdc_files().empty() &&
      !options.txn) {
    return Status::OK();
  }
  if (options.before_commit) {
    Status st = options.before_commit();
    if (!st.ok()) {
      writer->DeleteWritten();
      return st;
    }
  }
  delta::CommitRequest request;
  request.operation = commit.operation;
  request.operation_parameters = std::move(commit.parameters);
  for (auto& [key, value] : commit.metrics) request.operation_metrics[key] = value;
  request.derive_write_metrics = false;
  request.is_blind_append = false;
  std::optional<std::string> level =
      delta::GetTableProperty(snapshot->metadata().configuration, "delta.isolationLevel");
  commit.read.isolation_level =
      level && *level == "Serializable" ? "Serializable" : "WriteSerializable";
  request.isolation_level = commit.read.isolation_level;
  request.read_set = std::move(commit.read);
  request.commit_info_extra = options.commit_info;
  request.txn = options.txn;
  if (writer->row_tracking()) request.tags[std::string(delta::kRowTrackingPreservedTag)] = "true";
  request.adds = writer->adds();
  request.removes = writer->removes();
  request.cdc_files = writer->cdc_files();
  // A DELETE writes no new rows and an UPDATE or MERGE applied the table's
  // rules to each (write_rules.h); rows copied unchanged keep satisfying
  // them. The rewrite writes physical names under column mapping
  // (rewrite.h).
  request.honoured_features = WriteRules::HonouredFeatures();
  request.honoured_features.emplace_back("columnMapping");
  if (commit.rules != nullptr) {
    SILT_ASSIGN_OR_RETURN(columnar::SchemaPtr marked, commit.rules->SchemaWithHighWaterMarks());
    if (marked != nullptr) {
      delta::Metadata metadata = snapshot->metadata();
      metadata.schema = marked;
      metadata.schema_string = columnar::SchemaToJson(*marked);
      request.new_metadata = std::move(metadata);
      // delta-spark tags a commit that raises a high-water mark.
      request.tags["delta.identity.schemaUpdate"] = "true";
    }
  }
  Result<delta::CommitResult> committed = delta::Commit(table, snapshot, request);
  if (!committed.ok()) {
    // A Conflict commits nothing: the new files are garbage. After another
    // error the commit may have landed, so they stay (VACUUM collects them
    // if not).
    if (committed.status().IsConflict()) writer->DeleteWritten();
    return committed.status().WithContextParts(commit.operation, " on Delta table ", table->path());
  }
  result->version = committed->version;
  result->skipped_duplicate = committed->skipped_duplicate;
  result->committed = !committed->skipped_duplicate;
  if (committed->skipped_duplicate) writer->DeleteWritten();
  SILT_LOG_INFO("dml", commit.operation, " on Delta table ", table->path(), " committed version ",
                committed->version, ": ", result->num_files_removed, " file(s) removed, ",
                result->num_files_added, " added");
  return Status::OK();
}

}  // namespace silt::dml
