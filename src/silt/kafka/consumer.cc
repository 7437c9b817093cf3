#include "silt/kafka/consumer.h"

namespace silt::kafka {

std::string TopicPartition::ToString() const { return topic + "-" + std::to_string(partition); }

columnar::SchemaPtr RecordSchema(bool include_headers) {
  using columnar::DataType;
  std::vector<columnar::Field> fields = {
      {"key", DataType::Binary(), true},        {"value", DataType::Binary(), true},
      {"topic", DataType::String(), true},      {"partition", DataType::Int(), true},
      {"offset", DataType::Long(), true},       {"timestamp", DataType::Timestamp(), true},
      {"timestampType", DataType::Int(), true},
  };
  if (include_headers) {
    fields.push_back({"headers",
                      DataType::Array(DataType::Struct({{"key", DataType::String(), true},
                                                        {"value", DataType::Binary(), true}}),
                                      true),
                      true});
  }
  return DataType::Struct(std::move(fields));
}

RecordColumns::RecordColumns(bool include_headers)
    : include_headers_(include_headers),
      schema_(RecordSchema(include_headers)),
      key_(columnar::DataType::Binary()),
      value_(columnar::DataType::Binary()),
      topic_(columnar::DataType::String()),
      partition_(columnar::DataType::Int()),
      offset_(columnar::DataType::Long()),
      timestamp_(columnar::DataType::Timestamp()),
      timestamp_type_(columnar::DataType::Int()) {
  if (include_headers_) {
    headers_ = std::make_unique<columnar::ColumnBuilder>(schema_->field(7).type);
  }
}

void RecordColumns::Reserve(int64_t rows, int64_t key_bytes, int64_t value_bytes,
                            int64_t topic_bytes) {
  reserved_ = true;
  if (rows <= 0) return;
  key_.Reserve(rows);
  key_.ReserveData(key_bytes);
  value_.Reserve(rows);
  value_.ReserveData(value_bytes);
  topic_.Reserve(rows);
  topic_.ReserveData(topic_bytes);
  partition_.Reserve(rows);
  offset_.Reserve(rows);
  timestamp_.Reserve(rows);
  timestamp_type_.Reserve(rows);
  if (include_headers_) headers_->Reserve(rows);
}

columnar::RecordBatchPtr RecordColumns::Finish() {
  auto batch = std::make_shared<columnar::RecordBatch>();
  batch->schema = schema_;
  batch->num_rows = num_rows_;
  batch->columns = {key_.Finish(),           value_.Finish(),  topic_.Finish(),
                    partition_.Finish(),     offset_.Finish(), timestamp_.Finish(),
                    timestamp_type_.Finish()};
  if (include_headers_) batch->columns.push_back(headers_->Finish());
  num_rows_ = 0;
  bytes_ = 0;
  reserved_ = false;
  return batch;
}

Result<std::map<TopicPartition, int64_t>> Consumer::ListOffsets(
    const std::vector<TopicPartition>& partitions, OffsetSpec spec) {
  std::map<TopicPartition, int64_t> out;
  for (const TopicPartition& tp : partitions) {
    SILT_ASSIGN_OR_RETURN(Watermarks marks, QueryWatermarks(tp));
    out[tp] = spec == OffsetSpec::kEarliest ? marks.low : marks.high;
  }
  return out;
}

}  // namespace silt::kafka
