// DROP FEATURE v2Checkpoint and checkpointProtection
// (drop_feature_internal.h): v2Checkpoint sets delta.checkpointPolicy to
// classic; checkpointProtection (TRUNCATE HISTORY only) truncates the log
// before its protected version, then unsets the property that names it.
#include "silt/delta/drop_feature_internal.h"
#include "silt/delta/log_cleanup.h"
#include "silt/delta/table_properties.h"

namespace silt::delta::drop_feature_internal {

bool MetadataUsesV2Checkpoint(const Metadata& metadata) {
  Result<bool> v2 = CheckpointPolicyV2(metadata.configuration);
  return !v2.ok() || *v2;
}

Result<bool> CleanOfV2Checkpoint(const Snapshot& snapshot) {
  SILT_ASSIGN_OR_RETURN(bool v2, CheckpointPolicyV2(snapshot.metadata().configuration));
  return !v2;
}

Result<bool> CleanOfCheckpointProtection(const Snapshot& snapshot) {
  return !GetTableProperty(snapshot.metadata().configuration,
                           kRequireCheckpointProtectionBeforeVersion);
}

Result<bool> FeatureDropper::PreDowngradeV2Checkpoint(const SnapshotPtr& snapshot) {
  Metadata metadata = snapshot->metadata();
  metadata.configuration[std::string(kCheckpointPolicy)] = "classic";
  SILT_RETURN_NOT_OK(CommitMetadata(snapshot, std::move(metadata), "SET TBLPROPERTIES",
                                    {{"properties", R"({"delta.checkpointPolicy":"classic"})"}},
                                    {}));
  return true;
}

Result<bool> FeatureDropper::PreDowngradeCheckpointProtection(SnapshotPtr snapshot) {
  SILT_ASSIGN_OR_RETURN(int64_t protected_before, CheckpointProtectedBeforeVersion(
                                                      snapshot->protocol(), snapshot->metadata()));
  auto truncated = [&]() -> Result<bool> {
    SILT_ASSIGN_OR_RETURN(LogFileTimes times,
                          ListLogFileTimes(table_->file_system().get(), table_->log_path()));
    if (times.commits.empty() || times.commits.front().version < protected_before) return false;
    return !times.checkpoint_versions.empty() &&
           times.checkpoint_versions.front() >= protected_before;
  };
  SILT_ASSIGN_OR_RETURN(bool done, truncated());
  if (protected_before > 0 && !done) {
    SILT_RETURN_NOT_OK(EmptyCommitAndCheckpoint());
    SILT_ASSIGN_OR_RETURN(SnapshotPtr latest, table_->LatestSnapshot());
    LogCleanupOptions cleanup;
    SILT_ASSIGN_OR_RETURN(cleanup.retention_ms, TruncateHistoryRetentionMs(latest->metadata()));
    cleanup.minute_granularity = true;
    cleanup.protected_before_version = protected_before;
    SILT_RETURN_NOT_OK(CleanUpExpiredLogs(table_->file_system().get(), table_->log_path(),
                                          latest->metadata(), now_ms(), cleanup)
                           .status());
    SILT_ASSIGN_OR_RETURN(done, truncated());
    if (!done) {
      return Status::InvalidArgument(
          "[DELTA_FEATURE_DROP_CHECKPOINT_PROTECTION_WAIT_FOR_RETENTION_PERIOD] The operation "
          "did not succeed because there are still traces of dropped features in the table "
          "history. CheckpointProtection cannot be dropped until these historical versions "
          "have expired. To drop CheckpointProtection, please wait for the historical versions "
          "to expire, and then repeat this command. The retention period for historical "
          "versions is currently configured to ",
          TruncateHistoryRetentionText(latest->metadata()), " (", Context(), ")");
    }
    SILT_ASSIGN_OR_RETURN(snapshot, table_->LatestSnapshot());
  }
  // History before the protected version is gone: the property may go
  // (it is no trace of a dropped feature).
  SILT_RETURN_NOT_OK(
      UnsetProperties(snapshot, {std::string(kRequireCheckpointProtectionBeforeVersion)}, {}));
  return false;
}

}  // namespace silt::delta::drop_feature_internal
