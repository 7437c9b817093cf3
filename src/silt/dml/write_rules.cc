#include "silt/dml/write_rules.h"

#include <algorithm>

#include "silt/base/strings.h"
#include "silt/columnar/builder.h"
#include "silt/delta/constraints.h"
#include "silt/expr/expression.h"
#include "silt/expr/parse/ast.h"
#include "silt/expr/parse/ast_walk.h"
#include "silt/expr/parse/parser.h"

namespace silt::dml {

Result<RowCheck> MakeRowCheck(std::string name, const std::string& expression,
                              const columnar::SchemaPtr& schema, const expr::EvalOptions& eval,
                              const std::string& shown_expression) {
  RowCheck check;
  check.name = std::move(name);
  check.expression = shown_expression;
  auto context = [&](const Status& st) {
    return Status::InvalidArgument("CHECK constraint ", check.name, " (", expression,
                                   "): ", st.message());
  };
  Result<expr::NodePtr> node = expr::ParseNode(expression);
  if (!node.ok()) return context(node.status());
  Result<expr::BoundExpressionPtr> holds = expr::Bind(**node, schema, eval);
  if (!holds.ok()) return context(holds.status());
  if ((*holds)->type()->id() != columnar::TypeId::kBoolean) {
    return Status::InvalidArgument("CHECK constraint ", check.name, " (", expression,
                                   ") must be BOOLEAN, not ", (*holds)->type()->ToDdl());
  }
  check.holds = std::move(*holds);
  // Spark shows the expression re-printed, each operation parenthesized.
  if (check.expression.empty()) check.expression = (*node)->ToString();
  // The columns it reads, each once, in the order they appear.
  std::vector<std::vector<std::string>> refs;
  expr::VisitNodes(**node, [&](const expr::Node& n) {
    if (n.kind() != expr::NodeKind::kColumnRef) return;
    const auto& parts = static_cast<const expr::ColumnRefNode&>(n).parts();
    if (std::find(refs.begin(), refs.end(), parts) == refs.end()) refs.push_back(parts);
  });
  for (const std::vector<std::string>& parts : refs) {
    std::string shown, text;
    for (const std::string& p : parts) {
      shown += (shown.empty() ? "" : ".") + p;
      text += (text.empty() ? "" : ".") + expr::BackquoteIdentifier(p);
    }
    Result<expr::BoundExpressionPtr> value =
        expr::BindText("CAST(" + text + " AS STRING)", schema, eval);
    if (!value.ok()) return context(value.status());
    check.columns.push_back(std::move(shown));
    check.values.push_back(std::move(*value));
  }
  return check;
}

Status CheckRows(RowCheck* check_ptr, const columnar::RecordBatch& rows, const std::string& where) {
  const expr::EvalContext ctx;
  RowCheck& check = *check_ptr;
  {
    SILT_ASSIGN_OR_RETURN(columnar::ColumnPtr holds, check.holds->Evaluate(rows, ctx));
    for (int64_t row = 0; row < rows.num_rows; ++row) {
      if (!holds->IsNull(row) && holds->BoolValue(row)) continue;
      std::string values;
      for (size_t i = 0; i < check.values.size(); ++i) {
        SILT_ASSIGN_OR_RETURN(columnar::ColumnPtr value, check.values[i]->Evaluate(rows, ctx));
        values += "\n - " + check.columns[i] + " : " +
                  (value->IsNull(row) ? std::string("null") : std::string(value->StringValue(row)));
      }
      return Status::InvalidArgument("[DELTA_VIOLATE_CONSTRAINT_WITH_VALUES] CHECK constraint ",
                                     check.name, " ", check.expression,
                                     " violated by row with values:", values, "\n(", where, ")");
    }
  }
  return Status::OK();
}

const std::vector<std::string>& WriteRules::HonouredFeatures() {
  static const std::vector<std::string> kFeatures = {"generatedColumns", "identityColumns",
                                                     "checkConstraints", "invariants"};
  return kFeatures;
}

Result<std::unique_ptr<WriteRules>> WriteRules::Make(const delta::Snapshot& snapshot,
                                                     const std::string& table_path,
                                                     const expr::EvalOptions& eval) {
  std::unique_ptr<WriteRules> out(new WriteRules());
  out->schema_ = snapshot.schema();
  out->table_path_ = "Delta table " + table_path;
  const columnar::SchemaPtr& schema = out->schema_;
  SILT_ASSIGN_OR_RETURN(std::vector<delta::GeneratedColumn> generated,
                        delta::GeneratedColumns(*schema));
  for (const delta::GeneratedColumn& g : generated) {
    Generated rule;
    rule.column = schema->FieldIndex(g.name);
    const columnar::Field& field = schema->field(rule.column);
    auto context = [&](const Status& st) {
      return Status::InvalidArgument("generated column '", g.name, "' of ", out->table_path_, " (",
                                     g.expression, "): ", st.message());
    };
    Result<expr::BoundExpressionPtr> compute = expr::BindText(g.expression, schema, eval);
    if (compute.ok() && !(*compute)->type()->Equals(*field.type)) {
      compute = expr::BindText("CAST((" + g.expression + ") AS " + field.type->ToDdl() + ")",
                               schema, eval);
    }
    if (!compute.ok()) return context(compute.status());
    rule.compute = std::move(*compute);
    // Spark shows the constraint as Generated Column (c <=> (expr)).
    SILT_ASSIGN_OR_RETURN(
        rule.check, MakeRowCheck("Generated Column",
                                 expr::BackquoteIdentifier(g.name) + " <=> (" + g.expression + ")",
                                 schema, eval, ""));
    out->generated_.push_back(std::move(rule));
  }
  SILT_ASSIGN_OR_RETURN(std::vector<delta::IdentityColumn> identity,
                        delta::IdentityColumns(*schema));
  for (delta::IdentityColumn& c : identity) {
    Identity rule;
    rule.index = schema->FieldIndex(c.name);
    // The first value after the high-water mark: values are start + k *
    // step, beyond the mark in the step's direction.
    if (c.high_water_mark) {
      const __int128 distance = static_cast<__int128>(*c.high_water_mark) - c.start;
      const __int128 k = distance / c.step;
      rule.first_k = k < 0 ? 0 : static_cast<int64_t>(k) + 1;
    }
    rule.next_k = rule.first_k;
    rule.column = std::move(c);
    out->identity_.push_back(std::move(rule));
  }
  SILT_ASSIGN_OR_RETURN(std::vector<delta::Constraint> constraints,
                        delta::TableConstraints(snapshot.metadata()));
  for (const delta::Constraint& c : constraints) {
    SILT_ASSIGN_OR_RETURN_CTX(RowCheck check, MakeRowCheck(c.name, c.expression, schema, eval, ""),
                              out->table_path_);
    out->constraints_.push_back(std::move(check));
  }
  return out;
}

Status WriteRules::CheckAssignments(Kind kind, const std::vector<bool>& assigned,
                                    const std::string& context) const {
  for (const Identity& id : identity_) {
    if (!assigned[static_cast<size_t>(id.index)]) continue;
    if (kind == Kind::kUpdate) {
      return Status::InvalidArgument(
          "[DELTA_IDENTITY_COLUMNS_UPDATE_NOT_SUPPORTED] UPDATE on "
          "IDENTITY column ",
          id.column.name, " is not supported, in ", context);
    }
    if (!id.column.allow_explicit_insert) {
      return Status::InvalidArgument(
          "[DELTA_IDENTITY_COLUMNS_EXPLICIT_INSERT_NOT_SUPPORTED] Providing values for GENERATED "
          "ALWAYS AS IDENTITY column ",
          id.column.name, " is not supported, in ", context);
    }
  }
  return Status::OK();
}

Result<columnar::RecordBatchPtr> WriteRules::Apply(const columnar::RecordBatchPtr& rows, Kind kind,
                                                   const std::vector<bool>& assigned) {
  if (rows == nullptr || rows->num_rows == 0) return rows;
  if (generated_.empty() && identity_.empty() && constraints_.empty()) return rows;
  auto out = std::make_shared<columnar::RecordBatch>(*rows);
  if (kind == Kind::kInsert) {
    for (Identity& id : identity_) {
      if (assigned[static_cast<size_t>(id.index)]) continue;
      columnar::ColumnBuilder values(columnar::DataType::Long());
      values.Reserve(out->num_rows);
      for (int64_t row = 0; row < out->num_rows; ++row) {
        int64_t value = 0;
        if (__builtin_mul_overflow(id.next_k + row, id.column.step, &value) ||
            __builtin_add_overflow(value, id.column.start, &value)) {
          return Status::InvalidArgument(
              "[DELTA_IDENTITY_COLUMNS_VALUE_OVERFLOW] identity column '", id.column.name, "' of ",
              table_path_, " ran out of BIGINT values (start ", id.column.start, ", step ",
              id.column.step, ")");
        }
        values.Append<int64_t>(value);
      }
      id.next_k += out->num_rows;
      out->columns[static_cast<size_t>(id.index)] = values.Finish();
    }
  }
  for (Identity& id : identity_) {
    const columnar::Column& values = *out->columns[static_cast<size_t>(id.index)];
    for (int64_t row = 0; row < out->num_rows; ++row) {
      if (values.IsNull(row)) continue;
      const int64_t v = values.Value<int64_t>(row);
      if (!id.extreme || (id.column.step > 0 ? v > *id.extreme : v < *id.extreme)) id.extreme = v;
    }
  }
  const expr::EvalContext ctx;
  std::vector<RowCheck*> explicit_generated;
  for (Generated& g : generated_) {
    if (assigned[static_cast<size_t>(g.column)]) {
      explicit_generated.push_back(&g.check);
      continue;
    }
    SILT_ASSIGN_OR_RETURN(columnar::ColumnPtr value, g.compute->Evaluate(*out, ctx));
    out->columns[static_cast<size_t>(g.column)] = std::move(value);
  }
  for (RowCheck* check : explicit_generated) {
    SILT_RETURN_NOT_OK(CheckRows(check, *out, table_path_));
  }
  for (RowCheck& check : constraints_) SILT_RETURN_NOT_OK(CheckRows(&check, *out, table_path_));
  return out;
}

Result<columnar::SchemaPtr> WriteRules::SchemaWithHighWaterMarks() const {
  columnar::SchemaPtr schema;
  for (const Identity& id : identity_) {
    if (id.next_k == id.first_k || !id.extreme) continue;
    int64_t mark = *id.extreme;
    if (id.column.high_water_mark) {
      const int64_t old = *id.column.high_water_mark;
      mark = id.column.step > 0 ? std::max(mark, old) : std::min(mark, old);
    }
    SILT_ASSIGN_OR_RETURN(schema, delta::WithIdentityHighWaterMark(schema ? *schema : *schema_,
                                                                   id.column.name, mark));
  }
  return schema;
}

}  // namespace silt::dml
