// Random (version 4) UUIDs in canonical text form, for query ids, table ids
// and data-file names.
//
// Thread safety: safe from any thread.
#pragma once

#include <string>

namespace silt {

// "8f2c5b1e-0d9a-4c3b-9e5f-1a2b3c4d5e6f"
std::string NewUuid();

// True when `s` is a canonical 36-character UUID (hex digits and dashes).
bool IsUuid(const std::string& s);

}  // namespace silt
