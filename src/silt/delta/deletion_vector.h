// Loading deletion vectors (PROTOCOL.md "Deletion Vectors" and "Deletion
// Vector Format"): Z85-decoded inline bitmaps and `deletion_vector_<uuid>.bin`
// files, both holding a RoaringBitmapArray (64-bit roaring bitmaps in the
// portable serialization), turned into the sorted row indices a scan drops.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "silt/base/result.h"
#include "silt/delta/actions.h"
#include "silt/fs/file_system.h"

namespace silt::delta {

// Decodes Z85 text (ZeroMQ RFC 32; length a multiple of 5) to bytes.
// Errors: Corruption for a bad length or character.
Result<std::string> DecodeZ85(std::string_view text);

// Parses a serialized RoaringBitmapArray (magic 1681511377 first) into
// sorted row indices. Errors: Corruption describing the malformed bytes.
Result<std::vector<uint64_t>> ParseRoaringBitmapArray(std::string_view bytes);

// The file an on-disk deletion vector lives in (storage type "u": a
// `deletion_vector_<uuid>.bin` under the table, with the id's prefix as a
// directory; "p": an absolute or table-relative path). Errors: Corruption
// for a malformed id; NotSupported for an inline ("i") or unknown storage
// type.
Result<std::string> DeletionVectorFilePath(const std::string& table_path,
                                           const DeletionVectorDescriptor& dv);

// The deleted row indices of `dv` (of a data file in the table at
// `table_path`), sorted ascending. Errors: Corruption naming the deletion
// vector file or the inline vector when malformed; NotSupported for an
// unknown storage type; NotFound / IOError.
Result<std::vector<uint64_t>> LoadDeletionVector(fs::FileSystem* fs, const std::string& table_path,
                                                 const DeletionVectorDescriptor& dv);

}  // namespace silt::delta
