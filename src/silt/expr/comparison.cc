// Comparison operators = (==), <=>, <, <=, >, >=.
//
// Operands are brought to a common type as Spark's
// findCommonTypeForBinaryComparison does (a string next to a number is read
// as that number; a string next to a date or timestamp as a date or
// timestamp; decimal next to string as DOUBLE). Doubles compare like Spark:
// NaN equals NaN and is greater than every other value, -0.0 equals 0.0.
// Strings compare byte-wise (UTF-8 binary order).
#include <cmath>
#include <string_view>

#include "silt/expr/ast.h"
#include "silt/expr/cast.h"
#include "silt/expr/function_registry.h"
#include "silt/expr/kernel_util.h"
#include "silt/expr/type_util.h"

namespace silt::expr {

namespace {

using columnar::ColumnPtr;

enum class Cmp { kEq, kNullSafeEq, kLt, kLe, kGt, kGe };

template <typename T>
bool ValuesEqual(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return a == b || (std::isnan(a) && std::isnan(b));
  } else {
    return a == b;
  }
}

// -1, 0 or 1.
template <typename T>
int Compare3(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (a == b) return 0;
    bool na = std::isnan(a);
    bool nb = std::isnan(b);
    if (na || nb) return na && nb ? 0 : (na ? 1 : -1);
    return a < b ? -1 : 1;
  } else if constexpr (std::is_same_v<T, std::string_view>) {
    int c = a.compare(b);  // char_traits<char>::compare is unsigned byte order
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  } else {
    return a < b ? -1 : (a == b ? 0 : 1);
  }
}

template <Cmp kOp, typename T>
bool Apply(T a, T b) {
  if constexpr (kOp == Cmp::kEq || kOp == Cmp::kNullSafeEq) {
    return ValuesEqual(a, b);
  } else if constexpr (kOp == Cmp::kLt) {
    return Compare3(a, b) < 0;
  } else if constexpr (kOp == Cmp::kLe) {
    return Compare3(a, b) <= 0;
  } else if constexpr (kOp == Cmp::kGt) {
    return Compare3(a, b) > 0;
  } else {
    return Compare3(a, b) >= 0;
  }
}

template <typename Reader, Cmp kOp>
Result<ColumnPtr> CompareKernel(const KernelInfo& info, const ExecArgs& args) {
  int64_t n = args.num_rows;
  Reader a(args.args[0]);
  Reader b(args.args[1]);
  BoolWriter out(n);
  ValidityOut validity(n);
  if constexpr (kOp == Cmp::kNullSafeEq) {
    for (int64_t row = 0; row < n; ++row) {
      bool va = a.IsValid(row);
      bool vb = b.IsValid(row);
      out.Set(row, va && vb ? Apply<kOp>(a[row], b[row]) : (!va && !vb));
    }
    return out.Finish(info.type, &validity);
  }
  if (!validity.InitFromArgs(args.args)) return out.Finish(info.type, &validity);
  for (int64_t row = 0; row < n; ++row) out.Set(row, Apply<kOp>(a[row], b[row]));
  return out.Finish(info.type, &validity);
}

// Both operands of NULL type.
template <Cmp kOp>
Result<ColumnPtr> NullCompareKernel(const KernelInfo& info, const ExecArgs& args) {
  int64_t n = args.num_rows;
  BoolWriter out(n);
  ValidityOut validity(n);
  if constexpr (kOp == Cmp::kNullSafeEq) {
    for (int64_t row = 0; row < n; ++row) out.Set(row, true);
  } else {
    validity.SetAllNull();
  }
  return out.Finish(info.type, &validity);
}

template <Cmp kOp>
KernelFn PickCompare(TypeId id) {
  switch (id) {
    case TypeId::kNull: return &NullCompareKernel<kOp>;
    case TypeId::kBoolean: return &CompareKernel<BoolReader, kOp>;
    case TypeId::kByte: return &CompareKernel<FixedReader<int8_t>, kOp>;
    case TypeId::kShort: return &CompareKernel<FixedReader<int16_t>, kOp>;
    case TypeId::kInt:
    case TypeId::kDate: return &CompareKernel<FixedReader<int32_t>, kOp>;
    case TypeId::kLong:
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: return &CompareKernel<FixedReader<int64_t>, kOp>;
    case TypeId::kFloat: return &CompareKernel<FixedReader<float>, kOp>;
    case TypeId::kDouble: return &CompareKernel<FixedReader<double>, kOp>;
    case TypeId::kDecimal: return &CompareKernel<FixedReader<__int128>, kOp>;
    case TypeId::kString:
    case TypeId::kBinary: return &CompareKernel<StringReader, kOp>;
    default: return nullptr;
  }
}

BinaryOp ToBinaryOp(Cmp op) {
  switch (op) {
    case Cmp::kEq: return BinaryOp::kEq;
    case Cmp::kNullSafeEq: return BinaryOp::kNullSafeEq;
    case Cmp::kLt: return BinaryOp::kLt;
    case Cmp::kLe: return BinaryOp::kLe;
    case Cmp::kGt: return BinaryOp::kGt;
    case Cmp::kGe: return BinaryOp::kGe;
  }
  return BinaryOp::kEq;
}

template <Cmp kOp>
Result<BoundNodePtr> BindComparison(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 2, 2));
  TypePtr lt = site.args[0]->type();
  TypePtr rt = site.args[1]->type();
  TypePtr common = lt->Equals(*rt) ? lt : FindCommonTypeForComparison(lt, rt);
  if (common == nullptr) {
    return Status::InvalidArgument("Cannot compare ", site.args[0]->sql(), " (", TypeName(*lt),
                                   ") with ", site.args[1]->sql(), " (", TypeName(*rt), ") in '",
                                   site.text, "'");
  }
  for (BoundNodePtr& arg : site.args) {
    SILT_ASSIGN_OR_RETURN(arg, ImplicitCast(std::move(arg), common, site.options));
  }
  KernelFn fn = PickCompare<kOp>(common->id());
  if (fn == nullptr) {
    return Status::InvalidArgument("Values of type ", TypeName(*common),
                                   " cannot be compared yet, in '", site.text, "'");
  }
  bool nullable = kOp != Cmp::kNullSafeEq && AnyNullable(site.args);
  std::string sql = PrettyBinary(ToBinaryOp(kOp), site.args[0]->sql(), site.args[1]->sql());
  return MakeBoundCall(site, DataType::Boolean(), nullable, std::move(site.args), fn,
                       std::move(sql));
}

}  // namespace

void RegisterComparisonFunctions(FunctionRegistry* registry) {
  registry->Register("=", &BindComparison<Cmp::kEq>);
  registry->Register("==", &BindComparison<Cmp::kEq>);
  registry->Register("<=>", &BindComparison<Cmp::kNullSafeEq>);
  registry->Register("<", &BindComparison<Cmp::kLt>);
  registry->Register("<=", &BindComparison<Cmp::kLe>);
  registry->Register(">", &BindComparison<Cmp::kGt>);
  registry->Register(">=", &BindComparison<Cmp::kGe>);
}

}  // namespace silt::expr
