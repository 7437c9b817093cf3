#include "silt/parquet/parquet_schema.h"

#include <iterator>
#include <memory>

namespace silt::parquet {

using columnar::DataType;
using columnar::Field;
using columnar::TypeId;
using columnar::TypePtr;

int DecimalFlbaWidth(int precision) {
  unsigned __int128 limit = 1;
  for (int i = 0; i < precision; ++i) limit *= 10;  // 10^precision
  for (int width = 1; width < 16; ++width) {
    unsigned __int128 max_value = (static_cast<unsigned __int128>(1) << (8 * width - 1)) - 1;
    if (max_value >= limit - 1) return width;
  }
  return 16;
}

Result<SchemaElement> ParquetElementForField(const Field& field) {
  SchemaElement el;
  el.name = field.name;
  el.repetition_type = field.nullable ? Repetition::kOptional : Repetition::kRequired;
  const DataType& t = *field.type;
  switch (t.id()) {
    case TypeId::kBoolean: el.type = PhysicalType::kBoolean; break;
    case TypeId::kByte:
      el.type = PhysicalType::kInt32;
      el.converted_type = ConvertedType::kInt8;
      el.logical_type = LogicalType::Integer(8, true);
      break;
    case TypeId::kShort:
      el.type = PhysicalType::kInt32;
      el.converted_type = ConvertedType::kInt16;
      el.logical_type = LogicalType::Integer(16, true);
      break;
    case TypeId::kInt: el.type = PhysicalType::kInt32; break;
    case TypeId::kLong: el.type = PhysicalType::kInt64; break;
    case TypeId::kFloat: el.type = PhysicalType::kFloat; break;
    case TypeId::kDouble: el.type = PhysicalType::kDouble; break;
    case TypeId::kDecimal:
      if (t.precision() <= 9) {
        el.type = PhysicalType::kInt32;
      } else if (t.precision() <= 18) {
        el.type = PhysicalType::kInt64;
      } else {
        el.type = PhysicalType::kFixedLenByteArray;
        el.type_length = DecimalFlbaWidth(t.precision());
      }
      el.converted_type = ConvertedType::kDecimal;
      el.precision = t.precision();
      el.scale = t.scale();
      el.logical_type = LogicalType::Decimal(t.precision(), t.scale());
      break;
    case TypeId::kString:
      el.type = PhysicalType::kByteArray;
      el.converted_type = ConvertedType::kUtf8;
      el.logical_type = LogicalType::String();
      break;
    case TypeId::kBinary: el.type = PhysicalType::kByteArray; break;
    case TypeId::kDate:
      el.type = PhysicalType::kInt32;
      el.converted_type = ConvertedType::kDate;
      el.logical_type = LogicalType::Date();
      break;
    case TypeId::kTimestamp:
      el.type = PhysicalType::kInt64;
      el.converted_type = ConvertedType::kTimestampMicros;
      el.logical_type = LogicalType::Timestamp(true, TimeUnit::kMicros);
      break;
    case TypeId::kTimestampNtz:
      // No converted type: readers that only know TIMESTAMP_MICROS would
      // take these local times for UTC instants (pyarrow writes them alike).
      el.type = PhysicalType::kInt64;
      el.logical_type = LogicalType::Timestamp(false, TimeUnit::kMicros);
      break;
    case TypeId::kNull:
    case TypeId::kStruct:
    case TypeId::kArray:
    case TypeId::kMap:
      return Status::NotSupported("writing column '", field.name, "' of type ", t.ToDdl(),
                                  " to Parquet");
  }
  return el;
}

namespace {

constexpr int kMaxSchemaDepth = 64;

struct Node {
  const SchemaElement* el = nullptr;
  std::vector<Node> children;
  int first_leaf = 0;
  int num_leaves = 0;
  bool is_leaf() const { return !el->num_children.has_value() || *el->num_children == 0; }
  bool repeated() const { return el->repetition_type == Repetition::kRepeated; }
  bool optional() const { return el->repetition_type == Repetition::kOptional; }
};

class TreeBuilder {
 public:
  explicit TreeBuilder(const std::vector<SchemaElement>& schema) : schema_(schema) {}

  Status Build(Node* node, int depth) {
    if (pos_ >= schema_.size()) return Status::Corruption("schema ends early");
    if (depth > kMaxSchemaDepth) return Status::Corruption("schema nested too deeply");
    node->el = &schema_[pos_++];
    node->first_leaf = next_leaf_;
    if (node->el->num_children.has_value() && *node->el->num_children > 0) {
      int n = *node->el->num_children;
      if (static_cast<size_t>(n) > schema_.size() - pos_) {
        return Status::Corruption("schema element '", node->el->name, "' claims ", n,
                                  " children but only ", schema_.size() - pos_, " follow");
      }
      node->children.resize(static_cast<size_t>(n));
      for (Node& child : node->children) SILT_RETURN_NOT_OK(Build(&child, depth + 1));
    } else if (depth > 0) {
      if (!node->el->type.has_value()) {
        return Status::Corruption("schema leaf '", node->el->name, "' has no physical type");
      }
      if (*node->el->type == PhysicalType::kFixedLenByteArray &&
          (!node->el->type_length.has_value() || *node->el->type_length <= 0)) {
        return Status::Corruption("FIXED_LEN_BYTE_ARRAY column '", node->el->name,
                                  "' has no positive type_length");
      }
      ++next_leaf_;
    }
    node->num_leaves = next_leaf_ - node->first_leaf;
    return Status::OK();
  }
  size_t consumed() const { return pos_; }

 private:
  const std::vector<SchemaElement>& schema_;
  size_t pos_ = 0;
  int next_leaf_ = 0;
};

std::string_view LogicalKindName(LogicalType::Kind kind) {
  using K = LogicalType::Kind;
  switch (kind) {
    case K::kNone: return "NONE";
    case K::kString: return "STRING";
    case K::kMap: return "MAP";
    case K::kList: return "LIST";
    case K::kEnum: return "ENUM";
    case K::kDecimal: return "DECIMAL";
    case K::kDate: return "DATE";
    case K::kTime: return "TIME";
    case K::kTimestamp: return "TIMESTAMP";
    case K::kInteger: return "INTEGER";
    case K::kUnknown: return "UNKNOWN";
    case K::kJson: return "JSON";
    case K::kBson: return "BSON";
    case K::kUuid: return "UUID";
    case K::kFloat16: return "FLOAT16";
    case K::kVariant: return "VARIANT";
    case K::kGeometry: return "GEOMETRY";
    case K::kGeography: return "GEOGRAPHY";
  }
  return "UNRECOGNIZED";
}

std::string_view ConvertedTypeName(ConvertedType t) {
  static const char* kNames[] = {"UTF8",
                                 "MAP",
                                 "MAP_KEY_VALUE",
                                 "LIST",
                                 "ENUM",
                                 "DECIMAL",
                                 "DATE",
                                 "TIME_MILLIS",
                                 "TIME_MICROS",
                                 "TIMESTAMP_MILLIS",
                                 "TIMESTAMP_MICROS",
                                 "UINT_8",
                                 "UINT_16",
                                 "UINT_32",
                                 "UINT_64",
                                 "INT_8",
                                 "INT_16",
                                 "INT_32",
                                 "INT_64",
                                 "JSON",
                                 "BSON",
                                 "INTERVAL"};
  const int i = static_cast<int>(t);
  if (i < 0 || i >= static_cast<int>(std::size(kNames))) return "UNRECOGNIZED";
  return kNames[i];
}

std::string Describe(const SchemaElement& el) {
  std::string s(PhysicalTypeName(el.type.value_or(PhysicalType::kBoolean)));
  if (el.logical_type && el.logical_type->kind != LogicalType::Kind::kNone) {
    const LogicalType& lt = *el.logical_type;
    s += Status::Concat(" (", LogicalKindName(lt.kind));
    if (lt.kind == LogicalType::Kind::kInteger) {
      s += Status::Concat("(", static_cast<int>(lt.bit_width), ",", lt.is_signed, ")");
    } else if (lt.kind == LogicalType::Kind::kTime || lt.kind == LogicalType::Kind::kTimestamp) {
      s += Status::Concat("(unit ", static_cast<int>(lt.unit), ")");
    }
    s += ")";
  } else if (el.converted_type) {
    s += Status::Concat(" (", ConvertedTypeName(*el.converted_type), ")");
  }
  return s;
}

Result<TypePtr> DecimalType(int precision, int scale, const SchemaElement& el) {
  if (precision < 1 || precision > 38 || scale < 0 || scale > precision) {
    return Status::NotSupported("column '", el.name, "': DECIMAL(", precision, ",", scale,
                                ") (precision must be 1..38 and scale 0..precision)");
  }
  if (el.type == PhysicalType::kFixedLenByteArray && el.type_length.value_or(0) > 16) {
    return Status::NotSupported("column '", el.name, "': decimal stored in ", *el.type_length,
                                " bytes (at most 16 supported)");
  }
  return DataType::Decimal(precision, scale);
}

Result<TypePtr> LegacyDecimal(const SchemaElement& el) {
  if (!el.precision) {
    return Status::NotSupported("column '", el.name, "': DECIMAL without precision");
  }
  return DecimalType(*el.precision, el.scale.value_or(0), el);
}

Status Unsupported(const SchemaElement& el) {
  return Status::NotSupported("column '", el.name, "' has Parquet type ", Describe(el),
                              ", which silt cannot read");
}

Result<TypePtr> PrimitiveType(const SchemaElement& el) {
  using K = LogicalType::Kind;
  const bool has_lt = el.logical_type.has_value() && el.logical_type->kind != K::kNone;
  const LogicalType lt = has_lt ? *el.logical_type : LogicalType();
  const std::optional<ConvertedType> ct = has_lt ? std::nullopt : el.converted_type;
  if (has_lt && lt.kind == K::kUnknown) return DataType::Null();

  switch (*el.type) {
    case PhysicalType::kBoolean: return DataType::Boolean();
    case PhysicalType::kInt32:
      if (has_lt) {
        switch (lt.kind) {
          case K::kInteger:
            if (lt.is_signed) {
              if (lt.bit_width == 8) return DataType::Byte();
              if (lt.bit_width == 16) return DataType::Short();
              if (lt.bit_width == 32) return DataType::Int();
            } else {
              if (lt.bit_width == 8) return DataType::Short();
              if (lt.bit_width == 16) return DataType::Int();
              if (lt.bit_width == 32) return DataType::Long();
            }
            return Unsupported(el);
          case K::kDate: return DataType::Date();
          case K::kDecimal: return DecimalType(lt.precision, lt.scale, el);
          default: return Unsupported(el);
        }
      }
      if (ct) {
        switch (*ct) {
          case ConvertedType::kInt8: return DataType::Byte();
          case ConvertedType::kInt16: return DataType::Short();
          case ConvertedType::kInt32: return DataType::Int();
          case ConvertedType::kUint8: return DataType::Short();
          case ConvertedType::kUint16: return DataType::Int();
          case ConvertedType::kUint32: return DataType::Long();
          case ConvertedType::kDate: return DataType::Date();
          case ConvertedType::kDecimal: return LegacyDecimal(el);
          default: return Unsupported(el);
        }
      }
      return DataType::Int();
    case PhysicalType::kInt64:
      if (has_lt) {
        switch (lt.kind) {
          case K::kInteger:
            if (lt.bit_width != 64) return Unsupported(el);
            return lt.is_signed ? DataType::Long() : DataType::Decimal(20, 0);
          case K::kTimestamp:
            if (lt.unit != TimeUnit::kMillis && lt.unit != TimeUnit::kMicros &&
                lt.unit != TimeUnit::kNanos) {
              return Unsupported(el);
            }
            return lt.is_adjusted_to_utc ? DataType::Timestamp() : DataType::TimestampNtz();
          case K::kDecimal: return DecimalType(lt.precision, lt.scale, el);
          default: return Unsupported(el);
        }
      }
      if (ct) {
        switch (*ct) {
          case ConvertedType::kInt64: return DataType::Long();
          case ConvertedType::kUint64: return DataType::Decimal(20, 0);
          case ConvertedType::kTimestampMillis:
          case ConvertedType::kTimestampMicros: return DataType::Timestamp();
          case ConvertedType::kDecimal: return LegacyDecimal(el);
          default: return Unsupported(el);
        }
      }
      return DataType::Long();
    case PhysicalType::kInt96: return DataType::Timestamp();
    case PhysicalType::kFloat: return DataType::Float();
    case PhysicalType::kDouble: return DataType::Double();
    case PhysicalType::kByteArray:
      if (has_lt) {
        switch (lt.kind) {
          case K::kString:
          case K::kEnum:
          case K::kJson: return DataType::String();
          case K::kDecimal: return DecimalType(lt.precision, lt.scale, el);
          case K::kBson:
          case K::kGeometry:
          case K::kGeography: return DataType::Binary();
          default: return Unsupported(el);
        }
      }
      if (ct) {
        switch (*ct) {
          case ConvertedType::kUtf8:
          case ConvertedType::kEnum:
          case ConvertedType::kJson: return DataType::String();
          case ConvertedType::kDecimal: return LegacyDecimal(el);
          case ConvertedType::kBson: return DataType::Binary();
          default: return Unsupported(el);
        }
      }
      return DataType::Binary();
    case PhysicalType::kFixedLenByteArray:
      if (has_lt) {
        switch (lt.kind) {
          case K::kDecimal: return DecimalType(lt.precision, lt.scale, el);
          case K::kUuid: return DataType::Binary();
          default: return Unsupported(el);
        }
      }
      if (ct) {
        if (*ct == ConvertedType::kDecimal) return LegacyDecimal(el);
        return Unsupported(el);
      }
      return DataType::Binary();
  }
  return Unsupported(el);
}

bool IsListAnnotated(const SchemaElement& el) {
  return (el.logical_type && el.logical_type->kind == LogicalType::Kind::kList) ||
         (!el.logical_type && el.converted_type == ConvertedType::kList);
}

bool IsMapAnnotated(const SchemaElement& el) {
  return (el.logical_type && el.logical_type->kind == LogicalType::Kind::kMap) ||
         (!el.logical_type && (el.converted_type == ConvertedType::kMap ||
                               el.converted_type == ConvertedType::kMapKeyValue));
}

Result<TypePtr> NodeType(const Node& node, bool ignore_repetition);

Result<TypePtr> StructType(const Node& node) {
  std::vector<Field> fields;
  for (const Node& child : node.children) {
    SILT_ASSIGN_OR_RETURN(TypePtr t, NodeType(child, false));
    Field f;
    f.name = child.el->name;
    f.type = std::move(t);
    f.nullable = !child.el->repetition_type.has_value() ||
                 *child.el->repetition_type != Repetition::kRequired;
    fields.push_back(std::move(f));
  }
  return DataType::Struct(std::move(fields));
}

Result<TypePtr> ListType(const Node& node) {
  if (node.children.size() != 1 || !node.children[0].repeated()) {
    return Status::NotSupported("column '", node.el->name,
                                "': LIST group without a single repeated child");
  }
  const Node& repeated = node.children[0];
  // Backward-compatibility rules 1-4: the repeated field itself is the
  // element (required elements).
  if (repeated.is_leaf() || repeated.children.size() > 1 || repeated.el->name == "array" ||
      repeated.el->name == node.el->name + "_tuple" ||
      (repeated.children.size() == 1 && repeated.children[0].repeated())) {
    SILT_ASSIGN_OR_RETURN(TypePtr element, NodeType(repeated, true));
    return DataType::Array(std::move(element), false);
  }
  // Rule 5 / the standard 3-level form: the single child is the element.
  const Node& element = repeated.children[0];
  SILT_ASSIGN_OR_RETURN(TypePtr element_type, NodeType(element, false));
  return DataType::Array(std::move(element_type), element.optional());
}

Result<TypePtr> MapType(const Node& node) {
  if (node.children.size() != 1 || !node.children[0].repeated() ||
      node.children[0].children.size() != 2) {
    return Status::NotSupported("column '", node.el->name,
                                "': MAP group without a repeated key/value child");
  }
  const Node& kv = node.children[0];
  SILT_ASSIGN_OR_RETURN(TypePtr key, NodeType(kv.children[0], false));
  SILT_ASSIGN_OR_RETURN(TypePtr value, NodeType(kv.children[1], false));
  return DataType::Map(std::move(key), std::move(value), kv.children[1].optional());
}

Result<TypePtr> NodeType(const Node& node, bool ignore_repetition) {
  TypePtr t;
  if (node.is_leaf()) {
    SILT_ASSIGN_OR_RETURN(t, PrimitiveType(*node.el));
  } else if (IsListAnnotated(*node.el)) {
    SILT_ASSIGN_OR_RETURN(t, ListType(node));
  } else if (IsMapAnnotated(*node.el)) {
    SILT_ASSIGN_OR_RETURN(t, MapType(node));
  } else {
    SILT_ASSIGN_OR_RETURN(t, StructType(node));
  }
  // An unannotated repeated field is a required list of required elements.
  if (!ignore_repetition && node.repeated()) return DataType::Array(std::move(t), false);
  return t;
}

}  // namespace

Result<std::vector<ColumnDescriptor>> BuildColumnDescriptors(
    const std::vector<SchemaElement>& schema) {
  if (schema.empty()) return Status::Corruption("the schema has no root element");
  TreeBuilder builder(schema);
  Node root;
  SILT_RETURN_NOT_OK(builder.Build(&root, 0));
  if (builder.consumed() != schema.size()) {
    return Status::Corruption("schema has ", schema.size() - builder.consumed(),
                              " elements outside the root");
  }
  std::vector<ColumnDescriptor> out;
  out.reserve(root.children.size());
  for (const Node& child : root.children) {
    ColumnDescriptor d;
    d.field.name = child.el->name;
    d.field.nullable = !child.el->repetition_type.has_value() ||
                       *child.el->repetition_type != Repetition::kRequired;
    d.first_leaf = child.first_leaf;
    d.num_leaves = child.num_leaves;
    d.flat = child.is_leaf() && !child.repeated();
    if (d.flat) {
      d.leaf = *child.el;
      d.max_definition_level = child.optional() ? 1 : 0;
    }
    Result<TypePtr> t = NodeType(child, false);
    if (t.ok()) {
      d.field.type = std::move(t).MoveValueUnsafe();
    } else {
      d.field.type = DataType::Null();
      d.field.nullable = true;
      d.unsupported = t.status();
    }
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace silt::parquet
