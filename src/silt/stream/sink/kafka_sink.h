// KafkaSink (format: kafka): writes each micro-batch's rows as Kafka records,
// as Spark's Kafka sink does (kafka-0-10-sql KafkaWriter).
//
// Columns of the query's output, by name (case-insensitive), as in Spark:
//   topic     string, the record's topic; the `topic` option, when set, wins
//             (a null topic with no option is an error naming the row)
//   key       string or binary, optional (null = no key)
//   value     string or binary, required (null = a tombstone)
//   headers   array<struct<key: string, value: binary>>, optional
//   partition int, optional (null or absent: the partitioner chooses, with
//             Java's murmur2 hashing of the key so keyed records land where
//             Java producers put them)
// Other columns are ignored. Options: `topic`; every `kafka.*` option goes to
// the librdkafka producer without the prefix (kafka.bootstrap.servers is
// required; key.serializer / value.serializer are rejected as in Spark).
// Every outputMode (append, complete, update) is accepted, as Spark's Kafka
// sink accepts them: the batch's rows are sent either way.
//
// Delivery is at least once, as in Spark: the producer is idempotent
// (enable.idempotence=true, so its own retries neither duplicate nor reorder
// records), and Commit returns only when every record of the batch is
// acknowledged (flushed), before the query writes commits/N. A crash after
// some records were delivered but before commits/N re-runs the batch with the
// same offsets, so those records are sent again; consumers that need exactly
// once deduplicate (e.g. by key and source offset).
//
// Thread safety: one query thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/kafka/producer.h"
#include "silt/stream/job.h"
#include "silt/stream/sink/sink.h"

namespace silt::stream {

class KafkaSink final : public Sink {
 public:
  // Validates the options and the output schema's topic/key/value/headers/
  // partition columns, and creates the producer (connecting lazily).
  // Errors: InvalidArgument naming the job-file key or column.
  static Result<std::unique_ptr<KafkaSink>> Make(const SinkSpec& spec,
                                                 columnar::SchemaPtr output_schema);
  ~KafkaSink() override;

  // "KafkaSink[topic]" ("KafkaSink[<topic column>]" without the option).
  std::string Description() const override;
  // Where records go, for messages: "kafka topic <t>" or "kafka topics from
  // column topic".
  const std::string& target() const override { return target_; }

  // Always true: Kafka has no record of earlier batches to skip by.
  Result<bool> Begin(int64_t batch_id) override;
  // Queues the rows as records. Errors: IOError naming topic and row for a
  // record the producer refuses (too large, unknown topic, ...);
  // InvalidArgument for a null topic.
  Status Write(const columnar::RecordBatch& batch) override;
  // Waits until every record of the batch is acknowledged. Errors: IOError
  // with the first delivery error.
  Result<SinkBatchResult> Commit() override;
  // Nothing to undo: records already delivered stay (at least once).
  void Abort() override;

 private:
  KafkaSink() = default;

  std::optional<std::string> topic_;
  std::string target_;
  std::string servers_;
  int topic_index_ = -1;
  int key_index_ = -1;
  int value_index_ = -1;
  int headers_index_ = -1;
  int partition_index_ = -1;
  int64_t flush_timeout_ms_ = 0;
  std::unique_ptr<kafka::Producer> producer_;
  int64_t batch_id_ = -1;
  int64_t rows_ = 0;
};

}  // namespace silt::stream
