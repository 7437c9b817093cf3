#include "silt/stream/maintenance.h"

#include <algorithm>
#include <map>

#include "silt/base/clock.h"
#include "silt/base/logging.h"
#include "silt/delta/optimize.h"
#include "silt/delta/partition_utils.h"
#include "silt/delta/table.h"
#include "silt/delta/vacuum.h"
#include "silt/expr/expression.h"
#include "silt/expr/parse/ast.h"
#include "silt/expr/parse/parser.h"
#include "silt/fs/s3_file_system.h"
#include "silt/stream/options_internal.h"

namespace silt::stream {

namespace {

bool Stopped(const MaintenanceOptions& options) {
  return options.stop_flag != nullptr && options.stop_flag->load();
}

// One run over every table; returns the first failure (after trying all).
Status RunOnce(const MaintenanceSpec& spec, const MaintenanceOptions& options, const Clock& clock,
               MaintenanceResult* result) {
  auto report = [&](const std::string& line) {
    if (options.on_report) options.on_report(line);
  };
  Status first_error;
  auto fail = [&](const std::string& what, const std::string& table, const Status& st) {
    ++result->failures;
    report(Status::Concat("[silt] ", what, " ", table, " failed: ", st.message()));
    if (first_error.ok()) first_error = st.WithContextParts(what, " of ", table);
  };
  for (const std::string& path : spec.tables) {
    if (Stopped(options)) break;
    Result<std::unique_ptr<delta::DeltaTable>> table = delta::DeltaTable::OpenExisting(path);
    if (!table.ok()) {
      fail("maintenance", path, table.status());
      continue;
    }
    if (spec.optimize) {
      delta::OptimizeOptions optimize;
      optimize.where = spec.optimize_where;
      optimize.file_filter = PartitionPredicateFilter(spec.optimize_where, &clock);
      optimize.target_file_bytes = spec.target_file_bytes;
      optimize.min_input_files = spec.min_input_files;
      optimize.zorder_by = spec.zorder_by;
      Result<delta::OptimizeResult> optimized = delta::Optimize(table->get(), optimize);
      if (!optimized.ok()) {
        fail("OPTIMIZE", path, optimized.status());
      } else if (optimized->version < 0) {
        report(Status::Concat("[silt] OPTIMIZE ", path, ": nothing to compact (",
                              optimized->total_considered_files, " files)"));
      } else {
        report(Status::Concat("[silt] OPTIMIZE ", path, ": version ", optimized->version, ", ",
                              optimized->num_removed_files, " files -> ",
                              optimized->num_added_files, " files"));
      }
    }
    if (spec.vacuum && !Stopped(options)) {
      delta::VacuumOptions vacuum;
      vacuum.retention_ms = spec.vacuum_retention_ms;
      vacuum.retention_check = spec.vacuum_retention_check;
      vacuum.dry_run = spec.vacuum_dry_run;
      vacuum.lite = spec.vacuum_lite;
      vacuum.clock = options.clock;
      Result<delta::VacuumResult> vacuumed = delta::Vacuum(table->get(), vacuum);
      if (!vacuumed.ok()) {
        fail("VACUUM", path, vacuumed.status());
      } else {
        report(Status::Concat(
            "[silt] VACUUM ", path, ": ", spec.vacuum_dry_run ? "would delete " : "deleted ",
            spec.vacuum_dry_run ? static_cast<int64_t>(vacuumed->files.size()) : vacuumed->deleted,
            " files (", vacuumed->bytes, " bytes), retention ",
            delta::FormatRetention(vacuumed->retention_ms)));
      }
    }
  }
  return first_error;
}

// Every column reference in a parsed predicate (top-level name).
void CollectColumns(const expr::Node& node, std::vector<std::string>* out) {
  using expr::NodeKind;
  switch (node.kind()) {
    case NodeKind::kColumnRef: {
      const auto& ref = static_cast<const expr::ColumnRefNode&>(node);
      if (!ref.parts().empty()) out->push_back(ref.parts().front());
      return;
    }
    case NodeKind::kFieldAccess:
      CollectColumns(*static_cast<const expr::FieldAccessNode&>(node).child(), out);
      return;
    case NodeKind::kCall:
      for (const expr::NodePtr& arg : static_cast<const expr::CallNode&>(node).args()) {
        CollectColumns(*arg, out);
      }
      return;
    case NodeKind::kCast:
      CollectColumns(*static_cast<const expr::CastNode&>(node).child(), out);
      return;
    case NodeKind::kUnary:
      CollectColumns(*static_cast<const expr::UnaryNode&>(node).child(), out);
      return;
    case NodeKind::kBinary: {
      const auto& binary = static_cast<const expr::BinaryNode&>(node);
      CollectColumns(*binary.left(), out);
      CollectColumns(*binary.right(), out);
      return;
    }
    case NodeKind::kIsNull:
      CollectColumns(*static_cast<const expr::IsNullNode&>(node).child(), out);
      return;
    case NodeKind::kAlias:
      CollectColumns(*static_cast<const expr::AliasNode&>(node).child(), out);
      return;
    case NodeKind::kLiteral:
    case NodeKind::kStar: return;
  }
}

}  // namespace

Result<std::vector<delta::AddFile>> FilterFilesByPartition(const delta::Snapshot& snapshot,
                                                           const std::string& where,
                                                           const Clock& clock) {
  if (where.empty()) return snapshot.files();
  const std::vector<std::string>& partition_columns = snapshot.partition_columns();
  SILT_ASSIGN_OR_RETURN(expr::NodePtr node, expr::ParseNode(where));
  std::vector<std::string> referenced;
  CollectColumns(*node, &referenced);
  for (const std::string& name : referenced) {
    bool is_partition =
        std::any_of(partition_columns.begin(), partition_columns.end(),
                    [&](const std::string& p) { return internal::EqualsIgnoreCase(p, name); });
    if (!is_partition) {
      return Status::InvalidArgument("predicate '", where, "' references non-partition column '",
                                     name, "'; only the partition columns may be referenced: ",
                                     internal::BracketedList(partition_columns));
    }
  }
  std::vector<columnar::Field> fields;
  for (const std::string& column : partition_columns) {
    int idx = snapshot.schema()->FieldIndex(column);
    if (idx < 0) {
      return Status::Corruption("partition column '", column, "' is not in the table schema");
    }
    fields.push_back(snapshot.schema()->field(idx));
  }
  columnar::SchemaPtr schema = columnar::DataType::Struct(fields);
  SILT_ASSIGN_OR_RETURN(expr::BoundExpressionPtr bound, expr::Bind(*node, schema));
  if (bound->type()->id() != columnar::TypeId::kBoolean) {
    return Status::InvalidArgument("predicate '", where, "' is ", bound->type()->ToDdl(),
                                   ", not BOOLEAN");
  }

  // One row per distinct partition; evaluate once over all of them.
  std::map<std::string, size_t> partition_row;
  std::vector<delta::PartitionValues> partitions;
  std::vector<size_t> file_row;
  file_row.reserve(snapshot.files().size());
  for (const delta::AddFile& add : snapshot.files()) {
    delta::PartitionValues values =
        delta::CanonicalPartitionValues(add.partition_values, partition_columns);
    auto [it, inserted] = partition_row.try_emplace(delta::PartitionKey(values), partitions.size());
    if (inserted) partitions.push_back(std::move(values));
    file_row.push_back(it->second);
  }
  if (partitions.empty()) return std::vector<delta::AddFile>();
  auto batch = std::make_shared<columnar::RecordBatch>();
  batch->schema = schema;
  batch->num_rows = static_cast<int64_t>(partitions.size());
  for (size_t col_idx = 0; col_idx < fields.size(); ++col_idx) {
    std::vector<columnar::ColumnPtr> rows;
    rows.reserve(partitions.size());
    for (const delta::PartitionValues& values : partitions) {
      SILT_ASSIGN_OR_RETURN_CTX(
          columnar::ColumnPtr value,
          delta::MakePartitionColumn(fields[col_idx].type, values[col_idx].second, 1),
          "partition column '", fields[col_idx].name, "'");
      rows.push_back(std::move(value));
    }
    batch->columns.push_back(columnar::ConcatColumns(rows));
  }
  expr::EvalContext ctx;
  ctx.current_timestamp_micros = clock.NowMicros();
  SILT_ASSIGN_OR_RETURN_CTX(columnar::ColumnPtr keep, bound->Evaluate(*batch, ctx),
                            "evaluating predicate '", where, "'");
  std::vector<delta::AddFile> out;
  for (size_t file_idx = 0; file_idx < snapshot.files().size(); ++file_idx) {
    auto row = static_cast<int64_t>(file_row[file_idx]);
    if (keep->IsValid(row) && keep->BoolValue(row)) out.push_back(snapshot.files()[file_idx]);
  }
  return out;
}

delta::OptimizeFileFilter PartitionPredicateFilter(std::string where, const Clock* clock) {
  if (where.empty()) return nullptr;
  return [where = std::move(where), clock](const delta::Snapshot& snapshot) {
    return FilterFilesByPartition(snapshot, where, *clock);
  };
}

Result<MaintenanceResult> RunMaintenance(const JobSpec& job, const MaintenanceOptions& options) {
  if (!job.maintenance) {
    return Status::InvalidArgument("job '", job.name, "' is not a maintenance job");
  }
  const MaintenanceSpec& spec = *job.maintenance;
  // The job's `storage.s3` settings reach every s3:// table opened below.
  SILT_RETURN_NOT_OK(fs::SetS3Settings(job.storage_s3));
  Clock& clock = options.clock != nullptr ? *options.clock : SystemClock();
  MaintenanceResult result;
  while (!Stopped(options)) {
    const int64_t started = clock.MonotonicMicros();
    Status st = RunOnce(spec, options, clock, &result);
    ++result.runs;
    if (spec.interval_micros <= 0) {
      if (!st.ok()) return st;
      break;
    }
    if (spec.max_runs && result.runs >= *spec.max_runs) break;
    // Wait for the next run in short steps so a stop request ends the wait.
    const int64_t next = started + spec.interval_micros;
    while (!Stopped(options)) {
      int64_t left = next - clock.MonotonicMicros();
      if (left <= 0) break;
      clock.SleepMicros(std::min<int64_t>(left, 100000));
    }
  }
  return result;
}

Result<std::optional<delta::AutoCompactOptions>> ParseAutoCompactOptions(
    const std::map<std::string, std::string>& sink_options) {
  internal::OptionReader reader(sink_options, "sink.options");
  SILT_ASSIGN_OR_RETURN(std::optional<bool> enabled, reader.GetBool("autoCompact"));
  if (!enabled.value_or(false)) return std::optional<delta::AutoCompactOptions>();
  delta::AutoCompactOptions options;
  SILT_ASSIGN_OR_RETURN(std::optional<int64_t> every,
                        reader.GetInt("autoCompact.everyNCommits", 1));
  if (every) options.every_n_commits = *every;
  SILT_ASSIGN_OR_RETURN(std::optional<int64_t> min_files,
                        reader.GetInt("autoCompact.minNumFiles", 2));
  if (min_files) options.min_num_files = *min_files;
  if (std::optional<std::string> size = reader.Get("autoCompact.maxFileSize")) {
    Result<int64_t> bytes = ParseByteSize(*size);
    if (!bytes.ok()) {
      return Status::InvalidArgument(reader.KeyPath("autoCompact.maxFileSize"), ": ",
                                     bytes.status().message());
    }
    options.max_file_bytes = *bytes;
  }
  if (std::optional<std::string> size = reader.Get("autoCompact.minFileSize")) {
    Result<int64_t> bytes = ParseByteSize(*size);
    if (!bytes.ok()) {
      return Status::InvalidArgument(reader.KeyPath("autoCompact.minFileSize"), ": ",
                                     bytes.status().message());
    }
    options.min_file_bytes = *bytes;
  }
  return std::optional<delta::AutoCompactOptions>(options);
}

}  // namespace silt::stream
