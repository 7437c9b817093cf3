// String functions. concat(a, b, ...) (and the || operator): NULL when any
// argument is NULL; other atomic types are cast to STRING first; all-BINARY
// arguments give BINARY.
#include "silt/columnar/builder.h"
#include "silt/expr/ast.h"
#include "silt/expr/cast.h"
#include "silt/expr/function_registry.h"
#include "silt/expr/kernel_util.h"
#include "silt/expr/type_util.h"

namespace silt::expr {

namespace {

using columnar::ColumnPtr;

Result<ColumnPtr> ConcatKernel(const KernelInfo& info, const ExecArgs& args) {
  int64_t n = args.num_rows;
  std::vector<StringReader> readers;
  readers.reserve(args.args.size());
  for (const Datum& d : args.args) readers.emplace_back(d);
  ValidityOut validity(n);
  validity.InitFromArgs(args.args);
  columnar::ColumnBuilder builder(info.type);
  builder.Reserve(n);
  std::string text;
  for (int64_t row = 0; row < n; ++row) {
    if (!validity.IsValid(row)) {
      builder.AppendNull();
      continue;
    }
    text.clear();
    for (const StringReader& r : readers) text.append(r[row]);
    builder.AppendString(text);
  }
  return builder.Finish();
}

Result<BoundNodePtr> BindConcat(CallSite& site) {
  bool all_binary = !site.args.empty();
  for (const BoundNodePtr& arg : site.args) {
    if (arg->type()->id() != TypeId::kBinary) all_binary = false;
  }
  TypePtr type = all_binary ? DataType::Binary() : DataType::String();
  for (size_t i = 0; i < site.args.size(); ++i) {
    const DataType& t = *site.args[i]->type();
    if (t.is_nested()) return ArgTypeError(site, i, "STRING or BINARY");
    SILT_ASSIGN_OR_RETURN(site.args[i], ImplicitCast(std::move(site.args[i]), type, site.options));
  }
  std::string sql;
  if (site.name == "||") {
    sql = PrettyBinary(BinaryOp::kConcat, site.args[0]->sql(), site.args[1]->sql());
  } else {
    sql = PrettyCall("concat", ArgSqls(site.args));
  }
  bool nullable = AnyNullable(site.args);
  return MakeBoundCall(site, type, nullable, std::move(site.args), &ConcatKernel, std::move(sql));
}

}  // namespace

void RegisterStringFunctions(FunctionRegistry* registry) {
  registry->Register("concat", &BindConcat);
}

}  // namespace silt::expr
