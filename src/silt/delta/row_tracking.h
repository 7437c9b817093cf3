// Row tracking (PROTOCOL.md "Row Tracking"): fresh row ids and row commit
// versions for the files a commit adds, the delta.rowTracking high-water
// mark domain, and the hidden materialized row-id / row-commit-version
// columns that keep stable ids through rewrites (OPTIMIZE, DML).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/types.h"
#include "silt/delta/actions.h"
#include "silt/delta/table_properties.h"

namespace silt::delta {

class Snapshot;  // table.h

inline constexpr std::string_view kRowTrackingDomain = "delta.rowTracking";
// The commitInfo tag of a commit that kept every stable row id and row
// commit version it had to keep (CommitRequest::tags, value "true").
inline constexpr std::string_view kRowTrackingPreservedTag = "delta.rowTracking.preserved";

// True when commits to a table with this protocol and metadata must assign
// row ids: the rowTracking writer feature is supported and
// delta.rowTrackingSuspended is not true. Errors: InvalidArgument for a
// malformed property.
Result<bool> AssignsRowIds(const Protocol& protocol, const Metadata& metadata);

// True when row tracking is enabled (delta.enableRowTracking = true with the
// feature supported): readers may rely on row ids, writers preserve them
// through the materialized columns.
Result<bool> RowTrackingEnabled(const Protocol& protocol, const Metadata& metadata);

// The rowIdHighWaterMark of a delta.rowTracking domain; -1 when `domain` is
// null (no row id assigned yet). Errors: Corruption for a configuration
// that is not {"rowIdHighWaterMark": N, ...}.
Result<int64_t> RowIdHighWaterMark(const DomainMetadata* domain);

// The delta.rowTracking domain recording `high_water_mark`, in delta-spark's
// form ({"rowIdHighWaterMark":N,"domainName":"delta.rowTracking"}).
DomainMetadata RowTrackingDomain(int64_t high_water_mark);

// Gives every add without a baseRowId consecutive fresh row ids above
// `high_water_mark` (as many as its stats' numRecords) and every add without
// a defaultRowCommitVersion `version`; adds that have them (recommitted
// files: a new deletion vector, a restore) keep theirs. Returns the new
// high-water mark. Errors: InvalidArgument naming a file whose stats lack
// numRecords.
Result<int64_t> AssignRowIds(std::vector<AddFile>* adds, int64_t high_water_mark, int64_t version);

// Fresh names for the hidden materialized columns, as delta-spark makes them
// when row tracking is enabled on a table ("_row-id-col-<uuid>",
// "_row-commit-version-col-<uuid>"), added to `configuration` unless set.
void AddMaterializedRowTrackingColumnNames(TableConfiguration* configuration);

// The names of the materialized columns, when the table has them.
struct MaterializedRowTrackingColumns {
  std::string row_id;
  std::string row_commit_version;
};
std::optional<MaterializedRowTrackingColumns> MaterializedColumns(const Metadata& metadata);

// How a writer that keeps stable row ids (OPTIMIZE, DML) writes the data
// files of a table with row tracking enabled: the table's columns, then the
// two materialized columns (nullable longs; a NULL means "the file's
// default", PROTOCOL.md "Row Tracking"). Statistics cover the table's
// columns only: `stats_columns` is the number of leaf columns of the data
// file schema without the hidden ones, the most a writer may index.
struct RowTrackingWrite {
  MaterializedRowTrackingColumns names;
  columnar::SchemaPtr schema;
  int stats_columns = 0;
};

// The RowTrackingWrite of `snapshot`'s table, or nullopt when row tracking
// is not enabled there. Errors: Corruption naming `table_path` when the
// table enables row tracking without naming its materialized columns;
// InvalidArgument for a malformed property.
Result<std::optional<RowTrackingWrite>> RowTrackingWriteFor(const Snapshot& snapshot,
                                                            const std::string& table_path);

}  // namespace silt::delta
