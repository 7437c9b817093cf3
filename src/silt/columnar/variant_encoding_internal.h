// Constants of the Variant binary encoding (Apache Parquet's
// VariantEncoding.md) shared by the variant reader (variant.cc), builder
// (variant_builder.cc) and JSON printer (variant_to_json.cc). Private to
// src/silt/columnar/variant*.cc.
#pragma once

#include <cstdint>

namespace silt::columnar {

// Basic types (the low two bits of a value's header byte).
constexpr int kPrimitive = 0;
constexpr int kShortString = 1;
constexpr int kObject = 2;
constexpr int kArray = 3;

// Primitive type ids.
constexpr int kNullId = 0;
constexpr int kTrueId = 1;
constexpr int kFalseId = 2;
constexpr int kInt8Id = 3;
constexpr int kInt16Id = 4;
constexpr int kInt32Id = 5;
constexpr int kInt64Id = 6;
constexpr int kDoubleId = 7;
constexpr int kDecimal4Id = 8;
constexpr int kDecimal8Id = 9;
constexpr int kDecimal16Id = 10;
constexpr int kDateId = 11;
constexpr int kTimestampId = 12;
constexpr int kTimestampNtzId = 13;
constexpr int kFloatId = 14;
constexpr int kBinaryId = 15;
constexpr int kStringId = 16;
constexpr int kUuidId = 20;

// Depth at which reading a variant stops recursing (a malformed value can
// nest without bound).
constexpr int kMaxVariantDepth = 10000;

}  // namespace silt::columnar
