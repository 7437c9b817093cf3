#include "silt/delta/field_metadata.h"

#include <simdjson.h>

#include "silt/base/json_writer.h"

namespace silt::delta {

namespace {

Result<simdjson::dom::object> ParseMetadata(simdjson::dom::parser* parser,
                                            const columnar::Field& field) {
  simdjson::dom::object object;
  if (parser->parse(field.metadata_json).get(object) != simdjson::SUCCESS) {
    return Status::Corruption("the metadata of column '", field.name,
                              "' is not a JSON object: ", field.metadata_json);
  }
  return object;
}

Status WrongType(const columnar::Field& field, std::string_view key, const char* expected) {
  return Status::Corruption("the metadata of column '", field.name, "' holds ", key,
                            " that is not ", expected, ": ", field.metadata_json);
}

}  // namespace

Result<std::optional<std::string>> FieldMetadataJson(const columnar::Field& field,
                                                     std::string_view key) {
  simdjson::dom::parser parser;
  SILT_ASSIGN_OR_RETURN(simdjson::dom::object object, ParseMetadata(&parser, field));
  simdjson::dom::element value;
  if (object.at_key(key).get(value) != simdjson::SUCCESS) return std::optional<std::string>();
  return std::optional<std::string>(simdjson::minify(value));
}

Result<std::optional<std::string>> FieldMetadataString(const columnar::Field& field,
                                                       std::string_view key) {
  simdjson::dom::parser parser;
  SILT_ASSIGN_OR_RETURN(simdjson::dom::object object, ParseMetadata(&parser, field));
  simdjson::dom::element value;
  if (object.at_key(key).get(value) != simdjson::SUCCESS) return std::optional<std::string>();
  std::string_view text;
  if (value.get_string().get(text) != simdjson::SUCCESS) return WrongType(field, key, "a string");
  return std::optional<std::string>(std::string(text));
}

Result<std::optional<int64_t>> FieldMetadataLong(const columnar::Field& field,
                                                 std::string_view key) {
  simdjson::dom::parser parser;
  SILT_ASSIGN_OR_RETURN(simdjson::dom::object object, ParseMetadata(&parser, field));
  simdjson::dom::element value;
  if (object.at_key(key).get(value) != simdjson::SUCCESS) return std::optional<int64_t>();
  int64_t number = 0;
  if (value.get_int64().get(number) != simdjson::SUCCESS) {
    return WrongType(field, key, "a 64-bit integer");
  }
  return std::optional<int64_t>(number);
}

Result<std::optional<bool>> FieldMetadataBool(const columnar::Field& field, std::string_view key) {
  simdjson::dom::parser parser;
  SILT_ASSIGN_OR_RETURN(simdjson::dom::object object, ParseMetadata(&parser, field));
  simdjson::dom::element value;
  if (object.at_key(key).get(value) != simdjson::SUCCESS) return std::optional<bool>();
  bool flag = false;
  if (value.get_bool().get(flag) != simdjson::SUCCESS) return WrongType(field, key, "a boolean");
  return std::optional<bool>(flag);
}

Result<columnar::Field> WithFieldMetadata(const columnar::Field& field, std::string_view key,
                                          std::string_view json_value) {
  simdjson::dom::parser value_parser;
  simdjson::dom::element parsed;
  if (value_parser.parse(json_value.data(), json_value.size()).get(parsed) != simdjson::SUCCESS) {
    return Status::InvalidArgument("metadata value for ", key, " of column '", field.name,
                                   "' is not JSON: ", json_value);
  }
  const std::string value = simdjson::minify(parsed);
  simdjson::dom::parser parser;
  SILT_ASSIGN_OR_RETURN(simdjson::dom::object object, ParseMetadata(&parser, field));
  JsonWriter out;
  out.BeginObject();
  bool replaced = false;
  for (const simdjson::dom::key_value_pair member : object) {
    out.Key(member.key);
    if (member.key == key) {
      out.Raw(value);
      replaced = true;
    } else {
      out.Raw(simdjson::minify(member.value));
    }
  }
  if (!replaced) {
    out.Key(key);
    out.Raw(value);
  }
  out.EndObject();
  columnar::Field result = field;
  result.metadata_json = out.Take();
  return result;
}

}  // namespace silt::delta
