// Math functions over DOUBLE, as Spark's UnaryMathExpression family: sqrt,
// cbrt, exp, expm1, ln/log (one argument), log10, log2, log1p, sign/signum,
// sin/cos/tan, pow/power (two arguments); and abs, which keeps its
// argument's type. Numeric and string arguments are cast to DOUBLE first
// (Spark's ImplicitCastInputTypes). Logarithms of values <= 0 are NULL, as
// in Spark; other domain errors give NaN (Java's Math).
#include <cmath>
#include <cstdlib>
#include <type_traits>

#include "silt/expr/ast.h"
#include "silt/expr/cast.h"
#include "silt/expr/function_registry.h"
#include "silt/expr/kernel_util.h"
#include "silt/expr/type_util.h"

namespace silt::expr {

namespace {

using columnar::ColumnPtr;

enum class Fn { kSqrt, kCbrt, kExp, kExpm1, kLn, kLog10, kLog2, kLog1p, kSign, kSin, kCos, kTan };

// Java's Math.cbrt (fdlibm) returns exact cube roots exactly (cbrt(27.0) =
// 3.0) where glibc's cbrt may be one ulp off: pick whichever neighbour of
// glibc's result cubes closest to x.
double JavaCbrt(double x) {
  double y = std::cbrt(x);
  if (!std::isfinite(y) || y == 0) return y;
  auto error = [x](double r) {
    long double rl = r;
    return std::fabs(static_cast<long double>(x) - rl * rl * rl);
  };
  double best = y;
  for (double candidate : {std::nextafter(y, -INFINITY), std::nextafter(y, INFINITY)}) {
    if (error(candidate) < error(best)) best = candidate;
  }
  return best;
}

template <Fn kFn>
double Apply(double x) {
  switch (kFn) {
    case Fn::kSqrt: return std::sqrt(x);
    case Fn::kCbrt: return JavaCbrt(x);
    case Fn::kExp: return std::exp(x);
    case Fn::kExpm1: return std::expm1(x);
    case Fn::kLn: return std::log(x);
    case Fn::kLog10: return std::log10(x);
    case Fn::kLog2: return std::log2(x);
    case Fn::kLog1p: return std::log1p(x);
    case Fn::kSign: return std::isnan(x) ? x : (x > 0 ? 1.0 : (x < 0 ? -1.0 : x));
    case Fn::kSin: return std::sin(x);
    case Fn::kCos: return std::cos(x);
    case Fn::kTan: return std::tan(x);
  }
  return x;
}

// True where Spark gives NULL: a logarithm outside its domain.
template <Fn kFn>
constexpr bool NullBelowDomain(double x) {
  if constexpr (kFn == Fn::kLn || kFn == Fn::kLog10 || kFn == Fn::kLog2) return x <= 0;
  if constexpr (kFn == Fn::kLog1p) return x <= -1;
  return false;
}

template <Fn kFn>
Result<ColumnPtr> UnaryKernel(const KernelInfo& info, const ExecArgs& args) {
  const int64_t n = args.num_rows;
  FixedReader<double> in(args.args[0]);
  ValidityOut validity(n);
  FixedWriter<double> out(n);
  if (!validity.InitFromArgs(args.args)) return out.Finish(info.type, &validity);
  double* dst = out.data();
  for (int64_t row = 0; row < n; ++row) dst[row] = Apply<kFn>(in[row]);
  if constexpr (kFn == Fn::kLn || kFn == Fn::kLog10 || kFn == Fn::kLog2 || kFn == Fn::kLog1p) {
    for (int64_t row = 0; row < n; ++row) {
      if (NullBelowDomain<kFn>(in[row])) validity.SetNull(row);
    }
  }
  return out.Finish(info.type, &validity);
}

Status CoerceDouble(CallSite& site, size_t index) {
  const DataType& t = *site.args[index]->type();
  if (!t.is_numeric() && t.id() != TypeId::kString && t.id() != TypeId::kNull) {
    return ArgTypeError(site, index, "numeric");
  }
  SILT_ASSIGN_OR_RETURN(site.args[index], ImplicitCast(std::move(site.args[index]),
                                                       DataType::Double(), site.options));
  return Status::OK();
}

template <Fn kFn>
Result<BoundNodePtr> BindUnary(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 1, 1));
  SILT_RETURN_NOT_OK(CoerceDouble(site, 0));
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  const bool nullable = AnyNullable(site.args) || kFn == Fn::kLn || kFn == Fn::kLog10 ||
                        kFn == Fn::kLog2 || kFn == Fn::kLog1p;
  return MakeBoundCall(site, DataType::Double(), nullable, std::move(site.args),
                       &UnaryKernel<kFn>, std::move(sql));
}

Result<ColumnPtr> PowKernel(const KernelInfo& info, const ExecArgs& args) {
  const int64_t n = args.num_rows;
  FixedReader<double> base(args.args[0]);
  FixedReader<double> exponent(args.args[1]);
  ValidityOut validity(n);
  FixedWriter<double> out(n);
  if (!validity.InitFromArgs(args.args)) return out.Finish(info.type, &validity);
  double* dst = out.data();
  for (int64_t row = 0; row < n; ++row) dst[row] = std::pow(base[row], exponent[row]);
  return out.Finish(info.type, &validity);
}

Result<BoundNodePtr> BindPow(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 2, 2));
  SILT_RETURN_NOT_OK(CoerceDouble(site, 0));
  SILT_RETURN_NOT_OK(CoerceDouble(site, 1));
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  const bool nullable = AnyNullable(site.args);
  return MakeBoundCall(site, DataType::Double(), nullable, std::move(site.args), &PowKernel,
                       std::move(sql));
}

template <typename T>
struct UnsignedOf {
  using type = std::make_unsigned_t<T>;
};
template <>
struct UnsignedOf<__int128> {
  using type = unsigned __int128;
};

// abs keeps the type; integral minimum values stay as they are (Java's
// Math.abs wraps), as Spark's non-ANSI abs does.
template <typename T>
Result<ColumnPtr> AbsKernel(const KernelInfo& info, const ExecArgs& args) {
  const int64_t n = args.num_rows;
  FixedReader<T> in(args.args[0]);
  ValidityOut validity(n);
  FixedWriter<T> out(n);
  if (!validity.InitFromArgs(args.args)) return out.Finish(info.type, &validity);
  T* dst = out.data();
  for (int64_t row = 0; row < n; ++row) {
    T v = in[row];
    if constexpr (std::is_floating_point_v<T>) {
      dst[row] = std::fabs(v);
    } else {
      using U = typename UnsignedOf<T>::type;
      // Two's complement negation without signed overflow.
      dst[row] = v < 0 ? static_cast<T>(U{0} - static_cast<U>(v)) : v;
    }
  }
  return out.Finish(info.type, &validity);
}

Result<BoundNodePtr> BindAbs(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 1, 1));
  TypeId id = site.args[0]->type()->id();
  if (id == TypeId::kString || id == TypeId::kNull) {
    SILT_RETURN_NOT_OK(CoerceDouble(site, 0));
    id = TypeId::kDouble;
  }
  KernelFn fn = nullptr;
  switch (id) {
    case TypeId::kByte: fn = &AbsKernel<int8_t>; break;
    case TypeId::kShort: fn = &AbsKernel<int16_t>; break;
    case TypeId::kInt: fn = &AbsKernel<int32_t>; break;
    case TypeId::kLong: fn = &AbsKernel<int64_t>; break;
    case TypeId::kFloat: fn = &AbsKernel<float>; break;
    case TypeId::kDouble: fn = &AbsKernel<double>; break;
    case TypeId::kDecimal: fn = &AbsKernel<__int128>; break;
    default: return ArgTypeError(site, 0, "numeric");
  }
  if (site.options.ansi && id != TypeId::kFloat && id != TypeId::kDouble &&
      id != TypeId::kDecimal) {
    return Status::NotSupported("abs of ", TypeName(*site.args[0]->type()),
                                " with ansi: true (overflow checking), in '", site.text, "'");
  }
  TypePtr type = site.args[0]->type();
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  const bool nullable = AnyNullable(site.args);
  return MakeBoundCall(site, type, nullable, std::move(site.args), fn, std::move(sql));
}

}  // namespace

void RegisterMathFunctions(FunctionRegistry* registry) {
  registry->Register("sqrt", &BindUnary<Fn::kSqrt>);
  registry->Register("cbrt", &BindUnary<Fn::kCbrt>);
  registry->Register("exp", &BindUnary<Fn::kExp>);
  registry->Register("expm1", &BindUnary<Fn::kExpm1>);
  registry->Register("ln", &BindUnary<Fn::kLn>);
  registry->Register("log10", &BindUnary<Fn::kLog10>);
  registry->Register("log2", &BindUnary<Fn::kLog2>);
  registry->Register("log1p", &BindUnary<Fn::kLog1p>);
  registry->Register("sign", &BindUnary<Fn::kSign>);
  registry->Register("signum", &BindUnary<Fn::kSign>);
  registry->Register("sin", &BindUnary<Fn::kSin>);
  registry->Register("cos", &BindUnary<Fn::kCos>);
  registry->Register("tan", &BindUnary<Fn::kTan>);
  registry->Register("pow", &BindPow);
  registry->Register("power", &BindPow);
  registry->Register("abs", &BindAbs);
}

}  // namespace silt::expr
