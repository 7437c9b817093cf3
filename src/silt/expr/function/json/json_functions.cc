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
// field gets the text. A MAP or ARRAY schema gives NULL for a bad record, or
// with FAILFAST an error naming the row (FromJsonValueKernel).
//
// CAST(get_json_object(x, 'path') AS BOOLEAN/TINYINT..BIGINT/FLOAT/DOUBLE)
// bound with a BindSession has get_json_object convert the JSON numbers at
// its path to the cast's type as it writes them (JsonCastKernel); any value
// it cannot convert exactly as the text would be cast goes through the text.
#include <algorithm>
#include <cstring>

#include "silt/base/strings.h"
#include "silt/base/utf8.h"
#include "silt/columnar/builder.h"
#include "silt/expr/cast/cast.h"
#include "silt/expr/function/json/json_options.h"
#include "silt/expr/kernel/bind_session_internal.h"
#include "silt/expr/kernel/function_registry.h"
#include "silt/expr/kernel/kernel_util.h"
#include "silt/expr/kernel/type_util.h"
#include "silt/expr/parse/ast.h"
#include "silt/expr/value/time_zone.h"
#include "silt/json/json_decoder.h"
#include "silt/json/json_multi_path.h"

namespace silt::expr {

namespace {

using columnar::Column;
using columnar::ColumnPtr;

// from_json's mode option. DEADLETTER (silt's, for jobs with a deadLetter
// table) decodes as PERMISSIVE and reports each bad record, the ones
// PERMISSIVE marks corrupt, into the context's RowErrors; without one (an
// evaluation outside such a query) it fails as FAILFAST.
enum class FromJsonMode : uint8_t { kPermissive, kFailFast, kDeadLetter };

std::string DeadLetterMessage(const KernelInfo& info) {
  return "Malformed record in " + info.sql +
         " (mode DEADLETTER): not JSON, or a value that does not fit the schema";
}

class FromJsonKernel final : public Kernel {
 public:
  // `decoder` decodes the schema without the corrupt-record field, which
  // (when `corrupt_index` >= 0) is inserted at that position.
  FromJsonKernel(std::unique_ptr<json::JsonDecoder> decoder, int corrupt_index, FromJsonMode mode)
      : decoder_(std::move(decoder)), corrupt_index_(corrupt_index), mode_(mode) {}

  Result<ColumnPtr> Exec(const KernelInfo& info, const ExecArgs& args) override {
    const Column& input = *args.args[0].column;
    json::DecodeStats stats;
    ColumnPtr corrupt;
    RowErrors* row_errors = args.eval != nullptr ? args.eval->row_errors : nullptr;
    const bool dead_letter = mode_ == FromJsonMode::kDeadLetter && row_errors != nullptr;
    const bool fail_fast = mode_ == FromJsonMode::kFailFast ||
                           (mode_ == FromJsonMode::kDeadLetter && row_errors == nullptr);
    bool want_corrupt = corrupt_index_ >= 0 || mode_ != FromJsonMode::kPermissive;
    SILT_ASSIGN_OR_RETURN(ColumnPtr decoded,
                          decoder_->DecodeColumn(input, want_corrupt ? &corrupt : nullptr, &stats));
    const bool any_bad = stats.malformed_rows > 0 || stats.partial_rows > 0;
    if (dead_letter && any_bad && corrupt != nullptr) {
      // The error vector: one entry per record PERMISSIVE would mark corrupt.
      std::string message = DeadLetterMessage(info);
      for (int64_t row = 0; row < input.length; ++row) {
        if (corrupt->IsValid(row)) row_errors->Add(row, RowErrorKind::kMalformedJson, message);
      }
    }
    if (fail_fast && any_bad) {
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
    // The decoder's struct is NULL for a NULL input and for text without any
    // JSON value (blank); a bad record is a struct of NULL fields (Spark 3).
    auto out = std::make_shared<Column>();
    out->type = info.type;
    out->length = input.length;
    out->validity = decoded->validity;
    out->null_count = decoded->null_count;
    std::vector<ColumnPtr> children = decoded->children;
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
  FromJsonMode mode_;
};

// get_json_object through its input's JsonPathGroup: the first path of the
// group evaluated for a batch parses each document for all paths.
// Once a CAST over the call fused with it (link->fused), the call only hands
// its input to the cast.
class JsonPathKernel final : public Kernel {
 public:
  JsonPathKernel(std::shared_ptr<JsonPathGroup> group, int path_index,
                 std::shared_ptr<JsonCallLink> link)
      : group_(std::move(group)), path_index_(path_index), link_(std::move(link)) {}
  Result<ColumnPtr> Exec(const KernelInfo& info, const ExecArgs& args) override {
    if (link_ != nullptr && link_->fused) {
      link_->input = args.args[0].column;
      return NullColumn(info.type, args.num_rows);
    }
    return group_->Get(path_index_, args.args[0].column);
  }

 private:
  std::shared_ptr<JsonPathGroup> group_;
  int path_index_;
  std::shared_ptr<JsonCallLink> link_;
};

// ---- CAST(get_json_object(x, 'path') AS type), fused: a JSON number (or
// boolean) at the path is converted as the evaluator writes it
// (JsonMultiPathEvaluator::AddPath with a CaptureCast) instead of being
// printed the way get_json_object prints it and parsed back by the cast.
// Every value the direct conversion cannot give exactly as CastColumn would
// over that text (and every non-number result) comes as text and goes
// through CastColumn, so values, NULLs and ANSI errors are those of the
// unfused cast.

json::CaptureCast CaptureCastOf(TypeId id) {
  switch (id) {
    case TypeId::kBoolean: return json::CaptureCast::kBoolean;
    case TypeId::kByte: return json::CaptureCast::kByte;
    case TypeId::kShort: return json::CaptureCast::kShort;
    case TypeId::kInt: return json::CaptureCast::kInt;
    case TypeId::kLong: return json::CaptureCast::kLong;
    case TypeId::kFloat: return json::CaptureCast::kFloat;
    case TypeId::kDouble: return json::CaptureCast::kDouble;
    default: return json::CaptureCast::kNone;
  }
}

class JsonCastKernel final : public Kernel {
 public:
  JsonCastKernel(std::shared_ptr<JsonCallLink> link, int capture_index, bool try_cast,
                 std::string context)
      : link_(std::move(link)),
        capture_index_(capture_index),
        try_cast_(try_cast),
        context_(std::move(context)) {}

  Result<ColumnPtr> Exec(const KernelInfo& info, const ExecArgs& args) override {
    ColumnPtr input = std::move(link_->input);
    link_->input = nullptr;
    if (input == nullptr) {
      return Status::Internal("fused JSON cast without input in '", info.sql, "'");
    }
    SILT_ASSIGN_OR_RETURN(ColumnPtr captured, link_->group->Get(capture_index_, input));
    if (captured->type->id() != TypeId::kStruct || captured->children.size() != 2 ||
        !captured->children[1]->type->Equals(*info.type)) {
      return Status::Internal("fused JSON cast over a path not cast to ", info.type->ToDdl(),
                              " in '", info.sql, "'");
    }
    const Column& text = *captured->children[0];
    const ColumnPtr& converted = captured->children[1];
    // Usually every row was converted (or is NULL): the evaluator's column
    // is the result.
    if (text.null_count == text.length) return converted;
    // The rows left to the text: get_json_object's text cast as usual (the
    // batch's length, so that row errors name the batch's rows), patched
    // over a copy of the converted rows.
    CastOptions options;
    options.ansi = info.options.ansi;
    options.zone_offset_micros = info.options.session_zone_offset_micros;
    options.zone = info.options.session_zone.get();
    options.context = context_;
    if (info.options.dead_letter && args.eval != nullptr) {
      options.row_errors = args.eval->row_errors;
    }
    SILT_ASSIGN_OR_RETURN(ColumnPtr cast, try_cast_ ? TryCastColumn(text, info.type, options)
                                                    : CastColumn(text, info.type, options));
    const int64_t length = converted->length;
    const bool is_bool = info.type->id() == TypeId::kBoolean;
    const int64_t width = is_bool ? 0 : info.type->byte_width();
    auto validity = std::make_shared<Buffer>();
    validity->Resize((length + 7) / 8);
    auto values = std::make_shared<Buffer>();
    values->Resize(is_bool ? (length + 7) / 8 : length * width);
    // A text row is NULL in `converted`: converted rows have validity.
    std::memcpy(validity->mutable_data(), converted->validity->data(), (length + 7) / 8);
    std::memcpy(values->mutable_data(), converted->values->data(), values->size());
    uint8_t* valid_bits = validity->mutable_data();
    uint8_t* out_values = values->mutable_data();
    int64_t null_count = converted->null_count;
    for (int64_t row = 0; row < length; ++row) {
      if (!text.IsValid(row) || !cast->IsValid(row)) continue;
      columnar::SetBit(valid_bits, row);
      --null_count;
      if (is_bool) {
        if (cast->BoolValue(row)) columnar::SetBit(out_values, row);
      } else {
        std::memcpy(out_values + row * width, cast->values->data() + row * width,
                    static_cast<size_t>(width));
      }
    }
    auto out = std::make_shared<Column>();
    out->type = info.type;
    out->length = length;
    out->null_count = null_count;
    if (null_count > 0) out->validity = std::move(validity);
    out->values = std::move(values);
    return ColumnPtr(std::move(out));
  }

 private:
  std::shared_ptr<JsonCallLink> link_;
  int capture_index_;
  bool try_cast_;
  std::string context_;
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
    const TypeId id = (*single)->id();
    if (id == TypeId::kStruct || id == TypeId::kMap || id == TypeId::kArray) return single;
    return Status::NotSupported("from_json with a ", TypeName(**single),
                                " schema (STRUCT, MAP and ARRAY schemas are decoded) in '",
                                site.text, "'");
  }
  return Status::InvalidArgument("Cannot parse the from_json schema '", text,
                                 "': ", schema.status().message(), " in '", site.text, "'");
}

// from_json with a MAP or ARRAY schema: the decoder reads each text's first
// JSON value as the schema's value (JsonDecodeOptions::value_root); a text
// that does not give one (malformed, a JSON null, another type) is NULL, and
// for an ARRAY<STRUCT> schema a single object reads as a one-element array.
// Mode FAILFAST: such a bad record is an error naming the row (a NULL or
// blank text is NULL, not an error, as in Spark).
class FromJsonValueKernel final : public Kernel {
 public:
  FromJsonValueKernel(std::unique_ptr<json::JsonDecoder> decoder, FromJsonMode mode)
      : decoder_(std::move(decoder)), mode_(mode) {}

  Result<ColumnPtr> Exec(const KernelInfo& info, const ExecArgs& args) override {
    const Column& input = *args.args[0].column;
    ColumnPtr corrupt;
    json::DecodeStats stats;
    SILT_ASSIGN_OR_RETURN(ColumnPtr decoded, decoder_->DecodeColumn(input, &corrupt, &stats));
    int64_t nulls = 0;
    auto out = std::make_shared<Column>(*decoded->children[0]);
    out->validity = AndBitmaps(decoded->validity.get(), out->validity.get(), out->length, &nulls);
    out->null_count = nulls;
    RowErrors* row_errors = args.eval != nullptr ? args.eval->row_errors : nullptr;
    const bool dead_letter = mode_ == FromJsonMode::kDeadLetter && row_errors != nullptr;
    if (mode_ != FromJsonMode::kPermissive &&
        (stats.malformed_rows > 0 || stats.partial_rows > 0)) {
      std::string message = dead_letter ? DeadLetterMessage(info) : std::string();
      for (int64_t row = 0; row < input.length; ++row) {
        if (!corrupt->IsValid(row)) continue;
        if (dead_letter) {
          row_errors->Add(row, RowErrorKind::kMalformedJson, message);
          continue;
        }
        return Status::InvalidArgument("Malformed JSON in from_json with mode FAILFAST (row ", row,
                                       "): ", input.StringValue(row), " in '", info.sql, "'");
      }
    }
    return ColumnPtr(std::move(out));
  }

 private:
  std::unique_ptr<json::JsonDecoder> decoder_;
  FromJsonMode mode_;
};

// JSONOptions keys Spark 3.5 reads that do not change from_json's result
// (schema inference, writing, file splitting): accepted and ignored, as
// Spark does.
bool IsInertFromJsonOption(std::string_view lower_key) {
  return lower_key == "samplingratio" || lower_key == "primitivesasstring" ||
         lower_key == "prefersdecimal" || lower_key == "dropfieldifallnull" ||
         lower_key == "ignorenullfields" || lower_key == "compression" ||
         lower_key == "multiline" || lower_key == "infertimestamp";
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

  FromJsonMode mode = FromJsonMode::kPermissive;
  std::string corrupt_name = "_corrupt_record";
  JsonReadOptions read_options(site.options);
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
      std::string key = AsciiLower(keys.StringValue(i));
      std::string value = values.IsNull(i) ? "" : std::string(values.StringValue(i));
      if (key == "mode") {
        std::string mode_name = AsciiLower(value);
        if (mode_name == "failfast") {
          mode = FromJsonMode::kFailFast;
        } else if (mode_name == "deadletter") {
          if (!site.options.dead_letter) {
            return Status::InvalidArgument(
                "from_json mode DEADLETTER needs a deadLetter table in the job (deadLetter: "
                "{path: ...}) in '",
                site.text, "'");
          }
          mode = FromJsonMode::kDeadLetter;
        } else if (mode_name != "permissive") {
          return Status::InvalidArgument(
              "from_json supports modes PERMISSIVE, FAILFAST and DEADLETTER, not '", value,
              "', in '", site.text, "'");
        }
      } else if (key == "columnnameofcorruptrecord") {
        corrupt_name = value;
      } else if (IsInertFromJsonOption(key)) {
        continue;
      } else {
        const std::string where = "from_json in '" + site.text + "':";
        SILT_ASSIGN_OR_RETURN(bool applied, read_options.Set(keys.StringValue(i), value, where));
        if (!applied) {
          return Status::NotSupported(
              "from_json option '", keys.StringValue(i),
              "' (silt reads mode, columnNameOfCorruptRecord, the allow* parser options, "
              "timestampFormat, timestampNTZFormat, dateFormat, enableDateTimeParsingFallback, "
              "timeZone and locale) in '",
              site.text, "'");
        }
      }
    }
  }

  const json::JsonDecodeOptions& decode_options = read_options.decode_options();
  TypePtr result_type = AsNullable(schema);
  if (result_type->id() != TypeId::kStruct) {
    json::JsonDecodeOptions value_options = decode_options;
    value_options.value_root = true;
    Result<std::unique_ptr<json::JsonDecoder>> decoder = json::JsonDecoder::Make(
        DataType::Struct({columnar::Field{"v", result_type, true}}), value_options);
    if (!decoder.ok()) return decoder.status().WithContextParts("in '", site.text, "'");
    std::string sql = PrettyCall(site.name, {site.args[0]->sql()});
    std::vector<BoundNodePtr> args;
    args.push_back(std::move(site.args[0]));
    return MakeBoundCall(
        site, result_type, /*nullable=*/true, std::move(args),
        std::make_unique<FromJsonValueKernel>(std::move(decoder).MoveValueUnsafe(), mode),
        std::move(sql));
  }
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
      json::JsonDecoder::Make(DataType::Struct(std::move(decode_fields)), decode_options);
  if (!decoder.ok()) return decoder.status().WithContextParts("in '", site.text, "'");

  // Spark's JsonToStructs names itself by its input only.
  std::string sql = PrettyCall(site.name, {site.args[0]->sql()});
  std::vector<BoundNodePtr> args;
  args.push_back(std::move(site.args[0]));
  return MakeBoundCall(
      site, result_type, /*nullable=*/true, std::move(args),
      std::make_unique<FromJsonKernel>(std::move(decoder).MoveValueUnsafe(), corrupt_index, mode),
      std::move(sql));
}

// get_json_object(json, path), and json_tuple_field(json, key): one column
// of json_tuple (its `key` read as json::JsonTupleFieldPath).
Result<BoundNodePtr> BindJsonPathCall(CallSite& site, bool tuple_field) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 2, 2));
  SILT_RETURN_NOT_OK(CoerceString(site, 0));
  SILT_RETURN_NOT_OK(CoerceString(site, 1));
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  if (!site.args[1]->foldable()) {
    return Status::NotSupported(site.name, " with a path that varies per row (",
                                site.args[1]->sql(), ") in '", site.text, "'");
  }
  SILT_ASSIGN_OR_RETURN(ColumnPtr path, ConstantArg(site, 1, "the JSON path"));
  if (tuple_field && !path->IsNull(0)) {
    columnar::ColumnBuilder encoded(DataType::String());
    encoded.AppendString(json::JsonTupleFieldPath(path->StringValue(0)));
    path = encoded.Finish();
  }
  std::vector<BoundNodePtr> args;
  args.push_back(std::move(site.args[0]));
  // A NULL path, or one that is not a JSON path (Spark's parser gives up on
  // it), makes every row NULL, as in Spark.
  if (path->IsNull(0) || !json::JsonPathEvaluator::Make(path->StringValue(0)).ok()) {
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
    if (shared == nullptr) {
      shared = std::make_shared<JsonPathGroup>(site.session->state().row_scope);
    }
    group = shared;
  } else {
    group = std::make_shared<JsonPathGroup>();
  }
  Result<int> path_index = group->AddPath(path->StringValue(0));
  if (!path_index.ok()) return path_index.status().WithContextParts("in '", site.text, "'");
  std::shared_ptr<JsonCallLink> link;
  if (site.session != nullptr && !tuple_field) {
    link = std::make_shared<JsonCallLink>();
    link->group = group;
    link->path = std::string(path->StringValue(0));
  }
  BoundNodePtr node = MakeBoundCall(
      site, DataType::String(), /*nullable=*/true, std::move(args),
      std::make_unique<JsonPathKernel>(std::move(group), *path_index, link), std::move(sql));
  if (link != nullptr) {
    link->path_index = *path_index;
    site.session->state().json_calls[node.get()] = std::move(link);
  }
  return node;
}

class ConstantStringKernel final : public Kernel {
 public:
  explicit ConstantStringKernel(std::string value) : value_(std::move(value)) {}
  Result<ColumnPtr> Exec(const KernelInfo& info, const ExecArgs& args) override {
    columnar::ColumnBuilder builder(info.type);
    builder.Reserve(args.num_rows);
    for (int64_t row = 0; row < args.num_rows; ++row) builder.AppendString(value_);
    return builder.Finish();
  }

 private:
  std::string value_;
};

Result<BoundNodePtr> BindSchemaOfJson(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 1, 2));
  json::JsonParseOptions parse_options;
  if (site.args.size() == 2) {
    if (site.args[1]->type()->id() != TypeId::kMap) {
      return ArgTypeError(site, 1, "a map of options, e.g. map('allowComments', 'true')");
    }
    SILT_ASSIGN_OR_RETURN(ColumnPtr options, ConstantArg(site, 1, "the options"));
    const Column& entries = *options->children[0];
    const Column& keys = *entries.children[0];
    const Column& values = *entries.children[1];
    for (int32_t i = options->offsets()[0]; i < options->offsets()[1]; ++i) {
      bool* flag = JsonParserFlag(&parse_options, AsciiLower(keys.StringValue(i)));
      const std::string value = values.IsNull(i) ? "" : AsciiLower(values.StringValue(i));
      if (flag == nullptr || (value != "true" && value != "false")) {
        return Status::NotSupported("schema_of_json option '", keys.StringValue(i), "' = '",
                                    values.IsNull(i) ? "" : values.StringValue(i),
                                    "' (silt reads the parser options allowComments, ... "
                                    "as true or false) in '",
                                    site.text, "'");
      }
      *flag = value == "true";
    }
  }
  if (!IsString(*site.args[0]->type()) && site.args[0]->type()->id() != TypeId::kNull) {
    return ArgTypeError(site, 0, "a STRING");
  }
  if (!site.args[0]->foldable()) {
    return Status::InvalidArgument(
        "schema_of_json needs a constant JSON string (Spark: NON_FOLDABLE_INPUT), not ",
        site.args[0]->sql(), ", in '", site.text, "'");
  }
  SILT_ASSIGN_OR_RETURN(ColumnPtr json, ConstantArg(site, 0, "the JSON"));
  if (json->IsNull(0)) {
    return Status::InvalidArgument("schema_of_json needs a non-NULL JSON string in '", site.text,
                                   "'");
  }
  Result<std::string> ddl = json::InferJsonSchemaDdl(json->StringValue(0), parse_options);
  if (!ddl.ok()) return ddl.status().WithContextParts("in '", site.text, "'");
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  return MakeBoundCall(site, DataType::String(), /*nullable=*/false, {},
                       std::make_unique<ConstantStringKernel>(std::move(ddl).MoveValueUnsafe()),
                       std::move(sql));
}

}  // namespace

std::unique_ptr<Kernel> MakeJsonCastKernel(const BoundNode& child, const columnar::TypePtr& to,
                                           bool ansi, bool try_cast, std::string context,
                                           BindSession* session) {
  // TRY mode converts by the ANSI rules (and makes their failures NULL).
  if (try_cast) ansi = true;
  if (session == nullptr || !session->state().fuse_json_casts) return nullptr;
  switch (to->id()) {
    case TypeId::kBoolean:
    case TypeId::kByte:
    case TypeId::kShort:
    case TypeId::kInt:
    case TypeId::kLong:
    case TypeId::kFloat:
    case TypeId::kDouble: break;
    default: return nullptr;
  }
  auto& calls = session->state().json_calls;
  auto found = calls.find(&child);
  // The map is keyed by address: check that this is still that call.
  if (found == calls.end() || dynamic_cast<const BoundCall*>(&child) == nullptr ||
      found->second->fused) {
    return nullptr;
  }
  std::shared_ptr<JsonCallLink> link = found->second;
  // A wildcard's result is built from several matches: never captured.
  if (link->path.find('*') != std::string::npos) return nullptr;
  Result<int> capture_index =
      link->group->AddPath(link->path, /*capture_scalars=*/true, CaptureCastOf(to->id()), ansi);
  if (!capture_index.ok()) return nullptr;
  link->group->ReleasePath(link->path_index);
  link->fused = true;
  calls.erase(found);
  return std::make_unique<JsonCastKernel>(std::move(link), *capture_index, try_cast,
                                          std::move(context));
}

void RegisterJsonFunctions(FunctionRegistry* registry) {
  registry->Register("from_json", &BindFromJson);
  registry->Register("get_json_object",
                     [](CallSite& site) { return BindJsonPathCall(site, false); });
  registry->Register("json_tuple_field",
                     [](CallSite& site) { return BindJsonPathCall(site, true); });
  registry->Register("schema_of_json", &BindSchemaOfJson);
}

}  // namespace silt::expr
