#include "silt/expr/filter.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include "silt/expr/expression.h"
#include "silt/expr/kernel/bind_session_internal.h"
#include "silt/expr/parse/ast.h"

namespace silt::expr {

namespace {

using columnar::ColumnPtr;
using columnar::RecordBatchPtr;

// The top-level AND operands of `node`, left to right.
void SplitConjuncts(const NodePtr& node, std::vector<NodePtr>* out) {
  if (node->kind() == NodeKind::kBinary) {
    const auto& binary = static_cast<const BinaryNode&>(*node);
    if (binary.op() == BinaryOp::kAnd) {
      SplitConjuncts(binary.left(), out);
      SplitConjuncts(binary.right(), out);
      return;
    }
  }
  out->push_back(node);
}

// Functions that cost far more per row than a comparison: parsers and
// regular expressions.
bool IsExpensiveFunction(std::string_view lower_name) {
  return lower_name == "get_json_object" || lower_name == "from_json" ||
         lower_name == "json_tuple" || lower_name == "schema_of_json" || lower_name == "to_json" ||
         lower_name == "rlike" || lower_name == "regexp" || lower_name == "regexp_like" ||
         lower_name.starts_with("regexp_") || lower_name == "parse_url" || lower_name == "from_csv";
}

// A rough per-row cost: one per operator, many for parsers.
int64_t Cost(const Node& node) {
  switch (node.kind()) {
    case NodeKind::kLiteral:
    case NodeKind::kColumnRef:
    case NodeKind::kStar: return 0;
    case NodeKind::kFieldAccess: return Cost(*static_cast<const FieldAccessNode&>(node).child());
    case NodeKind::kAlias: return Cost(*static_cast<const AliasNode&>(node).child());
    case NodeKind::kCast: return 2 + Cost(*static_cast<const CastNode&>(node).child());
    case NodeKind::kUnary: return 1 + Cost(*static_cast<const UnaryNode&>(node).child());
    case NodeKind::kIsNull: return 1 + Cost(*static_cast<const IsNullNode&>(node).child());
    case NodeKind::kBinary: {
      const auto& binary = static_cast<const BinaryNode&>(node);
      return 1 + Cost(*binary.left()) + Cost(*binary.right());
    }
    case NodeKind::kCall: {
      const auto& call = static_cast<const CallNode&>(node);
      std::string name = call.name();
      for (char& c : name) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      }
      int64_t cost = IsExpensiveFunction(name) ? 100 : 4;
      for (const NodePtr& arg : call.args()) cost += Cost(*arg);
      return cost;
    }
  }
  return 1;
}

// keep &= (predicate is TRUE), a byte of the bitmaps at a time. Returns
// whether any row is still kept.
bool AndTrueRows(const columnar::Column& predicate, std::vector<uint8_t>* keep) {
  const uint8_t* values = predicate.values->data();
  const uint8_t* valid = predicate.validity != nullptr ? predicate.validity->data() : nullptr;
  uint8_t any = 0;
  for (size_t byte_idx = 0; byte_idx < keep->size(); ++byte_idx) {
    uint8_t bits = values[byte_idx];
    if (valid != nullptr) bits &= valid[byte_idx];
    (*keep)[byte_idx] &= bits;
    any |= (*keep)[byte_idx];
  }
  return any != 0;
}

}  // namespace

BoundFilter::~BoundFilter() = default;

Result<std::unique_ptr<BoundFilter>> BoundFilter::Make(const Expression& predicate,
                                                       const columnar::SchemaPtr& input_schema,
                                                       const EvalOptions& options,
                                                       BindSession* session) {
  const auto* node = dynamic_cast<const Node*>(&predicate);
  if (node == nullptr) {
    return Status::InvalidArgument("Expression '", predicate.ToString(),
                                   "' was not created by ParseExpression");
  }
  // Without a session, the conjuncts still share the parses among
  // themselves.
  BindSession own_session;
  if (session == nullptr) session = &own_session;
  auto out = std::unique_ptr<BoundFilter>(new BoundFilter());
  out->scope_ = session->state().row_scope;
  // The whole predicate gives the errors and the type a user expects.
  SILT_ASSIGN_OR_RETURN(out->whole_, Bind(predicate, input_schema, options, session));
  if (out->whole_->type()->id() != columnar::TypeId::kBoolean) return out;
  std::vector<NodePtr> parts;
  // The root is owned by the caller's ExpressionPtr: split below it.
  if (node->kind() == NodeKind::kBinary &&
      static_cast<const BinaryNode*>(node)->op() == BinaryOp::kAnd) {
    const auto* binary = static_cast<const BinaryNode*>(node);
    SplitConjuncts(binary->left(), &parts);
    SplitConjuncts(binary->right(), &parts);
  }
  if (parts.size() < 2) return out;
  if (!options.ansi) {
    // Cheapest first. ANSI mode keeps the written order, so the error a
    // failing conjunct raises is the one Spark raises.
    std::stable_sort(parts.begin(), parts.end(),
                     [](const NodePtr& a, const NodePtr& b) { return Cost(*a) < Cost(*b); });
  }
  std::vector<BoundExpressionPtr> conjuncts;
  for (const NodePtr& part : parts) {
    SILT_ASSIGN_OR_RETURN(BoundExpressionPtr bound, Bind(*part, input_schema, options, session));
    // AND accepts what Spark coerces to BOOLEAN; keep such a predicate whole.
    if (bound->type()->id() != columnar::TypeId::kBoolean) return out;
    conjuncts.push_back(std::move(bound));
  }
  out->conjuncts_ = std::move(conjuncts);
  return out;
}

Result<RecordBatchPtr> BoundFilter::Filter(const RecordBatchPtr& batch, const EvalContext& ctx) {
  if (whole_->type()->id() != columnar::TypeId::kBoolean) {
    return Status::InvalidArgument("The filter predicate ", whole_->name(), " has type ",
                                   whole_->type()->ToDdl(), "; expected BOOLEAN");
  }
  RowScope& scope = *scope_;
  scope.kept_rows.clear();
  scope.kept_from_rows = -1;
  const int64_t num_rows = batch->num_rows;
  if (num_rows == 0) return batch;
  keep_.assign(static_cast<size_t>((num_rows + 7) / 8), 0xFF);
  if (num_rows % 8 != 0) keep_.back() = static_cast<uint8_t>((1u << (num_rows % 8)) - 1);
  bool any = true;
  if (conjuncts_.empty()) {
    SILT_ASSIGN_OR_RETURN(ColumnPtr predicate, whole_->Evaluate(*batch, ctx));
    any = AndTrueRows(*predicate, &keep_);
  } else {
    for (size_t conjunct_idx = 0; conjunct_idx < conjuncts_.size() && any; ++conjunct_idx) {
      // Later conjuncts matter only where the earlier ones were TRUE.
      if (conjunct_idx > 0) {
        scope.active_rows = keep_.data();
        scope.active_length = num_rows;
      }
      Result<ColumnPtr> predicate = conjuncts_[conjunct_idx]->Evaluate(*batch, ctx);
      scope.active_rows = nullptr;
      scope.active_length = 0;
      if (!predicate.ok()) return predicate.status();
      any = AndTrueRows(**predicate, &keep_);
    }
  }
  std::vector<int64_t>& rows = scope.kept_rows;
  if (any) {
    rows.reserve(static_cast<size_t>(num_rows));
    for (size_t byte_idx = 0; byte_idx < keep_.size(); ++byte_idx) {
      uint8_t bits = keep_[byte_idx];
      while (bits != 0) {
        int bit = __builtin_ctz(bits);
        rows.push_back(static_cast<int64_t>(byte_idx) * 8 + bit);
        bits = static_cast<uint8_t>(bits & (bits - 1));
      }
    }
  }
  if (static_cast<int64_t>(rows.size()) == num_rows) {
    rows.clear();
    return batch;
  }
  scope.kept_from_rows = num_rows;
  return columnar::TakeBatch(*batch, rows);
}

const std::vector<int64_t>* BoundFilter::last_kept_rows() const {
  return scope_->kept_from_rows < 0 ? nullptr : &scope_->kept_rows;
}

}  // namespace silt::expr
