// VisitNodes: calls `f` on a parsed expression and on every subtree below
// it, parents first (column references, calls and their arguments, casts,
// operators, aliases). For passes over a statement's clauses: which columns
// a query reads, whether an item holds an aggregate call.
#pragma once

#include "silt/expr/parse/ast.h"

namespace silt::expr {

// Visits `node` and its subtrees.
template <typename F>
void VisitNodes(const Node& node, const F& f) {
  f(node);
  switch (node.kind()) {
    case NodeKind::kFieldAccess:
      VisitNodes(*static_cast<const expr::FieldAccessNode&>(node).child(), f);
      break;
    case NodeKind::kCall:
      for (const NodePtr& arg : static_cast<const expr::CallNode&>(node).args())
        VisitNodes(*arg, f);
      break;
    case NodeKind::kCast: VisitNodes(*static_cast<const expr::CastNode&>(node).child(), f); break;
    case NodeKind::kUnary: VisitNodes(*static_cast<const expr::UnaryNode&>(node).child(), f); break;
    case NodeKind::kBinary: {
      const auto& b = static_cast<const expr::BinaryNode&>(node);
      VisitNodes(*b.left(), f);
      VisitNodes(*b.right(), f);
      break;
    }
    case NodeKind::kIsNull:
      VisitNodes(*static_cast<const expr::IsNullNode&>(node).child(), f);
      break;
    case NodeKind::kAlias: VisitNodes(*static_cast<const expr::AliasNode&>(node).child(), f); break;
    default: break;
  }
}

}  // namespace silt::expr
