#include "silt/stream/stateful/stateful_step.h"

#include <vector>

#include "silt/base/json_writer.h"
#include "silt/base/strings.h"
#include "silt/stream/json_internal.h"
#include "silt/stream/stateful/deduplicate.h"
#include "silt/stream/stateful/stateful_aggregate.h"

namespace silt::stream {

namespace {

constexpr int64_t kFormatVersion = 1;

void WriteStrings(JsonWriter* w, std::string_view key, const std::vector<std::string>& values) {
  w->Key(key);
  w->BeginArray();
  for (const std::string& v : values) w->String(v);
  w->EndArray();
}

Result<std::vector<std::string>> ReadStrings(const simdjson::dom::object& object,
                                             std::string_view key, std::string_view source) {
  std::vector<std::string> out;
  simdjson::dom::element value;
  if (object.at_key(key).get(value)) return out;
  simdjson::dom::array array;
  if (value.get_array().get(array)) {
    return Status::Corruption(source, ": \"", key, "\" must be an array of strings");
  }
  for (simdjson::dom::element item : array) {
    std::string_view text;
    if (item.get_string().get(text)) {
      return Status::Corruption(source, ": \"", key, "\" must be an array of strings");
    }
    out.emplace_back(text);
  }
  return out;
}

// A state schema's JSON without field metadata: the event-time marks the
// keys carry (event_time.h) do not change what the state rows are, and
// checkpoints written before the marks reached a step's output stay valid.
std::string StateSchemaText(const columnar::Schema& schema) {
  std::vector<columnar::Field> fields = schema.fields();
  for (columnar::Field& field : fields) field.metadata_json = "{}";
  return columnar::SchemaToJson(*columnar::DataType::Struct(std::move(fields)));
}

std::string Describe(const TransformStep& step) {
  std::string out = step.kind + " [";
  for (size_t i = 0; i < step.exprs.size(); ++i) out += (i ? ", " : "") + step.exprs[i];
  out += "]";
  if (!step.aggs.empty()) {
    out += step.sql_select ? " select [" : " agg [";
    for (size_t i = 0; i < step.aggs.size(); ++i) out += (i ? ", " : "") + step.aggs[i];
    out += "]";
  }
  if (!step.having.empty()) out += " having " + step.having;
  return out;
}

}  // namespace

bool IsStatefulStepKind(const std::string& kind) {
  return kind == "groupBy" || kind == "dropDuplicates" || kind == "dropDuplicatesWithinWatermark";
}

Result<std::unique_ptr<StatefulOperator>> MakeStatefulOperator(
    const StatefulStep& step, const expr::EvalOptions& options,
    std::unique_ptr<state::StateStore> store) {
  if (step.step.kind == "groupBy") {
    return MakeStatefulAggregate(step.step, step.input_schema, options, step.output_mode,
                                 std::move(store));
  }
  if (step.step.kind == "dropDuplicates" || step.step.kind == "dropDuplicatesWithinWatermark") {
    return MakeDeduplicate(step.step, step.input_schema, step.watermark, step.output_mode,
                           std::move(store));
  }
  return Status::InvalidArgument(step.step.key_path, ": '", step.step.kind,
                                 "' is not a stateful step");
}

std::string StatefulStepToJson(const StatefulStep& step, const StatefulOperator& op) {
  JsonWriter w;
  w.BeginObject();
  w.Member("version", kFormatVersion);
  w.Member("operatorId", static_cast<int64_t>(step.operator_id));
  w.Member("operatorName", op.progress().operator_name);
  w.Key("step");
  w.BeginObject();
  w.Member("kind", step.step.kind);
  w.Member("keyPath", step.step.key_path);
  WriteStrings(&w, "exprs", step.step.exprs);
  WriteStrings(&w, "agg", step.step.aggs);
  w.Member("having", step.step.having);
  w.Member("sqlSelect", step.step.sql_select);
  w.EndObject();
  w.Member("inputSchema", columnar::SchemaToJson(*step.input_schema));
  w.Key("watermark");
  if (step.watermark) {
    w.BeginObject();
    w.Member("column", step.watermark->name);
    w.Member("delayMs", step.watermark->delay_ms);
    w.EndObject();
  } else {
    w.Null();
  }
  std::string mode = OutputModeName(step.output_mode);
  for (char& c : mode) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  w.Member("outputMode", mode);
  w.Member("stateSchema", columnar::SchemaToJson(*op.output_schema()));
  w.EndObject();
  return w.Take();
}

Result<StatefulStep> StatefulStepFromJson(std::string_view json, std::string_view source) {
  simdjson::dom::parser parser;
  SILT_ASSIGN_OR_RETURN(simdjson::dom::object object,
                        internal::ParseJsonObject(parser, json, source));
  SILT_ASSIGN_OR_RETURN(std::optional<int64_t> version,
                        internal::GetOptionalInt(object, "version", source));
  if (!version || *version != kFormatVersion) {
    return Status::NotSupported(source, ": state metadata version ",
                                version ? std::to_string(*version) : "(none)",
                                " (this silt reads version ", kFormatVersion, ")");
  }
  StatefulStep out;
  SILT_ASSIGN_OR_RETURN(std::optional<int64_t> id,
                        internal::GetOptionalInt(object, "operatorId", source));
  out.operator_id = static_cast<int>(id.value_or(0));
  simdjson::dom::object step;
  if (object["step"].get_object().get(step)) {
    return Status::Corruption(source, ": \"step\" must be an object");
  }
  SILT_ASSIGN_OR_RETURN(std::optional<std::string> kind,
                        internal::GetOptionalString(step, "kind", source));
  if (!kind) return Status::Corruption(source, ": \"step.kind\" is missing");
  out.step.kind = *kind;
  SILT_ASSIGN_OR_RETURN(std::optional<std::string> key_path,
                        internal::GetOptionalString(step, "keyPath", source));
  out.step.key_path = key_path.value_or("transform");
  SILT_ASSIGN_OR_RETURN(out.step.exprs, ReadStrings(step, "exprs", source));
  SILT_ASSIGN_OR_RETURN(out.step.aggs, ReadStrings(step, "agg", source));
  SILT_ASSIGN_OR_RETURN(std::optional<std::string> having,
                        internal::GetOptionalString(step, "having", source));
  out.step.having = having.value_or("");
  bool sql_select = false;
  if (step["sqlSelect"].get_bool().get(sql_select) == simdjson::SUCCESS) {
    out.step.sql_select = sql_select;
  }
  SILT_ASSIGN_OR_RETURN(std::optional<std::string> input,
                        internal::GetOptionalString(object, "inputSchema", source));
  if (!input) return Status::Corruption(source, ": \"inputSchema\" is missing");
  Result<columnar::SchemaPtr> schema = columnar::SchemaFromJson(*input);
  if (!schema.ok()) return schema.status().WithContextParts(source, ": inputSchema");
  out.input_schema = *schema;
  simdjson::dom::object watermark;
  if (!object["watermark"].get_object().get(watermark)) {
    SILT_ASSIGN_OR_RETURN(std::optional<std::string> column,
                          internal::GetOptionalString(watermark, "column", source));
    SILT_ASSIGN_OR_RETURN(std::optional<int64_t> delay,
                          internal::GetOptionalInt(watermark, "delayMs", source));
    if (!column || !delay) {
      return Status::Corruption(source, ": \"watermark\" needs column and delayMs");
    }
    out.watermark = WatermarkColumn{*column, *delay};
    // Written before event-time marks travelled in schemas: mark the
    // recorded column, so the operator finds its event time as it did.
    if (!EventTimeColumn(*out.input_schema)) {
      std::vector<columnar::Field> fields = out.input_schema->fields();
      for (columnar::Field& field : fields) {
        if (EqualsIgnoreCase(field.name, *column)) {
          field.metadata_json = WithWatermarkDelay(field.metadata_json, *delay);
          break;
        }
      }
      out.input_schema = columnar::DataType::Struct(std::move(fields));
    }
  }
  SILT_ASSIGN_OR_RETURN(std::optional<std::string> mode,
                        internal::GetOptionalString(object, "outputMode", source));
  Result<OutputMode> parsed = ParseOutputMode(mode.value_or("append"));
  if (!parsed.ok()) return Status::Corruption(source, ": ", parsed.status().message());
  out.output_mode = *parsed;
  return out;
}

std::string StatefulStepFile(const std::string& operator_dir) {
  return fs::JoinPath(operator_dir, std::string(kStatefulStepFile));
}

Status RecordOrCheckStatefulStep(const fs::FileSystemPtr& fs, const std::string& operator_dir,
                                 const StatefulStep& step, const StatefulOperator& op) {
  const std::string file = StatefulStepFile(operator_dir);
  Result<std::string> existing = fs->ReadFile(file);
  if (!existing.ok() && !existing.status().IsNotFound()) return existing.status();
  if (!existing.ok()) {
    Status put = fs->PutIfAbsent(file, StatefulStepToJson(step, op));
    if (put.ok() || !put.IsAlreadyExists()) return put;
    SILT_ASSIGN_OR_RETURN(existing, fs->ReadFile(file));
  }
  SILT_ASSIGN_OR_RETURN(StatefulStep recorded, StatefulStepFromJson(*existing, file));
  // The state rows' schema says what the keys and values are; the step's
  // texts say how they were computed.
  simdjson::dom::parser parser;
  SILT_ASSIGN_OR_RETURN(simdjson::dom::object object,
                        internal::ParseJsonObject(parser, *existing, file));
  SILT_ASSIGN_OR_RETURN(std::optional<std::string> state_schema,
                        internal::GetOptionalString(object, "stateSchema", file));
  const bool same_step =
      recorded.step.kind == step.step.kind && recorded.step.exprs == step.step.exprs &&
      recorded.step.aggs == step.step.aggs && recorded.step.having == step.step.having &&
      recorded.step.sql_select == step.step.sql_select;
  bool same_schema = false;
  if (state_schema) {
    Result<columnar::SchemaPtr> recorded_schema = columnar::SchemaFromJson(*state_schema);
    same_schema = recorded_schema.ok() &&
                  StateSchemaText(**recorded_schema) == StateSchemaText(*op.output_schema());
  }
  if (!same_step || !same_schema) {
    return Status::InvalidArgument(step.step.key_path, ": the checkpoint's state of operator ",
                                   step.operator_id, " was written by ", Describe(recorded.step),
                                   " (", file, "), but the job has ", Describe(step.step),
                                   same_step ? " with other column types" : "",
                                   "; a changed stateful step needs a new checkpointLocation");
  }
  return Status::OK();
}

Result<StatefulStep> ReadStatefulStep(const fs::FileSystemPtr& fs,
                                      const std::string& operator_dir) {
  const std::string file = StatefulStepFile(operator_dir);
  SILT_ASSIGN_OR_RETURN(std::string text, fs->ReadFile(file));
  return StatefulStepFromJson(text, file);
}

}  // namespace silt::stream
