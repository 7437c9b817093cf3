#include "silt/stream/source/eventhubs_source.h"

#include <charconv>
#include <limits>

#include "silt/base/logging.h"
#include "silt/base/strings.h"
#include "silt/columnar/builder.h"
#include "silt/columnar/temporal.h"
#include "silt/stream/json_internal.h"
#include "silt/stream/options_internal.h"

namespace silt::stream {

namespace {

constexpr std::string_view kStartOfStream = "-1";
constexpr std::string_view kEndOfStream = "@latest";
// The connector's default maxEventsPerTrigger is partitionCount * this.
constexpr int64_t kDefaultEventsPerPartition = 1000;

// Adds where the error came from, and for a refused login what to check:
// librdkafka reports it as a SASL authentication failure of a broker.
Status ExplainError(const Status& status, const std::string& where, const std::string& key_path) {
  if (status.ok()) return status;
  const std::string lower = AsciiLower(status.message());
  if (lower.find("authenticat") != std::string::npos || lower.find("sasl") != std::string::npos) {
    return status.WithContextParts(where,
                                   ": the namespace refused the login (check "
                                   "SharedAccessKeyName and SharedAccessKey in ",
                                   key_path, ".eventhubs.connectionString)");
  }
  // librdkafka reports a refused SASL login in its log, while the request
  // that failed only sees the broker connection go down.
  if (lower.find("transport") != std::string::npos ||
      lower.find("timed out") != std::string::npos) {
    return status.WithContextParts(
        where,
        ": could not connect to or log in to the namespace's Kafka endpoint (check the "
        "Endpoint, SharedAccessKeyName and SharedAccessKey in ",
        key_path, ".eventhubs.connectionString; the Kafka client's log above names the cause)");
  }
  return status.WithContext(where);
}

void AppendNumber(columnar::ColumnBuilder* builder, int64_t v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  (void)ec;
  builder->AppendString(std::string_view(buf, static_cast<size_t>(end - buf)));
}

class EventHubsBatchReader final : public BatchReader {
 public:
  EventHubsBatchReader(std::unique_ptr<BatchReader> kafka, columnar::SchemaPtr schema,
                       std::string where, std::string key_path)
      : kafka_(std::move(kafka)),
        schema_(std::move(schema)),
        where_(std::move(where)),
        key_path_(std::move(key_path)) {}

  Result<columnar::RecordBatchPtr> Next() override {
    Result<columnar::RecordBatchPtr> chunk = kafka_->Next();
    if (!chunk.ok()) return ExplainError(chunk.status(), where_, key_path_);
    if (*chunk == nullptr) return columnar::RecordBatchPtr();
    return KafkaToEventHubsRecords(**chunk, schema_);
  }

 private:
  std::unique_ptr<BatchReader> kafka_;
  columnar::SchemaPtr schema_;
  std::string where_;
  std::string key_path_;
};

}  // namespace

Result<EventHubsConnection> EventHubsConnection::Parse(std::string_view text,
                                                       std::string_view where) {
  std::optional<std::string> endpoint, entity, key_name, key, signature;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t semi = text.find(';', pos);
    if (semi == std::string_view::npos) semi = text.size();
    std::string_view part = TrimAscii(text.substr(pos, semi - pos));
    pos = semi + 1;
    if (part.empty()) continue;
    const size_t eq = part.find('=');
    if (eq == std::string_view::npos) {
      return Status::InvalidArgument(
          where,
          ": a connection string part has no '=' (expected Key=Value pairs separated by ';')");
    }
    std::string name = AsciiLower(TrimAscii(part.substr(0, eq)));
    std::string value(TrimAscii(part.substr(eq + 1)));
    if (name == "endpoint") endpoint = value;
    if (name == "entitypath") entity = value;
    if (name == "sharedaccesskeyname") key_name = value;
    if (name == "sharedaccesskey") key = value;
    if (name == "sharedaccesssignature") signature = value;
  }
  if (!endpoint) {
    // The connector's PySpark guide has users pass
    // EventHubsUtils.encrypt(connectionString), an AES text with no '='
    // pairs in it.
    return Status::InvalidArgument(
        where,
        ": no Endpoint in the connection string (silt takes the plain connection string "
        "\"Endpoint=sb://NAMESPACE.servicebus.windows.net/;SharedAccessKeyName=...;"
        "SharedAccessKey=...;EntityPath=EVENTHUB\", not the output of "
        "EventHubsUtils.encrypt)");
  }
  EventHubsConnection out;
  std::string_view uri = *endpoint;
  const size_t scheme = uri.find("://");
  if (scheme == std::string_view::npos || !EqualsIgnoreCase(uri.substr(0, scheme), "sb")) {
    return Status::InvalidArgument(
        where, ": Endpoint '", uri,
        "' must start with sb:// (sb://NAMESPACE.servicebus.windows.net/)");
  }
  uri.remove_prefix(scheme + 3);
  std::string_view authority = uri.substr(0, uri.find('/'));
  const size_t colon = authority.rfind(':');
  if (colon != std::string_view::npos) {
    int port = 0;
    std::string_view digits = authority.substr(colon + 1);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
    if (ec != std::errc() || end != digits.data() + digits.size() || port <= 0 || port > 65535) {
      return Status::InvalidArgument(where, ": Endpoint '", *endpoint, "' has a bad port");
    }
    out.port = port;
    authority = authority.substr(0, colon);
  }
  if (authority.empty()) {
    return Status::InvalidArgument(where, ": Endpoint '", *endpoint, "' names no host");
  }
  out.host = std::string(authority);
  if (!entity || entity->empty()) {
    return Status::InvalidArgument(
        where,
        ": no EntityPath in the connection string. The EntityPath is the event hub's name: "
        "\"Endpoint=sb://NAMESPACE.servicebus.windows.net/;SharedAccessKeyName=KEY_NAME;"
        "SharedAccessKey=KEY;EntityPath=EVENTHUB\"");
  }
  out.entity_path = *entity;
  if (!signature && (!key_name || !key || key_name->empty() || key->empty())) {
    return Status::InvalidArgument(where,
                                   ": the connection string needs SharedAccessKeyName and "
                                   "SharedAccessKey (or a SharedAccessSignature)");
  }
  out.key_name = key_name.value_or("");
  return out;
}

Result<EventHubsPosition> EventHubsPosition::FromJson(std::string_view json,
                                                      std::string_view where) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  simdjson::dom::object object;
  constexpr std::string_view kExample =
      "{\"offset\":\"-1\",\"seqNo\":-1,\"enqueuedTime\":null,\"isInclusive\":true}";
  if (parser.parse(json.data(), json.size(), true).get(root) || root.get_object().get(object)) {
    return Status::InvalidArgument(where, ": expected an EventPosition like ", kExample, ", got '",
                                   json.substr(0, 200), "'");
  }
  EventHubsPosition out;
  for (auto field : object) {
    std::string_view key = field.key;
    if (key == "offset") {
      if (field.value.is_null()) continue;
      std::string_view offset;
      int64_t number = 0;
      if (!field.value.get_string().get(offset)) {
        out.offset = std::string(offset);
      } else if (!field.value.get_int64().get(number)) {
        out.offset = std::to_string(number);
      } else {
        return Status::InvalidArgument(where,
                                       ".offset: expected a string (\"-1\", \"@latest\" "
                                       "or a number) or null");
      }
      if (*out.offset != kStartOfStream && *out.offset != kEndOfStream) {
        int64_t n = 0;
        auto [end, ec] =
            std::from_chars(out.offset->data(), out.offset->data() + out.offset->size(), n);
        if (ec != std::errc() || end != out.offset->data() + out.offset->size() || n < 0) {
          return Status::InvalidArgument(where,
                                         ".offset: expected \"-1\", \"@latest\" or a "
                                         "non-negative number, got '",
                                         *out.offset, "'");
        }
      }
    } else if (key == "seqNo") {
      if (field.value.get_int64().get(out.seq_no)) {
        return Status::InvalidArgument(where, ".seqNo: expected a number (-1 = not in use)");
      }
    } else if (key == "enqueuedTime") {
      if (field.value.is_null()) continue;
      std::string_view text;
      std::optional<int64_t> micros;
      if (!field.value.get_string().get(text)) micros = columnar::ParseTimestamp(text);
      if (!micros) {
        return Status::InvalidArgument(where,
                                       ".enqueuedTime: expected a UTC time like "
                                       "\"2024-05-01T12:00:00.000Z\" or null");
      }
      out.enqueued_time_micros = micros;
    } else if (key == "isInclusive") {
      if (field.value.get_bool().get(out.inclusive)) {
        return Status::InvalidArgument(where, ".isInclusive: expected true or false");
      }
    } else {
      return Status::InvalidArgument(where, ": unknown EventPosition field \"", key,
                                     "\" (expected offset, seqNo, enqueuedTime, isInclusive)");
    }
  }
  if (!out.offset && out.seq_no < 0 && !out.enqueued_time_micros) {
    return Status::InvalidArgument(where,
                                   ": no position set (give offset, seqNo >= 0 or "
                                   "enqueuedTime), e.g. ",
                                   kExample);
  }
  return out;
}

Result<EventHubsSourceOptions> EventHubsSourceOptions::FromSpec(const SourceSpec& spec) {
  internal::OptionReader reader(spec.options, spec.key_path + ".options");
  // The connector's options (EventHubsConf, 2.3.22).
  SILT_RETURN_NOT_OK(reader.CheckNames({
      .what = "Event Hubs source",
      .honoured = {"eventhubs.connectionString", "eventhubs.consumerGroup",
                   "eventhubs.startingPosition", "eventhubs.startingPositions",
                   "maxEventsPerTrigger", "eventhubs.maxEventsPerTrigger"},
      // Receiver tuning, Spark task placement, monitoring plugins, and the
      // ending positions of batch (not streaming) queries: none changes
      // what a streaming query reads. silt always discovers new partitions.
      .inert = {"eventhubs.endingPosition", "eventhubs.endingPositions",
                "eventhubs.maxRatePerPartition", "eventhubs.maxRatesPerPartition",
                "eventhubs.receiverTimeout", "eventhubs.maxSilentTime",
                "eventhubs.operationTimeout", "eventhubs.prefetchCount", "eventhubs.threadPoolSize",
                "eventhubs.useExclusiveReceiver", "eventhubs.metricPlugin",
                "partitionPreferredLocationStrategy", "eventhubs.slowPartitionAdjustment",
                "eventhubs.throttlingStatusPlugin", "eventhubs.maxAcceptableBatchReceiveTime",
                "eventhubs.DynamicPartitionDiscovery"},
      .unsupported = {{"eventhubs.useAadAuth", "false"},
                      {"eventhubs.aadAuthCallback", ""},
                      {"eventhubs.AadAuthCallbackParams", ""},
                      {"useSimulatedClient", "false"}},
      .pass_through = {"kafka."},
  }));
  EventHubsSourceOptions out;
  out.key_path = spec.key_path + ".options";
  if (!spec.schema_ddl.empty()) {
    return Status::InvalidArgument(spec.key_path,
                                   ".schema: the Event Hubs source has a fixed schema; remove it");
  }
  std::optional<std::string> connection = reader.Get("eventhubs.connectionString");
  if (!connection) {
    return Status::InvalidArgument(out.key_path,
                                   ": option 'eventhubs.connectionString' must be specified");
  }
  SILT_ASSIGN_OR_RETURN(
      out.connection,
      EventHubsConnection::Parse(*connection, reader.KeyPath("eventhubs.connectionString")));
  const std::string& hub = out.connection.entity_path;

  if (std::optional<std::string> position = reader.Get("eventhubs.startingPosition")) {
    SILT_ASSIGN_OR_RETURN(
        out.starting_position,
        EventHubsPosition::FromJson(*position, reader.KeyPath("eventhubs.startingPosition")));
  }
  if (std::optional<std::string> positions = reader.Get("eventhubs.startingPositions")) {
    const std::string where = reader.KeyPath("eventhubs.startingPositions");
    simdjson::dom::parser parser;
    simdjson::dom::element root;
    simdjson::dom::object object;
    if (parser.parse(positions->data(), positions->size(), true).get(root) ||
        root.get_object().get(object)) {
      return Status::InvalidArgument(
          where, ": expected JSON like {\"{\\\"ehName\\\":\\\"", hub,
          "\\\",\\\"partitionId\\\":0}\":{\"offset\":null,\"seqNo\":100,\"enqueuedTime\":null,"
          "\"isInclusive\":true}}");
    }
    for (auto entry : object) {
      simdjson::dom::parser key_parser;
      simdjson::dom::element key_root;
      std::string_view name;
      int64_t partition = -1;
      std::string key(entry.key);
      if (key_parser.parse(key.data(), key.size(), true).get(key_root) ||
          key_root["ehName"].get_string().get(name) ||
          key_root["partitionId"].get_int64().get(partition) || partition < 0 ||
          partition > std::numeric_limits<int32_t>::max()) {
        return Status::InvalidArgument(where, ": bad key '", key,
                                       "' (expected the JSON {\"ehName\":\"", hub,
                                       "\",\"partitionId\":<n>})");
      }
      std::string value = simdjson::minify(entry.value);
      SILT_ASSIGN_OR_RETURN(EventHubsPosition position,
                            EventHubsPosition::FromJson(value, where + "[" + key + "]"));
      if (name != hub) {
        // The connector looks positions up by (its event hub, partition).
        SILT_LOG_WARN("stream", where, ": position for event hub '", name,
                      "' ignored (this source reads '", hub, "')");
        continue;
      }
      out.starting_positions[static_cast<int32_t>(partition)] = position;
    }
  }

  KafkaSourceOptions& kafka = out.kafka;
  kafka.key_path = out.key_path;
  kafka.strategy = KafkaSourceOptions::Strategy::kSubscribe;
  kafka.topics = {hub};
  kafka.include_headers = true;
  // The connector warns and goes on from the earliest event still there.
  kafka.fail_on_data_loss = false;
  kafka.properties = {
      {"bootstrap.servers", out.connection.host + ":" + std::to_string(out.connection.port)},
      {"security.protocol", "SASL_SSL"},
      {"sasl.mechanism", "PLAIN"},
      {"sasl.username", "$ConnectionString"},
      {"sasl.password", std::string(TrimAscii(*connection))},
      {"group.id", reader.Get("eventhubs.consumerGroup").value_or("$Default")},
  };
  for (const auto& [key, value] : spec.options) {
    if (key.size() <= 6 || !EqualsIgnoreCase(key.substr(0, 6), "kafka.")) continue;
    const std::string name = AsciiLower(key.substr(6));
    if (kafka.properties.count(name) || name == "auto.offset.reset" ||
        name == "enable.auto.commit" || name == "key.deserializer" ||
        name == "value.deserializer") {
      return Status::InvalidArgument(out.key_path, ".", key, ": Kafka option '", name,
                                     "' is set by the Event Hubs source (from "
                                     "eventhubs.connectionString, eventhubs.consumerGroup and "
                                     "the starting positions); remove it");
    }
    kafka.properties[name] = value;
  }

  SILT_ASSIGN_OR_RETURN(std::optional<int64_t> max_events, reader.GetInt("maxEventsPerTrigger", 1));
  if (!max_events) {
    SILT_ASSIGN_OR_RETURN(max_events, reader.GetInt("eventhubs.maxEventsPerTrigger", 1));
  }
  if (max_events) {
    kafka.max_offsets_per_trigger = max_events;
  } else {
    kafka.default_max_offsets_per_partition = kDefaultEventsPerPartition;
  }

  kafka.start = KafkaSourceOptions::Start::kResolver;
  std::optional<EventHubsPosition> fallback = out.starting_position;
  std::map<int32_t, EventHubsPosition> per_partition = out.starting_positions;
  kafka.resolve_start =
      [fallback, per_partition](
          kafka::Consumer* consumer,
          const std::vector<kafka::TopicPartition>& partitions) -> Result<KafkaOffsets> {
    KafkaOffsets offsets;
    EventHubsPosition end;
    end.offset = std::string(kEndOfStream);
    end.inclusive = false;
    for (const kafka::TopicPartition& tp : partitions) {
      auto it = per_partition.find(tp.partition);
      const EventHubsPosition& position =
          it != per_partition.end() ? it->second : (fallback ? *fallback : end);
      SILT_ASSIGN_OR_RETURN(offsets[tp], ResolveEventHubsPosition(position, consumer, tp));
    }
    return offsets;
  };
  return out;
}

Result<int64_t> ResolveEventHubsPosition(const EventHubsPosition& position,
                                         kafka::Consumer* consumer,
                                         const kafka::TopicPartition& partition) {
  if (position.seq_no >= 0) return position.seq_no;
  if (position.offset) {
    if (*position.offset == kStartOfStream || *position.offset == kEndOfStream) {
      SILT_ASSIGN_OR_RETURN(kafka::Watermarks marks, consumer->QueryWatermarks(partition));
      return *position.offset == kStartOfStream ? marks.low : marks.high;
    }
    int64_t n = 0;
    std::from_chars(position.offset->data(), position.offset->data() + position.offset->size(), n);
    return position.inclusive ? n : n + 1;
  }
  if (position.enqueued_time_micros) {
    // Event Hubs' enqueued-time filter is "after": the first event at or
    // after the next millisecond.
    int64_t ms = *position.enqueued_time_micros / 1000;
    if (*position.enqueued_time_micros < 0 && *position.enqueued_time_micros % 1000 != 0) --ms;
    SILT_ASSIGN_OR_RETURN(std::vector<std::optional<int64_t>> found,
                          consumer->OffsetsForTimes({partition}, ms + 1));
    if (!found.empty() && found[0]) return *found[0];
    SILT_ASSIGN_OR_RETURN(kafka::Watermarks marks, consumer->QueryWatermarks(partition));
    return marks.high;
  }
  return Status::InvalidArgument("Event Hubs position: no position has been set");
}

columnar::SchemaPtr EventHubsRecordSchema() {
  using columnar::DataType;
  return DataType::Struct({
      {"body", DataType::Binary(), true},
      {"partition", DataType::String(), true},
      {"offset", DataType::String(), true},
      {"sequenceNumber", DataType::Long(), true},
      {"enqueuedTime", DataType::Timestamp(), true},
      {"publisher", DataType::String(), true},
      {"partitionKey", DataType::String(), true},
      {"properties", DataType::Map(DataType::String(), DataType::String(), true), true},
      {"systemProperties", DataType::Map(DataType::String(), DataType::String(), true), true},
  });
}

Result<columnar::RecordBatchPtr> KafkaToEventHubsRecords(const columnar::RecordBatch& kafka,
                                                         const columnar::SchemaPtr& schema) {
  using columnar::Column;
  using columnar::ColumnBuilder;
  using columnar::DataType;
  if (kafka.num_columns() < 8) {
    return Status::Internal("Event Hubs source: Kafka records without headers");
  }
  const int64_t n = kafka.num_rows;
  const Column& key = *kafka.column(0);
  const Column& partition = *kafka.column(3);
  const Column& offset = *kafka.column(4);
  const Column& headers = *kafka.column(7);

  ColumnBuilder partition_text(DataType::String());
  ColumnBuilder offset_text(DataType::String());
  partition_text.Reserve(n);
  offset_text.Reserve(n);
  const int32_t* partitions = partition.raw_values<int32_t>();
  const int64_t* offsets = offset.raw_values<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    AppendNumber(&partition_text, partitions[i]);
    AppendNumber(&offset_text, offsets[i]);
  }

  // partitionKey: the key's bytes as a string column (same buffers).
  auto partition_key = std::make_shared<Column>(key);
  partition_key->type = DataType::String();

  // properties: the headers, a repeated name keeping its last value.
  ColumnBuilder properties(schema->field(7).type);
  ColumnBuilder* entry = properties.child(0);
  const int32_t* list = headers.offsets();
  const Column& header_entries = *headers.children[0];
  const Column& names = *header_entries.children[0];
  const Column& values = *header_entries.children[1];
  for (int64_t i = 0; i < n; ++i) {
    if (headers.IsValid(i)) {
      for (int32_t j = list[i]; j < list[i + 1]; ++j) {
        bool repeated = false;
        for (int32_t later = j + 1; later < list[i + 1] && !repeated; ++later) {
          repeated = names.StringValue(later) == names.StringValue(j);
        }
        if (repeated) continue;
        entry->child(0)->AppendString(names.StringValue(j));
        if (values.IsValid(j)) {
          entry->child(1)->AppendString(values.StringValue(j));
        } else {
          entry->child(1)->AppendNull();
        }
        entry->AppendValid();
      }
    }
    properties.CloseList();
  }

  // systemProperties: the Kafka key as the connector shows it for events
  // published over Kafka (x-opt-kafka-key, a JSON array of signed bytes).
  ColumnBuilder system(schema->field(8).type);
  ColumnBuilder* system_entry = system.child(0);
  std::string bytes;
  for (int64_t i = 0; i < n; ++i) {
    if (key.IsValid(i)) {
      std::string_view k = key.StringValue(i);
      bytes.assign("[");
      for (size_t b = 0; b < k.size(); ++b) {
        if (b > 0) bytes += ',';
        bytes += std::to_string(static_cast<int>(static_cast<signed char>(k[b])));
      }
      bytes += ']';
      system_entry->child(0)->AppendString("x-opt-kafka-key");
      system_entry->child(1)->AppendString(bytes);
      system_entry->AppendValid();
    }
    system.CloseList();
  }

  auto out = std::make_shared<columnar::RecordBatch>();
  out->schema = schema;
  out->num_rows = n;
  out->columns = {kafka.column(1),          partition_text.Finish(),
                  offset_text.Finish(),     kafka.column(4),
                  kafka.column(5),          columnar::MakeNullColumn(DataType::String(), n),
                  std::move(partition_key), properties.Finish(),
                  system.Finish()};
  return columnar::RecordBatchPtr(std::move(out));
}

EventHubsSource::EventHubsSource(std::string where, std::unique_ptr<KafkaSource> kafka)
    : where_(std::move(where)), kafka_(std::move(kafka)), schema_(EventHubsRecordSchema()) {}

EventHubsSource::~EventHubsSource() = default;

Result<std::unique_ptr<EventHubsSource>> EventHubsSource::Make(
    EventHubsSourceOptions options, const SourceContext& context,
    std::unique_ptr<kafka::Consumer> consumer) {
  std::string where = Status::Concat(
      "Event Hubs source (", options.key_path, ".eventhubs.connectionString: namespace ",
      options.connection.host, ", event hub ", options.connection.entity_path, ")");
  std::string hub = options.connection.entity_path;
  std::string key_path = options.key_path;
  SILT_ASSIGN_OR_RETURN(std::unique_ptr<KafkaSource> kafka,
                        KafkaSource::Make(std::move(options.kafka), context, std::move(consumer)));
  std::unique_ptr<EventHubsSource> source(new EventHubsSource(std::move(where), std::move(kafka)));
  source->hub_ = std::move(hub);
  source->key_path_ = std::move(key_path);
  return source;
}

std::string EventHubsSource::Description() const { return "EventHubs[" + hub_ + "]"; }

Status EventHubsSource::Explain(const Status& status) const {
  return ExplainError(status, where_, key_path_);
}

Status EventHubsSource::Restore(const std::optional<std::string>& last_planned) {
  return Explain(kafka_->Restore(last_planned));
}

Status EventHubsSource::PrepareForAvailableNow() {
  return Explain(kafka_->PrepareForAvailableNow());
}

Result<std::optional<std::string>> EventHubsSource::LatestOffset(
    const std::optional<std::string>& start, const ReadLimit& limit) {
  Result<std::optional<std::string>> out = kafka_->LatestOffset(start, limit);
  if (!out.ok()) return Explain(out.status());
  return out;
}

Result<std::unique_ptr<BatchReader>> EventHubsSource::GetBatch(
    const std::optional<std::string>& start, const std::string& end) {
  Result<std::unique_ptr<BatchReader>> reader = kafka_->GetBatch(start, end);
  if (!reader.ok()) return Explain(reader.status());
  return std::unique_ptr<BatchReader>(
      std::make_unique<EventHubsBatchReader>(std::move(*reader), schema_, where_, key_path_));
}

std::string EventHubsSource::DescribeRow(const columnar::RecordBatch& chunk, int64_t row) const {
  columnar::ColumnPtr partition = chunk.GetColumn("partition");
  columnar::ColumnPtr seq = chunk.GetColumn("sequenceNumber");
  if (partition == nullptr || seq == nullptr || row < 0 || row >= chunk.num_rows) return {};
  return Status::Concat("Event Hubs ", hub_, " partition ", partition->StringValue(row),
                        " sequence number ", seq->Value<int64_t>(row));
}

}  // namespace silt::stream
