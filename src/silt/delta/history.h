// Table history (DESCRIBE HISTORY): the commitInfo of each version, newest
// first, with the timestamp delta-spark shows — the in-commit timestamp when
// the commit has one, else the commit file's modification time made
// monotonic (log_cleanup.h).
//
// Thread safety: pure functions over the file system.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "silt/base/result.h"
#include "silt/delta/table.h"

namespace silt::delta {

struct HistoryEntry {
  int64_t version = -1;
  int64_t timestamp_ms = 0;
  // The commitInfo object as JSON text; nullopt when the commit has none.
  std::optional<std::string> commit_info_json;
  // Fields of commitInfo most callers want ("" / nullopt when absent).
  std::string operation;
  std::optional<int64_t> read_version;
  std::optional<bool> is_blind_append;
  std::string engine_info;
};

// The history of `table`, newest version first, at most `limit` entries when
// set. Versions whose commit files were removed by log cleanup are not
// listed. Errors: NotFound when the table has no commits; Corruption for a
// malformed commit file.
Result<std::vector<HistoryEntry>> ReadHistory(DeltaTable* table,
                                              std::optional<int64_t> limit = std::nullopt);

}  // namespace silt::delta
