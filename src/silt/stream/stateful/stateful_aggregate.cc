#include "silt/stream/stateful/stateful_aggregate.h"

#include <chrono>
#include <limits>
#include <string_view>
#include <vector>

#include "silt/base/strings.h"
#include "silt/exec/aggregate_rewriter.h"
#include "silt/exec/streaming_aggregate.h"
#include "silt/expr/expression.h"
#include "silt/expr/parse/ast.h"
#include "silt/expr/parse/parser.h"
#include "silt/stream/stateful/aggregate_items.h"
#include "silt/stream/stateful/session_window_aggregate.h"

namespace silt::stream {

namespace {

using columnar::ColumnPtr;
using columnar::RecordBatchPtr;
using columnar::SchemaPtr;
using expr::NodeKind;

// The key the watermark applies to: the first key whose result carries the
// event-time mark (event_time.h), as Spark's watermark predicate takes the
// first marked attribute of the aggregation's keys; for a window() key the
// window's end. -1 when no key carries the event time.
struct EventTimeKey {
  int index = -1;
  bool is_window = false;
};

EventTimeKey FindEventTimeKey(const std::vector<expr::NodePtr>& keys,
                              const columnar::Schema& input) {
  EventTimeKey out;
  for (size_t k = 0; k < keys.size(); ++k) {
    if (!ExpressionWatermarkDelay(*keys[k], input)) continue;
    const expr::Node& key = Unalias(*keys[k]);
    out.index = static_cast<int>(k);
    out.is_window = key.kind() == NodeKind::kCall &&
                    EqualsIgnoreCase(static_cast<const expr::CallNode&>(key).name(), "window");
    return out;
  }
  return out;
}

// Spark names an unaliased window() key `window` (TimeWindowing's alias).
std::string KeyName(const expr::Node& key) {
  if (key.kind() == NodeKind::kCall &&
      EqualsIgnoreCase(static_cast<const expr::CallNode&>(key).name(), "window")) {
    return "window";
  }
  return key.OutputName();
}

expr::NodePtr Unaliased(const expr::NodePtr& node) {
  if (node->kind() == NodeKind::kAlias) return static_cast<const expr::AliasNode&>(*node).child();
  return node;
}

// An output item's name: its alias, `window` for a window() key selected
// as is, else Spark's generated name.
std::string ItemName(const expr::Node& item, const std::vector<expr::NodePtr>& keys) {
  if (item.kind() == NodeKind::kAlias) return item.OutputName();
  const std::string text = AsciiLower(item.ToString());
  for (const expr::NodePtr& key : keys) {
    if (AsciiLower(key->ToString()) == text) return KeyName(*key);
  }
  return item.OutputName();
}

// The event-time mark of an output item that is a group key as such (the
// key's text, or its name, e.g. `window`): Spark's grouping attribute keeps
// its metadata in the aggregation's output.
std::string ItemKeyMetadata(const expr::Node& item, const std::vector<expr::NodePtr>& keys,
                            const columnar::Schema& input) {
  const expr::Node& inner = Unalias(item);
  const std::string text = AsciiLower(inner.ToString());
  for (const expr::NodePtr& key : keys) {
    if (AsciiLower(Unalias(*key).ToString()) == text || RefersTo(inner, KeyName(*key))) {
      std::optional<int64_t> delay = ExpressionWatermarkDelay(*key, input);
      return delay ? WithWatermarkDelay("{}", delay) : std::string("{}");
    }
  }
  return "{}";
}

class StatefulAggregate final : public StoreBackedOperator {
 public:
  StatefulAggregate() = default;

  Status Init(const TransformStep& step, const SchemaPtr& input, const expr::EvalOptions& options,
              OutputMode mode, std::unique_ptr<state::StateStore> store) {
    const std::string path = step.key_path + ".groupBy";
    mode_ = mode;
    store_ = std::move(store);
    std::vector<expr::NodePtr> keys;
    for (size_t k = 0; k < step.exprs.size(); ++k) {
      const std::string key_path = path + ".keys[" + std::to_string(k) + "]";
      Result<expr::NodePtr> node = expr::ParseNode(step.exprs[k]);
      if (!node.ok()) return Status::InvalidArgument(key_path, ": ", node.status().message());
      keys.push_back(std::move(*node));
    }
    // The items computed from the groups: the job file's agg list (the
    // keys come first in the output, as groupBy().agg() gives them) or a
    // sql step's select list, each rewritten over the aggregation's columns
    // (__key<k>, __agg<a>) by exec::AggregateRewriter.
    exec::AggregateRewriter rewriter;
    for (const expr::NodePtr& key : keys) rewriter.AddKey(Unalias(*key), KeyName(*key));
    std::vector<expr::NodePtr> outputs;
    std::vector<std::string> output_metadata;
    if (!step.sql_select) {
      for (size_t k = 0; k < keys.size(); ++k) {
        outputs.push_back(std::make_shared<expr::AliasNode>(
            std::make_shared<expr::ColumnRefNode>(
                std::vector<std::string>{exec::AggregateRewriter::KeyColumn(k)}, 0),
            KeyName(*keys[k]), 0));
        output_metadata.push_back(ItemKeyMetadata(*keys[k], keys, *input));
      }
    }
    for (size_t a = 0; a < step.aggs.size(); ++a) {
      const std::string item_path =
          path + (step.sql_select ? "(SELECT)[" : ".agg[") + std::to_string(a) + "]";
      Result<expr::NodePtr> node = expr::ParseNode(step.aggs[a]);
      if (!node.ok()) return Status::InvalidArgument(item_path, ": ", node.status().message());
      if (!step.sql_select && !exec::ContainsAggregate(**node)) {
        return Status::InvalidArgument(item_path, ": '", step.aggs[a],
                                       "' has no aggregate function (write e.g. \"count(*) AS "
                                       "n\"; grouping keys go under keys)");
      }
      Result<expr::NodePtr> rewritten = rewriter.Rewrite(Unaliased(*node));
      if (!rewritten.ok()) {
        return Status::InvalidArgument(item_path, ": ", rewritten.status().message());
      }
      outputs.push_back(std::make_shared<expr::AliasNode>(*rewritten, ItemName(**node, keys), 0));
      output_metadata.push_back(ItemKeyMetadata(**node, keys, *input));
    }
    expr::NodePtr having;
    if (!step.having.empty()) {
      Result<expr::NodePtr> node = expr::ParseNode(step.having);
      if (node.ok()) node = rewriter.Rewrite(*node);
      if (!node.ok()) return Status::InvalidArgument(path, "(HAVING): ", node.status().message());
      having = std::move(*node);
    }

    event_time_ = FindEventTimeKey(keys, *input);
    if (mode_ == OutputMode::kAppend && event_time_.index < 0) {
      return Status::InvalidArgument(
          path,
          ": Append output mode not supported when there are streaming aggregations on streaming "
          "DataFrames/DataSets without watermark (group by window(<event time>, ...) or by the "
          "event-time column of a withWatermark step, or use outputMode complete)");
    }

    // window() in a key expands each row into its windows before the keys
    // and the aggregate arguments are evaluated.
    std::vector<const expr::Expression*> projected;
    for (const expr::NodePtr& key : keys) projected.push_back(key.get());
    for (const exec::AggregateRewriter::Call& call : rewriter.calls()) {
      if (call.arg != nullptr) projected.push_back(call.arg.get());
    }
    SILT_ASSIGN_OR_RETURN(windows_, expr::WindowExpansion::Make(projected, input, options));
    const SchemaPtr& bind_schema = windows_ ? windows_->schema() : input;
    const expr::EvalOptions& bind_options = windows_ ? windows_->options() : options;

    std::vector<columnar::TypePtr> key_types;
    for (size_t k = 0; k < keys.size(); ++k) {
      Result<expr::BoundExpressionPtr> bound = expr::Bind(*keys[k], bind_schema, bind_options);
      if (!bound.ok()) {
        return Status::InvalidArgument(path, ".keys[", k, "]: ", bound.status().message());
      }
      key_types.push_back((*bound)->type());
      key_exprs_.push_back(std::move(*bound));
      names_.push_back(exec::AggregateRewriter::KeyColumn(k));
    }
    // A struct event-time key (a window, also one an earlier step made and
    // this one groups by as a column) is timed by its end.
    if (event_time_.index >= 0) {
      event_time_.is_window =
          key_types[static_cast<size_t>(event_time_.index)]->id() == columnar::TypeId::kStruct;
    }
    std::vector<exec::AggregateSpec> specs;
    for (size_t a = 0; a < rewriter.calls().size(); ++a) {
      const exec::AggregateRewriter::Call& call = rewriter.calls()[a];
      exec::AggregateSpec spec = call.spec;
      expr::BoundExpressionPtr arg;
      if (call.arg != nullptr) {
        Result<expr::BoundExpressionPtr> bound = expr::Bind(*call.arg, bind_schema, bind_options);
        if (!bound.ok()) {
          return Status::InvalidArgument(path, ": in '", call.text,
                                         "': ", bound.status().message());
        }
        arg = std::move(*bound);
        spec.arg_type = arg->type();
      }
      arg_exprs_.push_back(std::move(arg));
      specs.push_back(spec);
      names_.push_back(exec::AggregateRewriter::AggColumn(a));
    }
    Result<std::unique_ptr<exec::StreamingAggregator>> agg =
        exec::StreamingAggregator::Make(key_types, specs);
    if (!agg.ok()) return Status::InvalidArgument(path, ": ", agg.status().message());
    agg_ = std::move(*agg);

    // The output: HAVING, then the items, over the aggregation's columns.
    SILT_ASSIGN_OR_RETURN(RecordBatchPtr grouped, agg_->Finalize({}, {}, names_));
    if (having != nullptr) {
      Result<expr::BoundExpressionPtr> bound = expr::Bind(*having, grouped->schema, options);
      if (!bound.ok()) {
        return Status::InvalidArgument(path, "(HAVING): ", bound.status().message());
      }
      if ((*bound)->type()->id() != columnar::TypeId::kBoolean) {
        return Status::InvalidArgument(path, "(HAVING): '", step.having,
                                       "' is not a boolean predicate");
      }
      having_ = std::move(*bound);
    }
    std::vector<columnar::Field> fields;
    for (size_t i = 0; i < outputs.size(); ++i) {
      Result<expr::BoundExpressionPtr> bound = expr::Bind(*outputs[i], grouped->schema, options);
      if (!bound.ok()) return Status::InvalidArgument(path, ": ", bound.status().message());
      fields.push_back(
          columnar::Field{outputs[i]->OutputName(), (*bound)->type(), true, output_metadata[i]});
      outputs_.push_back(std::move(*bound));
    }
    schema_ = columnar::DataType::Struct(std::move(fields));
    progress_.operator_name = "stateStoreSave";
    return Status::OK();
  }

  const SchemaPtr& output_schema() const override { return schema_; }

  Status StartBatch(const StatefulBatch& batch) override {
    agg_->Reset();
    return LoadForBatch(batch);
  }

  Result<RecordBatchPtr> Process(const RecordBatchPtr& chunk,
                                 const expr::EvalContext& ctx) override {
    const auto start = std::chrono::steady_clock::now();
    RecordBatchPtr input = chunk;
    if (windows_) {
      SILT_ASSIGN_OR_RETURN(input, windows_->Expand(*chunk, ctx));
    }
    if (input->num_rows > 0) {
      std::vector<ColumnPtr> keys;
      std::vector<ColumnPtr> args;
      for (const expr::BoundExpressionPtr& e : key_exprs_) {
        SILT_ASSIGN_OR_RETURN(ColumnPtr column, e->Evaluate(*input, ctx));
        keys.push_back(std::move(column));
      }
      for (const expr::BoundExpressionPtr& e : arg_exprs_) {
        ColumnPtr column;
        if (e != nullptr) {
          SILT_ASSIGN_OR_RETURN(column, e->Evaluate(*input, ctx));
        }
        args.push_back(std::move(column));
      }
      if (ctx.row_errors != nullptr) ReportLateRows(*chunk, keys, ctx.row_errors);
      SILT_RETURN_NOT_OK(agg_->Consume(keys, args, input->num_rows));
    }
    updates_time_ += std::chrono::steady_clock::now() - start;
    return RecordBatchPtr();
  }

  Result<RecordBatchPtr> FinishBatch() override {
    auto start = std::chrono::steady_clock::now();
    if (key_exprs_.empty()) agg_->EnsureGlobalGroup();
    const int64_t groups = agg_->num_groups();
    std::vector<int64_t> event_micros;
    std::vector<bool> has_event_time;
    if (event_time_.index >= 0 && groups > 0) {
      SILT_RETURN_NOT_OK(GroupEventTimes(groups, &event_micros, &has_event_time));
    }
    const bool drops_late = mode_ != OutputMode::kComplete && event_time_.index >= 0;
    const int64_t late_micros = batch_.late_watermark_ms * 1000;
    std::vector<std::string> emit_keys;
    std::vector<std::string> emit_states;
    std::string store_key;
    std::string state;
    for (int64_t g = 0; g < groups; ++g) {
      const std::string_view key = agg_->group_key(g);
      if (drops_late && has_event_time[static_cast<size_t>(g)] &&
          event_micros[static_cast<size_t>(g)] <= late_micros) {
        ++current_.num_rows_dropped_by_watermark;
        continue;
      }
      store_key.clear();
      if (event_time_.index >= 0) {
        // A NULL event time never expires (Spark's predicate is NULL there).
        store_key = EventTimeKeyPrefix(has_event_time[static_cast<size_t>(g)]
                                           ? event_micros[static_cast<size_t>(g)]
                                           : std::numeric_limits<int64_t>::max());
      }
      store_key.append(key);
      SILT_ASSIGN_OR_RETURN(std::optional<std::string> stored, store_->Get(store_key));
      if (stored) {
        Status merged = agg_->MergeStored(g, *stored);
        if (!merged.ok()) return merged.WithContext("the stored state of a group");
      }
      state.clear();
      agg_->SerializeState(g, &state);
      SILT_RETURN_NOT_OK(store_->Put(store_key, state));
      ++current_.num_rows_updated;
      if (mode_ == OutputMode::kUpdate) {
        emit_keys.emplace_back(key);
        emit_states.push_back(state);
      }
    }
    agg_->Reset();
    updates_time_ += std::chrono::steady_clock::now() - start;
    current_.all_updates_time_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(updates_time_).count();

    start = std::chrono::steady_clock::now();
    if (mode_ == OutputMode::kComplete) {
      SILT_RETURN_NOT_OK(
          store_->Scan("", "", [&](std::string_view k, std::string_view v) -> Result<bool> {
            emit_keys.emplace_back(StripPrefix(k));
            emit_states.emplace_back(v);
            return true;
          }));
    } else if (event_time_.index >= 0) {
      SILT_RETURN_NOT_OK(Evict(mode_ == OutputMode::kAppend ? &emit_keys : nullptr,
                               mode_ == OutputMode::kAppend ? &emit_states : nullptr));
    }
    current_.all_removals_time_ms = ElapsedMs(start);
    if (emit_keys.empty()) return RecordBatchPtr();
    std::vector<std::string_view> key_views(emit_keys.begin(), emit_keys.end());
    std::vector<std::string_view> state_views(emit_states.begin(), emit_states.end());
    Result<RecordBatchPtr> grouped = agg_->Finalize(key_views, state_views, names_);
    if (!grouped.ok()) return grouped.status().WithContext("the stored state of the aggregation");
    return Project(*grouped, /*filter=*/true);
  }

  void Abort() override {
    agg_->Reset();
    store_->Abort();
  }

  Result<RecordBatchPtr> DecodeState(const std::vector<std::string_view>& keys,
                                     const std::vector<std::string_view>& values) const override {
    std::vector<std::string_view> stripped;
    stripped.reserve(keys.size());
    for (std::string_view key : keys) {
      if (event_time_.index >= 0 && key.size() < kEventTimeKeyPrefixBytes) {
        return Status::Corruption("a state key of ", static_cast<int64_t>(key.size()),
                                  " bytes is shorter than its event-time prefix");
      }
      stripped.push_back(StripPrefix(key));
    }
    SILT_ASSIGN_OR_RETURN(RecordBatchPtr grouped, agg_->Finalize(stripped, values, names_));
    return Project(grouped, /*filter=*/false);
  }

  // Spark's StateStoreSaveExec asks for the batch in append and update
  // mode whenever the watermark moves, event-time key or not.
  bool WantsNoDataBatch(int64_t next_watermark_ms) const override {
    return ran_batch_ && mode_ != OutputMode::kComplete && batch_.has_watermark &&
           next_watermark_ms > batch_.eviction_watermark_ms;
  }

 private:
  // HAVING (when `filter`), then the output items, over finalized groups.
  Result<RecordBatchPtr> Project(RecordBatchPtr grouped, bool filter) const {
    expr::EvalContext ctx;
    if (filter && having_ != nullptr && grouped->num_rows > 0) {
      SILT_ASSIGN_OR_RETURN(ColumnPtr mask, having_->Evaluate(*grouped, ctx));
      std::vector<int64_t> keep;
      for (int64_t i = 0; i < grouped->num_rows; ++i) {
        if (mask->IsValid(i) && mask->BoolValue(i)) keep.push_back(i);
      }
      if (static_cast<int64_t>(keep.size()) != grouped->num_rows) {
        grouped = columnar::TakeBatch(*grouped, keep);
      }
    }
    auto out = std::make_shared<columnar::RecordBatch>();
    out->schema = schema_;
    out->num_rows = grouped->num_rows;
    for (const expr::BoundExpressionPtr& item : outputs_) {
      SILT_ASSIGN_OR_RETURN(ColumnPtr column, item->Evaluate(*grouped, ctx));
      out->columns.push_back(std::move(column));
    }
    return RecordBatchPtr(std::move(out));
  }

  std::string_view StripPrefix(std::string_view key) const {
    if (event_time_.index >= 0 && key.size() >= kEventTimeKeyPrefixBytes) {
      key.remove_prefix(kEventTimeKeyPrefixBytes);
    }
    return key;
  }

  // Each group's event time: the window's end, or the key itself.
  // Dead-letter mode: the chunk rows whose every group is late (FinishBatch
  // drops those groups), reported by their row in the chunk. With window()
  // a row expands to one row per window; a sliding-window row that is late
  // for some windows only still counts in the others and is not reported.
  void ReportLateRows(const columnar::RecordBatch& chunk, const std::vector<ColumnPtr>& keys,
                      expr::RowErrors* errors) const {
    if (mode_ == OutputMode::kComplete || event_time_.index < 0 || !batch_.has_watermark) return;
    const columnar::Column& key = *keys[static_cast<size_t>(event_time_.index)];
    const columnar::Column* times = event_time_.is_window ? key.children[1].get() : &key;
    const int64_t late_micros = batch_.late_watermark_ms * 1000;
    const std::vector<int64_t>* origin =
        windows_ != nullptr && !windows_->last_rows().empty() ? &windows_->last_rows() : nullptr;
    // Per chunk row: 0 unseen, 1 all its rows late so far, 2 some row kept.
    std::vector<uint8_t> state(static_cast<size_t>(chunk.num_rows), 0);
    std::vector<int64_t> event(static_cast<size_t>(chunk.num_rows), 0);
    for (int64_t row = 0; row < key.length; ++row) {
      const int64_t source = origin != nullptr ? (*origin)[static_cast<size_t>(row)] : row;
      uint8_t& s = state[static_cast<size_t>(source)];
      const bool late =
          key.IsValid(row) && times->IsValid(row) && times->Value<int64_t>(row) <= late_micros;
      if (!late) {
        s = 2;
      } else if (s == 0) {
        s = 1;
        event[static_cast<size_t>(source)] = times->Value<int64_t>(row);
      }
    }
    for (int64_t row = 0; row < chunk.num_rows; ++row) {
      if (state[static_cast<size_t>(row)] == 1) {
        ReportLateRow(errors, row, event[static_cast<size_t>(row)], late_micros);
      }
    }
  }

  Status GroupEventTimes(int64_t groups, std::vector<int64_t>* micros,
                         std::vector<bool>* valid) const {
    std::vector<std::string_view> encoded;
    encoded.reserve(static_cast<size_t>(groups));
    for (int64_t g = 0; g < groups; ++g) encoded.push_back(agg_->group_key(g));
    SILT_ASSIGN_OR_RETURN(std::vector<ColumnPtr> columns, agg_->key_codec().Decode(encoded));
    const columnar::Column& key = *columns[static_cast<size_t>(event_time_.index)];
    const columnar::Column* times = &key;
    if (event_time_.is_window) times = key.children[1].get();
    micros->resize(static_cast<size_t>(groups));
    valid->resize(static_cast<size_t>(groups));
    for (int64_t g = 0; g < groups; ++g) {
      const bool ok = key.IsValid(g) && times->IsValid(g);
      (*valid)[static_cast<size_t>(g)] = ok;
      (*micros)[static_cast<size_t>(g)] = ok ? times->Value<int64_t>(g) : 0;
    }
    return Status::OK();
  }

  // Removes the groups whose event time is <= the eviction watermark,
  // collecting them when asked (append mode emits them).
  Status Evict(std::vector<std::string>* keys, std::vector<std::string>* states) {
    const int64_t limit_micros = batch_.eviction_watermark_ms * 1000;
    if (limit_micros == std::numeric_limits<int64_t>::max()) return Status::OK();
    std::vector<std::string> evicted;
    SILT_RETURN_NOT_OK(store_->Scan("", EventTimeKeyPrefix(limit_micros + 1),
                                    [&](std::string_view k, std::string_view v) -> Result<bool> {
                                      evicted.emplace_back(k);
                                      if (keys != nullptr) {
                                        keys->emplace_back(StripPrefix(k));
                                        states->emplace_back(v);
                                      }
                                      return true;
                                    }));
    for (const std::string& k : evicted) SILT_RETURN_NOT_OK(store_->Delete(k));
    current_.num_rows_removed += static_cast<int64_t>(evicted.size());
    return Status::OK();
  }

  OutputMode mode_ = OutputMode::kAppend;
  std::unique_ptr<expr::WindowExpansion> windows_;
  std::vector<expr::BoundExpressionPtr> key_exprs_;
  std::vector<expr::BoundExpressionPtr> arg_exprs_;  // null for count(*)
  std::vector<std::string> names_;   // the aggregation's columns: __key<k>, __agg<a>
  expr::BoundExpressionPtr having_;  // null without HAVING
  std::vector<expr::BoundExpressionPtr> outputs_;
  std::unique_ptr<exec::StreamingAggregator> agg_;
  EventTimeKey event_time_;
  SchemaPtr schema_;
};

}  // namespace

Result<std::unique_ptr<StatefulOperator>> MakeStatefulAggregate(
    const TransformStep& step, const SchemaPtr& input, const expr::EvalOptions& options,
    OutputMode mode, std::unique_ptr<state::StateStore> store) {
  if (HasSessionWindowKey(step)) {
    if (step.sql_select || !step.having.empty()) {
      return Status::NotSupported(step.key_path,
                                  ": session_window in a sql step is not supported yet; write a "
                                  "groupBy step");
    }
    return MakeSessionWindowAggregate(step, input, options, mode, std::move(store));
  }
  auto op = std::make_unique<StatefulAggregate>();
  SILT_RETURN_NOT_OK(op->Init(step, input, options, mode, std::move(store)));
  return std::unique_ptr<StatefulOperator>(std::move(op));
}

}  // namespace silt::stream
