// Conditional functions: coalesce(a, b, ...) and its two-argument forms
// nvl / ifnull. Arguments are cast to their wider common type, as Spark's
// findWiderCommonType picks it.
#include <cstring>

#include "silt/columnar/builder.h"
#include "silt/expr/ast.h"
#include "silt/expr/cast.h"
#include "silt/expr/function_registry.h"
#include "silt/expr/kernel_util.h"
#include "silt/expr/type_util.h"

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
}

}  // namespace silt::expr
