// Field metadata of a Delta schema (PROTOCOL.md "Struct Field": the
// `metadata` object of a StructField), which silt keeps as JSON text in
// columnar::Field::metadata_json: reading and setting single members, for
// the writer features that live there (delta.typeChanges,
// delta.generationExpression, delta.identity.*).
//
// Members that are not touched keep their values; setting a member keeps
// the order of the others and appends a new one at the end.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "silt/base/result.h"
#include "silt/columnar/types.h"

namespace silt::delta {

// The member's value as compact JSON text, or nullopt when the metadata
// has no such member. Errors: Corruption naming the column when the
// metadata is not a JSON object.
Result<std::optional<std::string>> FieldMetadataJson(const columnar::Field& field,
                                                     std::string_view key);

// Typed members. Errors: Corruption naming the column and the key when the
// member has another JSON type (an integer that does not fit is one).
Result<std::optional<std::string>> FieldMetadataString(const columnar::Field& field,
                                                       std::string_view key);
Result<std::optional<int64_t>> FieldMetadataLong(const columnar::Field& field,
                                                 std::string_view key);
Result<std::optional<bool>> FieldMetadataBool(const columnar::Field& field, std::string_view key);

// `field` with member `key` set to the JSON value `json_value` (already
// serialized), replacing an existing member of that key or appended.
// Errors: Corruption naming the column when its metadata is not a JSON
// object; InvalidArgument when `json_value` is not one JSON value.
Result<columnar::Field> WithFieldMetadata(const columnar::Field& field, std::string_view key,
                                          std::string_view json_value);

}  // namespace silt::delta
