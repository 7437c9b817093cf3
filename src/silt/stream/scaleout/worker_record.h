// What a scale-out job keeps under its checkpointLocation
// (docs/format/scale-out.md): no offsets or commits (the Delta table's txn
// actions hold the offsets), only
//
//   <checkpoint>/scaleout.json            the job's group, table and appId
//   <checkpoint>/workers/<workerId>.json   each worker's status record: the
//                                          partitions it owns and their
//                                          offsets, rewritten on every
//                                          change of ownership and at least
//                                          every kRecordIntervalMicros
//
// plus the naming of the table's txn appIds per topic-partition, shared by
// the worker (stream/scaleout/worker.h) and the CLI that shows them.
//
// Thread safety: plain functions and values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "silt/base/json_writer.h"
#include "silt/base/result.h"
#include "silt/delta/table.h"
#include "silt/fs/file_system.h"
#include "silt/kafka/consumer.h"

namespace silt::stream {

// How often a running worker rewrites its record at the least; a record
// older than kStaleRecordMicros belongs to a worker that is gone (killed,
// or its machine lost).
constexpr int64_t kRecordIntervalMicros = 10'000'000;
constexpr int64_t kStaleRecordMicros = 3 * kRecordIntervalMicros;

// The txn appId of one topic-partition: "<app_id>:<topic>:<partition>".
// (Kafka topic names cannot contain ':', so the parts split back
// unambiguously from the right.)
std::string PartitionAppId(std::string_view app_id, const kafka::TopicPartition& tp);
// The topic-partition of a txn appId written by PartitionAppId for
// `app_id`; nullopt for any other appId.
std::optional<kafka::TopicPartition> ParsePartitionAppId(std::string_view app_id,
                                                         std::string_view txn_app_id);

// A topic-partition's offset as the table records it.
struct TablePartitionOffset {
  kafka::TopicPartition partition;
  int64_t next_offset = 0;            // txn.version
  std::optional<int64_t> updated_ms;  // txn.lastUpdated
};
// Every partition of `app_id` the snapshot records, sorted.
std::vector<TablePartitionOffset> TablePartitionOffsets(const delta::Snapshot& snapshot,
                                                        std::string_view app_id);

struct ScaleOutInfo {
  std::string app_id;
  std::string group_id;
  std::string table;
  std::string subscription;  // "subscribe: a,b" or "subscribePattern: x.*"
};

struct WorkerRecord {
  std::string worker_id;
  std::string host;
  int64_t pid = 0;
  std::string member_id;  // the Kafka group's name for the member
  std::string run_id;
  int64_t started_ms = 0;
  int64_t updated_ms = 0;
  // "running", or "stopped" (written on a clean stop)
  std::string state = "running";
  struct Partition {
    kafka::TopicPartition partition;
    std::optional<int64_t> next_offset;  // in the table; nullopt: none yet
  };
  std::vector<Partition> partitions;
  int64_t batches = 0;    // committed by this run
  int64_t rows = 0;       // written by this run
  int64_t discarded = 0;  // batches this run discarded (revoked, overtaken)
};

std::string ScaleOutInfoPath(const std::string& checkpoint);
std::string WorkersDir(const std::string& checkpoint);

std::string ScaleOutInfoToJson(const ScaleOutInfo& info);
// Errors: Corruption naming `where`.
Result<ScaleOutInfo> ScaleOutInfoFromJson(std::string_view json, std::string_view where);
std::string WorkerRecordToJson(const WorkerRecord& record);
// The record's "partitions" array, as WorkerRecordToJson writes it (also
// used by `silt checkpoint --format json`).
void WritePartitionsJson(const std::vector<WorkerRecord::Partition>& partitions, JsonWriter* w);
Result<WorkerRecord> WorkerRecordFromJson(std::string_view json, std::string_view where);

// The record's file name: the worker id with '/' and other characters that
// paths do not take replaced by '_', then ".json".
std::string WorkerRecordFileName(std::string_view worker_id);

// Every record under <checkpoint>/workers, sorted by worker id; records
// that cannot be read are skipped with a warning (a record is a status
// report, never needed for correctness).
Result<std::vector<WorkerRecord>> ReadWorkerRecords(fs::FileSystem* fs,
                                                    const std::string& checkpoint);

}  // namespace silt::stream
