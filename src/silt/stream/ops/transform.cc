#include "silt/stream/ops/transform.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <optional>
#include <string>

#include "silt/base/logging.h"
#include "silt/base/strings.h"
#include "silt/expr/filter.h"
#include "silt/expr/function/json/json_options.h"
#include "silt/expr/parse/ast.h"
#include "silt/expr/parse/lexer.h"
#include "silt/expr/parse/select_statement.h"
#include "silt/expr/value/time_zone.h"
#include "silt/stream/column_util_internal.h"
#include "silt/stream/ops/sql_step.h"
#include "silt/stream/ops/static_join.h"
#include "silt/stream/ops/transform_step.h"
#include "silt/stream/options_internal.h"
#include "silt/stream/stateful/event_time.h"
#include "silt/stream/stateful/stateful_step.h"

namespace silt::stream {

using columnar::ColumnPtr;
using columnar::Field;
using columnar::RecordBatch;
using columnar::RecordBatchPtr;
using columnar::SchemaPtr;

namespace {

using internal::MakeBatch;

// The watermark metadata a select item passes on (event_time.h): that of
// the input column it names, bare or aliased (Spark's Alias keeps a named
// child's metadata), or of the time column of window(), session_window()
// and window_time(); "{}" for any other expression.
std::string ItemWatermarkMetadata(const expr::Expression& item, const SchemaPtr& input) {
  const auto* node = dynamic_cast<const expr::Node*>(&item);
  if (node == nullptr) return "{}";
  std::optional<int64_t> delay = ExpressionWatermarkDelay(*node, *input);
  return delay ? WithWatermarkDelay("{}", delay) : "{}";
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
  // `shared` (may be null): the session of the where step just before, so
  // the items reuse the JSON parses of the rows it kept.
  static Result<std::unique_ptr<TransformStepImpl>> Make(const TransformStep& step,
                                                         const SchemaPtr& input,
                                                         const expr::EvalOptions& base_options,
                                                         expr::BindSession* shared) {
    auto out = std::unique_ptr<SelectStep>(new SelectStep());
    out->key_path_ = step.key_path + ".select";
    std::vector<expr::ExpressionPtr> items;
    std::vector<const expr::Expression*> item_ptrs;
    for (size_t item_idx = 0; item_idx < step.exprs.size(); ++item_idx) {
      Result<expr::ExpressionPtr> parsed = expr::ParseExpression(step.exprs[item_idx]);
      if (!parsed.ok()) {
        return Status::InvalidArgument(out->key_path_, "[", item_idx,
                                       "]: ", parsed.status().message());
      }
      item_ptrs.push_back(parsed->get());
      items.push_back(std::move(*parsed));
    }
    // window() anywhere in the items: the rows expand to one per window
    // first (Spark's TimeWindowing); the items bind against the input plus
    // the window column, which `*` leaves out.
    Result<std::unique_ptr<expr::WindowExpansion>> windows =
        expr::WindowExpansion::Make(item_ptrs, input, base_options);
    if (!windows.ok()) {
      return Status::InvalidArgument(out->key_path_, ": ", windows.status().message());
    }
    out->windows_ = std::move(*windows);
    const SchemaPtr& schema = out->windows_ ? out->windows_->schema() : input;
    const expr::EvalOptions& options = out->windows_ ? out->windows_->options() : base_options;
    // The items share common work (one JSON parse per row for all
    // get_json_object calls on the same input). The where step's session
    // saw the rows before any window expansion, so it is not shared then.
    expr::BindSession own_session;
    expr::BindSession& session =
        shared != nullptr && out->windows_ == nullptr ? *shared : own_session;
    std::vector<Field> fields;
    for (size_t item_idx = 0; item_idx < step.exprs.size(); ++item_idx) {
      const std::string& text = step.exprs[item_idx];
      std::string item_path = out->key_path_ + "[" + std::to_string(item_idx) + "]";
      const expr::Expression& expression = *items[item_idx];
      if (std::optional<expr::GeneratorSpec> gen = expr::AsGenerator(expression)) {
        if (gen->function == "json_tuple") {
          // One row per input row: the fields as plain columns c0, c1, ...
          for (const expr::ExpressionPtr& part : gen->json_tuple_items) {
            Result<expr::BoundExpressionPtr> bound = expr::Bind(*part, schema, options, &session);
            if (!bound.ok()) {
              return Status::InvalidArgument(item_path, ": ", bound.status().message());
            }
            fields.push_back({(*bound)->name(), (*bound)->type(), true});
            out->outputs_.push_back(
                {Output::kExpression, static_cast<int>(out->exprs_.size()), -1});
            out->exprs_.push_back(std::move(*bound));
          }
          continue;
        }
        SILT_RETURN_NOT_OK(out->AddGenerator(*gen, schema, options, item_path, text, &fields));
        continue;
      }
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
                              ParseAndBind(qualifier, schema, options, item_path));
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
      Result<expr::BoundExpressionPtr> bound = expr::Bind(expression, schema, options, &session);
      if (!bound.ok()) return Status::InvalidArgument(item_path, ": ", bound.status().message());
      fields.push_back({(*bound)->name(), (*bound)->type(), (*bound)->nullable(),
                        ItemWatermarkMetadata(expression, schema)});
      out->outputs_.push_back({Output::kExpression, static_cast<int>(out->exprs_.size()), -1});
      out->exprs_.push_back(std::move(*bound));
    }
    out->output_schema_ = columnar::DataType::Struct(std::move(fields));
    return std::unique_ptr<TransformStepImpl>(std::move(out));
  }

  Result<RecordBatchPtr> Apply(const RecordBatchPtr& input, const expr::EvalContext& ctx) override {
    RecordBatchPtr batch = input;
    if (windows_ != nullptr) {
      Result<RecordBatchPtr> expanded = windows_->Expand(*input, ctx);
      if (!expanded.ok()) return expanded.status().WithContextParts(key_path_);
      batch = std::move(*expanded);
    }
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
        case Output::kGenerated: columns.push_back(nullptr); break;
      }
    }
    if (generator_ == nullptr)
      return MakeBatch(output_schema_, batch->num_rows, std::move(columns));
    return Generate(*batch, ctx, std::move(columns));
  }

 private:
  struct Output {
    enum Kind { kColumn, kExpression, kStructField, kGenerated } kind;
    int index;  // input column, or index into exprs_
    int child;  // struct field for kStructField; for kGenerated 0 = pos,
                // 1 = element / key, 2 = value
  };

  // Spark allows one generator per select.
  Status AddGenerator(const expr::GeneratorSpec& gen, const SchemaPtr& input,
                      const expr::EvalOptions& options, const std::string& item_path,
                      const std::string& text, std::vector<Field>* fields) {
    if (generator_ != nullptr) {
      return Status::InvalidArgument(item_path,
                                     ": only one generator (explode, posexplode) is "
                                     "allowed per select, found another in '",
                                     text, "'");
    }
    Result<expr::BoundExpressionPtr> bound = expr::Bind(*gen.argument, input, options);
    if (!bound.ok()) return Status::InvalidArgument(item_path, ": ", bound.status().message());
    const columnar::DataType& t = *(*bound)->type();
    if (t.id() != columnar::TypeId::kArray && t.id() != columnar::TypeId::kMap) {
      return Status::InvalidArgument(item_path, ": ", gen.function, " needs an ARRAY or MAP, but '",
                                     gen.argument->ToString(), "' is ", t.ToDdl());
    }
    generator_ = std::move(*bound);
    gen_outer_ = gen.outer;
    gen_is_map_ = t.id() == columnar::TypeId::kMap;
    if (gen.with_position) {
      fields->push_back({"pos", columnar::DataType::Int(), gen.outer});
      outputs_.push_back({Output::kGenerated, 0, 0});
    }
    if (gen_is_map_) {
      fields->push_back({"key", t.key_type(), gen.outer});
      outputs_.push_back({Output::kGenerated, 0, 1});
      fields->push_back({"value", t.value_type(), true});
      outputs_.push_back({Output::kGenerated, 0, 2});
    } else {
      std::string name = gen.alias.empty() ? "col" : gen.alias;
      fields->push_back({name, t.element_type(), t.contains_null() || gen.outer});
      outputs_.push_back({Output::kGenerated, 0, 1});
    }
    return Status::OK();
  }

  // One output row per element (map entry) of the generator's value; the
  // other columns repeat their row. *_outer keeps NULL and empty inputs as
  // one row of NULLs.
  Result<RecordBatchPtr> Generate(const RecordBatch& batch, const expr::EvalContext& ctx,
                                  std::vector<ColumnPtr> columns) {
    Result<ColumnPtr> evaluated = generator_->Evaluate(batch, ctx);
    if (!evaluated.ok()) return evaluated.status().WithContextParts(key_path_);
    const columnar::Column& value = **evaluated;
    const int32_t* offsets = value.offsets();
    std::vector<int64_t> rows;
    std::vector<int64_t> elems;
    std::vector<int32_t> positions;
    rows.reserve(static_cast<size_t>(batch.num_rows));
    const int64_t null_elem = value.children[0]->length;
    for (int64_t row = 0; row < batch.num_rows; ++row) {
      int32_t begin = value.IsNull(row) ? 0 : offsets[row];
      int32_t end = value.IsNull(row) ? 0 : offsets[row + 1];
      if (begin == end && gen_outer_) {
        rows.push_back(row);
        elems.push_back(null_elem);
        positions.push_back(-1);
        continue;
      }
      for (int32_t e = begin; e < end; ++e) {
        rows.push_back(row);
        elems.push_back(e);
        positions.push_back(e - begin);
      }
    }
    // Elements (or keys and values) with one NULL row appended for the
    // outer rows.
    auto take_elements = [&](const ColumnPtr& child) {
      ColumnPtr padded = columnar::ConcatColumns({child, columnar::MakeNullColumn(child->type, 1)});
      return columnar::TakeColumn(*padded, elems);
    };
    ColumnPtr first;
    ColumnPtr second;
    if (gen_is_map_) {
      first = take_elements(value.children[0]->children[0]);
      second = take_elements(value.children[0]->children[1]);
    } else {
      first = take_elements(value.children[0]);
    }
    ColumnPtr pos_column;
    for (size_t i = 0; i < outputs_.size(); ++i) {
      const Output& output = outputs_[i];
      if (output.kind != Output::kGenerated) {
        columns[i] = columnar::TakeColumn(*columns[i], rows);
        continue;
      }
      if (output.child == 0) {
        auto pos = std::make_shared<columnar::Column>();
        pos->type = columnar::DataType::Int();
        pos->length = static_cast<int64_t>(positions.size());
        pos->values = std::make_shared<Buffer>();
        pos->values->Resize(pos->length * 4);
        int32_t* dst = pos->values->mutable_data_as<int32_t>();
        for (size_t k = 0; k < positions.size(); ++k) dst[k] = positions[k];
        if (gen_outer_) {
          pos->validity = std::make_shared<Buffer>();
          pos->validity->Resize((pos->length + 7) / 8);
          uint8_t* bits = pos->validity->mutable_data();
          std::fill(bits, bits + (pos->length + 7) / 8, uint8_t{0});
          for (size_t k = 0; k < positions.size(); ++k) {
            if (positions[k] >= 0) {
              columnar::SetBit(bits, static_cast<int64_t>(k));
            } else {
              dst[k] = 0;
              ++pos->null_count;
            }
          }
          if (pos->null_count == 0) pos->validity = nullptr;
        }
        columns[i] = pos;
      } else {
        columns[i] = output.child == 1 ? first : second;
      }
    }
    return MakeBatch(output_schema_, static_cast<int64_t>(rows.size()), std::move(columns));
  }

  RowMapping row_mapping() const override {
    return windows_ == nullptr && generator_ == nullptr ? RowMapping::kSame : RowMapping::kOther;
  }

  // window() in the items (else null): expands the rows first.
  std::unique_ptr<expr::WindowExpansion> windows_;
  expr::BoundExpressionPtr generator_;
  bool gen_outer_ = false;
  bool gen_is_map_ = false;
  std::vector<expr::BoundExpressionPtr> exprs_;
  std::vector<Output> outputs_;
  std::vector<ColumnPtr> evaluated_;
};

class WhereStep final : public TransformStepImpl {
 public:
  // `session`: shared with the select step that follows, if any.
  static Result<std::unique_ptr<TransformStepImpl>> Make(const TransformStep& step,
                                                         const SchemaPtr& input,
                                                         const expr::EvalOptions& options,
                                                         expr::BindSession* session) {
    auto out = std::unique_ptr<WhereStep>(new WhereStep());
    out->key_path_ = step.key_path + ".where";
    const std::string& text = step.exprs.front();
    Result<expr::ExpressionPtr> parsed = expr::ParseExpression(text);
    if (!parsed.ok()) {
      return Status::InvalidArgument(out->key_path_, ": ", parsed.status().message());
    }
    Result<std::unique_ptr<expr::BoundFilter>> filter =
        expr::BoundFilter::Make(**parsed, input, options, session);
    if (!filter.ok()) {
      return Status::InvalidArgument(out->key_path_, ": ", filter.status().message());
    }
    out->filter_ = std::move(*filter);
    if (out->filter_->type()->id() != columnar::TypeId::kBoolean) {
      return Status::InvalidArgument(out->key_path_, ": the predicate '", text, "' has type ",
                                     out->filter_->type()->ToDdl(), "; expected BOOLEAN");
    }
    out->output_schema_ = input;
    return std::unique_ptr<TransformStepImpl>(std::move(out));
  }

  Result<RecordBatchPtr> Apply(const RecordBatchPtr& batch, const expr::EvalContext& ctx) override {
    Result<RecordBatchPtr> kept = filter_->Filter(batch, ctx);
    if (!kept.ok()) return kept.status().WithContextParts(key_path_);
    return kept;
  }
  RowMapping row_mapping() const override { return RowMapping::kSubset; }
  const std::vector<int64_t>* last_kept_rows() const override { return filter_->last_kept_rows(); }

 private:
  std::unique_ptr<expr::BoundFilter> filter_;
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
      Result<expr::ExpressionPtr> parsed = expr::ParseExpression(text);
      if (!parsed.ok()) return Status::InvalidArgument(entry_path, ": ", parsed.status().message());
      // A withColumn entry is a projection too: window() in it expands the
      // rows first (Spark's TimeWindowing).
      Result<std::unique_ptr<expr::WindowExpansion>> windows =
          expr::WindowExpansion::Make({parsed->get()}, schema, options);
      if (!windows.ok()) {
        return Status::InvalidArgument(entry_path, ": ", windows.status().message());
      }
      Result<expr::BoundExpressionPtr> bound =
          *windows ? expr::Bind(**parsed, (*windows)->schema(), (*windows)->options())
                   : expr::Bind(**parsed, schema, options);
      if (!bound.ok()) return Status::InvalidArgument(entry_path, ": ", bound.status().message());
      std::vector<Field> fields = schema->fields();
      int target = schema->FieldIndex(name);
      Field field{name, (*bound)->type(), (*bound)->nullable()};
      if (target >= 0) {
        fields[static_cast<size_t>(target)] = std::move(field);
      } else {
        target = static_cast<int>(fields.size());
        fields.push_back(std::move(field));
      }
      schema = columnar::DataType::Struct(std::move(fields));
      out->entries_.push_back({std::move(*bound), std::move(*windows), target, schema});
    }
    out->output_schema_ = schema;
    return std::unique_ptr<TransformStepImpl>(std::move(out));
  }

  Result<RecordBatchPtr> Apply(const RecordBatchPtr& batch, const expr::EvalContext& ctx) override {
    RecordBatchPtr current = batch;
    for (Entry& entry : entries_) {
      if (entry.windows != nullptr) {
        Result<RecordBatchPtr> expanded = entry.windows->Expand(*current, ctx);
        if (!expanded.ok()) return expanded.status().WithContextParts(key_path_);
        current = std::move(*expanded);
      }
      Result<ColumnPtr> column = entry.expr->Evaluate(*current, ctx);
      if (!column.ok()) return column.status().WithContextParts(key_path_);
      std::vector<ColumnPtr> columns = current->columns;
      if (entry.windows != nullptr) columns.pop_back();  // the window column
      if (entry.target < static_cast<int>(columns.size())) {
        columns[static_cast<size_t>(entry.target)] = std::move(*column);
      } else {
        columns.push_back(std::move(*column));
      }
      current = MakeBatch(entry.schema, current->num_rows, std::move(columns));
    }
    return current;
  }
  RowMapping row_mapping() const override {
    for (const Entry& entry : entries_) {
      if (entry.windows != nullptr) return RowMapping::kOther;
    }
    return RowMapping::kSame;
  }

 private:
  struct Entry {
    expr::BoundExpressionPtr expr;
    std::unique_ptr<expr::WindowExpansion> windows;  // window() in expr, else null
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
  RowMapping row_mapping() const override { return RowMapping::kSame; }

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
    // As Spark's EventTimeWatermark: the event-time column carries the delay
    // in its metadata, and a column marked by an earlier watermark loses it.
    std::vector<Field> fields = input->fields();
    for (int col_idx = 0; col_idx < static_cast<int>(fields.size()); ++col_idx) {
      Field& field = fields[static_cast<size_t>(col_idx)];
      if (col_idx == out->column_) {
        field.metadata_json = WithWatermarkDelay(field.metadata_json, out->delay_ms_);
      } else if (WatermarkDelayOf(field.metadata_json).has_value()) {
        field.metadata_json = WithWatermarkDelay(field.metadata_json, std::nullopt);
      }
    }
    out->output_schema_ = columnar::DataType::Struct(std::move(fields));
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
    // The same columns under the schema with the watermark's metadata.
    return MakeBatch(output_schema_, batch->num_rows, batch->columns);
  }

  void StartBatch() override { stats_ = EventTimeStats(); }
  const EventTimeStats& stats() const { return stats_; }
  void Merge(const EventTimeStats& other) {
    if (other.count == 0) return;
    if (stats_.count == 0) {
      stats_ = other;
      return;
    }
    stats_.min_ms = std::min(stats_.min_ms, other.min_ms);
    stats_.max_ms = std::max(stats_.max_ms, other.max_ms);
    stats_.sum_ms += other.sum_ms;
    stats_.count += other.count;
  }
  int64_t delay_ms() const { return delay_ms_; }

  RowMapping row_mapping() const override { return RowMapping::kSame; }

 private:
  int column_ = -1;
  int64_t delay_ms_ = 0;
  EventTimeStats stats_;
};

Result<expr::EvalOptions> EvalOptionsForJob(const JobSpec& job, const Clock& clock) {
  expr::EvalOptions options;
  options.ansi = job.ansi;
  options.dead_letter = job.dead_letter.has_value();
  Result<expr::TimeZonePtr> zone = expr::TimeZone::Load(job.session_time_zone);
  if (!zone.ok()) {
    return Status::InvalidArgument("spark.sql.session.timeZone: ", zone.status().message());
  }
  options.session_zone = *zone;
  // CASTs of zone-less text and hour()/minute()/second() use one fixed
  // offset: the zone's offset now (exact for UTC and fixed-offset zones).
  options.session_zone_offset_micros =
      int64_t{(*zone)->OffsetSecondsAt(clock.NowMicros())} * 1000000;
  SILT_RETURN_NOT_OK(expr::ApplyDateTimeSparkConf(job.spark_conf, &options));
  return options;
}

Transform::~Transform() = default;

namespace {

// Spark 3.5's UnsupportedOperationChecker.checkStreamingQueryGlobalWatermarkLimit
// message, word for word.
constexpr std::string_view kCorrectnessMessage =
    "Detected pattern of possible 'correctness' issue due to global watermark. The query "
    "contains stateful operation which can emit rows older than the current watermark plus "
    "allowed late record delay, which are \"late rows\" in downstream stateful operations and "
    "these rows can be discarded. Please refer the programming guide doc for more details. If you "
    "understand the possible risk of correctness issue and still need to run the query, you can "
    "disable this check by setting the config "
    "`spark.sql.streaming.statefulOperator.checkCorrectness.enabled` to false.";

// Spark's isStatefulOperation for the correctness check: an aggregation, a
// deduplication whose keys hold the event time, any
// dropDuplicatesWithinWatermark.
bool CountsForCorrectnessCheck(const StatefulStep& record) {
  if (record.step.kind != "dropDuplicates") return true;
  if (!record.watermark) return false;
  if (record.step.exprs.empty()) return true;  // every column, the event time too
  for (const std::string& key : record.step.exprs) {
    if (internal::EqualsIgnoreCase(key, record.watermark->name)) return true;
  }
  return false;
}

// Whether the expression `text` names the column `name` (an identifier
// equal to it; text that does not tokenize counts as naming it).
bool MentionsColumn(const std::string& text, const std::string& name) {
  Result<std::vector<expr::Token>> tokens = expr::Tokenize(text);
  if (!tokens.ok()) return true;
  for (const expr::Token& token : *tokens) {
    if (token.kind == expr::TokenKind::kIdentifier &&
        internal::EqualsIgnoreCase(token.text, name)) {
      return true;
    }
  }
  return false;
}

bool MentionsColumn(const std::vector<std::string>& texts, const std::string& name) {
  for (const std::string& text : texts) {
    if (MentionsColumn(text, name)) return true;
  }
  return false;
}

// Whether the column `name` of the rows after steps[from] is read by a later
// step or reaches the sink. Spark's optimizer (ColumnPruning) drops a column
// nothing reads from below a deduplication, which then has no event-time
// column and drops no late rows; silt follows the outcome. Unknown steps
// count as reading it.
bool ColumnReadAfter(const std::vector<TransformStep>& steps, size_t from, std::string name) {
  for (size_t step_idx = from + 1; step_idx < steps.size(); ++step_idx) {
    const TransformStep& step = steps[step_idx];
    if (step.kind == "select") {
      for (const std::string& item : step.exprs) {
        if (item.find('*') != std::string::npos || MentionsColumn(item, name)) return true;
      }
      return false;
    }
    if (step.kind == "where" || step.kind == "filter" || step.kind == "join") {
      if (MentionsColumn(step.exprs, name)) return true;
      continue;
    }
    if (step.kind == "withColumn") {
      for (const auto& [target, text] : step.named) {
        if (MentionsColumn(text, name)) return true;
        if (internal::EqualsIgnoreCase(target, name)) return false;
      }
      continue;
    }
    if (step.kind == "withColumnRenamed") {
      for (const auto& [old_name, new_name] : step.named) {
        if (internal::EqualsIgnoreCase(old_name, name)) name = new_name;
      }
      continue;
    }
    if (step.kind == "drop") {
      for (const std::string& dropped : step.exprs) {
        if (internal::EqualsIgnoreCase(dropped, name)) return false;
      }
      continue;
    }
    if (step.kind == "withWatermark") {
      if (internal::EqualsIgnoreCase(step.event_time, name)) return true;
      continue;
    }
    if (step.kind == "groupBy") {
      return MentionsColumn(step.exprs, name) || MentionsColumn(step.aggs, name) ||
             (!step.having.empty() && MentionsColumn(step.having, name));
    }
    if (step.kind == "dropDuplicates" || step.kind == "dropDuplicatesWithinWatermark") {
      if (step.exprs.empty() || MentionsColumn(step.exprs, name)) return true;
      continue;
    }
    return true;
  }
  return true;
}

}  // namespace

Result<std::unique_ptr<Transform>> Transform::Make(const std::vector<TransformStep>& steps,
                                                   SchemaPtr input_schema,
                                                   const expr::EvalOptions& options,
                                                   const StatefulOptions* stateful) {
  auto out = std::unique_ptr<Transform>(new Transform());
  out->input_schema_ = input_schema;
  SchemaPtr schema = input_schema;
  std::vector<TransformStep> expanded;
  for (const TransformStep& step : steps) {
    if (step.kind != "sql") {
      expanded.push_back(step);
      continue;
    }
    SILT_ASSIGN_OR_RETURN(std::vector<TransformStep> parts, SplitSqlStep(step));
    for (TransformStep& part : parts) expanded.push_back(std::move(part));
  }
  // Spark numbers stateful operators from the sink down: the last stateful
  // step is operator 0.
  int num_stateful = 0;
  for (const TransformStep& step : expanded) {
    if (IsStatefulStepKind(step.kind)) ++num_stateful;
  }
  // A where step and the select step right after it (a sql step's WHERE
  // and SELECT) share one session: the select reuses the JSON parses of the
  // kept rows.
  std::unique_ptr<expr::BindSession> where_session;
  for (size_t step_idx = 0; step_idx < expanded.size(); ++step_idx) {
    const TransformStep& step = expanded[step_idx];
    std::unique_ptr<TransformStepImpl> impl;
    std::unique_ptr<expr::BindSession> session = std::move(where_session);
    if (IsStatefulStepKind(step.kind)) {
      const std::string path = step.key_path + "." + step.kind;
      if (stateful == nullptr || !stateful->make_store) {
        return Status::InvalidArgument(path, ": a stateful step needs a streaming query");
      }
      const OutputMode mode = stateful->output_mode;
      StatefulStep record;
      record.operator_id = num_stateful - 1 - static_cast<int>(out->stages_.size());
      record.step = step;
      record.input_schema = schema;
      record.watermark = EventTimeColumn(*schema);
      record.output_mode = mode;
      if (step.kind == "dropDuplicates" && record.watermark && !step.exprs.empty() &&
          !MentionsColumn(step.exprs, record.watermark->name) &&
          !ColumnReadAfter(expanded, step_idx, record.watermark->name)) {
        // Nothing after the step reads the event time: Spark prunes it.
        record.watermark.reset();
      }
      // Spark's checkStreamingQueryGlobalWatermarkLimit: in complete and
      // update mode an aggregation emits groups whatever their event time,
      // so a later stateful step could drop them as late.
      if (stateful->check_correctness && mode != OutputMode::kAppend &&
          CountsForCorrectnessCheck(record)) {
        for (const Stage& before : out->stages_) {
          if (before.record.step.kind != "groupBy") continue;
          return Status::InvalidArgument(
              path, ": ", kCorrectnessMessage, " (", before.record.step.key_path, " aggregates in ",
              OutputModeName(mode), " output mode before this stateful step)");
        }
      }
      SILT_ASSIGN_OR_RETURN(std::unique_ptr<state::StateStore> store,
                            stateful->make_store(record.operator_id));
      Stage stage;
      stage.watermarked = !out->watermark_steps_.empty();
      SILT_ASSIGN_OR_RETURN(stage.op, MakeStatefulOperator(record, options, std::move(store)));
      schema = stage.op->output_schema();
      stage.record = std::move(record);
      out->stages_.push_back(std::move(stage));
      continue;
    }
    if (step.kind == "select") {
      SILT_ASSIGN_OR_RETURN(impl, SelectStep::Make(step, schema, options, session.get()));
    } else if (step.kind == "where" || step.kind == "filter") {
      if (step.exprs.size() != 1) {
        return Status::InvalidArgument(step.key_path, ".where: expected one predicate");
      }
      where_session = std::make_unique<expr::BindSession>();
      SILT_ASSIGN_OR_RETURN(impl, WhereStep::Make(step, schema, options, where_session.get()));
    } else if (step.kind == "withColumn") {
      SILT_ASSIGN_OR_RETURN(impl, WithColumnStep::Make(step, schema, options));
    } else if (step.kind == "withColumnRenamed") {
      SILT_ASSIGN_OR_RETURN(impl, ProjectStep::MakeRename(step, schema));
    } else if (step.kind == "drop") {
      SILT_ASSIGN_OR_RETURN(impl, ProjectStep::MakeDrop(step, schema));
    } else if (step.kind == "join") {
      SILT_ASSIGN_OR_RETURN(impl, MakeStaticJoinStep(step, schema, options));
    } else if (step.kind == "withWatermark") {
      if (stateful != nullptr && stateful->allow_multiple && !out->watermark_steps_.empty()) {
        // Spark 3.5's WatermarkPropagator, word for word: the watermark
        // reaches every step after a withWatermark (through stateful ones
        // too), and a second withWatermark would redefine it.
        return Status::InvalidArgument(
            step.key_path,
            ".withWatermark: Redefining watermark is disallowed. You can set the config "
            "'spark.sql.streaming.statefulOperator.allowMultiple' to 'false' to restore the "
            "previous behavior. Note that multiple stateful operators will be disallowed. (one "
            "withWatermark step per job)");
      }
      SILT_ASSIGN_OR_RETURN(std::unique_ptr<WatermarkStep> watermark_step,
                            WatermarkStep::Make(step, schema));
      out->watermark_steps_.push_back(watermark_step.get());
      out->operator_watermarks_.emplace_back();
      impl = std::move(watermark_step);
    } else {
      return Status::InvalidArgument(step.key_path, ": unknown transform step '", step.kind, "'");
    }
    schema = impl->output_schema();
    (out->stages_.empty() ? out->steps_ : out->stages_.back().post_steps)
        .push_back(std::move(impl));
  }
  bool aggregates = false;
  for (const Stage& stage : out->stages_)
    aggregates = aggregates || stage.record.step.kind == "groupBy";
  if (stateful != nullptr && stateful->output_mode == OutputMode::kComplete && !aggregates) {
    return Status::InvalidArgument(
        "sink.outputMode: Complete output mode not supported when there are no streaming "
        "aggregations on streaming DataFrames/Datasets (add a groupBy step, or use append)");
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
  for (const std::unique_ptr<TransformStepImpl>& step : steps_) step->StartBatch();
  for (Stage& stage : stages_) {
    for (const std::unique_ptr<TransformStepImpl>& step : stage.post_steps) step->StartBatch();
  }
}

namespace {

Result<RecordBatchPtr> RunSteps(const std::vector<std::unique_ptr<TransformStepImpl>>& steps,
                                RecordBatchPtr current, const expr::EvalContext& ctx) {
  for (const std::unique_ptr<TransformStepImpl>& step : steps) {
    SILT_ASSIGN_OR_RETURN(current, step->Apply(current, ctx));
  }
  return current;
}

}  // namespace

Result<RecordBatchPtr> Transform::ProcessStateless(const RecordBatchPtr& batch,
                                                   const expr::EvalContext& ctx) {
  return RunSteps(steps_, batch, ctx);
}

void Transform::ReportStepErrors(int64_t input_rows, expr::RowErrors* dead) {
  // Mark each failing input row once (the first error wins) and report it
  // under its source row.
  bad_rows_.assign(static_cast<size_t>(input_rows), 0);
  for (size_t err_idx = 0; err_idx < step_errors_.size(); ++err_idx) {
    const int64_t row = step_errors_.rows[err_idx];
    if (row < 0 || row >= input_rows || bad_rows_[static_cast<size_t>(row)] != 0) continue;
    bad_rows_[static_cast<size_t>(row)] = 1;
    const int64_t source_row = lineage_identity_ ? row : lineage_[static_cast<size_t>(row)];
    dead->Add(source_row, step_errors_.kinds[err_idx], std::move(step_errors_.messages[err_idx]));
  }
}

void Transform::ComposeLineage(const std::vector<int64_t>& kept) {
  std::vector<int64_t> lineage(kept.size());
  for (size_t out_row = 0; out_row < kept.size(); ++out_row) {
    const int64_t in_row = kept[out_row];
    lineage[out_row] = lineage_identity_ ? in_row : lineage_[static_cast<size_t>(in_row)];
  }
  lineage_ = std::move(lineage);
  lineage_identity_ = false;
}

Result<RecordBatchPtr> Transform::RemoveErrorRows(const RecordBatchPtr& output, int64_t input_rows,
                                                  const std::vector<int64_t>* kept,
                                                  expr::RowErrors* dead) {
  ReportStepErrors(input_rows, dead);
  // The output rows that remain (output row -> input row by `kept`, else
  // one to one), and their source rows.
  const int64_t output_rows = output->num_rows;
  std::vector<int64_t> keep;
  std::vector<int64_t> remaining_inputs;
  keep.reserve(static_cast<size_t>(output_rows));
  remaining_inputs.reserve(static_cast<size_t>(output_rows));
  for (int64_t out_row = 0; out_row < output_rows; ++out_row) {
    const int64_t in_row = kept != nullptr ? (*kept)[static_cast<size_t>(out_row)] : out_row;
    if (bad_rows_[static_cast<size_t>(in_row)] != 0) continue;
    keep.push_back(out_row);
    remaining_inputs.push_back(in_row);
  }
  ComposeLineage(remaining_inputs);
  if (static_cast<int64_t>(keep.size()) == output_rows) return output;
  return columnar::TakeBatch(*output, keep);
}

Result<RecordBatchPtr> Transform::RunTraced(
    const std::vector<std::unique_ptr<TransformStepImpl>>& steps, RecordBatchPtr current,
    const expr::EvalContext& ctx) {
  expr::EvalContext step_ctx = ctx;
  step_ctx.row_errors = &step_errors_;
  for (const std::unique_ptr<TransformStepImpl>& step : steps) {
    step_errors_.Clear();
    const int64_t input_rows = current->num_rows;
    SILT_ASSIGN_OR_RETURN(RecordBatchPtr output, step->Apply(current, step_ctx));
    const TransformStepImpl::RowMapping mapping = step->row_mapping();
    const bool traceable = lineage_known_ && mapping != TransformStepImpl::RowMapping::kOther;
    if (!step_errors_.empty()) {
      if (!traceable) {
        return Status::InvalidArgument(
            step->key_path(), ": ", step_errors_.messages.front(),
            " (a bad row after an explode, window or join step cannot be traced to its source "
            "record for the dead-letter table; move the step that finds it earlier)");
      }
      const std::vector<int64_t>* kept =
          mapping == TransformStepImpl::RowMapping::kSubset ? step->last_kept_rows() : nullptr;
      SILT_ASSIGN_OR_RETURN(output, RemoveErrorRows(output, input_rows, kept, ctx.row_errors));
    } else if (mapping == TransformStepImpl::RowMapping::kOther) {
      lineage_known_ = false;
    } else if (mapping == TransformStepImpl::RowMapping::kSubset && lineage_known_) {
      if (const std::vector<int64_t>* kept = step->last_kept_rows()) ComposeLineage(*kept);
    }
    current = std::move(output);
  }
  return current;
}

std::optional<const std::vector<int64_t>*> Transform::last_lineage() const {
  if (!lineage_known_) return std::nullopt;
  return lineage_identity_ ? nullptr : &lineage_;
}

Result<RecordBatchPtr> Transform::Process(const RecordBatchPtr& batch,
                                          const expr::EvalContext& ctx) {
  if (ctx.row_errors == nullptr) {
    SILT_ASSIGN_OR_RETURN(RecordBatchPtr current, RunSteps(steps_, batch, ctx));
    return RunStages(0, std::move(current), ctx);
  }
  lineage_.clear();
  lineage_identity_ = true;
  lineage_known_ = true;
  SILT_ASSIGN_OR_RETURN(RecordBatchPtr current, RunTraced(steps_, batch, ctx));
  for (Stage& stage : stages_) {
    if (current == nullptr || current->num_rows == 0) return RecordBatchPtr();
    // The stateful step reports the rows it drops as late (by its input
    // row), which are traced as a filter's.
    step_errors_.Clear();
    expr::EvalContext step_ctx = ctx;
    step_ctx.row_errors = &step_errors_;
    const int64_t input_rows = current->num_rows;
    SILT_ASSIGN_OR_RETURN(RecordBatchPtr emitted, stage.op->Process(current, step_ctx));
    if (!step_errors_.empty()) {
      if (!lineage_known_) {
        return Status::InvalidArgument(
            stage.record.step.key_path, ": ", step_errors_.messages.front(),
            " (a late row after an explode, window, join or aggregation cannot be traced to its "
            "source record for the dead-letter table)");
      }
      // The late rows are not in what the step passes on.
      ReportStepErrors(input_rows, ctx.row_errors);
    }
    if (!stage.op->passes_rows()) {
      lineage_known_ = false;
    } else if (lineage_known_) {
      if (const std::vector<int64_t>* kept = stage.op->last_kept_rows()) ComposeLineage(*kept);
    }
    if (emitted == nullptr || emitted->num_rows == 0) return RecordBatchPtr();
    SILT_ASSIGN_OR_RETURN(current, RunTraced(stage.post_steps, std::move(emitted), ctx));
  }
  return current;
}

Result<RecordBatchPtr> Transform::RunStages(size_t first, RecordBatchPtr current,
                                            const expr::EvalContext& ctx) {
  for (size_t stage_idx = first; stage_idx < stages_.size(); ++stage_idx) {
    if (current == nullptr || current->num_rows == 0) return RecordBatchPtr();
    Stage& stage = stages_[stage_idx];
    SILT_ASSIGN_OR_RETURN(current, stage.op->Process(current, ctx));
    if (current == nullptr || current->num_rows == 0) return RecordBatchPtr();
    SILT_ASSIGN_OR_RETURN(current, RunSteps(stage.post_steps, std::move(current), ctx));
  }
  return current;
}

const StatefulStep& Transform::stateful_step(int index) const {
  return stages_[static_cast<size_t>(index)].record;
}

const StatefulOperator& Transform::stateful_operator(int index) const {
  return *stages_[static_cast<size_t>(index)].op;
}

Status Transform::StartStatefulBatch(const StatefulBatch& batch) {
  for (Stage& stage : stages_) {
    StatefulBatch own = batch;
    own.has_watermark = batch.has_watermark && stage.watermarked;
    Status started = stage.op->StartBatch(own);
    if (!started.ok()) return started.WithContextParts("operator ", stage.record.operator_id);
  }
  return Status::OK();
}

Result<RecordBatchPtr> Transform::FinishBatch(const expr::EvalContext& ctx) {
  // What a stateful step emits at the end of the batch is not a source
  // record's any more: errors in the steps after it fail the batch, and the
  // stateful steps after it count (not report) the rows they drop as late.
  expr::EvalContext finish_ctx = ctx;
  finish_ctx.row_errors = nullptr;
  finish_ctx.input_file_name.clear();
  std::vector<RecordBatchPtr> outputs;
  for (size_t stage_idx = 0; stage_idx < stages_.size(); ++stage_idx) {
    Stage& stage = stages_[stage_idx];
    Result<RecordBatchPtr> emitted = stage.op->FinishBatch();
    if (!emitted.ok()) {
      return emitted.status().WithContextParts(stage.record.step.key_path, ".",
                                               stage.record.step.kind);
    }
    RecordBatchPtr rows = std::move(*emitted);
    if (rows == nullptr || rows->num_rows == 0) continue;
    SILT_ASSIGN_OR_RETURN(rows, RunSteps(stage.post_steps, std::move(rows), finish_ctx));
    SILT_ASSIGN_OR_RETURN(rows, RunStages(stage_idx + 1, std::move(rows), finish_ctx));
    if (rows != nullptr && rows->num_rows > 0) outputs.push_back(std::move(rows));
  }
  if (outputs.empty()) return RecordBatchPtr();
  if (outputs.size() == 1) return outputs.front();
  return columnar::ConcatBatches(outputs);
}

Status Transform::CommitState() {
  // Every operator's state version N+1, before the sink commits batch N: a
  // crash before commits/N re-runs N from version N of each.
  for (Stage& stage : stages_) {
    Status committed = stage.op->Commit();
    if (!committed.ok()) return committed.WithContextParts("operator ", stage.record.operator_id);
  }
  return Status::OK();
}

void Transform::AbortState() {
  for (Stage& stage : stages_) stage.op->Abort();
}

std::vector<StateOperatorProgress> Transform::state_progress() const {
  // Spark collects the operators from the sink down (operator 0 first).
  std::vector<StateOperatorProgress> out;
  for (auto stage = stages_.rbegin(); stage != stages_.rend(); ++stage) {
    out.push_back(stage->op->progress());
  }
  return out;
}

bool Transform::WantsNoDataBatch(int64_t next_watermark_ms) const {
  for (const Stage& stage : stages_) {
    if (stage.op->WantsNoDataBatch(next_watermark_ms)) return true;
  }
  return false;
}

std::optional<EventTimeStats> Transform::batch_event_time_stats() const {
  std::optional<EventTimeStats> merged;
  for (const WatermarkStep* step : watermark_steps_) {
    const EventTimeStats& stats = step->stats();
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

void Transform::MergeBatchStats(const Transform& other) {
  for (size_t i = 0; i < watermark_steps_.size() && i < other.watermark_steps_.size(); ++i) {
    // The steps are owned by steps_; watermark_steps_ only indexes them.
    auto* step = const_cast<WatermarkStep*>(watermark_steps_[i]);
    step->Merge(other.watermark_steps_[i]->stats());
  }
}

int64_t Transform::AdvanceWatermark(int64_t current_watermark_ms, bool max_policy) {
  if (watermark_steps_.empty()) return current_watermark_ms;
  for (size_t i = 0; i < watermark_steps_.size(); ++i) {
    const WatermarkStep* step = watermark_steps_[i];
    std::optional<int64_t>& operator_watermark = operator_watermarks_[i];
    if (step->stats().count > 0) {
      int64_t candidate = step->stats().max_ms - step->delay_ms();
      if (!operator_watermark || candidate > *operator_watermark) operator_watermark = candidate;
    } else if (!operator_watermark) {
      // Spark counts a watermark that has seen no data yet as 0.
      operator_watermark = 0;
    }
  }
  int64_t chosen =
      max_policy ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
  for (const std::optional<int64_t>& w : operator_watermarks_) {
    chosen = max_policy ? std::max(chosen, *w) : std::min(chosen, *w);
  }
  return std::max(current_watermark_ms, chosen);
}

}  // namespace silt::stream
