#include "silt/expr/bind/binder.h"

#include <algorithm>
#include <string_view>
#include <vector>

#include "silt/base/strings.h"
#include "silt/columnar/builder.h"
#include "silt/columnar/temporal.h"
#include "silt/expr/cast/cast.h"
#include "silt/expr/kernel/function_registry.h"
#include "silt/expr/kernel/type_util.h"

namespace silt::expr {

namespace {

using columnar::ColumnBuilder;
using columnar::ColumnPtr;

// Index of the field named `name` (case-insensitive) in `fields`; -1 when
// absent, -2 when more than one field matches.
int FindField(const std::vector<columnar::Field>& fields, const std::string& name) {
  int found = -1;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].name == name) return static_cast<int>(i);  // exact match wins
  }
  for (size_t i = 0; i < fields.size(); ++i) {
    if (EqualsIgnoreCase(fields[i].name, name)) {
      if (found >= 0) return -2;
      found = static_cast<int>(i);
    }
  }
  return found;
}

// "; did you mean X?" for the candidate closest to `name`, when it is close
// enough to be a plausible typo (at most a third of the name's length
// edited, and at least one edit allowed); empty otherwise.
std::string DidYouMean(std::string_view name, const std::vector<std::string>& candidates) {
  std::string_view best = ClosestName(name, candidates);
  if (best.empty()) return {};
  return "; did you mean " + QuoteIdentifierIfNeeded(std::string(best)) + "?";
}

std::vector<std::string> NamesOf(const std::vector<columnar::Field>& fields) {
  std::vector<std::string> out;
  out.reserve(fields.size());
  for (const columnar::Field& f : fields) out.push_back(f.name);
  return out;
}

std::string FieldNames(const std::vector<columnar::Field>& fields) {
  std::string out;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out += ", ";
    out += QuoteIdentifierIfNeeded(fields[i].name);
  }
  return out.empty() ? "(none)" : out;
}

const char* BinaryFunctionName(BinaryOp op) {
  switch (op) {
    case BinaryOp::kOr: return "or";
    case BinaryOp::kAnd: return "and";
    case BinaryOp::kEq: return "=";
    case BinaryOp::kNotEq: return "=";  // wrapped in NOT
    case BinaryOp::kNullSafeEq: return "<=>";
    case BinaryOp::kLt: return "<";
    case BinaryOp::kLe: return "<=";
    case BinaryOp::kGt: return ">";
    case BinaryOp::kGe: return ">=";
    case BinaryOp::kAdd: return "+";
    case BinaryOp::kSubtract: return "-";
    case BinaryOp::kMultiply: return "*";
    case BinaryOp::kDivide: return "/";
    case BinaryOp::kRemainder: return "%";
    case BinaryOp::kIntegralDivide: return "div";
    case BinaryOp::kConcat: return "concat";
    case BinaryOp::kBitAnd: return "&";
    case BinaryOp::kBitOr: return "|";
    case BinaryOp::kBitXor: return "^";
  }
  return "?";
}

const char* UnaryFunctionName(UnaryOp op) {
  switch (op) {
    case UnaryOp::kNot: return "not";
    case UnaryOp::kNegate: return "negative";
    case UnaryOp::kPlus: return "positive";
    case UnaryOp::kBitNot: return "~";
  }
  return "?";
}

// A one-row column holding the literal's value.
ColumnPtr LiteralColumn(const LiteralNode::Value& v, const EvalOptions& options) {
  ColumnBuilder builder(v.type);
  if (v.is_null) {
    builder.AppendNull();
    return builder.Finish();
  }
  switch (v.type->id()) {
    case TypeId::kBoolean: builder.AppendBool(v.int_value != 0); break;
    case TypeId::kByte: builder.Append<int8_t>(static_cast<int8_t>(v.int_value)); break;
    case TypeId::kShort: builder.Append<int16_t>(static_cast<int16_t>(v.int_value)); break;
    case TypeId::kInt:
    case TypeId::kDate: builder.Append<int32_t>(static_cast<int32_t>(v.int_value)); break;
    case TypeId::kLong:
    case TypeId::kTimestampNtz: builder.Append<int64_t>(v.int_value); break;
    case TypeId::kTimestamp: {
      // A zone-less timestamp literal is in the session time zone.
      std::optional<int64_t> micros =
          ParseTimestampInZone(v.string_value, *SessionTimeZone(options));
      builder.Append<int64_t>(micros ? *micros : v.int_value);
      break;
    }
    case TypeId::kFloat: builder.Append<float>(static_cast<float>(v.double_value)); break;
    case TypeId::kDouble: builder.Append<double>(v.double_value); break;
    case TypeId::kDecimal: builder.Append<__int128>(v.decimal_value); break;
    case TypeId::kString:
    case TypeId::kBinary: builder.AppendString(v.string_value); break;
    default: builder.AppendNull(); break;
  }
  return builder.Finish();
}

// Replaces a foldable call by its value, computed once.
Result<BoundNodePtr> Fold(BoundNodePtr node) {
  if (!node->foldable() || dynamic_cast<BoundLiteral*>(node.get()) != nullptr) return node;
  SILT_ASSIGN_OR_RETURN(Datum value, EvaluateConstant(*node));
  bool is_null = value.column->IsNull(0);
  return BoundNodePtr(
      std::make_unique<BoundLiteral>(value.column, is_null, node->sql(), /*written=*/false));
}

}  // namespace

Status Binder::UnknownColumn(const std::string& name) const {
  return Status::InvalidArgument("Cannot resolve column ", QuoteIdentifierIfNeeded(name), " in '",
                                 expression_text_, "'",
                                 DidYouMean(name, NamesOf(schema_->fields())),
                                 "; available columns: ", FieldNames(schema_->fields()));
}

Result<BoundNodePtr> Binder::Bind(const Node& node) {
  switch (node.kind()) {
    case NodeKind::kLiteral: return BindLiteral(static_cast<const LiteralNode&>(node));
    case NodeKind::kColumnRef: return BindColumnRef(static_cast<const ColumnRefNode&>(node));
    case NodeKind::kFieldAccess: {
      const auto& access = static_cast<const FieldAccessNode&>(node);
      SILT_ASSIGN_OR_RETURN(BoundNodePtr parent, Bind(*access.child()));
      std::string prefix = parent->sql();
      return BindField(std::move(parent), access.field(), prefix);
    }
    case NodeKind::kStar:
      return Status::InvalidArgument("'", node.ToString(),
                                     "' can only be used as a whole select item, in '",
                                     expression_text_, "'");
    case NodeKind::kAlias: return Bind(*static_cast<const AliasNode&>(node).child());
    case NodeKind::kCast: {
      const auto& cast = static_cast<const CastNode&>(node);
      SILT_ASSIGN_OR_RETURN(BoundNodePtr child, Bind(*cast.child()));
      SILT_ASSIGN_OR_RETURN(BoundNodePtr bound,
                            BindCast(std::move(child), cast.type(), /*user_specified=*/true,
                                     options_, node.ToString(), cast.try_cast(), session_));
      return Fold(std::move(bound));
    }
    case NodeKind::kCall: {
      const auto& call = static_cast<const CallNode&>(node);
      if (call.distinct()) {
        return Status::InvalidArgument("DISTINCT is only allowed in aggregate functions, in '",
                                       node.ToString(), "'");
      }
      std::vector<BoundNodePtr> args;
      for (const NodePtr& arg : call.args()) {
        SILT_ASSIGN_OR_RETURN(BoundNodePtr bound, Bind(*arg));
        args.push_back(std::move(bound));
      }
      return BindCall(AsciiLower(call.name()), node.ToString(), std::move(args), call.star_arg());
    }
    case NodeKind::kUnary: {
      const auto& unary = static_cast<const UnaryNode&>(node);
      SILT_ASSIGN_OR_RETURN(BoundNodePtr child, Bind(*unary.child()));
      std::vector<BoundNodePtr> args;
      args.push_back(std::move(child));
      return BindCall(UnaryFunctionName(unary.op()), node.ToString(), std::move(args), false);
    }
    case NodeKind::kBinary: {
      const auto& binary = static_cast<const BinaryNode&>(node);
      SILT_ASSIGN_OR_RETURN(BoundNodePtr left, Bind(*binary.left()));
      SILT_ASSIGN_OR_RETURN(BoundNodePtr right, Bind(*binary.right()));
      std::vector<BoundNodePtr> args;
      args.push_back(std::move(left));
      args.push_back(std::move(right));
      SILT_ASSIGN_OR_RETURN(BoundNodePtr bound, BindCall(BinaryFunctionName(binary.op()),
                                                         node.ToString(), std::move(args), false));
      if (binary.op() == BinaryOp::kNotEq) {
        std::vector<BoundNodePtr> not_args;
        not_args.push_back(std::move(bound));
        return BindCall("not", node.ToString(), std::move(not_args), false);
      }
      return bound;
    }
    case NodeKind::kIsNull: {
      const auto& is_null = static_cast<const IsNullNode&>(node);
      SILT_ASSIGN_OR_RETURN(BoundNodePtr child, Bind(*is_null.child()));
      std::vector<BoundNodePtr> args;
      args.push_back(std::move(child));
      return BindCall(is_null.negated() ? "isnotnull" : "isnull", node.ToString(), std::move(args),
                      false);
    }
  }
  return Status::Internal("Unknown expression node in '", expression_text_, "'");
}

Result<BoundNodePtr> Binder::BindLiteral(const LiteralNode& node) {
  ColumnPtr value = LiteralColumn(node.value(), options_);
  return BoundNodePtr(std::make_unique<BoundLiteral>(std::move(value), node.value().is_null,
                                                     node.PrettySql(), /*written=*/true));
}

Result<BoundNodePtr> Binder::BindColumnRef(const ColumnRefNode& node) {
  const std::vector<std::string>& parts = node.parts();
  int index = FindField(schema_->fields(), parts[0]);
  if (index == -2) {
    std::string candidates;
    for (const columnar::Field& f : schema_->fields()) {
      if (EqualsIgnoreCase(f.name, parts[0])) {
        if (!candidates.empty()) candidates += ", ";
        candidates += QuoteIdentifierIfNeeded(f.name);
      }
    }
    return Status::InvalidArgument("Reference ", QuoteIdentifierIfNeeded(parts[0]),
                                   " is ambiguous, could be: ", candidates, " in '",
                                   expression_text_, "'");
  }
  if (index < 0) {
    // Spark's literal functions, used without parentheses.
    if (parts.size() == 1) {
      std::string lower = AsciiLower(parts[0]);
      if (lower == "current_date" || lower == "current_timestamp") {
        return BindCall(lower, lower, {}, false);
      }
    }
    return UnknownColumn(parts[0]);
  }
  const columnar::Field& field = schema_->field(index);
  BoundNodePtr bound = std::make_unique<BoundColumn>(index, field);
  for (size_t i = 1; i < parts.size(); ++i) {
    std::string prefix = bound->sql();
    SILT_ASSIGN_OR_RETURN(bound, BindField(std::move(bound), parts[i], prefix));
  }
  return bound;
}

Result<BoundNodePtr> Binder::BindField(BoundNodePtr parent, const std::string& field,
                                       const std::string& sql_prefix) {
  const DataType& type = *parent->type();
  if (type.id() != TypeId::kStruct) {
    return Status::InvalidArgument("Cannot extract field ", QuoteIdentifierIfNeeded(field),
                                   " from ", sql_prefix, " of type ", TypeName(type), " in '",
                                   expression_text_, "'");
  }
  int index = FindField(type.fields(), field);
  if (index == -2) {
    return Status::InvalidArgument("Field ", QuoteIdentifierIfNeeded(field), " of ", sql_prefix,
                                   " is ambiguous (fields differ only in case) in '",
                                   expression_text_, "'");
  }
  if (index < 0) {
    return Status::InvalidArgument("No field ", QuoteIdentifierIfNeeded(field), " in ", sql_prefix,
                                   " in '", expression_text_, "'",
                                   DidYouMean(field, NamesOf(type.fields())),
                                   "; available fields: ", FieldNames(type.fields()));
  }
  bool nullable = parent->nullable() || type.field(index).nullable;
  std::string sql = sql_prefix + "." + field;
  return BoundNodePtr(std::make_unique<BoundField>(std::move(parent), index, nullable, sql));
}

Result<BoundNodePtr> Binder::BindCall(const std::string& name, std::string text,
                                      std::vector<BoundNodePtr> args, bool star_arg) {
  FunctionBinder binder = FunctionRegistry::Builtin().Find(name);
  if (binder == nullptr) {
    return Status::InvalidArgument("Unknown function ", name, " in '", expression_text_, "'",
                                   DidYouMean(name, FunctionRegistry::Builtin().Names()));
  }
  CallSite site;
  site.name = name;
  site.text = std::move(text);
  site.args = std::move(args);
  site.star_arg = star_arg;
  site.options = options_;
  site.session = session_;
  if (star_arg) {
    return Status::InvalidArgument("Function ", name, " does not accept '*' in '", site.text, "'");
  }
  SILT_ASSIGN_OR_RETURN(BoundNodePtr bound, binder(site));
  return Fold(std::move(bound));
}

std::string Binder::OutputName(const Node& node, const BoundNode& bound) {
  switch (node.kind()) {
    case NodeKind::kAlias: return static_cast<const AliasNode&>(node).name();
    case NodeKind::kColumnRef: {
      const auto& parts = static_cast<const ColumnRefNode&>(node).parts();
      if (parts.size() > 1) return parts.back();
      if (const std::string* name = bound.column_name()) return *name;
      return bound.sql();
    }
    case NodeKind::kCast: {
      // Spark: Cast(ne: NamedExpression) keeps the column's name.
      const NodePtr& child = static_cast<const CastNode&>(node).child();
      const auto* call = dynamic_cast<const BoundCall*>(&bound);
      if (child->kind() == NodeKind::kColumnRef &&
          static_cast<const ColumnRefNode&>(*child).parts().size() == 1 && call != nullptr &&
          !call->args().empty()) {
        if (const std::string* name = call->args()[0]->column_name()) return *name;
      }
      return bound.sql();
    }
    default: return bound.sql();
  }
}

}  // namespace silt::expr
