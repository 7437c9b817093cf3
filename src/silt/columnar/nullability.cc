#include "silt/columnar/nullability.h"

#include <utility>
#include <vector>

namespace silt::columnar {

TypePtr AsNullable(const TypePtr& type) {
  switch (type->id()) {
    case TypeId::kStruct: {
      std::vector<Field> fields = type->fields();
      for (Field& field : fields) {
        field.nullable = true;
        field.type = AsNullable(field.type);
      }
      return DataType::Struct(std::move(fields));
    }
    case TypeId::kArray: return DataType::Array(AsNullable(type->element_type()), true);
    case TypeId::kMap:
      return DataType::Map(AsNullable(type->key_type()), AsNullable(type->value_type()), true);
    default: return type;
  }
}

}  // namespace silt::columnar
