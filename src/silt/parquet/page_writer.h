// Page assembly for the column writers: one Parquet page as it goes into a
// column chunk, the Thrift page header, then the levels a data page v2
// keeps uncompressed, then the compressed body. A writer builds a page's
// parts in its own buffers (levels, dictionary indices or PLAIN values);
// AppendPage compresses them in place where the codec reads pieces
// (snappy) and copies the compressed bytes once, after the header.
//
// Thread safety: stateless; the compressor is the caller's (one per
// column writer).
#pragma once

#include <string>
#include <string_view>

#include "silt/base/status.h"
#include "silt/parquet/compression.h"
#include "silt/parquet/parquet_metadata.h"

namespace silt::parquet {

struct PageParts {
  // Data page v2: the repetition then definition levels, stored
  // uncompressed between the header and the body. Empty otherwise.
  std::string_view v2_levels;
  // The body is `body_prefix` followed by `body`, compressed as one: for a
  // data page v1 the prefix holds its levels (each run behind its 4-byte
  // length), the body its values.
  std::string_view body_prefix;
  std::string_view body;
};

// Compresses the page's body, fills `header`'s uncompressed and compressed
// sizes (and its crc over levels and compressed body when `checksum`), and
// appends the header, the v2 levels and the compressed body to `out`.
// Errors: Internal naming `column` for a body over Parquet's 2 GiB page
// limit or a failing compression library.
Status AppendPage(const PageParts& parts, Compressor* compressor, bool checksum,
                  std::string_view column, PageHeader* header, std::string* out);

}  // namespace silt::parquet
