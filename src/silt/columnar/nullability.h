// Nullability of nested types.
//
// Thread safety: a pure function over immutable types.
#pragma once

#include "silt/columnar/types.h"

namespace silt::columnar {

// The same type with every nested field, array element and map value
// nullable (Spark's StructType.asNullable): what from_json returns, and the
// schema delta-spark gives a table it creates from a query.
TypePtr AsNullable(const TypePtr& type);

}  // namespace silt::columnar
