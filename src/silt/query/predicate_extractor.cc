// The extractor walks the parsed AND chain and binds each candidate conjunct
// on its own: binding applies Spark's implicit casts, so the bound tree tells
// whether the column is compared at its own type (a bare BoundColumn) and
// gives the literal already converted to it.

#include "silt/query/predicate_extractor.h"

#include "silt/columnar/temporal.h"
#include "silt/delta/data_skipping.h"
#include "silt/delta/partition_utils.h"
#include "silt/expr/bind/binder.h"
#include "silt/expr/kernel/bound.h"

namespace silt::query {

namespace {

using columnar::ColumnPredicate;
using columnar::PredicateOp;

struct Extractor {
  const columnar::SchemaPtr& schema;
  const expr::EvalOptions& options;
  columnar::Conjunction out;

  // The bound node for `node`, or null when it does not bind.
  expr::BoundNodePtr BindQuietly(const expr::Node& node) {
    expr::Binder binder(schema, options, node.ToString());
    Result<expr::BoundNodePtr> bound = binder.Bind(node);
    if (!bound.ok()) return nullptr;
    return std::move(*bound);
  }

  // The top-level column `node` refers to, with its schema type.
  const columnar::Field* ColumnOf(const expr::BoundNode& node) {
    const std::string* name = node.column_name();
    if (name == nullptr) return nullptr;
    int idx = schema->FieldIndex(*name);
    if (idx < 0) return nullptr;
    const columnar::Field& field = schema->field(idx);
    if (!field.type->Equals(*node.type()) || field.type->is_nested()) return nullptr;
    return &field;
  }

  // The value of a constant node as a predicate value of `type`; nullopt for
  // null or a non-constant node.
  Result<std::optional<columnar::PredicateValue>> ConstantOf(expr::BoundNode& node,
                                                             const columnar::TypePtr& type) {
    if (!node.foldable() || !node.type()->Equals(*type)) return std::nullopt;
    SILT_ASSIGN_OR_RETURN(expr::Datum value, expr::EvaluateConstant(node));
    if (value.column == nullptr || value.column->length < 1) return std::nullopt;
    return delta::PredicateValueAt(*value.column, 0);
  }

  Status Comparison(const expr::BinaryNode& node) {
    PredicateOp op;
    switch (node.op()) {
      case expr::BinaryOp::kEq:
      case expr::BinaryOp::kNullSafeEq:  // same as = for a non-null literal
        op = PredicateOp::kEq;
        break;
      case expr::BinaryOp::kNotEq: op = PredicateOp::kNotEq; break;
      case expr::BinaryOp::kLt: op = PredicateOp::kLt; break;
      case expr::BinaryOp::kLe: op = PredicateOp::kLtEq; break;
      case expr::BinaryOp::kGt: op = PredicateOp::kGt; break;
      case expr::BinaryOp::kGe: op = PredicateOp::kGtEq; break;
      default: return Status::OK();
    }
    expr::BoundNodePtr bound = BindQuietly(node);
    auto* call = dynamic_cast<expr::BoundCall*>(bound.get());
    if (call == nullptr || call->args().size() != 2) return Status::OK();
    int column_side = ColumnOf(*call->args()[0]) != nullptr ? 0 : 1;
    const columnar::Field* field = ColumnOf(*call->args()[column_side]);
    if (field == nullptr) return Status::OK();
    SILT_ASSIGN_OR_RETURN(std::optional<columnar::PredicateValue> value,
                          ConstantOf(*call->args()[1 - column_side], field->type));
    if (!value) return Status::OK();
    if (column_side == 1) {  // literal op column: mirror the operator
      switch (op) {
        case PredicateOp::kLt: op = PredicateOp::kGt; break;
        case PredicateOp::kLtEq: op = PredicateOp::kGtEq; break;
        case PredicateOp::kGt: op = PredicateOp::kLt; break;
        case PredicateOp::kGtEq: op = PredicateOp::kLtEq; break;
        default: break;
      }
    }
    out.push_back(ColumnPredicate{field->name, field->type, op, {std::move(*value)}});
    return Status::OK();
  }

  Status InList(const expr::CallNode& node) {
    expr::BoundNodePtr bound = BindQuietly(node);
    auto* call = dynamic_cast<expr::BoundCall*>(bound.get());
    if (call == nullptr || call->args().size() < 2) return Status::OK();
    const columnar::Field* field = ColumnOf(*call->args()[0]);
    if (field == nullptr) return Status::OK();
    ColumnPredicate predicate{field->name, field->type, PredicateOp::kIn, {}};
    for (size_t i = 1; i < call->args().size(); ++i) {
      expr::BoundNode& item = *call->args()[i];
      if (!item.foldable()) return Status::OK();
      SILT_ASSIGN_OR_RETURN(std::optional<columnar::PredicateValue> value,
                            ConstantOf(item, field->type));
      // A NULL item never makes the IN true.
      if (value) predicate.values.push_back(std::move(*value));
    }
    if (predicate.values.empty()) return Status::OK();
    out.push_back(std::move(predicate));
    return Status::OK();
  }

  Status IsNull(const expr::IsNullNode& node) {
    expr::BoundNodePtr child = BindQuietly(*node.child());
    if (child == nullptr) return Status::OK();
    const columnar::Field* field = ColumnOf(*child);
    if (field == nullptr) return Status::OK();
    out.push_back(ColumnPredicate{field->name,
                                  field->type,
                                  node.negated() ? PredicateOp::kIsNotNull : PredicateOp::kIsNull,
                                  {}});
    return Status::OK();
  }

  Status Visit(const expr::Node& node) {
    switch (node.kind()) {
      case expr::NodeKind::kAlias: return Visit(*static_cast<const expr::AliasNode&>(node).child());
      case expr::NodeKind::kBinary: {
        const auto& binary = static_cast<const expr::BinaryNode&>(node);
        if (binary.op() == expr::BinaryOp::kAnd) {
          SILT_RETURN_NOT_OK(Visit(*binary.left()));
          return Visit(*binary.right());
        }
        return Comparison(binary);
      }
      case expr::NodeKind::kCall: {
        const auto& call = static_cast<const expr::CallNode&>(node);
        if (call.name() == expr::kInListCall) return InList(call);
        return Status::OK();
      }
      case expr::NodeKind::kIsNull: return IsNull(static_cast<const expr::IsNullNode&>(node));
      default: return Status::OK();
    }
  }
};

}  // namespace

Result<columnar::Conjunction> ExtractConjunction(const expr::Node& filter,
                                                 const columnar::SchemaPtr& schema,
                                                 const expr::EvalOptions& options) {
  Extractor extractor{schema, options, {}};
  SILT_RETURN_NOT_OK(extractor.Visit(filter));
  return std::move(extractor.out);
}

std::string DescribePredicate(const ColumnPredicate& predicate) {
  const columnar::DataType& type = *predicate.type;
  auto value = [&](const columnar::PredicateValue& v) -> std::string {
    switch (type.id()) {
      case columnar::TypeId::kFloat:
      case columnar::TypeId::kDouble: return std::to_string(v.f64);
      case columnar::TypeId::kDecimal: return delta::FormatDecimal(v.i128, type.scale());
      case columnar::TypeId::kString:
      case columnar::TypeId::kBinary: return "'" + v.str + "'";
      case columnar::TypeId::kDate:
        return "DATE '" + columnar::FormatDate(static_cast<int32_t>(v.i64)) + "'";
      case columnar::TypeId::kTimestamp:
        return "TIMESTAMP '" + columnar::FormatTimestampUtc(v.i64) + "'";
      case columnar::TypeId::kTimestampNtz:
        return "TIMESTAMP_NTZ '" + columnar::FormatTimestampPlain(v.i64) + "'";
      case columnar::TypeId::kBoolean: return v.i64 ? "true" : "false";
      default: return std::to_string(v.i64);
    }
  };
  std::string out = predicate.column;
  switch (predicate.op) {
    case PredicateOp::kIsNull: return out + " IS NULL";
    case PredicateOp::kIsNotNull: return out + " IS NOT NULL";
    case PredicateOp::kIn: {
      out += " IN (";
      for (size_t i = 0; i < predicate.values.size(); ++i) {
        if (i > 0) out += ", ";
        out += value(predicate.values[i]);
      }
      return out + ")";
    }
    default: break;
  }
  const char* op = "=";
  switch (predicate.op) {
    case PredicateOp::kNotEq: op = "!="; break;
    case PredicateOp::kLt: op = "<"; break;
    case PredicateOp::kLtEq: op = "<="; break;
    case PredicateOp::kGt: op = ">"; break;
    case PredicateOp::kGtEq: op = ">="; break;
    default: break;
  }
  out += std::string(" ") + op + " ";
  if (!predicate.values.empty()) out += value(predicate.values[0]);
  return out;
}

}  // namespace silt::query
