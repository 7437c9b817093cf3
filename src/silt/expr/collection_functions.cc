// Collection constructors. map(k1, v1, k2, v2, ...) builds a MAP from
// constant keys and values — what option arguments such as from_json's
// map('mode', 'FAILFAST') need. Maps over column values are a later issue.
#include "silt/columnar/builder.h"
#include "silt/expr/ast.h"
#include "silt/expr/cast.h"
#include "silt/expr/function_registry.h"
#include "silt/expr/type_util.h"

namespace silt::expr {

namespace {

using columnar::Column;
using columnar::ColumnBuilder;
using columnar::ColumnPtr;

// Appends row `row` of a primitive column to `builder` (same type).
void AppendScalar(ColumnBuilder* builder, const Column& c, int64_t row) {
  if (c.IsNull(row)) {
    builder->AppendNull();
    return;
  }
  switch (c.type->id()) {
    case TypeId::kBoolean: builder->AppendBool(c.BoolValue(row)); break;
    case TypeId::kByte: builder->Append<int8_t>(c.Value<int8_t>(row)); break;
    case TypeId::kShort: builder->Append<int16_t>(c.Value<int16_t>(row)); break;
    case TypeId::kInt:
    case TypeId::kDate: builder->Append<int32_t>(c.Value<int32_t>(row)); break;
    case TypeId::kLong:
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: builder->Append<int64_t>(c.Value<int64_t>(row)); break;
    case TypeId::kFloat: builder->Append<float>(c.Value<float>(row)); break;
    case TypeId::kDouble: builder->Append<double>(c.Value<double>(row)); break;
    case TypeId::kDecimal: builder->Append<__int128>(c.Value<__int128>(row)); break;
    case TypeId::kString:
    case TypeId::kBinary: builder->AppendString(c.StringValue(row)); break;
    default: builder->AppendNull(); break;
  }
}

Result<BoundNodePtr> BindMap(CallSite& site) {
  if (site.args.size() % 2 != 0) return ArgCountError(site, "an even number of");
  TypePtr key_type = DataType::Null();
  TypePtr value_type = DataType::Null();
  for (size_t i = 0; i < site.args.size(); ++i) {
    TypePtr& common = i % 2 == 0 ? key_type : value_type;
    TypePtr next = FindWiderTypeForTwo(common, site.args[i]->type());
    if (next == nullptr || next->is_nested()) {
      return ArgTypeError(
          site, i,
          "of a primitive type shared by all " + std::string(i % 2 == 0 ? "keys" : "values"));
    }
    common = next;
  }
  if (IsNull(*key_type)) key_type = DataType::String();
  if (IsNull(*value_type)) value_type = DataType::String();
  for (size_t i = 0; i < site.args.size(); ++i) {
    if (!site.args[i]->foldable()) {
      return Status::NotSupported("map() over non-constant values (a later issue): argument ",
                                  i + 1, " (", site.args[i]->sql(), ") in '", site.text, "'");
    }
  }
  std::string sql = PrettyCall("map", ArgSqls(site.args));
  TypePtr type = DataType::Map(key_type, value_type, true);
  ColumnBuilder builder(type);
  ColumnBuilder* entries = builder.child(0);
  for (size_t i = 0; i + 1 < site.args.size(); i += 2) {
    SILT_ASSIGN_OR_RETURN(BoundNodePtr key,
                          ImplicitCast(std::move(site.args[i]), key_type, site.options));
    SILT_ASSIGN_OR_RETURN(BoundNodePtr value,
                          ImplicitCast(std::move(site.args[i + 1]), value_type, site.options));
    SILT_ASSIGN_OR_RETURN(Datum k, EvaluateConstant(*key));
    SILT_ASSIGN_OR_RETURN(Datum v, EvaluateConstant(*value));
    if (k.column->IsNull(0)) {
      return Status::InvalidArgument("Map keys cannot be NULL: ", key->sql(), " in '", site.text,
                                     "'");
    }
    AppendScalar(entries->child(0), *k.column, 0);
    AppendScalar(entries->child(1), *v.column, 0);
    entries->AppendValid();
  }
  builder.CloseList();
  ColumnPtr column = builder.Finish();
  return BoundNodePtr(std::make_unique<BoundLiteral>(std::move(column), /*is_null=*/false,
                                                     std::move(sql), /*written=*/false));
}

}  // namespace

void RegisterCollectionFunctions(FunctionRegistry* registry) {
  registry->Register("map", &BindMap);
}

}  // namespace silt::expr
