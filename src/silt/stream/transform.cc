#include "silt/stream/transform.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <string>

#include "silt/base/logging.h"
#include "silt/stream/column_util_internal.h"
#include "silt/stream/options_internal.h"

namespace silt::stream {

using columnar::ColumnPtr;
using columnar::Field;
using columnar::RecordBatch;
using columnar::RecordBatchPtr;
using columnar::SchemaPtr;

// One bound step. Apply runs once per chunk (one virtual call per batch);
// the work inside is column-at-a-time.
class TransformStepImpl {
 public:
  virtual ~TransformStepImpl() = default;
  const SchemaPtr& output_schema() const { return output_schema_; }
  const std::string& key_path() const { return key_path_; }
  virtual Result<RecordBatchPtr> Apply(const RecordBatchPtr& batch,
                                       const expr::EvalContext& ctx) = 0;

 protected:
  SchemaPtr output_schema_;
  std::string key_path_;
};

namespace {

RecordBatchPtr MakeBatch(SchemaPtr schema, int64_t num_rows, std::vector<ColumnPtr> columns) {
  auto batch = std::make_shared<RecordBatch>();
  batch->schema = std::move(schema);
  batch->num_rows = num_rows;
  batch->columns = std::move(columns);
  return batch;
}

Result<expr::BoundExpressionPtr> ParseAndBind(const std::string& text, const SchemaPtr& schema,
                                              const expr::EvalOptions& options,
                                              const std::string& key_path) {
  Result<expr::ExpressionPtr> parsed = expr::ParseExpression(text);
  if (!parsed.ok()) return Status::InvalidArgument(key_path, ": ", parsed.status().message());
  Result<expr::BoundExpressionPtr> bound = expr::Bind(**parsed, schema, options);
  if (!bound.ok()) return Status::InvalidArgument(key_path, ": ", bound.status().message());
  return bound;
}

class SelectStep final : public TransformStepImpl {
 public:
  static Result<std::unique_ptr<TransformStepImpl>> Make(const TransformStep& step,
                                                         const SchemaPtr& input,
                                                         const expr::EvalOptions& options) {
    auto out = std::unique_ptr<SelectStep>(new SelectStep());
    out->key_path_ = step.key_path + ".select";
    // The items share common work (one JSON parse per row for all
    // get_json_object calls on the same input).
    expr::BindSession session;
    std::vector<Field> fields;
    for (size_t item_idx = 0; item_idx < step.exprs.size(); ++item_idx) {
      const std::string& text = step.exprs[item_idx];
      std::string item_path = out->key_path_ + "[" + std::to_string(item_idx) + "]";
      Result<expr::ExpressionPtr> parsed = expr::ParseExpression(text);
      if (!parsed.ok()) return Status::InvalidArgument(item_path, ": ", parsed.status().message());
      const expr::Expression& expression = **parsed;
      if (expression.IsStar() && expression.StarQualifier().empty()) {
        for (int col_idx = 0; col_idx < input->num_fields(); ++col_idx) {
          out->outputs_.push_back({Output::kColumn, col_idx, -1});
          fields.push_back(input->field(col_idx));
        }
        continue;
      }
      if (expression.IsStar()) {
        // `x.*`: evaluate x once per batch and hand out its fields.
        std::string qualifier = expression.StarQualifier();
        SILT_ASSIGN_OR_RETURN(expr::BoundExpressionPtr bound,
                              ParseAndBind(qualifier, input, options, item_path));
        if (bound->type()->id() != columnar::TypeId::kStruct) {
          return Status::InvalidArgument(item_path, ": '", text, "' needs a struct, but ",
                                         qualifier, " is ", bound->type()->ToDdl());
        }
        const int expr_idx = static_cast<int>(out->exprs_.size());
        for (int child_idx = 0; child_idx < bound->type()->num_fields(); ++child_idx) {
          Field field = bound->type()->field(child_idx);
          field.nullable = field.nullable || bound->nullable();
          fields.push_back(std::move(field));
          out->outputs_.push_back({Output::kStructField, expr_idx, child_idx});
        }
        out->exprs_.push_back(std::move(bound));
        continue;
      }
      Result<expr::BoundExpressionPtr> bound = expr::Bind(expression, input, options, &session);
      if (!bound.ok()) return Status::InvalidArgument(item_path, ": ", bound.status().message());
      fields.push_back({(*bound)->name(), (*bound)->type(), (*bound)->nullable()});
      out->outputs_.push_back({Output::kExpression, static_cast<int>(out->exprs_.size()), -1});
      out->exprs_.push_back(std::move(*bound));
    }
    out->output_schema_ = columnar::DataType::Struct(std::move(fields));
    return std::unique_ptr<TransformStepImpl>(std::move(out));
  }

  Result<RecordBatchPtr> Apply(const RecordBatchPtr& batch, const expr::EvalContext& ctx) override {
    evaluated_.clear();
    for (size_t expr_idx = 0; expr_idx < exprs_.size(); ++expr_idx) {
      Result<ColumnPtr> column = exprs_[expr_idx]->Evaluate(*batch, ctx);
      if (!column.ok()) return column.status().WithContextParts(key_path_);
      evaluated_.push_back(std::move(*column));
    }
    std::vector<ColumnPtr> columns;
    columns.reserve(outputs_.size());
    for (const Output& output : outputs_) {
      switch (output.kind) {
        case Output::kColumn: columns.push_back(batch->column(output.index)); break;
        case Output::kExpression:
          columns.push_back(evaluated_[static_cast<size_t>(output.index)]);
          break;
        case Output::kStructField:
          columns.push_back(internal::StructFieldWithParentNulls(
              *evaluated_[static_cast<size_t>(output.index)], output.child));
          break;
      }
    }
    return MakeBatch(output_schema_, batch->num_rows, std::move(columns));
  }

 private:
  struct Output {
    enum Kind { kColumn, kExpression, kStructField } kind;
    int index;  // input column, or index into exprs_
    int child;  // struct field for kStructField
  };
  std::vector<expr::BoundExpressionPtr> exprs_;
  std::vector<Output> outputs_;
  std::vector<ColumnPtr> evaluated_;
};

class WhereStep final : public TransformStepImpl {
 public:
  static Result<std::unique_ptr<TransformStepImpl>> Make(const TransformStep& step,
                                                         const SchemaPtr& input,
                                                         const expr::EvalOptions& options) {
    auto out = std::unique_ptr<WhereStep>(new WhereStep());
    out->key_path_ = step.key_path + ".where";
    const std::string& text = step.exprs.front();
    SILT_ASSIGN_OR_RETURN(out->predicate_, ParseAndBind(text, input, options, out->key_path_));
    if (out->predicate_->type()->id() != columnar::TypeId::kBoolean) {
      return Status::InvalidArgument(out->key_path_, ": the predicate '", text, "' has type ",
                                     out->predicate_->type()->ToDdl(), "; expected BOOLEAN");
    }
    out->output_schema_ = input;
    return std::unique_ptr<TransformStepImpl>(std::move(out));
  }

  Result<RecordBatchPtr> Apply(const RecordBatchPtr& batch, const expr::EvalContext& ctx) override {
    if (batch->num_rows == 0) return batch;
    Result<ColumnPtr> predicate = predicate_->Evaluate(*batch, ctx);
    if (!predicate.ok()) return predicate.status().WithContextParts(key_path_);
    std::vector<int64_t> keep = internal::SelectTrueRows(**predicate);
    if (static_cast<int64_t>(keep.size()) == batch->num_rows) return batch;
    return columnar::TakeBatch(*batch, keep);
  }

 private:
  expr::BoundExpressionPtr predicate_;
};

class WithColumnStep final : public TransformStepImpl {
 public:
  static Result<std::unique_ptr<TransformStepImpl>> Make(const TransformStep& step,
                                                         const SchemaPtr& input,
                                                         const expr::EvalOptions& options) {
    auto out = std::unique_ptr<WithColumnStep>(new WithColumnStep());
    out->key_path_ = step.key_path + ".withColumn";
    SchemaPtr schema = input;
    for (const auto& [name, text] : step.named) {
      std::string entry_path = out->key_path_ + "." + name;
      SILT_ASSIGN_OR_RETURN(expr::BoundExpressionPtr bound,
                            ParseAndBind(text, schema, options, entry_path));
      std::vector<Field> fields = schema->fields();
      int target = schema->FieldIndex(name);
      Field field{name, bound->type(), bound->nullable()};
      if (target >= 0) {
        fields[static_cast<size_t>(target)] = std::move(field);
      } else {
        target = static_cast<int>(fields.size());
        fields.push_back(std::move(field));
      }
      schema = columnar::DataType::Struct(std::move(fields));
      out->entries_.push_back({std::move(bound), target, schema});
    }
    out->output_schema_ = schema;
    return std::unique_ptr<TransformStepImpl>(std::move(out));
  }

  Result<RecordBatchPtr> Apply(const RecordBatchPtr& batch, const expr::EvalContext& ctx) override {
    RecordBatchPtr current = batch;
    for (Entry& entry : entries_) {
      Result<ColumnPtr> column = entry.expr->Evaluate(*current, ctx);
      if (!column.ok()) return column.status().WithContextParts(key_path_);
      std::vector<ColumnPtr> columns = current->columns;
      if (entry.target < static_cast<int>(columns.size())) {
        columns[static_cast<size_t>(entry.target)] = std::move(*column);
      } else {
        columns.push_back(std::move(*column));
      }
      current = MakeBatch(entry.schema, current->num_rows, std::move(columns));
    }
    return current;
  }

 private:
  struct Entry {
    expr::BoundExpressionPtr expr;
    int target;
    SchemaPtr schema;  // after this entry
  };
  std::vector<Entry> entries_;
};

// withColumnRenamed and drop only change the schema / column list.
class ProjectStep final : public TransformStepImpl {
 public:
  static Result<std::unique_ptr<TransformStepImpl>> MakeRename(const TransformStep& step,
                                                               const SchemaPtr& input) {
    auto out = std::unique_ptr<ProjectStep>(new ProjectStep());
    out->key_path_ = step.key_path + ".withColumnRenamed";
    std::vector<Field> fields = input->fields();
    for (const auto& [old_name, new_name] : step.named) {
      if (new_name.empty()) {
        return Status::InvalidArgument(out->key_path_, ".", old_name, ": the new name is empty");
      }
      bool found = false;
      for (Field& field : fields) {
        if (internal::EqualsIgnoreCase(field.name, old_name)) {
          field.name = new_name;
          found = true;
        }
      }
      if (!found) {
        SILT_LOG_WARN("stream", out->key_path_, ".", old_name, ": no column named '", old_name,
                      "' to rename (ignored, as Spark does)");
      }
    }
    for (int col_idx = 0; col_idx < input->num_fields(); ++col_idx) {
      out->columns_.push_back(col_idx);
    }
    out->output_schema_ = columnar::DataType::Struct(std::move(fields));
    return std::unique_ptr<TransformStepImpl>(std::move(out));
  }

  static Result<std::unique_ptr<TransformStepImpl>> MakeDrop(const TransformStep& step,
                                                             const SchemaPtr& input) {
    auto out = std::unique_ptr<ProjectStep>(new ProjectStep());
    out->key_path_ = step.key_path + ".drop";
    std::vector<bool> dropped(static_cast<size_t>(input->num_fields()), false);
    for (const std::string& name : step.exprs) {
      bool found = false;
      for (int col_idx = 0; col_idx < input->num_fields(); ++col_idx) {
        if (internal::EqualsIgnoreCase(input->field(col_idx).name, name)) {
          dropped[static_cast<size_t>(col_idx)] = true;
          found = true;
        }
      }
      if (!found) {
        SILT_LOG_WARN("stream", out->key_path_, ": no column named '", name,
                      "' to drop (ignored, as Spark does)");
      }
    }
    std::vector<Field> fields;
    for (int col_idx = 0; col_idx < input->num_fields(); ++col_idx) {
      if (dropped[static_cast<size_t>(col_idx)]) continue;
      out->columns_.push_back(col_idx);
      fields.push_back(input->field(col_idx));
    }
    out->output_schema_ = columnar::DataType::Struct(std::move(fields));
    return std::unique_ptr<TransformStepImpl>(std::move(out));
  }

  Result<RecordBatchPtr> Apply(const RecordBatchPtr& batch, const expr::EvalContext&) override {
    std::vector<ColumnPtr> columns;
    columns.reserve(columns_.size());
    for (int col_idx : columns_) columns.push_back(batch->column(col_idx));
    return MakeBatch(output_schema_, batch->num_rows, std::move(columns));
  }

 private:
  std::vector<int> columns_;
};

}  // namespace

class WatermarkStep final : public TransformStepImpl {
 public:
  static Result<std::unique_ptr<WatermarkStep>> Make(const TransformStep& step,
                                                     const SchemaPtr& input) {
    auto out = std::unique_ptr<WatermarkStep>(new WatermarkStep());
    out->key_path_ = step.key_path + ".withWatermark";
    out->column_ = input->FieldIndex(step.event_time);
    if (out->column_ < 0) {
      std::string available;
      for (const Field& field : input->fields()) {
        if (!available.empty()) available += ", ";
        available += field.name;
      }
      return Status::InvalidArgument(out->key_path_, ".eventTime: no column named '",
                                     step.event_time, "' (available: ", available, ")");
    }
    columnar::TypeId type = input->field(out->column_).type->id();
    if (type != columnar::TypeId::kTimestamp && type != columnar::TypeId::kTimestampNtz) {
      return Status::InvalidArgument(out->key_path_, ".eventTime: column '", step.event_time,
                                     "' is ", input->field(out->column_).type->ToDdl(),
                                     "; a watermark needs a TIMESTAMP column");
    }
    Result<int64_t> delay = ParseDurationMicros(step.delay_threshold);
    if (!delay.ok()) {
      return Status::InvalidArgument(out->key_path_, ".delayThreshold: ", delay.status().message());
    }
    out->delay_ms_ = *delay / 1000;
    out->output_schema_ = input;
    return out;
  }

  Result<RecordBatchPtr> Apply(const RecordBatchPtr& batch, const expr::EvalContext&) override {
    const columnar::Column& column = *batch->column(column_);
    const int64_t* values = column.length > 0 ? column.raw_values<int64_t>() : nullptr;
    for (int64_t row_idx = 0; row_idx < column.length; ++row_idx) {
      if (!column.IsValid(row_idx)) continue;
      // Spark truncates micros to millis with Java's integer division.
      int64_t ms = values[row_idx] / 1000;
      if (stats_.count == 0) {
        stats_.min_ms = ms;
        stats_.max_ms = ms;
      } else {
        stats_.min_ms = std::min(stats_.min_ms, ms);
        stats_.max_ms = std::max(stats_.max_ms, ms);
      }
      stats_.sum_ms += static_cast<double>(ms);
      ++stats_.count;
    }
    return batch;
  }

  void Reset() { stats_ = EventTimeStats(); }
  const EventTimeStats& stats() const { return stats_; }
  int64_t delay_ms() const { return delay_ms_; }

 private:
  int column_ = -1;
  int64_t delay_ms_ = 0;
  EventTimeStats stats_;
};

Transform::~Transform() = default;

Result<std::unique_ptr<Transform>> Transform::Make(const std::vector<TransformStep>& steps,
                                                   SchemaPtr input_schema,
                                                   const expr::EvalOptions& options) {
  auto out = std::unique_ptr<Transform>(new Transform());
  out->input_schema_ = input_schema;
  SchemaPtr schema = input_schema;
  for (const TransformStep& step : steps) {
    std::unique_ptr<TransformStepImpl> impl;
    if (step.kind == "select") {
      SILT_ASSIGN_OR_RETURN(impl, SelectStep::Make(step, schema, options));
    } else if (step.kind == "where" || step.kind == "filter") {
      if (step.exprs.size() != 1) {
        return Status::InvalidArgument(step.key_path, ".where: expected one predicate");
      }
      SILT_ASSIGN_OR_RETURN(impl, WhereStep::Make(step, schema, options));
    } else if (step.kind == "withColumn") {
      SILT_ASSIGN_OR_RETURN(impl, WithColumnStep::Make(step, schema, options));
    } else if (step.kind == "withColumnRenamed") {
      SILT_ASSIGN_OR_RETURN(impl, ProjectStep::MakeRename(step, schema));
    } else if (step.kind == "drop") {
      SILT_ASSIGN_OR_RETURN(impl, ProjectStep::MakeDrop(step, schema));
    } else if (step.kind == "withWatermark") {
      SILT_ASSIGN_OR_RETURN(std::unique_ptr<WatermarkStep> watermark,
                            WatermarkStep::Make(step, schema));
      out->watermark_steps_.push_back(out->steps_.size());
      out->operator_watermarks_.emplace_back();
      impl = std::move(watermark);
    } else {
      return Status::InvalidArgument(step.key_path, ": unknown transform step '", step.kind, "'");
    }
    schema = impl->output_schema();
    out->steps_.push_back(std::move(impl));
  }
  // Delta tables need unique column names (case-insensitively).
  for (int i = 0; i < schema->num_fields(); ++i) {
    for (int j = 0; j < i; ++j) {
      if (internal::EqualsIgnoreCase(schema->field(i).name, schema->field(j).name)) {
        return Status::InvalidArgument("transform: the output has two columns named '",
                                       schema->field(i).name,
                                       "'; rename one (AS alias) or drop it");
      }
    }
  }
  out->output_schema_ = schema;
  return out;
}

void Transform::StartBatch() {
  for (size_t idx : watermark_steps_) static_cast<WatermarkStep*>(steps_[idx].get())->Reset();
}

Result<RecordBatchPtr> Transform::Process(const RecordBatchPtr& batch,
                                          const expr::EvalContext& ctx) {
  RecordBatchPtr current = batch;
  for (const std::unique_ptr<TransformStepImpl>& step : steps_) {
    SILT_ASSIGN_OR_RETURN(current, step->Apply(current, ctx));
  }
  return current;
}

std::optional<EventTimeStats> Transform::batch_event_time_stats() const {
  std::optional<EventTimeStats> merged;
  for (size_t idx : watermark_steps_) {
    const EventTimeStats& stats = static_cast<const WatermarkStep*>(steps_[idx].get())->stats();
    if (stats.count == 0) continue;
    if (!merged) {
      merged = stats;
      continue;
    }
    merged->min_ms = std::min(merged->min_ms, stats.min_ms);
    merged->max_ms = std::max(merged->max_ms, stats.max_ms);
    merged->sum_ms += stats.sum_ms;
    merged->count += stats.count;
  }
  return merged;
}

int64_t Transform::AdvanceWatermark(int64_t current_watermark_ms) {
  if (watermark_steps_.empty()) return current_watermark_ms;
  for (size_t i = 0; i < watermark_steps_.size(); ++i) {
    const auto* step = static_cast<const WatermarkStep*>(steps_[watermark_steps_[i]].get());
    std::optional<int64_t>& operator_watermark = operator_watermarks_[i];
    if (step->stats().count > 0) {
      int64_t candidate = step->stats().max_ms - step->delay_ms();
      if (!operator_watermark || candidate > *operator_watermark) operator_watermark = candidate;
    } else if (!operator_watermark) {
      // Spark counts a watermark that has seen no data yet as 0.
      operator_watermark = 0;
    }
  }
  // spark.sql.streaming.multipleWatermarkPolicy = min.
  int64_t chosen = std::numeric_limits<int64_t>::max();
  for (const std::optional<int64_t>& w : operator_watermarks_) chosen = std::min(chosen, *w);
  return std::max(current_watermark_ms, chosen);
}

}  // namespace silt::stream
