// MERGE: the source is read whole and hashed on the equi-keys of ON (the
// `target expr = source expr` / `<=>` conjuncts); each candidate target file
// is read, its rows probe the hash table, and the full ON condition is
// evaluated over the candidate pairs (so null semantics and any residual
// condition are Spark's). Matched pairs go through the WHEN MATCHED clauses,
// unmatched target rows through WHEN NOT MATCHED BY SOURCE, and at the end
// the source rows no target row matched through WHEN NOT MATCHED.

#include <algorithm>
#include <unordered_map>

#include "silt/base/clock.h"
#include "silt/base/json_writer.h"
#include "silt/delta/data_skipping.h"
#include "silt/dml/clauses.h"
#include "silt/dml/dml.h"
#include "silt/dml/operation.h"
#include "silt/dml/rewrite.h"
#include "silt/dml/scope.h"
#include "silt/exec/key_codec.h"
#include "silt/expr/expression.h"
#include "silt/expr/parse/ast_walk.h"

namespace silt::dml {

namespace {

using columnar::ColumnPtr;
using columnar::RecordBatch;
using columnar::RecordBatchPtr;

constexpr size_t kMaxPruningValues = 1000;

struct KeyPair {
  expr::NodePtr target;  // resolved, target-only
  expr::NodePtr source;  // resolved, source-only
  bool null_safe = false;
  int target_column = -1;  // when `target` is a plain top-level column
};

// A plain `__t<i>` reference: its column index, else -1.
int PlainTargetColumn(const expr::NodePtr& node) {
  if (node->kind() != expr::NodeKind::kColumnRef) return -1;
  const auto& parts = static_cast<const expr::ColumnRefNode&>(*node).parts();
  if (parts.size() != 1 || parts[0].rfind("__t", 0) != 0) return -1;
  return std::stoi(parts[0].substr(3));
}

// Which sides a resolved expression reads: bit 0 the target, bit 1 the
// source.
unsigned SidesOf(const expr::NodePtr& node) {
  unsigned sides = 0;
  expr::VisitNodes(*node, [&](const expr::Node& n) {
    if (n.kind() != expr::NodeKind::kColumnRef) return;
    const std::string& name = static_cast<const expr::ColumnRefNode&>(n).parts()[0];
    sides |= name.rfind("__t", 0) == 0 ? 1u : name.rfind("__s", 0) == 0 ? 2u : 0u;
  });
  return sides;
}

RecordBatchPtr EmptyBatch(const columnar::SchemaPtr& schema) {
  auto out = std::make_shared<RecordBatch>();
  out->schema = schema;
  for (const columnar::Field& f : schema->fields()) {
    out->columns.push_back(columnar::MakeNullColumn(f.type, 0));
  }
  return out;
}

// target rows `ti` beside source rows `si` (a -1 index: a null row), as a
// batch of the joined schema. Either side may be null: all-null columns.
RecordBatchPtr JoinRows(const Scope& scope, const RecordBatch* target,
                        const std::vector<int64_t>* ti, const RecordBatch* source,
                        const std::vector<int64_t>* si, int64_t rows) {
  auto out = std::make_shared<RecordBatch>();
  out->schema = scope.joined_schema();
  out->num_rows = rows;
  const RecordBatch* sides[2] = {target, source};
  const std::vector<int64_t>* indices[2] = {ti, si};
  for (int side = 0; side < 2; ++side) {
    const columnar::Schema& schema = *scope.side_schema(side);
    for (int c = 0; c < schema.num_fields(); ++c) {
      if (sides[side] == nullptr) {
        out->columns.push_back(columnar::MakeNullColumn(schema.field(c).type, rows));
      } else {
        out->columns.push_back(columnar::TakeColumn(*sides[side]->column(c), *indices[side]));
      }
    }
  }
  return out;
}

// Encoded keys of `batch` (one side) for the key expressions; `usable[i]`
// false where an `=` key is null (such a row matches nothing).
struct EncodedKeys {
  std::vector<std::string> keys;
  std::vector<uint8_t> usable;
};

Result<EncodedKeys> EncodeKeys(std::vector<expr::BoundExpressionPtr>& exprs,
                               const std::vector<KeyPair>& pairs, const exec::KeyCodec& codec,
                               const RecordBatch& batch, const expr::EvalContext& ctx,
                               std::vector<ColumnPtr>* columns_out) {
  EncodedKeys out;
  std::vector<ColumnPtr> columns;
  for (auto& e : exprs) {
    SILT_ASSIGN_OR_RETURN(ColumnPtr c, e->Evaluate(batch, ctx));
    columns.push_back(std::move(c));
  }
  out.usable.assign(static_cast<size_t>(batch.num_rows), 1);
  for (size_t k = 0; k < columns.size(); ++k) {
    if (pairs[k].null_safe || columns[k]->null_count == 0) continue;
    for (int64_t i = 0; i < batch.num_rows; ++i) {
      if (columns[k]->IsNull(i)) out.usable[static_cast<size_t>(i)] = 0;
    }
  }
  codec.EncodeRows(columns, batch.num_rows, &out.keys);
  if (columns_out != nullptr) *columns_out = std::move(columns);
  return out;
}

std::string ClauseParameters(const std::vector<expr::MergeClause>& clauses,
                             expr::MergeMatch match) {
  JsonWriter w;
  w.BeginArray();
  for (const expr::MergeClause& c : clauses) {
    if (c.match != match) continue;
    w.BeginObject();
    if (c.condition != nullptr) w.Member("predicate", c.condition->ToString());
    const bool insert =
        c.action == expr::MergeActionKind::kInsert || c.action == expr::MergeActionKind::kInsertAll;
    const bool del = c.action == expr::MergeActionKind::kDelete;
    w.Member("actionType", insert ? "insert" : del ? "delete" : "update");
    w.EndObject();
  }
  w.EndArray();
  return w.Take();
}

const char* ClauseKindText(expr::MergeMatch match) {
  switch (match) {
    case expr::MergeMatch::kMatched: return "WHEN MATCHED";
    case expr::MergeMatch::kNotMatched: return "WHEN NOT MATCHED";
    case expr::MergeMatch::kNotMatchedBySource: return "WHEN NOT MATCHED BY SOURCE";
  }
  return "";
}

}  // namespace

Result<DmlResult> Merge(delta::DeltaTable* table, RowSource* source, const MergeSpec& spec,
                        const DmlOptions& options) {
  const int64_t start_ms = NowMillis();
  SILT_ASSIGN_OR_RETURN(delta::SnapshotPtr snapshot, SnapshotForDml(table, options, "MERGE"));
  DmlResult result;
  result.version = snapshot->version();
  if (TxnAlreadyRecorded(*snapshot, options)) {
    result.skipped_duplicate = true;
    return result;
  }
  const std::string context = "MERGE INTO Delta table " + table->path();
  if (spec.on == nullptr) return Status::InvalidArgument(context, " needs an ON condition");

  // The source, whole (the hash join's build side).
  std::vector<RecordBatchPtr> source_batches;
  while (true) {
    SILT_ASSIGN_OR_RETURN_CTX(RecordBatchPtr batch, source->Next(), "reading the source of ",
                              context);
    if (batch == nullptr) break;
    if (batch->num_rows > 0) source_batches.push_back(std::move(batch));
  }
  const int64_t materialize_ms = NowMillis() - start_ms;
  RecordBatchPtr source_rows = source_batches.empty() ? EmptyBatch(source->schema())
                               : source_batches.size() == 1
                                   ? source_batches[0]
                                   : columnar::ConcatBatches(source_batches);
  source_batches.clear();
  const int64_t num_source = source_rows->num_rows;

  Scope scope(spec.target_alias, snapshot->schema(), spec.source_alias, source->schema());
  RecordBatchPtr source_side = scope.AsSide(Scope::kSource, source_rows);
  const columnar::SchemaPtr& target_schema = scope.side_schema(Scope::kTarget);

  // ON: its conjuncts split into target-only (pruning), equi-keys, and the
  // rest; the whole condition is evaluated over candidate pairs.
  SILT_ASSIGN_OR_RETURN(expr::NodePtr on,
                        scope.Resolve(spec.on, "the ON condition of " + context, nullptr));
  SILT_ASSIGN_OR_RETURN(
      expr::BoundExpressionPtr on_bound,
      BindCondition(on, scope.joined_schema(), options.eval, "the ON condition of " + context));
  std::vector<expr::NodePtr> conjuncts;
  SplitConjuncts(on, &conjuncts);
  std::vector<expr::NodePtr> target_only;
  std::vector<KeyPair> keys;
  for (const expr::NodePtr& c : conjuncts) {
    if (SidesOf(c) == 1u) {
      target_only.push_back(c);
      continue;
    }
    if (c->kind() != expr::NodeKind::kBinary) continue;
    const auto& b = static_cast<const expr::BinaryNode&>(*c);
    if (b.op() != expr::BinaryOp::kEq && b.op() != expr::BinaryOp::kNullSafeEq) continue;
    auto side_of = SidesOf;
    unsigned l = side_of(b.left());
    unsigned r = side_of(b.right());
    KeyPair pair;
    pair.null_safe = b.op() == expr::BinaryOp::kNullSafeEq;
    if (l == 1u && r == 2u) {
      pair.target = b.left();
      pair.source = b.right();
    } else if (l == 2u && r == 1u) {
      pair.target = b.right();
      pair.source = b.left();
    } else {
      continue;
    }
    keys.push_back(std::move(pair));
  }
  // Bind the key expressions on their sides; a pair of different types is
  // compared through a common type when it is exact (integral: BIGINT),
  // else left to the residual evaluation only.
  std::vector<KeyPair> used_keys;
  std::vector<expr::BoundExpressionPtr> target_keys;
  std::vector<expr::BoundExpressionPtr> source_keys;
  std::vector<columnar::TypePtr> key_types;
  for (KeyPair& pair : keys) {
    SILT_ASSIGN_OR_RETURN(auto t, expr::Bind(*pair.target, target_schema, options.eval));
    SILT_ASSIGN_OR_RETURN(
        auto s, expr::Bind(*pair.source, scope.side_schema(Scope::kSource), options.eval));
    columnar::TypePtr type = t->type();
    if (!t->type()->Equals(*s->type())) {
      if (!t->type()->is_integral() || !s->type()->is_integral()) continue;
      type = columnar::DataType::Long();
      auto cast = [&](const expr::NodePtr& n) {
        return expr::NodePtr(std::make_shared<expr::CastNode>(n, type, n->position()));
      };
      SILT_ASSIGN_OR_RETURN(t, expr::Bind(*cast(pair.target), target_schema, options.eval));
      SILT_ASSIGN_OR_RETURN(
          s, expr::Bind(*cast(pair.source), scope.side_schema(Scope::kSource), options.eval));
    } else {
      pair.target_column = PlainTargetColumn(pair.target);
    }
    if (!exec::KeyCodec::Make({type}).ok()) continue;
    key_types.push_back(type);
    target_keys.push_back(std::move(t));
    source_keys.push_back(std::move(s));
    used_keys.push_back(pair);
  }
  SILT_ASSIGN_OR_RETURN(exec::KeyCodec codec, exec::KeyCodec::Make(key_types));

  // The clauses.
  SILT_ASSIGN_OR_RETURN(std::unique_ptr<WriteRules> rules,
                        WriteRules::Make(*snapshot, table->path(), options.eval));
  std::vector<ClauseSpec> specs[3];
  std::vector<int> clause_number[3];
  bool has_matched = false, has_not_matched_by_source = false;
  int only_unconditional_delete = 0;
  for (size_t n = 0; n < spec.clauses.size(); ++n) {
    const expr::MergeClause& c = spec.clauses[n];
    const int kind = static_cast<int>(c.match);
    ClauseSpec s;
    s.text = std::string(ClauseKindText(c.match)) + " clause " +
             std::to_string(specs[kind].size() + 1) + " of " + context;
    if (c.condition != nullptr) {
      SILT_ASSIGN_OR_RETURN(s.condition, scope.Resolve(c.condition, s.text, nullptr));
    }
    switch (c.action) {
      case expr::MergeActionKind::kDelete: s.kind = ActionKind::kDelete; break;
      case expr::MergeActionKind::kUpdate:
      case expr::MergeActionKind::kUpdateAll: {
        s.kind = ActionKind::kUpdate;
        SILT_ASSIGN_OR_RETURN(
            ResolvedAssignments resolved,
            ResolveAssignments(scope, c.assignments, true,
                               c.action == expr::MergeActionKind::kUpdateAll, s.text));
        s.values = std::move(resolved.values);
        s.assigned = std::move(resolved.assigned);
        break;
      }
      case expr::MergeActionKind::kInsert:
      case expr::MergeActionKind::kInsertAll: {
        s.kind = ActionKind::kInsert;
        SILT_ASSIGN_OR_RETURN(
            ResolvedAssignments resolved,
            ResolveAssignments(scope, c.assignments, false,
                               c.action == expr::MergeActionKind::kInsertAll, s.text));
        s.values = std::move(resolved.values);
        s.assigned = std::move(resolved.assigned);
        break;
      }
    }
    if (c.match == expr::MergeMatch::kMatched) {
      has_matched = true;
      only_unconditional_delete +=
          (c.action == expr::MergeActionKind::kDelete && c.condition == nullptr) ? 1 : 100;
    }
    if (c.match == expr::MergeMatch::kNotMatchedBySource) has_not_matched_by_source = true;
    clause_number[kind].push_back(static_cast<int>(n));
    specs[kind].push_back(std::move(s));
  }
  SILT_ASSIGN_OR_RETURN(auto matched, ClauseList::Make(scope, specs[0], options.eval, rules.get()));
  SILT_ASSIGN_OR_RETURN(auto not_matched,
                        ClauseList::Make(scope, specs[1], options.eval, rules.get()));
  SILT_ASSIGN_OR_RETURN(auto by_source,
                        ClauseList::Make(scope, specs[2], options.eval, rules.get()));
  const bool insert_only = !has_matched && !has_not_matched_by_source;
  const bool multiple_matches_ok = only_unconditional_delete == 1;

  expr::EvalContext ctx;
  ctx.current_timestamp_micros =
      options.now_micros != 0 ? options.now_micros : SystemClock().NowMicros();

  // Build: source rows by encoded key.
  std::vector<ColumnPtr> source_key_columns;
  SILT_ASSIGN_OR_RETURN(
      EncodedKeys source_encoded,
      EncodeKeys(source_keys, used_keys, codec, *source_side, ctx, &source_key_columns));
  std::unordered_map<std::string, std::vector<int64_t>> hash;
  hash.reserve(static_cast<size_t>(num_source));
  for (int64_t j = 0; j < num_source; ++j) {
    if (!source_encoded.usable[static_cast<size_t>(j)]) continue;
    hash[source_encoded.keys[static_cast<size_t>(j)]].push_back(j);
  }
  source_encoded.keys.clear();

  // Files: with WHEN NOT MATCHED BY SOURCE every file (its unmatched rows
  // act too); otherwise those the target-only conjuncts and the source's
  // key values leave.
  std::vector<const delta::AddFile*> files;
  columnar::Conjunction pruning;
  if (!has_not_matched_by_source) {
    SILT_ASSIGN_OR_RETURN(pruning,
                          TargetConjunction(target_only, snapshot->schema(), options.eval));
    const bool nothing_can_match = hash.empty();
    for (size_t k = 0; k < used_keys.size() && !nothing_can_match; ++k) {
      const KeyPair& pair = used_keys[k];
      if (pair.target_column < 0 || pair.null_safe) continue;
      const columnar::Field& field = snapshot->schema()->field(pair.target_column);
      if (field.type->is_nested()) continue;
      const columnar::Column& column = *source_key_columns[k];
      std::vector<columnar::PredicateValue> values;
      std::optional<columnar::PredicateValue> lo, hi;
      bool too_many = false;
      for (int64_t j = 0; j < column.length; ++j) {
        std::optional<columnar::PredicateValue> v = delta::PredicateValueAt(column, j);
        if (!v) continue;
        if (!lo || delta::ComparePredicateValues(*field.type, *v, *lo) < 0) lo = *v;
        if (!hi || delta::ComparePredicateValues(*field.type, *v, *hi) > 0) hi = *v;
        if (!too_many) values.push_back(std::move(*v));
        too_many = values.size() > kMaxPruningValues;
      }
      if (!lo) continue;
      if (!too_many) {
        std::sort(values.begin(), values.end(), [&](const auto& a, const auto& b) {
          return delta::ComparePredicateValues(*field.type, a, b) < 0;
        });
        values.erase(std::unique(values.begin(), values.end(),
                                 [&](const auto& a, const auto& b) {
                                   return delta::ComparePredicateValues(*field.type, a, b) == 0;
                                 }),
                     values.end());
        pruning.push_back({field.name, field.type, columnar::PredicateOp::kIn, std::move(values)});
      } else {
        pruning.push_back({field.name, field.type, columnar::PredicateOp::kGtEq, {*lo}});
        pruning.push_back({field.name, field.type, columnar::PredicateOp::kLtEq, {*hi}});
      }
    }
    // No source row (or none with a usable key): no target row can match,
    // so no file needs reading.
    if (num_source > 0 && !(nothing_can_match && !used_keys.empty())) {
      files = SelectFiles(*snapshot, pruning);
    }
  } else {
    for (const delta::AddFile& f : snapshot->files()) files.push_back(&f);
  }

  std::vector<uint8_t> source_matched(static_cast<size_t>(num_source), 0);
  const bool change_data = ChangeDataFeedOn(*snapshot) && !insert_only;
  SILT_ASSIGN_OR_RETURN(std::unique_ptr<DmlWriter> writer,
                        DmlWriter::Make(table, snapshot, WriteModeFor(*snapshot)));
  auto fail = [&](Status st) {
    writer->DeleteWritten();
    return st;
  };
  // delta-spark writes change data for every MERGE that is not insert-only.
  if (change_data) SILT_RETURN_NOT_OK(writer->WriteChangeData());
  int64_t matched_counts[2] = {0, 0};  // updated, deleted
  int64_t by_source_counts[2] = {0, 0};
  int64_t scan_ms = 0;
  const bool cross = used_keys.empty();
  for (const delta::AddFile* file : files) {
    const int64_t read_start = NowMillis();
    Result<TargetRows> rows = ReadTargetFile(*table, snapshot, *file);
    if (!rows.ok()) return fail(rows.status());
    scan_ms += NowMillis() - read_start;
    RecordBatchPtr target = scope.AsSide(Scope::kTarget, rows->rows);
    const int64_t nt = target->num_rows;
    // Probe.
    std::vector<int64_t> ti, si;
    if (cross) {
      for (int64_t i = 0; i < nt; ++i) {
        for (int64_t j = 0; j < num_source; ++j) {
          ti.push_back(i);
          si.push_back(j);
        }
      }
    } else {
      Result<EncodedKeys> encoded =
          EncodeKeys(target_keys, used_keys, codec, *target, ctx, nullptr);
      if (!encoded.ok()) return fail(encoded.status());
      for (int64_t i = 0; i < nt; ++i) {
        if (!encoded->usable[static_cast<size_t>(i)]) continue;
        auto it = hash.find(encoded->keys[static_cast<size_t>(i)]);
        if (it == hash.end()) continue;
        for (int64_t j : it->second) {
          ti.push_back(i);
          si.push_back(j);
        }
      }
    }
    // The full ON over the candidate pairs.
    std::vector<int64_t> mt, ms;  // matched pairs
    if (!ti.empty()) {
      RecordBatchPtr pairs = JoinRows(scope, target.get(), &ti, source_side.get(), &si,
                                      static_cast<int64_t>(ti.size()));
      Result<std::vector<uint8_t>> holds = EvaluateTrue(on_bound.get(), *pairs, ctx);
      if (!holds.ok()) return fail(holds.status().WithContextParts(context));
      for (size_t p = 0; p < ti.size(); ++p) {
        if (!(*holds)[p]) continue;
        mt.push_back(ti[p]);
        ms.push_back(si[p]);
      }
    }
    std::vector<int32_t> match_count(static_cast<size_t>(nt), 0);
    for (size_t p = 0; p < mt.size(); ++p) {
      source_matched[static_cast<size_t>(ms[p])] = 1;
      ++match_count[static_cast<size_t>(mt[p])];
    }
    if (insert_only) continue;
    if (!multiple_matches_ok) {
      for (int32_t c : match_count) {
        if (c > 1) {
          return fail(Status::InvalidArgument(
              "[DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE] Cannot perform Merge as "
              "multiple source rows matched and attempted to modify the same target row in the "
              "Delta table in possibly conflicting ways. By SQL semantics of Merge, when "
              "multiple source rows match on the same target row, the result may be ambiguous "
              "as it is unclear which source row should be used to update or delete the "
              "matching target row. You can preprocess the source table to eliminate the "
              "possibility of multiple matches (",
              context, ")"));
        }
      }
    }
    FileChange change;
    change.file = file;
    change.rows = rows->rows;
    change.row_metadata = rows->row_metadata;
    std::vector<uint8_t> updated_row(change_data ? static_cast<size_t>(nt) : 0, 0);
    std::vector<RecordBatchPtr> replacement;
    if (!mt.empty() && !matched->empty()) {
      RecordBatchPtr pairs = JoinRows(scope, target.get(), &mt, source_side.get(), &ms,
                                      static_cast<int64_t>(mt.size()));
      Result<ClauseList::Outcome> outcome = matched->Apply(pairs, ctx);
      if (!outcome.ok()) return fail(outcome.status());
      // A target row counts once, also when (an unconditional DELETE)
      // several source rows matched it, as delta-spark counts.
      std::vector<uint8_t> acted(static_cast<size_t>(nt), 0);
      for (size_t p = 0; p < mt.size(); ++p) {
        int c = outcome->chosen[p];
        if (c < 0 || acted[static_cast<size_t>(mt[p])]) continue;
        acted[static_cast<size_t>(mt[p])] = 1;
        change.dropped.push_back(mt[p]);
        const bool del = matched->kind(static_cast<size_t>(c)) == ActionKind::kDelete;
        if (change_data && !del) updated_row[static_cast<size_t>(mt[p])] = 1;
        ++matched_counts[del ? 1 : 0];
      }
      if (outcome->written) replacement.push_back(outcome->written);
      for (int64_t from : outcome->written_from) {
        change.replacement_of.push_back(mt[static_cast<size_t>(from)]);
      }
    }
    if (!by_source->empty()) {
      std::vector<int64_t> unmatched;
      for (int64_t i = 0; i < nt; ++i) {
        if (match_count[static_cast<size_t>(i)] == 0) unmatched.push_back(i);
      }
      if (!unmatched.empty()) {
        RecordBatchPtr lone = JoinRows(scope, target.get(), &unmatched, nullptr, nullptr,
                                       static_cast<int64_t>(unmatched.size()));
        Result<ClauseList::Outcome> outcome = by_source->Apply(lone, ctx);
        if (!outcome.ok()) return fail(outcome.status());
        for (size_t p = 0; p < unmatched.size(); ++p) {
          int c = outcome->chosen[p];
          if (c < 0) continue;
          change.dropped.push_back(unmatched[p]);
          const bool del = by_source->kind(static_cast<size_t>(c)) == ActionKind::kDelete;
          if (change_data && !del) updated_row[static_cast<size_t>(unmatched[p])] = 1;
          ++by_source_counts[del ? 1 : 0];
        }
        if (outcome->written) replacement.push_back(outcome->written);
        for (int64_t from : outcome->written_from) {
          change.replacement_of.push_back(unmatched[static_cast<size_t>(from)]);
        }
      }
    }
    // Touched as delta-spark's copy-on-write decides (FileChange::rewrite).
    bool any_unmatched = false;
    for (int32_t c : match_count) any_unmatched |= c == 0;
    change.rewrite = (!matched->empty() && !mt.empty()) || (!by_source->empty() && any_unmatched);
    if (change.dropped.empty() && !change.rewrite) continue;
    std::sort(change.dropped.begin(), change.dropped.end());
    change.dropped.erase(std::unique(change.dropped.begin(), change.dropped.end()),
                         change.dropped.end());
    if (change_data) {
      for (int64_t i : change.dropped)
        change.updated.push_back(updated_row[static_cast<size_t>(i)]);
    }
    if (replacement.size() == 1) {
      change.replacement = replacement[0];
    } else if (!replacement.empty()) {
      change.replacement = columnar::ConcatBatches(replacement);
    }
    Status st = writer->Apply(change);
    if (!st.ok()) return fail(st);
  }

  // Inserts: the source rows no target row matched.
  int64_t inserted = 0;
  if (!not_matched->empty()) {
    std::vector<int64_t> unmatched;
    for (int64_t j = 0; j < num_source; ++j) {
      if (!source_matched[static_cast<size_t>(j)]) unmatched.push_back(j);
    }
    if (!unmatched.empty()) {
      RecordBatchPtr lone = JoinRows(scope, nullptr, nullptr, source_side.get(), &unmatched,
                                     static_cast<int64_t>(unmatched.size()));
      Result<ClauseList::Outcome> outcome = not_matched->Apply(lone, ctx);
      if (!outcome.ok()) return fail(outcome.status());
      if (outcome->written) {
        inserted = outcome->written->num_rows;
        Status st = writer->Insert(outcome->written);
        if (!st.ok()) return fail(st);
      }
    }
  }

  Status finished = writer->Finish();
  if (!finished.ok()) return fail(finished.WithContextParts(context));
  const int64_t updated = matched_counts[0] + by_source_counts[0];
  const int64_t deleted = matched_counts[1] + by_source_counts[1];
  result.num_updated_rows = updated;
  result.num_deleted_rows = deleted;
  result.num_inserted_rows = inserted;
  result.num_affected_rows = updated + deleted + inserted;

  DmlCommit commit;
  commit.operation = "MERGE";
  commit.rules = rules.get();
  commit.parameters["predicate"] = JsonStrings({spec.on->ToString()});
  commit.parameters["matchedPredicates"] =
      ClauseParameters(spec.clauses, expr::MergeMatch::kMatched);
  commit.parameters["notMatchedPredicates"] =
      ClauseParameters(spec.clauses, expr::MergeMatch::kNotMatched);
  commit.parameters["notMatchedBySourcePredicates"] =
      ClauseParameters(spec.clauses, expr::MergeMatch::kNotMatchedBySource);
  commit.read.whole_table = pruning.empty() && !files.empty();
  if (!pruning.empty()) commit.read.predicates.push_back(pruning);
  for (const delta::AddFile* f : files) commit.read.files.push_back(f->path);
  const int64_t copied = writer->copied_rows();
  const int64_t elapsed = NowMillis() - start_ms;
  commit.metrics = {
      {"numSourceRows", std::to_string(num_source)},
      {"numTargetRowsInserted", std::to_string(inserted)},
      {"numTargetRowsUpdated", std::to_string(updated)},
      {"numTargetRowsMatchedUpdated", std::to_string(matched_counts[0])},
      {"numTargetRowsNotMatchedBySourceUpdated", std::to_string(by_source_counts[0])},
      {"numTargetRowsDeleted", std::to_string(deleted)},
      {"numTargetRowsMatchedDeleted", std::to_string(matched_counts[1])},
      {"numTargetRowsNotMatchedBySourceDeleted", std::to_string(by_source_counts[1])},
      {"numTargetRowsCopied", std::to_string(copied)},
      {"numOutputRows", std::to_string(inserted + updated + copied)},
      {"numTargetFilesAdded", std::to_string(writer->new_files())},
      {"numTargetFilesRemoved", std::to_string(writer->removed_files())},
      {"numTargetChangeFilesAdded", std::to_string(writer->cdc_files().size())},
      {"numTargetBytesAdded", std::to_string(writer->new_bytes())},
      {"numTargetBytesRemoved", std::to_string(writer->removed_bytes())},
      {"numTargetDeletionVectorsAdded", std::to_string(writer->deletion_vectors_added())},
      {"numTargetDeletionVectorsRemoved", std::to_string(writer->deletion_vectors_removed())},
      {"numTargetDeletionVectorsUpdated", std::to_string(writer->deletion_vectors_updated())},
      {"executionTimeMs", std::to_string(elapsed)},
      {"materializeSourceTimeMs", std::to_string(materialize_ms)},
      {"scanTimeMs", std::to_string(scan_ms)},
      {"rewriteTimeMs", std::to_string(std::max<int64_t>(0, elapsed - scan_ms - materialize_ms))}};
  SILT_RETURN_NOT_OK(CommitDml(table, snapshot, writer.get(), std::move(commit), options, &result));
  return result;
}

}  // namespace silt::dml
