// Spark's row hashes: hash (Murmur3 x86_32, seed 42) and xxhash64 (XXH64,
// seed 42).
//
// hash and xxhash64 reproduce Spark's HashExpression exactly: each argument
// (NULLs skipped) is hashed with the previous result as its seed; ints,
// dates, booleans (0/1), bytes and shorts hash as a 4-byte int, longs and
// timestamps as 8 bytes, -0.0 as 0, floats/doubles by their canonical bits,
// decimals of precision <= 18 by their unscaled long and others by the
// BigInteger's two's-complement bytes, strings by their UTF-8 bytes (with
// Spark's legacy tail handling for Murmur3), arrays and structs element by
// element, maps key then value.
// Header-only use of Debian's libxxhash (no link dependency).
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cmath>
#include <cstring>
#include <string>

#include "silt/columnar/builder.h"
#include "silt/expr/cast/cast.h"
#include "silt/expr/kernel/function_registry.h"
#include "silt/expr/kernel/kernel_util.h"
#include "silt/expr/kernel/type_util.h"
#include "silt/expr/parse/ast.h"
#include "silt/expr/value/decimal_util.h"

namespace silt::expr {

namespace {

using columnar::Column;
using columnar::ColumnBuilder;
using columnar::ColumnPtr;

// Spark's Murmur3_x86_32.
struct Murmur3 {
  static uint32_t Rotl(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }
  static uint32_t MixK1(uint32_t k1) {
    k1 *= 0xcc9e2d51u;
    k1 = Rotl(k1, 15);
    return k1 * 0x1b873593u;
  }
  static uint32_t MixH1(uint32_t h1, uint32_t k1) {
    h1 ^= k1;
    h1 = Rotl(h1, 13);
    return h1 * 5 + 0xe6546b64u;
  }
  static uint32_t Fmix(uint32_t h1, uint32_t length) {
    h1 ^= length;
    h1 ^= h1 >> 16;
    h1 *= 0x85ebca6bu;
    h1 ^= h1 >> 13;
    h1 *= 0xc2b2ae35u;
    h1 ^= h1 >> 16;
    return h1;
  }
  using Seed = uint32_t;
  static Seed Int(int32_t v, Seed seed) {
    return Fmix(MixH1(seed, MixK1(static_cast<uint32_t>(v))), 4);
  }
  static Seed Long(int64_t v, Seed seed) {
    uint64_t u = static_cast<uint64_t>(v);
    uint32_t h1 = MixH1(seed, MixK1(static_cast<uint32_t>(u)));
    h1 = MixH1(h1, MixK1(static_cast<uint32_t>(u >> 32)));
    return Fmix(h1, 8);
  }
  static Seed Bytes(std::string_view b, Seed seed) {
    const size_t aligned = b.size() - b.size() % 4;
    uint32_t h1 = seed;
    for (size_t i = 0; i < aligned; i += 4) {
      uint32_t word;
      std::memcpy(&word, b.data() + i, 4);
      h1 = MixH1(h1, MixK1(word));
    }
    // Spark's legacy hashUnsafeBytes: every trailing byte (sign-extended)
    // is mixed on its own.
    for (size_t i = aligned; i < b.size(); ++i) {
      int32_t half = static_cast<int8_t>(b[i]);
      h1 = MixH1(h1, MixK1(static_cast<uint32_t>(half)));
    }
    return Fmix(h1, static_cast<uint32_t>(b.size()));
  }
};

struct XxHash64 {
  using Seed = uint64_t;
  static Seed Int(int32_t v, Seed seed) { return XXH64(&v, 4, seed); }
  static Seed Long(int64_t v, Seed seed) { return XXH64(&v, 8, seed); }
  static Seed Bytes(std::string_view b, Seed seed) { return XXH64(b.data(), b.size(), seed); }
};

// java.math.BigInteger.toByteArray of `v`: minimal big-endian two's
// complement.
std::string BigIntegerBytes(int128 v) {
  std::string out;
  for (int i = 15; i >= 0; --i)
    out.push_back(static_cast<char>(static_cast<uint8_t>(v >> (i * 8))));
  size_t start = 0;
  while (start + 1 < out.size()) {
    uint8_t b0 = static_cast<uint8_t>(out[start]);
    uint8_t b1 = static_cast<uint8_t>(out[start + 1]);
    if ((b0 == 0x00 && (b1 & 0x80) == 0) || (b0 == 0xff && (b1 & 0x80) != 0)) {
      ++start;
    } else {
      break;
    }
  }
  return out.substr(start);
}

template <typename H>
typename H::Seed HashValue(const Column& c, int64_t row, typename H::Seed seed) {
  if (c.IsNull(row)) return seed;
  const columnar::DataType& t = *c.type;
  switch (t.id()) {
    case TypeId::kBoolean: return H::Int(c.BoolValue(row) ? 1 : 0, seed);
    case TypeId::kByte: return H::Int(c.Value<int8_t>(row), seed);
    case TypeId::kShort: return H::Int(c.Value<int16_t>(row), seed);
    case TypeId::kInt:
    case TypeId::kDate: return H::Int(c.Value<int32_t>(row), seed);
    case TypeId::kLong:
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: return H::Long(c.Value<int64_t>(row), seed);
    case TypeId::kFloat: {
      float f = c.Value<float>(row);
      if (f == 0.0f) return H::Int(0, seed);
      int32_t bits;
      if (std::isnan(f)) {
        bits = 0x7fc00000;
      } else {
        std::memcpy(&bits, &f, 4);
      }
      return H::Int(bits, seed);
    }
    case TypeId::kDouble: {
      double d = c.Value<double>(row);
      if (d == 0.0) return H::Long(0, seed);
      int64_t bits;
      if (std::isnan(d)) {
        bits = 0x7ff8000000000000LL;
      } else {
        std::memcpy(&bits, &d, 8);
      }
      return H::Long(bits, seed);
    }
    case TypeId::kDecimal: {
      int128 v = c.Value<int128>(row);
      if (t.precision() <= 18) return H::Long(static_cast<int64_t>(v), seed);
      return H::Bytes(BigIntegerBytes(v), seed);
    }
    case TypeId::kString:
    case TypeId::kBinary: return H::Bytes(c.StringValue(row), seed);
    case TypeId::kStruct:
      for (size_t i = 0; i < c.children.size(); ++i) seed = HashValue<H>(*c.children[i], row, seed);
      return seed;
    case TypeId::kArray: {
      const int32_t* off = c.offsets();
      for (int32_t e = off[row]; e < off[row + 1]; ++e)
        seed = HashValue<H>(*c.children[0], e, seed);
      return seed;
    }
    case TypeId::kMap: {
      const int32_t* off = c.offsets();
      const Column& entries = *c.children[0];
      for (int32_t e = off[row]; e < off[row + 1]; ++e) {
        seed = HashValue<H>(*entries.children[0], e, seed);
        seed = HashValue<H>(*entries.children[1], e, seed);
      }
      return seed;
    }
    default: return seed;
  }
}

template <typename H>
Result<ColumnPtr> HashKernel(const KernelInfo& info, const ExecArgs& args) {
  const int64_t n = args.num_rows;
  ValidityOut validity(n);
  if constexpr (std::is_same_v<H, Murmur3>) {
    FixedWriter<int32_t> out(n);
    for (int64_t row = 0; row < n; ++row) {
      uint32_t seed = 42;
      for (const Datum& d : args.args) seed = HashValue<H>(*d.column, d.constant ? 0 : row, seed);
      out.Set(row, static_cast<int32_t>(seed));
    }
    return out.Finish(info.type, &validity);
  } else {
    FixedWriter<int64_t> out(n);
    for (int64_t row = 0; row < n; ++row) {
      uint64_t seed = 42;
      for (const Datum& d : args.args) seed = HashValue<H>(*d.column, d.constant ? 0 : row, seed);
      out.Set(row, static_cast<int64_t>(seed));
    }
    return out.Finish(info.type, &validity);
  }
}

bool ContainsMap(const columnar::DataType& t) {
  if (t.id() == TypeId::kMap) return true;
  if (t.id() == TypeId::kArray) return ContainsMap(*t.element_type());
  for (const columnar::Field& f : t.fields()) {
    if (ContainsMap(*f.type)) return true;
  }
  return false;
}

bool ContainsVariant(const columnar::DataType& t) {
  if (t.id() == TypeId::kVariant) return true;
  if (t.id() == TypeId::kArray) return ContainsVariant(*t.element_type());
  if (t.id() == TypeId::kMap) return ContainsVariant(*t.value_type());
  for (const columnar::Field& f : t.fields()) {
    if (ContainsVariant(*f.type)) return true;
  }
  return false;
}

template <typename H>
Result<BoundNodePtr> BindHash(CallSite& site) {
  if (site.args.empty()) return ArgCountError(site, "at least 1");
  for (size_t i = 0; i < site.args.size(); ++i) {
    // Spark: equal maps may hash differently (entry order), so it refuses.
    if (ContainsMap(*site.args[i]->type())) return ArgTypeError(site, i, "free of MAP values");
    // Spark 4 refuses VARIANT too (HASH_VARIANT_TYPE): equal variants may
    // differ in bytes.
    if (ContainsVariant(*site.args[i]->type())) {
      return ArgTypeError(site, i, "free of VARIANT values");
    }
  }
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  TypePtr type = std::is_same_v<H, Murmur3> ? DataType::Int() : DataType::Long();
  return MakeBoundCall(site, type, false, std::move(site.args), &HashKernel<H>, std::move(sql));
}

}  // namespace

void RegisterSparkHashFunctions(FunctionRegistry* registry) {
  registry->Register("hash", &BindHash<Murmur3>);
  registry->Register("xxhash64", &BindHash<XxHash64>);
}

}  // namespace silt::expr
