// The Kafka consumer seam: what the stream module's Kafka source needs from a
// client, as an interface so that unit tests can run against a scripted
// double (silt/testing/scripted_consumer.h) and production against
// librdkafka (silt/kafka/rdkafka_consumer.h).
//
// The source, not the consumer group, owns positions (as in Spark): a batch
// assigns exact [from, until) offset ranges and polls until every range is
// exhausted. Messages are appended straight into columnar builders in Spark's
// Kafka record layout (RecordColumns), so no per-message objects are made
// beyond the client library's own.
//
// Errors carry topic/partition/offset in the message and set `retryable()`
// for transient broker conditions (timeouts, leader changes, transport).
//
// Thread safety: a Consumer is used by one thread at a time.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/builder.h"
#include "silt/columnar/column.h"

namespace silt::kafka {

struct TopicPartition {
  std::string topic;
  int32_t partition = 0;

  auto operator<=>(const TopicPartition&) const = default;
  // "topic-partition", as Kafka prints partitions.
  std::string ToString() const;
};

// Low = earliest offset still stored; high = the next offset to be written.
struct Watermarks {
  int64_t low = 0;
  int64_t high = 0;
};

// Offsets [from, until) of one partition.
struct OffsetRange {
  TopicPartition partition;
  int64_t from = 0;
  int64_t until = 0;
};

struct TopicInfo {
  std::string name;
  int32_t num_partitions = 0;
};

// Spark's Kafka record schema: key binary, value binary, topic string,
// partition int, offset long, timestamp timestamp, timestampType int, and
// with headers headers array<struct<key: string, value: binary>>. Every field
// nullable, as in Spark.
columnar::SchemaPtr RecordSchema(bool include_headers);

// Builders for one chunk of records in RecordSchema(include_headers) layout.
class RecordColumns {
 public:
  explicit RecordColumns(bool include_headers);

  bool include_headers() const { return include_headers_; }
  int64_t num_rows() const { return num_rows_; }
  // Key, value and header bytes appended since the last Finish. Readers stop
  // a chunk at kMaxChunkBytes so large records never overflow the int32
  // offsets of a string column.
  int64_t bytes() const { return bytes_; }
  static constexpr int64_t kMaxChunkBytes = int64_t{256} << 20;

  // Sizes the current chunk for `rows` more records whose keys, values and
  // topic names hold about `key_bytes`, `value_bytes` and `topic_bytes` in
  // all: one allocation per buffer instead of the builders' doubling (and
  // copying) as the chunk fills. A hint: more records than that still fit.
  // reserved() says whether the chunk was sized since the last Finish.
  void Reserve(int64_t rows, int64_t key_bytes, int64_t value_bytes, int64_t topic_bytes);
  bool reserved() const { return reserved_; }

  // One record. `key` nullopt = null key. `timestamp_ms` < 0 with
  // `timestamp_type` -1 means the record has no timestamp (null).
  // Headers, when included, follow through AddHeader and then EndHeaders, or
  // NoHeaders for a null headers value.
  void Append(std::optional<std::string_view> key, std::optional<std::string_view> value,
              std::string_view topic, int32_t partition, int64_t offset, int64_t timestamp_ms,
              int32_t timestamp_type) {
    if (key) {
      key_.AppendString(*key);
      bytes_ += static_cast<int64_t>(key->size());
    } else {
      key_.AppendNull();
    }
    if (value) {
      value_.AppendString(*value);
      bytes_ += static_cast<int64_t>(value->size());
    } else {
      value_.AppendNull();
    }
    topic_.AppendString(topic);
    partition_.Append<int32_t>(partition);
    offset_.Append<int64_t>(offset);
    if (timestamp_type < 0) {
      timestamp_.AppendNull();
    } else {
      timestamp_.Append<int64_t>(timestamp_ms * 1000);
    }
    timestamp_type_.Append<int32_t>(timestamp_type);
    ++num_rows_;
  }
  // REQUIRES: include_headers(); after Append, before the next Append.
  void AddHeader(std::string_view key, std::optional<std::string_view> value) {
    columnar::ColumnBuilder* entry = headers_->child(0);
    entry->child(0)->AppendString(key);
    bytes_ += static_cast<int64_t>(key.size());
    if (value) {
      entry->child(1)->AppendString(*value);
      bytes_ += static_cast<int64_t>(value->size());
    } else {
      entry->child(1)->AppendNull();
    }
    entry->AppendValid();
  }
  void EndHeaders() { headers_->CloseList(); }
  void NoHeaders() { headers_->AppendNull(); }

  // The rows appended so far as one batch; the builders start over empty.
  columnar::RecordBatchPtr Finish();

 private:
  bool include_headers_;
  columnar::SchemaPtr schema_;
  int64_t num_rows_ = 0;
  int64_t bytes_ = 0;
  bool reserved_ = false;
  columnar::ColumnBuilder key_;
  columnar::ColumnBuilder value_;
  columnar::ColumnBuilder topic_;
  columnar::ColumnBuilder partition_;
  columnar::ColumnBuilder offset_;
  columnar::ColumnBuilder timestamp_;
  columnar::ColumnBuilder timestamp_type_;
  std::unique_ptr<columnar::ColumnBuilder> headers_;
};

class Consumer {
 public:
  virtual ~Consumer() = default;

  // Every topic the cluster reports, with its partition count, sorted by
  // name. Errors: IOError (retryable when the cluster was unreachable).
  virtual Result<std::vector<TopicInfo>> ListTopics() = 0;

  // The low and high watermarks of `partition`. Errors: NotFound for an
  // unknown topic or partition; IOError (retryable when transient).
  virtual Result<Watermarks> QueryWatermarks(const TopicPartition& partition) = 0;

  // The earliest (low watermark) or the latest (high watermark) offset of
  // every partition in `partitions`, in one query: a query plans each batch
  // from the latest offsets of all its partitions and checks the earliest
  // ones before reading. The default asks QueryWatermarks for each
  // partition; librdkafka's consumer sends one ListOffsets request per
  // partition leader (QueryWatermarks sends two per partition, one round
  // trip each partition). Same errors as QueryWatermarks.
  enum class OffsetSpec { kEarliest, kLatest };
  virtual Result<std::map<TopicPartition, int64_t>> ListOffsets(
      const std::vector<TopicPartition>& partitions, OffsetSpec spec);

  // For each partition, the earliest offset whose record timestamp is >=
  // `timestamp_ms`, or nullopt when there is none (the timestamp is after the
  // newest record). Same errors as QueryWatermarks.
  virtual Result<std::vector<std::optional<int64_t>>> OffsetsForTimes(
      const std::vector<TopicPartition>& partitions, int64_t timestamp_ms) = 0;

  // Replaces the assignment by `ranges`; later Polls return exactly the
  // records with offsets in those ranges (a record at `until` or after is
  // dropped). Empty ranges are allowed and count as done at once.
  virtual Status Assign(const std::vector<OffsetRange>& ranges) = 0;

  // Appends at most `max_records` records of the assigned ranges to `out`
  // (fewer once out->bytes() reaches RecordColumns::kMaxChunkBytes),
  // waiting at most `timeout_ms` for the first one. Returns how many were
  // appended (0 when none arrived in time). Errors: OutOfRange-like data loss
  // is reported as NotFound naming topic, partition and offset when an
  // assigned offset no longer exists on the broker; IOError otherwise
  // (retryable when transient).
  virtual Result<int64_t> Poll(RecordColumns* out, int64_t max_records, int64_t timeout_ms) = 0;

  // True when every assigned range has been read to its end (records past a
  // range's last stored offset, e.g. transaction markers, count as read).
  virtual bool AssignmentDone() const = 0;

  // Commits `offsets` (the next offset to read, per partition) to the
  // consumer group the consumer was made with. Errors: InvalidArgument when
  // the consumer has no group; IOError (retryable when transient).
  virtual Status CommitOffsets(const std::map<TopicPartition, int64_t>& offsets) = 0;
};

}  // namespace silt::kafka
