// Boolean logic with SQL's three-valued semantics: AND, OR, NOT, and the
// IS [NOT] NULL predicates (never null themselves).
#include "silt/expr/cast/cast.h"
#include "silt/expr/kernel/executor.h"
#include "silt/expr/kernel/function_registry.h"
#include "silt/expr/kernel/kernel_util.h"
#include "silt/expr/kernel/type_util.h"
#include "silt/expr/parse/ast.h"

namespace silt::expr {

namespace {

using columnar::ColumnPtr;

// false AND x = false; true AND x = x; NULL AND true = NULL.
template <bool kAnd>
Result<ColumnPtr> AndOrKernel(const KernelInfo& info, const ExecArgs& args) {
  int64_t n = args.num_rows;
  BoolReader a(args.args[0]);
  BoolReader b(args.args[1]);
  BoolWriter out(n);
  ValidityOut validity(n);
  for (int64_t row = 0; row < n; ++row) {
    bool va = a.IsValid(row);
    bool vb = b.IsValid(row);
    bool xa = va && a[row];
    bool xb = vb && b[row];
    if constexpr (kAnd) {
      // Decided by a known false on either side.
      bool known_false = (va && !xa) || (vb && !xb);
      if (known_false) {
        out.Set(row, false);
      } else if (va && vb) {
        out.Set(row, true);
      } else {
        validity.SetNull(row);
      }
    } else {
      bool known_true = xa || xb;
      if (known_true) {
        out.Set(row, true);
      } else if (va && vb) {
        out.Set(row, false);
      } else {
        validity.SetNull(row);
      }
    }
  }
  return out.Finish(info.type, &validity);
}

Result<ColumnPtr> NotKernel(const KernelInfo& info, const ExecArgs& args) {
  return UnaryExecutor<bool, bool>::Execute(info, args, [](bool x) { return !x; });
}

template <bool kIsNull>
Result<ColumnPtr> IsNullKernel(const KernelInfo& info, const ExecArgs& args) {
  int64_t n = args.num_rows;
  const columnar::Column& c = *args.args[0].column;
  BoolWriter out(n);
  ValidityOut validity(n);
  int64_t mask = args.args[0].constant ? 0 : ~int64_t{0};
  for (int64_t row = 0; row < n; ++row) {
    bool valid = c.IsValid(row & mask);
    out.Set(row, kIsNull ? !valid : valid);
  }
  return out.Finish(info.type, &validity);
}

// Spark accepts NULL and strings ('true', 'no', ...) where a boolean is
// expected.
Status CoerceBoolean(CallSite& site, size_t index) {
  BoundNodePtr& arg = site.args[index];
  TypeId id = arg->type()->id();
  if (id == TypeId::kBoolean) return Status::OK();
  if (id == TypeId::kNull || id == TypeId::kString) {
    SILT_ASSIGN_OR_RETURN(arg, ImplicitCast(std::move(arg), DataType::Boolean(), site.options));
    return Status::OK();
  }
  return ArgTypeError(site, index, "BOOLEAN");
}

template <bool kAnd>
Result<BoundNodePtr> BindAndOr(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 2, 2));
  SILT_RETURN_NOT_OK(CoerceBoolean(site, 0));
  SILT_RETURN_NOT_OK(CoerceBoolean(site, 1));
  std::string sql =
      PrettyBinary(kAnd ? BinaryOp::kAnd : BinaryOp::kOr, site.args[0]->sql(), site.args[1]->sql());
  bool nullable = AnyNullable(site.args);
  return MakeBoundCall(site, DataType::Boolean(), nullable, std::move(site.args),
                       &AndOrKernel<kAnd>, std::move(sql));
}

Result<BoundNodePtr> BindNot(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 1, 1));
  SILT_RETURN_NOT_OK(CoerceBoolean(site, 0));
  std::string sql = PrettyUnary(UnaryOp::kNot, site.args[0]->sql());
  bool nullable = site.args[0]->nullable();
  return MakeBoundCall(site, DataType::Boolean(), nullable, std::move(site.args), &NotKernel,
                       std::move(sql));
}

template <bool kIsNull>
Result<BoundNodePtr> BindIsNull(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 1, 1));
  std::string sql = PrettyIsNull(site.args[0]->sql(), !kIsNull);
  return MakeBoundCall(site, DataType::Boolean(), /*nullable=*/false, std::move(site.args),
                       &IsNullKernel<kIsNull>, std::move(sql));
}

}  // namespace

void RegisterLogicalFunctions(FunctionRegistry* registry) {
  registry->Register("and", &BindAndOr<true>);
  registry->Register("or", &BindAndOr<false>);
  registry->Register("not", &BindNot);
  registry->Register("isnull", &BindIsNull<true>);
  registry->Register("isnotnull", &BindIsNull<false>);
}

}  // namespace silt::expr
