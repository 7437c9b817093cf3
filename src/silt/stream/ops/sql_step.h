// The `sql` transform step, split into the steps it means, on the clause
// skeleton of expr's SELECT-statement parser:
//
//   SELECT <items> FROM input [WHERE <predicate>]
//       -> [where] + select. Everything after WHERE is the predicate, so a
//          clause silt does not take reaches the where step's parser.
//   SELECT <items> FROM input [WHERE ...] GROUP BY <keys> [HAVING <predicate>]
//       -> [where] + one stateful groupBy whose output is the select list
//          (sql_select), filtered by HAVING.
//
// ORDER BY and LIMIT are refused (NotSupported). Errors name the step's key
// path ("transform[2].sql") and the query text.
//
// Thread safety: pure function.
#pragma once

#include <vector>

#include "silt/base/result.h"
#include "silt/stream/job.h"

namespace silt::stream {

Result<std::vector<TransformStep>> SplitSqlStep(const TransformStep& step);

}  // namespace silt::stream
