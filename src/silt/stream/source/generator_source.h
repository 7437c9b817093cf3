// GeneratorSource (format: generator): a built-in source of the seed's
// sensor events, shaped exactly like Spark's Kafka source records so that a
// job written for Kafka runs unchanged against it (demos, benchmarks, crash
// tests).
//
// Records: key = device id bytes, value = the producer's JSON envelope
//   {"device_id":"smart-plug-01","device_type":"smart_plug",
//    "ingested_at":"2026-06-22T08:00:00.123Z","payload":"{\"power\":84.3,...}"}
// (payload is a JSON *string*), topic, partition = Kafka's murmur2 hash of the
// key modulo numPartitions, offset = position within that partition,
// timestamp = event time (CreateTime, timestampType 0).
//
// Event model: time advances in blocks of 100 s. In every block each smart
// plug reports once per 10 s (10 rows, device_type "smart_plug", payload
// power/voltage/current/energy/state/linkquality) and each door sensor once
// at a random instant (device_type "door_window", payload
// contact/battery/linkquality), so doors send ~1 message per 10 plug
// messages. Rows are ordered by event time within a block. Every row is a
// pure function of (options, global row index): re-reading a range always
// yields identical rows, which exactly-once re-runs rely on.
//
// Offsets are Kafka's JSON {"<topic>":{"0":n0,"1":n1,...}} where n_p counts
// the rows with a global index below the batch end that went to partition p;
// the global index is the sum of the n_p.
//
// Thread safety: one query thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "silt/stream/source/source.h"

namespace silt::stream {

// Spark's Kafka source record schema (key, value, topic, partition, offset,
// timestamp, timestampType), every field nullable as in Spark.
columnar::SchemaPtr KafkaRecordSchema();

struct GeneratorOptions {
  double rows_per_second = 0;  // wall-clock cap; 0 = unlimited
  int64_t num_devices = 2;     // (n+1)/2 smart plugs and n/2 door sensors
  int64_t seed = 42;
  std::optional<int64_t> total_rows;  // unbounded when absent
  int64_t start_timestamp_micros = 0;
  std::string topic = "sensor-events";
  int64_t num_partitions = 3;
  int64_t max_offsets_per_trigger = 10000;

  // Reads the generator options of `spec` (rowsPerSecond, numDevices, seed,
  // totalRows, startTimestamp, topic, numPartitions, maxOffsetsPerTrigger).
  // Errors: InvalidArgument naming the key, for unknown options too.
  static Result<GeneratorOptions> FromSpec(const SourceSpec& spec);
};

class GeneratorSource final : public Source {
 public:
  static Result<std::unique_ptr<GeneratorSource>> Make(GeneratorOptions options, Clock* clock);

  const columnar::SchemaPtr& schema() const override { return schema_; }
  std::string Description() const override;
  Status Restore(const std::optional<std::string>& last_planned) override;
  Status PrepareForAvailableNow() override;
  Result<std::optional<std::string>> LatestOffset(const std::optional<std::string>& start,
                                                  const ReadLimit& limit) override;
  std::string ReportLatestOffset() const override;
  Result<std::unique_ptr<BatchReader>> GetBatch(const std::optional<std::string>& start,
                                                const std::string& end) override;

  // Rows with global index in [begin, end), as one batch.
  columnar::RecordBatchPtr GenerateRows(int64_t begin, int64_t end) const;
  // The offset JSON of the position before global row `index`.
  std::string OffsetJson(int64_t index) const;
  // The global row index of an offset JSON. Errors: InvalidArgument when the
  // offset names another topic or partition count, or is not a position of
  // this generator's sequence.
  Result<int64_t> ParseOffset(std::string_view json) const;

  const GeneratorOptions& options() const { return options_; }

 private:
  struct Event {
    int64_t time_ms;
    int32_t device;
    int32_t tick;  // 0..9 for plugs, 0 for doors
  };
  GeneratorSource(GeneratorOptions options, Clock* clock);
  // The events of one block in row order (reuses `out`'s capacity).
  void BlockEvents(int64_t block, std::vector<Event>* out) const;
  // Rows per partition among the global rows [0, index).
  std::vector<int64_t> PartitionCounts(int64_t index) const;
  // Rows available now under the rate and total caps; INT64_MAX when
  // unbounded.
  int64_t Available() const;

  GeneratorOptions options_;
  Clock* clock_;
  columnar::SchemaPtr schema_;
  int32_t num_plugs_ = 0;
  int32_t num_doors_ = 0;
  int64_t rows_per_block_ = 0;
  std::vector<std::string> device_ids_;
  std::vector<int32_t> device_partition_;
  std::vector<int64_t> block_partition_counts_;
  int64_t restored_index_ = 0;
  int64_t restored_at_micros_ = 0;
  std::optional<int64_t> available_now_end_;
};

}  // namespace silt::stream
