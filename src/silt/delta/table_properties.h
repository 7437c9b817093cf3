// Delta table properties (`metaData.configuration`, keys `delta.*`): typed
// getters with delta-spark's defaults, Spark's interval strings for the
// duration properties, and the validation applied when a writer sets
// properties on a table.
//
// Keys are matched case-insensitively after the `delta.` prefix, as
// delta-spark does ("delta.checkpointinterval" is delta.checkpointInterval).
// A value that does not parse is InvalidArgument naming the key and the value:
// silt never silently falls back to the default for a value it cannot read.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "silt/base/result.h"

namespace silt::delta {

using TableConfiguration = std::map<std::string, std::string>;

// Property keys as delta-spark spells them.
inline constexpr std::string_view kAppendOnly = "delta.appendOnly";
inline constexpr std::string_view kCheckpointInterval = "delta.checkpointInterval";
inline constexpr std::string_view kLogRetentionDuration = "delta.logRetentionDuration";
inline constexpr std::string_view kDeletedFileRetentionDuration =
    "delta.deletedFileRetentionDuration";
inline constexpr std::string_view kEnableExpiredLogCleanup = "delta.enableExpiredLogCleanup";
inline constexpr std::string_view kEnableInCommitTimestamps = "delta.enableInCommitTimestamps";
inline constexpr std::string_view kInCommitTimestampEnablementVersion =
    "delta.inCommitTimestampEnablementVersion";
inline constexpr std::string_view kInCommitTimestampEnablementTimestamp =
    "delta.inCommitTimestampEnablementTimestamp";
inline constexpr std::string_view kEnableRowTracking = "delta.enableRowTracking";
inline constexpr std::string_view kEnableTypeWidening = "delta.enableTypeWidening";
inline constexpr std::string_view kRowTrackingSuspended = "delta.rowTrackingSuspended";
inline constexpr std::string_view kMaterializedRowIdColumnName =
    "delta.rowTracking.materializedRowIdColumnName";
inline constexpr std::string_view kMaterializedRowCommitVersionColumnName =
    "delta.rowTracking.materializedRowCommitVersionColumnName";
inline constexpr std::string_view kDataSkippingNumIndexedCols = "delta.dataSkippingNumIndexedCols";
inline constexpr std::string_view kDataSkippingStatsColumns = "delta.dataSkippingStatsColumns";
inline constexpr std::string_view kSetTransactionRetentionDuration =
    "delta.setTransactionRetentionDuration";
inline constexpr std::string_view kCheckpointWriteStatsAsJson = "delta.checkpoint.writeStatsAsJson";
inline constexpr std::string_view kCheckpointWriteStatsAsStruct =
    "delta.checkpoint.writeStatsAsStruct";
inline constexpr std::string_view kCheckpointPolicy = "delta.checkpointPolicy";
// checkpointProtection (protocol_rfcs/checkpoint-protection.md): the
// version before which checkpoints are protected, set by DROP FEATURE.
inline constexpr std::string_view kRequireCheckpointProtectionBeforeVersion =
    "delta.requireCheckpointProtectionBeforeVersion";
// The log retention DROP FEATURE ... TRUNCATE HISTORY cleans up with
// (default 24 hours).
inline constexpr std::string_view kDropFeatureTruncateHistoryRetention =
    "delta.dropFeatureTruncateHistory.retentionDuration";

// `delta.feature.<name>: supported` adds a table feature to a new table's
// protocol (delta-spark's way to support a feature without enabling it);
// the key is not kept in the table's configuration.
inline constexpr std::string_view kFeaturePropertyPrefix = "delta.feature.";

// Defaults (delta-spark DeltaConfigs).
inline constexpr int64_t kDefaultCheckpointInterval = 10;
inline constexpr int64_t kMillisPerDay = 24LL * 3600 * 1000;
inline constexpr int64_t kDefaultLogRetentionMs = 30 * kMillisPerDay;         // interval 30 days
inline constexpr int64_t kDefaultDeletedFileRetentionMs = 7 * kMillisPerDay;  // interval 1 week
inline constexpr int kDefaultDataSkippingNumIndexedCols = 32;

// Parses a Spark interval string as delta-spark reads duration properties
// (IntervalUtils.safeStringToInterval, then "no months, not negative"):
// an optional leading "interval", then one or more `<number> <unit>` pairs
// summed, case-insensitive, e.g. "interval 30 days", "168 hours",
// "interval 1 week 2 days", "1.5 seconds". Units: week, day, hour, minute,
// second, millisecond, microsecond (singular or plural). Returns whole
// milliseconds (microseconds truncated, as delta-spark's getMilliSeconds).
// Errors: InvalidArgument quoting the text for anything else — including
// months and years (which have no fixed length) and negative totals.
Result<int64_t> ParseIntervalMs(std::string_view text);

// The value of `key` (case-insensitive after "delta."), if set.
std::optional<std::string> GetTableProperty(const TableConfiguration& configuration,
                                            std::string_view key);

// Typed getters: the property's value, or delta-spark's default when unset.
// Errors: InvalidArgument "table property delta.X = 'v' is not …".
Result<bool> AppendOnly(const TableConfiguration& configuration);                 // false
Result<int64_t> CheckpointInterval(const TableConfiguration& configuration);      // 10, > 0
Result<int64_t> LogRetentionMs(const TableConfiguration& configuration);          // 30 days
Result<int64_t> DeletedFileRetentionMs(const TableConfiguration& configuration);  // 1 week
Result<bool> EnableExpiredLogCleanup(const TableConfiguration& configuration);    // true
Result<bool> EnableInCommitTimestamps(const TableConfiguration& configuration);   // false
Result<bool> EnableDeletionVectors(const TableConfiguration& configuration);      // false
Result<bool> EnableRowTracking(const TableConfiguration& configuration);          // false
Result<bool> RowTrackingSuspended(const TableConfiguration& configuration);       // false
Result<bool> EnableTypeWidening(const TableConfiguration& configuration);         // false
// -1 means every column; otherwise >= 0.                                        // 32
Result<int> DataSkippingNumIndexedCols(const TableConfiguration& configuration);
// Comma-separated column names (dotted for nested, backquotes allowed), when
// set; it then takes precedence over dataSkippingNumIndexedCols.
Result<std::optional<std::vector<std::string>>> DataSkippingStatsColumns(
    const TableConfiguration& configuration);
// Unset means txn actions are kept forever.
Result<std::optional<int64_t>> SetTransactionRetentionMs(const TableConfiguration& configuration);
Result<bool> CheckpointWriteStatsAsJson(const TableConfiguration& configuration);    // true
Result<bool> CheckpointWriteStatsAsStruct(const TableConfiguration& configuration);  // false
// delta.checkpointPolicy: true for "v2" (V2 checkpoints with sidecars; the
// table needs the v2Checkpoint feature), false for "classic" (the default).
Result<bool> CheckpointPolicyV2(const TableConfiguration& configuration);

// True when `key` names a Delta table property delta-spark defines (as
// ValidateTableProperties knows them), case-insensitively.
bool IsKnownTableProperty(std::string_view key);

// Validates properties a writer asks to set on a table (job-file sink
// options, table creation): every `delta.*` key must be one delta-spark
// defines and that silt either honours or that has no effect on how silt
// writes; values must parse. Non-`delta.` keys are user properties and pass.
// Returns the configuration with `delta.*` keys in delta-spark's spelling.
// Errors: InvalidArgument for an unknown `delta.*` key (with the closest
// known key as a hint) or a bad value; NotSupported for a known property
// that needs a feature silt does not write (e.g. delta.enableChangeDataFeed
// = true, delta.columnMapping.mode = name), and for
// `delta.feature.<name>` other than "supported" or naming a feature silt
// does not honour (those it does: appendOnly, invariants, domainMetadata,
// deletionVectors, inCommitTimestamp, rowTracking, vacuumProtocolCheck,
// typeWidening, timestampNtz).
Result<TableConfiguration> ValidateTableProperties(const TableConfiguration& configuration);

}  // namespace silt::delta
