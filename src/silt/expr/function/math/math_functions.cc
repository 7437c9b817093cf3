// Math functions over DOUBLE, as Spark's UnaryMathExpression family: sqrt,
// cbrt, exp, expm1, ln/log (one argument), log10, log2, log1p, sign/signum,
// sin/cos/tan, pow/power (two arguments); and abs, which keeps its
// argument's type. Numeric and string arguments are cast to DOUBLE first
// (Spark's ImplicitCastInputTypes). Logarithms of values <= 0 are NULL, as
// in Spark; other domain errors give NaN (Java's Math).
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <type_traits>

#include "silt/expr/cast/cast.h"
#include "silt/expr/kernel/executor.h"
#include "silt/expr/kernel/function_registry.h"
#include "silt/expr/kernel/type_util.h"
#include "silt/expr/parse/ast.h"
#include "silt/expr/value/decimal_util.h"

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

// Spark's exp is java.lang.StrictMath.exp: fdlibm's algorithm, which is not
// always correctly rounded (exp(1) is 2.7182818284590455, glibc's is
// 2.718281828459045). The same steps: x = k*ln2 + r with |r| <= ln2/2
// (ln2 split in a high part with trailing zero bits and a low part), exp(r)
// from a degree-5 minimax polynomial R(r^2) as 1 + r + r*c/(2 - c), then
// scaled by 2^k.
double StrictExp(double x) {
  constexpr double kLn2Hi = 6.93147180369123816490e-01;
  constexpr double kLn2Lo = 1.90821492927058770002e-10;
  constexpr double kInvLn2 = 1.44269504088896338700e+00;
  constexpr double kP1 = 1.66666666666666019037e-01;
  constexpr double kP2 = -2.77777777770155933842e-03;
  constexpr double kP3 = 6.61375632143793436117e-05;
  constexpr double kP4 = -1.65339022054652515390e-06;
  constexpr double kP5 = 4.13813679705723846039e-08;
  constexpr double kOverflow = 7.09782712893383973096e+02;
  constexpr double kUnderflow = -7.45133219101941108420e+02;
  const uint64_t bits = std::bit_cast<uint64_t>(x);
  const uint32_t high = static_cast<uint32_t>(bits >> 32) & 0x7fffffffu;
  const bool negative = (bits >> 63) != 0;
  if (high >= 0x40862E42u) {  // |x| >= 709.78
    if (std::isnan(x)) return x;
    if (std::isinf(x)) return negative ? 0.0 : x;
    if (x > kOverflow) return std::numeric_limits<double>::infinity();
    if (x < kUnderflow) return 0.0;
  }
  double hi = 0;
  double lo = 0;
  int k = 0;
  if (high > 0x3fd62e42u) {    // |x| > ln2/2
    if (high < 0x3FF0A2B2u) {  // |x| < 3*ln2/2
      hi = negative ? x + kLn2Hi : x - kLn2Hi;
      lo = negative ? -kLn2Lo : kLn2Lo;
      k = negative ? -1 : 1;
    } else {
      k = static_cast<int>(kInvLn2 * x + (negative ? -0.5 : 0.5));
      const double t = k;
      hi = x - t * kLn2Hi;
      lo = t * kLn2Lo;
    }
    x = hi - lo;
  } else if (high < 0x3e300000u) {  // |x| < 2^-28
    return 1.0 + x;
  }
  const double t = x * x;
  const double c = x - t * (kP1 + t * (kP2 + t * (kP3 + t * (kP4 + t * kP5))));
  if (k == 0) return 1.0 - ((x * c) / (c - 2.0) - x);
  const double y = 1.0 - ((lo - (x * c) / (2.0 - c)) - hi);
  if (k >= -1021) {
    return std::bit_cast<double>(std::bit_cast<uint64_t>(y) +
                                 (static_cast<uint64_t>(static_cast<int64_t>(k)) << 52));
  }
  const double scaled = std::bit_cast<double>(
      std::bit_cast<uint64_t>(y) + (static_cast<uint64_t>(static_cast<int64_t>(k + 1000)) << 52));
  return scaled * 9.33263618503218878990e-302;  // 2^-1000
}

template <Fn kFn>
double Apply(double x) {
  switch (kFn) {
    case Fn::kSqrt: return std::sqrt(x);
    case Fn::kCbrt: return JavaCbrt(x);
    case Fn::kExp: return StrictExp(x);
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
  using Exec = UnaryExecutor<double, double>;
  if constexpr (kFn == Fn::kLn || kFn == Fn::kLog10 || kFn == Fn::kLog2 || kFn == Fn::kLog1p) {
    return Exec::ExecuteChecked(info, args, [](double x, RowContext& ctx) {
      if (NullBelowDomain<kFn>(x)) ctx.SetNull();
      return Apply<kFn>(x);
    });
  } else {
    return Exec::Execute(info, args, [](double x) { return Apply<kFn>(x); });
  }
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
  return MakeBoundCall(site, DataType::Double(), nullable, std::move(site.args), &UnaryKernel<kFn>,
                       std::move(sql));
}

Result<ColumnPtr> PowKernel(const KernelInfo& info, const ExecArgs& args) {
  return BinaryExecutor<double, double, double>::Execute(
      info, args, [](double base, double exponent) { return std::pow(base, exponent); });
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
  return UnaryExecutor<T, T>::Execute(info, args, [](T v) -> T {
    if constexpr (std::is_floating_point_v<T>) {
      return std::fabs(v);
    } else {
      using U = typename UnsignedOf<T>::type;
      // Two's complement negation without signed overflow.
      return v < 0 ? static_cast<T>(U{0} - static_cast<U>(v)) : v;
    }
  });
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

// round / bround of a double as Spark does it: BigDecimal(Double.toString(x))
// .setScale(d, HALF_UP or HALF_EVEN).toDouble. The shortest decimal text of
// the double is rounded as text and parsed back (correctly rounded), so 2.5
// rounds to 3 and 0.125 to 0.13 as in Spark. NaN and infinities pass; a zero
// result is +0.0 (BigDecimal has no negative zero).
double RoundDoubleJava(double x, int32_t scale, bool half_even) {
  if (!std::isfinite(x) || x == 0) return x == 0 ? 0.0 : x;
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), x, std::chars_format::scientific);
  std::string_view text(buf, static_cast<size_t>(res.ptr - buf));
  bool negative = text[0] == '-';
  if (negative) text.remove_prefix(1);
  size_t e_at = text.find('e');
  int exponent = std::atoi(std::string(text.substr(e_at + 1)).c_str());
  std::string digits;
  for (char c : text.substr(0, e_at)) {
    if (c != '.') digits.push_back(c);
  }
  // value = 0.digits * 10^(exponent + 1); keep `keep` leading digits.
  int64_t keep = static_cast<int64_t>(exponent) + 1 + scale;
  if (keep >= static_cast<int64_t>(digits.size())) return x;
  if (keep < 0) return 0.0;
  char next = digits[static_cast<size_t>(keep)];
  bool rest_nonzero =
      digits.find_first_not_of('0', static_cast<size_t>(keep) + 1) != std::string::npos;
  bool last_odd = keep > 0 && ((digits[static_cast<size_t>(keep) - 1] - '0') % 2 == 1);
  bool up = half_even ? (next > '5' || (next == '5' && (rest_nonzero || last_odd))) : next >= '5';
  std::string kept = digits.substr(0, static_cast<size_t>(keep));
  if (kept.empty()) kept = "0";
  // Add one at the last kept digit.
  int carry_exp = 0;
  if (up) {
    int i = static_cast<int>(kept.size()) - 1;
    while (i >= 0 && kept[static_cast<size_t>(i)] == '9') {
      kept[static_cast<size_t>(i)] = '0';
      --i;
    }
    if (i < 0) {
      kept.insert(kept.begin(), '1');
      carry_exp = 1;
    } else {
      kept[static_cast<size_t>(i)] = static_cast<char>(kept[static_cast<size_t>(i)] + 1);
    }
  }
  // kept holds the digits of value * 10^scale (an integer), possibly with a
  // leading carry.
  (void)carry_exp;
  std::string number = kept + "e" + std::to_string(-static_cast<int64_t>(scale));
  double out = std::strtod(number.c_str(), nullptr);
  if (out == 0) return 0.0;
  return negative ? -out : out;
}

template <typename T>
T RoundIntegral(T v, int32_t scale, bool half_even) {
  if (scale >= 0) return v;
  if (scale < -18) return 0;
  int64_t unit = 1;
  for (int32_t i = 0; i < -scale; ++i) unit *= 10;
  __int128 value = v;
  __int128 q = value / unit;
  __int128 r = value % unit;
  __int128 abs_r2 = (r < 0 ? -r : r) * 2;
  bool up = half_even ? (abs_r2 > unit || (abs_r2 == unit && (q % 2 != 0))) : abs_r2 >= unit;
  if (up) q += (value < 0 ? -1 : 1);
  // Spark converts back through BigDecimal.intValue / longValue: wraps.
  return static_cast<T>(q * unit);
}

struct RoundState {
  int32_t scale = 0;
  bool half_even = false;
  int in_scale = 0;
  int out_scale = 0;
  int out_precision = 0;
};

class RoundKernel final : public Kernel {
 public:
  explicit RoundKernel(RoundState state) : s_(state) {}
  Result<ColumnPtr> Exec(const KernelInfo& info, const ExecArgs& args) override {
    switch (info.type->id()) {
      case TypeId::kByte: return Integral<int8_t>(info, args);
      case TypeId::kShort: return Integral<int16_t>(info, args);
      case TypeId::kInt: return Integral<int32_t>(info, args);
      case TypeId::kLong: return Integral<int64_t>(info, args);
      case TypeId::kFloat: return Floating<float>(info, args);
      case TypeId::kDouble: return Floating<double>(info, args);
      case TypeId::kDecimal: return Decimal(info, args);
      default: return Status::Internal("round of ", TypeName(*info.type));
    }
  }

 private:
  template <typename T>
  Result<ColumnPtr> Integral(const KernelInfo& info, const ExecArgs& args) {
    return UnaryExecutor<T, T>::Execute(info.type, args.args[0], args.num_rows, [this](T v) {
      return RoundIntegral<T>(v, s_.scale, s_.half_even);
    });
  }
  template <typename T>
  Result<ColumnPtr> Floating(const KernelInfo& info, const ExecArgs& args) {
    return UnaryExecutor<T, T>::Execute(info.type, args.args[0], args.num_rows, [this](T in) {
      double v = static_cast<double>(in);
      if constexpr (std::is_same_v<T, float>) {
        // Spark rounds a float through its Float.toString text.
        char buf[32];
        auto res = std::to_chars(buf, buf + sizeof(buf), in);
        v = std::strtod(std::string(buf, res.ptr).c_str(), nullptr);
      }
      return static_cast<T>(RoundDoubleJava(v, s_.scale, s_.half_even));
    });
  }
  Result<ColumnPtr> Decimal(const KernelInfo& info, const ExecArgs& args) {
    const int drop = s_.in_scale - std::min<int>(s_.in_scale, s_.scale);
    const int neg = s_.scale < 0 ? -s_.scale : 0;
    auto op = [&](int128 v, RowContext& ctx) -> int128 {
      int total_drop = s_.scale < 0 ? s_.in_scale + neg : drop;
      if (total_drop > 0) {
        if (total_drop > 38) {
          v = 0;
        } else {
          int128 unit = Pow10(total_drop);
          int128 q = v / unit;
          int128 r = v % unit;
          int128 r2 = (r < 0 ? -r : r) * 2;
          bool up = s_.half_even ? (r2 > unit || (r2 == unit && q % 2 != 0)) : r2 >= unit;
          if (up) q += v < 0 ? -1 : 1;
          v = q;
        }
        if (s_.scale < 0) {
          if (neg > 38 || DecimalDigits(v) + neg > s_.out_precision) {
            if (v != 0) {
              ctx.SetNull();
              return 0;
            }
          } else {
            v *= Pow10(neg);
          }
        }
      }
      if (!FitsPrecision(v, s_.out_precision)) ctx.SetNull();
      return v;
    };
    return UnaryExecutor<int128, int128>::ExecuteChecked(info.type, args.args[0], args.num_rows,
                                                         op);
  }
  RoundState s_;
};

template <bool kHalfEven>
Result<BoundNodePtr> BindRound(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 1, 2));
  RoundState state;
  state.half_even = kHalfEven;
  if (site.args.size() == 2) {
    if (!site.args[1]->type()->is_integral()) return ArgTypeError(site, 1, "INT");
    SILT_ASSIGN_OR_RETURN(site.args[1],
                          ImplicitCast(std::move(site.args[1]), DataType::Int(), site.options));
    SILT_ASSIGN_OR_RETURN(ColumnPtr scale, ConstantArg(site, 1, "the scale"));
    state.scale = scale->IsNull(0) ? 0 : scale->Value<int32_t>(0);
  }
  TypeId id = site.args[0]->type()->id();
  if (id == TypeId::kString || id == TypeId::kNull) {
    SILT_RETURN_NOT_OK(CoerceDouble(site, 0));
  } else if (!site.args[0]->type()->is_numeric()) {
    return ArgTypeError(site, 0, "numeric");
  }
  TypePtr in_type = site.args[0]->type();
  TypePtr type = in_type;
  if (in_type->id() == TypeId::kDecimal) {
    int p = in_type->precision();
    int sc = in_type->scale();
    int integral = p - sc + 1;
    state.in_scale = sc;
    if (state.scale < 0) {
      type = DataType::Decimal(std::max(integral, -state.scale + 1), 0);
      if (type->precision() > 38) type = DataType::Decimal(38, 0);
      state.out_scale = 0;
    } else {
      int ns = std::min(sc, state.scale);
      type = BoundedDecimal(integral + ns, ns);
      state.out_scale = type->scale();
    }
    state.out_precision = type->precision();
  }
  std::vector<std::string> sqls = ArgSqls(site.args);
  if (sqls.size() == 1) sqls.push_back("0");
  std::string sql = PrettyCall(site.name, sqls);
  const bool nullable = site.args[0]->nullable() || in_type->id() == TypeId::kDecimal;
  std::vector<BoundNodePtr> args;
  args.push_back(std::move(site.args[0]));
  return MakeBoundCall(site, type, nullable, std::move(args), std::make_unique<RoundKernel>(state),
                       std::move(sql));
}

// floor / ceil: BIGINT for integral and floating input (Math.floor then a
// saturating toLong), DECIMAL(p - s + 1, 0) for decimals.
template <bool kCeil>
Result<ColumnPtr> FloorCeilKernel(const KernelInfo& info, const ExecArgs& args) {
  const TypeId in = info.arg_types[0]->id();
  if (in == TypeId::kDecimal) {
    const int128 unit = Pow10(info.arg_types[0]->scale());
    return UnaryExecutor<int128, int128>::Execute(info, args, [unit](int128 v) {
      int128 q = v / unit;
      int128 r = v % unit;
      if (kCeil && r > 0) ++q;
      if (!kCeil && r < 0) --q;
      return q;
    });
  }
  if (in == TypeId::kDouble) {
    return UnaryExecutor<double, int64_t>::Execute(info, args, [](double x) -> int64_t {
      double v = kCeil ? std::ceil(x) : std::floor(x);
      if (std::isnan(v)) return 0;
      if (v >= 9.2233720368547758e18) return std::numeric_limits<int64_t>::max();
      if (v <= -9.2233720368547758e18) return std::numeric_limits<int64_t>::min();
      return static_cast<int64_t>(v);
    });
  }
  return UnaryExecutor<int64_t, int64_t>::Execute(info, args, [](int64_t v) { return v; });
}

template <bool kCeil>
Result<BoundNodePtr> BindFloorCeil(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 1, 1));
  const DataType& t = *site.args[0]->type();
  TypePtr type = DataType::Long();
  if (t.id() == TypeId::kDecimal) {
    type = BoundedDecimal(t.precision() - t.scale() + 1, 0);
  } else if (t.is_integral()) {
    SILT_ASSIGN_OR_RETURN(site.args[0],
                          ImplicitCast(std::move(site.args[0]), DataType::Long(), site.options));
  } else if (t.is_numeric() || t.id() == TypeId::kString || t.id() == TypeId::kNull) {
    SILT_RETURN_NOT_OK(CoerceDouble(site, 0));
  } else {
    return ArgTypeError(site, 0, "numeric");
  }
  std::string sql = PrettyCall(kCeil ? "CEIL" : "FLOOR", ArgSqls(site.args));
  const bool nullable = AnyNullable(site.args);
  return MakeBoundCall(site, type, nullable, std::move(site.args), &FloorCeilKernel<kCeil>,
                       std::move(sql));
}

// pmod(a, b): the positive remainder; NULL when b is 0.
template <typename T>
Result<ColumnPtr> PmodKernel(const KernelInfo& info, const ExecArgs& args) {
  const bool ansi = info.options.ansi;
  return BinaryExecutor<T, T, T>::ExecuteChecked(
      info, args, [&info, ansi](T x, T y, RowContext& ctx) -> T {
        if (y == 0) {
          ctx.FailOrNull(ansi, [&] {
            return Status::InvalidArgument("Division by zero (row ", ctx.row(), ") in '", info.sql,
                                           "'");
          });
          return 0;
        }
        if constexpr (std::is_floating_point_v<T>) {
          T r = std::fmod(x, y);
          if (r < 0) r = std::fmod(r + y, y);
          return r;
        } else {
          if (y == -1) return 0;
          T r = static_cast<T>(x % y);
          if (r < 0) r = static_cast<T>((r + y) % y);
          return r;
        }
      });
}

Result<BoundNodePtr> BindPmod(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 2, 2));
  TypePtr a = site.args[0]->type();
  TypePtr b = site.args[1]->type();
  if (a->id() == TypeId::kString) a = DataType::Double();
  if (b->id() == TypeId::kString) b = DataType::Double();
  TypePtr type = FindWiderTypeForTwo(a, b);
  if (type == nullptr || !(type->is_numeric() || type->id() == TypeId::kNull)) {
    return ArgTypeError(site, 1, "numeric");
  }
  if (type->id() == TypeId::kNull) type = DataType::Int();
  KernelFn fn = nullptr;
  switch (type->id()) {
    case TypeId::kByte: fn = &PmodKernel<int8_t>; break;
    case TypeId::kShort: fn = &PmodKernel<int16_t>; break;
    case TypeId::kInt: fn = &PmodKernel<int32_t>; break;
    case TypeId::kLong: fn = &PmodKernel<int64_t>; break;
    case TypeId::kFloat: fn = &PmodKernel<float>; break;
    case TypeId::kDouble: fn = &PmodKernel<double>; break;
    default: return Status::NotSupported("pmod of ", TypeName(*type), " in '", site.text, "'");
  }
  for (size_t i = 0; i < 2; ++i) {
    SILT_ASSIGN_OR_RETURN(site.args[i], ImplicitCast(std::move(site.args[i]), type, site.options));
  }
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  return MakeBoundCall(site, type, /*nullable=*/true, std::move(site.args), fn, std::move(sql));
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
  registry->Register("round", &BindRound<false>);
  registry->Register("bround", &BindRound<true>);
  registry->Register("floor", &BindFloorCeil<false>);
  registry->Register("ceil", &BindFloorCeil<true>);
  registry->Register("ceiling", &BindFloorCeil<true>);
  registry->Register("pmod", &BindPmod);
}

}  // namespace silt::expr
