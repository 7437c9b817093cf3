#include "silt/exec/spark_hash.h"

#include <xxhash.h>

#include <cmath>
#include <cstring>

#include "silt/exec/value_access.h"

namespace silt::exec {

namespace {

using columnar::TypeId;

uint64_t HashInt(int32_t v, uint64_t seed) { return XXH64(&v, sizeof(v), seed); }

uint64_t HashLong(int64_t v, uint64_t seed) { return XXH64(&v, sizeof(v), seed); }

// Java's BigInteger.toByteArray: the shortest big-endian two's complement
// that keeps the sign bit.
uint64_t HashBigDecimal(__int128 v, uint64_t seed) {
  unsigned char bytes[16];
  for (int i = 0; i < 16; ++i) {
    bytes[15 - i] = static_cast<unsigned char>(static_cast<unsigned __int128>(v) >> (8 * i));
  }
  int start = 0;
  while (start < 15) {
    const bool redundant = (bytes[start] == 0x00 && (bytes[start + 1] & 0x80) == 0) ||
                           (bytes[start] == 0xFF && (bytes[start + 1] & 0x80) != 0);
    if (!redundant) break;
    ++start;
  }
  return XXH64(bytes + start, static_cast<size_t>(16 - start), seed);
}

}  // namespace

bool SparkHashableType(const columnar::DataType& type) {
  switch (type.id()) {
    case TypeId::kBoolean:
    case TypeId::kByte:
    case TypeId::kShort:
    case TypeId::kInt:
    case TypeId::kDate:
    case TypeId::kLong:
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz:
    case TypeId::kFloat:
    case TypeId::kDouble:
    case TypeId::kDecimal:
    case TypeId::kString:
    case TypeId::kBinary: return true;
    default: return false;
  }
}

void SparkXxHash64(const columnar::Column& c, uint64_t seed, int64_t rows, uint64_t* out) {
  const bool has_nulls = c.null_count > 0;
  const TypeId id = c.type->id();
  for (int64_t i = 0; i < rows; ++i) {
    if (has_nulls && c.IsNull(i)) continue;
    switch (id) {
      case TypeId::kBoolean:
      case TypeId::kByte:
      case TypeId::kShort:
      case TypeId::kInt:
      case TypeId::kDate: out[i] = HashInt(static_cast<int32_t>(IntAt(c, i)), seed); break;
      case TypeId::kFloat: {
        // Spark hashes -0.0 as 0.0, and floatToIntBits has one NaN.
        float f = c.Value<float>(i);
        if (f == 0.0f) f = 0.0f;
        int32_t bits;
        std::memcpy(&bits, &f, sizeof(bits));
        if (std::isnan(f)) bits = 0x7fc00000;
        out[i] = HashInt(bits, seed);
        break;
      }
      case TypeId::kDouble: {
        double d = c.Value<double>(i);
        if (d == 0.0) d = 0.0;
        int64_t bits;
        std::memcpy(&bits, &d, sizeof(bits));
        if (std::isnan(d)) bits = 0x7ff8000000000000LL;  // doubleToLongBits
        out[i] = HashLong(bits, seed);
        break;
      }
      case TypeId::kDecimal: {
        const __int128 v = DecimalAt(c, i);
        out[i] = c.type->precision() <= 18 ? HashLong(static_cast<int64_t>(v), seed)
                                           : HashBigDecimal(v, seed);
        break;
      }
      case TypeId::kString:
      case TypeId::kBinary: {
        std::string_view s = c.StringValue(i);
        out[i] = XXH64(s.data(), s.size(), seed);
        break;
      }
      default: out[i] = HashLong(IntAt(c, i), seed); break;
    }
  }
}

}  // namespace silt::exec
