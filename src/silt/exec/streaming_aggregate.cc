// StreamingAggregator: Grouper + Accumulators (shared with HashAggregator)
// per micro-batch, plus the state framing of docs/format/aggregate-state.md.

#include "silt/exec/streaming_aggregate.h"

#include "silt/exec/accumulator_internal.h"
#include "silt/exec/grouper_internal.h"

namespace silt::exec {

using columnar::ColumnPtr;
using columnar::DataType;
using columnar::TypePtr;
using internal::Accumulator;

struct StreamingAggregator::Impl {
  Impl(KeyCodec codec, std::vector<Accumulator> accumulators, std::vector<TypePtr> types)
      : grouper(std::move(codec)), aggs(std::move(accumulators)), result_types(std::move(types)) {}

  internal::Grouper grouper;
  std::vector<Accumulator> aggs;
  std::vector<TypePtr> result_types;
  std::vector<int32_t> gids;
  std::vector<int64_t> new_rows;
};

StreamingAggregator::StreamingAggregator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
StreamingAggregator::~StreamingAggregator() = default;

Result<std::unique_ptr<StreamingAggregator>> StreamingAggregator::Make(
    std::vector<TypePtr> key_types, std::vector<AggregateSpec> aggregates) {
  SILT_ASSIGN_OR_RETURN(KeyCodec codec, KeyCodec::Make(std::move(key_types)));
  std::vector<Accumulator> accumulators;
  std::vector<TypePtr> types;
  for (const AggregateSpec& spec : aggregates) {
    SILT_ASSIGN_OR_RETURN(Accumulator acc, Accumulator::Make(spec));
    types.push_back(acc.result_type());
    accumulators.push_back(std::move(acc));
  }
  return std::unique_ptr<StreamingAggregator>(new StreamingAggregator(
      std::make_unique<Impl>(std::move(codec), std::move(accumulators), std::move(types))));
}

Status StreamingAggregator::Consume(const std::vector<ColumnPtr>& keys,
                                    const std::vector<ColumnPtr>& args, int64_t rows) {
  if (rows == 0) return Status::OK();
  Impl& s = *impl_;
  s.new_rows.clear();
  s.grouper.Assign(keys, rows, &s.gids, &s.new_rows);
  if (!s.new_rows.empty()) {
    for (Accumulator& agg : s.aggs) agg.Resize(s.grouper.num_groups());
  }
  for (size_t a = 0; a < s.aggs.size(); ++a) s.aggs[a].Update(args[a].get(), s.gids.data(), rows);
  return Status::OK();
}

void StreamingAggregator::EnsureGlobalGroup() {
  Impl& s = *impl_;
  if (!s.grouper.codec().types().empty() || s.grouper.num_groups() > 0) return;
  s.new_rows.clear();
  s.grouper.Assign({}, 1, &s.gids, &s.new_rows);
  for (Accumulator& agg : s.aggs) agg.Resize(s.grouper.num_groups());
}

int64_t StreamingAggregator::num_groups() const {
  return static_cast<int64_t>(impl_->grouper.num_groups());
}

std::string_view StreamingAggregator::group_key(int64_t g) const {
  return impl_->grouper.key(static_cast<size_t>(g));
}

Status StreamingAggregator::MergeStored(int64_t g, std::string_view stored) {
  if (stored.empty() || static_cast<uint8_t>(stored.front()) != kAggregateStateFormatV1) {
    return Status::Corruption(
        "aggregate state: ",
        stored.empty()
            ? std::string("empty")
            : "unknown format byte " + std::to_string(static_cast<uint8_t>(stored.front())));
  }
  stored.remove_prefix(1);
  for (size_t a = 0; a < impl_->aggs.size(); ++a) {
    SILT_RETURN_NOT_OK_CTX(impl_->aggs[a].Merge(static_cast<size_t>(g), &stored),
                           "aggregate state, aggregate ", a);
  }
  if (!stored.empty()) {
    return Status::Corruption("aggregate state: ", stored.size(),
                              " bytes after the last aggregate");
  }
  return Status::OK();
}

void StreamingAggregator::SerializeState(int64_t g, std::string* out) const {
  out->push_back(static_cast<char>(kAggregateStateFormatV1));
  for (const Accumulator& agg : impl_->aggs) agg.Serialize(static_cast<size_t>(g), out);
}

Status StreamingAggregator::MergeStates(std::string_view earlier, std::string_view later,
                                        std::string* out) const {
  // A fresh group takes `later` first; Merge then puts `earlier` before it.
  std::vector<Accumulator> fresh;
  for (const Accumulator& agg : impl_->aggs) {
    SILT_ASSIGN_OR_RETURN(Accumulator acc, Accumulator::Make(agg.spec()));
    acc.Resize(1);
    fresh.push_back(std::move(acc));
  }
  for (std::string_view in : {later, earlier}) {
    if (in.empty() || static_cast<uint8_t>(in.front()) != kAggregateStateFormatV1) {
      return Status::Corruption(
          "aggregate state: ",
          in.empty() ? std::string("empty")
                     : "unknown format byte " + std::to_string(static_cast<uint8_t>(in.front())));
    }
    in.remove_prefix(1);
    for (size_t a = 0; a < fresh.size(); ++a) {
      SILT_RETURN_NOT_OK_CTX(fresh[a].Merge(0, &in), "aggregate state, aggregate ", a);
    }
    if (!in.empty()) {
      return Status::Corruption("aggregate state: ", in.size(), " bytes after the last aggregate");
    }
  }
  out->push_back(static_cast<char>(kAggregateStateFormatV1));
  for (const Accumulator& agg : fresh) agg.Serialize(0, out);
  return Status::OK();
}

void StreamingAggregator::Reset() {
  impl_->grouper.Clear();
  for (Accumulator& agg : impl_->aggs) agg.Clear();
}

Result<columnar::RecordBatchPtr> StreamingAggregator::Finalize(
    const std::vector<std::string_view>& keys, const std::vector<std::string_view>& states,
    const std::vector<std::string>& names) const {
  const Impl& s = *impl_;
  if (keys.size() != states.size()) {
    return Status::InvalidArgument("Finalize: ", keys.size(), " keys but ", states.size(),
                                   " states");
  }
  const std::vector<TypePtr>& key_types = s.grouper.codec().types();
  if (names.size() != key_types.size() + s.aggs.size()) {
    return Status::InvalidArgument("Finalize: ", names.size(), " names for ", key_types.size(),
                                   " keys and ", s.aggs.size(), " aggregates");
  }
  SILT_ASSIGN_OR_RETURN(std::vector<ColumnPtr> key_columns, s.grouper.codec().Decode(keys));
  // Each stored state is merged into an empty group of fresh accumulators.
  auto out = std::make_shared<columnar::RecordBatch>();
  std::vector<columnar::Field> fields;
  for (size_t k = 0; k < key_types.size(); ++k) {
    fields.push_back({names[k], key_types[k], true, "{}"});
    out->columns.push_back(std::move(key_columns[k]));
  }
  std::vector<Accumulator> fresh;
  for (const Accumulator& agg : s.aggs) {
    SILT_ASSIGN_OR_RETURN(Accumulator acc, Accumulator::Make(agg.spec()));
    acc.Resize(states.size());
    fresh.push_back(std::move(acc));
  }
  for (size_t row = 0; row < states.size(); ++row) {
    std::string_view in = states[row];
    if (in.empty() || static_cast<uint8_t>(in.front()) != kAggregateStateFormatV1) {
      return Status::Corruption("aggregate state of row ", row, ": ",
                                in.empty() ? "empty" : "unknown format byte");
    }
    in.remove_prefix(1);
    for (size_t a = 0; a < fresh.size(); ++a) {
      SILT_RETURN_NOT_OK_CTX(fresh[a].Merge(row, &in), "aggregate state of row ", row,
                             ", aggregate ", a);
    }
    if (!in.empty()) {
      return Status::Corruption("aggregate state of row ", row, ": ", in.size(),
                                " bytes after the last aggregate");
    }
  }
  for (size_t a = 0; a < fresh.size(); ++a) {
    fields.push_back(
        {names[key_types.size() + a], fresh[a].result_type(), fresh[a].nullable(), "{}"});
    SILT_ASSIGN_OR_RETURN(ColumnPtr column, fresh[a].Finish(states.size()));
    out->columns.push_back(std::move(column));
  }
  out->schema = DataType::Struct(std::move(fields));
  out->num_rows = static_cast<int64_t>(states.size());
  return columnar::RecordBatchPtr(std::move(out));
}

const KeyCodec& StreamingAggregator::key_codec() const { return impl_->grouper.codec(); }

const std::vector<TypePtr>& StreamingAggregator::result_types() const {
  return impl_->result_types;
}

}  // namespace silt::exec
