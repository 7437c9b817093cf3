#include "silt/stream/ops/static_join.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "silt/base/strings.h"
#include "silt/delta/table.h"
#include "silt/expr/parse/ast.h"
#include "silt/fs/file_system.h"
#include "silt/stream/column_util_internal.h"
#include "silt/stream/ops/transform.h"
#include "silt/stream/options_internal.h"

namespace silt::stream {

using columnar::ColumnPtr;
using columnar::Field;
using columnar::RecordBatch;
using columnar::RecordBatchPtr;
using columnar::SchemaPtr;
using columnar::TypeId;
using columnar::TypePtr;

Result<exec::JoinType> ParseJoinType(std::string_view how) {
  std::string name;
  for (char c : how) {
    if (c != '_') name.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  if (name == "inner") return exec::JoinType::kInner;
  if (name == "left" || name == "leftouter") return exec::JoinType::kLeftOuter;
  if (name == "semi" || name == "leftsemi") return exec::JoinType::kLeftSemi;
  if (name == "anti" || name == "leftanti") return exec::JoinType::kLeftAnti;
  if (name == "right" || name == "rightouter" || name == "full" || name == "fullouter" ||
      name == "outer" || name == "cross") {
    return Status::NotSupported(
        "'", how,
        "' is not supported between a stream and a static table (Spark supports inner, left "
        "outer, left semi and left anti joins with the stream on the left)");
  }
  return Status::InvalidArgument("unknown join type '", how,
                                 "'; expected inner, left, left_semi or left_anti");
}

namespace {

// Spark's numeric widening order for the types a join key may compare in;
// 0 for the rest (decimals included: their common type needs precision
// rules this step does not apply).
int NumericRank(TypeId id) {
  switch (id) {
    case TypeId::kByte: return 1;
    case TypeId::kShort: return 2;
    case TypeId::kInt: return 3;
    case TypeId::kLong: return 4;
    case TypeId::kFloat: return 5;
    case TypeId::kDouble: return 6;
    default: return 0;
  }
}

std::string ColumnList(const columnar::DataType& schema) {
  std::string out;
  for (const Field& field : schema.fields()) {
    if (!out.empty()) out += ", ";
    out += expr::BackquoteIdentifier(field.name);
  }
  return "[" + out + "]";
}

Result<expr::BoundExpressionPtr> BindKey(const std::string& text, const SchemaPtr& schema,
                                         const expr::EvalOptions& options) {
  SILT_ASSIGN_OR_RETURN(expr::ExpressionPtr parsed, expr::ParseExpression(text));
  return expr::Bind(*parsed, schema, options);
}

Result<std::vector<ColumnPtr>> EvaluateKeys(const std::vector<expr::BoundExpressionPtr>& keys,
                                            const RecordBatch& batch,
                                            const expr::EvalContext& ctx) {
  std::vector<ColumnPtr> out;
  for (const expr::BoundExpressionPtr& key : keys) {
    SILT_ASSIGN_OR_RETURN(ColumnPtr column, key->Evaluate(batch, ctx));
    out.push_back(std::move(column));
  }
  return out;
}

using internal::MakeBatch;

class StaticJoinStep final : public TransformStepImpl {
 public:
  static Result<std::unique_ptr<TransformStepImpl>> Make(const TransformStep& step,
                                                         const SchemaPtr& input,
                                                         const expr::EvalOptions& options) {
    auto out = std::unique_ptr<StaticJoinStep>(new StaticJoinStep());
    out->key_path_ = step.key_path + ".join";
    SILT_RETURN_NOT_OK(out->Bind(step, input, options).WithContext(out->key_path_));
    return std::unique_ptr<TransformStepImpl>(std::move(out));
  }

  void StartBatch() override { refresh_ = true; }

  Result<RecordBatchPtr> Apply(const RecordBatchPtr& batch, const expr::EvalContext& ctx) override {
    if (refresh_) {
      refresh_ = false;
      SILT_RETURN_NOT_OK(Refresh().WithContext(key_path_));
    }
    Result<std::vector<ColumnPtr>> keys = EvaluateKeys(probe_keys_, *batch, ctx);
    if (!keys.ok()) return keys.status().WithContextParts(key_path_, ".on");
    exec::JoinMatches matches;
    hash_->Probe(*keys, batch->num_rows, type_, &matches);
    std::vector<ColumnPtr> columns;
    columns.reserve(probe_out_.size() + build_out_.size());
    for (int column : probe_out_) {
      columns.push_back(columnar::TakeColumn(*batch->column(column), matches.probe_rows));
    }
    if (!build_out_.empty()) {
      // An unmatched row takes the build side's trailing null row.
      const int64_t null_row = build_->num_rows - 1;
      for (int64_t& row : matches.build_rows) {
        if (row == exec::JoinMatches::kNoMatch) row = null_row;
      }
      for (int column : build_out_) {
        columns.push_back(columnar::TakeColumn(*build_->column(column), matches.build_rows));
      }
    }
    return MakeBatch(output_schema_, static_cast<int64_t>(matches.probe_rows.size()),
                     std::move(columns));
  }

 private:
  StaticJoinStep() = default;

  Status Bind(const TransformStep& step, const SchemaPtr& input, const expr::EvalOptions& options) {
    Result<exec::JoinType> type = ParseJoinType(step.join_how);
    if (!type.ok()) return type.status().WithContext("how");
    type_ = *type;
    const StaticTableSpec& with = step.join_with;
    path_ = with.path;
    SILT_ASSIGN_OR_RETURN(fs_, fs::FileSystemForPath(path_));
    SILT_ASSIGN_OR_RETURN(table_, delta::DeltaTable::Open(fs_, path_));
    Result<delta::SnapshotPtr> latest = table_->LatestSnapshot();
    if (!latest.ok()) {
      if (latest.status().IsNotFound()) {
        return Status::InvalidArgument("with.path: '", path_, "' is not a Delta table");
      }
      return latest.status().WithContextParts("with.path: Delta table ", path_);
    }
    table_schema_ = (*latest)->schema();
    if (table_schema_ == nullptr || table_schema_->num_fields() == 0) {
      return Status::InvalidArgument("with.path: Delta table ", path_, " has no schema");
    }
    std::vector<TransformStep> static_steps;
    if (!with.where.empty()) {
      TransformStep where;
      where.kind = "where";
      where.exprs.push_back(with.where);
      where.key_path = "with";
      static_steps.push_back(std::move(where));
    }
    if (!with.select.empty()) {
      TransformStep select;
      select.kind = "select";
      select.exprs = with.select;
      select.key_path = "with";
      static_steps.push_back(std::move(select));
    }
    static_schema_ = table_schema_;
    if (!static_steps.empty()) {
      SILT_ASSIGN_OR_RETURN(static_transform_,
                            Transform::Make(static_steps, table_schema_, options));
      static_schema_ = static_transform_->output_schema();
    }

    // The USING columns: key expressions per side (a cast to the wider
    // numeric type where the two differ) and the output layout.
    std::vector<bool> left_key(static_cast<size_t>(input->num_fields()), false);
    std::vector<bool> right_key(static_cast<size_t>(static_schema_->num_fields()), false);
    std::vector<Field> fields;
    for (size_t k = 0; k < step.exprs.size(); ++k) {
      const std::string& name = step.exprs[k];
      const std::string on_path = "on[" + std::to_string(k) + "]";
      const int li = input->FieldIndex(name);
      const int ri = static_schema_->FieldIndex(name);
      if (li < 0 || ri < 0) {
        return Status::InvalidArgument(
            on_path, ": [UNRESOLVED_USING_COLUMN_FOR_JOIN] USING column ",
            expr::BackquoteIdentifier(name), " cannot be resolved on the ",
            li < 0 ? "left (stream)" : "right (static table)", " side of the join. The ",
            li < 0 ? "left" : "right",
            "-side columns: ", ColumnList(li < 0 ? *input : *static_schema_));
      }
      if (left_key[static_cast<size_t>(li)]) {
        return Status::InvalidArgument(on_path, ": the column ", expr::BackquoteIdentifier(name),
                                       " is named twice");
      }
      left_key[static_cast<size_t>(li)] = true;
      right_key[static_cast<size_t>(ri)] = true;
      const TypePtr& lt = input->field(li).type;
      const TypePtr& rt = static_schema_->field(ri).type;
      std::string left_text = expr::BackquoteIdentifier(input->field(li).name);
      std::string right_text = expr::BackquoteIdentifier(static_schema_->field(ri).name);
      if (!lt->Equals(*rt)) {
        const int lr = NumericRank(lt->id());
        const int rr = NumericRank(rt->id());
        if (lr == 0 || rr == 0) {
          return Status::InvalidArgument(
              on_path, ": the join column ", expr::BackquoteIdentifier(name), " is ", lt->ToDdl(),
              " in the stream and ", rt->ToDdl(),
              " in the static table; cast one side to the other's type (a select before the "
              "join, or with.select)");
        }
        const std::string wider = (lr > rr ? lt : rt)->ToDdl();
        (lr > rr ? right_text : left_text) =
            "CAST(" + (lr > rr ? right_text : left_text) + " AS " + wider + ")";
      }
      Result<expr::BoundExpressionPtr> probe = BindKey(left_text, input, options);
      if (!probe.ok()) return probe.status().WithContext(on_path);
      Result<expr::BoundExpressionPtr> build = BindKey(right_text, static_schema_, options);
      if (!build.ok()) return build.status().WithContext(on_path);
      probe_keys_.push_back(std::move(*probe));
      build_keys_.push_back(std::move(*build));
      probe_out_.push_back(li);
      fields.push_back(input->field(li));
    }
    for (int i = 0; i < input->num_fields(); ++i) {
      if (left_key[static_cast<size_t>(i)]) continue;
      probe_out_.push_back(i);
      fields.push_back(input->field(i));
    }
    if (type_ == exec::JoinType::kInner || type_ == exec::JoinType::kLeftOuter) {
      for (int i = 0; i < static_schema_->num_fields(); ++i) {
        if (right_key[static_cast<size_t>(i)]) continue;
        build_out_.push_back(i);
        Field field = static_schema_->field(i);
        if (type_ == exec::JoinType::kLeftOuter) field.nullable = true;
        fields.push_back(std::move(field));
      }
    }
    output_schema_ = columnar::DataType::Struct(std::move(fields));
    return Load(std::move(*latest));
  }

  // A newer version of the static table, if one was committed.
  Status Refresh() {
    Result<delta::SnapshotPtr> latest = table_->Update(snapshot_);
    if (!latest.ok()) return latest.status().WithContextParts("static table ", path_);
    if ((*latest)->version() == snapshot_->version()) return Status::OK();
    return Load(std::move(*latest));
  }

  // Reads `snapshot` whole through with.where/select and hashes it.
  Status Load(delta::SnapshotPtr snapshot) {
    const SchemaPtr& now = snapshot->schema();
    std::vector<std::string> columns;
    for (const Field& field : table_schema_->fields()) {
      const int idx = now == nullptr ? -1 : now->FieldIndex(field.name);
      if (idx < 0 || !now->field(idx).type->Equals(*field.type)) {
        return Status::InvalidArgument(
            "[DELTA_SCHEMA_CHANGE_SINCE_ANALYSIS] the static table ", path_,
            " changed its schema at version ", snapshot->version(), ": column ",
            expr::BackquoteIdentifier(field.name),
            idx < 0 ? std::string(" was dropped")
                    : " is now " + now->field(idx).type->ToDdl() + ", was " + field.type->ToDdl(),
            ". Restart the query to join the new schema");
      }
      columns.push_back(field.name);
    }
    Result<std::unique_ptr<delta::TableScan>> scan =
        delta::TableScan::Make(fs_, path_, snapshot, std::move(columns));
    if (!scan.ok()) return scan.status().WithContextParts("static table ", path_);
    std::vector<RecordBatchPtr> batches;
    const expr::EvalContext ctx;
    while (true) {
      Result<RecordBatchPtr> next = (*scan)->Next();
      if (!next.ok()) return next.status().WithContextParts("static table ", path_);
      if (*next == nullptr) break;
      RecordBatchPtr rows = *next;
      if (static_transform_ != nullptr) {
        SILT_ASSIGN_OR_RETURN(rows, static_transform_->ProcessStateless(rows, ctx));
      }
      if (rows != nullptr && rows->num_rows > 0) batches.push_back(std::move(rows));
    }
    RecordBatchPtr build;
    if (batches.empty()) {
      std::vector<ColumnPtr> empty;
      for (const Field& field : static_schema_->fields()) {
        empty.push_back(columnar::MakeNullColumn(field.type, 0));
      }
      build = MakeBatch(static_schema_, 0, std::move(empty));
    } else {
      build = columnar::ConcatBatches(batches);
    }
    Result<std::vector<ColumnPtr>> keys = EvaluateKeys(build_keys_, *build, ctx);
    if (!keys.ok()) return keys.status().WithContext("on");
    SILT_ASSIGN_OR_RETURN(exec::JoinHashTable hash,
                          exec::JoinHashTable::Build(*keys, build->num_rows));
    hash_.emplace(std::move(hash));
    // One null row at the end, which an unmatched stream row of a left
    // outer join takes.
    std::vector<ColumnPtr> with_null;
    for (int i = 0; i < build->num_columns(); ++i) {
      with_null.push_back(columnar::ConcatColumns(
          {build->column(i), columnar::MakeNullColumn(build->column(i)->type, 1)}));
    }
    build_ = MakeBatch(static_schema_, build->num_rows + 1, std::move(with_null));
    snapshot_ = std::move(snapshot);
    return Status::OK();
  }

  std::string path_;
  fs::FileSystemPtr fs_;
  std::unique_ptr<delta::DeltaTable> table_;
  delta::SnapshotPtr snapshot_;
  // The static table's columns when the query started, and after
  // with.where/select.
  SchemaPtr table_schema_;
  SchemaPtr static_schema_;
  std::unique_ptr<Transform> static_transform_;
  exec::JoinType type_ = exec::JoinType::kInner;
  std::vector<expr::BoundExpressionPtr> probe_keys_;
  std::vector<expr::BoundExpressionPtr> build_keys_;
  // Output columns: stream columns (join columns first), then static ones.
  std::vector<int> probe_out_;
  std::vector<int> build_out_;
  RecordBatchPtr build_;
  std::optional<exec::JoinHashTable> hash_;
  bool refresh_ = false;
};

}  // namespace

Result<std::unique_ptr<TransformStepImpl>> MakeStaticJoinStep(const TransformStep& step,
                                                              const SchemaPtr& input,
                                                              const expr::EvalOptions& options) {
  return StaticJoinStep::Make(step, input, options);
}

}  // namespace silt::stream
