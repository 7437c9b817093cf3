// The parts of a `groupBy` step that the streaming aggregations share
// (stateful_aggregate.cc, session_window_aggregate.cc): its agg items and
// how a key names a column.
#pragma once

#include <string>

#include "silt/base/result.h"
#include "silt/exec/aggregate.h"
#include "silt/expr/parse/ast.h"

namespace silt::stream {

struct AggItem {
  exec::AggregateSpec spec;  // arg_type is set by the caller once the arg is bound
  expr::NodePtr arg;         // null for count(*)
  std::string name;
};

// One agg item: an aggregate call with an optional alias ("count(*) AS n").
// Errors: InvalidArgument naming `path`.
Result<AggItem> ParseAggItem(const std::string& text, const std::string& path);

// The node under an alias, or the node itself.
const expr::Node& Unalias(const expr::Node& node);

// True when `node` is the bare column `column` (case-insensitive).
bool RefersTo(const expr::Node& node, const std::string& column);

}  // namespace silt::stream
