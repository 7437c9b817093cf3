#include "silt/expr/expression.h"

#include <cctype>

#include "silt/expr/ast.h"
#include "silt/expr/bind_session_internal.h"
#include "silt/expr/binder.h"
#include "silt/expr/bound.h"
#include "silt/expr/function_registry.h"
#include "silt/expr/parser.h"

namespace silt::expr {

namespace {

// The public face of a bound tree: evaluates the root and expands a constant
// result to the batch's length.
class BoundExpressionImpl final : public BoundExpression {
 public:
  BoundExpressionImpl(BoundNodePtr root, std::string name)
      : root_(std::move(root)), name_(std::move(name)) {}

  const columnar::TypePtr& type() const override { return root_->type(); }
  bool nullable() const override { return root_->nullable(); }
  const std::string& name() const override { return name_; }

  Result<columnar::ColumnPtr> Evaluate(const columnar::RecordBatch& batch,
                                       const EvalContext& ctx) override {
    SILT_ASSIGN_OR_RETURN(Datum result, root_->Eval(batch, ctx));
    if (result.constant) return ExpandConstant(*result.column, batch.num_rows);
    return result.column;
  }

 private:
  BoundNodePtr root_;
  std::string name_;
};

Result<const Node*> AsNode(const Expression& expr) {
  const auto* node = dynamic_cast<const Node*>(&expr);
  if (node == nullptr) {
    return Status::InvalidArgument("Expression '", expr.ToString(),
                                   "' was not created by ParseExpression");
  }
  return node;
}

}  // namespace

BindSession::BindSession() : state_(std::make_unique<State>()) {}
BindSession::~BindSession() = default;

Result<ExpressionPtr> ParseExpression(std::string_view text) {
  SILT_ASSIGN_OR_RETURN(NodePtr node, ParseNode(text));
  return ExpressionPtr(std::move(node));
}

std::optional<GeneratorSpec> AsGenerator(const Expression& expr) {
  const Node* node = dynamic_cast<const Node*>(&expr);
  if (node == nullptr) return std::nullopt;
  std::string alias;
  if (node->kind() == NodeKind::kAlias) {
    const auto* a = static_cast<const AliasNode*>(node);
    alias = a->name();
    node = a->child().get();
  }
  if (node->kind() != NodeKind::kCall) return std::nullopt;
  const auto* call = static_cast<const CallNode*>(node);
  std::string name = call->name();
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (name == "json_tuple" && call->args().size() >= 2) {
    GeneratorSpec spec;
    spec.function = name;
    spec.argument = call->args()[0];
    spec.alias = alias;
    for (size_t i = 1; i < call->args().size(); ++i) {
      // Each key becomes get_json_object(json, '$['key']') named c<i-1>: a
      // field name, never a path (dots and brackets stay literal).
      const Node& key = *call->args()[i];
      std::string field;
      if (key.kind() == NodeKind::kLiteral) {
        const LiteralNode::Value& v = static_cast<const LiteralNode&>(key).value();
        if (v.is_null || v.type == nullptr || v.type->id() != columnar::TypeId::kString) {
          return std::nullopt;
        }
        field = v.string_value;
      } else {
        return std::nullopt;
      }
      std::string quoted;
      for (char c : field) {
        if (c == '\\' || c == '\'') quoted.push_back('\\');
        quoted.push_back(c);
      }
      std::string text = "get_json_object(" + spec.argument->ToString() + ", '$[\\'" + quoted +
                         "\\']') AS c" + std::to_string(i - 1);
      Result<NodePtr> item = ParseNode(text);
      if (!item.ok()) return std::nullopt;
      spec.json_tuple_items.push_back(std::move(*item));
    }
    return spec;
  }
  if (name == "window" && call->args().size() >= 2 && call->args().size() <= 4) {
    // Spark's TimeWindowing turns the row into one row per window containing
    // its time (none for a NULL time): an explode of the window list.
    GeneratorSpec spec;
    spec.function = name;
    spec.argument = std::make_shared<CallNode>(std::string(kWindowListFunction), call->args(),
                                               false, false, call->position());
    spec.alias = alias.empty() ? "window" : alias;
    return spec;
  }
  if (name != "explode" && name != "explode_outer" && name != "posexplode" &&
      name != "posexplode_outer") {
    return std::nullopt;
  }
  if (call->args().size() != 1) return std::nullopt;
  GeneratorSpec spec;
  spec.function = name;
  spec.argument = call->args()[0];
  spec.alias = alias;
  spec.outer = name.ends_with("_outer");
  spec.with_position = name.starts_with("pos");
  return spec;
}

Result<BoundExpressionPtr> Bind(const Expression& expr, const columnar::SchemaPtr& input_schema,
                                const EvalOptions& options, BindSession* session) {
  SILT_ASSIGN_OR_RETURN(const Node* node, AsNode(expr));
  Binder binder(input_schema, options, node->ToString(), session);
  SILT_ASSIGN_OR_RETURN(BoundNodePtr bound, binder.Bind(*node));
  std::string name = Binder::OutputName(*node, *bound);
  return BoundExpressionPtr(
      std::make_unique<BoundExpressionImpl>(std::move(bound), std::move(name)));
}

Result<std::vector<BoundExpressionPtr>> BindSelectItem(const Expression& expr,
                                                       const columnar::SchemaPtr& input_schema,
                                                       const EvalOptions& options,
                                                       BindSession* session) {
  SILT_ASSIGN_OR_RETURN(const Node* node, AsNode(expr));
  std::vector<BoundExpressionPtr> out;
  if (node->kind() != NodeKind::kStar) {
    SILT_ASSIGN_OR_RETURN(BoundExpressionPtr bound, Bind(expr, input_schema, options, session));
    out.push_back(std::move(bound));
    return out;
  }
  const auto& star = static_cast<const StarNode&>(*node);
  if (star.qualifier().empty()) {
    for (int i = 0; i < input_schema->num_fields(); ++i) {
      const columnar::Field& field = input_schema->field(i);
      out.push_back(std::make_unique<BoundExpressionImpl>(std::make_unique<BoundColumn>(i, field),
                                                          field.name));
    }
    return out;
  }
  // x.*: the fields of struct x, each bound as x.`field`.
  Binder binder(input_schema, options, node->ToString(), session);
  ColumnRefNode qualifier(star.qualifier(), node->position());
  SILT_ASSIGN_OR_RETURN(BoundNodePtr parent, binder.Bind(qualifier));
  const columnar::DataType& type = *parent->type();
  if (type.id() != columnar::TypeId::kStruct) {
    return Status::InvalidArgument("Cannot expand '", node->ToString(), "': ", parent->sql(),
                                   " is of type ", type.ToDdl(), ", not a struct");
  }
  for (int i = 0; i < type.num_fields(); ++i) {
    std::vector<std::string> parts = star.qualifier();
    parts.push_back(type.field(i).name);
    ColumnRefNode ref(std::move(parts), node->position());
    SILT_ASSIGN_OR_RETURN(BoundNodePtr field, binder.Bind(ref));
    out.push_back(std::make_unique<BoundExpressionImpl>(std::move(field), type.field(i).name));
  }
  return out;
}

}  // namespace silt::expr
