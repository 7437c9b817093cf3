// EventHubsSource (format: eventhubs): the Azure Event Hubs Spark connector's
// (azure-event-hubs-spark) streaming source, spoken over Event Hubs' Kafka
// endpoint and built on KafkaSource.
//
// Options are the connector's: eventhubs.connectionString (the plain
// "Endpoint=sb://NS.servicebus.windows.net/;SharedAccessKeyName=..;
// SharedAccessKey=..;EntityPath=HUB"), eventhubs.consumerGroup (default
// $Default), eventhubs.startingPosition / eventhubs.startingPositions
// (EventPosition JSON {"offset":"-1"|"@latest"|"<n>","seqNo":n,
// "enqueuedTime":"..Z","isInclusive":b}; per-partition keys are the JSON of
// {"ehName":HUB,"partitionId":p}; default: end of stream), maxEventsPerTrigger
// (alias eventhubs.maxEventsPerTrigger; default partitionCount * 1000). The
// connector's tuning options (receiver timeouts, prefetch, thread pool,
// slow-partition adjustment, plugins, ending positions of batch queries)
// are accepted and ignored; AAD authentication is refused. kafka.* options
// go to the Kafka client, except those the connection string decides.
//
// The Kafka client connects to the Endpoint's host on port 9093 (or the port
// the Endpoint names: "sb://localhost:19093/", used by the tests) with
// SASL_SSL, mechanism PLAIN, user "$ConnectionString" and the connection
// string as password; the event hub (EntityPath) is the Kafka topic and
// eventhubs.consumerGroup the Kafka group.
//
// Records have the connector's schema: body binary, partition string, offset
// string, sequenceNumber long, enqueuedTime timestamp, publisher string,
// partitionKey string, properties map<string,string>, systemProperties
// map<string,string>. From a Kafka record: body = value, partition = the
// partition number as text, sequenceNumber = the Kafka offset and offset =
// the same number as text (the Kafka endpoint numbers records by sequence
// number; a real namespace's AMQP offset is a byte position, which Kafka does
// not expose), enqueuedTime = the record timestamp, publisher = null,
// partitionKey = the key as text, properties = the headers (a repeated header
// keeps its last value), systemProperties = {"x-opt-kafka-key": the key's
// bytes as a JSON array of signed bytes} when there is a key, as the
// connector shows events published over Kafka.
//
// Offsets are the connector's: {"HUB":{"0":seqNo,...}} (the next sequence
// number per partition) in offsets/N, and the initial positions in
// sources/<i>/0 as a NUL byte, "v1\n" and that JSON; both are also exactly
// what KafkaSource writes for topic HUB. Data loss (events aged out before
// they were read) is logged and skipped, as the connector does.
//
// Thread safety: one query thread.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "silt/kafka/consumer.h"
#include "silt/stream/source/kafka_source.h"
#include "silt/stream/source/source.h"

namespace silt::stream {

// The parts of an Event Hubs connection string silt uses.
struct EventHubsConnection {
  std::string host;  // "NS.servicebus.windows.net"
  int port = 9093;   // the Kafka endpoint's port unless the Endpoint names one
  std::string entity_path;
  std::string key_name;  // SharedAccessKeyName ("" with a SharedAccessSignature)

  // Parses "Endpoint=sb://HOST[:PORT]/;SharedAccessKeyName=..;
  // SharedAccessKey=..;EntityPath=.." (keys case-insensitive, any order; a
  // SharedAccessSignature may replace the key pair). Errors: InvalidArgument
  // naming `where` and the missing or bad part, never the key.
  static Result<EventHubsConnection> Parse(std::string_view text, std::string_view where);
};

// One EventPosition of the connector.
struct EventHubsPosition {
  std::optional<std::string> offset;  // "-1" start, "@latest" end, or a number
  int64_t seq_no = -1;
  std::optional<int64_t> enqueued_time_micros;
  bool inclusive = true;

  // Parses the connector's EventPosition JSON. Errors: InvalidArgument
  // naming `where`.
  static Result<EventHubsPosition> FromJson(std::string_view json, std::string_view where);
};

struct EventHubsSourceOptions {
  EventHubsConnection connection;
  std::optional<EventHubsPosition> starting_position;
  std::map<int32_t, EventHubsPosition> starting_positions;  // of this event hub
  KafkaSourceOptions kafka;                                 // what KafkaSource runs
  std::string key_path;                                     // "source.options"

  // Errors: InvalidArgument naming the job-file key.
  static Result<EventHubsSourceOptions> FromSpec(const SourceSpec& spec);
};

// The connector's record schema.
columnar::SchemaPtr EventHubsRecordSchema();

// A chunk of Kafka records (kafka::RecordSchema(true)) in the connector's
// schema.
Result<columnar::RecordBatchPtr> KafkaToEventHubsRecords(const columnar::RecordBatch& kafka,
                                                         const columnar::SchemaPtr& schema);

// The starting sequence number of `partition` for `position` on the Kafka
// endpoint (sequence number = Kafka offset). seqNo as given (the connector
// ignores isInclusive for it); offset "-1" = the earliest, "@latest" = the
// next to be written, a number n = n (n + 1 when not inclusive);
// enqueuedTime = the first event enqueued strictly after it (Event Hubs'
// filter), or the end when there is none.
Result<int64_t> ResolveEventHubsPosition(const EventHubsPosition& position,
                                         kafka::Consumer* consumer,
                                         const kafka::TopicPartition& partition);

class EventHubsSource final : public Source {
 public:
  static Result<std::unique_ptr<EventHubsSource>> Make(EventHubsSourceOptions options,
                                                       const SourceContext& context,
                                                       std::unique_ptr<kafka::Consumer> consumer);
  ~EventHubsSource() override;

  const columnar::SchemaPtr& schema() const override { return schema_; }
  std::string Description() const override;
  Status Restore(const std::optional<std::string>& last_planned) override;
  Status PrepareForAvailableNow() override;
  Result<std::optional<std::string>> LatestOffset(const std::optional<std::string>& start,
                                                  const ReadLimit& limit) override;
  std::string ReportLatestOffset() const override { return kafka_->ReportLatestOffset(); }
  Result<std::unique_ptr<BatchReader>> GetBatch(const std::optional<std::string>& start,
                                                const std::string& end) override;
  void OnBatchCommitted(const std::string& end_offset_json) override {
    kafka_->OnBatchCommitted(end_offset_json);
  }
  std::string DescribeRow(const columnar::RecordBatch& chunk, int64_t row) const override;

 private:
  EventHubsSource(std::string where, std::unique_ptr<KafkaSource> kafka);

  // "Event Hubs source (namespace NS, event hub HUB): <status>", with a hint
  // at the connection string for authentication failures.
  Status Explain(const Status& status) const;

  std::string where_;
  std::string hub_;
  std::string key_path_;
  std::unique_ptr<KafkaSource> kafka_;
  columnar::SchemaPtr schema_;
};

}  // namespace silt::stream
