#include "silt/expr/parse/ast.h"

#include <cstdio>

#include "silt/base/json_writer.h"
#include "silt/base/strings.h"
#include "silt/columnar/temporal.h"
#include "silt/expr/value/decimal_util.h"

namespace silt::expr {

namespace {

using columnar::TypeId;

std::string JoinParts(const std::vector<std::string>& parts, bool quote) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out.push_back('.');
    out += quote ? QuoteIdentifierIfNeeded(parts[i]) : parts[i];
  }
  return out;
}

std::string QuoteSqlString(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('\'');
  return out;
}

std::string HexBytes(const std::string& s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    out.push_back(kHex[u >> 4]);
    out.push_back(kHex[u & 15]);
  }
  return out;
}

// The literal's value as Java's toString prints it (Spark names numeric
// literal columns this way).
std::string NumericText(const LiteralNode::Value& v) {
  switch (v.type->id()) {
    case TypeId::kByte:
    case TypeId::kShort:
    case TypeId::kInt:
    case TypeId::kLong: return std::to_string(v.int_value);
    case TypeId::kFloat: return FormatFloatJava(static_cast<float>(v.double_value));
    case TypeId::kDouble: return FormatDoubleJava(v.double_value);
    case TypeId::kDecimal: {
      std::string out;
      AppendDecimalJava(v.decimal_value, v.type->scale(), &out);
      return out;
    }
    default: return {};
  }
}

}  // namespace

const char* BinaryOpSymbol(BinaryOp op) {
  switch (op) {
    case BinaryOp::kOr: return "OR";
    case BinaryOp::kAnd: return "AND";
    case BinaryOp::kEq: return "=";
    case BinaryOp::kNotEq: return "!=";
    case BinaryOp::kNullSafeEq: return "<=>";
    case BinaryOp::kLt: return "<";
    case BinaryOp::kLe: return "<=";
    case BinaryOp::kGt: return ">";
    case BinaryOp::kGe: return ">=";
    case BinaryOp::kAdd: return "+";
    case BinaryOp::kSubtract: return "-";
    case BinaryOp::kMultiply: return "*";
    case BinaryOp::kDivide: return "/";
    case BinaryOp::kRemainder: return "%";
    case BinaryOp::kIntegralDivide: return "div";
    case BinaryOp::kConcat: return "||";
    case BinaryOp::kBitAnd: return "&";
    case BinaryOp::kBitOr: return "|";
    case BinaryOp::kBitXor: return "^";
  }
  return "?";
}

std::string QuoteIdentifierIfNeeded(const std::string& name) {
  bool plain = !name.empty() && !(name[0] >= '0' && name[0] <= '9');
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) {
      plain = false;
    }
  }
  return plain ? name : BackquoteIdentifier(name);
}

std::string BackquoteIdentifier(std::string_view name) {
  std::string out = "`";
  for (char c : name) {
    if (c == '`') out.push_back('`');
    out.push_back(c);
  }
  out.push_back('`');
  return out;
}

std::string PrettyCall(const std::string& name, const std::vector<std::string>& args) {
  std::string out = AsciiLower(name);
  out.push_back('(');
  for (size_t i = 0; i < args.size(); ++i) {
    if (i > 0) out += ", ";
    out += args[i];
  }
  out.push_back(')');
  return out;
}

std::string PrettyBinary(BinaryOp op, const std::string& left, const std::string& right) {
  switch (op) {
    case BinaryOp::kNotEq:
      // Spark parses != and <> as NOT(=).
      return "(NOT (" + left + " = " + right + "))";
    case BinaryOp::kConcat: return "concat(" + left + ", " + right + ")";
    default: return "(" + left + " " + BinaryOpSymbol(op) + " " + right + ")";
  }
}

std::string PrettyUnary(UnaryOp op, const std::string& child) {
  const char* prefix = "";
  const char* suffix = ")";
  switch (op) {
    case UnaryOp::kNot: prefix = "(NOT "; break;
    case UnaryOp::kNegate: prefix = "(- "; break;
    case UnaryOp::kPlus: prefix = "(+ "; break;
    case UnaryOp::kBitNot:
      prefix = "~";
      suffix = "";
      break;
  }
  std::string out = prefix;
  out += child;
  out += suffix;
  return out;
}

std::string PrettyCast(const std::string& child, const columnar::DataType& type, bool try_cast) {
  if (type.is_nested()) return child;
  return (try_cast ? "TRY_CAST(" : "CAST(") + child + " AS " + type.ToDdl() + ")";
}

std::string PrettyIsNull(const std::string& child, bool negated) {
  return "(" + child + (negated ? " IS NOT NULL)" : " IS NULL)");
}

std::string Node::OutputName() const {
  switch (kind()) {
    case NodeKind::kAlias: return static_cast<const AliasNode*>(this)->name();
    case NodeKind::kColumnRef: return static_cast<const ColumnRefNode*>(this)->parts().back();
    case NodeKind::kCast: {
      // Spark keeps the column's name for a cast of a top-level column.
      const NodePtr& child = static_cast<const CastNode*>(this)->child();
      if (child->kind() == NodeKind::kColumnRef &&
          static_cast<const ColumnRefNode*>(child.get())->parts().size() == 1) {
        return static_cast<const ColumnRefNode*>(child.get())->parts()[0];
      }
      return PrettySql();
    }
    default: return PrettySql();
  }
}

std::string LiteralNode::ToString() const {
  const Value& v = value_;
  if (v.is_null) return "NULL";
  switch (v.type->id()) {
    case TypeId::kBoolean: return v.int_value != 0 ? "true" : "false";
    case TypeId::kByte: return std::to_string(v.int_value) + "Y";
    case TypeId::kShort: return std::to_string(v.int_value) + "S";
    case TypeId::kInt: return std::to_string(v.int_value);
    case TypeId::kLong: return std::to_string(v.int_value) + "L";
    case TypeId::kFloat: return NumericText(v) + "F";
    case TypeId::kDouble: return NumericText(v) + "D";
    case TypeId::kDecimal: {
      std::string out;
      AppendDecimalPlain(v.decimal_value, v.type->scale(), &out);
      return out + "BD";
    }
    case TypeId::kString: return QuoteSqlString(v.string_value);
    case TypeId::kBinary: return "X'" + HexBytes(v.string_value) + "'";
    case TypeId::kDate:
      return "DATE '" + columnar::FormatDate(static_cast<int32_t>(v.int_value)) + "'";
    case TypeId::kTimestamp: return "TIMESTAMP " + QuoteSqlString(v.string_value);
    case TypeId::kTimestampNtz: return "TIMESTAMP_NTZ " + QuoteSqlString(v.string_value);
    default: return "NULL";
  }
}

std::string LiteralNode::PrettySql() const {
  const Value& v = value_;
  if (v.is_null) return "NULL";
  switch (v.type->id()) {
    case TypeId::kString: return v.string_value;
    case TypeId::kByte:
    case TypeId::kShort:
    case TypeId::kInt:
    case TypeId::kLong:
    case TypeId::kFloat:
    case TypeId::kDouble:
    case TypeId::kDecimal: return NumericText(v);
    default: return ToString();
  }
}

std::string ColumnRefNode::ToString() const { return JoinParts(parts_, true); }
std::string ColumnRefNode::PrettySql() const { return JoinParts(parts_, false); }

std::string FieldAccessNode::ToString() const {
  // A literal child is parenthesized: "5.y" would re-lex as the number "5."
  // (found by tests/fuzz/expr_parser_fuzzer).
  std::string child = child_->ToString();
  if (child_->kind() == NodeKind::kLiteral || child_->kind() == NodeKind::kUnary) {
    child = "(" + child + ")";
  }
  return child + "." + QuoteIdentifierIfNeeded(field_);
}
std::string FieldAccessNode::PrettySql() const { return child_->PrettySql() + "." + field_; }

std::string StarNode::StarQualifier() const { return JoinParts(qualifier_, false); }
std::string StarNode::ToString() const {
  if (qualifier_.empty()) return "*";
  return JoinParts(qualifier_, true) + ".*";
}

std::string CallNode::ToString() const {
  if (name_ == kCaseWhenCall) {
    std::string out = "CASE";
    size_t pair_idx = 0;
    for (; pair_idx + 1 < args_.size(); pair_idx += 2) {
      out += " WHEN " + args_[pair_idx]->ToString() + " THEN " + args_[pair_idx + 1]->ToString();
    }
    if (pair_idx < args_.size()) out += " ELSE " + args_[pair_idx]->ToString();
    return out + " END";
  }
  if (name_ == kSubscriptCall) {
    return "(" + args_[0]->ToString() + ")[" + args_[1]->ToString() + "]";
  }
  if (name_ == kInListCall) {
    std::string out = "(" + args_[0]->ToString() + " IN (";
    for (size_t i = 1; i < args_.size(); ++i) {
      if (i > 1) out += ", ";
      out += args_[i]->ToString();
    }
    return out + "))";
  }
  std::string out = name_ + "(";
  if (distinct_) out += "DISTINCT ";
  if (star_arg_) out += "*";
  for (size_t i = 0; i < args_.size(); ++i) {
    if (i > 0) out += ", ";
    out += args_[i]->ToString();
  }
  return out + ")";
}

std::string CallNode::PrettySql() const {
  if (name_ == kSubscriptCall) return args_[0]->PrettySql() + "[" + args_[1]->PrettySql() + "]";
  if (name_ == kCaseWhenCall || name_ == kInListCall) {
    std::vector<std::string> pretty;
    for (const NodePtr& arg : args_) pretty.push_back(arg->PrettySql());
    return name_ == kCaseWhenCall ? PrettyCaseWhen(pretty) : PrettyInList(pretty);
  }
  std::vector<std::string> args;
  if (star_arg_) {
    // Spark rewrites count(*) to count(1).
    args.push_back(AsciiLower(name_) == "count" ? "1" : "*");
  }
  for (const NodePtr& arg : args_) args.push_back(arg->PrettySql());
  if (distinct_ && !args.empty()) args[0] = "DISTINCT " + args[0];
  return PrettyCall(name_, args);
}

std::string CastNode::ToString() const {
  return (try_cast_ ? "TRY_CAST(" : "CAST(") + child_->ToString() + " AS " + type_->ToDdl() + ")";
}
std::string CastNode::PrettySql() const {
  return PrettyCast(child_->PrettySql(), *type_, try_cast_);
}

std::string UnaryNode::ToString() const { return PrettyUnary(op_, child_->ToString()); }
std::string UnaryNode::PrettySql() const { return PrettyUnary(op_, child_->PrettySql()); }

std::string BinaryNode::ToString() const {
  // Appends rather than chained operator+, which trips GCC 12's -Wrestrict.
  std::string out = "(";
  out += left_->ToString();
  out += ' ';
  out += BinaryOpSymbol(op_);
  out += ' ';
  out += right_->ToString();
  out += ')';
  return out;
}
std::string BinaryNode::PrettySql() const {
  return PrettyBinary(op_, left_->PrettySql(), right_->PrettySql());
}

std::string IsNullNode::ToString() const { return PrettyIsNull(child_->ToString(), negated_); }
std::string IsNullNode::PrettySql() const { return PrettyIsNull(child_->PrettySql(), negated_); }

std::string AliasNode::ToString() const {
  return child_->ToString() + " AS " + QuoteIdentifierIfNeeded(name_);
}

std::string PrettyCaseWhen(const std::vector<std::string>& args) {
  std::string out = "CASE";
  size_t pair_idx = 0;
  for (; pair_idx + 1 < args.size(); pair_idx += 2) {
    out += " WHEN " + args[pair_idx] + " THEN " + args[pair_idx + 1];
  }
  if (pair_idx < args.size()) out += " ELSE " + args[pair_idx];
  return out + " END";
}

std::string PrettyInList(const std::vector<std::string>& args) {
  std::string out = "(" + args[0] + " IN (";
  for (size_t i = 1; i < args.size(); ++i) {
    if (i > 1) out += ", ";
    out += args[i];
  }
  return out + "))";
}

}  // namespace silt::expr
