// Page-cache hints for the files of a FileSystem.
//
// Thread safety: safe from any thread.
#pragma once

#include <string>

#include "silt/fs/file_system.h"

namespace silt::fs {

// A hint that this process will not read `path` again: on the local file
// system, asks the kernel to drop the file's cached pages
// (POSIX_FADV_DONTNEED; dirty pages stay until written back), so that a
// writer that keeps writing large files (a table's checkpoints) does not
// fill the machine's memory with them. Elsewhere (S3, memory) nothing. The
// file stays readable. Errors are ignored: it is only a hint.
void DropCachedPages(FileSystem* fs, const std::string& path);

}  // namespace silt::fs
