#include "silt/stream/sink/dead_letter.h"

#include <utility>

#include "silt/columnar/builder.h"
#include "silt/stream/column_util_internal.h"

namespace silt::stream {

using columnar::ColumnBuilder;
using columnar::ColumnPtr;
using columnar::DataType;
using columnar::Field;
using columnar::TypeId;

namespace {

// Column positions in DeadLetterSchema().
enum Col : int {
  kKey,
  kValue,
  kReason,
  kError,
  kSource,
  kTopic,
  kPartition,
  kOffset,
  kTimestamp,
  kInputFile,
  kBatchId,
  kQueryId,
  kDeadLetteredAt,
  kNumCols
};

// Rows `rows` of the raw chunk's column `name` when it has type `want`
// (a STRING column is taken as BINARY: same layout), else NULLs.
ColumnPtr TakeRaw(const columnar::RecordBatch& raw, const char* name, TypeId want,
                  const std::vector<int64_t>& rows, const columnar::TypePtr& type) {
  ColumnPtr column = raw.GetColumn(name);
  const bool binary_from_string =
      want == TypeId::kBinary && column != nullptr && column->type->id() == TypeId::kString;
  if (column == nullptr || (column->type->id() != want && !binary_from_string)) {
    return columnar::MakeNullColumn(type, static_cast<int64_t>(rows.size()));
  }
  ColumnPtr taken = columnar::TakeColumn(*column, rows);
  if (!binary_from_string) return taken;
  auto retyped = std::make_shared<columnar::Column>(*taken);
  retyped->type = type;
  return retyped;
}

}  // namespace

const columnar::SchemaPtr& DeadLetterSchema() {
  static const columnar::SchemaPtr schema = DataType::Struct({
      Field{"key", DataType::Binary(), true},
      Field{"value", DataType::Binary(), true},
      Field{"reason", DataType::String(), true},
      Field{"error", DataType::String(), true},
      Field{"source", DataType::String(), true},
      Field{"topic", DataType::String(), true},
      Field{"partition", DataType::Int(), true},
      Field{"offset", DataType::Long(), true},
      Field{"timestamp", DataType::Timestamp(), true},
      Field{"input_file", DataType::String(), true},
      Field{"batch_id", DataType::Long(), true},
      Field{"query_id", DataType::String(), true},
      Field{"dead_lettered_at", DataType::Timestamp(), true},
  });
  return schema;
}

DeadLetterBuilder::DeadLetterBuilder(std::string query_id) : query_id_(std::move(query_id)) {}

void DeadLetterBuilder::StartBatch(int64_t batch_id, int64_t batch_time_micros) {
  batch_id_ = batch_id;
  batch_time_micros_ = batch_time_micros;
  parts_.clear();
  total_ = 0;
  counts_.fill(0);
}

void DeadLetterBuilder::Add(const columnar::RecordBatch& raw, const expr::RowErrors& errors,
                            const std::vector<std::string>& places, const std::string& input_file) {
  if (errors.empty()) return;
  const columnar::SchemaPtr& schema = DeadLetterSchema();
  const int64_t n = static_cast<int64_t>(errors.size());
  auto type = [&](int col) { return schema->field(col).type; };
  std::vector<ColumnPtr> columns(kNumCols);
  columns[kKey] = TakeRaw(raw, "key", TypeId::kBinary, errors.rows, type(kKey));
  columns[kValue] = TakeRaw(raw, "value", TypeId::kBinary, errors.rows, type(kValue));
  columns[kTopic] = TakeRaw(raw, "topic", TypeId::kString, errors.rows, type(kTopic));
  columns[kPartition] = TakeRaw(raw, "partition", TypeId::kInt, errors.rows, type(kPartition));
  columns[kOffset] = TakeRaw(raw, "offset", TypeId::kLong, errors.rows, type(kOffset));
  columns[kTimestamp] =
      TakeRaw(raw, "timestamp", TypeId::kTimestamp, errors.rows, type(kTimestamp));

  ColumnBuilder reason(type(kReason));
  ColumnBuilder error(type(kError));
  ColumnBuilder source(type(kSource));
  ColumnBuilder file(type(kInputFile));
  ColumnBuilder batch(type(kBatchId));
  ColumnBuilder query(type(kQueryId));
  ColumnBuilder at(type(kDeadLetteredAt));
  for (int64_t err_idx = 0; err_idx < n; ++err_idx) {
    const auto i = static_cast<size_t>(err_idx);
    const expr::RowErrorKind kind = errors.kinds[i];
    ++counts_[static_cast<size_t>(kind)];
    reason.AppendString(expr::RowErrorKindName(kind));
    error.AppendString(errors.messages[i]);
    const std::string& place = places[i];
    if (!place.empty()) {
      source.AppendString(place);
    } else if (!input_file.empty()) {
      source.AppendString(input_file);
    } else {
      source.AppendNull();
    }
    if (input_file.empty()) {
      file.AppendNull();
    } else {
      file.AppendString(input_file);
    }
    batch.Append<int64_t>(batch_id_);
    query.AppendString(query_id_);
    at.Append<int64_t>(batch_time_micros_);
  }
  columns[kReason] = reason.Finish();
  columns[kError] = error.Finish();
  columns[kSource] = source.Finish();
  columns[kInputFile] = file.Finish();
  columns[kBatchId] = batch.Finish();
  columns[kQueryId] = query.Finish();
  columns[kDeadLetteredAt] = at.Finish();
  parts_.push_back(internal::MakeBatch(schema, n, std::move(columns)));
  total_ += n;
}

columnar::RecordBatchPtr DeadLetterBuilder::Take() {
  if (parts_.empty()) return nullptr;
  columnar::RecordBatchPtr out =
      parts_.size() == 1 ? parts_.front() : columnar::ConcatBatches(parts_);
  parts_.clear();
  return out;
}

}  // namespace silt::stream
