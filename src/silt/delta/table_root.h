// The one check between a path the log names and a file operation: every
// command that deletes, overwrites or creates files under a Delta table
// (VACUUM full and lite, OPTIMIZE, log cleanup, the table writer behind the
// streaming sink and OPTIMIZE, the sink's orphan cleanup) resolves the path
// through here, so whatever a log says, nothing outside the table root is
// ever touched; RESTORE only reads the files it re-adds and writes its
// commit. A path that would escape is reported and skipped by the caller.
//
// Containment is lexical, as Hadoop's Path (and so delta-spark) normalizes:
// %-escapes are decoded first (`%2E%2E` is `..`), then "." and empty
// segments are dropped and ".." removes the segment before it. A URI must
// have the root's scheme and authority (`s3://bucket`); `file:` URIs are
// local paths. Symbolic links are not followed.
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "silt/base/result.h"

namespace silt::delta {

// `path` (a storage path or URI, already %-decoded) with "." and empty
// segments dropped and each ".." applied; nullopt when a ".." would climb
// above the path's root ("/", "s3://bucket", or the start of a relative
// path). "file:" URIs become local paths.
std::optional<std::string> NormalizeStoragePath(std::string_view path);

// The normalized `file` (a storage path, not %-decoded again) when it lies
// strictly below `table_root`.
// Errors: InvalidArgument naming the path and the root when it does not
// (outside, the root itself, or climbing above its own root).
Result<std::string> CheckInsideTable(std::string_view table_root, std::string_view file);

// ResolveDataFilePath (partition_utils.h) of `log_path` (an add/remove/
// deletion-vector path from the log), then CheckInsideTable: the storage
// path to delete or write. Errors: InvalidArgument for a malformed %-escape
// or a path outside the table root, naming the log's path.
Result<std::string> ResolvePathInsideTable(std::string_view table_root, std::string_view log_path);

}  // namespace silt::delta
