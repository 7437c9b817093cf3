// Conditional functions: coalesce(a, b, ...) and its two-argument forms
// nvl / ifnull, if(c, a, b), nvl2(x, a, b) and CASE WHEN. Value arguments
// are cast to their wider common type, as Spark's findWiderCommonType picks
// it. if / nvl2 / CASE compute, per batch, which argument each row takes
// (a small index vector), then gather once per output type.
#include <cstring>

#include "silt/columnar/builder.h"
#include "silt/expr/cast/cast.h"
#include "silt/expr/kernel/function_registry.h"
#include "silt/expr/kernel/kernel_util.h"
#include "silt/expr/kernel/type_util.h"
#include "silt/expr/parse/ast.h"

namespace silt::expr {

namespace {

using columnar::Column;
using columnar::ColumnPtr;

// The first argument that is non-null in `row`, or -1.
int FirstValid(std::span<const Datum> args, int64_t row) {
  for (size_t i = 0; i < args.size(); ++i) {
    const Datum& d = args[i];
    if (d.column->IsValid(d.constant ? 0 : row)) return static_cast<int>(i);
  }
  return -1;
}

Result<ColumnPtr> CoalesceKernel(const KernelInfo& info, const ExecArgs& args) {
  int64_t n = args.num_rows;
  const DataType& type = *info.type;
  ValidityOut validity(n);
  switch (type.id()) {
    case TypeId::kNull: return NullColumn(info.type, n);
    case TypeId::kBoolean: {
      BoolWriter out(n);
      for (int64_t row = 0; row < n; ++row) {
        int i = FirstValid(args.args, row);
        if (i < 0) {
          validity.SetNull(row);
          continue;
        }
        const Datum& d = args.args[static_cast<size_t>(i)];
        out.Set(row, d.column->BoolValue(d.constant ? 0 : row));
      }
      return out.Finish(info.type, &validity);
    }
    case TypeId::kString:
    case TypeId::kBinary: {
      columnar::ColumnBuilder builder(info.type);
      builder.Reserve(n);
      for (int64_t row = 0; row < n; ++row) {
        int i = FirstValid(args.args, row);
        if (i < 0) {
          builder.AppendNull();
          continue;
        }
        const Datum& d = args.args[static_cast<size_t>(i)];
        builder.AppendString(d.column->StringValue(d.constant ? 0 : row));
      }
      return builder.Finish();
    }
    default: {
      // Fixed width: copy the chosen value's bytes.
      size_t width = static_cast<size_t>(type.byte_width());
      auto values = std::make_shared<Buffer>();
      values->Resize(n * static_cast<int64_t>(width));
      uint8_t* dst = values->mutable_data();
      for (int64_t row = 0; row < n; ++row) {
        int i = FirstValid(args.args, row);
        if (i < 0) {
          validity.SetNull(row);
          continue;
        }
        const Datum& d = args.args[static_cast<size_t>(i)];
        int64_t src_row = d.constant ? 0 : row;
        std::memcpy(dst + static_cast<size_t>(row) * width,
                    d.column->values->data() + static_cast<size_t>(src_row) * width, width);
      }
      auto col = std::make_shared<Column>();
      col->type = info.type;
      col->length = n;
      col->values = std::move(values);
      validity.FinishInto(col.get());
      return ColumnPtr(std::move(col));
    }
  }
}

// if(c, a, b): args [c, a, b].
Result<ColumnPtr> IfKernel(const KernelInfo& info, const ExecArgs& args) {
  const int64_t n = args.num_rows;
  BoolReader cond(args.args[0]);
  std::vector<int16_t> choice(static_cast<size_t>(n));
  for (int64_t row = 0; row < n; ++row) {
    choice[static_cast<size_t>(row)] = cond.IsValid(row) && cond[row] ? 1 : 2;
  }
  return GatherChoice(info.type, args.args, choice, n);
}

// nvl2(x, a, b): args [x, a, b].
Result<ColumnPtr> Nvl2Kernel(const KernelInfo& info, const ExecArgs& args) {
  const int64_t n = args.num_rows;
  const Datum& x = args.args[0];
  std::vector<int16_t> choice(static_cast<size_t>(n));
  for (int64_t row = 0; row < n; ++row) {
    choice[static_cast<size_t>(row)] = x.column->IsValid(x.constant ? 0 : row) ? 1 : 2;
  }
  return GatherChoice(info.type, args.args, choice, n);
}

// CASE WHEN: args [c1, v1, c2, v2, ..., (else)].
Result<ColumnPtr> CaseWhenKernel(const KernelInfo& info, const ExecArgs& args) {
  const int64_t n = args.num_rows;
  const size_t num_pairs = args.args.size() / 2;
  const int16_t otherwise =
      args.args.size() % 2 == 1 ? static_cast<int16_t>(args.args.size() - 1) : int16_t{-1};
  std::vector<BoolReader> conditions;
  conditions.reserve(num_pairs);
  for (size_t pair_idx = 0; pair_idx < num_pairs; ++pair_idx) {
    conditions.emplace_back(args.args[pair_idx * 2]);
  }
  std::vector<int16_t> choice(static_cast<size_t>(n), otherwise);
  for (int64_t row = 0; row < n; ++row) {
    for (size_t pair_idx = 0; pair_idx < num_pairs; ++pair_idx) {
      const BoolReader& cond = conditions[pair_idx];
      if (cond.IsValid(row) && cond[row]) {
        choice[static_cast<size_t>(row)] = static_cast<int16_t>(pair_idx * 2 + 1);
        break;
      }
    }
  }
  return GatherChoice(info.type, args.args, choice, n);
}

// A BOOLEAN condition (a NULL literal reads as a NULL boolean).
Status CoerceCondition(CallSite& site, size_t index) {
  TypeId id = site.args[index]->type()->id();
  if (id == TypeId::kBoolean) return Status::OK();
  if (id != TypeId::kNull) return ArgTypeError(site, index, "BOOLEAN");
  SILT_ASSIGN_OR_RETURN(site.args[index], ImplicitCast(std::move(site.args[index]),
                                                       DataType::Boolean(), site.options));
  return Status::OK();
}

// Casts site.args[i] for i in `indices` to their wider common type and
// returns it. Errors: InvalidArgument when there is none; NotSupported for
// nested types.
Result<TypePtr> CoerceValues(CallSite& site, const std::vector<size_t>& indices) {
  TypePtr common = DataType::Null();
  for (size_t i : indices) {
    TypePtr next = FindWiderTypeForTwo(common, site.args[i]->type());
    if (next == nullptr) {
      return Status::InvalidArgument("Cannot resolve '", site.text, "': argument ", i + 1, " (",
                                     site.args[i]->sql(), ") of type ",
                                     TypeName(*site.args[i]->type()), " has no common type with ",
                                     TypeName(*common));
    }
    common = next;
  }
  if (common->is_nested()) {
    return Status::NotSupported(site.name, " over ", TypeName(*common),
                                " values (nested types are a later issue), in '", site.text, "'");
  }
  for (size_t i : indices) {
    SILT_ASSIGN_OR_RETURN(site.args[i],
                          ImplicitCast(std::move(site.args[i]), common, site.options));
  }
  return common;
}

Result<BoundNodePtr> BindIf(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 3, 3));
  SILT_RETURN_NOT_OK(CoerceCondition(site, 0));
  SILT_ASSIGN_OR_RETURN(TypePtr type, CoerceValues(site, {1, 2}));
  const bool nullable = site.args[1]->nullable() || site.args[2]->nullable();
  std::vector<std::string> sqls = ArgSqls(site.args);
  std::string sql = "(IF(" + sqls[0] + ", " + sqls[1] + ", " + sqls[2] + "))";
  return MakeBoundCall(site, type, nullable, std::move(site.args), &IfKernel, std::move(sql));
}

Result<BoundNodePtr> BindNvl2(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 3, 3));
  SILT_ASSIGN_OR_RETURN(TypePtr type, CoerceValues(site, {1, 2}));
  const bool nullable = site.args[1]->nullable() || site.args[2]->nullable();
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  return MakeBoundCall(site, type, nullable, std::move(site.args), &Nvl2Kernel, std::move(sql));
}

Result<BoundNodePtr> BindCaseWhen(CallSite& site) {
  if (site.args.size() < 2) return ArgCountError(site, "at least 2");
  std::vector<size_t> values;
  const bool has_else = site.args.size() % 2 == 1;
  for (size_t i = 0; i + 1 < site.args.size(); i += 2) {
    SILT_RETURN_NOT_OK(CoerceCondition(site, i));
    values.push_back(i + 1);
  }
  if (has_else) values.push_back(site.args.size() - 1);
  SILT_ASSIGN_OR_RETURN(TypePtr type, CoerceValues(site, values));
  // Without ELSE, rows matching no branch are NULL.
  bool nullable = !has_else;
  for (size_t i : values) nullable = nullable || site.args[i]->nullable();
  std::string sql = PrettyCaseWhen(ArgSqls(site.args));
  return MakeBoundCall(site, type, nullable, std::move(site.args), &CaseWhenKernel, std::move(sql));
}

Result<BoundNodePtr> BindCoalesce(CallSite& site) {
  if (site.name == "coalesce") {
    if (site.args.empty()) return ArgCountError(site, "at least 1");
  } else {
    SILT_RETURN_NOT_OK(CheckArgCount(site, 2, 2));
  }
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
  if (common->is_nested()) {
    return Status::NotSupported("coalesce over ", TypeName(*common),
                                " values (nested types are a later issue), in '", site.text, "'");
  }
  bool nullable = true;
  for (BoundNodePtr& arg : site.args) {
    if (!arg->nullable()) nullable = false;
    SILT_ASSIGN_OR_RETURN(arg, ImplicitCast(std::move(arg), common, site.options));
  }
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  return MakeBoundCall(site, common, nullable, std::move(site.args), &CoalesceKernel,
                       std::move(sql));
}

}  // namespace

void RegisterConditionalFunctions(FunctionRegistry* registry) {
  registry->Register("coalesce", &BindCoalesce);
  registry->Register("nvl", &BindCoalesce);
  registry->Register("ifnull", &BindCoalesce);
  registry->Register("if", &BindIf);
  registry->Register("nvl2", &BindNvl2);
  registry->Register(kCaseWhenCall, &BindCaseWhen);
}

}  // namespace silt::expr
