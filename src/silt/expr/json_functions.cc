// JSON functions: from_json(text, schema [, options]) and
// get_json_object(text, path), over json::JsonDecoder and
// json::JsonPathEvaluator.
//
// from_json follows Spark 3.5: the schema is a constant DDL string ("a INT,
// b STRING") or schema JSON; the result type is the schema made nullable
// throughout; NULL input gives a NULL struct, malformed input a struct of
// NULL fields (mode PERMISSIVE, the default) plus the raw text in the
// columnNameOfCorruptRecord field when the schema has one, or an error
// (mode FAILFAST). As in Spark, a value that does not fit its field's type
// also makes the record bad: the other fields are kept and the corrupt-record
// field gets the text.
#include <cstring>

#include "silt/columnar/builder.h"
#include "silt/expr/ast.h"
#include "silt/expr/bind_session_internal.h"
#include "silt/expr/cast.h"
#include "silt/expr/function_registry.h"
#include "silt/expr/kernel_util.h"
#include "silt/expr/type_util.h"
#include "silt/json/json_decoder.h"

namespace silt::expr {

namespace {

// True when both validity bitmaps mark the same rows valid.
bool SameValidity(const columnar::Column& a, const columnar::Column& b) {
  if (a.null_count != b.null_count) return false;
  if (a.null_count == 0) return true;
  if (a.validity == b.validity) return true;
  if (a.validity == nullptr || b.validity == nullptr) return false;
  const int64_t full_bytes = a.length / 8;
  if (std::memcmp(a.validity->data(), b.validity->data(), static_cast<size_t>(full_bytes)) != 0) {
    return false;
  }
  for (int64_t row_idx = full_bytes * 8; row_idx < a.length; ++row_idx) {
    if (a.IsValid(row_idx) != b.IsValid(row_idx)) return false;
  }
  return true;
}

// Same values: the same string buffers (a struct field re-read for each
// select item is a new Column over the same buffers) and the same nulls.
bool SameData(const columnar::Column& a, const columnar::Column& b) {
  return a.type->id() == b.type->id() && a.length == b.length && a.values == b.values &&
         a.data == b.data && SameValidity(a, b);
}

}  // namespace

Result<columnar::ColumnPtr> JsonPathGroup::Get(int path_index, const columnar::ColumnPtr& input) {
  const bool hit = cached_input_ != nullptr &&
                   static_cast<int>(cached_results_.size()) == evaluator_->num_paths() &&
                   (cached_input_ == input || SameData(*cached_input_, *input));
  if (!hit) {
    cached_input_ = nullptr;
    SILT_ASSIGN_OR_RETURN(cached_results_, evaluator_->Evaluate(*input));
    cached_input_ = input;
  }
  return cached_results_[static_cast<size_t>(path_index)];
}

namespace {

using columnar::Column;
using columnar::ColumnPtr;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

class FromJsonKernel final : public Kernel {
 public:
  // `decoder` decodes the schema without the corrupt-record field, which
  // (when `corrupt_index` >= 0) is inserted at that position.
  FromJsonKernel(std::unique_ptr<json::JsonDecoder> decoder, int corrupt_index, bool fail_fast)
      : decoder_(std::move(decoder)), corrupt_index_(corrupt_index), fail_fast_(fail_fast) {}

  Result<ColumnPtr> Exec(const KernelInfo& info, const ExecArgs& args) override {
    const Column& input = *args.args[0].column;
    json::DecodeStats stats;
    ColumnPtr corrupt;
    bool want_corrupt = corrupt_index_ >= 0 || fail_fast_;
    SILT_ASSIGN_OR_RETURN(ColumnPtr decoded,
                          decoder_->DecodeColumn(input, want_corrupt ? &corrupt : nullptr, &stats));
    if (fail_fast_ && (stats.malformed_rows > 0 || stats.mismatched_fields > 0)) {
      for (int64_t row = 0; row < input.length; ++row) {
        if (corrupt != nullptr && corrupt->IsValid(row)) {
          return Status::InvalidArgument("Malformed JSON in from_json with mode FAILFAST (row ",
                                         row, "): ", corrupt->StringValue(row), " in '", info.sql,
                                         "'");
        }
      }
      return Status::InvalidArgument("Malformed JSON in from_json with mode FAILFAST in '",
                                     info.sql, "'");
    }
    auto out = std::make_shared<Column>();
    out->type = info.type;
    out->length = input.length;
    // Spark 3 keeps a (field-wise NULL) struct for malformed text; only a
    // NULL input is a NULL struct.
    out->validity = input.validity;
    out->null_count = input.null_count;
    std::vector<ColumnPtr> children = decoded->children;
    if (stats.malformed_rows > 0 && decoded->validity != nullptr) {
      // The decoder nulls malformed rows at the struct level; make sure the
      // fields read NULL there now that the struct itself is valid.
      for (ColumnPtr& child : children) {
        int64_t nulls = 0;
        auto fixed = std::make_shared<Column>(*child);
        fixed->validity =
            AndBitmaps(decoded->validity.get(), child->validity.get(), child->length, &nulls);
        fixed->null_count = nulls;
        child = std::move(fixed);
      }
    }
    if (corrupt_index_ >= 0) {
      ColumnPtr text = corrupt != nullptr ? corrupt : NullColumn(DataType::String(), input.length);
      children.insert(children.begin() + corrupt_index_, std::move(text));
    }
    out->children = std::move(children);
    return ColumnPtr(std::move(out));
  }

 private:
  std::unique_ptr<json::JsonDecoder> decoder_;
  int corrupt_index_;
  bool fail_fast_;
};

// get_json_object through its input's JsonPathGroup: the first path of the
// group evaluated for a batch parses each document for all paths.
class JsonPathKernel final : public Kernel {
 public:
  JsonPathKernel(std::shared_ptr<JsonPathGroup> group, int path_index)
      : group_(std::move(group)), path_index_(path_index) {}
  Result<ColumnPtr> Exec(const KernelInfo&, const ExecArgs& args) override {
    return group_->Get(path_index_, args.args[0].column);
  }

 private:
  std::shared_ptr<JsonPathGroup> group_;
  int path_index_;
};

// A STRING argument: other atomic types are cast, as Spark's implicit casts
// do for functions expecting strings.
Status CoerceString(CallSite& site, size_t index) {
  const DataType& t = *site.args[index]->type();
  if (IsString(t)) return Status::OK();
  if (t.is_nested()) return ArgTypeError(site, index, "STRING");
  SILT_ASSIGN_OR_RETURN(site.args[index], ImplicitCast(std::move(site.args[index]),
                                                       DataType::String(), site.options));
  return Status::OK();
}

Result<TypePtr> ParseSchemaText(const CallSite& site, std::string_view text) {
  std::string_view trimmed = text;
  while (!trimmed.empty() && (trimmed.front() == ' ' || trimmed.front() == '\n')) {
    trimmed.remove_prefix(1);
  }
  if (!trimmed.empty() && trimmed.front() == '{') {
    Result<TypePtr> from_json = columnar::SchemaFromJson(trimmed);
    if (from_json.ok()) return from_json;
  }
  Result<TypePtr> schema = columnar::ParseDdlSchema(text);
  if (schema.ok()) return schema;
  Result<TypePtr> single = columnar::ParseDdlType(text);
  if (single.ok()) {
    if ((*single)->id() == TypeId::kStruct) return single;
    return Status::NotSupported("from_json with a ", TypeName(**single),
                                " schema (only STRUCT schemas are decoded) in '", site.text, "'");
  }
  return Status::InvalidArgument("Cannot parse the from_json schema '", text,
                                 "': ", schema.status().message(), " in '", site.text, "'");
}

Result<BoundNodePtr> BindFromJson(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 2, 3));
  SILT_RETURN_NOT_OK(CoerceString(site, 0));
  if (!IsString(*site.args[1]->type())) return ArgTypeError(site, 1, "a STRING schema");
  SILT_ASSIGN_OR_RETURN(ColumnPtr schema_value, ConstantArg(site, 1, "the schema"));
  if (schema_value->IsNull(0)) {
    return Status::InvalidArgument("The from_json schema must not be NULL in '", site.text, "'");
  }
  SILT_ASSIGN_OR_RETURN(TypePtr schema, ParseSchemaText(site, schema_value->StringValue(0)));

  bool fail_fast = false;
  std::string corrupt_name = "_corrupt_record";
  if (site.args.size() == 3) {
    if (site.args[2]->type()->id() != TypeId::kMap) {
      return ArgTypeError(site, 2, "a map of options, e.g. map('mode', 'FAILFAST')");
    }
    SILT_ASSIGN_OR_RETURN(ColumnPtr options, ConstantArg(site, 2, "the options"));
    const Column& entries = *options->children[0];
    const Column& keys = *entries.children[0];
    const Column& values = *entries.children[1];
    if (keys.type->id() != TypeId::kString || values.type->id() != TypeId::kString) {
      return ArgTypeError(site, 2, "a MAP<STRING, STRING> of options");
    }
    for (int32_t i = options->offsets()[0]; i < options->offsets()[1]; ++i) {
      std::string key = Lower(keys.StringValue(i));
      std::string value = values.IsNull(i) ? "" : std::string(values.StringValue(i));
      if (key == "mode") {
        std::string mode = Lower(value);
        if (mode == "failfast") {
          fail_fast = true;
        } else if (mode != "permissive") {
          return Status::InvalidArgument("from_json supports modes PERMISSIVE and FAILFAST, not '",
                                         value, "', in '", site.text, "'");
        }
      } else if (key == "columnnameofcorruptrecord") {
        corrupt_name = value;
      } else {
        return Status::NotSupported("from_json option '", keys.StringValue(i),
                                    "' (silt reads mode and columnNameOfCorruptRecord) in '",
                                    site.text, "'");
      }
    }
  }

  TypePtr result_type = AsNullable(schema);
  // The corrupt-record field is filled by silt, not decoded.
  std::vector<columnar::Field> decode_fields;
  int corrupt_index = -1;
  for (int i = 0; i < result_type->num_fields(); ++i) {
    const columnar::Field& f = result_type->field(i);
    if (f.name == corrupt_name) {
      if (f.type->id() != TypeId::kString) {
        return Status::InvalidArgument("The corrupt record field ", f.name,
                                       " must be of type STRING in '", site.text, "'");
      }
      corrupt_index = i;
      continue;
    }
    decode_fields.push_back(f);
  }
  Result<std::unique_ptr<json::JsonDecoder>> decoder =
      json::JsonDecoder::Make(DataType::Struct(std::move(decode_fields)));
  if (!decoder.ok()) return decoder.status().WithContextParts("in '", site.text, "'");

  // Spark's JsonToStructs names itself by its input only.
  std::string sql = PrettyCall(site.name, {site.args[0]->sql()});
  std::vector<BoundNodePtr> args;
  args.push_back(std::move(site.args[0]));
  return MakeBoundCall(site, result_type, /*nullable=*/true, std::move(args),
                       std::make_unique<FromJsonKernel>(std::move(decoder).MoveValueUnsafe(),
                                                        corrupt_index, fail_fast),
                       std::move(sql));
}

Result<BoundNodePtr> BindGetJsonObject(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 2, 2));
  SILT_RETURN_NOT_OK(CoerceString(site, 0));
  SILT_RETURN_NOT_OK(CoerceString(site, 1));
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  if (!site.args[1]->foldable()) {
    return Status::NotSupported("get_json_object with a path that varies per row (",
                                site.args[1]->sql(), ") in '", site.text, "'");
  }
  SILT_ASSIGN_OR_RETURN(ColumnPtr path, ConstantArg(site, 1, "the JSON path"));
  std::vector<BoundNodePtr> args;
  args.push_back(std::move(site.args[0]));
  if (path->IsNull(0)) {
    KernelFn all_null = [](const KernelInfo& info, const ExecArgs& a) -> Result<ColumnPtr> {
      return NullColumn(info.type, a.num_rows);
    };
    return MakeBoundCall(site, DataType::String(), true, std::move(args), all_null, std::move(sql));
  }
  // Calls over the same input (by bound SQL and type) share one group.
  std::shared_ptr<JsonPathGroup> group;
  if (site.session != nullptr) {
    std::string key = args[0]->sql() + '\x1f' + args[0]->type()->ToDdl();
    std::shared_ptr<JsonPathGroup>& shared = site.session->state().json_path_groups[key];
    if (shared == nullptr) shared = std::make_shared<JsonPathGroup>();
    group = shared;
  } else {
    group = std::make_shared<JsonPathGroup>();
  }
  Result<int> path_index = group->AddPath(path->StringValue(0));
  if (!path_index.ok()) return path_index.status().WithContextParts("in '", site.text, "'");
  return MakeBoundCall(site, DataType::String(), /*nullable=*/true, std::move(args),
                       std::make_unique<JsonPathKernel>(std::move(group), *path_index),
                       std::move(sql));
}

}  // namespace

void RegisterJsonFunctions(FunctionRegistry* registry) {
  registry->Register("from_json", &BindFromJson);
  registry->Register("get_json_object", &BindGetJsonObject);
}

}  // namespace silt::expr
