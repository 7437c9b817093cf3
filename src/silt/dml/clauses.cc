#include "silt/dml/clauses.h"

#include <set>

#include "silt/expr/cast/cast.h"
#include "silt/expr/expression.h"

namespace silt::dml {

namespace {

expr::NodePtr ColumnRef(int side, int column) {
  return std::make_shared<expr::ColumnRefNode>(
      std::vector<std::string>{Scope::InternalName(side, column)}, 0);
}

expr::NodePtr NullLiteral() {
  expr::LiteralNode::Value v;
  v.type = columnar::DataType::Null();
  v.is_null = true;
  return std::make_shared<expr::LiteralNode>(v, 0);
}

}  // namespace

Result<std::vector<expr::NodePtr>> ResolveAssignments(const Scope& scope,
                                                      const std::vector<expr::Assignment>& set,
                                                      bool keep_target, bool star_source,
                                                      const std::string& context) {
  const columnar::Schema& target = *scope.user_schema(Scope::kTarget);
  std::vector<expr::NodePtr> values(static_cast<size_t>(target.num_fields()));
  if (star_source) {
    const columnar::Schema& source = *scope.user_schema(Scope::kSource);
    for (int i = 0; i < target.num_fields(); ++i) {
      int s = source.FieldIndex(target.field(i).name);
      if (s < 0) {
        return Status::InvalidArgument("[DELTA_MERGE_UNRESOLVED_EXPRESSION] Cannot resolve `",
                                       target.field(i).name, "` in ", context,
                                       ": the source has no column of that name");
      }
      values[static_cast<size_t>(i)] = ColumnRef(Scope::kSource, s);
    }
    return values;
  }
  std::set<int> assigned;
  for (const expr::Assignment& a : set) {
    SILT_ASSIGN_OR_RETURN(int column, scope.AssignedColumn(a.column, context));
    if (!assigned.insert(column).second) {
      return Status::InvalidArgument("[DUPLICATE_ASSIGNMENTS] The column `",
                                     target.field(column).name, "` is assigned more than once in ",
                                     context);
    }
    SILT_ASSIGN_OR_RETURN(values[static_cast<size_t>(column)],
                          scope.Resolve(a.value, context, nullptr));
  }
  for (int i = 0; i < target.num_fields(); ++i) {
    if (values[static_cast<size_t>(i)] != nullptr) continue;
    values[static_cast<size_t>(i)] = keep_target ? ColumnRef(Scope::kTarget, i) : NullLiteral();
  }
  return values;
}

Result<expr::BoundExpressionPtr> BindCondition(const expr::NodePtr& node,
                                               const columnar::SchemaPtr& schema,
                                               const expr::EvalOptions& options,
                                               const std::string& context) {
  SILT_ASSIGN_OR_RETURN_CTX(expr::BoundExpressionPtr bound, expr::Bind(*node, schema, options),
                            context);
  if (bound->type()->id() != columnar::TypeId::kBoolean &&
      bound->type()->id() != columnar::TypeId::kNull) {
    return Status::InvalidArgument("[DATATYPE_MISMATCH] ", context, " must be BOOLEAN, not ",
                                   bound->type()->ToDdl());
  }
  return bound;
}

Result<std::vector<uint8_t>> EvaluateTrue(expr::BoundExpression* condition,
                                          const columnar::RecordBatch& batch,
                                          const expr::EvalContext& ctx) {
  std::vector<uint8_t> out(static_cast<size_t>(batch.num_rows), 0);
  SILT_ASSIGN_OR_RETURN(columnar::ColumnPtr column, condition->Evaluate(batch, ctx));
  if (column->type->id() != columnar::TypeId::kBoolean) return out;  // NULL literal
  const uint8_t* bits = column->values->data();
  if (column->validity == nullptr) {
    for (int64_t i = 0; i < batch.num_rows; ++i)
      out[static_cast<size_t>(i)] = columnar::GetBit(bits, i);
  } else {
    const uint8_t* valid = column->validity->data();
    for (int64_t i = 0; i < batch.num_rows; ++i) {
      out[static_cast<size_t>(i)] = columnar::GetBit(valid, i) && columnar::GetBit(bits, i);
    }
  }
  return out;
}

Result<std::unique_ptr<ClauseList>> ClauseList::Make(const Scope& scope,
                                                     const std::vector<ClauseSpec>& clauses,
                                                     const expr::EvalOptions& options) {
  std::unique_ptr<ClauseList> out(new ClauseList());
  out->target_ = scope.user_schema(Scope::kTarget);
  out->options_ = options;
  const columnar::SchemaPtr& joined = scope.joined_schema();
  for (const ClauseSpec& spec : clauses) {
    Bound b;
    b.kind = spec.kind;
    b.text = spec.text;
    if (spec.condition != nullptr) {
      SILT_ASSIGN_OR_RETURN(b.condition, BindCondition(spec.condition, joined, options,
                                                       "the condition of " + spec.text));
    }
    for (size_t i = 0; i < spec.values.size(); ++i) {
      const columnar::Field& field = out->target_->field(static_cast<int>(i));
      SILT_ASSIGN_OR_RETURN_CTX(expr::BoundExpressionPtr value,
                                expr::Bind(*spec.values[i], joined, options), "the value of `",
                                field.name, "` in ", spec.text);
      if (!value->type()->Equals(*field.type) &&
          !expr::CanCast(*value->type(), *field.type, /*ansi=*/true)) {
        return Status::InvalidArgument("[DELTA_CANNOT_CAST] Cannot safely cast `", field.name,
                                       "`: ", value->type()->ToDdl(), " to ", field.type->ToDdl(),
                                       " (store assignment policy ANSI), in ", spec.text);
      }
      b.values.push_back(std::move(value));
    }
    out->clauses_.push_back(std::move(b));
  }
  return out;
}

Result<ClauseList::Outcome> ClauseList::Apply(const columnar::RecordBatchPtr& batch,
                                              const expr::EvalContext& ctx) {
  Outcome out;
  const int64_t n = batch->num_rows;
  out.chosen.assign(static_cast<size_t>(n), -1);
  out.counts.assign(clauses_.size(), 0);
  int64_t undecided = n;
  std::vector<columnar::RecordBatchPtr> written;
  for (size_t c = 0; c < clauses_.size() && undecided > 0; ++c) {
    Bound& clause = clauses_[c];
    std::vector<uint8_t> holds;
    if (clause.condition != nullptr) {
      SILT_ASSIGN_OR_RETURN(holds, EvaluateTrue(clause.condition.get(), *batch, ctx));
    }
    std::vector<int64_t> rows;
    for (int64_t i = 0; i < n; ++i) {
      if (out.chosen[static_cast<size_t>(i)] >= 0) continue;
      if (clause.condition != nullptr && !holds[static_cast<size_t>(i)]) continue;
      out.chosen[static_cast<size_t>(i)] = static_cast<int>(c);
      rows.push_back(i);
    }
    undecided -= static_cast<int64_t>(rows.size());
    out.counts[c] = static_cast<int64_t>(rows.size());
    if (rows.empty() || clause.kind == ActionKind::kDelete) continue;
    columnar::RecordBatchPtr input =
        static_cast<int64_t>(rows.size()) == n ? batch : columnar::TakeBatch(*batch, rows);
    auto result = std::make_shared<columnar::RecordBatch>();
    result->schema = target_;
    result->num_rows = input->num_rows;
    for (size_t i = 0; i < clause.values.size(); ++i) {
      const columnar::Field& field = target_->field(static_cast<int>(i));
      SILT_ASSIGN_OR_RETURN(columnar::ColumnPtr value, clause.values[i]->Evaluate(*input, ctx));
      if (!value->type->Equals(*field.type)) {
        expr::CastOptions cast;
        cast.ansi = true;
        cast.zone_offset_micros = options_.session_zone_offset_micros;
        cast.zone = options_.session_zone.get();
        cast.context = field.name;
        SILT_ASSIGN_OR_RETURN_CTX(value, expr::CastColumn(*value, field.type, cast), "assigning `",
                                  field.name, "` in ", clause.text);
      }
      result->columns.push_back(std::move(value));
    }
    written.push_back(std::move(result));
  }
  if (written.size() == 1) {
    out.written = written[0];
  } else if (!written.empty()) {
    out.written = columnar::ConcatBatches(written);
  }
  return out;
}

}  // namespace silt::dml
