#include "silt/expr/expression.h"

#include <cctype>

#include "silt/base/strings.h"
#include "silt/expr/bind/binder.h"
#include "silt/expr/kernel/bind_session_internal.h"
#include "silt/expr/kernel/bound.h"
#include "silt/expr/kernel/function_registry.h"
#include "silt/expr/parse/ast.h"
#include "silt/expr/parse/parser.h"

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

// Every window(...) call in the tree, outermost first.
void CollectWindowCalls(const Node& node, std::vector<const CallNode*>* out) {
  switch (node.kind()) {
    case NodeKind::kFieldAccess:
      CollectWindowCalls(*static_cast<const FieldAccessNode&>(node).child(), out);
      return;
    case NodeKind::kCall: {
      const auto& call = static_cast<const CallNode&>(node);
      if (AsciiLower(call.name()) == "window") out->push_back(&call);
      for (const NodePtr& arg : call.args()) CollectWindowCalls(*arg, out);
      return;
    }
    case NodeKind::kCast:
      CollectWindowCalls(*static_cast<const CastNode&>(node).child(), out);
      return;
    case NodeKind::kUnary:
      CollectWindowCalls(*static_cast<const UnaryNode&>(node).child(), out);
      return;
    case NodeKind::kBinary: {
      const auto& binary = static_cast<const BinaryNode&>(node);
      CollectWindowCalls(*binary.left(), out);
      CollectWindowCalls(*binary.right(), out);
      return;
    }
    case NodeKind::kIsNull:
      CollectWindowCalls(*static_cast<const IsNullNode&>(node).child(), out);
      return;
    case NodeKind::kAlias:
      CollectWindowCalls(*static_cast<const AliasNode&>(node).child(), out);
      return;
    case NodeKind::kLiteral:
    case NodeKind::kColumnRef:
    case NodeKind::kStar: return;
  }
}

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
  std::string name = AsciiLower(call->name());
  if (name == "json_tuple" && call->args().size() >= 2) {
    GeneratorSpec spec;
    spec.function = name;
    spec.argument = call->args()[0];
    spec.alias = alias;
    for (size_t i = 1; i < call->args().size(); ++i) {
      // Each key becomes json_tuple_field(json, 'key') named c<i-1>: the
      // key's value as Spark's JsonTuple gives it (a field name, never a
      // path).
      const Node& key = *call->args()[i];
      if (key.kind() != NodeKind::kLiteral) return std::nullopt;
      const LiteralNode::Value& v = static_cast<const LiteralNode&>(key).value();
      if (v.is_null || v.type == nullptr || v.type->id() != columnar::TypeId::kString) {
        return std::nullopt;
      }
      std::string text = "json_tuple_field(" + spec.argument->ToString() + ", " + key.ToString() +
                         ") AS c" + std::to_string(i - 1);
      Result<NodePtr> item = ParseNode(text);
      if (!item.ok()) return std::nullopt;
      spec.json_tuple_items.push_back(std::move(*item));
    }
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

Result<BoundExpressionPtr> BindText(std::string_view text, const columnar::SchemaPtr& input_schema,
                                    const EvalOptions& options, BindSession* session) {
  SILT_ASSIGN_OR_RETURN(ExpressionPtr parsed, ParseExpression(text));
  return Bind(*parsed, input_schema, options, session);
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

Result<std::unique_ptr<WindowExpansion>> WindowExpansion::Make(
    const std::vector<const Expression*>& items, const columnar::SchemaPtr& input_schema,
    const EvalOptions& options) {
  std::vector<const CallNode*> calls;
  for (const Expression* item : items) {
    SILT_ASSIGN_OR_RETURN(const Node* node, AsNode(*item));
    CollectWindowCalls(*node, &calls);
  }
  if (calls.empty()) return std::unique_ptr<WindowExpansion>();
  auto out = std::unique_ptr<WindowExpansion>(new WindowExpansion());
  const CallNode* first = nullptr;
  for (const CallNode* call : calls) {
    // The window list of the call's arguments; its name is Spark's canonical
    // text of the window (time, duration, slide, start in microseconds).
    CallNode list(std::string(kWindowListFunction), call->args(), false, false, call->position());
    Binder binder(input_schema, options, call->ToString());
    SILT_ASSIGN_OR_RETURN(BoundNodePtr bound, binder.Bind(list));
    if (out->windows_ == nullptr) {
      std::string name = bound->sql();
      out->windows_ = std::make_unique<BoundExpressionImpl>(std::move(bound), std::move(name));
      first = call;
    } else if (bound->sql() != out->windows_->name()) {
      return Status::InvalidArgument(
          "Multiple time window expressions in one projection would give a cartesian product of "
          "rows, which Spark does not support: '",
          first->ToString(), "' and '", call->ToString(), "'");
    }
  }
  std::vector<columnar::Field> fields = input_schema->fields();
  columnar::Field window;
  // Not a name an item can clash with: items reach the column only through
  // window() (options_.window_column).
  window.name = "window()";
  window.type = out->windows_->type()->element_type();
  window.nullable = false;
  fields.push_back(std::move(window));
  out->schema_ = columnar::DataType::Struct(std::move(fields));
  out->options_ = options;
  out->options_.window_column = input_schema->num_fields();
  return out;
}

WindowExpansion::~WindowExpansion() = default;

const std::string& WindowExpansion::description() const { return windows_->name(); }

Result<columnar::RecordBatchPtr> WindowExpansion::Expand(const columnar::RecordBatch& batch,
                                                         const EvalContext& ctx) {
  SILT_ASSIGN_OR_RETURN(columnar::ColumnPtr lists, windows_->Evaluate(batch, ctx));
  const columnar::Column& list = *lists;
  const int32_t* offsets = list.offsets();
  std::vector<int64_t>& rows = rows_;
  rows.clear();
  std::vector<int64_t> elements;
  rows.reserve(static_cast<size_t>(batch.num_rows));
  elements.reserve(static_cast<size_t>(batch.num_rows));
  // Whether each row keeps its place with window e == row (a tumbling
  // window over times without NULLs): then no column needs copying.
  bool identity = true;
  for (int64_t row = 0; row < batch.num_rows; ++row) {
    if (list.IsNull(row)) {
      identity = false;
      continue;
    }
    for (int32_t e = offsets[row]; e < offsets[row + 1]; ++e) {
      identity = identity && e == row && static_cast<int64_t>(rows.size()) == row;
      rows.push_back(row);
      elements.push_back(e);
    }
  }
  auto out = std::make_shared<columnar::RecordBatch>();
  out->schema = schema_;
  out->num_rows = static_cast<int64_t>(rows.size());
  const columnar::ColumnPtr& windows = list.children[0];
  if (identity && out->num_rows == batch.num_rows && windows->length == batch.num_rows) {
    out->columns = batch.columns;
    out->columns.push_back(windows);
    rows.clear();
    return columnar::RecordBatchPtr(std::move(out));
  }
  out->columns.reserve(batch.columns.size() + 1);
  for (const columnar::ColumnPtr& column : batch.columns) {
    out->columns.push_back(columnar::TakeColumn(*column, rows));
  }
  out->columns.push_back(columnar::TakeColumn(*windows, elements));
  return columnar::RecordBatchPtr(std::move(out));
}

}  // namespace silt::expr
