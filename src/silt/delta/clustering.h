// Liquid clustering (PROTOCOL.md "Clustered Table"): the clustering columns
// of a table in its delta.clustering metadata domain, as delta-spark writes
// and reads them.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "silt/base/result.h"
#include "silt/delta/actions.h"

namespace silt::delta {

class Snapshot;  // table.h

inline constexpr std::string_view kClusteringDomain = "delta.clustering";
// The clusteringProvider of files clustered by liquid clustering.
inline constexpr std::string_view kLiquidClusteringProvider = "liquid";

// The delta.clustering domain naming `columns` (top-level physical names)
// in delta-spark's form:
// {"clusteringColumns":[["a"],["b"]],"domainName":"delta.clustering"}.
DomainMetadata ClusteringDomain(const std::vector<std::string>& columns);

// The clustering columns of `snapshot` (dotted paths for nested ones):
// empty when the table is not clustered (no clustering writer feature, no
// domain, or CLUSTER BY NONE). Errors: Corruption for a malformed domain.
Result<std::vector<std::string>> ClusteringColumns(const Snapshot& snapshot);

}  // namespace silt::delta
