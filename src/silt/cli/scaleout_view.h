// What `silt checkpoint` and `silt describe` show of a scale-out job
// (docs/scale-out.md): which worker holds which Kafka partitions and each
// partition's offset as the table's txn actions record it.
//
// Thread safety: plain functions.
#pragma once

#include <optional>
#include <string>

#include "silt/base/result.h"
#include "silt/delta/table.h"

namespace silt::cli {

// The checkpoint directory of a scale-out job (one with scaleout.json):
// the job's group, appId and table, the workers' records (partitions,
// offsets, last update; live or gone) and the table's offset per
// partition with its owner. nullopt when `dir` is no scale-out checkpoint.
// `format`: "text" or "json".
Result<std::optional<std::string>> ScaleOutCheckpointView(const std::string& dir,
                                                          const std::string& format);

// For `silt describe`: the table's txn actions, with those of scale-out
// workers ("<appId>:<topic>:<partition>") grouped per appId as Kafka
// offsets, each with the worker that committed it last (commitInfo's
// siltWorker, looked up in the newest commits). Text lines, or a JSON
// array value for the "streamingOffsets" member.
Result<std::string> TxnView(delta::DeltaTable* table, const delta::Snapshot& snapshot,
                            const std::string& format);

}  // namespace silt::cli
