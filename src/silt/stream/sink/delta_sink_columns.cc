// DeltaSink's columns (delta_sink_columns_internal.h): the plan of the
// table's generated and identity columns, the filler that computes and
// checks them on the query's rows, the new table's schema with their
// metadata, column mapping, and the table's constraints bound per writer.
#include <memory>
#include <string>
#include <vector>

#include "silt/columnar/builder.h"
#include "silt/delta/column_mapping.h"
#include "silt/delta/constraints.h"
#include "silt/delta/schema_evolution.h"
#include "silt/expr/parse/ast.h"
#include "silt/stream/sink/delta_sink_columns_internal.h"

namespace silt::stream {

using expr::BindText;

Result<std::unique_ptr<DeltaSink::ColumnFiller>> DeltaSink::ColumnFiller::Make(
    std::shared_ptr<const ColumnPlan> plan, const expr::EvalOptions& eval,
    IdentityCounters* counters, int64_t batch_id) {
  std::unique_ptr<ColumnFiller> filler(new ColumnFiller());
  filler->plan_ = plan;
  filler->counters_ = counters;
  filler->batch_id_ = batch_id;
  const columnar::SchemaPtr& schema = plan->output_schema;
  for (size_t i = 0; i < plan->generated.size(); ++i) {
    const ColumnPlan::Generated& g = plan->generated[i];
    auto context = [&](const Status& st) {
      return Status::InvalidArgument("generated column '", g.name, "' of Delta table ",
                                     plan->table_path, " (", g.expression, "): ", st.message());
    };
    if (g.output_index < 0) {
      Result<expr::BoundExpressionPtr> bound = BindText(g.expression, schema, eval);
      if (bound.ok() && !(*bound)->type()->Equals(*g.type)) {
        bound = BindText("CAST((" + g.expression + ") AS " + g.type->ToDdl() + ")", schema, eval);
      }
      if (!bound.ok()) return context(bound.status());
      filler->compute_.push_back(std::move(*bound));
      continue;
    }
    Check check;
    check.generated = i;
    const std::string column = expr::BackquoteIdentifier(schema->field(g.output_index).name);
    Result<expr::BoundExpressionPtr> equal =
        BindText("(" + column + ") <=> (" + g.expression + ")", schema, eval);
    if (!equal.ok()) return context(equal.status());
    check.equal = std::move(*equal);
    Result<expr::BoundExpressionPtr> given =
        BindText("CAST(" + column + " AS STRING)", schema, eval);
    Result<expr::BoundExpressionPtr> expected =
        BindText("CAST((" + g.expression + ") AS STRING)", schema, eval);
    if (!given.ok()) return context(given.status());
    if (!expected.ok()) return context(expected.status());
    check.given = std::move(*given);
    check.expected = std::move(*expected);
    filler->checks_.push_back(std::move(check));
  }
  return filler;
}

Result<columnar::RecordBatch> DeltaSink::ColumnFiller::Apply(const columnar::RecordBatch& batch) {
  const expr::EvalContext ctx;
  for (Check& check : checks_) {
    SILT_ASSIGN_OR_RETURN(columnar::ColumnPtr equal, check.equal->Evaluate(batch, ctx));
    for (int64_t row = 0; row < equal->length; ++row) {
      if (!equal->IsNull(row) && equal->BoolValue(row)) continue;
      const ColumnPlan::Generated& g = plan_->generated[check.generated];
      SILT_ASSIGN_OR_RETURN(columnar::ColumnPtr given, check.given->Evaluate(batch, ctx));
      SILT_ASSIGN_OR_RETURN(columnar::ColumnPtr expected, check.expected->Evaluate(batch, ctx));
      auto text = [row](const columnar::Column& c) {
        return c.IsNull(row) ? std::string("NULL") : std::string(c.StringValue(row));
      };
      return Status::InvalidArgument(
          "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES: CHECK constraint Generated Column (", g.name,
          " <=> ", g.expression, ") of Delta table ", plan_->table_path, " violated by row ", row,
          " of batch ", batch_id_, ": ", g.name, " = ", text(*given), ", the expression gives ",
          text(*expected));
    }
  }
  columnar::RecordBatch out;
  out.schema = plan_->write_schema;
  out.num_rows = batch.num_rows;
  out.columns = batch.columns;
  for (expr::BoundExpressionPtr& compute : compute_) {
    SILT_ASSIGN_OR_RETURN(columnar::ColumnPtr column, compute->Evaluate(batch, ctx));
    out.columns.push_back(std::move(column));
  }
  for (size_t i = 0; i < plan_->identity.size(); ++i) {
    const ColumnPlan::Identity& id = plan_->identity[i];
    if (id.output_index >= 0) continue;
    const int64_t first = counters_->next[i].fetch_add(batch.num_rows);
    columnar::ColumnBuilder values(columnar::DataType::Long());
    values.Reserve(batch.num_rows);
    for (int64_t row = 0; row < batch.num_rows; ++row) {
      int64_t value = 0;
      if (__builtin_mul_overflow(first + row, id.column.step, &value) ||
          __builtin_add_overflow(value, id.column.start, &value)) {
        return Status::InvalidArgument("DELTA_IDENTITY_COLUMNS_VALUE_OVERFLOW: identity column '",
                                       id.column.name, "' of Delta table ", plan_->table_path,
                                       " ran out of BIGINT values (start ", id.column.start,
                                       ", step ", id.column.step, ")");
      }
      values.Append<int64_t>(value);
    }
    out.columns.push_back(values.Finish());
  }
  return out;
}

Status DeltaSink::PlanColumns(const columnar::Schema* table) {
  auto plan = std::make_shared<ColumnPlan>();
  plan->output_schema = output_schema_;
  plan->table_path = path_;
  if (table != nullptr) {
    SILT_ASSIGN_OR_RETURN(std::vector<delta::GeneratedColumn> generated,
                          delta::GeneratedColumns(*table));
    for (delta::GeneratedColumn& g : generated) {
      ColumnPlan::Generated column;
      column.type = table->field(table->FieldIndex(g.name)).type;
      column.name = std::move(g.name);
      column.expression = std::move(g.expression);
      plan->generated.push_back(std::move(column));
    }
    SILT_ASSIGN_OR_RETURN(std::vector<delta::IdentityColumn> identity,
                          delta::IdentityColumns(*table));
    for (delta::IdentityColumn& id : identity) {
      plan->identity.push_back(ColumnPlan::Identity{std::move(id), -1, 0});
    }
  } else {
    for (const auto& [name, expression] : generated_spec_) {
      ColumnPlan::Generated column;
      column.name = name;
      column.expression = expression;
      const int index = output_schema_->FieldIndex(name);
      if (index >= 0) {
        column.type = output_schema_->field(index).type;
      } else {
        Result<expr::BoundExpressionPtr> bound = BindText(expression, output_schema_, eval_);
        if (!bound.ok()) {
          return Status::InvalidArgument("sink.generatedColumns.", name, ": ",
                                         bound.status().message());
        }
        column.type = (*bound)->type();
      }
      plan->generated.push_back(std::move(column));
    }
    for (const delta::IdentityColumn& id : identity_spec_) {
      plan->identity.push_back(ColumnPlan::Identity{id, -1, 0});
    }
  }
  if (plan->generated.empty() && plan->identity.empty()) {
    column_plan_.reset();
    write_schema_ = output_schema_;
    return Status::OK();
  }
  std::vector<columnar::Field> fields = output_schema_->fields();
  for (ColumnPlan::Generated& g : plan->generated) {
    g.output_index = output_schema_->FieldIndex(g.name);
    if (g.output_index < 0) fields.push_back(columnar::Field{g.name, g.type, true, "{}"});
  }
  for (ColumnPlan::Identity& id : plan->identity) {
    id.output_index = output_schema_->FieldIndex(id.column.name);
    if (id.output_index >= 0 && !id.column.allow_explicit_insert) {
      return Status::InvalidArgument(
          "DELTA_IDENTITY_COLUMNS_EXPLICIT_INSERT_NOT_SUPPORTED: the query provides values for "
          "column '",
          id.column.name, "' of Delta table ", path_,
          ", which is GENERATED ALWAYS AS IDENTITY (drop it from the query's output)");
    }
    if (id.output_index >= 0) continue;
    fields.push_back(columnar::Field{id.column.name, columnar::DataType::Long(), true, "{}"});
    // The first value after the high-water mark: values are start + k *
    // step, beyond the mark in the step's direction.
    const delta::IdentityColumn& c = id.column;
    if (c.high_water_mark) {
      const __int128 distance = static_cast<__int128>(*c.high_water_mark) - c.start;
      const __int128 k = distance / c.step;
      id.first_k = k < 0 ? 0 : static_cast<int64_t>(k) + 1;
    }
  }
  plan->write_schema = columnar::DataType::Struct(std::move(fields));
  // Binds every expression once, so a bad one fails before any data.
  IdentityCounters counters(*plan);
  SILT_RETURN_NOT_OK(ColumnFiller::Make(plan, eval_, &counters, -1).status());
  write_schema_ = plan->write_schema;
  column_plan_ = std::move(plan);
  return Status::OK();
}

Result<columnar::SchemaPtr> DeltaSink::NewTableSchema() const {
  if (column_plan_ == nullptr) return delta::AsNullable(output_schema_);
  std::vector<columnar::Field> fields;
  auto add_identity = [&](const ColumnPlan::Identity& id, columnar::Field field) -> Status {
    field.type = columnar::DataType::Long();
    SILT_ASSIGN_OR_RETURN(field, delta::WithIdentity(field, id.column.start, id.column.step,
                                                     id.column.allow_explicit_insert));
    fields.push_back(std::move(field));
    return Status::OK();
  };
  for (const ColumnPlan::Identity& id : column_plan_->identity) {
    if (id.output_index < 0) {
      SILT_RETURN_NOT_OK(add_identity(id, columnar::Field{id.column.name, nullptr, true, "{}"}));
    }
  }
  for (int i = 0; i < output_schema_->num_fields(); ++i) {
    columnar::Field field = output_schema_->field(i);
    bool done = false;
    for (const ColumnPlan::Identity& id : column_plan_->identity) {
      if (id.output_index == i) {
        SILT_RETURN_NOT_OK(add_identity(id, field));
        done = true;
      }
    }
    if (done) continue;
    for (const ColumnPlan::Generated& g : column_plan_->generated) {
      if (g.output_index == i) {
        SILT_ASSIGN_OR_RETURN(field, delta::WithGenerationExpression(field, g.expression));
      }
    }
    fields.push_back(std::move(field));
  }
  for (const ColumnPlan::Generated& g : column_plan_->generated) {
    if (g.output_index >= 0) continue;
    SILT_ASSIGN_OR_RETURN(
        columnar::Field field,
        delta::WithGenerationExpression(columnar::Field{g.name, g.type, true, "{}"}, g.expression));
    fields.push_back(std::move(field));
  }
  return delta::AsNullable(columnar::DataType::Struct(std::move(fields)));
}

Status DeltaSink::ApplyColumnMapping(const delta::Snapshot* snapshot) {
  max_column_id_.reset();
  const delta::TableConfiguration& configuration =
      snapshot != nullptr ? snapshot->metadata().configuration : table_properties_;
  SILT_ASSIGN_OR_RETURN_CTX(delta::ColumnMappingMode mode,
                            delta::ColumnMappingModeOf(configuration), "Delta table ", path_);
  layout_.column_mapping = mode != delta::ColumnMappingMode::kNone;
  if (!layout_.column_mapping) return Status::OK();
  int64_t max_id = 0;
  if (snapshot != nullptr) {
    SILT_ASSIGN_OR_RETURN_CTX(max_id, delta::MaxColumnIdInUse(configuration, *snapshot->schema()),
                              "Delta table ", path_);
  }
  const int64_t before = max_id;
  SILT_ASSIGN_OR_RETURN_CTX(
      columnar::SchemaPtr mapped,
      delta::AssignColumnMapping(layout_.table_schema,
                                 snapshot != nullptr ? snapshot->schema().get() : nullptr, &max_id),
      "Delta table ", path_);
  if (mapped != layout_.table_schema) {
    layout_.table_schema = std::move(mapped);
    layout_.schema_changed = true;
  }
  if (max_id != before) max_column_id_ = max_id;
  return Status::OK();
}

Result<std::unique_ptr<DeltaSink::ColumnFiller>> DeltaSink::MakeFiller() {
  if (column_plan_ == nullptr) return std::unique_ptr<ColumnFiller>();
  return ColumnFiller::Make(column_plan_, eval_, identity_counters_.get(), batch_id_);
}

Result<std::unique_ptr<DeltaSink::Constraints>> DeltaSink::MakeConstraints() const {
  if (snapshot_ == nullptr) return std::unique_ptr<Constraints>();
  SILT_ASSIGN_OR_RETURN(std::vector<delta::Constraint> constraints,
                        delta::TableConstraints(snapshot_->metadata()));
  if (constraints.empty()) return std::unique_ptr<Constraints>();
  auto out = std::make_unique<Constraints>();
  out->where = Status::Concat("Delta table ", path_, ", batch ", batch_id_);
  for (const delta::Constraint& c : constraints) {
    SILT_ASSIGN_OR_RETURN_CTX(dml::RowCheck check,
                              dml::MakeRowCheck(c.name, c.expression, write_schema_, eval_, ""),
                              "Delta table ", path_);
    out->checks.push_back(std::move(check));
  }
  return out;
}

}  // namespace silt::stream
