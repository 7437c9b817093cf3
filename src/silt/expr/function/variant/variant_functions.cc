// Variant functions (Spark 4): parse_json, try_parse_json, variant_get,
// try_variant_get, is_variant_null, schema_of_variant, to_variant_object.
// CAST to and from VARIANT and the conversions variant_get shares with it
// are in cast/cast_variant.h; to_json of a variant is in json/to_json.cc.
//
// parse_json fails the batch on text that is not JSON
// ([MALFORMED_RECORD_IN_PARSING]); in a dead-letter job the row goes to the
// dead-letter table instead (reason malformed_json) and reads NULL.
// try_parse_json gives NULL.
//
// variant_get(v, path [, type]): the path is Spark's JSONPath subset
// ($, .key, ['key'], ["key"], [index]); a path that does not lead to a value
// (a missing key, an index past the end, a key on an array) gives NULL; the
// value is then cast to `type` (default VARIANT) by Spark's variant cast
// rules. An invalid path is [INVALID_VARIANT_GET_PATH].
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "silt/columnar/builder.h"
#include "silt/columnar/nullability.h"
#include "silt/columnar/variant.h"
#include "silt/expr/cast/cast.h"
#include "silt/expr/cast/cast_variant.h"
#include "silt/expr/kernel/function_registry.h"
#include "silt/expr/kernel/kernel_util.h"
#include "silt/expr/kernel/type_util.h"
#include "silt/expr/parse/ast.h"
#include "silt/expr/value/time_zone.h"

namespace silt::expr {

namespace {

using columnar::Column;
using columnar::ColumnBuilder;
using columnar::ColumnPtr;
using columnar::VariantBuilder;
using columnar::VariantMetadata;
using columnar::VariantType;
using columnar::VariantValue;

// ---- parse_json / try_parse_json

class ParseJsonKernel final : public Kernel {
 public:
  explicit ParseJsonKernel(bool fail_on_error) : fail_on_error_(fail_on_error) {}

  Result<ColumnPtr> Exec(const KernelInfo& info, const ExecArgs& args) override {
    const Datum& d = args.args[0];
    const Column& in = *d.column;
    const int64_t n = args.num_rows;
    ColumnBuilder out(DataType::Variant());
    out.Reserve(n);
    RowErrors* row_errors =
        info.options.dead_letter && args.eval != nullptr ? args.eval->row_errors : nullptr;
    columnar::JsonToVariantError error;
    for (int64_t row = 0; row < n; ++row) {
      const int64_t r = d.constant ? 0 : row;
      if (in.IsNull(r)) {
        out.AppendNull();
        continue;
      }
      const std::string_view text = in.StringValue(r);
      if (!columnar::JsonToVariant(text, /*allow_duplicate_keys=*/false, &builder_, &error)) {
        if (!fail_on_error_) {
          out.AppendNull();
          continue;
        }
        std::string message = Failure(text, error, info);
        if (row_errors != nullptr) {
          row_errors->Add(row, RowErrorKind::kMalformedJson, std::move(message));
          out.AppendNull();
          continue;
        }
        return Status::InvalidArgument(message, " (row ", row, ")");
      }
      value_.clear();
      metadata_.clear();
      SILT_RETURN_NOT_OK(builder_.Finish(&value_, &metadata_));
      out.child(0)->AppendString(metadata_);
      out.child(1)->AppendString(value_);
      out.AppendValid();
    }
    return out.Finish();
  }

 private:
  static std::string Failure(std::string_view text, const columnar::JsonToVariantError& error,
                             const KernelInfo& info) {
    if (error.kind == columnar::JsonToVariantError::Kind::kSizeLimit) {
      return Status::Concat(error.message, " in '", info.sql, "'");
    }
    std::string shown(text.substr(0, 200));
    if (text.size() > 200) shown += "...";
    return Status::Concat(
        "[MALFORMED_RECORD_IN_PARSING.WITHOUT_SUGGESTION] Malformed records are detected in "
        "record parsing: ",
        shown, " (", error.message,
        "). Parse Mode: FAILFAST. To process malformed records as "
        "null result, try setting the option 'mode' as 'PERMISSIVE'; in '",
        info.sql, "'");
  }

  bool fail_on_error_;
  VariantBuilder builder_;
  std::string value_;
  std::string metadata_;
};

// A variant argument: VARIANT, or a NULL literal read as one.
Result<BoundNodePtr> VariantArg(CallSite& site, size_t index) {
  const DataType& t = *site.args[index]->type();
  if (t.id() == TypeId::kVariant) return std::move(site.args[index]);
  if (t.id() == TypeId::kNull) {
    return BindCast(std::move(site.args[index]), DataType::Variant(), false, site.options,
                    site.text);
  }
  return ArgTypeError(site, index, "VARIANT");
}

Result<BoundNodePtr> BindParseJsonImpl(CallSite& site, bool fail_on_error) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 1, 1));
  const DataType& t = *site.args[0]->type();
  if (t.id() != TypeId::kString && t.id() != TypeId::kNull) {
    return ArgTypeError(site, 0, "STRING");
  }
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  std::vector<BoundNodePtr> args;
  SILT_ASSIGN_OR_RETURN(BoundNodePtr arg,
                        ImplicitCast(std::move(site.args[0]), DataType::String(), site.options));
  args.push_back(std::move(arg));
  const bool nullable = !fail_on_error || args[0]->nullable() || site.options.dead_letter;
  return MakeBoundCall(site, DataType::Variant(), nullable, std::move(args),
                       std::make_unique<ParseJsonKernel>(fail_on_error), std::move(sql));
}

Result<BoundNodePtr> BindParseJson(CallSite& site) { return BindParseJsonImpl(site, true); }
Result<BoundNodePtr> BindTryParseJson(CallSite& site) { return BindParseJsonImpl(site, false); }

// ---- variant paths

struct PathSegment {
  std::string key;     // an object key, when index < 0
  int64_t index = -1;  // an array index
};

// Spark's VariantPathParser: "$" then any of .key (no '.' or '['),
// ['key'], ["key"], [digits]. nullopt when the text is not such a path;
// an index that overflows an int is reported through *overflow.
std::optional<std::vector<PathSegment>> ParseVariantPath(std::string_view path, bool* overflow) {
  *overflow = false;
  if (path.empty() || path[0] != '$') return std::nullopt;
  std::vector<PathSegment> out;
  size_t pos = 1;
  while (pos < path.size()) {
    PathSegment seg;
    if (path[pos] == '.') {
      size_t end = pos + 1;
      while (end < path.size() && path[end] != '.' && path[end] != '[') ++end;
      if (end == pos + 1) return std::nullopt;
      seg.key = std::string(path.substr(pos + 1, end - pos - 1));
      pos = end;
    } else if (path[pos] == '[') {
      if (pos + 1 < path.size() && (path[pos + 1] == '\'' || path[pos + 1] == '"')) {
        const char quote = path[pos + 1];
        const size_t end = path.find(quote, pos + 2);
        if (end == std::string_view::npos || end + 1 >= path.size() || path[end + 1] != ']') {
          return std::nullopt;
        }
        seg.key = std::string(path.substr(pos + 2, end - pos - 2));
        pos = end + 2;
      } else {
        size_t end = pos + 1;
        while (end < path.size() && path[end] >= '0' && path[end] <= '9') ++end;
        if (end == pos + 1 || end >= path.size() || path[end] != ']') return std::nullopt;
        int64_t v = 0;
        for (size_t i = pos + 1; i < end; ++i) {
          v = v * 10 + (path[i] - '0');
          if (v > INT32_MAX) {
            *overflow = true;
            return std::nullopt;
          }
        }
        seg.index = v;
        pos = end + 1;
      }
    } else {
      return std::nullopt;
    }
    out.push_back(std::move(seg));
  }
  return out;
}

Status InvalidPath(std::string_view path, std::string_view function, bool overflow) {
  if (overflow) {
    return Status::InvalidArgument("[INVALID_VARIANT_GET_PATH] The path `", path,
                                   "` has an array index that does not fit an int in `", function,
                                   "`");
  }
  return Status::InvalidArgument("[INVALID_VARIANT_GET_PATH] The path `", path,
                                 "` is not a valid variant extraction path in `", function, "`");
}

// The value at `path` below `v`, or false when the path leads nowhere.
// Errors (malformed bytes) are reported through *malformed.
bool Navigate(const VariantMetadata& metadata, VariantValue v, const std::vector<PathSegment>& path,
              VariantValue* out, bool* malformed) {
  for (const PathSegment& seg : path) {
    const VariantType type = v.type();
    if (type == VariantType::kInvalid) {
      *malformed = true;
      return false;
    }
    if (seg.index < 0) {
      if (type != VariantType::kObject) return false;
      VariantValue field;
      const int found = v.FindField(metadata, seg.key, &field);
      if (found < 0) *malformed = true;
      if (found <= 0) return false;
      v = field;
    } else {
      if (type != VariantType::kArray) return false;
      VariantValue::Container c;
      v.GetContainer(&c);
      if (static_cast<uint64_t>(seg.index) >= c.num_elements) return false;
      VariantValue element;
      if (!v.ArrayElement(c, static_cast<uint32_t>(seg.index), &element)) {
        *malformed = true;
        return false;
      }
      v = element;
    }
  }
  *out = v;
  return true;
}

class VariantGetKernel final : public Kernel {
 public:
  VariantGetKernel(std::optional<std::vector<PathSegment>> path, bool fail_on_error,
                   std::string function, TimeZonePtr zone)
      : path_(std::move(path)),
        fail_on_error_(fail_on_error),
        function_(std::move(function)),
        zone_(std::move(zone)) {}

  Result<ColumnPtr> Exec(const KernelInfo& info, const ExecArgs& args) override {
    const Datum& v = args.args[0];
    const Datum& p = args.args[1];
    const int64_t n = args.num_rows;
    metas_.assign(static_cast<size_t>(n), VariantMetadata());
    items_.assign(static_cast<size_t>(n), VariantItem());
    std::vector<PathSegment> row_path;
    for (int64_t row = 0; row < n; ++row) {
      const int64_t vr = v.constant ? 0 : row;
      const int64_t pr = p.constant ? 0 : row;
      if (v.column->IsNull(vr) || p.column->IsNull(pr)) continue;
      const std::vector<PathSegment>* path = path_ ? &*path_ : nullptr;
      if (path == nullptr) {
        bool overflow = false;
        std::optional<std::vector<PathSegment>> parsed =
            ParseVariantPath(p.column->StringValue(pr), &overflow);
        if (!parsed) return InvalidPath(p.column->StringValue(pr), function_, overflow);
        row_path = std::move(*parsed);
        path = &row_path;
      }
      VariantMetadata& meta = metas_[static_cast<size_t>(row)];
      if (!meta.Init(v.column->children[0]->StringValue(vr))) return Malformed(row);
      VariantItem& item = items_[static_cast<size_t>(row)];
      bool malformed = false;
      if (Navigate(meta, VariantValue(v.column->children[1]->StringValue(vr)), *path, &item.value,
                   &malformed)) {
        item.metadata = static_cast<int32_t>(row);
        item.missing = false;
      }
      if (malformed) return Malformed(row);
    }
    VariantCastArgs cast;
    cast.fail_on_error = fail_on_error_;
    cast.zone = zone_.get();
    cast.context = info.sql;
    return VariantItemsToType(items_, metas_, info.type, cast);
  }

 private:
  static Status Malformed(int64_t row) {
    return Status::Corruption("[MALFORMED_VARIANT] Variant binary is malformed (row ", row, ")");
  }

  std::optional<std::vector<PathSegment>> path_;
  bool fail_on_error_;
  std::string function_;
  TimeZonePtr zone_;
  std::vector<VariantMetadata> metas_;
  std::vector<VariantItem> items_;
};

Result<BoundNodePtr> BindVariantGetImpl(CallSite& site, bool fail_on_error) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 2, 3));
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  TypePtr target = DataType::Variant();
  if (site.args.size() == 3) {
    if (!IsString(*site.args[2]->type())) return ArgTypeError(site, 2, "a STRING type name");
    SILT_ASSIGN_OR_RETURN(ColumnPtr type_text, ConstantArg(site, 2, "the target type"));
    if (type_text->IsNull(0)) {
      return Status::InvalidArgument("Cannot resolve '", site.text, "': the target type is NULL");
    }
    Result<TypePtr> parsed = columnar::ParseDdlType(type_text->StringValue(0));
    if (!parsed.ok()) {
      return Status::InvalidArgument("Cannot resolve '", site.text,
                                     "': ", parsed.status().message());
    }
    target = columnar::AsNullable(*parsed);
    if (!CanCastFromVariant(*target)) {
      return Status::InvalidArgument("[DATATYPE_MISMATCH.CAST_WITHOUT_SUGGESTION] Cannot resolve '",
                                     site.text, "': cannot cast VARIANT to ", TypeName(*target));
    }
    site.args.pop_back();
  }
  const DataType& path_type = *site.args[1]->type();
  if (path_type.id() != TypeId::kString && path_type.id() != TypeId::kNull) {
    return ArgTypeError(site, 1, "a STRING path");
  }
  std::optional<std::vector<PathSegment>> path;
  if (site.args[1]->foldable()) {
    SILT_ASSIGN_OR_RETURN(ColumnPtr path_text, ConstantArg(site, 1, "the path"));
    if (path_text->type->id() == TypeId::kString && !path_text->IsNull(0)) {
      bool overflow = false;
      path = ParseVariantPath(path_text->StringValue(0), &overflow);
      if (!path) return InvalidPath(path_text->StringValue(0), site.name, overflow);
    }
  }
  std::vector<BoundNodePtr> args;
  SILT_ASSIGN_OR_RETURN(BoundNodePtr v, VariantArg(site, 0));
  args.push_back(std::move(v));
  SILT_ASSIGN_OR_RETURN(BoundNodePtr p,
                        ImplicitCast(std::move(site.args[1]), DataType::String(), site.options));
  args.push_back(std::move(p));
  return MakeBoundCall(site, target, /*nullable=*/true, std::move(args),
                       std::make_unique<VariantGetKernel>(std::move(path), fail_on_error, site.name,
                                                          SessionTimeZone(site.options)),
                       std::move(sql));
}

Result<BoundNodePtr> BindVariantGet(CallSite& site) { return BindVariantGetImpl(site, true); }
Result<BoundNodePtr> BindTryVariantGet(CallSite& site) { return BindVariantGetImpl(site, false); }

// ---- is_variant_null

Result<ColumnPtr> IsVariantNullKernel(const KernelInfo& info, const ExecArgs& args) {
  const Datum& d = args.args[0];
  ColumnBuilder out(info.type);
  out.Reserve(args.num_rows);
  for (int64_t row = 0; row < args.num_rows; ++row) {
    const int64_t r = d.constant ? 0 : row;
    if (d.column->IsNull(r)) {
      out.AppendBool(false);  // a SQL NULL is not a variant null
      continue;
    }
    const std::string_view value = d.column->children[1]->StringValue(r);
    if (value.empty()) {
      return Status::Corruption("[MALFORMED_VARIANT] Variant binary is malformed (row ", row, ")");
    }
    out.AppendBool(value[0] == 0);
  }
  return out.Finish();
}

Result<BoundNodePtr> BindIsVariantNull(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 1, 1));
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  std::vector<BoundNodePtr> args;
  SILT_ASSIGN_OR_RETURN(BoundNodePtr v, VariantArg(site, 0));
  args.push_back(std::move(v));
  return MakeBoundCall(site, DataType::Boolean(), /*nullable=*/false, std::move(args),
                       &IsVariantNullKernel, std::move(sql));
}

// ---- schema_of_variant

// The schema of a variant value as Spark's SchemaOfVariant.schemaOf builds
// it, merged as JsonInferSchema.compatibleType with VARIANT as the default.
struct VType {
  enum Kind : uint8_t {
    kVoid,
    kBoolean,
    kLong,
    kDouble,
    kDecimal,
    kString,
    kDate,
    kTimestamp,
    kTimestampNtz,
    kFloat,
    kBinary,
    kUuid,
    kVariant,
    kObject,
    kArray,
  };
  Kind kind = kVoid;
  int precision = 0;
  int scale = 0;
  std::vector<std::string> names;  // objects, sorted
  std::vector<VType> children;     // object fields; the array element
};

// TypeCoercion.findTightestCommonType for the types a variant can hold.
std::optional<VType> Tightest(const VType& a, const VType& b) {
  if (a.kind == b.kind && a.kind != VType::kDecimal && a.kind != VType::kObject &&
      a.kind != VType::kArray) {
    return a;
  }
  if (a.kind == VType::kDecimal && b.kind == VType::kDecimal && a.precision == b.precision &&
      a.scale == b.scale) {
    return a;
  }
  if (a.kind == VType::kVoid) return b;
  if (b.kind == VType::kVoid) return a;
  // Integral into a decimal that holds it (LONG needs DECIMAL(20,0)).
  auto holds_long = [](const VType& d) { return d.precision - d.scale >= 20; };
  if (a.kind == VType::kLong && b.kind == VType::kDecimal && holds_long(b)) return b;
  if (b.kind == VType::kLong && a.kind == VType::kDecimal && holds_long(a)) return a;
  // Numeric widening (byte < short < int < long < float < double).
  auto rank = [](VType::Kind k) {
    return k == VType::kLong ? 1 : k == VType::kFloat ? 2 : k == VType::kDouble ? 3 : 0;
  };
  if (rank(a.kind) > 0 && rank(b.kind) > 0) return rank(a.kind) >= rank(b.kind) ? a : b;
  // Datetime widening.
  auto dt = [](VType::Kind k) {
    return k == VType::kDate || k == VType::kTimestamp || k == VType::kTimestampNtz;
  };
  if (dt(a.kind) && dt(b.kind)) {
    VType out;
    if (a.kind == VType::kTimestamp || b.kind == VType::kTimestamp) {
      out.kind = VType::kTimestamp;
    } else {
      out.kind = VType::kTimestampNtz;
    }
    return out;
  }
  return std::nullopt;
}

VType Merge(const VType& a, const VType& b) {
  if (std::optional<VType> t = Tightest(a, b)) return *t;
  VType out;
  if ((a.kind == VType::kDouble && b.kind == VType::kDecimal) ||
      (a.kind == VType::kDecimal && b.kind == VType::kDouble)) {
    out.kind = VType::kDouble;
    return out;
  }
  auto decimal_of = [](const VType& t) {
    if (t.kind == VType::kLong) {
      VType d;
      d.kind = VType::kDecimal;
      d.precision = 20;
      d.scale = 0;
      return d;
    }
    return t;
  };
  if ((a.kind == VType::kDecimal || a.kind == VType::kLong) &&
      (b.kind == VType::kDecimal || b.kind == VType::kLong)) {
    const VType da = decimal_of(a);
    const VType db = decimal_of(b);
    const int scale = std::max(da.scale, db.scale);
    const int range = std::max(da.precision - da.scale, db.precision - db.scale);
    if (range + scale > 38) {
      out.kind = VType::kDouble;
    } else {
      out.kind = VType::kDecimal;
      out.precision = range + scale;
      out.scale = scale;
    }
    return out;
  }
  if (a.kind == VType::kObject && b.kind == VType::kObject) {
    out.kind = VType::kObject;
    size_t i = 0;
    size_t j = 0;
    while (i < a.names.size() || j < b.names.size()) {
      const int cmp = i >= a.names.size()   ? 1
                      : j >= b.names.size() ? -1
                                            : a.names[i].compare(b.names[j]);
      if (cmp < 0) {
        out.names.push_back(a.names[i]);
        out.children.push_back(a.children[i++]);
      } else if (cmp > 0) {
        out.names.push_back(b.names[j]);
        out.children.push_back(b.children[j++]);
      } else {
        out.names.push_back(a.names[i]);
        out.children.push_back(Merge(a.children[i++], b.children[j++]));
      }
    }
    return out;
  }
  if (a.kind == VType::kArray && b.kind == VType::kArray) {
    out.kind = VType::kArray;
    out.children.push_back(Merge(a.children[0], b.children[0]));
    return out;
  }
  out.kind = VType::kVariant;
  return out;
}

bool SchemaOf(const VariantMetadata& m, const VariantValue& v, int depth, VType* out) {
  if (depth > 10000) return false;
  switch (v.type()) {
    case VariantType::kInvalid: return false;
    case VariantType::kNull: out->kind = VType::kVoid; return true;
    case VariantType::kBoolean: out->kind = VType::kBoolean; return true;
    case VariantType::kLong: out->kind = VType::kLong; return true;
    case VariantType::kDouble: out->kind = VType::kDouble; return true;
    case VariantType::kFloat: out->kind = VType::kFloat; return true;
    case VariantType::kString: out->kind = VType::kString; return true;
    case VariantType::kDate: out->kind = VType::kDate; return true;
    case VariantType::kTimestamp: out->kind = VType::kTimestamp; return true;
    case VariantType::kTimestampNtz: out->kind = VType::kTimestampNtz; return true;
    case VariantType::kBinary: out->kind = VType::kBinary; return true;
    case VariantType::kUuid: out->kind = VType::kUuid; return true;
    case VariantType::kDecimal: {
      __int128 unscaled = 0;
      int scale = 0;
      v.GetDecimal(&unscaled, &scale);
      columnar::StripTrailingZeros(&unscaled, &scale);
      while (scale < 0) {
        unscaled *= 10;
        ++scale;
      }
      out->kind = VType::kDecimal;
      out->scale = scale;
      out->precision = std::max(columnar::DecimalDigits(unscaled), scale);
      return true;
    }
    case VariantType::kObject: {
      out->kind = VType::kObject;
      VariantValue::Container c;
      v.GetContainer(&c);
      for (uint32_t i = 0; i < c.num_elements; ++i) {
        uint32_t id = 0;
        VariantValue child;
        std::string_view key;
        if (!v.ObjectField(c, i, &id, &child) || !m.Key(id, &key)) return false;
        // Spark validates that the keys are sorted (MALFORMED_VARIANT).
        if (!out->names.empty() && columnar::CompareVariantKeys(out->names.back(), key) >= 0) {
          return false;
        }
        out->names.emplace_back(key);
        VType t;
        if (!SchemaOf(m, child, depth + 1, &t)) return false;
        out->children.push_back(std::move(t));
      }
      return true;
    }
    case VariantType::kArray: {
      out->kind = VType::kArray;
      VType element;
      VariantValue::Container c;
      v.GetContainer(&c);
      for (uint32_t i = 0; i < c.num_elements; ++i) {
        VariantValue child;
        if (!v.ArrayElement(c, i, &child)) return false;
        VType t;
        if (!SchemaOf(m, child, depth + 1, &t)) return false;
        element = Merge(element, t);
      }
      out->children.push_back(std::move(element));
      return true;
    }
  }
  return false;
}

// QuotingUtils.quoteIfNeeded.
void AppendQuotedName(const std::string& name, std::string* out) {
  bool plain = !name.empty();
  bool all_digits = true;
  for (char c : name) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!alnum && c != '_') plain = false;
    if (c < '0' || c > '9') all_digits = false;
  }
  if (plain && !all_digits) {
    out->append(name);
    return;
  }
  out->push_back('`');
  for (char c : name) {
    if (c == '`') out->push_back('`');
    out->push_back(c);
  }
  out->push_back('`');
}

void PrintSchema(const VType& t, std::string* out) {
  switch (t.kind) {
    case VType::kVoid: out->append("VOID"); return;
    case VType::kBoolean: out->append("BOOLEAN"); return;
    case VType::kLong: out->append("BIGINT"); return;
    case VType::kDouble: out->append("DOUBLE"); return;
    case VType::kFloat: out->append("FLOAT"); return;
    case VType::kString: out->append("STRING"); return;
    case VType::kDate: out->append("DATE"); return;
    case VType::kTimestamp: out->append("TIMESTAMP"); return;
    case VType::kTimestampNtz: out->append("TIMESTAMP_NTZ"); return;
    case VType::kBinary: out->append("BINARY"); return;
    case VType::kUuid: out->append("UUID"); return;
    case VType::kVariant: out->append("VARIANT"); return;
    case VType::kDecimal:
      out->append("DECIMAL(" + std::to_string(t.precision) + "," + std::to_string(t.scale) + ")");
      return;
    case VType::kObject:
      out->append("OBJECT<");
      for (size_t i = 0; i < t.names.size(); ++i) {
        if (i > 0) out->append(", ");
        AppendQuotedName(t.names[i], out);
        out->append(": ");
        PrintSchema(t.children[i], out);
      }
      out->push_back('>');
      return;
    case VType::kArray:
      out->append("ARRAY<");
      PrintSchema(t.children[0], out);
      out->push_back('>');
      return;
  }
}

Result<ColumnPtr> SchemaOfVariantKernel(const KernelInfo& info, const ExecArgs& args) {
  const Datum& d = args.args[0];
  ColumnBuilder out(info.type);
  out.Reserve(args.num_rows);
  std::string text;
  for (int64_t row = 0; row < args.num_rows; ++row) {
    const int64_t r = d.constant ? 0 : row;
    if (d.column->IsNull(r)) {
      out.AppendNull();
      continue;
    }
    VariantMetadata m;
    VType t;
    if (!m.Init(d.column->children[0]->StringValue(r)) ||
        !SchemaOf(m, VariantValue(d.column->children[1]->StringValue(r)), 0, &t)) {
      return Status::Corruption("[MALFORMED_VARIANT] Variant binary is malformed (row ", row, ")");
    }
    text.clear();
    PrintSchema(t, &text);
    out.AppendString(text);
  }
  return out.Finish();
}

Result<BoundNodePtr> BindSchemaOfVariant(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 1, 1));
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  std::vector<BoundNodePtr> args;
  SILT_ASSIGN_OR_RETURN(BoundNodePtr v, VariantArg(site, 0));
  const bool nullable = v->nullable();
  args.push_back(std::move(v));
  return MakeBoundCall(site, DataType::String(), nullable, std::move(args), &SchemaOfVariantKernel,
                       std::move(sql));
}

// ---- to_variant_object

Result<ColumnPtr> ToVariantObjectKernel(const KernelInfo&, const ExecArgs& args) {
  const Datum& d = args.args[0];
  SILT_ASSIGN_OR_RETURN(ColumnPtr out, CastToVariantColumn(*d.column));
  if (d.constant && args.num_rows != out->length) return ExpandConstant(*out, args.num_rows);
  return out;
}

Result<BoundNodePtr> BindToVariantObject(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 1, 1));
  const DataType& t = *site.args[0]->type();
  const bool nested =
      t.id() == TypeId::kStruct || t.id() == TypeId::kArray || t.id() == TypeId::kMap;
  if (!nested || !CanCastToVariant(t, /*structs_and_maps=*/true)) {
    return Status::InvalidArgument("[DATATYPE_MISMATCH.CAST_WITHOUT_SUGGESTION] Cannot resolve '",
                                   site.text, "': cannot cast ", TypeName(t), " to VARIANT");
  }
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  std::vector<BoundNodePtr> args;
  const bool nullable = site.args[0]->nullable();
  args.push_back(std::move(site.args[0]));
  return MakeBoundCall(site, DataType::Variant(), nullable, std::move(args), &ToVariantObjectKernel,
                       std::move(sql));
}

}  // namespace

void RegisterVariantFunctions(FunctionRegistry* registry) {
  registry->Register("parse_json", &BindParseJson);
  registry->Register("try_parse_json", &BindTryParseJson);
  registry->Register("variant_get", &BindVariantGet);
  registry->Register("try_variant_get", &BindTryVariantGet);
  registry->Register("is_variant_null", &BindIsVariantNull);
  registry->Register("schema_of_variant", &BindSchemaOfVariant);
  registry->Register("to_variant_object", &BindToVariantObject);
}

}  // namespace silt::expr
