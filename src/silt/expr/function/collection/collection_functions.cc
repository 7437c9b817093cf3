// Collection functions. map(k1, v1, k2, v2, ...) builds a MAP from
// constant keys and values — what option arguments such as from_json's
// map('mode', 'FAILFAST') need. Maps over column values are a later issue.
// array, struct, named_struct build from any values; size, element_at,
// array_contains, array_join, map_keys and map_values read them, with
// Spark 3.5's non-ANSI results (size(NULL) = -1, an index past the end is
// NULL).
#include "silt/columnar/builder.h"
#include "silt/expr/cast/cast.h"
#include "silt/expr/kernel/function_registry.h"
#include "silt/expr/kernel/kernel_util.h"
#include "silt/expr/kernel/type_util.h"
#include "silt/expr/parse/ast.h"

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

// Appends row `row` of `c` (any type) to `builder` (same type).
void AppendValue(ColumnBuilder* builder, const Column& c, int64_t row) {
  if (c.IsNull(row)) {
    builder->AppendNull();
    return;
  }
  switch (c.type->id()) {
    case TypeId::kStruct:
    case TypeId::kVariant:
      for (int i = 0; i < c.type->num_fields(); ++i) {
        AppendValue(builder->child(i), *c.children[static_cast<size_t>(i)], row);
      }
      builder->AppendValid();
      return;
    case TypeId::kArray: {
      const int32_t* off = c.offsets();
      for (int32_t e = off[row]; e < off[row + 1]; ++e) {
        AppendValue(builder->child(0), *c.children[0], e);
      }
      builder->CloseList();
      return;
    }
    case TypeId::kMap: {
      const int32_t* off = c.offsets();
      const Column& entries = *c.children[0];
      ColumnBuilder* eb = builder->child(0);
      for (int32_t e = off[row]; e < off[row + 1]; ++e) {
        AppendValue(eb->child(0), *entries.children[0], e);
        AppendValue(eb->child(1), *entries.children[1], e);
        eb->AppendValid();
      }
      builder->CloseList();
      return;
    }
    default: AppendScalar(builder, c, row); return;
  }
}

// array(a, b, ...): elements of the arguments' wider common type.
Result<ColumnPtr> ArrayKernel(const KernelInfo& info, const ExecArgs& args) {
  const int64_t n = args.num_rows;
  ColumnBuilder builder(info.type);
  builder.Reserve(n);
  for (int64_t row = 0; row < n; ++row) {
    for (const Datum& d : args.args) {
      AppendValue(builder.child(0), *d.column, d.constant ? 0 : row);
    }
    builder.CloseList();
  }
  return builder.Finish();
}

// findWiderTypeForTwo extended to arrays (array<void> from array() widens
// to any array).
TypePtr WiderElementType(const TypePtr& a, const TypePtr& b) {
  if (a->Equals(*b)) return a;
  if (IsNull(*a)) return b;
  if (IsNull(*b)) return a;
  if (a->id() == TypeId::kArray && b->id() == TypeId::kArray) {
    TypePtr e = WiderElementType(a->element_type(), b->element_type());
    if (e == nullptr) return nullptr;
    return DataType::Array(e, a->contains_null() || b->contains_null());
  }
  return FindWiderTypeForTwo(a, b);
}

Result<BoundNodePtr> BindArray(CallSite& site) {
  TypePtr element = DataType::Null();
  for (size_t i = 0; i < site.args.size(); ++i) {
    TypePtr t = site.args[i]->type();
    TypePtr next = WiderElementType(element, t);
    if (next == nullptr) return ArgTypeError(site, i, "of a type shared by all elements");
    element = next;
  }
  bool contains_null = site.args.empty();
  for (size_t i = 0; i < site.args.size(); ++i) {
    SILT_ASSIGN_OR_RETURN(site.args[i],
                          ImplicitCast(std::move(site.args[i]), element, site.options));
    if (site.args[i]->nullable()) contains_null = true;
  }
  std::string sql = PrettyCall("array", ArgSqls(site.args));
  return MakeBoundCall(site, DataType::Array(element, contains_null), false, std::move(site.args),
                       &ArrayKernel, std::move(sql));
}

// struct(...) / named_struct(name, value, ...).
Result<ColumnPtr> StructKernel(const KernelInfo& info, const ExecArgs& args) {
  const int64_t n = args.num_rows;
  ColumnBuilder builder(info.type);
  builder.Reserve(n);
  for (int64_t row = 0; row < n; ++row) {
    for (size_t i = 0; i < args.args.size(); ++i) {
      const Datum& d = args.args[i];
      AppendValue(builder.child(static_cast<int>(i)), *d.column, d.constant ? 0 : row);
    }
    builder.AppendValid();
  }
  return builder.Finish();
}

Result<BoundNodePtr> BindStruct(CallSite& site) {
  std::vector<columnar::Field> fields;
  std::vector<BoundNodePtr> values;
  std::vector<std::string> sqls;
  if (site.name == "named_struct") {
    if (site.args.empty() || site.args.size() % 2 != 0) {
      return ArgCountError(site, "an even number (name, value pairs) of");
    }
    for (size_t i = 0; i < site.args.size(); i += 2) {
      if (!IsString(*site.args[i]->type()) || !site.args[i]->foldable()) {
        return ArgTypeError(site, i, "a constant STRING field name");
      }
      SILT_ASSIGN_OR_RETURN(ColumnPtr name, ConstantArg(site, i, "the field name"));
      if (name->IsNull(0)) return ArgTypeError(site, i, "a non-NULL field name");
      columnar::Field f;
      f.name = std::string(name->StringValue(0));
      f.type = site.args[i + 1]->type();
      f.nullable = site.args[i + 1]->nullable();
      fields.push_back(f);
      sqls.push_back(site.args[i]->sql());
      sqls.push_back(site.args[i + 1]->sql());
      values.push_back(std::move(site.args[i + 1]));
    }
  } else {
    for (size_t i = 0; i < site.args.size(); ++i) {
      columnar::Field f;
      const std::string* column = site.args[i]->column_name();
      f.name = column != nullptr ? *column : "col" + std::to_string(i + 1);
      f.type = site.args[i]->type();
      f.nullable = site.args[i]->nullable();
      fields.push_back(f);
      sqls.push_back(site.args[i]->sql());
      values.push_back(std::move(site.args[i]));
    }
  }
  std::string sql = PrettyCall(site.name, sqls);
  return MakeBoundCall(site, DataType::Struct(std::move(fields)), false, std::move(values),
                       &StructKernel, std::move(sql));
}

// size(array | map): -1 for NULL (spark.sql.legacy.sizeOfNull, true unless
// ANSI).
Result<ColumnPtr> SizeKernel(const KernelInfo& info, const ExecArgs& args) {
  const int64_t n = args.num_rows;
  const Datum& d = args.args[0];
  ValidityOut validity(n);
  FixedWriter<int32_t> out(n);
  for (int64_t row = 0; row < n; ++row) {
    int64_t r = d.constant ? 0 : row;
    if (d.column->IsNull(r)) {
      if (info.options.ansi) {
        validity.SetNull(row);
      } else {
        out.Set(row, -1);
      }
      continue;
    }
    const int32_t* off = d.column->offsets();
    out.Set(row, off[r + 1] - off[r]);
  }
  return out.Finish(info.type, &validity);
}

Result<BoundNodePtr> BindSize(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 1, 1));
  TypeId id = site.args[0]->type()->id();
  if (id == TypeId::kNull) {
    SILT_ASSIGN_OR_RETURN(
        site.args[0],
        ImplicitCast(std::move(site.args[0]), DataType::Array(DataType::Null()), site.options));
  } else if (id != TypeId::kArray && id != TypeId::kMap) {
    return ArgTypeError(site, 0, "ARRAY or MAP");
  }
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  return MakeBoundCall(site, DataType::Int(), site.options.ansi && site.args[0]->nullable(),
                       std::move(site.args), &SizeKernel, std::move(sql));
}

// True when row `a` of `x` equals row `b` of `y` (same primitive type).
bool SameScalar(const Column& x, int64_t a, const Column& y, int64_t b) {
  switch (x.type->id()) {
    case TypeId::kBoolean: return x.BoolValue(a) == y.BoolValue(b);
    case TypeId::kByte: return x.Value<int8_t>(a) == y.Value<int8_t>(b);
    case TypeId::kShort: return x.Value<int16_t>(a) == y.Value<int16_t>(b);
    case TypeId::kInt:
    case TypeId::kDate: return x.Value<int32_t>(a) == y.Value<int32_t>(b);
    case TypeId::kLong:
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: return x.Value<int64_t>(a) == y.Value<int64_t>(b);
    case TypeId::kFloat: {
      float p = x.Value<float>(a);
      float q = y.Value<float>(b);
      return p == q || (p != p && q != q);
    }
    case TypeId::kDouble: {
      double p = x.Value<double>(a);
      double q = y.Value<double>(b);
      return p == q || (p != p && q != q);
    }
    case TypeId::kDecimal: return x.Value<__int128>(a) == y.Value<__int128>(b);
    case TypeId::kString:
    case TypeId::kBinary: return x.StringValue(a) == y.StringValue(b);
    default: return false;
  }
}

// element_at(array, index) / element_at(map, key).
Result<ColumnPtr> ElementAtKernel(const KernelInfo& info, const ExecArgs& args) {
  const int64_t n = args.num_rows;
  const Datum& coll = args.args[0];
  const Datum& key = args.args[1];
  const bool is_map = info.arg_types[0]->id() == TypeId::kMap;
  ColumnBuilder builder(info.type);
  builder.Reserve(n);
  for (int64_t row = 0; row < n; ++row) {
    int64_t cr = coll.constant ? 0 : row;
    int64_t kr = key.constant ? 0 : row;
    if (coll.column->IsNull(cr) || key.column->IsNull(kr)) {
      builder.AppendNull();
      continue;
    }
    const int32_t* off = coll.column->offsets();
    int32_t begin = off[cr];
    int32_t count = off[cr + 1] - begin;
    if (is_map) {
      const Column& entries = *coll.column->children[0];
      int64_t hit = -1;
      for (int32_t e = begin; e < begin + count; ++e) {
        if (SameScalar(*entries.children[0], e, *key.column, kr)) {
          hit = e;
          break;
        }
      }
      if (hit < 0) {
        builder.AppendNull();
      } else {
        AppendValue(&builder, *entries.children[1], hit);
      }
      continue;
    }
    int32_t index = key.column->Value<int32_t>(kr);
    if (index == 0) {
      return Status::InvalidArgument("SQL array indices start at 1 (row ", row, ") in '", info.sql,
                                     "'");
    }
    int64_t at = index > 0 ? int64_t{index} - 1 : int64_t{count} + index;
    if (at < 0 || at >= count) {
      if (info.options.ansi) {
        return Status::InvalidArgument("The index ", index, " is out of bounds (the array has ",
                                       count, " elements, row ", row, ") in '", info.sql, "'");
      }
      builder.AppendNull();
      continue;
    }
    AppendValue(&builder, *coll.column->children[0], begin + at);
  }
  return builder.Finish();
}

Result<BoundNodePtr> BindElementAt(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 2, 2));
  const DataType& t = *site.args[0]->type();
  TypePtr type;
  if (t.id() == TypeId::kArray) {
    if (!site.args[1]->type()->is_integral() && !IsNull(*site.args[1]->type())) {
      return ArgTypeError(site, 1, "INT");
    }
    SILT_ASSIGN_OR_RETURN(site.args[1],
                          ImplicitCast(std::move(site.args[1]), DataType::Int(), site.options));
    type = t.element_type();
  } else if (t.id() == TypeId::kMap) {
    if (t.key_type()->is_nested()) {
      return Status::NotSupported("element_at on a map with nested keys in '", site.text, "'");
    }
    SILT_ASSIGN_OR_RETURN(site.args[1],
                          ImplicitCast(std::move(site.args[1]), t.key_type(), site.options));
    type = t.value_type();
  } else {
    return ArgTypeError(site, 0, "ARRAY or MAP");
  }
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  return MakeBoundCall(site, type, true, std::move(site.args), &ElementAtKernel, std::move(sql));
}

// array_contains(array, value): NULL when not found and the array has a
// NULL element.
Result<ColumnPtr> ArrayContainsKernel(const KernelInfo& info, const ExecArgs& args) {
  const int64_t n = args.num_rows;
  const Datum& arr = args.args[0];
  const Datum& v = args.args[1];
  ValidityOut validity(n);
  BoolWriter out(n);
  for (int64_t row = 0; row < n; ++row) {
    int64_t ar = arr.constant ? 0 : row;
    int64_t vr = v.constant ? 0 : row;
    out.Set(row, false);
    if (arr.column->IsNull(ar) || v.column->IsNull(vr)) {
      validity.SetNull(row);
      continue;
    }
    const int32_t* off = arr.column->offsets();
    const Column& elems = *arr.column->children[0];
    bool found = false;
    bool saw_null = false;
    for (int32_t e = off[ar]; e < off[ar + 1]; ++e) {
      if (elems.IsNull(e)) {
        saw_null = true;
      } else if (SameScalar(elems, e, *v.column, vr)) {
        found = true;
        break;
      }
    }
    if (found) {
      out.Set(row, true);
    } else if (saw_null) {
      validity.SetNull(row);
    }
  }
  return out.Finish(info.type, &validity);
}

Result<BoundNodePtr> BindArrayContains(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 2, 2));
  const DataType& t = *site.args[0]->type();
  if (t.id() != TypeId::kArray) return ArgTypeError(site, 0, "ARRAY");
  if (t.element_type()->is_nested()) {
    return Status::NotSupported("array_contains on nested elements in '", site.text, "'");
  }
  if (IsNull(*site.args[1]->type())) {
    return Status::InvalidArgument("Cannot resolve '", site.text,
                                   "': NULL-typed values cannot be arguments of array_contains");
  }
  TypePtr common = FindTightestCommonType(t.element_type(), site.args[1]->type());
  if (common == nullptr) return ArgTypeError(site, 1, "of the array's element type");
  if (IsNull(*common)) common = DataType::String();
  SILT_ASSIGN_OR_RETURN(site.args[0],
                        ImplicitCast(std::move(site.args[0]),
                                     DataType::Array(common, t.contains_null()), site.options));
  SILT_ASSIGN_OR_RETURN(site.args[1], ImplicitCast(std::move(site.args[1]), common, site.options));
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  return MakeBoundCall(site, DataType::Boolean(), true, std::move(site.args), &ArrayContainsKernel,
                       std::move(sql));
}

// array_join(array, delimiter[, nullReplacement]).
Result<ColumnPtr> ArrayJoinKernel(const KernelInfo& info, const ExecArgs& args) {
  const int64_t n = args.num_rows;
  const Datum& arr = args.args[0];
  const Datum& delim = args.args[1];
  const bool has_rep = args.args.size() > 2;
  ColumnBuilder builder(info.type);
  builder.Reserve(n);
  std::string text;
  for (int64_t row = 0; row < n; ++row) {
    int64_t ar = arr.constant ? 0 : row;
    int64_t dr = delim.constant ? 0 : row;
    int64_t rr = has_rep && !args.args[2].constant ? row : 0;
    if (arr.column->IsNull(ar) || delim.column->IsNull(dr) ||
        (has_rep && args.args[2].column->IsNull(rr))) {
      builder.AppendNull();
      continue;
    }
    text.clear();
    const int32_t* off = arr.column->offsets();
    const Column& elems = *arr.column->children[0];
    bool first = true;
    for (int32_t e = off[ar]; e < off[ar + 1]; ++e) {
      std::string_view v;
      if (elems.IsNull(e)) {
        if (!has_rep) continue;
        v = args.args[2].column->StringValue(rr);
      } else {
        v = elems.StringValue(e);
      }
      if (!first) text.append(delim.column->StringValue(dr));
      text.append(v);
      first = false;
    }
    builder.AppendString(text);
  }
  return builder.Finish();
}

Result<BoundNodePtr> BindArrayJoin(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 2, 3));
  const DataType& t = *site.args[0]->type();
  if (t.id() != TypeId::kArray || t.element_type()->is_nested()) {
    return ArgTypeError(site, 0, "ARRAY<STRING>");
  }
  if (!IsString(*t.element_type())) {
    SILT_ASSIGN_OR_RETURN(
        site.args[0],
        ImplicitCast(std::move(site.args[0]),
                     DataType::Array(DataType::String(), t.contains_null()), site.options));
  }
  for (size_t i = 1; i < site.args.size(); ++i) {
    if (site.args[i]->type()->is_nested()) return ArgTypeError(site, i, "STRING");
    SILT_ASSIGN_OR_RETURN(site.args[i],
                          ImplicitCast(std::move(site.args[i]), DataType::String(), site.options));
  }
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  return MakeBoundCall(site, DataType::String(), true, std::move(site.args), &ArrayJoinKernel,
                       std::move(sql));
}

// map_keys / map_values: the map's entries child as an array.
template <int kChild>
Result<ColumnPtr> MapPartKernel(const KernelInfo& info, const ExecArgs& args) {
  const int64_t n = args.num_rows;
  const Datum& m = args.args[0];
  ColumnBuilder builder(info.type);
  builder.Reserve(n);
  for (int64_t row = 0; row < n; ++row) {
    int64_t r = m.constant ? 0 : row;
    if (m.column->IsNull(r)) {
      builder.AppendNull();
      continue;
    }
    const int32_t* off = m.column->offsets();
    const Column& part = *m.column->children[0]->children[kChild];
    for (int32_t e = off[r]; e < off[r + 1]; ++e) AppendValue(builder.child(0), part, e);
    builder.CloseList();
  }
  return builder.Finish();
}

template <int kChild>
Result<BoundNodePtr> BindMapPart(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 1, 1));
  const DataType& t = *site.args[0]->type();
  if (t.id() != TypeId::kMap) return ArgTypeError(site, 0, "MAP");
  TypePtr type = kChild == 0 ? DataType::Array(t.key_type(), false)
                             : DataType::Array(t.value_type(), t.value_contains_null());
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  bool nullable = AnyNullable(site.args);
  return MakeBoundCall(site, type, nullable, std::move(site.args), &MapPartKernel<kChild>,
                       std::move(sql));
}

// array[index]: 0-based; NULL outside the array (non-ANSI).
Result<ColumnPtr> SubscriptArrayKernel(const KernelInfo& info, const ExecArgs& args) {
  const int64_t n = args.num_rows;
  const Datum& coll = args.args[0];
  const Datum& key = args.args[1];
  ColumnBuilder builder(info.type);
  builder.Reserve(n);
  for (int64_t row = 0; row < n; ++row) {
    int64_t cr = coll.constant ? 0 : row;
    int64_t kr = key.constant ? 0 : row;
    if (coll.column->IsNull(cr) || key.column->IsNull(kr)) {
      builder.AppendNull();
      continue;
    }
    const int32_t* off = coll.column->offsets();
    int32_t count = off[cr + 1] - off[cr];
    int32_t index = key.column->Value<int32_t>(kr);
    if (index < 0 || index >= count) {
      if (info.options.ansi) {
        return Status::InvalidArgument("The index ", index, " is out of bounds (the array has ",
                                       count, " elements, row ", row, ") in '", info.sql, "'");
      }
      builder.AppendNull();
      continue;
    }
    AppendValue(&builder, *coll.column->children[0], off[cr] + index);
  }
  return builder.Finish();
}

Result<BoundNodePtr> BindSubscript(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 2, 2));
  const DataType& t = *site.args[0]->type();
  std::string sql = site.args[0]->sql() + "[" + site.args[1]->sql() + "]";
  if (t.id() == TypeId::kArray) {
    if (!site.args[1]->type()->is_integral() && !IsNull(*site.args[1]->type())) {
      return ArgTypeError(site, 1, "an INT index");
    }
    SILT_ASSIGN_OR_RETURN(site.args[1],
                          ImplicitCast(std::move(site.args[1]), DataType::Int(), site.options));
    TypePtr type = t.element_type();
    return MakeBoundCall(site, type, true, std::move(site.args), &SubscriptArrayKernel,
                         std::move(sql));
  }
  if (t.id() == TypeId::kMap) {
    SILT_ASSIGN_OR_RETURN(BoundNodePtr bound, BindElementAt(site));
    (void)bound;
    return bound;
  }
  return ArgTypeError(site, 0, "ARRAY or MAP (for [ ])");
}

}  // namespace

void RegisterCollectionFunctions(FunctionRegistry* registry) {
  registry->Register("map", &BindMap);
  registry->Register("array", &BindArray);
  registry->Register("struct", &BindStruct);
  registry->Register("named_struct", &BindStruct);
  registry->Register("size", &BindSize);
  registry->Register("cardinality", &BindSize);
  registry->Register("element_at", &BindElementAt);
  registry->Register("array_contains", &BindArrayContains);
  registry->Register("array_join", &BindArrayJoin);
  registry->Register("map_keys", &BindMapPart<0>);
  registry->Register("map_values", &BindMapPart<1>);
  registry->Register(kSubscriptCall, &BindSubscript);
}

}  // namespace silt::expr
