// ALTER TABLE ... DROP FEATURE (delta-spark 4.4's AlterTableDropFeatureDeltaCommand):
// removes a table feature from a table's protocol after removing its traces
// from the latest version, so that clients without the feature can read
// and write the table again.
//
// For each feature silt drops, the pre-downgrade work is delta-spark's, as
// separate commits: deletionVectors unsets delta.enableDeletionVectors,
// rewrites every file with a deletion vector (REORG ... APPLY (PURGE)) and
// records tombstones for the vector files still referenced by tombstones
// ("Deletion Vector Tombstones"); v2Checkpoint sets delta.checkpointPolicy
// to classic; inCommitTimestamp disables in-commit timestamps and removes
// their enablement properties; vacuumProtocolCheck needs nothing;
// typeWidening (and -preview) unsets delta.enableTypeWidening, rewrites
// the files stored in a narrower type (REORG) and removes the
// delta.typeChanges field metadata; columnMapping rewrites every file with
// logical names in one REMOVE COLUMN MAPPING commit that also drops the
// mapping metadata; rowTracking suspends row ids and re-adds the files
// without them (ROW TRACKING UNBACKFILL), its properties and domain going
// with the downgrade; domainMetadata removes leaked domains;
// checkConstraints is refused while constraints exist.
//
// Then, by default, reader-writer features (whose traces in the history an
// old reader would misread) are dropped with checkpoint protection, as
// delta-spark 4.4 does by default: three empty commits each followed by a
// classic checkpoint, then the protocol downgrade commit, which adds the
// checkpointProtection writer feature and
// delta.requireCheckpointProtectionBeforeVersion = its own version, then a
// checkpoint. Writer-only features are downgraded at once. With TRUNCATE
// HISTORY (the legacy procedure), a reader-writer feature whose traces the
// pre-downgrade step had to remove fails with
// DELTA_FEATURE_DROP_WAIT_FOR_RETENTION_PERIOD after an empty commit and a
// checkpoint; run again once delta.dropFeatureTruncateHistory.retentionDuration
// (24 hours) has passed, it deletes the log before that checkpoint and
// downgrades the protocol unless a remaining commit still uses the feature
// (DELTA_FEATURE_DROP_HISTORICAL_VERSIONS_EXIST). checkpointProtection
// itself is dropped only with TRUNCATE HISTORY, once the log before its
// protected version can go.
//
// Thread safety: one call per table at a time; concurrent writers are
// handled by the commits' conflict rules.
#pragma once

#include <cstdint>
#include <string>

#include "silt/base/result.h"
#include "silt/delta/table.h"

namespace silt::delta {

struct DropFeatureOptions {
  bool truncate_history = false;
  // The clock for tombstones and TRUNCATE HISTORY's cutoff; 0 = now.
  int64_t now_ms = 0;
};

struct DropFeatureResult {
  // The protocol downgrade commit.
  int64_t version = -1;
  Protocol protocol;
};

// Drops `feature` from `table`'s protocol. Errors, with delta-spark's error
// classes in the message: InvalidArgument for
// [DELTA_FEATURE_DROP_UNSUPPORTED_CLIENT_FEATURE] (a name delta-spark 4.4
// does not know), [DELTA_FEATURE_DROP_FEATURE_NOT_PRESENT],
// [DELTA_FEATURE_DROP_NONREMOVABLE_FEATURE],
// [DELTA_FEATURE_DROP_FEATURE_IS_DELTA_PROPERTY],
// [DELTA_FEATURE_DROP_HISTORY_TRUNCATION_NOT_ALLOWED],
// [DELTA_FEATURE_CAN_ONLY_DROP_CHECKPOINT_PROTECTION_WITH_HISTORY_TRUNCATION],
// [DELTA_FEATURE_DROP_DEPENDENT_FEATURE],
// [DELTA_FEATURE_DROP_WAIT_FOR_RETENTION_PERIOD],
// [DELTA_FEATURE_DROP_HISTORICAL_VERSIONS_EXIST],
// [DELTA_FEATURE_DROP_CHECKPOINT_PROTECTION_WAIT_FOR_RETENTION_PERIOD],
// [DELTA_CANNOT_DROP_CHECK_CONSTRAINT_FEATURE],
// [DELTA_INVALID_COLUMN_NAMES_WHEN_REMOVING_COLUMN_MAPPING];
// Conflict for [DELTA_FEATURE_DROP_CONFLICT_REVALIDATION_FAIL] (a concurrent
// commit brought the feature back) and the commits' conflicts; NotSupported
// for a removable feature silt does not drop yet (naming it) and for tables
// silt cannot write; the log's and the file system's errors.
Result<DropFeatureResult> DropFeature(DeltaTable* table, const std::string& feature,
                                      const DropFeatureOptions& options = {});

}  // namespace silt::delta
