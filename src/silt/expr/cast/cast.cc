#include "silt/expr/cast/cast.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>

#include "silt/base/json_writer.h"
#include "silt/columnar/builder.h"
#include "silt/columnar/temporal.h"
#include "silt/expr/cast/cast_internal.h"
#include "silt/expr/cast/cast_variant.h"
#include "silt/expr/kernel/bind_session_internal.h"
#include "silt/expr/kernel/function_registry.h"
#include "silt/expr/kernel/kernel_util.h"
#include "silt/expr/kernel/type_util.h"
#include "silt/expr/parse/ast.h"
#include "silt/expr/value/decimal_util.h"

namespace silt::expr {

namespace {

using cast_internal::AppendInt;
using cast_internal::AppendTimestampText;
using cast_internal::CastCtx;
using cast_internal::CastToBinary;
using cast_internal::CastToBoolean;
using cast_internal::CastToDate;
using cast_internal::CastToDecimal;
using cast_internal::CastToFloating;
using cast_internal::CastToIntegral;
using cast_internal::CastToString;
using cast_internal::CastToTimestamp;
using cast_internal::CastToTimestampNtz;
using cast_internal::FixedOffsetMicros;
using cast_internal::SaturatingAdd;
using cast_internal::ZoneWithRules;
using columnar::Column;
using columnar::ColumnBuilder;
using columnar::ColumnPtr;
using columnar::kMicrosPerDay;
using columnar::kMicrosPerSecond;

Result<ColumnPtr> CastNested(const CastCtx& c, const Column& in) {
  auto out = std::make_shared<Column>(in);
  out->type = c.to;
  out->children.clear();
  switch (c.to->id()) {
    case TypeId::kStruct:
      for (int i = 0; i < c.to->num_fields(); ++i) {
        SILT_ASSIGN_OR_RETURN(ColumnPtr child, CastColumn(*in.children[static_cast<size_t>(i)],
                                                          c.to->field(i).type, c.options));
        out->children.push_back(std::move(child));
      }
      break;
    case TypeId::kArray: {
      SILT_ASSIGN_OR_RETURN(ColumnPtr child,
                            CastColumn(*in.children[0], c.to->element_type(), c.options));
      out->children.push_back(std::move(child));
      break;
    }
    case TypeId::kMap: {
      TypePtr entry = DataType::Struct(
          {columnar::Field{"key", c.to->key_type(), false},
           columnar::Field{"value", c.to->value_type(), c.to->value_contains_null()}});
      SILT_ASSIGN_OR_RETURN(ColumnPtr child, CastColumn(*in.children[0], entry, c.options));
      out->children.push_back(std::move(child));
      break;
    }
    default: return Status::Internal("Not a nested type: ", TypeName(*c.to));
  }
  return ColumnPtr(std::move(out));
}

bool SameStructure(const DataType& a, const DataType& b) {
  if (a.id() != b.id()) return false;
  switch (a.id()) {
    case TypeId::kDecimal: return a.precision() == b.precision() && a.scale() == b.scale();
    case TypeId::kStruct:
      if (a.num_fields() != b.num_fields()) return false;
      for (int i = 0; i < a.num_fields(); ++i) {
        if (!SameStructure(*a.field(i).type, *b.field(i).type)) return false;
      }
      return true;
    case TypeId::kArray: return SameStructure(*a.element_type(), *b.element_type());
    case TypeId::kMap:
      return SameStructure(*a.key_type(), *b.key_type()) &&
             SameStructure(*a.value_type(), *b.value_type());
    default: return true;
  }
}

class CastKernel final : public Kernel {
 public:
  CastKernel(std::string context, bool try_cast)
      : context_(std::move(context)), try_cast_(try_cast) {}
  Result<ColumnPtr> Exec(const KernelInfo& info, const ExecArgs& args) override {
    CastOptions options;
    options.ansi = info.options.ansi;
    options.zone_offset_micros = info.options.session_zone_offset_micros;
    options.zone = info.options.session_zone.get();
    options.context = context_;
    options.try_cast = try_cast_;
    if (try_cast_ && TryCastsByRow(*info.type)) {
      return TryCastColumn(*args.args[0].column, info.type, options);
    }
    if (info.options.dead_letter && args.eval != nullptr)
      options.row_errors = args.eval->row_errors;
    return CastColumn(*args.args[0].column, info.type, options);
  }

 private:
  std::string context_;
  bool try_cast_;
};

}  // namespace

bool CanCast(const DataType& from, const DataType& to, bool ansi) {
  TypeId f = from.id();
  TypeId t = to.id();
  if (from.Equals(to) || SameStructure(from, to)) return true;
  if (f == TypeId::kNull) return true;
  if (t == TypeId::kVariant) return CanCastToVariant(from, /*structs_and_maps=*/false);
  if (f == TypeId::kVariant) return CanCastFromVariant(to);
  if (t == TypeId::kString) return true;
  switch (t) {
    case TypeId::kBinary: return f == TypeId::kString || (!ansi && from.is_integral());
    case TypeId::kBoolean:
      return f == TypeId::kString || from.is_numeric() ||
             (!ansi && (f == TypeId::kDate || f == TypeId::kTimestamp));
    case TypeId::kTimestamp:
      return f == TypeId::kString || f == TypeId::kDate || f == TypeId::kTimestampNtz ||
             from.is_numeric() || (!ansi && f == TypeId::kBoolean);
    case TypeId::kTimestampNtz:
      return f == TypeId::kString || f == TypeId::kDate || f == TypeId::kTimestamp;
    case TypeId::kDate:
      return f == TypeId::kString || f == TypeId::kTimestamp || f == TypeId::kTimestampNtz;
    case TypeId::kByte:
    case TypeId::kShort:
    case TypeId::kInt:
    case TypeId::kLong:
    case TypeId::kFloat:
    case TypeId::kDouble:
    case TypeId::kDecimal:
      return f == TypeId::kString || f == TypeId::kBoolean || from.is_numeric() ||
             f == TypeId::kTimestamp || (!ansi && f == TypeId::kDate);
    case TypeId::kArray:
      return f == TypeId::kArray && CanCast(*from.element_type(), *to.element_type(), ansi);
    case TypeId::kMap:
      return f == TypeId::kMap && CanCast(*from.key_type(), *to.key_type(), ansi) &&
             CanCast(*from.value_type(), *to.value_type(), ansi);
    case TypeId::kStruct:
      if (f != TypeId::kStruct || from.num_fields() != to.num_fields()) return false;
      for (int i = 0; i < from.num_fields(); ++i) {
        if (!CanCast(*from.field(i).type, *to.field(i).type, ansi)) return false;
      }
      return true;
    default: return false;
  }
}

bool CastForceNullable(const DataType& from, const DataType& to) {
  TypeId f = from.id();
  TypeId t = to.id();
  if (f == TypeId::kNull) return false;
  if (from.Equals(to)) return false;
  // A variant null, or a member that does not convert, is NULL.
  if (f == TypeId::kVariant) return true;
  if (t == TypeId::kVariant) return false;
  if (f == TypeId::kString && t == TypeId::kBinary) return false;
  if (f == TypeId::kString) return true;
  if (t == TypeId::kString) return false;
  if ((f == TypeId::kFloat || f == TypeId::kDouble) && t == TypeId::kTimestamp) return true;
  if (f == TypeId::kTimestamp && t == TypeId::kDate) return false;
  if (t == TypeId::kDate) return true;
  if (f == TypeId::kDate && t == TypeId::kTimestamp) return false;
  if (f == TypeId::kDate) return true;
  if (t == TypeId::kDecimal) {
    // canNullSafeCastToDecimal.
    if (f == TypeId::kBoolean) return to.precision() - to.scale() < 1;
    if (from.is_integral()) {
      TypePtr d = DecimalForIntegral(from);
      return to.precision() - to.scale() < d->precision();
    }
    if (f == TypeId::kDecimal) {
      return to.precision() - to.scale() <= from.precision() - from.scale();
    }
    return true;
  }
  if ((f == TypeId::kFloat || f == TypeId::kDouble) && to.is_integral()) return true;
  return false;
}

Result<ColumnPtr> CastColumn(const Column& input, const TypePtr& to, const CastOptions& options) {
  const DataType& from = *input.type;
  if (from.Equals(*to)) return std::make_shared<Column>(input);
  if (from.id() == TypeId::kNull) return NullColumn(to, input.length);
  if (from.id() == TypeId::kVariant) {
    VariantCastArgs args;
    args.fail_on_error = !options.try_cast;
    args.zone = options.zone != nullptr ? options.zone : TimeZone::Utc().get();
    args.context = options.context;
    return CastVariantColumn(input, to, args);
  }
  if (to->id() == TypeId::kVariant) return CastToVariantColumn(input);
  CastCtx c{options, from, to};
  if (SameStructure(from, *to)) {
    // Only names or nullability differ: the data is reused.
    auto out = std::make_shared<Column>(input);
    out->type = to;
    return ColumnPtr(std::move(out));
  }
  switch (to->id()) {
    case TypeId::kString: return CastToString(c, input);
    case TypeId::kBinary: return CastToBinary(c, input);
    case TypeId::kBoolean: return CastToBoolean(c, input);
    case TypeId::kByte: return CastToIntegral<int8_t>(c, input);
    case TypeId::kShort: return CastToIntegral<int16_t>(c, input);
    case TypeId::kInt: return CastToIntegral<int32_t>(c, input);
    case TypeId::kLong: return CastToIntegral<int64_t>(c, input);
    case TypeId::kFloat: return CastToFloating<float>(c, input);
    case TypeId::kDouble: return CastToFloating<double>(c, input);
    case TypeId::kDecimal: return CastToDecimal(c, input);
    case TypeId::kDate: return CastToDate(c, input);
    case TypeId::kTimestamp: return CastToTimestamp(c, input);
    case TypeId::kTimestampNtz: return CastToTimestampNtz(c, input);
    case TypeId::kStruct:
    case TypeId::kArray:
    case TypeId::kMap: return CastNested(c, input);
    default:
      return Status::Internal("Unsupported cast from ", TypeName(from), " to ", TypeName(*to));
  }
}

namespace {

// `column` with the rows `rows` made NULL.
ColumnPtr WithNullRows(const ColumnPtr& column, const std::vector<int64_t>& rows) {
  auto out = std::make_shared<Column>(*column);
  auto bits = std::make_shared<Buffer>();
  const int64_t bytes = BitmapBytes(out->length);
  if (column->validity != nullptr) {
    bits->Append(column->validity->data(), bytes);
  } else {
    bits->Resize(bytes);
    std::memset(bits->mutable_data(), 0xff, static_cast<size_t>(bytes));
  }
  for (int64_t row : rows) {
    if (columnar::GetBit(bits->data(), row)) {
      columnar::ClearBit(bits->mutable_data(), row);
      ++out->null_count;
    }
  }
  out->validity = std::move(bits);
  return out;
}

}  // namespace

bool TryCastsByRow(const DataType& to) {
  switch (to.id()) {
    case TypeId::kArray:
    case TypeId::kMap:
    case TypeId::kStruct:
    case TypeId::kVariant: return false;
    default: return true;
  }
}

Result<ColumnPtr> TryCastColumn(const Column& input, const TypePtr& to, CastOptions options) {
  // Each ANSI failure is reported as a row error instead of failing the
  // call, and that row becomes NULL (decision 186).
  RowErrors failures;
  options.ansi = true;
  options.row_errors = &failures;
  SILT_ASSIGN_OR_RETURN(ColumnPtr out, CastColumn(input, to, options));
  if (failures.empty()) return out;
  return WithNullRows(out, failures.rows);
}

void AppendValueText(const Column& column, int64_t row, const CastOptions& options,
                     std::string* out) {
  const DataType& type = *column.type;
  switch (type.id()) {
    case TypeId::kNull: out->append("null"); break;
    case TypeId::kBoolean: out->append(column.BoolValue(row) ? "true" : "false"); break;
    case TypeId::kByte: AppendInt(column.Value<int8_t>(row), out); break;
    case TypeId::kShort: AppendInt(column.Value<int16_t>(row), out); break;
    case TypeId::kInt: AppendInt(column.Value<int32_t>(row), out); break;
    case TypeId::kLong: AppendInt(column.Value<int64_t>(row), out); break;
    case TypeId::kFloat: out->append(FormatFloatJava(column.Value<float>(row))); break;
    case TypeId::kDouble: out->append(FormatDoubleJava(column.Value<double>(row))); break;
    case TypeId::kDecimal:
      if (options.ansi) {
        AppendDecimalPlain(column.Value<int128>(row), type.scale(), out);
      } else {
        AppendDecimalJava(column.Value<int128>(row), type.scale(), out);
      }
      break;
    case TypeId::kString:
    case TypeId::kBinary: out->append(column.StringValue(row)); break;
    case TypeId::kDate: out->append(columnar::FormatDate(column.Value<int32_t>(row))); break;
    case TypeId::kTimestamp:
      if (const TimeZone* zone = ZoneWithRules(options)) {
        AppendTimestampText(zone->UtcToLocal(column.Value<int64_t>(row)), out);
      } else {
        AppendTimestampText(SaturatingAdd(column.Value<int64_t>(row), FixedOffsetMicros(options)),
                            out);
      }
      break;
    case TypeId::kTimestampNtz: AppendTimestampText(column.Value<int64_t>(row), out); break;
    case TypeId::kVariant:
      AppendVariantRowJson(column, row, options.zone != nullptr ? *options.zone : *TimeZone::Utc(),
                           out);
      break;
    case TypeId::kStruct: {
      // Spark 3.x: "{1, null, a}".
      out->push_back('{');
      for (size_t i = 0; i < column.children.size(); ++i) {
        if (i > 0) out->append(column.children[i]->IsNull(row) ? "," : ", ");
        if (column.children[i]->IsNull(row)) {
          out->append(i > 0 ? " null" : "null");
        } else {
          AppendValueText(*column.children[i], row, options, out);
        }
      }
      out->push_back('}');
      break;
    }
    case TypeId::kArray: {
      const Column& elements = *column.children[0];
      int32_t begin = column.offsets()[row];
      int32_t end = column.offsets()[row + 1];
      out->push_back('[');
      for (int32_t i = begin; i < end; ++i) {
        if (i > begin) out->append(", ");
        if (elements.IsNull(i)) {
          out->append("null");
        } else {
          AppendValueText(elements, i, options, out);
        }
      }
      out->push_back(']');
      break;
    }
    case TypeId::kMap: {
      const Column& entries = *column.children[0];
      const Column& keys = *entries.children[0];
      const Column& values = *entries.children[1];
      int32_t begin = column.offsets()[row];
      int32_t end = column.offsets()[row + 1];
      out->push_back('{');
      for (int32_t i = begin; i < end; ++i) {
        if (i > begin) out->append(", ");
        AppendValueText(keys, i, options, out);
        out->append(" ->");
        if (values.IsNull(i)) {
          out->append(" null");
        } else {
          out->push_back(' ');
          AppendValueText(values, i, options, out);
        }
      }
      out->push_back('}');
      break;
    }
  }
}

Result<BoundNodePtr> BindCast(BoundNodePtr child, const TypePtr& to, bool user_specified,
                              const EvalOptions& options, std::string_view context, bool try_cast,
                              BindSession* session) {
  const DataType& from = *child->type();
  bool ansi = options.ansi && !try_cast;
  if (!CanCast(from, *to, ansi)) {
    return Status::InvalidArgument("Cannot cast ", child->sql(), " of type ", TypeName(from),
                                   " to ", TypeName(*to), (ansi ? " with ANSI on" : ""), " in '",
                                   context, "'");
  }
  std::string sql = user_specified ? PrettyCast(child->sql(), *to, try_cast) : child->sql();
  bool nullable = child->nullable() || CastForceNullable(from, *to) || (try_cast && options.ansi);
  KernelInfo info;
  info.type = to;
  info.arg_types.push_back(child->type());
  info.options = options;
  info.options.ansi = ansi;
  info.sql = std::move(sql);
  std::unique_ptr<Kernel> kernel;
  if (from.id() == TypeId::kString) {
    kernel = MakeJsonCastKernel(*child, to, ansi, try_cast && TryCastsByRow(*to),
                                std::string(context), session);
  }
  if (kernel == nullptr) kernel = std::make_unique<CastKernel>(std::string(context), try_cast);
  std::vector<BoundNodePtr> args;
  args.push_back(std::move(child));
  return BoundNodePtr(
      std::make_unique<BoundCall>(std::move(info), nullable, std::move(args), std::move(kernel)));
}

Result<BoundNodePtr> ImplicitCast(BoundNodePtr node, const TypePtr& to,
                                  const EvalOptions& options) {
  if (node->type()->Equals(*to)) return node;
  std::string context = node->sql();
  return BindCast(std::move(node), to, /*user_specified=*/false, options, context);
}

// Spark's type-named cast functions: int(x), string(x), double(x), ...
template <TypeId kId>
Result<BoundNodePtr> BindTypeFunction(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 1, 1));
  TypePtr to;
  switch (kId) {
    case TypeId::kBoolean: to = DataType::Boolean(); break;
    case TypeId::kByte: to = DataType::Byte(); break;
    case TypeId::kShort: to = DataType::Short(); break;
    case TypeId::kInt: to = DataType::Int(); break;
    case TypeId::kLong: to = DataType::Long(); break;
    case TypeId::kFloat: to = DataType::Float(); break;
    case TypeId::kDouble: to = DataType::Double(); break;
    case TypeId::kDecimal: to = DataType::Decimal(10, 0); break;
    case TypeId::kDate: to = DataType::Date(); break;
    case TypeId::kTimestamp: to = DataType::Timestamp(); break;
    case TypeId::kBinary: to = DataType::Binary(); break;
    default: to = DataType::String(); break;
  }
  return BindCast(std::move(site.args[0]), to, /*user_specified=*/true, site.options, site.text,
                  /*try_cast=*/false, site.session);
}

void RegisterCastFunctions(FunctionRegistry* registry) {
  registry->Register("boolean", &BindTypeFunction<TypeId::kBoolean>);
  registry->Register("tinyint", &BindTypeFunction<TypeId::kByte>);
  registry->Register("smallint", &BindTypeFunction<TypeId::kShort>);
  registry->Register("int", &BindTypeFunction<TypeId::kInt>);
  registry->Register("bigint", &BindTypeFunction<TypeId::kLong>);
  registry->Register("float", &BindTypeFunction<TypeId::kFloat>);
  registry->Register("double", &BindTypeFunction<TypeId::kDouble>);
  registry->Register("decimal", &BindTypeFunction<TypeId::kDecimal>);
  registry->Register("date", &BindTypeFunction<TypeId::kDate>);
  registry->Register("timestamp", &BindTypeFunction<TypeId::kTimestamp>);
  registry->Register("binary", &BindTypeFunction<TypeId::kBinary>);
  registry->Register("string", &BindTypeFunction<TypeId::kString>);
}

Status CoerceToString(CallSite& site, size_t index) {
  const columnar::DataType& t = *site.args[index]->type();
  if (t.id() == columnar::TypeId::kString) return Status::OK();
  if (t.is_nested()) return ArgTypeError(site, index, "STRING");
  SILT_ASSIGN_OR_RETURN(site.args[index], ImplicitCast(std::move(site.args[index]),
                                                       columnar::DataType::String(), site.options));
  return Status::OK();
}

}  // namespace silt::expr