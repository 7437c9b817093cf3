// Delta type widening (PROTOCOL.md "Type Widening"; the typeWidening table
// feature): which type changes a column may go through, the conversion of
// values stored in the narrower type, and the delta.typeChanges field
// metadata that records the changes, as delta-spark 4 writes it.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/columnar/types.h"
#include "silt/delta/actions.h"

namespace silt::delta {

// The field metadata key of the type change history.
inline constexpr std::string_view kTypeChangesKey = "delta.typeChanges";

// Whether atomic type `from` widens to `to` as the protocol and delta-spark
// 4 allow (TypeWidening.isTypeChangeSupported): byte -> short -> int ->
// long; float -> double; byte/short/int -> double; date -> timestamp_ntz;
// decimal(p, s) -> decimal(p + k1, s + k2) with k1 >= k2 >= 0;
// byte/short/int -> decimal with at least 10 integer digits, long -> one
// with at least 20. False for equal types and for nested types.
bool IsTypeChangeSupported(const columnar::DataType& from, const columnar::DataType& to);

// Whether values stored as `from` convert to `to` without loss as a
// reader widens them: IsTypeChangeSupported, plus an integral type to a
// decimal with room for its digits (byte 3, short 5, long 19), which
// delta-spark does not write but which loses nothing.
bool CanReadWidened(const columnar::DataType& from, const columnar::DataType& to);

// The column of `in`'s values in the wider type `to` (the validity bitmap
// is shared). REQUIRES: CanReadWidened(*in.type, *to), or `in` is a
// void column (all nulls of `to`).
columnar::ColumnPtr WidenColumn(const columnar::Column& in, const columnar::TypePtr& to);

// One recorded type change: `field_path` is "" for the struct field itself,
// else the path to an array element or map key/value inside it
// ("element", "key", "value", "element.value").
struct TypeChange {
  columnar::TypePtr from;
  columnar::TypePtr to;
  std::string field_path;
};

// `field` with `changes` appended to its delta.typeChanges list (kept in
// order, the existing entries first), each written as delta-spark writes it
// ({"toType":..., "fromType":..., "fieldPath":...}, Spark's type names).
// Errors: Corruption when the field's metadata is not a JSON object.
Result<columnar::Field> AppendTypeChanges(const columnar::Field& field,
                                          const std::vector<TypeChange>& changes);

// Whether writers may widen types of the table: delta.enableTypeWidening is
// true (delta-spark's TypeWidening.isEnabled). Errors: InvalidArgument for
// a malformed property; NotSupported when the property is on but the
// protocol lacks the typeWidening feature, or has only the
// typeWidening-preview feature (whose change records need the version of
// the commit, which silt does not write).
Result<bool> TypeWideningEnabled(const Protocol& protocol, const Metadata& metadata);

}  // namespace silt::delta
