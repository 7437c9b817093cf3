// Arithmetic operators: + - * / % div, unary - and +, bitwise & | ^ ~.
//
// Types follow Spark's non-ANSI coercion: strings become DOUBLE, mixed
// integral/floating operands widen along TINYINT < SMALLINT < INT < BIGINT <
// FLOAT < DOUBLE, `/` is always DOUBLE or DECIMAL, `div` is BIGINT, and
// decimal results use DecimalPrecision's precision/scale rules. Integral
// overflow wraps like Java (ANSI: error); division or remainder by zero is
// NULL (ANSI: error).
#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>

#include "silt/expr/cast/cast.h"
#include "silt/expr/kernel/executor.h"
#include "silt/expr/kernel/function_registry.h"
#include "silt/expr/kernel/type_util.h"
#include "silt/expr/parse/ast.h"
#include "silt/expr/value/decimal_util.h"

namespace silt::expr {

namespace {

using columnar::ColumnPtr;

Status OverflowError(const KernelInfo& info, int64_t row) {
  return Status::InvalidArgument("Arithmetic overflow in '", info.sql, "' (row ", row,
                                 "); the result does not fit ", TypeName(*info.type));
}

Status DivideByZeroError(const KernelInfo& info, int64_t row) {
  return Status::InvalidArgument("Division by zero in '", info.sql, "' (row ", row, ")");
}

// Unsigned arithmetic wraps without undefined behaviour; types narrower than
// int are widened first so the promoted product cannot overflow int.
template <typename T>
using Unsigned =
    std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

// Java's wrapping integral arithmetic.
template <typename T>
T WrapAdd(T a, T b) {
  return static_cast<T>(static_cast<Unsigned<T>>(a) + static_cast<Unsigned<T>>(b));
}
template <typename T>
T WrapSub(T a, T b) {
  return static_cast<T>(static_cast<Unsigned<T>>(a) - static_cast<Unsigned<T>>(b));
}
template <typename T>
T WrapMul(T a, T b) {
  return static_cast<T>(static_cast<Unsigned<T>>(a) * static_cast<Unsigned<T>>(b));
}

// + - * over one physical type.
template <typename T, BinaryOp kOp>
Result<ColumnPtr> ArithmeticKernel(const KernelInfo& info, const ExecArgs& args) {
  using Exec = BinaryExecutor<T, T, T>;
  if constexpr (std::is_integral_v<T>) {
    if (info.options.ansi) {
      return Exec::ExecuteChecked(info, args, [&info](T x, T y, RowContext& ctx) {
        T r;
        bool overflow;
        if constexpr (kOp == BinaryOp::kAdd) {
          overflow = __builtin_add_overflow(x, y, &r);
        } else if constexpr (kOp == BinaryOp::kSubtract) {
          overflow = __builtin_sub_overflow(x, y, &r);
        } else {
          overflow = __builtin_mul_overflow(x, y, &r);
        }
        if (overflow) ctx.Fail(OverflowError(info, ctx.row()));
        return r;
      });
    }
    return Exec::Execute(info, args, [](T x, T y) {
      if constexpr (kOp == BinaryOp::kAdd) {
        return WrapAdd(x, y);
      } else if constexpr (kOp == BinaryOp::kSubtract) {
        return WrapSub(x, y);
      } else {
        return WrapMul(x, y);
      }
    });
  } else {
    return Exec::Execute(info, args, [](T x, T y) -> T {
      if constexpr (kOp == BinaryOp::kAdd) {
        return x + y;
      } else if constexpr (kOp == BinaryOp::kSubtract) {
        return x - y;
      } else {
        return x * y;
      }
    });
  }
}

// % for integral and floating types; / for DOUBLE; div for BIGINT.
template <typename T, BinaryOp kOp>
Result<ColumnPtr> DivisionKernel(const KernelInfo& info, const ExecArgs& args) {
  const bool ansi = info.options.ansi;
  return BinaryExecutor<T, T, T>::ExecuteChecked(
      info, args, [&info, ansi](T x, T y, RowContext& ctx) -> T {
        if (y == 0) {
          ctx.FailOrNull(ansi, [&] { return DivideByZeroError(info, ctx.row()); });
          return 0;
        }
        if constexpr (std::is_integral_v<T>) {
          if (y == -1) {
            // MIN / -1 overflows; Java wraps (MIN div -1 = MIN, MIN % -1 = 0).
            if constexpr (kOp == BinaryOp::kIntegralDivide) {
              if (ansi && x == std::numeric_limits<T>::min()) {
                ctx.Fail(OverflowError(info, ctx.row()));
              }
              return WrapSub(T(0), x);
            } else {
              return 0;
            }
          }
          return kOp == BinaryOp::kIntegralDivide ? static_cast<T>(x / y) : static_cast<T>(x % y);
        } else {
          if constexpr (kOp == BinaryOp::kRemainder) {
            return std::fmod(x, y);
          } else {
            return x / y;
          }
        }
      });
}

// Decimal + - * / %: exact in 256 bits, then rounded half up to the result
// scale. Overflow of the result precision is NULL (ANSI: error).
template <BinaryOp kOp>
Result<ColumnPtr> DecimalKernel(const KernelInfo& info, const ExecArgs& args) {
  const int s1 = info.arg_types[0]->scale();
  const int s2 = info.arg_types[1]->scale();
  const int rp = info.type->precision();
  const int rs = info.type->scale();
  const bool ansi = info.options.ansi;
  auto op = [&](int128 x, int128 y, RowContext& ctx) -> int128 {
    int128 result = 0;
    bool ok = false;
    if constexpr (kOp == BinaryOp::kAdd || kOp == BinaryOp::kSubtract ||
                  kOp == BinaryOp::kRemainder) {
      int s = s1 > s2 ? s1 : s2;
      WideDecimal wx = ToWide(x);
      WideDecimal wy = ToWide(y);
      MulU256(wx.magnitude, Pow10U256(s - s1), &wx.magnitude);
      MulU256(wy.magnitude, Pow10U256(s - s2), &wy.magnitude);
      if constexpr (kOp == BinaryOp::kRemainder) {
        if (y == 0) {
          ctx.FailOrNull(ansi, [&] { return DivideByZeroError(info, ctx.row()); });
          return 0;
        }
        U256 q;
        U256 r;
        DivModU256(wx.magnitude, wy.magnitude, &q, &r);
        WideDecimal wr;
        wr.negative = wx.negative && !r.IsZero();  // sign of the dividend, as Java
        wr.magnitude = r;
        WideDecimal rounded = DivPow10HalfUp(wr, s - rs);
        ok = WideToDecimal(rounded, rp, &result);
      } else {
        if (kOp == BinaryOp::kSubtract) wy.negative = !wy.negative && !wy.magnitude.IsZero();
        WideDecimal sum;
        if (wx.negative == wy.negative) {
          sum.negative = wx.negative;
          AddU256(wx.magnitude, wy.magnitude, &sum.magnitude);
        } else if (CompareU256(wx.magnitude, wy.magnitude) >= 0) {
          sum.negative = wx.negative;
          sum.magnitude = SubU256(wx.magnitude, wy.magnitude);
        } else {
          sum.negative = wy.negative;
          sum.magnitude = SubU256(wy.magnitude, wx.magnitude);
        }
        if (sum.magnitude.IsZero()) sum.negative = false;
        // The exact sum has scale s; the result scale may be smaller after
        // precision adjustment.
        WideDecimal rounded = s > rs ? DivPow10HalfUp(sum, s - rs) : sum;
        if (rs > s) MulU256(rounded.magnitude, Pow10U256(rs - s), &rounded.magnitude);
        ok = WideToDecimal(rounded, rp, &result);
      }
    } else if constexpr (kOp == BinaryOp::kMultiply) {
      WideDecimal product;
      product.negative = (x < 0) != (y < 0);
      MulU256(ToWide(x).magnitude, ToWide(y).magnitude, &product.magnitude);
      if (product.magnitude.IsZero()) product.negative = false;
      int s = s1 + s2;
      WideDecimal rounded = s > rs ? DivPow10HalfUp(product, s - rs) : product;
      if (rs > s) MulU256(rounded.magnitude, Pow10U256(rs - s), &rounded.magnitude);
      ok = WideToDecimal(rounded, rp, &result);
    } else {
      // x/10^s1 / (y/10^s2) at scale rs = x * 10^(rs - s1 + s2) / y.
      if (y == 0) {
        ctx.FailOrNull(ansi, [&] { return DivideByZeroError(info, ctx.row()); });
        return 0;
      }
      int k = rs - s1 + s2;
      U256 num = ToWide(x).magnitude;
      U256 den = ToWide(y).magnitude;
      bool fits = true;
      if (k >= 0) {
        // A numerator beyond 256 bits means a quotient beyond 38 digits.
        fits = k <= 76 && MulU256(num, Pow10U256(k), &num);
      } else {
        fits = -k <= 76 && MulU256(den, Pow10U256(-k), &den);
      }
      if (fits) {
        U256 q;
        U256 r;
        DivModU256(num, den, &q, &r);
        U256 twice;
        if (!AddU256(r, r, &twice) || CompareU256(twice, den) >= 0) {
          AddU256(q, U256::FromU128(1), &q);
        }
        WideDecimal quotient;
        quotient.negative = ((x < 0) != (y < 0)) && !q.IsZero();
        quotient.magnitude = q;
        ok = WideToDecimal(quotient, rp, &result);
      }
    }
    if (!ok) {
      ctx.FailOrNull(ansi, [&] { return OverflowError(info, ctx.row()); });
    }
    return result;
  };
  return BinaryExecutor<int128, int128, int128>::ExecuteChecked(info, args, op);
}

// div over decimals: the truncated quotient as BIGINT. Both operands share
// one scale (the binder casts them to a common decimal type).
Result<ColumnPtr> DecimalIntegralDivideKernel(const KernelInfo& info, const ExecArgs& args) {
  const bool ansi = info.options.ansi;
  return BinaryExecutor<int128, int128, int64_t>::ExecuteChecked(
      info, args, [&info, ansi](int128 x, int128 y, RowContext& ctx) -> int64_t {
        if (y == 0) {
          ctx.FailOrNull(ansi, [&] { return DivideByZeroError(info, ctx.row()); });
          return 0;
        }
        int128 q = x / y;
        if (ansi &&
            (q < std::numeric_limits<int64_t>::min() || q > std::numeric_limits<int64_t>::max())) {
          ctx.Fail(OverflowError(info, ctx.row()));
        }
        return static_cast<int64_t>(q);
      });
}

template <typename T>
Result<ColumnPtr> NegateKernel(const KernelInfo& info, const ExecArgs& args) {
  using Exec = UnaryExecutor<T, T>;
  if constexpr (std::is_integral_v<T>) {
    if (info.options.ansi) {
      return Exec::ExecuteChecked(info, args, [&info](T x, RowContext& ctx) {
        if (x == std::numeric_limits<T>::min()) ctx.Fail(OverflowError(info, ctx.row()));
        return WrapSub(T(0), x);
      });
    }
    return Exec::Execute(info, args, [](T x) { return WrapSub(T(0), x); });
  } else {
    // |decimal| < 10^38 never overflows.
    return Exec::Execute(info, args, [](T x) { return static_cast<T>(-x); });
  }
}

template <typename T, BinaryOp kOp>
Result<ColumnPtr> BitwiseKernel(const KernelInfo& info, const ExecArgs& args) {
  return BinaryExecutor<T, T, T>::Execute(info, args, [](T x, T y) {
    if constexpr (kOp == BinaryOp::kBitAnd) {
      return static_cast<T>(x & y);
    } else if constexpr (kOp == BinaryOp::kBitOr) {
      return static_cast<T>(x | y);
    } else {
      return static_cast<T>(x ^ y);
    }
  });
}

template <typename T>
Result<ColumnPtr> BitNotKernel(const KernelInfo& info, const ExecArgs& args) {
  return UnaryExecutor<T, T>::Execute(info, args, [](T x) { return static_cast<T>(~x); });
}

template <BinaryOp kOp>
KernelFn PickArithmetic(TypeId id) {
  switch (id) {
    case TypeId::kByte: return &ArithmeticKernel<int8_t, kOp>;
    case TypeId::kShort: return &ArithmeticKernel<int16_t, kOp>;
    case TypeId::kInt: return &ArithmeticKernel<int32_t, kOp>;
    case TypeId::kLong: return &ArithmeticKernel<int64_t, kOp>;
    case TypeId::kFloat: return &ArithmeticKernel<float, kOp>;
    case TypeId::kDouble: return &ArithmeticKernel<double, kOp>;
    case TypeId::kDecimal: return &DecimalKernel<kOp>;
    default: return nullptr;
  }
}

KernelFn PickRemainder(TypeId id) {
  constexpr BinaryOp kOp = BinaryOp::kRemainder;
  switch (id) {
    case TypeId::kByte: return &DivisionKernel<int8_t, kOp>;
    case TypeId::kShort: return &DivisionKernel<int16_t, kOp>;
    case TypeId::kInt: return &DivisionKernel<int32_t, kOp>;
    case TypeId::kLong: return &DivisionKernel<int64_t, kOp>;
    case TypeId::kFloat: return &DivisionKernel<float, kOp>;
    case TypeId::kDouble: return &DivisionKernel<double, kOp>;
    case TypeId::kDecimal: return &DecimalKernel<kOp>;
    default: return nullptr;
  }
}

template <BinaryOp kOp>
KernelFn PickBitwise(TypeId id) {
  switch (id) {
    case TypeId::kByte: return &BitwiseKernel<int8_t, kOp>;
    case TypeId::kShort: return &BitwiseKernel<int16_t, kOp>;
    case TypeId::kInt: return &BitwiseKernel<int32_t, kOp>;
    case TypeId::kLong: return &BitwiseKernel<int64_t, kOp>;
    default: return nullptr;
  }
}

// The decimal type of an integral operand next to a decimal: the smallest
// that holds a literal's value, else the type's full range.
TypePtr DecimalOperandType(const BoundNode& node) {
  const auto* literal = dynamic_cast<const BoundLiteral*>(&node);
  if (literal != nullptr && literal->written() && !literal->value()->IsNull(0)) {
    const columnar::Column& c = *literal->value();
    int64_t v = 0;
    switch (c.type->id()) {
      case TypeId::kByte: v = c.Value<int8_t>(0); break;
      case TypeId::kShort: v = c.Value<int16_t>(0); break;
      case TypeId::kInt: v = c.Value<int32_t>(0); break;
      default: v = c.Value<int64_t>(0); break;
    }
    return DataType::Decimal(DecimalDigits(v), 0);
  }
  return DecimalForIntegral(*node.type());
}

// Casts the operands of a binary numeric operator to Spark's common types.
// On return both args are numeric; `*decimal` tells whether they are
// decimals (possibly of different precision/scale).
Status CoerceNumericOperands(CallSite& site, bool* decimal) {
  BoundNodePtr& l = site.args[0];
  BoundNodePtr& r = site.args[1];
  const EvalOptions& options = site.options;
  // Strings in arithmetic are read as DOUBLE (PromoteStrings).
  for (BoundNodePtr* arg : {&l, &r}) {
    if (IsString(*(*arg)->type())) {
      SILT_ASSIGN_OR_RETURN(*arg, ImplicitCast(std::move(*arg), DataType::Double(), options));
    }
  }
  if (IsNull(*l->type()) && IsNull(*r->type())) {
    SILT_ASSIGN_OR_RETURN(l, ImplicitCast(std::move(l), DataType::Double(), options));
    SILT_ASSIGN_OR_RETURN(r, ImplicitCast(std::move(r), DataType::Double(), options));
  } else if (IsNull(*l->type())) {
    SILT_ASSIGN_OR_RETURN(l, ImplicitCast(std::move(l), r->type(), options));
  } else if (IsNull(*r->type())) {
    SILT_ASSIGN_OR_RETURN(r, ImplicitCast(std::move(r), l->type(), options));
  }
  for (size_t i = 0; i < 2; ++i) {
    if (!IsNumeric(*site.args[i]->type())) return ArgTypeError(site, i, "numeric");
  }
  const DataType& lt = *l->type();
  const DataType& rt = *r->type();
  *decimal = false;
  if (IsDecimal(lt) || IsDecimal(rt)) {
    if (IsFloating(lt) || IsFloating(rt)) {
      SILT_ASSIGN_OR_RETURN(l, ImplicitCast(std::move(l), DataType::Double(), options));
      SILT_ASSIGN_OR_RETURN(r, ImplicitCast(std::move(r), DataType::Double(), options));
      return Status::OK();
    }
    if (IsIntegral(lt)) {
      TypePtr t = DecimalOperandType(*l);
      SILT_ASSIGN_OR_RETURN(l, ImplicitCast(std::move(l), t, options));
    }
    if (IsIntegral(rt)) {
      TypePtr t = DecimalOperandType(*r);
      SILT_ASSIGN_OR_RETURN(r, ImplicitCast(std::move(r), t, options));
    }
    *decimal = true;
    return Status::OK();
  }
  TypePtr common = FindTightestCommonType(l->type(), r->type());
  SILT_ASSIGN_OR_RETURN(l, ImplicitCast(std::move(l), common, options));
  SILT_ASSIGN_OR_RETURN(r, ImplicitCast(std::move(r), common, options));
  return Status::OK();
}

// DecimalPrecision's result types.
TypePtr DecimalResultType(BinaryOp op, const DataType& a, const DataType& b) {
  int p1 = a.precision();
  int s1 = a.scale();
  int p2 = b.precision();
  int s2 = b.scale();
  switch (op) {
    case BinaryOp::kAdd:
    case BinaryOp::kSubtract: {
      int scale = std::max(s1, s2);
      return AdjustedDecimal(std::max(p1 - s1, p2 - s2) + scale + 1, scale);
    }
    case BinaryOp::kMultiply: return AdjustedDecimal(p1 + p2 + 1, s1 + s2);
    case BinaryOp::kDivide: {
      int scale = std::max(6, s1 + p2 + 1);
      return AdjustedDecimal(p1 - s1 + s2 + scale, scale);
    }
    default: {
      int scale = std::max(s1, s2);
      return AdjustedDecimal(std::min(p1 - s1, p2 - s2) + scale, scale);
    }
  }
}

template <BinaryOp kOp>
Result<BoundNodePtr> BindArithmetic(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 2, 2));
  if constexpr (kOp == BinaryOp::kAdd || kOp == BinaryOp::kSubtract) {
    // Spark's DateAdd / DateSub for date +/- days.
    TypeId l = site.args[0]->type()->id();
    TypeId r = site.args[1]->type()->id();
    bool r_int = site.args[1]->type()->is_integral();
    if (l == TypeId::kDate && r_int) {
      return FunctionRegistry::Builtin().Find(kOp == BinaryOp::kAdd ? "date_add"
                                                                    : "date_sub")(site);
    }
    if (kOp == BinaryOp::kAdd && r == TypeId::kDate && site.args[0]->type()->is_integral()) {
      std::swap(site.args[0], site.args[1]);
      return FunctionRegistry::Builtin().Find("date_add")(site);
    }
  }
  bool decimal = false;
  SILT_RETURN_NOT_OK(CoerceNumericOperands(site, &decimal));
  TypePtr type = decimal ? DecimalResultType(kOp, *site.args[0]->type(), *site.args[1]->type())
                         : site.args[0]->type();
  KernelFn fn =
      kOp == BinaryOp::kRemainder ? PickRemainder(type->id()) : PickArithmetic<kOp>(type->id());
  if (fn == nullptr) return ArgTypeError(site, 0, "numeric");
  // Remainder by zero and decimal overflow give NULL even for non-null inputs.
  bool nullable = AnyNullable(site.args) || kOp == BinaryOp::kRemainder || decimal;
  std::string sql = PrettyBinary(kOp, site.args[0]->sql(), site.args[1]->sql());
  return MakeBoundCall(site, type, nullable, std::move(site.args), fn, std::move(sql));
}

Result<BoundNodePtr> BindDivide(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 2, 2));
  bool decimal = false;
  SILT_RETURN_NOT_OK(CoerceNumericOperands(site, &decimal));
  TypePtr type;
  KernelFn fn;
  if (decimal) {
    type = DecimalResultType(BinaryOp::kDivide, *site.args[0]->type(), *site.args[1]->type());
    fn = &DecimalKernel<BinaryOp::kDivide>;
  } else {
    // Non-decimal division is always DOUBLE.
    for (BoundNodePtr& arg : site.args) {
      SILT_ASSIGN_OR_RETURN(arg, ImplicitCast(std::move(arg), DataType::Double(), site.options));
    }
    type = DataType::Double();
    fn = &DivisionKernel<double, BinaryOp::kDivide>;
  }
  std::string sql = PrettyBinary(BinaryOp::kDivide, site.args[0]->sql(), site.args[1]->sql());
  return MakeBoundCall(site, type, /*nullable=*/true, std::move(site.args), fn, std::move(sql));
}

Result<BoundNodePtr> BindIntegralDivide(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 2, 2));
  bool decimal = false;
  SILT_RETURN_NOT_OK(CoerceNumericOperands(site, &decimal));
  KernelFn fn;
  if (decimal) {
    TypePtr common = WiderDecimal(*site.args[0]->type(), *site.args[1]->type());
    for (BoundNodePtr& arg : site.args) {
      SILT_ASSIGN_OR_RETURN(arg, ImplicitCast(std::move(arg), common, site.options));
    }
    fn = &DecimalIntegralDivideKernel;
  } else {
    for (BoundNodePtr& arg : site.args) {
      SILT_ASSIGN_OR_RETURN(arg, ImplicitCast(std::move(arg), DataType::Long(), site.options));
    }
    fn = &DivisionKernel<int64_t, BinaryOp::kIntegralDivide>;
  }
  std::string sql =
      PrettyBinary(BinaryOp::kIntegralDivide, site.args[0]->sql(), site.args[1]->sql());
  return MakeBoundCall(site, DataType::Long(), /*nullable=*/true, std::move(site.args), fn,
                       std::move(sql));
}

template <bool kNegate>
Result<BoundNodePtr> BindUnaryArithmetic(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 1, 1));
  BoundNodePtr& arg = site.args[0];
  if (IsString(*arg->type()) || IsNull(*arg->type())) {
    SILT_ASSIGN_OR_RETURN(arg, ImplicitCast(std::move(arg), DataType::Double(), site.options));
  }
  if (!IsNumeric(*arg->type())) return ArgTypeError(site, 0, "numeric");
  TypePtr type = arg->type();
  std::string sql = PrettyUnary(kNegate ? UnaryOp::kNegate : UnaryOp::kPlus, arg->sql());
  if constexpr (!kNegate) {
    // Unary plus is the identity; only the name shows it.
    KernelFn identity = [](const KernelInfo&, const ExecArgs& args) -> Result<ColumnPtr> {
      return args.args[0].column;
    };
    bool nullable = arg->nullable();
    return MakeBoundCall(site, type, nullable, std::move(site.args), identity, std::move(sql));
  }
  KernelFn fn = nullptr;
  switch (type->id()) {
    case TypeId::kByte: fn = &NegateKernel<int8_t>; break;
    case TypeId::kShort: fn = &NegateKernel<int16_t>; break;
    case TypeId::kInt: fn = &NegateKernel<int32_t>; break;
    case TypeId::kLong: fn = &NegateKernel<int64_t>; break;
    case TypeId::kFloat: fn = &NegateKernel<float>; break;
    case TypeId::kDouble: fn = &NegateKernel<double>; break;
    default: fn = &NegateKernel<int128>; break;
  }
  bool nullable = arg->nullable();
  return MakeBoundCall(site, type, nullable, std::move(site.args), fn, std::move(sql));
}

template <BinaryOp kOp>
Result<BoundNodePtr> BindBitwise(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 2, 2));
  for (size_t i = 0; i < 2; ++i) {
    if (IsNull(*site.args[i]->type())) {
      SILT_ASSIGN_OR_RETURN(site.args[i],
                            ImplicitCast(std::move(site.args[i]), DataType::Long(), site.options));
    }
    if (!IsIntegral(*site.args[i]->type())) return ArgTypeError(site, i, "integral");
  }
  TypePtr common = FindTightestCommonType(site.args[0]->type(), site.args[1]->type());
  for (BoundNodePtr& arg : site.args) {
    SILT_ASSIGN_OR_RETURN(arg, ImplicitCast(std::move(arg), common, site.options));
  }
  std::string sql = PrettyBinary(kOp, site.args[0]->sql(), site.args[1]->sql());
  bool nullable = AnyNullable(site.args);
  return MakeBoundCall(site, common, nullable, std::move(site.args), PickBitwise<kOp>(common->id()),
                       std::move(sql));
}

Result<BoundNodePtr> BindBitNot(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 1, 1));
  if (!IsIntegral(*site.args[0]->type())) return ArgTypeError(site, 0, "integral");
  TypePtr type = site.args[0]->type();
  KernelFn fn = nullptr;
  switch (type->id()) {
    case TypeId::kByte: fn = &BitNotKernel<int8_t>; break;
    case TypeId::kShort: fn = &BitNotKernel<int16_t>; break;
    case TypeId::kInt: fn = &BitNotKernel<int32_t>; break;
    default: fn = &BitNotKernel<int64_t>; break;
  }
  std::string sql = PrettyUnary(UnaryOp::kBitNot, site.args[0]->sql());
  bool nullable = site.args[0]->nullable();
  return MakeBoundCall(site, type, nullable, std::move(site.args), fn, std::move(sql));
}

}  // namespace

void RegisterArithmeticFunctions(FunctionRegistry* registry) {
  registry->Register("+", &BindArithmetic<BinaryOp::kAdd>);
  registry->Register("-", &BindArithmetic<BinaryOp::kSubtract>);
  registry->Register("*", &BindArithmetic<BinaryOp::kMultiply>);
  registry->Register("%", &BindArithmetic<BinaryOp::kRemainder>);
  registry->Register("mod", &BindArithmetic<BinaryOp::kRemainder>);
  registry->Register("/", &BindDivide);
  registry->Register("div", &BindIntegralDivide);
  registry->Register("negative", &BindUnaryArithmetic<true>);
  registry->Register("positive", &BindUnaryArithmetic<false>);
  registry->Register("&", &BindBitwise<BinaryOp::kBitAnd>);
  registry->Register("|", &BindBitwise<BinaryOp::kBitOr>);
  registry->Register("^", &BindBitwise<BinaryOp::kBitXor>);
  registry->Register("~", &BindBitNot);
}

}  // namespace silt::expr
