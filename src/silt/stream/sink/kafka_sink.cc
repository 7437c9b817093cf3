#include "silt/stream/sink/kafka_sink.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "silt/base/logging.h"
#include "silt/base/strings.h"
#include "silt/stream/options_internal.h"

namespace silt::stream {

namespace {

bool IsText(const columnar::TypePtr& type) {
  return type->id() == columnar::TypeId::kString || type->id() == columnar::TypeId::kBinary;
}

// Spark's headers type: array<struct<key: string, value: binary>> (a string
// value is accepted too; its bytes are sent).
bool IsHeadersType(const columnar::TypePtr& type) {
  if (type->id() != columnar::TypeId::kArray) return false;
  const columnar::TypePtr& entry = type->element_type();
  return entry->id() == columnar::TypeId::kStruct && entry->num_fields() == 2 &&
         entry->field(0).type->id() == columnar::TypeId::kString && IsText(entry->field(1).type);
}

}  // namespace

KafkaSink::~KafkaSink() = default;

Result<std::unique_ptr<KafkaSink>> KafkaSink::Make(const SinkSpec& spec,
                                                   columnar::SchemaPtr output_schema) {
  const std::string key_path = "sink.options";
  internal::OptionReader reader(spec.options, key_path);
  // Spark's Kafka sink takes every output mode: each batch's rows are sent
  // as records, whatever they mean (job.cc has checked the mode's name).
  if (spec.output_mode != "append" && spec.output_mode != "complete" &&
      spec.output_mode != "update") {
    return Status::InvalidArgument("sink.outputMode: expected append, complete or update, got '",
                                   spec.output_mode, "'");
  }
  if (!spec.partition_by.empty()) {
    return Status::InvalidArgument(
        "sink.partitionBy: the Kafka sink has no partition columns "
        "(write a `partition` column instead)");
  }
  std::unique_ptr<KafkaSink> sink(new KafkaSink());
  std::map<std::string, std::string> properties;
  SILT_RETURN_NOT_OK(
      reader.CheckNames({.what = "Kafka sink", .honoured = {"topic"}, .pass_through = {"kafka."}}));
  for (const auto& [key, value] : spec.options) {
    if (!StartsWithIgnoreCase(key, "kafka.")) continue;
    std::string name = key.substr(6);
    AsciiLowerInPlace(&name);
    if (name == "key.serializer" || name == "value.serializer") {
      return Status::InvalidArgument(key_path, ".", key, ": Kafka option '", name,
                                     "' is not supported, as keys and values are written as "
                                     "byte arrays (cast them to STRING or BINARY in the "
                                     "transform)");
    }
    properties[name] = value;
  }
  auto servers = properties.find("bootstrap.servers");
  if (servers == properties.end()) {
    return Status::InvalidArgument(key_path,
                                   ": option 'kafka.bootstrap.servers' must be specified");
  }
  sink->servers_ = servers->second;
  // Spark's producer flush has no bound of its own; librdkafka fails a record
  // after delivery.timeout.ms (message.timeout.ms), so wait a little longer.
  int64_t delivery_timeout_ms = 300'000;
  for (const char* name : {"delivery.timeout.ms", "message.timeout.ms"}) {
    auto it = properties.find(name);
    if (it != properties.end()) delivery_timeout_ms = std::atoll(it->second.c_str());
  }
  sink->flush_timeout_ms_ = delivery_timeout_ms + 60'000;

  const columnar::Schema& schema = *output_schema;
  sink->topic_ = reader.Get("topic");
  sink->topic_index_ = schema.FieldIndex("topic");
  if (sink->topic_) {
    sink->topic_index_ = -1;  // the option wins over the column
    if (sink->topic_->empty()) return Status::InvalidArgument(reader.KeyPath("topic"), ": empty");
    sink->target_ = "kafka topic " + *sink->topic_;
  } else {
    if (sink->topic_index_ < 0) {
      return Status::InvalidArgument(
          "sink: topic option required when no 'topic' attribute is present (set "
          "sink.options.topic or select a `topic` column)");
    }
    if (schema.field(sink->topic_index_).type->id() != columnar::TypeId::kString) {
      return Status::InvalidArgument("sink: column topic must be a STRING, not ",
                                     schema.field(sink->topic_index_).type->ToDdl());
    }
    sink->target_ = "kafka topics from column topic";
  }
  sink->value_index_ = schema.FieldIndex("value");
  if (sink->value_index_ < 0) {
    return Status::InvalidArgument(
        "sink: the Kafka sink needs a `value` column (STRING or BINARY); the query outputs ",
        output_schema->ToDdl());
  }
  if (!IsText(schema.field(sink->value_index_).type)) {
    return Status::InvalidArgument("sink: column value must be STRING or BINARY, not ",
                                   schema.field(sink->value_index_).type->ToDdl(),
                                   " (e.g. to_json(struct(*)) AS value)");
  }
  sink->key_index_ = schema.FieldIndex("key");
  if (sink->key_index_ >= 0 && !IsText(schema.field(sink->key_index_).type)) {
    return Status::InvalidArgument("sink: column key must be STRING or BINARY, not ",
                                   schema.field(sink->key_index_).type->ToDdl());
  }
  sink->headers_index_ = schema.FieldIndex("headers");
  if (sink->headers_index_ >= 0 && !IsHeadersType(schema.field(sink->headers_index_).type)) {
    return Status::InvalidArgument(
        "sink: column headers must be ARRAY<STRUCT<key: STRING, value: BINARY>>, not ",
        schema.field(sink->headers_index_).type->ToDdl());
  }
  sink->partition_index_ = schema.FieldIndex("partition");
  if (sink->partition_index_ >= 0 &&
      schema.field(sink->partition_index_).type->id() != columnar::TypeId::kInt) {
    return Status::InvalidArgument("sink: column partition must be INT, not ",
                                   schema.field(sink->partition_index_).type->ToDdl());
  }
  Result<std::unique_ptr<kafka::Producer>> producer = kafka::Producer::Make(std::move(properties));
  if (!producer.ok()) return producer.status().WithContextParts(key_path);
  sink->producer_ = std::move(*producer);
  return sink;
}

std::string KafkaSink::Description() const {
  return "KafkaSink[" + (topic_ ? *topic_ : std::string("topic column")) + "]";
}

Result<bool> KafkaSink::Begin(int64_t batch_id) {
  batch_id_ = batch_id;
  rows_ = 0;
  return true;
}

Status KafkaSink::Write(const columnar::RecordBatch& batch) {
  const columnar::Column* topic =
      topic_index_ >= 0 ? batch.columns[static_cast<size_t>(topic_index_)].get() : nullptr;
  const columnar::Column* key =
      key_index_ >= 0 ? batch.columns[static_cast<size_t>(key_index_)].get() : nullptr;
  const columnar::Column& value = *batch.columns[static_cast<size_t>(value_index_)];
  const columnar::Column* headers =
      headers_index_ >= 0 ? batch.columns[static_cast<size_t>(headers_index_)].get() : nullptr;
  const columnar::Column* partition =
      partition_index_ >= 0 ? batch.columns[static_cast<size_t>(partition_index_)].get() : nullptr;
  const columnar::Column* entries = headers ? headers->children[0].get() : nullptr;
  std::vector<kafka::Header> record_headers;
  for (int64_t row = 0; row < batch.num_rows; ++row) {
    std::string_view record_topic;
    if (topic != nullptr) {
      if (topic->IsNull(row)) {
        return Status::InvalidArgument("row ", rows_ + row,
                                       " of the batch: null topic present in the data. Use the "
                                       "topic option for setting a topic");
      }
      record_topic = topic->StringValue(row);
    } else {
      record_topic = *topic_;
    }
    std::optional<std::string_view> record_key;
    if (key != nullptr && key->IsValid(row)) record_key = key->StringValue(row);
    std::optional<std::string_view> record_value;
    if (value.IsValid(row)) record_value = value.StringValue(row);
    int32_t record_partition = -1;
    if (partition != nullptr && partition->IsValid(row)) {
      record_partition = partition->Value<int32_t>(row);
    }
    record_headers.clear();
    if (headers != nullptr && headers->IsValid(row)) {
      const int32_t* offsets = headers->offsets();
      const columnar::Column& names = *entries->children[0];
      const columnar::Column& values = *entries->children[1];
      for (int32_t e = offsets[row]; e < offsets[row + 1]; ++e) {
        if (!entries->IsValid(e) || names.IsNull(e)) continue;
        record_headers.push_back(
            {names.StringValue(e), values.IsValid(e)
                                       ? std::optional<std::string_view>(values.StringValue(e))
                                       : std::nullopt});
      }
    }
    Status st = producer_->Send(record_topic, record_partition, record_key, record_value, 0,
                                record_headers);
    if (!st.ok()) {
      return st.WithContextParts("row ", rows_ + row, " of the batch (",
                                 record_value ? static_cast<int64_t>(record_value->size()) : 0,
                                 "-byte value) to Kafka topic ", record_topic);
    }
  }
  rows_ += batch.num_rows;
  return Status::OK();
}

Result<SinkBatchResult> KafkaSink::Commit() {
  SILT_RETURN_NOT_OK_CTX(producer_->Flush(flush_timeout_ms_), "flushing batch ", batch_id_, " to ",
                         servers_);
  SinkBatchResult result;
  result.rows_written = rows_;
  return result;
}

void KafkaSink::Abort() { rows_ = 0; }

}  // namespace silt::stream
