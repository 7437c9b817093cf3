// Constants and errors shared by the Delta source's two walks: the table's
// added files (delta_source.cc) and its change data feed
// (delta_source_cdc.cc). Not part of the source's interface.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "silt/base/status.h"

namespace silt::stream::internal {

// Spark's END_INDEX: after every file of a version. Never serialized.
inline constexpr int64_t kDeltaEndIndex = std::numeric_limits<int64_t>::max() - 100;
// DeltaOptions.MAX_FILES_PER_TRIGGER_OPTION_DEFAULT, and the count used when
// only maxBytesPerTrigger is set (Int.MaxValue - 8).
inline constexpr int64_t kDeltaDefaultMaxFiles = 1000;
inline constexpr int64_t kDeltaUnlimitedFiles = 2147483647 - 8;

// Spark's DELTA_MISSING_FILES_UNEXPECTED_VERSION: the stream needs
// `expected` but the log's next commit is `found` (Corruption).
Status DeltaMissingVersionError(int64_t expected, int64_t found, const std::string& table_path);

}  // namespace silt::stream::internal
