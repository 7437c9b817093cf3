#include "silt/parquet/page_writer.h"

#include <zlib.h>

#include <cstdint>
#include <limits>

#include "silt/parquet/thrift_compact.h"

namespace silt::parquet {

Status AppendPage(const PageParts& parts, Compressor* compressor, bool checksum,
                  std::string_view column, PageHeader* header, std::string* out) {
  const size_t body_size = parts.body_prefix.size() + parts.body.size();
  if (body_size > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    return Status::Internal("column '", column, "': page of ", body_size,
                            " bytes exceeds Parquet's 2 GiB page limit");
  }
  SILT_ASSIGN_OR_RETURN_CTX(std::string_view compressed,
                            compressor->CompressPieces(parts.body_prefix, parts.body),
                            "compressing a page of column '", column, "'");
  const std::string_view levels = parts.v2_levels;
  header->uncompressed_page_size = static_cast<int32_t>(levels.size() + body_size);
  header->compressed_page_size = static_cast<int32_t>(levels.size() + compressed.size());
  if (checksum) {
    uLong crc =
        crc32(0L, reinterpret_cast<const Bytef*>(levels.data()), static_cast<uInt>(levels.size()));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(compressed.data()),
                static_cast<uInt>(compressed.size()));
    header->crc = static_cast<int32_t>(static_cast<uint32_t>(crc));
  }
  thrift::CompactWriter w(out);
  header->Write(&w);
  out->append(levels);
  out->append(compressed);
  return Status::OK();
}

}  // namespace silt::parquet
