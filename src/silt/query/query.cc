// RunQuery in two steps. PlanQuery decides everything that needs no data
// from the parsed clauses and the snapshot: the columns to read, the
// predicate pushed into the scan for pruning, the bound WHERE, and either a
// projection (with its ORDER BY keys) or an aggregate (keys, aggregate
// arguments and the rewritten select list, HAVING and ORDER BY); its errors
// come before any data file is read. ExecuteQuery then streams the scan
// through filter and projection (or exec's hash aggregator), materializing
// only when ORDER BY or aggregation needs it.

#include "silt/query/query.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <set>

#include "silt/base/strings.h"
#include "silt/columnar/temporal.h"
#include "silt/delta/partition_utils.h"
#include "silt/delta/stats.h"
#include "silt/exec/aggregate.h"
#include "silt/exec/aggregate_rewriter.h"
#include "silt/exec/value_access.h"
#include "silt/expr/expression.h"
#include "silt/expr/parse/ast_walk.h"
#include "silt/query/predicate_extractor.h"

namespace silt::query {

namespace {

using columnar::Column;
using columnar::ColumnPtr;
using columnar::RecordBatch;
using columnar::RecordBatchPtr;
using columnar::SchemaPtr;
using columnar::TypeId;
using exec::AggKind;
using exec::AggregateSpec;
using exec::HashAggregator;
using expr::Node;
using expr::NodeKind;
using expr::NodePtr;
using expr::OrderItem;

// The integer a literal ORDER BY / GROUP BY item holds (an ordinal), if any.
std::optional<int64_t> Ordinal(const Node& node) {
  if (node.kind() != NodeKind::kLiteral) return std::nullopt;
  const auto& value = static_cast<const expr::LiteralNode&>(node).value();
  if (value.is_null || value.type == nullptr || !value.type->is_integral()) return std::nullopt;
  return value.int_value;
}

// A single-part column reference's name, or null.
const std::string* SimpleName(const Node& node) {
  if (node.kind() != NodeKind::kColumnRef) return nullptr;
  const auto& parts = static_cast<const expr::ColumnRefNode&>(node).parts();
  return parts.size() == 1 ? &parts[0] : nullptr;
}

NodePtr UnaliasPtr(const NodePtr& node) {
  if (node->kind() == NodeKind::kAlias) return static_cast<const expr::AliasNode&>(*node).child();
  return node;
}

Result<RecordBatchPtr> Filter(expr::BoundExpression* predicate, const RecordBatchPtr& batch,
                              const expr::EvalContext& ctx) {
  if (predicate == nullptr || batch->num_rows == 0) return batch;
  SILT_ASSIGN_OR_RETURN(ColumnPtr mask, predicate->Evaluate(*batch, ctx));
  const uint8_t* values = mask->values->data();
  const uint8_t* valid = mask->validity ? mask->validity->data() : nullptr;
  std::vector<int64_t> keep;
  keep.reserve(static_cast<size_t>(batch->num_rows));
  for (int64_t i = 0; i < batch->num_rows; ++i) {
    if (columnar::GetBit(values, i) && (valid == nullptr || columnar::GetBit(valid, i))) {
      keep.push_back(i);
    }
  }
  if (static_cast<int64_t>(keep.size()) == batch->num_rows) return batch;
  return columnar::TakeBatch(*batch, keep);
}

// Binds over the scanned columns; a failure is reported as binding over the
// whole table would report it, so messages list every column, not only
// those the query reads.
Result<expr::BoundExpressionPtr> BindScanned(const Node& node, const SchemaPtr& scan_schema,
                                             const SchemaPtr& table_schema) {
  Result<expr::BoundExpressionPtr> bound = expr::Bind(node, scan_schema);
  if (bound.ok()) return bound;
  Result<expr::BoundExpressionPtr> full = expr::Bind(node, table_schema);
  return full.ok() ? bound.status() : full.status();
}

Result<std::vector<expr::BoundExpressionPtr>> BindSelectScanned(const Node& node,
                                                                const SchemaPtr& scan_schema,
                                                                const SchemaPtr& table_schema) {
  Result<std::vector<expr::BoundExpressionPtr>> bound = expr::BindSelectItem(node, scan_schema);
  if (bound.ok()) return bound;
  Result<std::vector<expr::BoundExpressionPtr>> full = expr::BindSelectItem(node, table_schema);
  return full.ok() ? bound.status() : full.status();
}

Result<expr::BoundExpressionPtr> BindPredicate(const Node& node, const SchemaPtr& schema,
                                               const char* clause) {
  SILT_ASSIGN_OR_RETURN(expr::BoundExpressionPtr bound, expr::Bind(node, schema));
  if (bound->type()->id() != TypeId::kBoolean) {
    return Status::InvalidArgument(clause, " '", node.ToString(), "' has type ",
                                   bound->type()->ToDdl(), "; expected BOOLEAN");
  }
  return bound;
}

// ---- ORDER BY

Status CheckSortable(const columnar::DataType& type, const std::string& what) {
  if (type.is_nested() || type.id() == TypeId::kNull) {
    if (type.id() == TypeId::kNull) return Status::OK();
    return Status::NotSupported("ORDER BY a value of type ", type.ToDdl(),
                                " is not supported yet: ", what);
  }
  return Status::OK();
}

std::vector<int64_t> SortedIndices(const std::vector<ColumnPtr>& keys,
                                   const std::vector<OrderItem>& items, int64_t rows) {
  std::vector<int64_t> idx(static_cast<size_t>(rows));
  for (int64_t i = 0; i < rows; ++i) idx[static_cast<size_t>(i)] = i;
  std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) {
    for (size_t k = 0; k < keys.size(); ++k) {
      const Column& c = *keys[k];
      bool an = c.IsNull(a);
      bool bn = c.IsNull(b);
      int r;
      if (an || bn) {
        if (an && bn) continue;
        r = an ? -1 : 1;
        if (!items[k].nulls_first) r = -r;
        return r < 0;
      }
      if (c.type->id() == TypeId::kNull) continue;
      r = exec::CompareNonNull(c, a, b);
      if (r == 0) continue;
      if (!items[k].ascending) r = -r;
      return r < 0;
    }
    return false;
  });
  return idx;
}

// One ORDER BY key: an output column (alias or ordinal) or an expression
// over the pre-projection batch.
struct SortKey {
  int output_column = -1;
  expr::BoundExpressionPtr expr;
};

Result<RecordBatchPtr> Project(std::vector<expr::BoundExpressionPtr>& exprs,
                               const SchemaPtr& schema, const RecordBatch& batch,
                               const expr::EvalContext& ctx) {
  auto out = std::make_shared<RecordBatch>();
  out->schema = schema;
  out->num_rows = batch.num_rows;
  for (auto& e : exprs) {
    SILT_ASSIGN_OR_RETURN(ColumnPtr col, e->Evaluate(batch, ctx));
    out->columns.push_back(std::move(col));
  }
  return RecordBatchPtr(std::move(out));
}

class Emitter {
 public:
  Emitter(const QueryOutput& output, int64_t limit, QueryStats* stats)
      : output_(output), remaining_(limit < 0 ? INT64_MAX : limit), stats_(stats) {}
  bool done() const { return remaining_ <= 0; }
  Status Emit(const RecordBatchPtr& batch) {
    if (done() || batch->num_rows == 0) return Status::OK();
    RecordBatchPtr b = batch;
    if (b->num_rows > remaining_) b = columnar::SliceBatch(*b, 0, remaining_);
    remaining_ -= b->num_rows;
    stats_->rows_output += b->num_rows;
    return output_.batch(*b);
  }

 private:
  const QueryOutput& output_;
  int64_t remaining_;
  QueryStats* stats_;
};

// Sorts the materialized output by `keys` and emits it.
Status SortAndEmit(std::vector<RecordBatchPtr> batches, std::vector<std::vector<ColumnPtr>> keys,
                   const std::vector<OrderItem>& items, const SchemaPtr& schema, Emitter* emitter) {
  if (batches.empty()) return Status::OK();
  RecordBatchPtr all = batches.size() == 1 ? batches[0] : columnar::ConcatBatches(batches);
  std::vector<ColumnPtr> key_columns;
  for (size_t k = 0; k < items.size(); ++k) {
    std::vector<ColumnPtr> chunks;
    for (auto& per_batch : keys) chunks.push_back(per_batch[k]);
    key_columns.push_back(chunks.size() == 1 ? chunks[0] : columnar::ConcatColumns(chunks));
  }
  std::vector<int64_t> order = SortedIndices(key_columns, items, all->num_rows);
  RecordBatchPtr sorted = columnar::TakeBatch(*all, order);
  auto fixed = std::make_shared<RecordBatch>(*sorted);
  fixed->schema = schema;
  return emitter->Emit(fixed);
}

// ---- Plan: what to read and compute, decided from the statement and the
// snapshot before any data file is read.

// A query without aggregates: project every scanned batch, then sort when
// there is an ORDER BY.
struct ProjectionPlan {
  std::vector<expr::BoundExpressionPtr> exprs;  // over the scan's batches
  SchemaPtr out_schema;
  std::vector<SortKey> sort_keys;
};

// A GROUP BY / aggregate query: keys and aggregate arguments evaluated over
// the scan feed a hash aggregate; the select list, HAVING and ORDER BY are
// rewritten to name its output columns (__keyN, __aggN) and bound over it
// once it is finished.
struct AggregatePlan {
  std::vector<expr::BoundExpressionPtr> key_exprs;
  std::vector<columnar::TypePtr> key_types;
  std::vector<expr::BoundExpressionPtr> arg_exprs;  // null for count(*)
  std::vector<AggregateSpec> agg_specs;
  std::vector<std::string> agg_names;  // keys first
  std::vector<NodePtr> select;         // rewritten, aliased as written
  NodePtr having;                      // rewritten; may be null
  // Per ORDER BY item: a select-list column, or else a rewritten expression.
  std::vector<int> order_output;
  std::vector<NodePtr> order_rewritten;
};

struct QueryPlan {
  // Reads the columns any clause names, pruned by `pushed` (partition
  // values, file statistics, row groups).
  std::unique_ptr<delta::TableScan> scan;
  columnar::Conjunction pushed;
  expr::BoundExpressionPtr where;  // the full WHERE; may be null
  // Exactly one of these.
  std::optional<ProjectionPlan> projection;
  std::optional<AggregatePlan> aggregate;
};

// Columns to read: those any clause names (plus all for `*`).
delta::ScanOptions ScanColumns(const delta::SnapshotPtr& snapshot, const QuerySpec& spec) {
  const SchemaPtr& table_schema = snapshot->schema();
  bool star = spec.select.empty();
  std::set<std::string> names;
  auto collect = [&](const NodePtr& node) {
    if (node == nullptr) return;
    expr::VisitNodes(*node, [&](const Node& n) {
      if (n.kind() == NodeKind::kStar) star = true;
      if (n.kind() == NodeKind::kColumnRef) {
        names.insert(AsciiLower(static_cast<const expr::ColumnRefNode&>(n).parts()[0]));
      }
    });
  };
  for (const NodePtr& n : spec.select) collect(n);
  collect(spec.where);
  for (const NodePtr& n : spec.group_by) collect(n);
  collect(spec.having);
  for (const OrderItem& item : spec.order_by) collect(item.expr);
  delta::ScanOptions scan_options;
  // Spark's hidden _metadata column: row tracking's row_id and
  // row_commit_version (unless the table has a column of that name).
  scan_options.row_tracking = names.count(std::string(delta::kRowMetadataColumn)) > 0 &&
                              table_schema->FieldIndex(delta::kRowMetadataColumn) < 0;
  if (!star) {
    for (const columnar::Field& field : table_schema->fields()) {
      if (names.count(AsciiLower(field.name))) scan_options.columns.push_back(field.name);
    }
    if (scan_options.columns.empty() && !scan_options.row_tracking) {
      // Only the row count matters: a partition column costs no I/O.
      scan_options.columns.push_back(snapshot->partition_columns().empty()
                                         ? table_schema->field(0).name
                                         : snapshot->partition_columns()[0]);
    }
  }
  return scan_options;
}

Result<ProjectionPlan> PlanProjection(const QuerySpec& spec, const SchemaPtr& scan_schema,
                                      const SchemaPtr& table_schema) {
  ProjectionPlan plan;
  std::vector<NodePtr> items = spec.select;
  if (items.empty())
    items.push_back(std::make_shared<expr::StarNode>(std::vector<std::string>{}, 0));
  std::vector<columnar::Field> fields;
  // `*` stands for the table's columns: not the hidden _metadata column a
  // scan adds for row tracking.
  const bool hidden_metadata = scan_schema->FieldIndex(delta::kRowMetadataColumn) >= 0 &&
                               table_schema->FieldIndex(delta::kRowMetadataColumn) < 0;
  for (const NodePtr& item : items) {
    SILT_ASSIGN_OR_RETURN(std::vector<expr::BoundExpressionPtr> bound,
                          BindSelectScanned(*item, scan_schema, table_schema));
    if (hidden_metadata && item->kind() == NodeKind::kStar) {
      std::erase_if(bound, [](const expr::BoundExpressionPtr& b) {
        return b->name() == delta::kRowMetadataColumn;
      });
    }
    for (auto& b : bound) {
      fields.push_back({b->name(), b->type(), b->nullable(), "{}"});
      plan.exprs.push_back(std::move(b));
    }
  }
  plan.out_schema = columnar::DataType::Struct(fields);
  for (const OrderItem& item : spec.order_by) {
    SortKey key;
    if (std::optional<int64_t> ordinal = Ordinal(*item.expr)) {
      if (*ordinal < 1 || *ordinal > static_cast<int64_t>(fields.size())) {
        return Status::InvalidArgument("ORDER BY position ", *ordinal,
                                       " is not in the select list (1..", fields.size(), ")");
      }
      key.output_column = static_cast<int>(*ordinal - 1);
    } else if (const std::string* name = SimpleName(*item.expr);
               name != nullptr && plan.out_schema->FieldIndex(*name) >= 0) {
      key.output_column = plan.out_schema->FieldIndex(*name);
    } else {
      SILT_ASSIGN_OR_RETURN(key.expr, BindScanned(*item.expr, scan_schema, table_schema));
      SILT_RETURN_NOT_OK(CheckSortable(*key.expr->type(), item.expr->ToString()));
    }
    if (key.output_column >= 0) {
      SILT_RETURN_NOT_OK(CheckSortable(*fields[static_cast<size_t>(key.output_column)].type,
                                       item.expr->ToString()));
    }
    plan.sort_keys.push_back(std::move(key));
  }
  return plan;
}

Result<AggregatePlan> PlanAggregate(const QuerySpec& spec, const SchemaPtr& scan_schema,
                                    const SchemaPtr& table_schema) {
  if (spec.select.empty()) {
    return Status::InvalidArgument("'*' cannot be selected in an aggregate query");
  }
  AggregatePlan plan;
  exec::AggregateRewriter rewriter;
  std::vector<NodePtr> keys;
  for (const NodePtr& g : spec.group_by) {
    NodePtr key = g;
    if (std::optional<int64_t> ordinal = Ordinal(*g)) {
      if (*ordinal < 1 || *ordinal > static_cast<int64_t>(spec.select.size())) {
        return Status::InvalidArgument("GROUP BY position ", *ordinal,
                                       " is not in the select list (1..", spec.select.size(), ")");
      }
      key = UnaliasPtr(spec.select[static_cast<size_t>(*ordinal - 1)]);
    } else if (const std::string* name = SimpleName(*g);
               name != nullptr && scan_schema->FieldIndex(*name) < 0) {
      for (const NodePtr& item : spec.select) {
        if (item->kind() == NodeKind::kAlias &&
            AsciiLower(static_cast<const expr::AliasNode&>(*item).name()) == AsciiLower(*name)) {
          key = UnaliasPtr(item);
        }
      }
    }
    if (exec::ContainsAggregate(*key)) {
      return Status::InvalidArgument("aggregate functions are not allowed in GROUP BY: '",
                                     g->ToString(), "'");
    }
    rewriter.AddKey(*key);
    keys.push_back(std::move(key));
  }
  for (const NodePtr& item : spec.select) {
    std::string name = item->OutputName();
    SILT_ASSIGN_OR_RETURN(NodePtr r, rewriter.Rewrite(UnaliasPtr(item)));
    plan.select.push_back(std::make_shared<expr::AliasNode>(r, name, item->position()));
  }
  if (spec.having != nullptr) {
    SILT_ASSIGN_OR_RETURN(plan.having, rewriter.Rewrite(spec.having));
  }
  plan.order_rewritten.resize(spec.order_by.size());
  plan.order_output.assign(spec.order_by.size(), -1);
  for (size_t k = 0; k < spec.order_by.size(); ++k) {
    const Node& e = *spec.order_by[k].expr;
    if (std::optional<int64_t> ordinal = Ordinal(e)) {
      if (*ordinal < 1 || *ordinal > static_cast<int64_t>(plan.select.size())) {
        return Status::InvalidArgument("ORDER BY position ", *ordinal,
                                       " is not in the select list (1..", plan.select.size(), ")");
      }
      plan.order_output[k] = static_cast<int>(*ordinal - 1);
      continue;
    }
    if (const std::string* name = SimpleName(e)) {
      for (size_t s = 0; s < spec.select.size(); ++s) {
        if (AsciiLower(spec.select[s]->OutputName()) == AsciiLower(*name)) {
          plan.order_output[k] = static_cast<int>(s);
          break;
        }
      }
      if (plan.order_output[k] >= 0) continue;
    }
    SILT_ASSIGN_OR_RETURN(NodePtr rewritten, rewriter.Rewrite(spec.order_by[k].expr));
    plan.order_rewritten[k] = std::move(rewritten);
  }

  // Keys and aggregate arguments bind over the scan.
  for (size_t k = 0; k < keys.size(); ++k) {
    SILT_ASSIGN_OR_RETURN(expr::BoundExpressionPtr b,
                          BindScanned(*keys[k], scan_schema, table_schema));
    plan.key_types.push_back(b->type());
    plan.key_exprs.push_back(std::move(b));
    plan.agg_names.push_back("__key" + std::to_string(k));
  }
  for (size_t a = 0; a < rewriter.calls().size(); ++a) {
    const exec::AggregateRewriter::Call& call = rewriter.calls()[a];
    AggregateSpec agg = call.spec;
    expr::BoundExpressionPtr arg;
    if (call.arg != nullptr) {
      SILT_ASSIGN_OR_RETURN(arg, BindScanned(*call.arg, scan_schema, table_schema));
      agg.arg_type = arg->type();
      Result<columnar::TypePtr> type = exec::AggregateResultType(agg);
      if (!type.ok()) return type.status().WithContextParts("in '", call.text, "'");
    }
    plan.arg_exprs.push_back(std::move(arg));
    plan.agg_specs.push_back(agg);
    plan.agg_names.push_back("__agg" + std::to_string(a));
  }
  return plan;
}

// Spark 4 compares, groups and sorts a string column by its collation
// (field metadata "__COLLATIONS": {"<name>": "spark.UTF8_LCASE"}); silt
// compares bytes, which is Spark's UTF8_BINARY. A clause that would compare
// a column of another collation is refused, naming it, rather than answered
// differently; reading such a column (SELECT) is exact.
Status CheckCollations(const QuerySpec& spec, const columnar::Schema& table_schema) {
  auto check = [&](const NodePtr& node, std::string_view clause) -> Status {
    if (node == nullptr) return Status::OK();
    Status st;
    expr::VisitNodes(*node, [&](const Node& n) {
      if (!st.ok() || n.kind() != NodeKind::kColumnRef) return;
      const std::string& name = static_cast<const expr::ColumnRefNode&>(n).parts()[0];
      const int idx = table_schema.FieldIndex(name);
      if (idx < 0) return;
      const columnar::Field& field = table_schema.field(idx);
      const size_t at = field.metadata_json.find("\"__COLLATIONS\"");
      if (at == std::string::npos) return;
      const size_t colon = field.metadata_json.find(
          ':', field.metadata_json.find("\"" + field.name + "\"", at + 15));
      const size_t open = field.metadata_json.find('"', colon);
      const size_t close = field.metadata_json.find('"', open + 1);
      std::string collation = open == std::string::npos || close == std::string::npos
                                  ? std::string("a non-binary collation")
                                  : field.metadata_json.substr(open + 1, close - open - 1);
      if (collation == "spark.UTF8_BINARY") return;
      st = Status::NotSupported("column '", field.name, "' has collation ", collation,
                                " (Spark 4 collations): ", clause,
                                " over it would compare strings as UTF8_BINARY; not "
                                "supported yet");
    });
    return st;
  };
  SILT_RETURN_NOT_OK(check(spec.where, "WHERE"));
  for (const NodePtr& n : spec.group_by) SILT_RETURN_NOT_OK(check(n, "GROUP BY"));
  SILT_RETURN_NOT_OK(check(spec.having, "HAVING"));
  for (const OrderItem& item : spec.order_by) SILT_RETURN_NOT_OK(check(item.expr, "ORDER BY"));
  return Status::OK();
}

Result<QueryPlan> PlanQuery(const delta::DeltaTable& table, const delta::SnapshotPtr& snapshot,
                            const QuerySpec& spec) {
  QueryPlan plan;
  const SchemaPtr& table_schema = snapshot->schema();
  SILT_RETURN_NOT_OK(CheckCollations(spec, *table_schema));
  delta::ScanOptions scan_options = ScanColumns(snapshot, spec);
  if (spec.where != nullptr) {
    if (exec::ContainsAggregate(*spec.where)) {
      return Status::InvalidArgument("aggregate functions are not allowed in WHERE: '",
                                     spec.where->ToString(), "'");
    }
    SILT_ASSIGN_OR_RETURN(scan_options.predicate, ExtractConjunction(*spec.where, table_schema));
  }
  plan.pushed = scan_options.predicate;
  SILT_ASSIGN_OR_RETURN(plan.scan, delta::TableScan::Make(table.file_system(), table.path(),
                                                          snapshot, std::move(scan_options)));
  const SchemaPtr scan_schema = plan.scan->schema();
  if (spec.where != nullptr) {
    SILT_RETURN_NOT_OK(BindScanned(*spec.where, scan_schema, table_schema).status());
    SILT_ASSIGN_OR_RETURN(plan.where, BindPredicate(*spec.where, scan_schema, "WHERE"));
  }
  bool aggregate = !spec.group_by.empty() || spec.having != nullptr;
  for (const NodePtr& n : spec.select) aggregate = aggregate || exec::ContainsAggregate(*n);
  for (const OrderItem& item : spec.order_by) {
    aggregate = aggregate || exec::ContainsAggregate(*item.expr);
  }
  if (aggregate) {
    SILT_ASSIGN_OR_RETURN(plan.aggregate, PlanAggregate(spec, scan_schema, table_schema));
  } else {
    SILT_ASSIGN_OR_RETURN(plan.projection, PlanProjection(spec, scan_schema, table_schema));
  }
  return plan;
}

// ---- Execute: run a plan over the snapshot's files.

// Reads, counts and filters the scan's batches.
class FilteredScan {
 public:
  FilteredScan(QueryPlan* plan, const expr::EvalContext& ctx, QueryStats* stats)
      : plan_(plan), ctx_(ctx), stats_(stats) {}

  // The next batch with at least one row passing WHERE; null at the end.
  Result<RecordBatchPtr> Next() {
    while (true) {
      SILT_ASSIGN_OR_RETURN(RecordBatchPtr batch, plan_->scan->Next());
      if (batch == nullptr) return batch;
      stats_->rows_scanned += batch->num_rows;
      SILT_ASSIGN_OR_RETURN(batch, Filter(plan_->where.get(), batch, ctx_));
      stats_->rows_matched += batch->num_rows;
      if (batch->num_rows > 0) return batch;
    }
  }

 private:
  QueryPlan* plan_;
  const expr::EvalContext& ctx_;
  QueryStats* stats_;
};

Status ExecuteProjection(ProjectionPlan& plan, const QuerySpec& spec, const QueryOutput& output,
                         const expr::EvalContext& ctx, FilteredScan* scan, Emitter* emitter) {
  SILT_RETURN_NOT_OK(output.begin(plan.out_schema));
  std::vector<RecordBatchPtr> kept;
  std::vector<std::vector<ColumnPtr>> kept_keys;
  while (!(plan.sort_keys.empty() && emitter->done())) {
    SILT_ASSIGN_OR_RETURN(RecordBatchPtr batch, scan->Next());
    if (batch == nullptr) break;
    SILT_ASSIGN_OR_RETURN(RecordBatchPtr projected,
                          Project(plan.exprs, plan.out_schema, *batch, ctx));
    if (plan.sort_keys.empty()) {
      SILT_RETURN_NOT_OK(emitter->Emit(projected));
      continue;
    }
    std::vector<ColumnPtr> keys;
    for (SortKey& key : plan.sort_keys) {
      if (key.output_column >= 0) {
        keys.push_back(projected->column(key.output_column));
      } else {
        SILT_ASSIGN_OR_RETURN(ColumnPtr col, key.expr->Evaluate(*batch, ctx));
        keys.push_back(std::move(col));
      }
    }
    kept.push_back(std::move(projected));
    kept_keys.push_back(std::move(keys));
  }
  if (plan.sort_keys.empty()) return Status::OK();
  return SortAndEmit(std::move(kept), std::move(kept_keys), spec.order_by, plan.out_schema,
                     emitter);
}

Status ExecuteAggregate(AggregatePlan& plan, const QuerySpec& spec, const QueryOutput& output,
                        const expr::EvalContext& ctx, FilteredScan* scan, Emitter* emitter) {
  SILT_ASSIGN_OR_RETURN(std::unique_ptr<HashAggregator> aggregator,
                        HashAggregator::Make(plan.key_types, plan.agg_specs));
  while (true) {
    SILT_ASSIGN_OR_RETURN(RecordBatchPtr batch, scan->Next());
    if (batch == nullptr) break;
    std::vector<ColumnPtr> key_cols;
    for (auto& e : plan.key_exprs) {
      SILT_ASSIGN_OR_RETURN(ColumnPtr col, e->Evaluate(*batch, ctx));
      key_cols.push_back(std::move(col));
    }
    std::vector<ColumnPtr> arg_cols;
    for (auto& e : plan.arg_exprs) {
      if (e == nullptr) {
        arg_cols.emplace_back();
        continue;
      }
      SILT_ASSIGN_OR_RETURN(ColumnPtr col, e->Evaluate(*batch, ctx));
      arg_cols.push_back(std::move(col));
    }
    SILT_RETURN_NOT_OK(aggregator->Consume(key_cols, arg_cols, batch->num_rows));
  }
  SILT_ASSIGN_OR_RETURN(RecordBatchPtr grouped, aggregator->Finish(plan.agg_names));
  const SchemaPtr grouped_schema = grouped->schema;
  if (plan.having != nullptr) {
    SILT_ASSIGN_OR_RETURN(expr::BoundExpressionPtr h,
                          BindPredicate(*plan.having, grouped_schema, "HAVING"));
    SILT_ASSIGN_OR_RETURN(grouped, Filter(h.get(), grouped, ctx));
  }
  std::vector<expr::BoundExpressionPtr> exprs;
  std::vector<columnar::Field> fields;
  for (const NodePtr& item : plan.select) {
    SILT_ASSIGN_OR_RETURN(expr::BoundExpressionPtr b, expr::Bind(*item, grouped_schema));
    fields.push_back({b->name(), b->type(), b->nullable(), "{}"});
    exprs.push_back(std::move(b));
  }
  SchemaPtr out_schema = columnar::DataType::Struct(fields);
  SILT_RETURN_NOT_OK(output.begin(out_schema));
  SILT_ASSIGN_OR_RETURN(RecordBatchPtr projected, Project(exprs, out_schema, *grouped, ctx));
  if (spec.order_by.empty()) return emitter->Emit(projected);
  std::vector<ColumnPtr> sort_cols;
  for (size_t k = 0; k < spec.order_by.size(); ++k) {
    if (plan.order_output[k] >= 0) {
      sort_cols.push_back(projected->column(plan.order_output[k]));
    } else {
      SILT_ASSIGN_OR_RETURN(expr::BoundExpressionPtr b,
                            expr::Bind(*plan.order_rewritten[k], grouped_schema));
      SILT_ASSIGN_OR_RETURN(ColumnPtr col, b->Evaluate(*grouped, ctx));
      sort_cols.push_back(std::move(col));
    }
    SILT_RETURN_NOT_OK(CheckSortable(*sort_cols.back()->type, spec.order_by[k].expr->ToString()));
  }
  return SortAndEmit({projected}, {sort_cols}, spec.order_by, out_schema, emitter);
}

Result<QueryStats> ExecuteQuery(QueryPlan& plan, const QuerySpec& spec, const QueryOutput& output) {
  QueryStats stats;
  stats.pushed = plan.pushed;
  expr::EvalContext ctx;
  ctx.current_timestamp_micros = std::chrono::duration_cast<std::chrono::microseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count();
  FilteredScan scan(&plan, ctx, &stats);
  Emitter emitter(output, spec.limit, &stats);
  if (plan.aggregate) {
    SILT_RETURN_NOT_OK(ExecuteAggregate(*plan.aggregate, spec, output, ctx, &scan, &emitter));
  } else {
    SILT_RETURN_NOT_OK(ExecuteProjection(*plan.projection, spec, output, ctx, &scan, &emitter));
  }
  stats.scan = plan.scan->metrics();
  return stats;
}

}  // namespace

Result<QueryStats> RunQuery(const delta::DeltaTable& table, const delta::SnapshotPtr& snapshot,
                            const QuerySpec& spec, const QueryOutput& output) {
  SILT_ASSIGN_OR_RETURN(QueryPlan plan, PlanQuery(table, snapshot, spec));
  return ExecuteQuery(plan, spec, output);
}

Result<std::optional<int64_t>> CountFromStats(const delta::SnapshotPtr& snapshot,
                                              const expr::NodePtr& where) {
  const auto& files = snapshot->files();
  std::vector<int64_t> records;
  records.reserve(files.size());
  for (const delta::AddFile& file : files) {
    if (file.deletion_vector || !file.stats) return std::optional<int64_t>();
    std::optional<int64_t> n = delta::StatsNumRecords(*file.stats);
    if (!n) return std::optional<int64_t>();
    records.push_back(*n);
  }
  int64_t total = 0;
  if (where == nullptr) {
    for (int64_t n : records) total += n;
    return std::optional<int64_t>(total);
  }
  auto mode = snapshot->metadata().configuration.find("delta.columnMapping.mode");
  if (mode != snapshot->metadata().configuration.end() && mode->second != "none") {
    return std::optional<int64_t>();
  }
  std::vector<columnar::Field> fields;
  for (const columnar::Field& field : snapshot->schema()->fields()) {
    for (const std::string& p : snapshot->partition_columns()) {
      if (AsciiLower(p) == AsciiLower(field.name)) fields.push_back(field);
    }
  }
  if (fields.empty() || exec::ContainsAggregate(*where)) return std::optional<int64_t>();
  SchemaPtr schema = columnar::DataType::Struct(fields);
  Result<expr::BoundExpressionPtr> bound = BindPredicate(*where, schema, "WHERE");
  if (!bound.ok()) return std::optional<int64_t>();  // names data columns: scan instead
  auto batch = std::make_shared<RecordBatch>();
  batch->schema = schema;
  batch->num_rows = static_cast<int64_t>(files.size());
  for (const columnar::Field& field : fields) {
    std::vector<ColumnPtr> values;
    for (const delta::AddFile& file : files) {
      SILT_ASSIGN_OR_RETURN(
          ColumnPtr v,
          delta::MakePartitionColumn(
              field.type, delta::FindPartitionValue(file.partition_values, field.name), 1));
      values.push_back(std::move(v));
    }
    batch->columns.push_back(values.empty() ? columnar::MakeNullColumn(field.type, 0)
                                            : columnar::ConcatColumns(values));
  }
  if (files.empty()) return std::optional<int64_t>(0);
  expr::EvalContext ctx;
  SILT_ASSIGN_OR_RETURN(ColumnPtr mask, (*bound)->Evaluate(*batch, ctx));
  for (size_t i = 0; i < files.size(); ++i) {
    int64_t row = static_cast<int64_t>(i);
    if (mask->IsValid(row) && mask->BoolValue(row)) total += records[i];
  }
  return std::optional<int64_t>(total);
}

Result<int64_t> ParseTimeTravelTimestamp(std::string_view text) {
  std::optional<int64_t> micros = columnar::ParseTimestamp(text, 0);
  if (!micros || text.size() < 10 || text[4] != '-') {
    return Status::InvalidArgument("'", text,
                                   "' is not a timestamp; expected YYYY-MM-DD[ HH:MM:SS[.ffffff]] "
                                   "(UTC)");
  }
  int64_t ms = *micros / 1000;
  if (*micros < 0 && *micros % 1000 != 0) --ms;
  return ms;
}

}  // namespace silt::query
