#include "silt/dml/clauses.h"

#include "silt/base/strings.h"
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

namespace {

// One assignment seen from a level of the target's schema: the names left
// below that level (empty: the level itself) and its value.
struct PendingAssignment {
  std::vector<std::string> rest;
  const expr::Assignment* assignment;
};

std::string Dotted(const std::vector<std::string>& prefix, const std::vector<std::string>& rest) {
  std::string out;
  for (const auto* parts : {&prefix, &rest}) {
    for (const std::string& p : *parts) out += (out.empty() ? "" : ".") + p;
  }
  return out;
}

expr::NodePtr StringLiteral(const std::string& text) {
  expr::LiteralNode::Value v;
  v.type = columnar::DataType::String();
  v.string_value = text;
  return std::make_shared<expr::LiteralNode>(v, 0);
}

// The new value of one target column or nested field (`type`, whose current
// value is `current`, named `prefix` in messages) given the assignments
// under it, as Delta's UpdateExpressionsSupport builds it: an assignment of
// the whole level is its value (and may not be combined with another under
// it); assignments of fields rebuild the struct field by field, the fields
// not assigned keeping their current value (so the struct is never NULL
// afterwards, even when it was).
Result<expr::NodePtr> AssignedValue(const Scope& scope, const columnar::DataType& type,
                                    const expr::NodePtr& current,
                                    const std::vector<std::string>& prefix,
                                    const std::vector<PendingAssignment>& ops,
                                    const std::string& context) {
  bool whole = false;
  for (const PendingAssignment& op : ops) whole |= op.rest.empty();
  if (whole) {
    if (ops.size() > 1) {
      std::string list;
      for (const PendingAssignment& op : ops) {
        list += (list.empty() ? "" : ", ") + ("`" + Dotted(prefix, op.rest) + "`");
      }
      return Status::InvalidArgument(
          "[DELTA_CONFLICT_SET_COLUMN] There is a conflict from these "
          "SET columns: [",
          list, "], in ", context);
    }
    return scope.Resolve(ops[0].assignment->value, context, nullptr);
  }
  if (type.id() != columnar::TypeId::kStruct) {
    return Status::InvalidArgument(
        "[INVALID_EXTRACT_BASE_FIELD_TYPE] Can't extract a value from \"", Dotted(prefix, {}),
        "\". Need a complex type [STRUCT, ARRAY, MAP] but got \"", type.ToDdl(), "\", in ",
        context);
  }
  std::vector<std::vector<PendingAssignment>> by_field(static_cast<size_t>(type.num_fields()));
  for (const PendingAssignment& op : ops) {
    int f = -1;
    for (int i = 0; i < type.num_fields() && f < 0; ++i) {
      if (EqualsIgnoreCase(type.field(i).name, op.rest[0])) f = i;
    }
    if (f < 0) {
      std::string fields;
      for (int i = 0; i < type.num_fields(); ++i) {
        fields += (i == 0 ? "`" : ", `") + type.field(i).name + "`";
      }
      return Status::InvalidArgument("[FIELD_NOT_FOUND] No such struct field `", op.rest[0],
                                     "` in ", fields, ", in ", context);
    }
    by_field[static_cast<size_t>(f)].push_back(
        {std::vector<std::string>(op.rest.begin() + 1, op.rest.end()), op.assignment});
  }
  const auto& base = static_cast<const expr::ColumnRefNode&>(*current).parts();
  std::vector<expr::NodePtr> args;
  for (int i = 0; i < type.num_fields(); ++i) {
    const columnar::Field& field = type.field(i);
    std::vector<std::string> parts = base;
    parts.push_back(field.name);
    expr::NodePtr field_current = std::make_shared<expr::ColumnRefNode>(parts, 0);
    args.push_back(StringLiteral(field.name));
    if (by_field[static_cast<size_t>(i)].empty()) {
      args.push_back(field_current);
      continue;
    }
    std::vector<std::string> field_prefix = prefix;
    field_prefix.push_back(field.name);
    SILT_ASSIGN_OR_RETURN(expr::NodePtr value,
                          AssignedValue(scope, *field.type, field_current, field_prefix,
                                        by_field[static_cast<size_t>(i)], context));
    args.push_back(std::move(value));
  }
  return std::make_shared<expr::CallNode>("named_struct", std::move(args), false, false, 0);
}

}  // namespace

Result<ResolvedAssignments> ResolveAssignments(const Scope& scope,
                                               const std::vector<expr::Assignment>& set,
                                               bool keep_target, bool star_source,
                                               const std::string& context) {
  const columnar::Schema& target = *scope.user_schema(Scope::kTarget);
  ResolvedAssignments out;
  std::vector<expr::NodePtr>& values = out.values;
  values.resize(static_cast<size_t>(target.num_fields()));
  out.assigned.assign(static_cast<size_t>(target.num_fields()), false);
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
      out.assigned[static_cast<size_t>(i)] = true;
    }
    return out;
  }
  std::vector<std::vector<PendingAssignment>> by_column(static_cast<size_t>(target.num_fields()));
  for (const expr::Assignment& a : set) {
    SILT_ASSIGN_OR_RETURN(Scope::AssignedTarget assigned, scope.AssignedColumn(a.column, context));
    std::vector<PendingAssignment>& ops = by_column[static_cast<size_t>(assigned.column)];
    if (!keep_target && !assigned.fields.empty()) {
      std::string text;
      for (const std::string& part : a.column) text += (text.empty() ? "`" : "`.`") + part;
      return Status::InvalidArgument(
          "[DELTA_UNSUPPORTED_NESTED_FIELD_IN_OPERATION] Nested field is not supported in the "
          "INSERT clause of MERGE operation (field = ",
          text, "`), in ", context);
    }
    ops.push_back({std::move(assigned.fields), &a});
  }
  for (int i = 0; i < target.num_fields(); ++i) {
    const std::vector<PendingAssignment>& ops = by_column[static_cast<size_t>(i)];
    if (!ops.empty()) {
      out.assigned[static_cast<size_t>(i)] = true;
      SILT_ASSIGN_OR_RETURN(
          values[static_cast<size_t>(i)],
          AssignedValue(scope, *target.field(i).type, ColumnRef(Scope::kTarget, i),
                        {target.field(i).name}, ops, context));
      continue;
    }
    values[static_cast<size_t>(i)] = keep_target ? ColumnRef(Scope::kTarget, i) : NullLiteral();
  }
  return out;
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
                                                     const expr::EvalOptions& options,
                                                     WriteRules* rules) {
  std::unique_ptr<ClauseList> out(new ClauseList());
  out->target_ = scope.user_schema(Scope::kTarget);
  out->options_ = options;
  out->rules_ = rules;
  const columnar::SchemaPtr& joined = scope.joined_schema();
  for (const ClauseSpec& spec : clauses) {
    Bound b;
    b.kind = spec.kind;
    b.text = spec.text;
    b.assigned = spec.assigned;
    b.assigned.resize(spec.values.size(), false);
    if (rules != nullptr && spec.kind != ActionKind::kDelete) {
      SILT_RETURN_NOT_OK(rules->CheckAssignments(
          spec.kind == ActionKind::kUpdate ? WriteRules::Kind::kUpdate : WriteRules::Kind::kInsert,
          b.assigned, spec.text));
    }
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
        // Spark's message when the analyzer finds no cast.
        return Status::InvalidArgument("[DATATYPE_MISMATCH.CAST_WITHOUT_SUGGESTION] cannot cast \"",
                                       value->type()->ToDdl(), "\" to \"", field.type->ToDdl(),
                                       "\" assigning `", field.name,
                                       "` (store assignment policy ANSI), in ", spec.text);
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
    out.written_from.insert(out.written_from.end(), rows.begin(), rows.end());
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
    if (rules_ != nullptr) {
      SILT_ASSIGN_OR_RETURN(
          columnar::RecordBatchPtr ruled,
          rules_->Apply(result,
                        clause.kind == ActionKind::kUpdate ? WriteRules::Kind::kUpdate
                                                           : WriteRules::Kind::kInsert,
                        clause.assigned));
      written.push_back(std::move(ruled));
      continue;
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
