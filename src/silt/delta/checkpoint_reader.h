// Reading Delta checkpoint files (PROTOCOL.md "Checkpoints"): classic
// single-file and multi-part Parquet checkpoints, V2 checkpoints with a JSON
// or Parquet top-level file, and the Parquet sidecar files a V2 checkpoint
// names.
//
// A checkpoint Parquet file has one nullable struct column per action kind
// (add, remove, metaData, protocol, txn, domainMetadata, sidecar,
// checkpointMetadata), with nested maps (partitionValues, configuration,
// tags) and lists (partitionColumns, readerFeatures). The leaf column chunks
// it needs are read with parquet::PageReader (page_reader.h: headers,
// decompression, level sections), one page per column at a time, and their
// levels and PLAIN / dictionary values are walked row by row: no column of a
// whole chunk is built. Rows of the add and remove columns (nearly all
// rows) are assembled straight into AddFile / RemoveFile, with the same
// rules as ParseCommit; the few other rows are assembled back into their
// JSON lines and go through ParseCommit. Fields snapshot reconstruction
// does not use (add.stats_parsed, add.partitionValues_parsed, baseRowId,
// ...) are not read. Memory: the actions plus about one page per column.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "silt/base/result.h"
#include "silt/delta/actions.h"
#include "silt/fs/file_system.h"

namespace silt::delta {

// Reads the actions of one Parquet checkpoint file (a classic checkpoint, one
// part of a multi-part checkpoint, a V2 top-level file or a sidecar).
// raw_lines holds the JSON lines of the actions other than add and remove.
// Errors: Corruption naming the file, row group and column for malformed
// Parquet or rows; NotSupported naming the column for Parquet encodings silt
// does not decode; NotFound / IOError from the file system.
Result<CommitActions> ReadParquetCheckpoint(fs::FileSystem* fs, const std::string& path);

// The `sidecar.path` of every sidecar action among `actions` (V2
// checkpoints), in file order; relative paths are relative to
// `_delta_log/_sidecars/`. Errors: Corruption naming `source` when a sidecar
// action has no path.
Result<std::vector<std::string>> SidecarPaths(const CommitActions& actions,
                                              std::string_view source);

}  // namespace silt::delta
