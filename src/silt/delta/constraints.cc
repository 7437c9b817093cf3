#include "silt/delta/constraints.h"

#include <simdjson.h>

#include "silt/delta/field_metadata.h"

namespace silt::delta {

namespace {

Status AddInvariants(const columnar::DataType& type, const std::string& prefix,
                     std::vector<Constraint>* out) {
  if (type.id() != columnar::TypeId::kStruct) return Status::OK();
  for (const columnar::Field& field : type.fields()) {
    const std::string path = prefix.empty() ? field.name : prefix + "." + field.name;
    SILT_ASSIGN_OR_RETURN(std::optional<std::string> text,
                          FieldMetadataString(field, kInvariantsKey));
    if (text) {
      simdjson::dom::parser parser;
      simdjson::dom::element doc;
      std::string_view expression;
      if (parser.parse(*text).get(doc) != simdjson::SUCCESS ||
          doc.at_pointer("/expression/expression").get(expression) != simdjson::SUCCESS) {
        return Status::Corruption("column '", path, "': ", kInvariantsKey,
                                  " is not {\"expression\": {\"expression\": \"...\"}}: ", *text);
      }
      out->push_back(
          Constraint{"EXPRESSION(" + std::string(expression) + ")", std::string(expression)});
    }
    SILT_RETURN_NOT_OK(AddInvariants(*field.type, path, out));
  }
  return Status::OK();
}

}  // namespace

std::vector<Constraint> CheckConstraints(const Metadata& metadata) {
  std::vector<Constraint> out;
  for (const auto& [key, value] : metadata.configuration) {
    if (key.size() > kConstraintPrefix.size() && key.rfind(kConstraintPrefix, 0) == 0) {
      out.push_back(Constraint{key.substr(kConstraintPrefix.size()), value});
    }
  }
  return out;
}

Result<std::vector<Constraint>> TableConstraints(const Metadata& metadata) {
  std::vector<Constraint> out = CheckConstraints(metadata);
  if (metadata.schema != nullptr) SILT_RETURN_NOT_OK(AddInvariants(*metadata.schema, "", &out));
  return out;
}

}  // namespace silt::delta
