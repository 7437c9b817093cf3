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
