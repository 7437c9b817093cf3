#include "silt/dml/constraint_ddl.h"

#include <algorithm>

#include "silt/base/strings.h"
#include "silt/delta/constraints.h"
#include "silt/delta/protocol.h"
#include "silt/dml/clauses.h"
#include "silt/dml/write_rules.h"

namespace silt::dml {

namespace {

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// The configuration key of constraint `name` (any case), or "" when none.
std::string ExistingKey(const delta::Metadata& metadata, const std::string& name) {
  for (const delta::Constraint& c : delta::CheckConstraints(metadata)) {
    if (EqualsIgnoreCase(c.name, name)) return std::string(delta::kConstraintPrefix) + c.name;
  }
  return "";
}

}  // namespace

Status AddCheckConstraint(delta::DeltaTable* table, const std::string& name,
                          const std::string& expression, const expr::EvalOptions& eval) {
  const std::string context = "ADD CONSTRAINT " + name + " on Delta table " + table->path();
  SILT_ASSIGN_OR_RETURN(delta::SnapshotPtr snapshot, table->LatestSnapshot());
  const std::string existing = ExistingKey(snapshot->metadata(), name);
  if (!existing.empty()) {
    return Status::InvalidArgument("[DELTA_CONSTRAINT_ALREADY_EXISTS] Constraint '", name,
                                   "' already exists. Please delete the old constraint first.\n"
                                   "Old constraint:\n",
                                   snapshot->metadata().configuration.at(existing), " (", context,
                                   ")");
  }
  SILT_ASSIGN_OR_RETURN_CTX(RowCheck check,
                            MakeRowCheck(name, expression, snapshot->schema(), eval, ""), context);
  // Every live row must satisfy it (a NULL result violates too).
  SILT_ASSIGN_OR_RETURN(auto scan, delta::TableScan::Make(table->file_system(), table->path(),
                                                          snapshot, delta::ScanOptions{}));
  int64_t violations = 0;
  const expr::EvalContext ctx;
  while (true) {
    SILT_ASSIGN_OR_RETURN(columnar::RecordBatchPtr batch, scan->Next());
    if (batch == nullptr) break;
    if (batch->num_rows == 0) continue;
    SILT_ASSIGN_OR_RETURN(std::vector<uint8_t> holds, EvaluateTrue(check.holds.get(), *batch, ctx));
    for (uint8_t h : holds) violations += h ? 0 : 1;
  }
  if (violations > 0) {
    return Status::InvalidArgument("[DELTA_NEW_CHECK_CONSTRAINT_VIOLATION] ", violations,
                                   " rows in delta.`", table->path(),
                                   "` violate the new CHECK constraint (", expression, ")");
  }
  delta::Metadata metadata = snapshot->metadata();
  metadata.configuration[std::string(delta::kConstraintPrefix) + Lower(name)] = expression;
  delta::CommitRequest request;
  request.operation = "ADD CONSTRAINT";
  request.operation_parameters = {{"name", name}, {"expr", expression}};
  request.is_blind_append = false;
  request.derive_write_metrics = false;
  request.new_metadata = std::move(metadata);
  request.honoured_features = WriteRules::HonouredFeatures();
  request.honoured_features.emplace_back("columnMapping");  // metadata only, logical names
  // delta-spark upgrades a legacy protocol to writer version 3 (the lowest
  // with CHECK constraints) and lists the feature on a table-features one.
  delta::Protocol protocol = snapshot->protocol();
  const std::vector<std::string> features = delta::SupportedFeatures(protocol);
  if (std::find(features.begin(), features.end(), "checkConstraints") == features.end()) {
    if (protocol.min_writer_version >= 7) {
      delta::AddTableFeature(&protocol, "checkConstraints");
    } else {
      protocol.min_writer_version = 3;
    }
    request.new_protocol = protocol;
  }
  return delta::Commit(table, snapshot, request).status().WithContextParts(context);
}

Status DropCheckConstraint(delta::DeltaTable* table, const std::string& name, bool if_exists) {
  const std::string context = "DROP CONSTRAINT " + name + " on Delta table " + table->path();
  SILT_ASSIGN_OR_RETURN(delta::SnapshotPtr snapshot, table->LatestSnapshot());
  const std::string existing = ExistingKey(snapshot->metadata(), name);
  if (existing.empty() && !if_exists) {
    return Status::InvalidArgument(
        "[DELTA_CONSTRAINT_DOES_NOT_EXIST] Cannot drop nonexistent "
        "constraint ",
        name, " from table delta.`", table->path(),
        "`. To avoid throwing an error, provide the parameter IF "
        "EXISTS.");
  }
  delta::Metadata metadata = snapshot->metadata();
  delta::CommitRequest request;
  request.operation = "DROP CONSTRAINT";
  request.operation_parameters = {{"name", name}};
  if (!existing.empty()) {
    request.operation_parameters["expr"] = metadata.configuration.at(existing);
    metadata.configuration.erase(existing);
  }
  request.operation_parameters["existed"] = existing.empty() ? "false" : "true";
  request.derive_write_metrics = false;
  request.new_metadata = std::move(metadata);
  request.honoured_features = WriteRules::HonouredFeatures();
  request.honoured_features.emplace_back("columnMapping");  // metadata only, logical names
  return delta::Commit(table, snapshot, request).status().WithContextParts(context);
}

}  // namespace silt::dml
