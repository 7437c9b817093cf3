#include "silt/exec/aggregate_rewriter.h"

#include <cmath>

#include "silt/base/json_writer.h"
#include "silt/base/strings.h"
#include "silt/exec/value_access.h"
#include "silt/expr/expression.h"
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

// A constant argument, evaluated once: one row. nullopt when it is not a
// constant (it refers to a column or fails to bind without input).
std::optional<columnar::ColumnPtr> EvalConstant(const Node& node) {
  auto schema = columnar::DataType::Struct({});
  Result<expr::BoundExpressionPtr> bound = expr::Bind(node, schema);
  if (!bound.ok()) return std::nullopt;
  columnar::RecordBatch batch;
  batch.schema = schema;
  batch.num_rows = 1;
  Result<columnar::ColumnPtr> value = (*bound)->Evaluate(batch, {});
  if (!value.ok()) return std::nullopt;
  return *value;
}

// Row i of a numeric column as a double (Spark's implicit cast); nullopt for
// other types.
std::optional<double> NumberAt(const columnar::Column& c, int64_t i) {
  const columnar::DataType& t = *c.type;
  if (t.id() == columnar::TypeId::kFloat || t.id() == columnar::TypeId::kDouble) {
    return DoubleAt(c, i);
  }
  if (t.id() == columnar::TypeId::kDecimal) {
    return DecimalToDouble(DecimalAt(c, i), t.scale());
  }
  if (t.is_integral()) return static_cast<double>(IntAt(c, i));
  return std::nullopt;
}

Status Mismatch(const expr::CallNode& call, const std::string& sub_class, const std::string& why) {
  return Status::InvalidArgument("[DATATYPE_MISMATCH.", sub_class, "] Cannot resolve \"",
                                 call.ToString(), "\" due to data type mismatch: ", why);
}

Status ParsePercentileArgs(const expr::CallNode& call, AggregateSpec* spec) {
  const auto& args = call.args();
  if (args.size() < 2 || args.size() > 3) {
    return Status::InvalidArgument("[WRONG_NUM_ARGS.WITHOUT_SUGGESTION] The `", call.name(),
                                   "` requires [2, 3] parameters but the actual number is ",
                                   args.size(), ", in '", call.ToString(), "'");
  }
  std::optional<columnar::ColumnPtr> p = EvalConstant(*args[1]);
  if (!p) {
    return Mismatch(call, "NON_FOLDABLE_INPUT",
                    "the input percentage should be a foldable \"DOUBLE\" expression; however, "
                    "got \"" +
                        args[1]->ToString() + "\".");
  }
  const columnar::Column& pc = **p;
  if (pc.IsNull(0)) {
    return Mismatch(call, "UNEXPECTED_NULL", "The percentage must not be null.");
  }
  auto out_of_range = [&](const std::string& got) {
    return Mismatch(call, "VALUE_OUT_OF_RANGE",
                    "The percentage must be between [0.0, 1.0] (current value = " + got + ").");
  };
  auto wrong_type = [&] {
    return Mismatch(call, "UNEXPECTED_INPUT_TYPE",
                    "Parameter 2 requires the (\"DOUBLE\" or \"ARRAY<DOUBLE>\") type, "
                    "however \"" +
                        args[1]->ToString() + "\" has the type \"" + pc.type->ToDdl() + "\".");
  };
  if (pc.type->id() == columnar::TypeId::kArray) {
    spec->percentages_array = true;
    const columnar::Column& elements = *pc.children[0];
    const int32_t* off = pc.offsets();
    for (int32_t e = off[0]; e < off[1]; ++e) {
      if (elements.IsNull(e)) return wrong_type();
      std::optional<double> v = NumberAt(elements, e);
      if (!v) return wrong_type();
      spec->percentages.push_back(*v);
    }
  } else {
    std::optional<double> v = NumberAt(pc, 0);
    if (!v) return wrong_type();
    spec->percentages.push_back(*v);
  }
  for (double v : spec->percentages) {
    if (v >= 0.0 && v <= 1.0) continue;
    std::string got;
    for (double each : spec->percentages) {
      if (!got.empty()) got += ",";
      got += FormatDoubleJava(each) + "D";
    }
    return out_of_range(got);
  }
  if (args.size() == 3) {
    std::optional<columnar::ColumnPtr> a = EvalConstant(*args[2]);
    if (a && (*a)->IsNull(0)) {
      return Mismatch(call, "UNEXPECTED_NULL", "The accuracy must not be null.");
    }
    if (!a) {
      return Mismatch(call, "NON_FOLDABLE_INPUT",
                      "the input accuracy should be a foldable \"BIGINT\" expression; however, "
                      "got \"" +
                          args[2]->ToString() + "\".");
    }
    const columnar::Column& ac = **a;
    if (!ac.type->is_integral() || ac.type->id() == columnar::TypeId::kBoolean) {
      return Mismatch(call, "UNEXPECTED_INPUT_TYPE",
                      "Parameter 3 requires the \"INTEGRAL\" type, however \"" +
                          args[2]->ToString() + "\" has the type \"" + ac.type->ToDdl() + "\".");
    }
    if (ac.IsNull(0)) return Mismatch(call, "UNEXPECTED_NULL", "The accuracy must not be null.");
    spec->accuracy = IntAt(ac, 0);
    if (spec->accuracy <= 0 || spec->accuracy > 2147483647) {
      return Mismatch(call, "VALUE_OUT_OF_RANGE",
                      "The accuracy must be between (0, 2147483647] (current value = " +
                          std::to_string(spec->accuracy) + "L).");
    }
  }
  return Status::OK();
}

}  // namespace

Result<AggregateSpec> AggregateCallSpec(const expr::CallNode& call, AggKind kind) {
  AggregateSpec spec;
  spec.kind = kind;
  const auto& args = call.args();
  switch (kind) {
    case AggKind::kCountStar: return spec;
    case AggKind::kFirst:
    case AggKind::kLast:
      if (args.size() == 2) {
        std::optional<bool> flag = IgnoreNullsArg(*args[1]);
        if (!flag) {
          return Status::InvalidArgument("the second argument of ", call.name(),
                                         " (ignoreNulls) must be true or false, in '",
                                         call.ToString(), "'");
        }
        spec.ignore_nulls = *flag;
        return spec;
      }
      break;
    case AggKind::kApproxCountDistinct:
      if (args.size() == 2) {
        // Spark takes a double or decimal literal (validateDoubleLiteral).
        std::optional<columnar::ColumnPtr> v = EvalConstant(*args[1]);
        const bool typed = v && ((*v)->type->id() == columnar::TypeId::kDouble ||
                                 (*v)->type->id() == columnar::TypeId::kDecimal);
        if (!typed || (*v)->IsNull(0)) {
          return Status::InvalidArgument("The second argument should be a double literal, in '",
                                         call.ToString(), "'");
        }
        spec.relative_sd = *NumberAt(**v, 0);
        return spec;
      }
      if (args.size() != 1) {
        return Status::InvalidArgument(
            "[WRONG_NUM_ARGS.WITHOUT_SUGGESTION] The `approx_count_distinct` requires [1, 2] "
            "parameters but the actual number is ",
            args.size(), ", in '", call.ToString(), "'");
      }
      return spec;
    case AggKind::kPercentileApprox:
      SILT_RETURN_NOT_OK(ParsePercentileArgs(call, &spec));
      return spec;
    default: break;
  }
  if (args.size() != 1) {
    const bool first_last = kind == AggKind::kFirst || kind == AggKind::kLast;
    return Status::InvalidArgument(call.name(), " takes ",
                                   first_last ? "one or two arguments" : "one argument", ", in '",
                                   call.ToString(), "'");
  }
  return spec;
}

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
        SILT_ASSIGN_OR_RETURN(AggregateSpec spec, AggregateCallSpec(call, *kind));
        if (call.distinct() && *kind != AggKind::kCountDistinct) {
          return Status::NotSupported(call.name(), "(DISTINCT ...) is not supported yet, in '",
                                      node->ToString(), "'");
        }
        for (size_t a = 0; a < calls_.size(); ++a) {
          if (calls_[a].text == text) return Ref(AggColumn(a), pos);
        }
        calls_.push_back(
            Call{*kind, call.args().empty() ? nullptr : call.args()[0], text, std::move(spec)});
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
