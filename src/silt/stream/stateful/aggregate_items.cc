#include "silt/stream/stateful/aggregate_items.h"

#include "silt/base/strings.h"
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
  item.spec.kind = *kind;
  const bool first_last = *kind == exec::AggKind::kFirst || *kind == exec::AggKind::kLast;
  const size_t max_args = first_last ? 2 : 1;
  if (call.args().empty() || call.args().size() > max_args) {
    return Status::InvalidArgument(path, ": ", call.name(), " takes ",
                                   first_last ? "one or two arguments" : "one argument", ", in '",
                                   text, "'");
  }
  if (call.args().size() == 2) {
    const expr::Node& flag = *call.args()[1];
    const auto* literal =
        flag.kind() == NodeKind::kLiteral ? static_cast<const expr::LiteralNode*>(&flag) : nullptr;
    if (literal == nullptr || literal->value().is_null || literal->value().type == nullptr ||
        literal->value().type->id() != columnar::TypeId::kBoolean) {
      return Status::InvalidArgument(path, ": the second argument of ", call.name(),
                                     " (ignoreNulls) must be true or false, in '", text, "'");
    }
    item.spec.ignore_nulls = literal->value().int_value != 0;
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
