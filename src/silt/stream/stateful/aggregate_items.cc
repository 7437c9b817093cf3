#include "silt/stream/stateful/aggregate_items.h"

#include "silt/base/strings.h"
#include "silt/exec/aggregate_rewriter.h"
#include "silt/expr/parse/parser.h"

namespace silt::stream {

using expr::NodeKind;

const expr::Node& Unalias(const expr::Node& node) {
  if (node.kind() == NodeKind::kAlias) {
    return *static_cast<const expr::AliasNode&>(node).child();
  }
  return node;
}

Result<AggItem> ParseAggItem(const std::string& text, const std::string& path) {
  Result<expr::NodePtr> node = expr::ParseNode(text);
  if (!node.ok()) return Status::InvalidArgument(path, ": ", node.status().message());
  AggItem item;
  item.name = (*node)->OutputName();
  const expr::Node& inner = Unalias(**node);
  if (inner.kind() != NodeKind::kCall) {
    return Status::InvalidArgument(path, ": '", text,
                                   "' is not an aggregate function call (write e.g. "
                                   "\"count(*) AS n\" or \"avg(temp) AS avg_temp\")");
  }
  const auto& call = static_cast<const expr::CallNode&>(inner);
  if (EqualsIgnoreCase(call.name(), "count") && call.star_arg()) {
    item.spec.kind = exec::AggKind::kCountStar;
    return item;
  }
  Result<exec::AggKind> kind = exec::AggKindFromName(call.name(), call.distinct());
  if (!kind.ok()) return Status::InvalidArgument(path, ": ", kind.status().message());
  Result<exec::AggregateSpec> spec = exec::AggregateCallSpec(call, *kind);
  if (!spec.ok()) return Status::InvalidArgument(path, ": ", spec.status().message());
  item.spec = std::move(*spec);
  if (call.args().empty()) {
    return Status::InvalidArgument(path, ": ", call.name(), " takes an argument, in '", text, "'");
  }
  item.arg = call.args()[0];
  return item;
}

bool RefersTo(const expr::Node& node, const std::string& column) {
  if (node.kind() != NodeKind::kColumnRef) return false;
  const auto& parts = static_cast<const expr::ColumnRefNode&>(node).parts();
  return parts.size() == 1 && EqualsIgnoreCase(parts[0], column);
}

}  // namespace silt::stream
