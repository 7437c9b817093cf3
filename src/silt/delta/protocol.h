// Protocol gates (FORMATS.md A7): which tables silt may read and which it may
// append to. A table that needs a capability silt does not implement is
// refused with NotSupported naming the feature, never read or written wrongly.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "silt/base/result.h"
#include "silt/base/status.h"
#include "silt/delta/actions.h"
#include "silt/delta/table_properties.h"

namespace silt::delta {

// The highest legacy versions silt understands.
inline constexpr int32_t kMaxReaderVersion = 3;
inline constexpr int32_t kMaxWriterVersion = 7;

// OK when silt reads the table correctly. Reader features silt implements:
// timestampNtz, vacuumProtocolCheck (affects only VACUUM), v2Checkpoint,
// deletionVectors (applied by TableScan), typeWidening and
// typeWidening-preview (TableScan casts values files hold in the type before
// a widening), and columnMapping in modes none, name and id (TableScan reads
// fields at every depth by physical name, or Parquet field id in id mode).
// variantType / variantShredding (and their -preview names: TableScan reads
// variant columns, shredded ones reassembled). Everything else —
// catalog-managed tables, unknown features — is NotSupported naming the
// feature(s).
Status CheckReadSupported(const Protocol& protocol, const Metadata& metadata);

// OK when silt may append to the table (blind appends with txn records):
// the read gate passes and every writer capability the table requires is
// either implemented or inert for appends given the table's metadata (for
// example checkConstraints without any delta.constraints.* property).
// `honoured` names writer features the writer implements itself beyond
// blind appends (the Delta sinks and DML: generatedColumns,
// identityColumns, whose values they compute, checkConstraints and
// invariants, which they check on every new row); other writers pass none
// and are refused them.
// Errors: NotSupported naming the feature and why.
Status CheckWriteSupported(const Protocol& protocol, const Metadata& metadata,
                           const std::vector<std::string>& honoured = {});

// The protocol delta-spark gives a new table with these properties: 1/2
// unless a property needs a table feature: delta.enableDeletionVectors (the
// deletionVectors reader and writer feature, 3/7),
// delta.enableInCommitTimestamps (inCommitTimestamp) and
// delta.enableRowTracking (rowTracking and domainMetadata),
// delta.enableTypeWidening (typeWidening, reader and writer) and `clustered`
// (clustering and domainMetadata: CLUSTER BY), the last three with
// appendOnly and invariants listed as delta-spark 4 does; plus each feature
// named by a `delta.feature.<name> = supported` property (in readerFeatures
// too when readers need it). Errors:
// InvalidArgument for a malformed value.
Result<Protocol> ProtocolForNewTable(const TableConfiguration& configuration,
                                     bool clustered = false);

// True for the table features readers must know too (listed in
// readerFeatures and writerFeatures).
bool IsReaderWriterFeature(std::string_view feature);

// True when `feature` is among the protocol's writer features (writer
// version 7).
bool SupportsWriterFeature(const Protocol& protocol, std::string_view feature);

// Adds the features a schema needs to `protocol`: variantType (reader and
// writer, moving the protocol to 3/7 with the legacy versions' features
// listed) when a column is or holds a VARIANT. Returns whether the protocol
// changed (the commit must then carry it).
bool AddSchemaFeatures(const columnar::DataType& schema, Protocol* protocol);

// The writer features a writer that only moves rows unchanged (OPTIMIZE,
// VACUUM) keeps intact: generated and identity columns (the values stay,
// so do their expressions and high-water marks), CHECK constraints and
// column invariants (the rows satisfied them when written, as delta-spark's
// OPTIMIZE assumes).
inline const std::vector<std::string>& RowPreservingFeatures() {
  static const std::vector<std::string> kFeatures = {"generatedColumns", "identityColumns",
                                                     "checkConstraints", "invariants"};
  return kFeatures;
}

// Every feature `protocol` supports: its reader and writer feature lists,
// or the features its legacy versions imply (writer 2: appendOnly and
// invariants, ... 6: identityColumns; reader 2: columnMapping), each once.
std::vector<std::string> SupportedFeatures(const Protocol& protocol);

// `protocol` without `feature`, in the weakest form that still supports
// every other feature (delta-spark's removeFeature + normalize): legacy
// versions when the remaining features are exactly what some legacy
// versions imply, else writer 7 (reader 3 when a reader-writer feature
// remains, listed in readerFeatures) with the features listed.
Protocol RemoveTableFeature(const Protocol& protocol, std::string_view feature);

// Adds table feature `feature` to `protocol` (in readerFeatures too when
// IsReaderWriterFeature), moving it to writer 7 (and reader 3) with the
// legacy versions' implied features listed, as delta-spark upgrades a
// protocol. Returns whether the protocol changed (false when it already
// has the feature or its -preview name).
bool AddTableFeature(Protocol* protocol, std::string_view feature);

}  // namespace silt::delta
