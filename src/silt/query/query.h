// Batch queries over one Delta table snapshot, for `silt read` and
// `silt sql`: scan (with partition, file-statistics and row-group pruning
// from the WHERE clause), filter with the full expression, then either
// project, or group and aggregate (exec/aggregate.h) and filter with HAVING;
// then ORDER BY and LIMIT.
//
// Name resolution follows Spark: columns case-insensitively; ORDER BY names
// a select-list alias or ordinal first, else an input column (in an
// aggregate query, a GROUP BY expression or an aggregate); GROUP BY takes
// expressions, select-list aliases or ordinals. Without ORDER BY, rows come
// in scan order and a LIMIT stops the scan early.
//
// Thread safety: one query per thread.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/delta/table.h"
#include "silt/expr/parse/ast.h"
#include "silt/expr/parse/select_statement.h"

namespace silt::query {

struct QuerySpec {
  std::vector<expr::NodePtr> select;  // empty = every column
  expr::NodePtr where;                // may be null
  std::vector<expr::NodePtr> group_by;
  expr::NodePtr having;
  std::vector<expr::OrderItem> order_by;
  int64_t limit = -1;  // < 0: no limit
};

struct QueryStats {
  delta::ScanMetrics scan;
  columnar::Conjunction pushed;  // what the scan pruned with
  int64_t rows_scanned = 0;      // rows the scan returned (before WHERE)
  int64_t rows_matched = 0;      // rows that passed WHERE
  int64_t rows_output = 0;
};

// Receives the output: the schema once, then batches (possibly none).
struct QueryOutput {
  std::function<Status(const columnar::SchemaPtr&)> begin;
  std::function<Status(const columnar::RecordBatch&)> batch;
};

// Runs `spec` over `snapshot` of `table`. Errors: InvalidArgument for
// unknown columns or functions, a non-boolean WHERE/HAVING, a select item
// that is neither grouped nor aggregated, aggregates nested in aggregates
// or in WHERE; the scan's errors; those of `output`.
Result<QueryStats> RunQuery(const delta::DeltaTable& table, const delta::SnapshotPtr& snapshot,
                            const QuerySpec& spec, const QueryOutput& output);

// The number of rows matching `where` (null = all) answered from the log
// alone: numRecords of the files whose partition values satisfy `where`,
// when `where` references partition columns only, no live file has a
// deletion vector and every file has numRecords. nullopt otherwise (count
// by scanning instead).
Result<std::optional<int64_t>> CountFromStats(const delta::SnapshotPtr& snapshot,
                                              const expr::NodePtr& where);

// Parses "YYYY-MM-DD[ HH:MM:SS[.ffffff]]" (UTC; 'T' also accepted) into
// milliseconds since the epoch. Errors: InvalidArgument quoting the text.
Result<int64_t> ParseTimeTravelTimestamp(std::string_view text);

}  // namespace silt::query
