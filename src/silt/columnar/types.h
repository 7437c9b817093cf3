// The Spark / Delta type system: data types, fields and schemas.
//
// A schema is a struct type whose fields are the top-level columns. Types are
// immutable and shared (TypePtr); compare them with Equals, not by pointer.
// Names compare case-insensitively, as in Spark's default resolution.
//
// Physical layout of each type in a Column (Arrow columnar format):
//   boolean            bit-packed values (LSB first)
//   byte/short/int/long int8/int16/int32/int64
//   float/double       IEEE 754
//   decimal(p,s)       16-byte little-endian two's complement (Arrow decimal128)
//   date               int32 days since 1970-01-01
//   timestamp(_ntz)    int64 microseconds since 1970-01-01 (UTC for timestamp)
//   string/binary      int32 offsets (length + 1) + bytes
//   array              int32 offsets + one child (the elements)
//   map                int32 offsets + one child: struct<key, value> entries
//   struct             one child per field, same length as the parent
//   variant            two binary children of the parent's length, metadata
//                      and value (the Variant binary encoding of Parquet's
//                      VariantEncoding.md; see variant.h): the layout of
//                      Arrow's parquet.variant extension type
//
// Thread safety: immutable after construction; share freely.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "silt/base/result.h"

namespace silt::columnar {

enum class TypeId : uint8_t {
  kNull,  // Spark's void: all values null
  kBoolean,
  kByte,
  kShort,
  kInt,
  kLong,
  kFloat,
  kDouble,
  kDecimal,
  kString,
  kBinary,
  kDate,
  kTimestamp,
  kTimestampNtz,
  kStruct,
  kArray,
  kMap,
  kVariant,  // Spark 4's semi-structured value: metadata + value binaries
};

class DataType;
using TypePtr = std::shared_ptr<const DataType>;

struct Field {
  std::string name;
  TypePtr type;
  bool nullable = true;
  // Field metadata as a JSON object text ("{}" when empty), kept verbatim so
  // Delta column metadata (column mapping ids, comments) round-trips.
  std::string metadata_json = "{}";
};

class DataType {
 public:
  static TypePtr Null();
  static TypePtr Boolean();
  static TypePtr Byte();
  static TypePtr Short();
  static TypePtr Int();
  static TypePtr Long();
  static TypePtr Float();
  static TypePtr Double();
  static TypePtr String();
  static TypePtr Binary();
  static TypePtr Date();
  static TypePtr Timestamp();
  static TypePtr TimestampNtz();
  // REQUIRES: 1 <= precision <= 38, 0 <= scale <= precision.
  static TypePtr Decimal(int precision, int scale);
  static TypePtr Struct(std::vector<Field> fields);
  static TypePtr Array(TypePtr element, bool contains_null = true);
  static TypePtr Map(TypePtr key, TypePtr value, bool value_contains_null = true);
  // fields() of a variant are its physical children, in order:
  // metadata BINARY NOT NULL, value BINARY NOT NULL.
  static TypePtr Variant();

  TypeId id() const { return id_; }
  int precision() const { return precision_; }
  int scale() const { return scale_; }
  const std::vector<Field>& fields() const { return fields_; }
  int num_fields() const { return static_cast<int>(fields_.size()); }
  const Field& field(int i) const { return fields_[static_cast<size_t>(i)]; }
  const TypePtr& element_type() const { return element_; }
  bool contains_null() const { return contains_null_; }
  const TypePtr& key_type() const { return key_; }
  const TypePtr& value_type() const { return value_; }
  bool value_contains_null() const { return contains_null_; }
  // REQUIRES: map. The type of the map's single child column:
  // struct<key: K NOT NULL, value: V> (value nullable per value_contains_null).
  const TypePtr& map_entries_type() const { return entries_; }

  // Types whose columns have child columns (struct, array, map, variant):
  // not atomic in Spark's sense.
  bool is_nested() const {
    return id_ == TypeId::kStruct || id_ == TypeId::kArray || id_ == TypeId::kMap ||
           id_ == TypeId::kVariant;
  }
  bool is_integral() const {
    return id_ == TypeId::kByte || id_ == TypeId::kShort || id_ == TypeId::kInt ||
           id_ == TypeId::kLong;
  }
  bool is_numeric() const {
    return is_integral() || id_ == TypeId::kFloat || id_ == TypeId::kDouble ||
           id_ == TypeId::kDecimal;
  }
  // Bytes per value in the values buffer for fixed-width types; 0 for
  // boolean (bits), variable-width and nested types.
  int byte_width() const;

  // Index of the field named `name` (case-insensitive), or -1.
  int FieldIndex(std::string_view name) const;

  // Spark SQL DDL form: "INT", "DECIMAL(10,2)", "STRUCT<a: INT, b: STRING>",
  // "ARRAY<STRING>", "MAP<STRING, INT>", "VARIANT".
  std::string ToDdl() const;
  // Spark's JSON type name for primitives: "integer", "long", "decimal(10,2)".
  std::string JsonTypeName() const;

  // True when both have the same type ids and parameters (precision, scale,
  // element/value nullability) and, for structs, the same number of fields
  // with equal names (case-insensitive), nullability and types. Field
  // metadata is ignored.
  bool Equals(const DataType& other) const;

 private:
  explicit DataType(TypeId id) : id_(id) {}
  TypeId id_;
  int precision_ = 0;
  int scale_ = 0;
  bool contains_null_ = true;
  std::vector<Field> fields_;
  TypePtr element_;
  TypePtr key_;
  TypePtr value_;
  TypePtr entries_;
};

// A schema is a struct type.
using Schema = DataType;
using SchemaPtr = TypePtr;

// Parses a Spark DDL schema string: "a INT, b STRING NOT NULL, c STRUCT<x:
// DOUBLE>, d ARRAY<BIGINT>, e MAP<STRING,INT>, f DECIMAL(10,2)". Accepts
// Spark's aliases (BIGINT, LONG, INTEGER, SMALLINT, TINYINT, REAL, DEC,
// NUMERIC, TIMESTAMP_LTZ, ...), VARIANT, backquoted names and COMMENT clauses.
// Errors: InvalidArgument naming the character position and what was expected.
// Positions are 0-based character offsets into `ddl`. Top-level names must be
// unique (case-insensitive). A COMMENT is stored in the field's metadata_json
// as {"comment":"..."}; CHAR(n)/VARCHAR(n) read as STRING.
Result<SchemaPtr> ParseDdlSchema(std::string_view ddl);
// Parses a single DDL type ("ARRAY<INT>").
Result<TypePtr> ParseDdlType(std::string_view ddl);

// Delta/Spark schema JSON (metaData.schemaString) for a struct type.
std::string SchemaToJson(const DataType& schema);
// Parses Delta/Spark schema JSON. Errors: Corruption naming what is wrong.
Result<SchemaPtr> SchemaFromJson(std::string_view json);

}  // namespace silt::columnar
