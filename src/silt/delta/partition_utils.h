// Partition values and data-file paths, as Delta writes them (FORMATS.md A4):
//
//  * partition values are strings in the log (`partitionValues`), one form per
//    type, null for a null value;
//  * partition directories are Hive-style `col=value` with Spark's escaping of
//    special characters as %XX and null as __HIVE_DEFAULT_PARTITION__;
//  * `add.path` is the URI (RFC 2396) form of the relative file path, so a '%'
//    produced by the escaping above appears as %25 in the log.
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/delta/actions.h"

namespace silt::delta {

// The directory name used for a null partition value.
inline constexpr std::string_view kHiveDefaultPartition = "__HIVE_DEFAULT_PARTITION__";

// Spark's ExternalCatalogUtils.escapePathName: each of 0x01-0x1F, '"', '#',
// '%', '\'', '*', '/', ':', '=', '?', '\\', 0x7F, '{', '[', ']', '^' becomes
// %XX (uppercase hex); everything else is kept.
std::string EscapePartitionPathName(std::string_view s);
// The inverse: %XX with two hex digits becomes the byte; anything else,
// including a malformed escape, is kept as is (as Spark does).
std::string UnescapePartitionPathName(std::string_view s);

// "col1=v1/col2=v2" (no trailing slash) for the given columns, in order;
// null values become __HIVE_DEFAULT_PARTITION__. Empty for no columns.
std::string PartitionDirectory(const PartitionValues& values);

// RFC 2396 path encoding as java.net.URI does for add.path (what delta-spark
// logs): letters, digits, "-_.!~*'()", ";:@&=+$," and '/' are kept, and so
// are non-ASCII characters other than controls and Unicode space separators
// (URI's "other" category: 'é', '日' stay as UTF-8); every other byte (space,
// '%', '#', '?', '[', ']', '{', '}', '"', '<', '>', '\\', '^', '`', '|',
// controls, U+00A0 and the like, malformed UTF-8) becomes %XX.
std::string UriEncodePath(std::string_view path);
// Decodes %XX escapes. '+' stays '+' (paths are not form-encoded).
// Errors: InvalidArgument naming the path when a '%' is not followed by two
// hex digits.
Result<std::string> UriDecodePath(std::string_view path);

// The storage path of a data file named by `add_path` (an add/remove path
// from the log): URI-decoded; "file:" URIs and absolute paths are used as
// such, URIs with another scheme as is, and relative paths are joined to
// `table_path`. Two log paths name the same file exactly when their resolved
// paths are equal (delta-spark canonicalizes the same way before matching).
// Errors: InvalidArgument for a malformed %-escape.
Result<std::string> ResolveDataFilePath(std::string_view table_path, std::string_view add_path);

// The log's string form of row `row` of `column` as a partition value
// (FORMATS.md A4): strings as is, integers and decimals as plain decimal
// text, float/double as Java prints them, booleans true/false, dates
// yyyy-MM-dd, timestamps ISO-8601 UTC with 6 fraction digits
// ("2000-01-01T12:00:00.000000Z", delta-spark's default), timestamp_ntz
// "yyyy-MM-dd HH:mm:ss[.ffffff]", binary as the raw bytes. Strings and bytes
// that are not valid UTF-8 get U+FFFD for each bad sequence, as delta-spark
// writes them. Null and the empty string are nullopt (Delta reads "" as
// null).
// REQUIRES: column.type is not nested; row < column.length.
std::optional<std::string> SerializePartitionValue(const columnar::Column& column, int64_t row);

// A column of `length` copies of the partition value `value` (nullopt = null)
// parsed as `type`. Accepts every form delta-spark, delta-rs and
// delta-kernel write (timestamps with or without 'T'/zone; a timestamp
// without a zone is read as UTC). Errors: InvalidArgument naming the value
// and the type when it does not parse.
Result<columnar::ColumnPtr> MakePartitionColumn(const columnar::TypePtr& type,
                                                const std::optional<std::string>& value,
                                                int64_t length);

// The value recorded for partition column `name` (case-insensitive), or
// nullopt when it is missing or null.
std::optional<std::string> FindPartitionValue(const PartitionValues& values, std::string_view name);

// `values` in the order of the table's partition columns `columns`, named as
// `columns` names them (a missing value is null), so that files written by
// different engines, or with the keys in another order or case, compare
// equal.
PartitionValues CanonicalPartitionValues(const PartitionValues& values,
                                         const std::vector<std::string>& columns);

// A string that tells partitions apart, for grouping files or rows by
// partition in a map: equal exactly when the (name, value) lists are equal
// element by element, and a null value differs from every string (the empty
// string included). Not a path: see PartitionDirectory for that.
std::string PartitionKey(const PartitionValues& values);

// Plain decimal text of an unscaled 128-bit value: (12345, 2) -> "123.45",
// (-5, 3) -> "-0.005", (7, 0) -> "7".
std::string FormatDecimal(__int128 unscaled, int scale);

// The column-mapping physical name of a field (its metadata's
// delta.columnMapping.physicalName: the name in data files, stats and
// partitionValues), or "" when the table does not map columns.
std::string PhysicalName(const columnar::Field& field);

}  // namespace silt::delta
