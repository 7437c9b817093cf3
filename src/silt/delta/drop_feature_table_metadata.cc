// DROP FEATURE inCommitTimestamp, checkConstraints and domainMetadata
// (drop_feature_internal.h), whose traces are table properties or domains:
// inCommitTimestamp disables in-commit timestamps and removes their
// enablement properties; checkConstraints is refused while constraints
// exist; domainMetadata removes the domains no remaining feature needs.
#include <map>
#include <string>
#include <vector>

#include "silt/delta/constraints.h"
#include "silt/delta/drop_feature_internal.h"
#include "silt/delta/table_properties.h"

namespace silt::delta::drop_feature_internal {

namespace {

// The names of the table's CHECK constraints (delta.constraints.*).
std::vector<std::string> CheckConstraintNames(const Metadata& metadata) {
  std::vector<std::string> names;
  for (const Constraint& c : CheckConstraints(metadata)) names.push_back(c.name);
  return names;
}

}  // namespace

Result<bool> CleanOfInCommitTimestamp(const Snapshot& snapshot) {
  const TableConfiguration& conf = snapshot.metadata().configuration;
  SILT_ASSIGN_OR_RETURN(bool on, EnableInCommitTimestamps(conf));
  return !on && !GetTableProperty(conf, kInCommitTimestampEnablementVersion) &&
         !GetTableProperty(conf, kInCommitTimestampEnablementTimestamp);
}

Result<bool> CleanOfCheckConstraints(const Snapshot& snapshot) {
  return CheckConstraintNames(snapshot.metadata()).empty();
}

Result<bool> CleanOfDomainMetadata(const Snapshot& snapshot) {
  return snapshot.domain_metadata().empty();
}

Result<bool> FeatureDropper::PreDowngradeInCommitTimestamp(const SnapshotPtr& snapshot) {
  const TableConfiguration& conf = snapshot->metadata().configuration;
  std::vector<std::string> remove;
  for (std::string_view key :
       {kInCommitTimestampEnablementTimestamp, kInCommitTimestampEnablementVersion}) {
    if (GetTableProperty(conf, key)) remove.emplace_back(key);
  }
  SILT_ASSIGN_OR_RETURN(bool on, EnableInCommitTimestamps(conf));
  std::map<std::string, std::string> disable;
  if (on) {
    remove.emplace_back(kEnableInCommitTimestamps);  // replaced by "false"
    disable[std::string(kEnableInCommitTimestamps)] = "false";
  }
  // The parameters name the removed keys, then the disabled one.
  Metadata metadata = snapshot->metadata();
  for (const std::string& key : remove) metadata.configuration.erase(key);
  for (const auto& [key, value] : disable) metadata.configuration[key] = value;
  SILT_RETURN_NOT_OK(CommitMetadata(snapshot, std::move(metadata), "UNSET TBLPROPERTIES",
                                    {{"properties", JsonArray(remove)}}, {{"ifExists", "true"}}));
  return true;
}

Result<bool> FeatureDropper::PreDowngradeCheckConstraints(const SnapshotPtr& snapshot) {
  // delta-spark does not drop the constraints for the user: dropping a
  // feature never changes the table's logical content.
  std::string names;
  for (const std::string& name : CheckConstraintNames(snapshot->metadata())) {
    names += (names.empty() ? "`" : ", `") + name + "`";
  }
  return Status::InvalidArgument(
      "[DELTA_CANNOT_DROP_CHECK_CONSTRAINT_FEATURE] Cannot drop the CHECK constraints table "
      "feature. The following constraints must be dropped first: ",
      names, " (", Context(), ")");
}

Result<bool> FeatureDropper::PreDowngradeDomainMetadata(const SnapshotPtr& snapshot) {
  // No feature that needs domains is left (DELTA_FEATURE_DROP_DEPENDENT_FEATURE
  // otherwise), so the remaining ones are leaked: remove them all.
  CommitRequest request;
  request.operation = "DOMAIN METADATA CLEANUP";
  request.operation_parameters_json = {
      {"domainMetadataRemovedCount", std::to_string(snapshot->domain_metadata().size())}};
  request.is_blind_append = false;
  request.derive_write_metrics = false;
  request.honoured_features = Honoured();
  for (const auto& [name, domain] : snapshot->domain_metadata()) {
    DomainMetadata removed = domain;
    removed.removed = true;
    request.domain_metadata.push_back(std::move(removed));
  }
  SILT_RETURN_NOT_OK(Commit(table_, snapshot, request).status().WithContextParts(Context()));
  return true;
}

}  // namespace silt::delta::drop_feature_internal
