#include "silt/columnar/builder.h"

#include <utility>

namespace silt::columnar {

namespace {

bool HasOffsets(TypeId id) {
  return id == TypeId::kString || id == TypeId::kBinary || id == TypeId::kArray ||
         id == TypeId::kMap;
}

}  // namespace

ColumnBuilder::ColumnBuilder(TypePtr type, MemoryPool* pool) : type_(std::move(type)), pool_(pool) {
  switch (type_->id()) {
    case TypeId::kStruct:
    case TypeId::kVariant:
      for (const Field& field : type_->fields()) {
        children_.push_back(std::make_unique<ColumnBuilder>(field.type, pool_));
      }
      break;
    case TypeId::kArray:
      children_.push_back(std::make_unique<ColumnBuilder>(type_->element_type(), pool_));
      break;
    case TypeId::kMap:
      children_.push_back(std::make_unique<ColumnBuilder>(type_->map_entries_type(), pool_));
      break;
    default: break;
  }
  ResetBuffers(0);
}

void ColumnBuilder::ResetBuffers(int64_t reserve_rows) {
  length_ = 0;
  null_count_ = 0;
  validity_ = std::make_shared<Buffer>(pool_);
  values_ = std::make_shared<Buffer>(pool_);
  data_ = std::make_shared<Buffer>(pool_);
  if (reserve_rows > 0) validity_->Reserve(BitmapBytes(reserve_rows));
  TypeId id = type_->id();
  if (HasOffsets(id)) {
    values_->Reserve((reserve_rows + 1) * static_cast<int64_t>(sizeof(int32_t)));
    int32_t zero = 0;
    values_->Append(&zero, sizeof(zero));
  } else if (id == TypeId::kBoolean) {
    if (reserve_rows > 0) values_->Reserve(BitmapBytes(reserve_rows));
  } else if (type_->byte_width() > 0 && reserve_rows > 0) {
    values_->Reserve(reserve_rows * type_->byte_width());
  }
}

void ColumnBuilder::Reserve(int64_t rows) {
  int64_t total = length_ + rows;
  validity_->Reserve(BitmapBytes(total));
  TypeId id = type_->id();
  if (HasOffsets(id)) {
    values_->Reserve((total + 1) * static_cast<int64_t>(sizeof(int32_t)));
  } else if (id == TypeId::kBoolean) {
    values_->Reserve(BitmapBytes(total));
  } else if (type_->byte_width() > 0) {
    values_->Reserve(total * type_->byte_width());
  } else if (id == TypeId::kStruct || id == TypeId::kVariant) {
    for (auto& child : children_) child->Reserve(rows);
  }
}

void ColumnBuilder::GrowValidity() { validity_->Resize(Grow(BitmapBytes(length_ + 1))); }

void ColumnBuilder::AppendBool(bool v) {
  if (values_->size() * 8 <= length_) values_->Resize(Grow(BitmapBytes(length_ + 1)));
  if (v) SetBit(values_->mutable_data(), length_);
  MarkValid();
}

void ColumnBuilder::AppendNull() {
  switch (type_->id()) {
    case TypeId::kNull: break;
    case TypeId::kBoolean:
      // The value bit stays 0: Buffer::Resize zero-fills.
      if (values_->size() * 8 <= length_) values_->Resize(Grow(BitmapBytes(length_ + 1)));
      break;
    case TypeId::kString:
    case TypeId::kBinary: {
      int32_t end = static_cast<int32_t>(data_->size());
      values_->Append(&end, sizeof(end));
      break;
    }
    case TypeId::kArray:
    case TypeId::kMap: {
      int32_t end = static_cast<int32_t>(children_[0]->length());
      values_->Append(&end, sizeof(end));
      break;
    }
    case TypeId::kStruct:
    case TypeId::kVariant:
      for (auto& child : children_) child->AppendNull();
      break;
    // Null rows of fixed-width types hold zero bytes, appended inline (no
    // call into Resize and memset per null).
    case TypeId::kByte: AppendZero<uint8_t>(); break;
    case TypeId::kShort: AppendZero<uint16_t>(); break;
    case TypeId::kInt:
    case TypeId::kFloat:
    case TypeId::kDate: AppendZero<uint32_t>(); break;
    case TypeId::kLong:
    case TypeId::kDouble:
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: AppendZero<uint64_t>(); break;
    case TypeId::kDecimal: AppendZero<unsigned __int128>(); break;
  }
  if (validity_->size() * 8 <= length_) GrowValidity();
  ++length_;
  ++null_count_;
}

ColumnPtr ColumnBuilder::Finish() {
  auto column = std::make_shared<Column>();
  column->type = type_;
  column->length = length_;
  column->null_count = null_count_;
  if (null_count_ > 0) {
    validity_->Resize(BitmapBytes(length_));
    column->validity = validity_;
  }
  int64_t previous_rows = length_;
  int64_t previous_data = data_->size();
  switch (type_->id()) {
    case TypeId::kNull: break;
    case TypeId::kBoolean:
      values_->Resize(BitmapBytes(length_));
      column->values = values_;
      break;
    case TypeId::kString:
    case TypeId::kBinary:
      column->values = values_;
      column->data = data_;
      break;
    case TypeId::kArray:
    case TypeId::kMap:
      column->values = values_;
      column->children.push_back(children_[0]->Finish());
      break;
    case TypeId::kStruct:
    case TypeId::kVariant:
      for (auto& child : children_) column->children.push_back(child->Finish());
      break;
    default: column->values = values_; break;
  }
  ResetBuffers(previous_rows);
  // Value bytes get an eighth more than the sealed column held: batches of
  // one source vary by a few percent, and a batch just larger than the one
  // before would otherwise regrow (double and copy) its buffer every time.
  // Row counts are reserved exactly: decoders call Reserve(rows) first.
  if (previous_data > 0) data_->Reserve(previous_data + previous_data / 8);
  return column;
}

}  // namespace silt::columnar
