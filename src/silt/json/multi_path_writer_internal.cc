#include "silt/json/multi_path_writer_internal.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "silt/base/bits.h"

namespace silt::json::internal {

namespace {

using columnar::BitmapBytes;
using columnar::ColumnPtr;

BufferPtr NewZeroed(int64_t size) {
  auto buffer = std::make_shared<Buffer>();
  buffer->Resize(size);
  return buffer;
}

// Bytes per value of a cast's type; 0 for BOOLEAN (a bitmap).
int64_t CastWidth(CaptureCast cast) {
  switch (cast) {
    case CaptureCast::kByte: return 1;
    case CaptureCast::kShort: return 2;
    case CaptureCast::kInt:
    case CaptureCast::kFloat: return 4;
    case CaptureCast::kLong:
    case CaptureCast::kDouble: return 8;
    default: return 0;
  }
}

}  // namespace

void ResultWriter::Start(int64_t rows, bool capture, CaptureCast cast, bool ansi) {
  rows_ = rows;
  capture_ = capture;
  cast_ = capture ? cast : CaptureCast::kNone;
  ansi_ = ansi;
  offsets_ = nullptr;
  // A capturing path's rows are mostly numbers: its text buffers are
  // made on its first text row.
  if (!capture) StartText();
  if (cast_ != CaptureCast::kNone) {
    captured_validity_ = NewZeroed(BitmapBytes(rows));
    captured_valid_ = captured_validity_->mutable_data();
    const int64_t width = CastWidth(cast_);
    cast_values_ = NewZeroed(width == 0 ? BitmapBytes(rows) : rows * width);
    cast_data_ = cast_values_->mutable_data();
  } else if (capture) {
    captured_validity_ = NewZeroed(BitmapBytes(rows));
    kinds_ = NewZeroed(rows);
    bits_ = NewZeroed(rows * static_cast<int64_t>(sizeof(int64_t)));
    captured_valid_ = captured_validity_->mutable_data();
    kind_values_ = kinds_->mutable_data_as<int8_t>();
    bit_values_ = bits_->mutable_data_as<int64_t>();
  }
}

ColumnPtr ResultWriter::Finish() {
  ColumnPtr text;
  if (offsets_ != nullptr) {
    text = FinishText();
  } else {
    // No text row: one all-NULL column while batches keep their length
    // (columns are immutable).
    if (null_text_ == nullptr || null_text_->length != rows_) {
      null_text_ = columnar::MakeNullColumn(columnar::DataType::String(), rows_);
    }
    text = null_text_;
  }
  if (!capture_) return text;
  if (cast_ != CaptureCast::kNone) return FinishCast(std::move(text));
  auto column = std::make_shared<columnar::Column>();
  column->type = CapturedType();
  column->length = rows_;
  column->children.push_back(std::move(text));
  const int64_t captured_nulls = rows_ - CountSetBits(captured_valid_, rows_);
  for (int child = 0; child < 2; ++child) {
    auto scalar = std::make_shared<columnar::Column>();
    scalar->type = child == 0 ? columnar::DataType::Byte() : columnar::DataType::Long();
    scalar->length = rows_;
    scalar->null_count = captured_nulls;
    if (scalar->null_count > 0) scalar->validity = captured_validity_;
    scalar->values = child == 0 ? std::move(kinds_) : std::move(bits_);
    column->children.push_back(std::move(scalar));
  }
  captured_validity_ = nullptr;
  return column;
}

ColumnPtr ResultWriter::FinishCast(ColumnPtr text) {
  const columnar::TypePtr& type = CapturedCastType(cast_);
  auto value = std::make_shared<columnar::Column>();
  value->type = type->fields()[1].type;
  value->length = rows_;
  value->null_count = rows_ - CountSetBits(captured_valid_, rows_);
  if (value->null_count > 0) value->validity = std::move(captured_validity_);
  value->values = std::move(cast_values_);
  captured_validity_ = nullptr;
  cast_values_ = nullptr;
  auto column = std::make_shared<columnar::Column>();
  column->type = type;
  column->length = rows_;
  column->children.push_back(std::move(text));
  column->children.push_back(std::move(value));
  return column;
}

void ResultWriter::StartText() {
  text_validity_ = NewZeroed(BitmapBytes(rows_));
  text_offsets_ = NewZeroed((rows_ + 1) * static_cast<int64_t>(sizeof(int32_t)));
  text_data_ = std::make_shared<Buffer>();
  if (data_reserve_ > 0) text_data_->Reserve(data_reserve_);
  text_valid_ = text_validity_->mutable_data();
  offsets_ = text_offsets_->mutable_data_as<int32_t>();
}

ColumnPtr ResultWriter::FinishText() {
  // A row without text ends where the previous row ended (its slot is
  // still zero; texts were appended in row order).
  int32_t end = 0;
  for (int64_t row = 1; row <= rows_; ++row) {
    end = std::max(end, offsets_[row]);
    offsets_[row] = end;
  }
  data_reserve_ = text_data_->size();
  auto text = std::make_shared<columnar::Column>();
  text->type = columnar::DataType::String();
  text->length = rows_;
  text->null_count = rows_ - CountSetBits(text_valid_, rows_);
  if (text->null_count > 0) text->validity = std::move(text_validity_);
  text->values = std::move(text_offsets_);
  text->data = std::move(text_data_);
  text_validity_ = nullptr;
  offsets_ = nullptr;
  return text;
}

void KeyNames::Build(const std::vector<KeyPath>& keys) {
  distinct_.clear();
  std::vector<int> name_of_path;
  for (const KeyPath& key : keys) {
    const auto found = std::find(distinct_.begin(), distinct_.end(), key.name);
    name_of_path.push_back(static_cast<int>(found - distinct_.begin()));
    if (found == distinct_.end()) distinct_.push_back(key.name);
  }
  size_t slots = 16;
  while (slots < distinct_.size() * 2) slots *= 2;
  slots_.assign(slots, Slot{});
  mask_ = slots - 1;
  readers_.clear();
  for (size_t name_idx = 0; name_idx < distinct_.size(); ++name_idx) {
    const std::string_view name = distinct_[name_idx];
    // Each name's paths, contiguous.
    Slot key;
    key.first_reader = static_cast<int32_t>(readers_.size());
    for (size_t key_idx = 0; key_idx < keys.size(); ++key_idx) {
      if (name_of_path[key_idx] == static_cast<int>(name_idx)) {
        readers_.push_back(keys[key_idx].results);
      }
    }
    key.end_reader = static_cast<int32_t>(readers_.size());
    // An empty name is never matched by the scanner's rows (as before
    // the table): it stays out of it.
    if (name.empty()) continue;
    key.size = name.size();
    Words(name, &key.head, &key.tail);
    key.name = static_cast<int32_t>(name_idx);
    size_t slot = Hash(key.head, key.tail, name.size()) & mask_;
    while (slots_[slot].name >= 0) slot = (slot + 1) & mask_;
    slots_[slot] = key;
  }
}

void KeyNames::WriteRow(int64_t row, const std::vector<FlatMember>& members) {
  // Locals: the result writes store bytes, which would otherwise make the
  // compiler reload these members after each one.
  Slot* const slots = slots_.data();
  const size_t mask = mask_;
  ResultWriter* const* const readers = readers_.data();
  for (const FlatMember& member : members) {
    if (member.kind == FlatKind::kNull) continue;
    Slot* slot = Find(slots, mask, member.key);
    if (slot == nullptr || slot->seen == row) continue;  // not wanted, or found before
    slot->seen = row;
    for (int32_t reader = slot->first_reader; reader < slot->end_reader; ++reader) {
      readers[reader]->Flat(row, member);
    }
  }
}

}  // namespace silt::json::internal
