#include "silt/dml/scope.h"

#include <functional>

namespace silt::dml {

namespace {

using expr::Node;
using expr::NodeKind;
using expr::NodePtr;

bool SameName(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

using RefMap = std::function<Result<NodePtr>(const expr::ColumnRefNode&)>;

// Rebuilds `node` with every column reference replaced by `map`'s result.
Result<NodePtr> Transform(const NodePtr& node, const RefMap& map) {
  switch (node->kind()) {
    case NodeKind::kColumnRef: return map(static_cast<const expr::ColumnRefNode&>(*node));
    case NodeKind::kFieldAccess: {
      const auto& n = static_cast<const expr::FieldAccessNode&>(*node);
      SILT_ASSIGN_OR_RETURN(NodePtr child, Transform(n.child(), map));
      return NodePtr(std::make_shared<expr::FieldAccessNode>(child, n.field(), n.position()));
    }
    case NodeKind::kStar:
      return Status::InvalidArgument("'", node->ToString(),
                                     "' is not allowed in a DML condition or value");
    case NodeKind::kCall: {
      const auto& n = static_cast<const expr::CallNode&>(*node);
      std::vector<NodePtr> args;
      for (const NodePtr& a : n.args()) {
        SILT_ASSIGN_OR_RETURN(NodePtr arg, Transform(a, map));
        args.push_back(std::move(arg));
      }
      return NodePtr(std::make_shared<expr::CallNode>(n.name(), std::move(args), n.star_arg(),
                                                      n.distinct(), n.position()));
    }
    case NodeKind::kCast: {
      const auto& n = static_cast<const expr::CastNode&>(*node);
      SILT_ASSIGN_OR_RETURN(NodePtr child, Transform(n.child(), map));
      return NodePtr(std::make_shared<expr::CastNode>(child, n.type(), n.position(), n.try_cast()));
    }
    case NodeKind::kUnary: {
      const auto& n = static_cast<const expr::UnaryNode&>(*node);
      SILT_ASSIGN_OR_RETURN(NodePtr child, Transform(n.child(), map));
      return NodePtr(std::make_shared<expr::UnaryNode>(n.op(), child, n.position()));
    }
    case NodeKind::kBinary: {
      const auto& n = static_cast<const expr::BinaryNode&>(*node);
      SILT_ASSIGN_OR_RETURN(NodePtr left, Transform(n.left(), map));
      SILT_ASSIGN_OR_RETURN(NodePtr right, Transform(n.right(), map));
      return NodePtr(std::make_shared<expr::BinaryNode>(n.op(), left, right, n.position()));
    }
    case NodeKind::kIsNull: {
      const auto& n = static_cast<const expr::IsNullNode&>(*node);
      SILT_ASSIGN_OR_RETURN(NodePtr child, Transform(n.child(), map));
      return NodePtr(std::make_shared<expr::IsNullNode>(child, n.negated(), n.position()));
    }
    case NodeKind::kAlias: {
      const auto& n = static_cast<const expr::AliasNode&>(*node);
      SILT_ASSIGN_OR_RETURN(NodePtr child, Transform(n.child(), map));
      return NodePtr(std::make_shared<expr::AliasNode>(child, n.name(), n.position()));
    }
    case NodeKind::kLiteral: return node;
  }
  return node;
}

columnar::SchemaPtr Renamed(const columnar::SchemaPtr& schema, int side) {
  std::vector<columnar::Field> fields;
  for (int i = 0; i < schema->num_fields(); ++i) {
    columnar::Field f = schema->field(i);
    f.name = Scope::InternalName(side, i);
    f.nullable = true;  // the other side's rows may be all null
    fields.push_back(std::move(f));
  }
  return columnar::DataType::Struct(std::move(fields));
}

}  // namespace

Scope::Scope(std::string target_alias, columnar::SchemaPtr target, std::string source_alias,
             columnar::SchemaPtr source) {
  alias_[kTarget] = std::move(target_alias);
  alias_[kSource] = std::move(source_alias);
  user_[kTarget] = std::move(target);
  user_[kSource] = std::move(source);
  std::vector<columnar::Field> joined;
  for (int side = 0; side < num_sides(); ++side) {
    side_[side] = Renamed(user_[side], side);
    for (const columnar::Field& f : side_[side]->fields()) joined.push_back(f);
  }
  joined_ = columnar::DataType::Struct(std::move(joined));
}

std::string Scope::InternalName(int side, int column) {
  return (side == kTarget ? "__t" : "__s") + std::to_string(column);
}

Result<expr::NodePtr> Scope::Resolve(const expr::NodePtr& node, const std::string& context,
                                     unsigned* sides) const {
  unsigned used = 0;
  auto map = [&](const expr::ColumnRefNode& ref) -> Result<NodePtr> {
    const std::vector<std::string>& parts = ref.parts();
    int side = -1;
    int column = -1;
    size_t rest = 1;
    if (parts.size() >= 2) {
      for (int s = 0; s < num_sides(); ++s) {
        if (alias_[s].empty() || !SameName(alias_[s], parts[0])) continue;
        int c = user_[s]->FieldIndex(parts[1]);
        if (c >= 0) {
          side = s;
          column = c;
          rest = 2;
        }
      }
    }
    if (side < 0) {
      for (int s = 0; s < num_sides(); ++s) {
        int c = user_[s]->FieldIndex(parts[0]);
        if (c < 0) continue;
        if (side >= 0) {
          return Status::InvalidArgument("[AMBIGUOUS_REFERENCE] Reference `", parts[0],
                                         "` is ambiguous (both the target and the source have "
                                         "it; qualify it with an alias), in ",
                                         context);
        }
        side = s;
        column = c;
      }
    }
    if (side < 0) {
      std::string names;
      for (int s = 0; s < num_sides(); ++s) {
        for (const columnar::Field& f : user_[s]->fields()) {
          if (!names.empty()) names += ", ";
          names += "`" + (alias_[s].empty() ? "" : alias_[s] + "`.`") + f.name + "`";
        }
      }
      return Status::InvalidArgument(
          "[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column or function parameter with name `",
          ref.ToString(), "` cannot be resolved. Did you mean one of the following? [", names,
          "], in ", context);
    }
    used |= 1u << side;
    std::vector<std::string> out = {InternalName(side, column)};
    out.insert(out.end(), parts.begin() + static_cast<std::ptrdiff_t>(rest), parts.end());
    return NodePtr(std::make_shared<expr::ColumnRefNode>(std::move(out), ref.position()));
  };
  Result<NodePtr> out = Transform(node, map);
  if (!out.ok()) return out.status().WithContextParts("in ", context);
  if (sides != nullptr) *sides = used;
  return out;
}

Result<Scope::AssignedTarget> Scope::AssignedColumn(const std::vector<std::string>& column,
                                                    const std::string& context) const {
  size_t at = 0;
  if (column.size() >= 2 && !alias_[kTarget].empty() && SameName(column[0], alias_[kTarget]) &&
      user_[kTarget]->FieldIndex(column[1]) >= 0) {
    at = 1;
  }
  int index = user_[kTarget]->FieldIndex(column[at]);
  if (index < 0) {
    std::string text;
    for (const std::string& part : column) text += (text.empty() ? "" : ".") + part;
    return Status::InvalidArgument("[UNRESOLVED_COLUMN] the target table has no column `", text,
                                   "`, in ", context);
  }
  AssignedTarget out;
  out.column = index;
  out.fields.assign(column.begin() + static_cast<std::ptrdiff_t>(at) + 1, column.end());
  return out;
}

columnar::RecordBatchPtr Scope::AsSide(int side, const columnar::RecordBatchPtr& batch) const {
  auto out = std::make_shared<columnar::RecordBatch>();
  out->schema = side_[side];
  out->num_rows = batch->num_rows;
  out->columns = batch->columns;
  return out;
}

void SplitConjuncts(const expr::NodePtr& node, std::vector<expr::NodePtr>* out) {
  if (node->kind() == NodeKind::kBinary) {
    const auto& b = static_cast<const expr::BinaryNode&>(*node);
    if (b.op() == expr::BinaryOp::kAnd) {
      SplitConjuncts(b.left(), out);
      SplitConjuncts(b.right(), out);
      return;
    }
  }
  out->push_back(node);
}

expr::NodePtr ToTargetNames(const expr::NodePtr& node, const columnar::Schema& target) {
  auto map = [&](const expr::ColumnRefNode& ref) -> Result<NodePtr> {
    std::vector<std::string> parts = ref.parts();
    const std::string prefix = Scope::InternalName(Scope::kTarget, 0).substr(0, 3);
    if (parts[0].rfind(prefix, 0) == 0) {
      int index = std::stoi(parts[0].substr(3));
      parts[0] = target.field(index).name;
    }
    return NodePtr(std::make_shared<expr::ColumnRefNode>(std::move(parts), ref.position()));
  };
  Result<NodePtr> out = Transform(node, map);
  return out.ok() ? *out : node;
}

}  // namespace silt::dml
