#include "silt/columnar/column.h"

#include <cstring>
#include <string>
#include <utility>

#include "silt/base/bits.h"

namespace silt::columnar {

namespace {

// A zero-filled buffer of `size` bytes.
BufferPtr ZeroBuffer(int64_t size) {
  auto buffer = std::make_shared<Buffer>();
  buffer->Resize(size);
  return buffer;
}

// Copies n bits; `dst` bits in the target range must be zero beforehand.
// Byte-at-a-time when the destination is byte aligned (slices and takes always
// write from bit 0), bit-at-a-time only for the unaligned head.
void CopyBits(const uint8_t* src, int64_t src_offset, uint8_t* dst, int64_t dst_offset, int64_t n) {
  if (n <= 0) return;
  int64_t bit_idx = 0;
  while (bit_idx < n && ((dst_offset + bit_idx) & 7) != 0) {
    if (GetBit(src, src_offset + bit_idx)) SetBit(dst, dst_offset + bit_idx);
    ++bit_idx;
  }
  int64_t whole_bytes = (n - bit_idx) / 8;
  uint8_t* out = dst + (dst_offset + bit_idx) / 8;
  int64_t src_bit = src_offset + bit_idx;
  int shift = static_cast<int>(src_bit & 7);
  const uint8_t* in = src + src_bit / 8;
  if (shift == 0) {
    if (whole_bytes > 0) std::memcpy(out, in, static_cast<size_t>(whole_bytes));
  } else {
    // Each output byte spans two input bytes; both lie inside the source
    // range because a whole output byte needs 8 source bits after `shift`.
    for (int64_t byte_idx = 0; byte_idx < whole_bytes; ++byte_idx) {
      out[byte_idx] =
          static_cast<uint8_t>((in[byte_idx] >> shift) | (in[byte_idx + 1] << (8 - shift)));
    }
  }
  bit_idx += whole_bytes * 8;
  for (; bit_idx < n; ++bit_idx) {
    if (GetBit(src, src_offset + bit_idx)) SetBit(dst, dst_offset + bit_idx);
  }
}

void SetBitsRange(uint8_t* dst, int64_t offset, int64_t n) {
  int64_t bit_idx = 0;
  while (bit_idx < n && ((offset + bit_idx) & 7) != 0) SetBit(dst, offset + bit_idx++);
  int64_t whole_bytes = (n - bit_idx) / 8;
  if (whole_bytes > 0) {
    std::memset(dst + (offset + bit_idx) / 8, 0xff, static_cast<size_t>(whole_bytes));
  }
  bit_idx += whole_bytes * 8;
  for (; bit_idx < n; ++bit_idx) SetBit(dst, offset + bit_idx);
}

bool HasNulls(const Column& column) { return column.validity != nullptr && column.null_count > 0; }

// Sets `out`'s validity and null count from a freshly built bitmap, dropping
// the bitmap when every row is valid.
void AdoptValidity(BufferPtr bitmap, int64_t length, Column* out) {
  int64_t valid = CountSetBits(bitmap->data(), length);
  out->null_count = length - valid;
  out->validity = out->null_count > 0 ? std::move(bitmap) : nullptr;
}

// Offsets [from, from + n] rebased to start at zero.
BufferPtr RebasedOffsets(const int32_t* offsets, int64_t from, int64_t n) {
  BufferPtr out = ZeroBuffer((n + 1) * static_cast<int64_t>(sizeof(int32_t)));
  int32_t* dst = out->mutable_data_as<int32_t>();
  int32_t base = offsets[from];
  for (int64_t row_idx = 0; row_idx <= n; ++row_idx) dst[row_idx] = offsets[from + row_idx] - base;
  return out;
}

template <typename T>
void GatherFixed(const T* src, const std::vector<int64_t>& indices, T* dst) {
  for (size_t i = 0; i < indices.size(); ++i) dst[i] = src[indices[i]];
}

struct Int128Bytes {
  uint8_t bytes[16];
};

void GatherByWidth(const uint8_t* src, int width, const std::vector<int64_t>& indices,
                   uint8_t* dst) {
  switch (width) {
    case 1: GatherFixed(src, indices, dst); break;
    case 2:
      GatherFixed(reinterpret_cast<const int16_t*>(src), indices, reinterpret_cast<int16_t*>(dst));
      break;
    case 4:
      GatherFixed(reinterpret_cast<const int32_t*>(src), indices, reinterpret_cast<int32_t*>(dst));
      break;
    case 8:
      GatherFixed(reinterpret_cast<const int64_t*>(src), indices, reinterpret_cast<int64_t*>(dst));
      break;
    default:
      GatherFixed(reinterpret_cast<const Int128Bytes*>(src), indices,
                  reinterpret_cast<Int128Bytes*>(dst));
      break;
  }
}

// The child rows [begin, end) of a list column as a column of their own,
// without copying when they already are the whole child.
ColumnPtr ChildRange(const ColumnPtr& child, int64_t begin, int64_t end) {
  if (begin == 0 && end == child->length) return child;
  return SliceColumn(*child, begin, end - begin);
}

Status ValidateOffsets(const Column& column, int64_t limit, const char* limit_name) {
  int64_t needed = (column.length + 1) * static_cast<int64_t>(sizeof(int32_t));
  if (column.values == nullptr || column.values->size() < needed) {
    return Status::Internal("column of ", column.type->ToDdl(), " with length ", column.length,
                            " needs ", needed, " bytes of offsets, has ",
                            column.values == nullptr ? 0 : column.values->size());
  }
  const int32_t* offsets = column.offsets();
  if (offsets[0] < 0) return Status::Internal("negative first offset ", offsets[0]);
  for (int64_t row_idx = 0; row_idx < column.length; ++row_idx) {
    if (offsets[row_idx + 1] < offsets[row_idx]) {
      return Status::Internal("offsets decrease at row ", row_idx, " (", offsets[row_idx], " > ",
                              offsets[row_idx + 1], ")");
    }
  }
  if (offsets[column.length] > limit) {
    return Status::Internal("last offset ", offsets[column.length], " exceeds the ", limit_name,
                            " length ", limit);
  }
  return Status::OK();
}

}  // namespace

ColumnPtr RecordBatch::GetColumn(std::string_view name) const {
  int index = schema->FieldIndex(name);
  if (index < 0 || index >= num_columns()) return nullptr;
  return columns[static_cast<size_t>(index)];
}

Status ValidateColumn(const Column& column) {
  if (column.type == nullptr) return Status::Internal("column without a type");
  const DataType& type = *column.type;
  if (column.length < 0) return Status::Internal("negative column length ", column.length);
  if (column.null_count < 0 || column.null_count > column.length) {
    return Status::Internal("null_count ", column.null_count, " outside 0..", column.length);
  }
  if (column.validity != nullptr) {
    if (column.validity->size() < BitmapBytes(column.length)) {
      return Status::Internal("validity bitmap of ", column.validity->size(),
                              " bytes is too short for ", column.length, " rows");
    }
    int64_t nulls = column.length - CountSetBits(column.validity->data(), column.length);
    if (nulls != column.null_count) {
      return Status::Internal("validity bitmap has ", nulls, " nulls but null_count is ",
                              column.null_count);
    }
  } else if (column.null_count != 0) {
    return Status::Internal("null_count ", column.null_count, " without a validity bitmap");
  }
  switch (type.id()) {
    case TypeId::kNull:
      if (column.null_count != column.length) {
        return Status::Internal("void column with ", column.length - column.null_count,
                                " non-null rows");
      }
      return Status::OK();
    case TypeId::kBoolean:
      if (column.length > 0 &&
          (column.values == nullptr || column.values->size() < BitmapBytes(column.length))) {
        return Status::Internal("boolean values too short for ", column.length, " rows");
      }
      return Status::OK();
    case TypeId::kString:
    case TypeId::kBinary: {
      if (column.data == nullptr) return Status::Internal(type.ToDdl(), " column without data");
      return ValidateOffsets(column, column.data->size(), "data");
    }
    case TypeId::kArray:
    case TypeId::kMap: {
      if (column.children.size() != 1 || column.children[0] == nullptr) {
        return Status::Internal(type.ToDdl(), " column needs exactly one child, has ",
                                static_cast<long long>(column.children.size()));
      }
      const Column& child = *column.children[0];
      SILT_RETURN_NOT_OK(ValidateOffsets(column, child.length, "child"));
      if (type.id() == TypeId::kArray) {
        if (child.type == nullptr || !child.type->Equals(*type.element_type())) {
          return Status::Internal("array element column has type ",
                                  child.type ? child.type->ToDdl() : "<none>", ", expected ",
                                  type.element_type()->ToDdl());
        }
      } else {
        if (child.type == nullptr || child.type->id() != TypeId::kStruct ||
            child.type->num_fields() != 2 || !child.type->field(0).type->Equals(*type.key_type()) ||
            !child.type->field(1).type->Equals(*type.value_type())) {
          return Status::Internal("map entries column has type ",
                                  child.type ? child.type->ToDdl() : "<none>", ", expected ",
                                  type.map_entries_type()->ToDdl());
        }
      }
      SILT_RETURN_NOT_OK_CTX(ValidateColumn(child), "in the child of ", type.ToDdl());
      return Status::OK();
    }
    case TypeId::kStruct:
    case TypeId::kVariant: {
      if (column.children.size() != static_cast<size_t>(type.num_fields())) {
        return Status::Internal("struct column has ",
                                static_cast<long long>(column.children.size()), " children for ",
                                type.num_fields(), " fields");
      }
      for (int field_idx = 0; field_idx < type.num_fields(); ++field_idx) {
        const ColumnPtr& child = column.children[static_cast<size_t>(field_idx)];
        const Field& field = type.field(field_idx);
        if (child == nullptr) return Status::Internal("missing child for field ", field.name);
        if (child->length != column.length) {
          return Status::Internal("child for field ", field.name, " has length ", child->length,
                                  ", struct has ", column.length);
        }
        if (child->type == nullptr || !child->type->Equals(*field.type)) {
          return Status::Internal("child for field ", field.name, " has type ",
                                  child->type ? child->type->ToDdl() : "<none>", ", expected ",
                                  field.type->ToDdl());
        }
        SILT_RETURN_NOT_OK_CTX(ValidateColumn(*child), "in field ", field.name);
      }
      return Status::OK();
    }
    default: {
      int64_t needed = column.length * type.byte_width();
      if (needed > 0 && (column.values == nullptr || column.values->size() < needed)) {
        return Status::Internal(type.ToDdl(), " column with length ", column.length, " needs ",
                                needed, " value bytes, has ",
                                column.values == nullptr ? 0 : column.values->size());
      }
      return Status::OK();
    }
  }
}

Status ValidateBatch(const RecordBatch& batch) {
  if (batch.schema == nullptr || batch.schema->id() != TypeId::kStruct) {
    return Status::Internal("record batch without a struct schema");
  }
  if (batch.num_columns() != batch.schema->num_fields()) {
    return Status::Internal("record batch has ", batch.num_columns(), " columns for ",
                            batch.schema->num_fields(), " schema fields");
  }
  for (int col_idx = 0; col_idx < batch.num_columns(); ++col_idx) {
    const Field& field = batch.schema->field(col_idx);
    const ColumnPtr& column = batch.column(col_idx);
    if (column == nullptr) return Status::Internal("missing column ", field.name);
    if (column->length != batch.num_rows) {
      return Status::Internal("column ", field.name, " has ", column->length, " rows, batch has ",
                              batch.num_rows);
    }
    if (column->type == nullptr || !column->type->Equals(*field.type)) {
      return Status::Internal("column ", field.name, " has type ",
                              column->type ? column->type->ToDdl() : "<none>", ", schema says ",
                              field.type->ToDdl());
    }
    SILT_RETURN_NOT_OK_CTX(ValidateColumn(*column), "column ", field.name);
  }
  return Status::OK();
}

ColumnPtr MakeNullColumn(const TypePtr& type, int64_t length) {
  auto column = std::make_shared<Column>();
  column->type = type;
  column->length = length;
  column->null_count = length;
  if (length > 0) column->validity = ZeroBuffer(BitmapBytes(length));
  switch (type->id()) {
    case TypeId::kNull: break;
    case TypeId::kBoolean: column->values = ZeroBuffer(BitmapBytes(length)); break;
    case TypeId::kString:
    case TypeId::kBinary:
      column->values = ZeroBuffer((length + 1) * static_cast<int64_t>(sizeof(int32_t)));
      column->data = std::make_shared<Buffer>();
      break;
    case TypeId::kArray:
      column->values = ZeroBuffer((length + 1) * static_cast<int64_t>(sizeof(int32_t)));
      column->children.push_back(MakeNullColumn(type->element_type(), 0));
      break;
    case TypeId::kMap:
      column->values = ZeroBuffer((length + 1) * static_cast<int64_t>(sizeof(int32_t)));
      column->children.push_back(MakeNullColumn(type->map_entries_type(), 0));
      break;
    case TypeId::kStruct:
    case TypeId::kVariant:
      for (const Field& field : type->fields()) {
        column->children.push_back(MakeNullColumn(field.type, length));
      }
      break;
    default: column->values = ZeroBuffer(length * type->byte_width()); break;
  }
  return column;
}

ColumnPtr SliceColumn(const Column& column, int64_t offset, int64_t length) {
  // An empty result needs no source buffers, which empty inputs may lack.
  if (length == 0) return MakeNullColumn(column.type, 0);
  auto out = std::make_shared<Column>();
  out->type = column.type;
  out->length = length;
  if (HasNulls(column)) {
    BufferPtr bitmap = ZeroBuffer(BitmapBytes(length));
    CopyBits(column.validity->data(), offset, bitmap->mutable_data(), 0, length);
    AdoptValidity(std::move(bitmap), length, out.get());
  }
  const DataType& type = *column.type;
  switch (type.id()) {
    case TypeId::kNull: break;
    case TypeId::kBoolean: {
      out->values = ZeroBuffer(BitmapBytes(length));
      CopyBits(column.values->data(), offset, out->values->mutable_data(), 0, length);
      break;
    }
    case TypeId::kString:
    case TypeId::kBinary: {
      const int32_t* offsets = column.offsets();
      out->values = RebasedOffsets(offsets, offset, length);
      int64_t begin = offsets[offset];
      int64_t bytes = offsets[offset + length] - begin;
      out->data = std::make_shared<Buffer>();
      if (bytes > 0) out->data->Append(column.data->data() + begin, bytes);
      break;
    }
    case TypeId::kArray:
    case TypeId::kMap: {
      const int32_t* offsets = column.offsets();
      out->values = RebasedOffsets(offsets, offset, length);
      out->children.push_back(
          ChildRange(column.children[0], offsets[offset], offsets[offset + length]));
      break;
    }
    case TypeId::kStruct:
    case TypeId::kVariant:
      for (const ColumnPtr& child : column.children) {
        out->children.push_back(SliceColumn(*child, offset, length));
      }
      break;
    default: {
      int64_t width = type.byte_width();
      out->values = std::make_shared<Buffer>();
      if (length > 0) out->values->Append(column.values->data() + offset * width, length * width);
      break;
    }
  }
  return out;
}

ColumnPtr TakeColumn(const Column& column, const std::vector<int64_t>& indices) {
  if (indices.empty()) return MakeNullColumn(column.type, 0);
  auto out = std::make_shared<Column>();
  out->type = column.type;
  int64_t length = static_cast<int64_t>(indices.size());
  out->length = length;
  if (HasNulls(column)) {
    BufferPtr bitmap = ZeroBuffer(BitmapBytes(length));
    uint8_t* bits = bitmap->mutable_data();
    const uint8_t* src = column.validity->data();
    for (int64_t row_idx = 0; row_idx < length; ++row_idx) {
      if (GetBit(src, indices[static_cast<size_t>(row_idx)])) SetBit(bits, row_idx);
    }
    AdoptValidity(std::move(bitmap), length, out.get());
  }
  const DataType& type = *column.type;
  switch (type.id()) {
    case TypeId::kNull: break;
    case TypeId::kBoolean: {
      out->values = ZeroBuffer(BitmapBytes(length));
      uint8_t* bits = out->values->mutable_data();
      const uint8_t* src = column.values->data();
      for (int64_t row_idx = 0; row_idx < length; ++row_idx) {
        if (GetBit(src, indices[static_cast<size_t>(row_idx)])) SetBit(bits, row_idx);
      }
      break;
    }
    case TypeId::kString:
    case TypeId::kBinary: {
      const int32_t* offsets = column.offsets();
      int64_t total = 0;
      for (int64_t index : indices) total += offsets[index + 1] - offsets[index];
      out->values = ZeroBuffer((length + 1) * static_cast<int64_t>(sizeof(int32_t)));
      // Appended rather than zero-filled and overwritten: every byte is
      // written once (the bytes are the largest share of a split batch).
      auto data = std::make_shared<Buffer>();
      data->Reserve(total);
      int32_t* dst_offsets = out->values->mutable_data_as<int32_t>();
      const uint8_t* src = total > 0 ? column.data->data() : nullptr;
      int32_t pos = 0;
      for (int64_t row_idx = 0; row_idx < length; ++row_idx) {
        int64_t index = indices[static_cast<size_t>(row_idx)];
        int32_t n = offsets[index + 1] - offsets[index];
        data->Append(src + offsets[index], n);
        pos += n;
        dst_offsets[row_idx + 1] = pos;
      }
      out->data = std::move(data);
      break;
    }
    case TypeId::kArray:
    case TypeId::kMap: {
      const int32_t* offsets = column.offsets();
      out->values = ZeroBuffer((length + 1) * static_cast<int64_t>(sizeof(int32_t)));
      int32_t* dst_offsets = out->values->mutable_data_as<int32_t>();
      std::vector<int64_t> child_indices;
      for (int64_t row_idx = 0; row_idx < length; ++row_idx) {
        int64_t index = indices[static_cast<size_t>(row_idx)];
        for (int64_t child_idx = offsets[index]; child_idx < offsets[index + 1]; ++child_idx) {
          child_indices.push_back(child_idx);
        }
        dst_offsets[row_idx + 1] = static_cast<int32_t>(child_indices.size());
      }
      out->children.push_back(TakeColumn(*column.children[0], child_indices));
      break;
    }
    case TypeId::kStruct:
    case TypeId::kVariant:
      for (const ColumnPtr& child : column.children) {
        out->children.push_back(TakeColumn(*child, indices));
      }
      break;
    default: {
      int width = type.byte_width();
      out->values = ZeroBuffer(length * width);
      GatherByWidth(column.values->data(), width, indices, out->values->mutable_data());
      break;
    }
  }
  return out;
}

ColumnPtr ConcatColumns(const std::vector<ColumnPtr>& all_columns) {
  if (all_columns.size() == 1) return all_columns[0];
  // Empty pieces contribute nothing and may lack buffers; leave them out.
  std::vector<ColumnPtr> columns;
  columns.reserve(all_columns.size());
  for (const ColumnPtr& column : all_columns) {
    if (column->length > 0) columns.push_back(column);
  }
  if (columns.empty()) return MakeNullColumn(all_columns[0]->type, 0);
  if (columns.size() == 1) return columns[0];
  auto out = std::make_shared<Column>();
  out->type = columns[0]->type;
  int64_t length = 0;
  bool any_nulls = false;
  for (const ColumnPtr& column : columns) {
    length += column->length;
    any_nulls = any_nulls || HasNulls(*column);
  }
  out->length = length;
  if (any_nulls) {
    BufferPtr bitmap = ZeroBuffer(BitmapBytes(length));
    int64_t pos = 0;
    for (const ColumnPtr& column : columns) {
      if (HasNulls(*column)) {
        CopyBits(column->validity->data(), 0, bitmap->mutable_data(), pos, column->length);
      } else {
        SetBitsRange(bitmap->mutable_data(), pos, column->length);
      }
      pos += column->length;
    }
    AdoptValidity(std::move(bitmap), length, out.get());
  }
  const DataType& type = *out->type;
  switch (type.id()) {
    case TypeId::kNull: break;
    case TypeId::kBoolean: {
      out->values = ZeroBuffer(BitmapBytes(length));
      int64_t pos = 0;
      for (const ColumnPtr& column : columns) {
        if (column->length > 0) {
          CopyBits(column->values->data(), 0, out->values->mutable_data(), pos, column->length);
        }
        pos += column->length;
      }
      break;
    }
    case TypeId::kString:
    case TypeId::kBinary: {
      out->values = ZeroBuffer((length + 1) * static_cast<int64_t>(sizeof(int32_t)));
      out->data = std::make_shared<Buffer>();
      int32_t* dst_offsets = out->values->mutable_data_as<int32_t>();
      int64_t row_pos = 0;
      for (const ColumnPtr& column : columns) {
        const int32_t* offsets = column->offsets();
        int32_t shift = static_cast<int32_t>(out->data->size()) - offsets[0];
        for (int64_t row_idx = 1; row_idx <= column->length; ++row_idx) {
          dst_offsets[row_pos + row_idx] = offsets[row_idx] + shift;
        }
        int64_t bytes = offsets[column->length] - offsets[0];
        if (bytes > 0) out->data->Append(column->data->data() + offsets[0], bytes);
        row_pos += column->length;
      }
      break;
    }
    case TypeId::kArray:
    case TypeId::kMap: {
      out->values = ZeroBuffer((length + 1) * static_cast<int64_t>(sizeof(int32_t)));
      int32_t* dst_offsets = out->values->mutable_data_as<int32_t>();
      std::vector<ColumnPtr> child_pieces;
      int64_t row_pos = 0;
      int32_t child_pos = 0;
      for (const ColumnPtr& column : columns) {
        const int32_t* offsets = column->offsets();
        int32_t shift = child_pos - offsets[0];
        for (int64_t row_idx = 1; row_idx <= column->length; ++row_idx) {
          dst_offsets[row_pos + row_idx] = offsets[row_idx] + shift;
        }
        child_pieces.push_back(
            ChildRange(column->children[0], offsets[0], offsets[column->length]));
        child_pos += offsets[column->length] - offsets[0];
        row_pos += column->length;
      }
      out->children.push_back(ConcatColumns(child_pieces));
      break;
    }
    case TypeId::kStruct:
    case TypeId::kVariant:
      for (size_t field_idx = 0; field_idx < static_cast<size_t>(type.num_fields()); ++field_idx) {
        std::vector<ColumnPtr> child_pieces;
        child_pieces.reserve(columns.size());
        for (const ColumnPtr& column : columns) child_pieces.push_back(column->children[field_idx]);
        out->children.push_back(ConcatColumns(child_pieces));
      }
      break;
    default: {
      out->values = std::make_shared<Buffer>();
      int64_t width = type.byte_width();
      out->values->Reserve(length * width);
      for (const ColumnPtr& column : columns) {
        if (column->length > 0) out->values->Append(column->values->data(), column->length * width);
      }
      break;
    }
  }
  return out;
}

RecordBatchPtr SliceBatch(const RecordBatch& batch, int64_t offset, int64_t length) {
  auto out = std::make_shared<RecordBatch>();
  out->schema = batch.schema;
  out->num_rows = length;
  out->columns.reserve(batch.columns.size());
  for (const ColumnPtr& column : batch.columns) {
    out->columns.push_back(SliceColumn(*column, offset, length));
  }
  return out;
}

RecordBatchPtr TakeBatch(const RecordBatch& batch, const std::vector<int64_t>& indices) {
  auto out = std::make_shared<RecordBatch>();
  out->schema = batch.schema;
  out->num_rows = static_cast<int64_t>(indices.size());
  out->columns.reserve(batch.columns.size());
  for (const ColumnPtr& column : batch.columns)
    out->columns.push_back(TakeColumn(*column, indices));
  return out;
}

RecordBatchPtr ConcatBatches(const std::vector<RecordBatchPtr>& batches) {
  if (batches.size() == 1) return batches[0];
  auto out = std::make_shared<RecordBatch>();
  out->schema = batches[0]->schema;
  for (const RecordBatchPtr& batch : batches) out->num_rows += batch->num_rows;
  for (int col_idx = 0; col_idx < batches[0]->num_columns(); ++col_idx) {
    std::vector<ColumnPtr> pieces;
    pieces.reserve(batches.size());
    for (const RecordBatchPtr& batch : batches) pieces.push_back(batch->column(col_idx));
    out->columns.push_back(ConcatColumns(pieces));
  }
  return out;
}

}  // namespace silt::columnar
