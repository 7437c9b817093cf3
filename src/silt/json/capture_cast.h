// The captured scalars of get_json_object (JsonMultiPathEvaluator::AddPath
// with capture_scalars) and their fused cast: a path's JSON number or
// boolean kept as (kind, bits) instead of its text, the text get_json_object
// would give for it, and Spark's CAST of that text computed from the number
// itself where the text cannot change the result (decisions 153, 182, 184,
// 186).
//
// Thread safety: pure functions; the types are built once, thread-safely.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "silt/columnar/types.h"

namespace silt::json {

// The kinds of a captured scalar (the `kind` field of CapturedType()).
enum class CapturedKind : int8_t { kInt64 = 1, kUint64 = 2, kDouble = 3, kBool = 4 };

// STRUCT<text: STRING, kind: TINYINT, bits: BIGINT>.
const columnar::TypePtr& CapturedType();

// The target type of a fused CAST(get_json_object(x, path) AS type): a
// captured scalar is converted to it as the path's result is written.
enum class CaptureCast : int8_t { kNone, kBoolean, kByte, kShort, kInt, kLong, kFloat, kDouble };

// STRUCT<text: STRING, value: the cast's type> (BOOLEAN, TINYINT, ...,
// DOUBLE), the result of a path added with a cast. REQUIRES: cast != kNone.
const columnar::TypePtr& CapturedCastType(CaptureCast cast);

// Appends the text get_json_object gives for a captured scalar (Jackson's
// re-printing: integers verbatim, doubles as Java's Double.toString, a
// boolean as true/false). `bits`: the int64 value, the uint64 or double bit
// pattern, or 0/1.
void AppendCapturedText(CapturedKind kind, int64_t bits, std::string* out);

// Whether Java's Double.toString prints a nonzero `d` without an exponent:
// magnitudes in [1e-3, 1e7) (JsonGen::Double). Only those texts (and zero's
// "0.0") can parse as integers.
inline bool PrintsPlain(double d) {
  const double magnitude = std::fabs(d);
  return magnitude >= 1e-3 && magnitude < 1e7;
}

// Spark's CAST(text AS Out), ANSI when `ansi`, of the text AppendCapturedText
// gives for (kind, bits), where Out is bool, int8_t, int16_t, int32_t,
// int64_t, float or double. Returns true with *out when the number alone
// decides the result (a value, never NULL or an error); false when only the
// text decides (the caller casts the text, so values, NULLs and ANSI errors
// stay the text cast's): an integer out of Out's range, a double with a
// fraction under ANSI or printed with an exponent for an integer type, a
// double on a rounding tie between two floats or beyond the largest float,
// and for BOOLEAN anything but true, false, 1 and 0.
// Inline: the result writers call it per row.
template <typename Out>
bool CastCaptured(CapturedKind kind, int64_t bits, bool ansi, Out* out) {
  if (kind == CapturedKind::kUint64) {
    const uint64_t u = std::bit_cast<uint64_t>(bits);
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      if constexpr (std::is_floating_point_v<Out>) {
        *out = static_cast<Out>(u);  // one correctly rounded conversion, as strtod/strtof
        return true;
      }
      return false;
    }
    kind = CapturedKind::kInt64;
  }
  if constexpr (std::is_same_v<Out, bool>) {
    if (kind == CapturedKind::kBool || (kind == CapturedKind::kInt64 && (bits == 0 || bits == 1))) {
      *out = bits != 0;  // "true"/"false"/"1"/"0"
      return true;
    }
    return false;
  } else {
    switch (kind) {
      case CapturedKind::kInt64:
        if constexpr (std::is_floating_point_v<Out>) {
          *out = static_cast<Out>(bits);
          return true;
        } else {
          if (bits < std::numeric_limits<Out>::min() || bits > std::numeric_limits<Out>::max()) {
            return false;
          }
          *out = static_cast<Out>(bits);
          return true;
        }
      case CapturedKind::kDouble: {
        const double d = std::bit_cast<double>(bits);
        if constexpr (std::is_same_v<Out, double>) {
          // Double.toString round-trips.
          *out = d;
          return true;
        } else if constexpr (std::is_same_v<Out, float>) {
          // The text is within half a double ulp of d, so strtof(text) and
          // (float)d agree unless d lies exactly on a rounding boundary
          // between two floats (or beyond the largest float).
          if (!(std::fabs(d) <= static_cast<double>(std::numeric_limits<float>::max()))) {
            return false;
          }
          const float f = static_cast<float>(d);
          if (static_cast<double>(f) != d) {
            const float next = std::nextafter(f, d > static_cast<double>(f)
                                                     ? std::numeric_limits<float>::infinity()
                                                     : -std::numeric_limits<float>::infinity());
            if ((static_cast<double>(f) + static_cast<double>(next)) / 2 == d) return false;
          }
          *out = f;
          return true;
        } else {
          // Non-ANSI reads "21.5" as 21 (UTF8String.toInt); ANSI rejects
          // the fraction, and no integer type reads an exponent.
          if (ansi) return false;
          if (d == 0) {
            *out = 0;
            return true;
          }
          if (!PrintsPlain(d)) return false;
          const double whole = std::trunc(d);  // |whole| < 1e7: exact
          if (whole < static_cast<double>(std::numeric_limits<Out>::min()) ||
              whole > static_cast<double>(std::numeric_limits<Out>::max())) {
            return false;
          }
          *out = static_cast<Out>(whole);
          return true;
        }
      }
      default: return false;
    }
  }
}

}  // namespace silt::json
