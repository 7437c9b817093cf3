// Spark's DataType JSON form, which Delta stores as metaData.schemaString.

#include <simdjson.h>

#include <cctype>
#include <string>
#include <utility>
#include <vector>

#include "silt/base/json_writer.h"
#include "silt/base/strings.h"
#include "silt/columnar/types.h"

namespace silt::columnar {

namespace {

void WriteType(const DataType& type, JsonWriter* w);

void WriteStruct(const DataType& type, JsonWriter* w) {
  w->BeginObject();
  w->Member("type", "struct");
  w->Key("fields");
  w->BeginArray();
  for (const Field& field : type.fields()) {
    w->BeginObject();
    w->Member("name", field.name);
    w->Key("type");
    WriteType(*field.type, w);
    w->Member("nullable", field.nullable);
    w->Key("metadata");
    w->Raw(field.metadata_json.empty() ? std::string_view("{}") : field.metadata_json);
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
}

void WriteType(const DataType& type, JsonWriter* w) {
  switch (type.id()) {
    case TypeId::kStruct: WriteStruct(type, w); return;
    case TypeId::kArray:
      w->BeginObject();
      w->Member("type", "array");
      w->Key("elementType");
      WriteType(*type.element_type(), w);
      w->Member("containsNull", type.contains_null());
      w->EndObject();
      return;
    case TypeId::kMap:
      w->BeginObject();
      w->Member("type", "map");
      w->Key("keyType");
      WriteType(*type.key_type(), w);
      w->Key("valueType");
      WriteType(*type.value_type(), w);
      w->Member("valueContainsNull", type.value_contains_null());
      w->EndObject();
      return;
    default: w->String(type.JsonTypeName()); return;
  }
}

// Parses "decimal(p,s)" / "decimal(p, s)" / "decimal"; false when malformed.
bool ParseDecimalName(std::string_view name, int* precision, int* scale) {
  if (name == "decimal") {
    *precision = 10;
    *scale = 0;
    return true;
  }
  std::string_view rest = name.substr(7);  // after "decimal"
  if (rest.empty() || rest.front() != '(' || rest.back() != ')') return false;
  rest = rest.substr(1, rest.size() - 2);
  int values[2] = {0, 0};
  int count = 0;
  size_t i = 0;
  while (count < 2) {
    while (i < rest.size() && rest[i] == ' ') ++i;
    size_t start = i;
    int v = 0;
    while (i < rest.size() && std::isdigit(static_cast<unsigned char>(rest[i])) && v < 1000) {
      v = v * 10 + (rest[i] - '0');
      ++i;
    }
    if (i == start) return false;
    values[count++] = v;
    while (i < rest.size() && rest[i] == ' ') ++i;
    if (count == 1) {
      if (i >= rest.size() || rest[i] != ',') return false;
      ++i;
    }
  }
  if (i != rest.size()) return false;
  *precision = values[0];
  *scale = values[1];
  return true;
}

// Spark also writes char(n)/varchar(n) in some versions; both read as string.
bool IsCharVarcharName(std::string_view name) {
  for (std::string_view prefix : {std::string_view("char("), std::string_view("varchar(")}) {
    if (name.size() > prefix.size() + 1 && name.substr(0, prefix.size()) == prefix &&
        name.back() == ')') {
      return true;
    }
  }
  return false;
}

Result<TypePtr> ParsePrimitive(std::string_view name, const std::string& where) {
  if (name == "string") return DataType::String();
  if (name == "long") return DataType::Long();
  if (name == "integer") return DataType::Int();
  if (name == "short") return DataType::Short();
  if (name == "byte") return DataType::Byte();
  if (name == "float") return DataType::Float();
  if (name == "double") return DataType::Double();
  if (name == "boolean") return DataType::Boolean();
  if (name == "binary") return DataType::Binary();
  if (name == "date") return DataType::Date();
  if (name == "timestamp") return DataType::Timestamp();
  if (name == "timestamp_ntz") return DataType::TimestampNtz();
  if (name == "void") return DataType::Null();
  if (IsCharVarcharName(name)) return DataType::String();
  if (name.substr(0, 7) == "decimal") {
    int precision = 0;
    int scale = 0;
    if (!ParseDecimalName(name, &precision, &scale) || precision < 1 || precision > 38 ||
        scale > precision) {
      return Status::Corruption("Schema JSON: invalid decimal type '", name, "' at ", where);
    }
    return DataType::Decimal(precision, scale);
  }
  if (name == "variant") return DataType::Variant();
  return Status::Corruption("Schema JSON: unknown type '", name, "' at ", where);
}

Result<TypePtr> ParseType(simdjson::dom::element elem, const std::string& where);

Result<bool> GetBool(simdjson::dom::object obj, std::string_view key, const std::string& where) {
  bool value = false;
  if (obj[key].get(value) != simdjson::SUCCESS) {
    return Status::Corruption("Schema JSON: missing or non-boolean '", key, "' at ", where);
  }
  return value;
}

Result<TypePtr> ParseStruct(simdjson::dom::object obj, const std::string& where) {
  simdjson::dom::array fields_json;
  if (obj["fields"].get(fields_json) != simdjson::SUCCESS) {
    return Status::Corruption("Schema JSON: struct without a 'fields' array at ", where);
  }
  std::vector<Field> fields;
  int64_t field_idx = 0;
  for (simdjson::dom::element field_elem : fields_json) {
    std::string field_where = where + ".fields[" + std::to_string(field_idx++) + "]";
    simdjson::dom::object field_obj;
    if (field_elem.get(field_obj) != simdjson::SUCCESS) {
      return Status::Corruption("Schema JSON: field is not an object at ", field_where);
    }
    std::string_view name;
    if (field_obj["name"].get(name) != simdjson::SUCCESS) {
      return Status::Corruption("Schema JSON: field without a string 'name' at ", field_where);
    }
    Field field;
    field.name = std::string(name);
    field_where = where + "." + field.name;
    simdjson::dom::element type_elem;
    if (field_obj["type"].get(type_elem) != simdjson::SUCCESS) {
      return Status::Corruption("Schema JSON: field without 'type' at ", field_where);
    }
    SILT_ASSIGN_OR_RETURN(field.type, ParseType(type_elem, field_where));
    // Spark treats a missing "nullable" as true and missing metadata as empty.
    bool nullable = true;
    simdjson::dom::element nullable_elem;
    if (field_obj["nullable"].get(nullable_elem) == simdjson::SUCCESS) {
      if (nullable_elem.get(nullable) != simdjson::SUCCESS) {
        return Status::Corruption("Schema JSON: non-boolean 'nullable' at ", field_where);
      }
    }
    field.nullable = nullable;
    simdjson::dom::element metadata_elem;
    if (field_obj["metadata"].get(metadata_elem) == simdjson::SUCCESS) {
      if (!metadata_elem.is_object()) {
        return Status::Corruption("Schema JSON: 'metadata' is not an object at ", field_where);
      }
      field.metadata_json = simdjson::minify(metadata_elem);
    }
    for (const Field& existing : fields) {
      if (EqualsIgnoreCase(existing.name, field.name)) {
        return Status::Corruption("Schema JSON: duplicate field name '", field.name, "' at ",
                                  where);
      }
    }
    fields.push_back(std::move(field));
  }
  return DataType::Struct(std::move(fields));
}

Result<TypePtr> ParseType(simdjson::dom::element elem, const std::string& where) {
  std::string_view name;
  if (elem.get(name) == simdjson::SUCCESS) return ParsePrimitive(name, where);
  simdjson::dom::object obj;
  if (elem.get(obj) != simdjson::SUCCESS) {
    return Status::Corruption("Schema JSON: a type must be a string or an object at ", where);
  }
  std::string_view kind;
  if (obj["type"].get(kind) != simdjson::SUCCESS) {
    return Status::Corruption("Schema JSON: type object without a string 'type' at ", where);
  }
  if (kind == "struct") return ParseStruct(obj, where);
  if (kind == "array") {
    simdjson::dom::element element_elem;
    if (obj["elementType"].get(element_elem) != simdjson::SUCCESS) {
      return Status::Corruption("Schema JSON: array without 'elementType' at ", where);
    }
    SILT_ASSIGN_OR_RETURN(TypePtr element, ParseType(element_elem, where + ".element"));
    SILT_ASSIGN_OR_RETURN(bool contains_null, GetBool(obj, "containsNull", where));
    return DataType::Array(std::move(element), contains_null);
  }
  if (kind == "map") {
    simdjson::dom::element key_elem;
    simdjson::dom::element value_elem;
    if (obj["keyType"].get(key_elem) != simdjson::SUCCESS ||
        obj["valueType"].get(value_elem) != simdjson::SUCCESS) {
      return Status::Corruption("Schema JSON: map without 'keyType' and 'valueType' at ", where);
    }
    SILT_ASSIGN_OR_RETURN(TypePtr key, ParseType(key_elem, where + ".key"));
    SILT_ASSIGN_OR_RETURN(TypePtr value, ParseType(value_elem, where + ".value"));
    SILT_ASSIGN_OR_RETURN(bool value_contains_null, GetBool(obj, "valueContainsNull", where));
    return DataType::Map(std::move(key), std::move(value), value_contains_null);
  }
  if (kind == "udt") {
    return Status::NotSupported("Schema JSON: user-defined types (at ", where, ")");
  }
  return Status::Corruption("Schema JSON: unknown type '", kind, "' at ", where);
}

}  // namespace

std::string SchemaToJson(const DataType& schema) {
  JsonWriter w;
  WriteType(schema, &w);
  return w.Take();
}

Result<SchemaPtr> SchemaFromJson(std::string_view json) {
  simdjson::dom::parser parser;
  simdjson::padded_string padded(json);
  simdjson::dom::element root;
  simdjson::error_code error = parser.parse(padded).get(root);
  if (error != simdjson::SUCCESS) {
    return Status::Corruption("Schema JSON is not valid JSON: ", simdjson::error_message(error));
  }
  SILT_ASSIGN_OR_RETURN(TypePtr type, ParseType(root, "schema"));
  if (type->id() != TypeId::kStruct) {
    return Status::Corruption("Schema JSON: the top-level type must be a struct, got '",
                              type->JsonTypeName(), "'");
  }
  return type;
}

}  // namespace silt::columnar
