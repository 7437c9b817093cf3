// Comparison operators = (==), <=>, <, <=, >, >=.
//
// Operands are brought to a common type as Spark's
// findCommonTypeForBinaryComparison does (a string next to a number is read
// as that number; a string next to a date or timestamp as a date or
// timestamp; decimal next to string as DOUBLE). Doubles compare like Spark:
// NaN equals NaN and is greater than every other value, -0.0 equals 0.0.
// Strings compare byte-wise (UTF-8 binary order).
//
// Also: `a IN (x, y, ...)`, greatest / least, and nullif.
#include <cmath>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "silt/expr/cast/cast.h"
#include "silt/expr/kernel/executor.h"
#include "silt/expr/kernel/function_registry.h"
#include "silt/expr/kernel/kernel_util.h"
#include "silt/expr/kernel/type_util.h"
#include "silt/expr/parse/ast.h"

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
  if constexpr (kOp == Cmp::kNullSafeEq) {
    // Never NULL: not the null-propagating executor.
    int64_t n = args.num_rows;
    Reader a(args.args[0]);
    Reader b(args.args[1]);
    BoolWriter out(n);
    ValidityOut validity(n);
    for (int64_t row = 0; row < n; ++row) {
      bool va = a.IsValid(row);
      bool vb = b.IsValid(row);
      out.Set(row, va && vb ? Apply<kOp>(a[row], b[row]) : (!va && !vb));
    }
    return out.Finish(info.type, &validity);
  } else {
    using T = std::decay_t<decltype(std::declval<const Reader&>()[0])>;
    return BinaryExecutor<T, T, bool>::Execute(info, args,
                                               [](T x, T y) { return Apply<kOp>(x, y); });
  }
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

// value IN (items...): args [value, item1, ...], all of one type. NULL when
// the value is NULL, or when no item matches and some item is NULL.
template <typename Reader>
Result<ColumnPtr> InListKernel(const KernelInfo& info, const ExecArgs& args) {
  const int64_t n = args.num_rows;
  Reader value(args.args[0]);
  std::vector<Reader> items;
  items.reserve(args.args.size() - 1);
  for (size_t i = 1; i < args.args.size(); ++i) items.emplace_back(args.args[i]);
  BoolWriter out(n);
  ValidityOut validity(n);
  for (int64_t row = 0; row < n; ++row) {
    if (!value.IsValid(row)) {
      validity.SetNull(row);
      out.Set(row, false);
      continue;
    }
    bool found = false;
    bool saw_null = false;
    for (const Reader& item : items) {
      if (!item.IsValid(row)) {
        saw_null = true;
      } else if (ValuesEqual(value[row], item[row])) {
        found = true;
        break;
      }
    }
    out.Set(row, found);
    if (!found && saw_null) validity.SetNull(row);
  }
  return out.Finish(info.type, &validity);
}

// greatest / least: the largest (smallest) non-NULL argument, the first of
// equal ones; NULL only when every argument is NULL.
template <typename Reader, bool kGreatest>
Result<ColumnPtr> ExtremeKernel(const KernelInfo& info, const ExecArgs& args) {
  const int64_t n = args.num_rows;
  std::vector<Reader> readers;
  readers.reserve(args.args.size());
  for (const Datum& d : args.args) readers.emplace_back(d);
  std::vector<int16_t> choice(static_cast<size_t>(n), -1);
  for (int64_t row = 0; row < n; ++row) {
    int16_t best = -1;
    for (size_t i = 0; i < readers.size(); ++i) {
      if (!readers[i].IsValid(row)) continue;
      if (best < 0) {
        best = static_cast<int16_t>(i);
        continue;
      }
      int c = Compare3(readers[i][row], readers[static_cast<size_t>(best)][row]);
      if (kGreatest ? c > 0 : c < 0) best = static_cast<int16_t>(i);
    }
    choice[static_cast<size_t>(row)] = best;
  }
  return GatherChoice(info.type, args.args, choice, n);
}

// nullif(a, b): args [a, b] of one type; a, NULL where a = b.
template <typename Reader>
Result<ColumnPtr> NullIfKernel(const KernelInfo& info, const ExecArgs& args) {
  const int64_t n = args.num_rows;
  Reader a(args.args[0]);
  Reader b(args.args[1]);
  std::vector<int16_t> choice(static_cast<size_t>(n), 0);
  for (int64_t row = 0; row < n; ++row) {
    if (a.IsValid(row) && b.IsValid(row) && ValuesEqual(a[row], b[row])) {
      choice[static_cast<size_t>(row)] = -1;
    }
  }
  return GatherChoice(info.type, args.args, choice, n);
}

// Picks Kernel<Reader> for an orderable atomic type; null otherwise.
template <template <typename> class KernelT>
KernelFn PickByReader(TypeId id) {
  switch (id) {
    case TypeId::kBoolean: return &KernelT<BoolReader>::Run;
    case TypeId::kByte: return &KernelT<FixedReader<int8_t>>::Run;
    case TypeId::kShort: return &KernelT<FixedReader<int16_t>>::Run;
    case TypeId::kInt:
    case TypeId::kDate: return &KernelT<FixedReader<int32_t>>::Run;
    case TypeId::kLong:
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: return &KernelT<FixedReader<int64_t>>::Run;
    case TypeId::kFloat: return &KernelT<FixedReader<float>>::Run;
    case TypeId::kDouble: return &KernelT<FixedReader<double>>::Run;
    case TypeId::kDecimal: return &KernelT<FixedReader<__int128>>::Run;
    case TypeId::kString:
    case TypeId::kBinary: return &KernelT<StringReader>::Run;
    default: return nullptr;
  }
}

template <typename Reader>
struct InListK {
  static Result<ColumnPtr> Run(const KernelInfo& i, const ExecArgs& a) {
    return InListKernel<Reader>(i, a);
  }
};
template <typename Reader>
struct GreatestK {
  static Result<ColumnPtr> Run(const KernelInfo& i, const ExecArgs& a) {
    return ExtremeKernel<Reader, true>(i, a);
  }
};
template <typename Reader>
struct LeastK {
  static Result<ColumnPtr> Run(const KernelInfo& i, const ExecArgs& a) {
    return ExtremeKernel<Reader, false>(i, a);
  }
};
template <typename Reader>
struct NullIfK {
  static Result<ColumnPtr> Run(const KernelInfo& i, const ExecArgs& a) {
    return NullIfKernel<Reader>(i, a);
  }
};

// Casts every argument to the wider common type of all of them.
Result<TypePtr> CoerceAll(CallSite& site) {
  TypePtr common = DataType::Null();
  for (size_t i = 0; i < site.args.size(); ++i) {
    TypePtr next = FindWiderTypeForTwo(common, site.args[i]->type());
    if (next == nullptr) {
      return Status::InvalidArgument("Cannot resolve '", site.text, "': argument ", i + 1, " (",
                                     site.args[i]->sql(), ") of type ",
                                     TypeName(*site.args[i]->type()), " has no common type with ",
                                     TypeName(*common));
    }
    common = next;
  }
  for (BoundNodePtr& arg : site.args) {
    SILT_ASSIGN_OR_RETURN(arg, ImplicitCast(std::move(arg), common, site.options));
  }
  return common;
}

Result<BoundNodePtr> BindInList(CallSite& site) {
  if (site.args.size() < 2) return ArgCountError(site, "at least 2");
  SILT_ASSIGN_OR_RETURN(TypePtr common, CoerceAll(site));
  KernelFn fn = common->id() == TypeId::kNull ? nullptr : PickByReader<InListK>(common->id());
  if (common->id() == TypeId::kNull) {
    fn = [](const KernelInfo& info, const ExecArgs& a) -> Result<ColumnPtr> {
      return NullColumn(info.type, a.num_rows);
    };
  }
  if (fn == nullptr) {
    return Status::NotSupported("IN over ", TypeName(*common), " values, in '", site.text, "'");
  }
  const bool nullable = AnyNullable(site.args);
  std::string sql = PrettyInList(ArgSqls(site.args));
  return MakeBoundCall(site, DataType::Boolean(), nullable, std::move(site.args), fn,
                       std::move(sql));
}

template <bool kGreatest>
Result<BoundNodePtr> BindExtreme(CallSite& site) {
  if (site.args.size() < 2) return ArgCountError(site, "at least 2");
  // Spark finds the common type without string promotion here: a STRING
  // next to a number or date is a type mismatch, not a string comparison.
  bool any_string = false;
  bool any_other = false;
  for (const BoundNodePtr& arg : site.args) {
    TypeId id = arg->type()->id();
    if (id == TypeId::kString) {
      any_string = true;
    } else if (id != TypeId::kNull) {
      any_other = true;
    }
  }
  if (any_string && any_other) {
    return Status::InvalidArgument("Cannot resolve '", site.text, "': the arguments of ", site.name,
                                   " must all have the same type (a STRING is not "
                                   "compared with other types)");
  }
  SILT_ASSIGN_OR_RETURN(TypePtr common, CoerceAll(site));
  KernelFn fn =
      kGreatest ? PickByReader<GreatestK>(common->id()) : PickByReader<LeastK>(common->id());
  if (common->id() == TypeId::kNull) {
    fn = [](const KernelInfo& info, const ExecArgs& a) -> Result<ColumnPtr> {
      return NullColumn(info.type, a.num_rows);
    };
  }
  if (fn == nullptr) {
    return Status::InvalidArgument("Cannot resolve '", site.text, "': ", site.name,
                                   " needs orderable arguments, not ", TypeName(*common));
  }
  // NULL only when every argument is NULL.
  bool nullable = true;
  for (const BoundNodePtr& arg : site.args) nullable = nullable && arg->nullable();
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  return MakeBoundCall(site, common, nullable, std::move(site.args), fn, std::move(sql));
}

// True when every value of `from` survives a round trip through `to`.
bool WidensExactly(const DataType& from, const DataType& to) {
  if (from.Equals(to) || from.id() == TypeId::kNull) return true;
  switch (to.id()) {
    case TypeId::kLong: return from.is_integral();
    case TypeId::kDouble:
      return from.id() == TypeId::kByte || from.id() == TypeId::kShort ||
             from.id() == TypeId::kInt || from.id() == TypeId::kFloat;
    case TypeId::kDecimal: return from.is_integral() || from.id() == TypeId::kDecimal;
    default: return from.id() == TypeId::kNull;
  }
}

Result<BoundNodePtr> BindNullIf(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 2, 2));
  TypePtr original = site.args[0]->type();
  TypePtr lt = site.args[0]->type();
  TypePtr rt = site.args[1]->type();
  TypePtr common = lt->Equals(*rt) ? lt : FindCommonTypeForComparison(lt, rt);
  if (common == nullptr) {
    return Status::InvalidArgument("Cannot compare ", site.args[0]->sql(), " (", TypeName(*lt),
                                   ") with ", site.args[1]->sql(), " (", TypeName(*rt), ") in '",
                                   site.text, "'");
  }
  if (!WidensExactly(*original, *common)) {
    return Status::NotSupported(
        "nullif comparing ", TypeName(*lt), " with ", TypeName(*rt), " (silt compares them as ",
        TypeName(*common), " only when that keeps the first value exact), in '", site.text, "'");
  }
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  if (original->id() == TypeId::kNull) {
    // nullif(NULL, x) is NULL of type void, as in Spark.
    KernelFn all_null = [](const KernelInfo& info, const ExecArgs& a) -> Result<ColumnPtr> {
      return NullColumn(info.type, a.num_rows);
    };
    return MakeBoundCall(site, original, true, std::move(site.args), all_null, sql);
  }
  for (BoundNodePtr& arg : site.args) {
    SILT_ASSIGN_OR_RETURN(arg, ImplicitCast(std::move(arg), common, site.options));
  }
  KernelFn fn = PickByReader<NullIfK>(common->id());
  if (common->id() == TypeId::kNull) {
    fn = [](const KernelInfo& info, const ExecArgs& a) -> Result<ColumnPtr> {
      return NullColumn(info.type, a.num_rows);
    };
  }
  if (fn == nullptr) {
    return Status::NotSupported("nullif over ", TypeName(*common), " values, in '", site.text, "'");
  }
  BoundNodePtr call = MakeBoundCall(site, common, /*nullable=*/true, std::move(site.args), fn, sql);
  if (common->Equals(*original) || original->id() == TypeId::kNull) return call;
  // Compared in the wider type; the value keeps the first argument's type.
  return ImplicitCast(std::move(call), original, site.options);
}

}  // namespace

void RegisterComparisonFunctions(FunctionRegistry* registry) {
  registry->Register(kInListCall, &BindInList);
  registry->Register("greatest", &BindExtreme<true>);
  registry->Register("least", &BindExtreme<false>);
  registry->Register("nullif", &BindNullIf);
  registry->Register("=", &BindComparison<Cmp::kEq>);
  registry->Register("==", &BindComparison<Cmp::kEq>);
  registry->Register("<=>", &BindComparison<Cmp::kNullSafeEq>);
  registry->Register("<", &BindComparison<Cmp::kLt>);
  registry->Register("<=", &BindComparison<Cmp::kLe>);
  registry->Register(">", &BindComparison<Cmp::kGt>);
  registry->Register(">=", &BindComparison<Cmp::kGe>);
}

}  // namespace silt::expr
