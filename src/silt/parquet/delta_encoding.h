// Parquet's DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY
// and BYTE_STREAM_SPLIT encodings (Encodings.md), both directions.
//
// Decoders bound every read by the input size and report malformed input as
// Corruption (the caller adds the column); they never allocate from counts
// in the input beyond the `n` values the caller asked for. Encoders write
// what parquet-mr and Arrow C++ write: 128-value blocks of four 32-value
// miniblocks, deltas in the value type's wrapping arithmetic.
//
// Thread safety: stateless functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "silt/base/status.h"

namespace silt::parquet {

// Decodes the first `n` values of a DELTA_BINARY_PACKED stream of int32_t
// or int64_t. `*consumed` receives the bytes read (the end of the last
// miniblock used), where a DELTA_LENGTH_BYTE_ARRAY's data begins.
template <typename T>
Status DeltaBinaryPackedDecode(const uint8_t* data, int64_t size, int64_t n, T* out,
                               int64_t* consumed);
template <typename T>
void DeltaBinaryPackedEncode(const T* values, int64_t n, std::string* out);

// DELTA_LENGTH_BYTE_ARRAY: `n` views into `data`.
Status DeltaLengthByteArrayDecode(const uint8_t* data, int64_t size, int64_t n,
                                  std::string_view* views, std::vector<int32_t>* scratch);
void DeltaLengthByteArrayEncode(const std::string_view* values, int64_t n, std::string* out);

// DELTA_BYTE_ARRAY (incremental prefixes): the values are rebuilt into
// `*storage` and `views` point into it.
Status DeltaByteArrayDecode(const uint8_t* data, int64_t size, int64_t n, std::string_view* views,
                            std::string* storage, std::vector<int32_t>* scratch);
void DeltaByteArrayEncode(const std::string_view* values, int64_t n, std::string* out);

// BYTE_STREAM_SPLIT of `n` values of `width` bytes: byte b of value i lives
// at data[b * n + i].
Status ByteStreamSplitDecode(const uint8_t* data, int64_t size, int64_t n, int width, uint8_t* out);
void ByteStreamSplitEncode(const uint8_t* values, int64_t n, int width, std::string* out);

}  // namespace silt::parquet
