#include "silt/stream/stateful/deduplicate.h"

#include <chrono>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "silt/base/strings.h"
#include "silt/columnar/builder.h"
#include "silt/exec/key_codec.h"

namespace silt::stream {

namespace {

using columnar::ColumnPtr;
using columnar::RecordBatchPtr;
using columnar::SchemaPtr;

int FindColumn(const SchemaPtr& schema, const std::string& name) {
  for (int i = 0; i < schema->num_fields(); ++i) {
    if (EqualsIgnoreCase(schema->field(i).name, name)) return i;
  }
  return -1;
}

std::string EncodeExpiry(int64_t micros) {
  std::string out(8, '\0');
  std::memcpy(out.data(), &micros, sizeof(micros));
  return out;
}

class Deduplicate final : public StoreBackedOperator {
 public:
  Deduplicate(exec::KeyCodec codec) : codec_(std::move(codec)) {}

  static Result<std::unique_ptr<StatefulOperator>> Make(
      const TransformStep& step, const SchemaPtr& input,
      const std::optional<WatermarkColumn>& watermark, OutputMode mode,
      std::unique_ptr<state::StateStore> store) {
    const std::string path = step.key_path + "." + step.kind;
    const bool within = step.kind == "dropDuplicatesWithinWatermark";
    // Complete mode without an aggregation after this step is refused by
    // the transform (Spark's rule is about the whole query).
    (void)mode;
    if (within && !watermark) {
      return Status::InvalidArgument(path,
                                     ": dropDuplicatesWithinWatermark needs a withWatermark step "
                                     "before it (the delay bounds how long duplicates are held)");
    }
    std::vector<int> columns;
    if (step.exprs.empty()) {
      for (int i = 0; i < input->num_fields(); ++i) columns.push_back(i);
    }
    for (size_t k = 0; k < step.exprs.size(); ++k) {
      int index = FindColumn(input, step.exprs[k]);
      if (index < 0) {
        std::string available;
        for (const columnar::Field& field : input->fields()) {
          if (!available.empty()) available += ", ";
          available += field.name;
        }
        return Status::InvalidArgument(path, "[", k, "]: no column named '", step.exprs[k],
                                       "' (available: ", available, ")");
      }
      columns.push_back(index);
    }
    std::vector<columnar::TypePtr> types;
    for (int c : columns) types.push_back(input->field(c).type);
    Result<exec::KeyCodec> codec = exec::KeyCodec::Make(types);
    if (!codec.ok()) return Status::InvalidArgument(path, ": ", codec.status().message());
    auto op = std::make_unique<Deduplicate>(std::move(*codec));
    op->schema_ = input;
    op->columns_ = columns;
    op->within_ = within;
    op->store_ = std::move(store);
    op->progress_.operator_name = within ? "dedupeWithinWatermark" : "dedupe";
    if (watermark) {
      op->event_time_column_ = FindColumn(input, watermark->name);
      op->event_time_is_window_ =
          op->event_time_column_ >= 0 &&
          input->field(op->event_time_column_).type->id() == columnar::TypeId::kStruct &&
          input->field(op->event_time_column_).type->num_fields() == 2;
      op->delay_ms_ = watermark->delay_ms;
      for (int c : columns) {
        if (c == op->event_time_column_) op->keyed_by_event_time_ = !within;
      }
      if (within && op->event_time_column_ < 0) {
        return Status::InvalidArgument(path, ": the watermark column '", watermark->name,
                                       "' is not in the rows this step reads");
      }
    }
    return std::unique_ptr<StatefulOperator>(std::move(op));
  }

  const SchemaPtr& output_schema() const override { return schema_; }

  Status StartBatch(const StatefulBatch& batch) override {
    Status loaded = LoadForBatch(batch);
    current_.num_dropped_duplicate_rows = 0;
    return loaded;
  }

  Result<RecordBatchPtr> Process(const RecordBatchPtr& chunk,
                                 const expr::EvalContext& ctx) override {
    const auto start = std::chrono::steady_clock::now();
    const int64_t rows = chunk->num_rows;
    if (rows == 0) return chunk;
    // A window struct's event time is its end (Spark's watermark predicate
    // on a struct column reads field 1).
    const columnar::Column* event =
        event_time_column_ >= 0 ? chunk->column(event_time_column_).get() : nullptr;
    const columnar::Column* times =
        event != nullptr && event_time_is_window_ ? event->children[1].get() : event;
    const int64_t late_micros = batch_.late_watermark_ms * 1000;
    std::vector<ColumnPtr> keys;
    for (int c : columns_) keys.push_back(chunk->column(c));
    encoded_.clear();
    codec_.EncodeRows(keys, rows, &encoded_);
    std::vector<int64_t>& keep = keep_;
    keep.clear();
    keep.reserve(static_cast<size_t>(rows));
    std::string store_key;
    for (int64_t row = 0; row < rows; ++row) {
      const bool has_time =
          times != nullptr && times->IsValid(row) && (event == times || event->IsValid(row));
      const int64_t time = has_time ? times->Value<int64_t>(row) : 0;
      if (batch_.has_watermark && has_time && time <= late_micros) {
        ++current_.num_rows_dropped_by_watermark;
        if (ctx.row_errors != nullptr) ReportLateRow(ctx.row_errors, row, time, late_micros);
        continue;
      }
      store_key.clear();
      if (keyed_by_event_time_) {
        store_key = EventTimeKeyPrefix(has_time ? time : std::numeric_limits<int64_t>::max());
      }
      store_key.append(encoded_[static_cast<size_t>(row)]);
      SILT_ASSIGN_OR_RETURN(std::optional<std::string> seen, store_->Get(store_key));
      if (seen) {
        ++current_.num_dropped_duplicate_rows;
        continue;
      }
      // Spark reads a NULL event time as 0 here.
      SILT_RETURN_NOT_OK(
          store_->Put(store_key, within_ ? EncodeExpiry(time + delay_ms_ * 1000) : std::string()));
      ++current_.num_rows_updated;
      keep.push_back(row);
    }
    updates_time_ += std::chrono::steady_clock::now() - start;
    all_kept_ = static_cast<int64_t>(keep.size()) == rows;
    if (all_kept_) return chunk;
    return columnar::TakeBatch(*chunk, keep);
  }

  bool passes_rows() const override { return true; }
  const std::vector<int64_t>* last_kept_rows() const override {
    return all_kept_ ? nullptr : &keep_;
  }

  Result<RecordBatchPtr> FinishBatch() override {
    current_.all_updates_time_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(updates_time_).count();
    const auto start = std::chrono::steady_clock::now();
    if (batch_.has_watermark && (keyed_by_event_time_ || within_)) {
      const int64_t limit_micros = batch_.eviction_watermark_ms * 1000;
      std::vector<std::string> evicted;
      std::string end = keyed_by_event_time_ ? EventTimeKeyPrefix(limit_micros + 1) : "";
      Status scanned =
          store_->Scan("", end, [&](std::string_view key, std::string_view value) -> Result<bool> {
            if (within_) {
              if (value.size() != 8) {
                return Status::Corruption("a dropDuplicatesWithinWatermark state value has ",
                                          static_cast<int64_t>(value.size()), " bytes; expected 8");
              }
              int64_t expires = 0;
              std::memcpy(&expires, value.data(), sizeof(expires));
              if (limit_micros < expires) return true;
            }
            evicted.emplace_back(key);
            return true;
          });
      SILT_RETURN_NOT_OK(scanned);
      for (const std::string& key : evicted) SILT_RETURN_NOT_OK(store_->Delete(key));
      current_.num_rows_removed = static_cast<int64_t>(evicted.size());
    }
    current_.all_removals_time_ms = ElapsedMs(start);
    return RecordBatchPtr();
  }

  void Abort() override { store_->Abort(); }

  Result<RecordBatchPtr> DecodeState(const std::vector<std::string_view>& keys,
                                     const std::vector<std::string_view>& values) const override {
    std::vector<std::string_view> stripped;
    stripped.reserve(keys.size());
    for (std::string_view key : keys) {
      if (keyed_by_event_time_) {
        if (key.size() < kEventTimeKeyPrefixBytes) {
          return Status::Corruption("a state key of ", static_cast<int64_t>(key.size()),
                                    " bytes is shorter than its event-time prefix");
        }
        key.remove_prefix(kEventTimeKeyPrefixBytes);
      }
      stripped.push_back(key);
    }
    SILT_ASSIGN_OR_RETURN(std::vector<ColumnPtr> columns, codec_.Decode(stripped));
    std::vector<columnar::Field> fields;
    for (int c : columns_) fields.push_back(schema_->field(c));
    if (within_) {
      columnar::ColumnBuilder expires(columnar::DataType::Long());
      for (std::string_view value : values) {
        if (value.size() != 8) {
          return Status::Corruption("a dropDuplicatesWithinWatermark state value has ",
                                    static_cast<int64_t>(value.size()), " bytes; expected 8");
        }
        int64_t micros = 0;
        std::memcpy(&micros, value.data(), sizeof(micros));
        expires.Append(micros);
      }
      fields.push_back(columnar::Field{"expiresAtMicros", columnar::DataType::Long()});
      columns.push_back(expires.Finish());
    }
    auto batch = std::make_shared<columnar::RecordBatch>();
    batch->schema = columnar::DataType::Struct(std::move(fields));
    batch->num_rows = static_cast<int64_t>(keys.size());
    batch->columns = std::move(columns);
    return RecordBatchPtr(std::move(batch));
  }

  bool WantsNoDataBatch(int64_t next_watermark_ms) const override {
    return ran_batch_ && batch_.has_watermark && next_watermark_ms > batch_.eviction_watermark_ms;
  }

 private:
  exec::KeyCodec codec_;
  SchemaPtr schema_;
  std::vector<int> columns_;
  bool within_ = false;
  int event_time_column_ = -1;
  bool event_time_is_window_ = false;  // a window struct: its end is the time
  bool keyed_by_event_time_ = false;
  int64_t delay_ms_ = 0;
  std::vector<std::string> encoded_;
  // The rows of the last Process's chunk it passed on (see last_kept_rows).
  std::vector<int64_t> keep_;
  bool all_kept_ = true;
};

}  // namespace

Result<std::unique_ptr<StatefulOperator>> MakeDeduplicate(
    const TransformStep& step, const SchemaPtr& input,
    const std::optional<WatermarkColumn>& watermark, OutputMode mode,
    std::unique_ptr<state::StateStore> store) {
  return Deduplicate::Make(step, input, watermark, mode, std::move(store));
}

}  // namespace silt::stream
