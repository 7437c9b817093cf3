#include "silt/exec/aggregate_rewriter.h"

#include "silt/base/strings.h"
#include "silt/expr/parse/ast_walk.h"

namespace silt::exec {

namespace {

using expr::Node;
using expr::NodeKind;
using expr::NodePtr;

NodePtr Ref(std::string name, int64_t pos) {
  return std::make_shared<expr::ColumnRefNode>(std::vector<std::string>{std::move(name)}, pos);
}

// first(x, true) / last(x, true): the ignoreNulls flag, a boolean literal.
std::optional<bool> IgnoreNullsArg(const Node& node) {
  if (node.kind() != NodeKind::kLiteral) return std::nullopt;
  const auto& value = static_cast<const expr::LiteralNode&>(node).value();
  if (value.is_null || value.type == nullptr || value.type->id() != columnar::TypeId::kBoolean) {
    return std::nullopt;
  }
  return value.int_value != 0;
}

}  // namespace

std::optional<AggKind> AggregateCallKind(const expr::CallNode& call) {
  std::string name = AsciiLower(call.name());
  if (name == "count") {
    if (call.star_arg()) return AggKind::kCountStar;
    return call.distinct() ? AggKind::kCountDistinct : AggKind::kCount;
  }
  Result<AggKind> kind = exec::AggKindFromName(name, /*distinct=*/false);
  if (!kind.ok()) return std::nullopt;
  return *kind;
}

bool ContainsAggregate(const expr::Node& node) {
  bool found = false;
  expr::VisitNodes(node, [&](const expr::Node& n) {
    if (n.kind() == NodeKind::kCall && AggregateCallKind(static_cast<const expr::CallNode&>(n))) {
      found = true;
    }
  });
  return found;
}

std::string AggregateRewriter::KeyColumn(size_t k) { return "__key" + std::to_string(k); }

std::string AggregateRewriter::AggColumn(size_t a) { return "__agg" + std::to_string(a); }

void AggregateRewriter::AddKey(const expr::Node& key, std::string name) {
  key_texts_.push_back(AsciiLower(key.ToString()));
  key_names_.push_back(AsciiLower(name));
}

Result<NodePtr> AggregateRewriter::Rewrite(const NodePtr& node) {
  std::string text = AsciiLower(node->ToString());
  for (size_t k = 0; k < key_texts_.size(); ++k) {
    if (key_texts_[k] == text) return Ref(KeyColumn(k), node->position());
  }
  if (node->kind() == NodeKind::kColumnRef) {
    const auto& parts = static_cast<const expr::ColumnRefNode&>(*node).parts();
    for (size_t k = 0; k < key_names_.size(); ++k) {
      if (key_names_[k].empty() || key_names_[k] != AsciiLower(parts[0])) continue;
      // `window.start`: a field of the key.
      NodePtr out = Ref(KeyColumn(k), node->position());
      for (size_t p = 1; p < parts.size(); ++p) {
        out = std::make_shared<expr::FieldAccessNode>(out, parts[p], node->position());
      }
      return out;
    }
  }
  const int64_t pos = node->position();
  switch (node->kind()) {
    case NodeKind::kCall: {
      const auto& call = static_cast<const expr::CallNode&>(*node);
      if (std::optional<AggKind> kind = AggregateCallKind(call)) {
        for (const NodePtr& arg : call.args()) {
          if (ContainsAggregate(*arg)) {
            return Status::InvalidArgument("aggregate functions cannot be nested, in '",
                                           node->ToString(), "'");
          }
        }
        bool ignore_nulls = false;
        const bool first_last = *kind == AggKind::kFirst || *kind == AggKind::kLast;
        if (first_last && call.args().size() == 2) {
          std::optional<bool> flag = IgnoreNullsArg(*call.args()[1]);
          if (!flag) {
            return Status::InvalidArgument("the second argument of ", call.name(),
                                           " must be a boolean literal, in '", node->ToString(),
                                           "'");
          }
          ignore_nulls = *flag;
        } else if (*kind != AggKind::kCountStar && call.args().size() != 1) {
          return Status::InvalidArgument(call.name(), " takes one argument in silt sql, in '",
                                         node->ToString(), "'");
        }
        if (call.distinct() && *kind != AggKind::kCountDistinct) {
          return Status::NotSupported(call.name(), "(DISTINCT ...) is not supported yet, in '",
                                      node->ToString(), "'");
        }
        for (size_t a = 0; a < calls_.size(); ++a) {
          if (calls_[a].text == text) return Ref(AggColumn(a), pos);
        }
        calls_.push_back(
            Call{*kind, call.args().empty() ? nullptr : call.args()[0], text, ignore_nulls});
        return Ref(AggColumn(calls_.size() - 1), pos);
      }
      std::vector<NodePtr> args;
      for (const NodePtr& arg : call.args()) {
        SILT_ASSIGN_OR_RETURN(NodePtr r, Rewrite(arg));
        args.push_back(std::move(r));
      }
      return NodePtr(std::make_shared<expr::CallNode>(call.name(), std::move(args), call.star_arg(),
                                                      call.distinct(), pos));
    }
    case NodeKind::kFieldAccess: {
      const auto& n = static_cast<const expr::FieldAccessNode&>(*node);
      SILT_ASSIGN_OR_RETURN(NodePtr child, Rewrite(n.child()));
      return NodePtr(std::make_shared<expr::FieldAccessNode>(child, n.field(), pos));
    }
    case NodeKind::kCast: {
      const auto& n = static_cast<const expr::CastNode&>(*node);
      SILT_ASSIGN_OR_RETURN(NodePtr child, Rewrite(n.child()));
      return NodePtr(std::make_shared<expr::CastNode>(child, n.type(), pos, n.try_cast()));
    }
    case NodeKind::kUnary: {
      const auto& n = static_cast<const expr::UnaryNode&>(*node);
      SILT_ASSIGN_OR_RETURN(NodePtr child, Rewrite(n.child()));
      return NodePtr(std::make_shared<expr::UnaryNode>(n.op(), child, pos));
    }
    case NodeKind::kBinary: {
      const auto& n = static_cast<const expr::BinaryNode&>(*node);
      SILT_ASSIGN_OR_RETURN(NodePtr left, Rewrite(n.left()));
      SILT_ASSIGN_OR_RETURN(NodePtr right, Rewrite(n.right()));
      return NodePtr(std::make_shared<expr::BinaryNode>(n.op(), left, right, pos));
    }
    case NodeKind::kIsNull: {
      const auto& n = static_cast<const expr::IsNullNode&>(*node);
      SILT_ASSIGN_OR_RETURN(NodePtr child, Rewrite(n.child()));
      return NodePtr(std::make_shared<expr::IsNullNode>(child, n.negated(), pos));
    }
    case NodeKind::kAlias: {
      const auto& n = static_cast<const expr::AliasNode&>(*node);
      SILT_ASSIGN_OR_RETURN(NodePtr child, Rewrite(n.child()));
      return NodePtr(std::make_shared<expr::AliasNode>(child, n.name(), pos));
    }
    case NodeKind::kColumnRef:
      return Status::InvalidArgument(
          "'", node->ToString(),
          "' is neither in the GROUP BY clause nor inside an aggregate function");
    case NodeKind::kStar:
      return Status::InvalidArgument("'*' cannot be selected in an aggregate query");
    default: return node;
  }
}

}  // namespace silt::exec
