#include "silt/parquet/parquet_schema.h"

#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <string_view>

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

namespace {

// The Parquet field id a field's metadata asks for under Spark's key
// "parquet.field.id" (Delta column mapping's physical schema carries it),
// or nullopt: the writer puts it on the field's schema element (leaf or
// group), as Spark's Parquet writer does.
std::optional<int32_t> FieldIdOf(const Field& field) {
  constexpr std::string_view kKey = "\"parquet.field.id\"";
  const std::string& json = field.metadata_json;
  size_t pos = json.find(kKey);
  if (pos == std::string::npos) return std::nullopt;
  pos += kKey.size();
  while (pos < json.size() && (json[pos] == ' ' || json[pos] == ':')) ++pos;
  bool negative = pos < json.size() && json[pos] == '-';
  if (negative) ++pos;
  int64_t value = 0;
  size_t digits = 0;
  for (; pos < json.size() && json[pos] >= '0' && json[pos] <= '9'; ++pos, ++digits) {
    value = value * 10 + (json[pos] - '0');
    if (value > INT32_MAX) return std::nullopt;
  }
  if (digits == 0) return std::nullopt;
  return static_cast<int32_t>(negative ? -value : value);
}

}  // namespace

Result<SchemaElement> ParquetElementForField(const Field& field) {
  SchemaElement el;
  el.name = field.name;
  el.field_id = FieldIdOf(field);
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
    case TypeId::kVariant:
      return Status::NotSupported("writing column '", field.name, "' of type ", t.ToDdl(),
                                  " to Parquet");
  }
  return el;
}

namespace {

SchemaElement Group(std::string name, Repetition repetition, int num_children) {
  SchemaElement el;
  el.name = std::move(name);
  el.repetition_type = repetition;
  el.num_children = num_children;
  return el;
}

// The group element of a struct, list, map or variant field, carrying the
// field's id.
SchemaElement FieldGroup(const Field& field, Repetition repetition, int num_children) {
  SchemaElement el = Group(field.name, repetition, num_children);
  el.field_id = FieldIdOf(field);
  return el;
}

Status AppendElements(const Field& field, bool nullable, std::vector<SchemaElement>* out) {
  const DataType& t = *field.type;
  const Repetition repetition = nullable ? Repetition::kOptional : Repetition::kRequired;
  switch (t.id()) {
    case TypeId::kStruct: {
      if (t.num_fields() == 0) {
        return Status::NotSupported("writing column '", field.name,
                                    "': Parquet has no empty structs");
      }
      out->push_back(FieldGroup(field, repetition, t.num_fields()));
      for (const Field& child : t.fields()) {
        SILT_RETURN_NOT_OK(AppendElements(child, child.nullable, out));
      }
      return Status::OK();
    }
    case TypeId::kArray: {
      SchemaElement list = FieldGroup(field, repetition, 1);
      list.converted_type = ConvertedType::kList;
      list.logical_type = LogicalType::List();
      out->push_back(std::move(list));
      out->push_back(Group("list", Repetition::kRepeated, 1));
      Field element{"element", t.element_type(), t.contains_null(), "{}"};
      return AppendElements(element, t.contains_null(), out);
    }
    case TypeId::kVariant: {
      // Delta's unshredded variant: a group of two required binaries, value
      // first, as Spark 4 writes it (no VARIANT annotation, which readers
      // built on older parquet-format versions reject).
      out->push_back(FieldGroup(field, repetition, 2));
      SILT_RETURN_NOT_OK(
          AppendElements(Field{"value", DataType::Binary(), false, "{}"}, false, out));
      return AppendElements(Field{"metadata", DataType::Binary(), false, "{}"}, false, out);
    }
    case TypeId::kMap: {
      SchemaElement map = FieldGroup(field, repetition, 1);
      map.converted_type = ConvertedType::kMap;
      map.logical_type = LogicalType::Map();
      out->push_back(std::move(map));
      out->push_back(Group("key_value", Repetition::kRepeated, 2));
      SILT_RETURN_NOT_OK(AppendElements(Field{"key", t.key_type(), false, "{}"}, false, out));
      return AppendElements(Field{"value", t.value_type(), t.value_contains_null(), "{}"},
                            t.value_contains_null(), out);
    }
    default: {
      Field leaf = field;
      leaf.nullable = nullable;
      SILT_ASSIGN_OR_RETURN(SchemaElement el, ParquetElementForField(leaf));
      out->push_back(std::move(el));
      return Status::OK();
    }
  }
}

}  // namespace

Result<std::vector<SchemaElement>> ParquetElementsForField(const Field& field) {
  std::vector<SchemaElement> out;
  SILT_RETURN_NOT_OK_CTX(AppendElements(field, field.nullable, &out), "column '", field.name, "'");
  return out;
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

// A field's metadata JSON: its Parquet field id under Spark's key
// "parquet.field.id" (Delta column mapping in id mode matches on it), or {}.
std::string FieldIdMetadata(const SchemaElement& el) {
  if (!el.field_id) return "{}";
  return "{\"parquet.field.id\":" + std::to_string(*el.field_id) + "}";
}

// Required fields and repeated ones (lists that are never null) are not
// nullable.
bool IsNullable(const Node& node) {
  return !node.el->repetition_type.has_value() ||
         *node.el->repetition_type == Repetition::kOptional;
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

// Converts a Parquet node into its Spark type and level shape. `parent_def`
// and `parent_rep` are the levels of the enclosing node; `exist_def` is the
// definition level from which the enclosing repeated context has a slot.
// `as_required` treats the node's own repetition as already accounted for
// (the element of a legacy list is the repeated field itself).
class Converter {
 public:
  explicit Converter(std::vector<ColumnDescriptor>* leaves) : leaves_(leaves) {}

  Result<LevelNode> Convert(const Node& node, int parent_def, int parent_rep, int exist_def,
                            bool as_required) {
    path_.push_back(node.el->name);
    Result<LevelNode> r = ConvertInner(node, parent_def, parent_rep, exist_def, as_required);
    path_.pop_back();
    return r;
  }

 private:
  Result<LevelNode> ConvertInner(const Node& node, int parent_def, int parent_rep, int exist_def,
                                 bool as_required) {
    LevelNode n;
    n.first_leaf = static_cast<int>(leaves_->size());
    n.rep_level = parent_rep;
    n.exist_def = exist_def;
    if (node.repeated() && !as_required) {
      // An unannotated repeated field is a required list of required
      // elements.
      n.valid_def = parent_def;
      n.child_def = parent_def + 1;
      SILT_ASSIGN_OR_RETURN(LevelNode element,
                            ConvertNode(node, parent_def + 1, parent_rep + 1, parent_def + 1));
      n.type = DataType::Array(element.type, false);
      n.children.push_back(std::move(element));
      return n;
    }
    return ConvertNode(node, parent_def, parent_rep, exist_def);
  }

  // The node with its own repetition already applied to parent_def/rep
  // when repeated; optional nodes add their level here.
  Result<LevelNode> ConvertNode(const Node& node, int parent_def, int parent_rep, int exist_def) {
    LevelNode n;
    n.first_leaf = static_cast<int>(leaves_->size());
    n.rep_level = parent_rep;
    n.exist_def = exist_def;
    const int own_def = parent_def + (node.optional() ? 1 : 0);
    n.valid_def = own_def;
    if (node.is_leaf()) {
      SILT_ASSIGN_OR_RETURN(n.type, PrimitiveType(*node.el));
      n.leaf = n.first_leaf;
      ColumnDescriptor leaf;
      leaf.field.name = JoinPath();
      leaf.field.type = n.type;
      leaf.field.nullable = own_def > exist_def;
      leaf.first_leaf = node.first_leaf;
      leaf.num_leaves = 1;
      leaf.flat = true;
      leaf.leaf = *node.el;
      leaf.max_definition_level = own_def;
      leaf.max_repetition_level = parent_rep;
      leaf.slot_definition_level = exist_def;
      leaf.path = path_;
      leaves_->push_back(std::move(leaf));
      return n;
    }
    const int child_def = own_def + 1;
    const int child_rep = parent_rep + 1;
    if (IsListAnnotated(*node.el)) {
      if (node.children.size() != 1 || !node.children[0].repeated()) {
        return Status::NotSupported("column '", node.el->name,
                                    "': LIST group without a single repeated child");
      }
      const Node& repeated = node.children[0];
      n.child_def = child_def;
      // Backward-compatibility rules 1-4: the repeated field itself is the
      // element (required elements).
      if (repeated.is_leaf() || repeated.children.size() > 1 || repeated.el->name == "array" ||
          repeated.el->name == node.el->name + "_tuple" ||
          (repeated.children.size() == 1 && repeated.children[0].repeated())) {
        SILT_ASSIGN_OR_RETURN(LevelNode element, Convert(repeated, child_def, child_rep, child_def,
                                                         /*as_required=*/true));
        n.type = DataType::Array(element.type, false);
        n.children.push_back(std::move(element));
        return n;
      }
      // Rule 5 / the standard 3-level form: the single child is the element.
      path_.push_back(repeated.el->name);
      const Node& element_node = repeated.children[0];
      Result<LevelNode> element = Convert(element_node, child_def, child_rep, child_def, false);
      path_.pop_back();
      SILT_RETURN_NOT_OK(element.status());
      n.type = DataType::Array(element->type, element_node.optional());
      n.children.push_back(std::move(element).MoveValueUnsafe());
      return n;
    }
    if (IsMapAnnotated(*node.el)) {
      if (node.children.size() != 1 || !node.children[0].repeated() ||
          node.children[0].children.size() != 2) {
        return Status::NotSupported("column '", node.el->name,
                                    "': MAP group without a repeated key/value child");
      }
      const Node& kv = node.children[0];
      n.child_def = child_def;
      path_.push_back(kv.el->name);
      Result<LevelNode> key = Convert(kv.children[0], child_def, child_rep, child_def, false);
      Result<LevelNode> value =
          key.ok() ? Convert(kv.children[1], child_def, child_rep, child_def, false)
                   : Result<LevelNode>(key.status());
      path_.pop_back();
      SILT_RETURN_NOT_OK(key.status());
      SILT_RETURN_NOT_OK(value.status());
      n.type = DataType::Map(key->type, value->type, kv.children[1].optional());
      n.children.push_back(std::move(key).MoveValueUnsafe());
      n.children.push_back(std::move(value).MoveValueUnsafe());
      return n;
    }
    std::vector<Field> fields;
    for (const Node& child : node.children) {
      SILT_ASSIGN_OR_RETURN(LevelNode c, Convert(child, own_def, parent_rep, exist_def, false));
      Field f;
      f.name = child.el->name;
      f.type = c.type;
      f.nullable = IsNullable(child);
      f.metadata_json = FieldIdMetadata(*child.el);
      fields.push_back(std::move(f));
      n.children.push_back(std::move(c));
    }
    n.type = DataType::Struct(std::move(fields));
    return n;
  }

  std::string JoinPath() const {
    std::string s;
    for (const std::string& p : path_) {
      if (!s.empty()) s += '.';
      s += p;
    }
    return s;
  }

  std::vector<ColumnDescriptor>* leaves_;
  std::vector<std::string> path_;
};

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
    d.field.nullable = IsNullable(child);
    d.field.metadata_json = FieldIdMetadata(*child.el);
    d.first_leaf = child.first_leaf;
    d.num_leaves = child.num_leaves;
    d.flat = child.is_leaf() && !child.repeated();
    std::vector<ColumnDescriptor> leaves;
    Converter converter(&leaves);
    Result<LevelNode> t = converter.Convert(child, 0, 0, 0, false);
    if (t.ok()) {
      d.field.type = t->type;
      if (d.flat) {
        const ColumnDescriptor& leaf = leaves[0];
        d.leaf = leaf.leaf;
        d.max_definition_level = leaf.max_definition_level;
        d.path = leaf.path;
      } else {
        d.leaves = std::move(leaves);
        d.levels = std::make_shared<const LevelNode>(std::move(t).MoveValueUnsafe());
      }
    } else {
      if (d.flat) {
        d.leaf = *child.el;
        d.max_definition_level = child.optional() ? 1 : 0;
        d.path = {child.el->name};
      }
      d.field.type = DataType::Null();
      d.field.nullable = true;
      d.unsupported = t.status();
    }
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace silt::parquet
