// The byte encoding of single values that KeyCodec (group keys) and the
// aggregate states (distinct sets, first/last values, collected elements)
// share. Specified in docs/format/aggregate-state.md ("Value encoding"); the
// bytes are persisted in state stores, so changing them needs a new format
// version.
//
// Each value is a tag byte (0 null, 1 present) followed, when present, by the
// value: fixed-width types little-endian at their physical width, boolean one
// byte, decimal 16 bytes, string/binary a uint32 length and the bytes, struct
// its fields' encodings in order. With `normalize`, floating-point values are
// written as Spark groups them (every NaN as the canonical quiet NaN, -0.0 as
// 0.0), so equal keys give equal bytes.
//
// Thread safety: stateless functions.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "silt/columnar/builder.h"
#include "silt/columnar/column.h"

namespace silt::exec::internal {

// The formats are little-endian; the fixed-width helpers copy native bytes.
static_assert(std::endian::native == std::endian::little);

// True for the types the encoding covers: the primitives and structs of them.
bool EncodableType(const columnar::DataType& type);

// Appends the encoding of rows [0, rows) of `column` to out[0..rows), one
// loop per (nested) column. `active`, when not null, selects the rows to
// encode (1 = encode); the others are left untouched.
// REQUIRES: EncodableType(*column.type); out has `rows` strings.
void EncodeColumn(const columnar::Column& column, bool normalize, const uint8_t* active,
                  int64_t rows, std::string* out);

// Reads one value of `type` from the front of `*in` (advancing it) and appends
// it to `builder`. False when the bytes are truncated or malformed.
[[nodiscard]] bool DecodeValue(const columnar::DataType& type, std::string_view* in,
                               columnar::ColumnBuilder* builder);

// Reads one value of `type` from the front of `*in` (advancing it) and
// appends its normalized encoding to `out`. False when malformed.
[[nodiscard]] bool NormalizeValue(const columnar::DataType& type, std::string_view* in,
                                  std::string* out);

// Fixed-width little-endian helpers for the state formats.
template <typename T>
void PutFixed(std::string* out, T v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof(T));
}
template <typename T>
[[nodiscard]] bool GetFixed(std::string_view* in, T* v) {
  if (in->size() < sizeof(T)) return false;
  std::memcpy(v, in->data(), sizeof(T));
  in->remove_prefix(sizeof(T));
  return true;
}
inline void PutBytes(std::string* out, std::string_view bytes) {
  PutFixed<uint32_t>(out, static_cast<uint32_t>(bytes.size()));
  out->append(bytes);
}
[[nodiscard]] inline bool GetBytes(std::string_view* in, std::string_view* bytes) {
  uint32_t n = 0;
  if (!GetFixed(in, &n) || in->size() < n) return false;
  *bytes = in->substr(0, n);
  in->remove_prefix(n);
  return true;
}

}  // namespace silt::exec::internal
