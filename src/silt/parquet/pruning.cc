#include "silt/parquet/pruning.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "silt/parquet/bloom_filter.h"

namespace silt::parquet {

namespace {

using columnar::ColumnPredicate;
using columnar::PredicateOp;
using columnar::PredicateValue;
using columnar::TypeId;

// A decoded bound or literal: integers (and decimals' unscaled values,
// timestamps in micros) as kInt, floats as kFloat, bytes as kBytes.
struct Key {
  enum Kind { kInt, kFloat, kBytes } kind = kInt;
  __int128 i = 0;
  double f = 0;
  std::string s;
};

int Compare(const Key& a, const Key& b) {
  switch (a.kind) {
    case Key::kInt: return a.i < b.i ? -1 : (a.i > b.i ? 1 : 0);
    case Key::kFloat: return a.f < b.f ? -1 : (a.f > b.f ? 1 : 0);
    case Key::kBytes: {
      // std::string compares bytes as unsigned char.
      const int c = a.s.compare(b.s);
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
  }
  return 0;
}

// Type families a predicate and a leaf must share to be compared.
int Family(TypeId id) {
  switch (id) {
    case TypeId::kByte:
    case TypeId::kShort:
    case TypeId::kInt:
    case TypeId::kLong: return 1;
    case TypeId::kBoolean: return 2;
    case TypeId::kDate: return 3;
    case TypeId::kTimestamp: return 4;
    case TypeId::kTimestampNtz: return 5;
    case TypeId::kFloat:
    case TypeId::kDouble: return 6;
    case TypeId::kString:
    case TypeId::kBinary: return 7;
    case TypeId::kDecimal: return 8;
    default: return 0;
  }
}

bool TypesMatch(const ColumnDescriptor& leaf, const ColumnPredicate& pred) {
  if (pred.type == nullptr || leaf.field.type == nullptr) return false;
  const int family = Family(leaf.field.type->id());
  if (family == 0 || family != Family(pred.type->id())) return false;
  if (family == 8) return pred.type->scale() == leaf.field.type->scale();
  return true;
}

bool IsUnsigned(const SchemaElement& e) {
  if (e.logical_type && e.logical_type->kind == LogicalType::Kind::kInteger) {
    return !e.logical_type->is_signed;
  }
  if (e.converted_type) {
    switch (*e.converted_type) {
      case ConvertedType::kUint8:
      case ConvertedType::kUint16:
      case ConvertedType::kUint32:
      case ConvertedType::kUint64: return true;
      default: break;
    }
  }
  return false;
}

// Micros per stored unit of an INT64 timestamp: 1000 for millis, 1 for
// micros, -1000 for nanos (divide), 0 when not a timestamp.
int64_t TimestampScale(const SchemaElement& e) {
  TimeUnit unit;
  if (e.logical_type && e.logical_type->kind == LogicalType::Kind::kTimestamp) {
    unit = e.logical_type->unit;
  } else if (e.converted_type == ConvertedType::kTimestampMillis) {
    unit = TimeUnit::kMillis;
  } else if (e.converted_type == ConvertedType::kTimestampMicros) {
    unit = TimeUnit::kMicros;
  } else {
    return 0;
  }
  switch (unit) {
    case TimeUnit::kMillis: return 1000;
    case TimeUnit::kMicros: return 1;
    case TimeUnit::kNanos: return -1000;
  }
  return 0;
}

bool IsTimestampLeaf(const ColumnDescriptor& leaf) {
  const TypeId id = leaf.field.type->id();
  return id == TypeId::kTimestamp || id == TypeId::kTimestampNtz;
}

// Big-endian two's complement bytes (1..16) as a signed integer.
bool DecodeBigEndian(std::string_view bytes, __int128* out) {
  if (bytes.empty() || bytes.size() > 16) return false;
  unsigned __int128 u =
      (static_cast<uint8_t>(bytes[0]) & 0x80) ? ~static_cast<unsigned __int128>(0) : 0;
  for (char c : bytes) u = (u << 8) | static_cast<uint8_t>(c);
  *out = static_cast<__int128>(u);
  return true;
}

// Decodes a bound; `is_max` picks the rounding direction for timestamps
// stored in nanoseconds.
std::optional<Key> DecodeBound(const ColumnDescriptor& leaf, const std::string& bytes,
                               bool is_max) {
  const SchemaElement& e = leaf.leaf;
  if (!e.type) return std::nullopt;
  const TypeId id = leaf.field.type->id();
  Key k;
  switch (*e.type) {
    case PhysicalType::kBoolean:
      if (bytes.size() != 1) return std::nullopt;
      k.i = bytes[0] != 0;
      return k;
    case PhysicalType::kInt32: {
      if (bytes.size() != 4) return std::nullopt;
      int32_t v;
      std::memcpy(&v, bytes.data(), 4);
      k.i = IsUnsigned(e) ? static_cast<__int128>(static_cast<uint32_t>(v)) : v;
      return k;
    }
    case PhysicalType::kInt64: {
      if (bytes.size() != 8 || IsUnsigned(e)) return std::nullopt;
      int64_t v;
      std::memcpy(&v, bytes.data(), 8);
      k.i = v;
      if (IsTimestampLeaf(leaf)) {
        const int64_t scale = TimestampScale(e);
        if (scale == 0) return std::nullopt;
        if (scale > 0) {
          k.i *= scale;
        } else {
          // Nanos -> micros, rounded outwards so the bound still holds.
          __int128 q = k.i / 1000;
          const __int128 r = k.i % 1000;
          if (r != 0 && is_max && k.i > 0) ++q;
          if (r != 0 && !is_max && k.i < 0) --q;
          k.i = q;
        }
      }
      return k;
    }
    case PhysicalType::kFloat: {
      if (bytes.size() != 4) return std::nullopt;
      float v;
      std::memcpy(&v, bytes.data(), 4);
      if (std::isnan(v)) return std::nullopt;
      k.kind = Key::kFloat;
      k.f = v;
      return k;
    }
    case PhysicalType::kDouble: {
      if (bytes.size() != 8) return std::nullopt;
      double v;
      std::memcpy(&v, bytes.data(), 8);
      if (std::isnan(v)) return std::nullopt;
      k.kind = Key::kFloat;
      k.f = v;
      return k;
    }
    case PhysicalType::kByteArray:
    case PhysicalType::kFixedLenByteArray:
      if (id == TypeId::kDecimal) {
        if (!DecodeBigEndian(bytes, &k.i)) return std::nullopt;
        return k;
      }
      if (id != TypeId::kString && id != TypeId::kBinary) return std::nullopt;
      k.kind = Key::kBytes;
      k.s = bytes;
      return k;
    case PhysicalType::kInt96: return std::nullopt;
  }
  return std::nullopt;
}

std::optional<Key> LiteralKey(const ColumnDescriptor& leaf, const PredicateValue& v) {
  Key k;
  switch (Family(leaf.field.type->id())) {
    case 1:
    case 2:
    case 3:
    case 4:
    case 5: k.i = v.i64; return k;
    case 6:
      if (std::isnan(v.f64)) return std::nullopt;
      k.kind = Key::kFloat;
      k.f = v.f64;
      return k;
    case 7:
      k.kind = Key::kBytes;
      k.s = v.str;
      return k;
    case 8: k.i = v.i128; return k;
    default: return std::nullopt;
  }
}

// Whether the legacy (signed-order) min/max may be trusted for this leaf.
bool LegacyOrderIsRight(const ColumnDescriptor& leaf) {
  const SchemaElement& e = leaf.leaf;
  if (!e.type || IsUnsigned(e)) return false;
  switch (*e.type) {
    case PhysicalType::kBoolean:
    case PhysicalType::kInt32:
    case PhysicalType::kInt64:
    case PhysicalType::kFloat:
    case PhysicalType::kDouble: return true;
    default: return false;
  }
}

}  // namespace

LeafFacts ChunkFacts(const ColumnDescriptor& leaf, const Statistics* stats, int64_t num_values) {
  LeafFacts f;
  f.num_values = num_values;
  if (stats == nullptr) return f;
  f.null_count = stats->null_count;
  if (stats->min_value && stats->max_value) {
    f.min = &*stats->min_value;
    f.max = &*stats->max_value;
  } else if (stats->min && stats->max && LegacyOrderIsRight(leaf)) {
    f.min = &*stats->min;
    f.max = &*stats->max;
  }
  return f;
}

bool MayMatch(const ColumnDescriptor& leaf, const ColumnPredicate& pred, const LeafFacts& facts) {
  const bool all_null = facts.all_null || (facts.null_count && facts.num_values >= 0 &&
                                           *facts.null_count >= facts.num_values);
  if (pred.op == PredicateOp::kIsNull) {
    return !(facts.null_count && *facts.null_count == 0 && !facts.all_null);
  }
  // Every other predicate is false (or null) on a null value.
  if (all_null) return false;
  if (pred.op == PredicateOp::kIsNotNull) return true;
  if (facts.min == nullptr || facts.max == nullptr || !TypesMatch(leaf, pred)) return true;
  if (pred.values.empty()) return true;
  const std::optional<Key> lo = DecodeBound(leaf, *facts.min, false);
  const std::optional<Key> hi = DecodeBound(leaf, *facts.max, true);
  if (!lo || !hi || lo->kind != hi->kind) return true;
  const bool floating = lo->kind == Key::kFloat;
  auto literal = [&](const PredicateValue& v) { return LiteralKey(leaf, v); };
  switch (pred.op) {
    case PredicateOp::kEq:
    case PredicateOp::kIn:
      for (const PredicateValue& v : pred.values) {
        const std::optional<Key> k = literal(v);
        if (!k || k->kind != lo->kind) return true;
        if (Compare(*lo, *k) <= 0 && Compare(*k, *hi) <= 0) return true;
      }
      return false;
    case PredicateOp::kNotEq: {
      if (floating) return true;
      const std::optional<Key> k = literal(pred.values[0]);
      if (!k || k->kind != lo->kind) return true;
      return !(Compare(*lo, *k) == 0 && Compare(*hi, *k) == 0);
    }
    case PredicateOp::kLt:
    case PredicateOp::kLtEq: {
      const std::optional<Key> k = literal(pred.values[0]);
      if (!k || k->kind != lo->kind) return true;
      const int c = Compare(*lo, *k);
      return pred.op == PredicateOp::kLt ? c < 0 : c <= 0;
    }
    case PredicateOp::kGt:
    case PredicateOp::kGtEq: {
      if (floating) return true;  // NaN rows (absent from bounds) are greater
      const std::optional<Key> k = literal(pred.values[0]);
      if (!k || k->kind != lo->kind) return true;
      const int c = Compare(*hi, *k);
      return pred.op == PredicateOp::kGt ? c > 0 : c >= 0;
    }
    default: return true;
  }
}

std::optional<uint64_t> BloomHashFor(const ColumnDescriptor& leaf, const ColumnPredicate& pred,
                                     const PredicateValue& value) {
  if (!TypesMatch(leaf, pred) || !leaf.leaf.type) return std::nullopt;
  const SchemaElement& e = leaf.leaf;
  const TypeId id = leaf.field.type->id();
  switch (*e.type) {
    case PhysicalType::kInt32: {
      const __int128 v = id == TypeId::kDecimal ? value.i128 : value.i64;
      if (IsUnsigned(e)) {
        if (v < 0 || v > std::numeric_limits<uint32_t>::max()) return std::nullopt;
        return SplitBlockBloomFilter::HashInt32(
            static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v))));
      }
      if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
        return std::nullopt;
      }
      return SplitBlockBloomFilter::HashInt32(static_cast<int32_t>(v));
    }
    case PhysicalType::kInt64: {
      if (IsUnsigned(e)) return std::nullopt;
      if (IsTimestampLeaf(leaf) && TimestampScale(e) != 1) return std::nullopt;
      const __int128 v = id == TypeId::kDecimal ? value.i128 : value.i64;
      if (v < std::numeric_limits<int64_t>::min() || v > std::numeric_limits<int64_t>::max()) {
        return std::nullopt;
      }
      return SplitBlockBloomFilter::HashInt64(static_cast<int64_t>(v));
    }
    case PhysicalType::kFloat: {
      const auto f = static_cast<float>(value.f64);
      if (std::isnan(value.f64) || value.f64 == 0 || static_cast<double>(f) != value.f64) {
        return std::nullopt;
      }
      return SplitBlockBloomFilter::HashFloat(f);
    }
    case PhysicalType::kDouble:
      if (std::isnan(value.f64) || value.f64 == 0) return std::nullopt;
      return SplitBlockBloomFilter::HashDouble(value.f64);
    case PhysicalType::kByteArray:
      if (id != TypeId::kString && id != TypeId::kBinary) return std::nullopt;
      return SplitBlockBloomFilter::Hash(value.str);
    case PhysicalType::kFixedLenByteArray: {
      const int width = e.type_length.value_or(0);
      if (id == TypeId::kDecimal) {
        if (width < 1 || width > 16) return std::nullopt;
        char buf[16];
        unsigned __int128 u = static_cast<unsigned __int128>(value.i128);
        for (int i = width - 1; i >= 0; --i) {
          buf[i] = static_cast<char>(static_cast<uint8_t>(u));
          u >>= 8;
        }
        // The value must fit the width (sign-extension round trip).
        __int128 back = 0;
        if (!DecodeBigEndian(std::string_view(buf, static_cast<size_t>(width)), &back) ||
            back != value.i128) {
          return std::nullopt;
        }
        return SplitBlockBloomFilter::Hash(std::string_view(buf, static_cast<size_t>(width)));
      }
      if (id != TypeId::kBinary && id != TypeId::kString) return std::nullopt;
      if (static_cast<int>(value.str.size()) != width) return std::nullopt;
      return SplitBlockBloomFilter::Hash(value.str);
    }
    default: return std::nullopt;
  }
}

}  // namespace silt::parquet
