#include "silt/expr/kernel/kernel_util.h"

#include <algorithm>
#include <cstring>

#include "silt/base/bits.h"
#include "silt/columnar/builder.h"

namespace silt::expr {

BufferPtr AndBitmaps(const Buffer* a, const Buffer* b, int64_t length, int64_t* null_count) {
  *null_count = 0;
  if (a == nullptr && b == nullptr) return nullptr;
  int64_t bytes = BitmapBytes(length);
  auto out = std::make_shared<Buffer>();
  out->Resize(std::max<int64_t>(1, bytes));
  uint8_t* dst = out->mutable_data();
  if (a != nullptr && b != nullptr) {
    const uint8_t* pa = a->data();
    const uint8_t* pb = b->data();
    for (int64_t i = 0; i < bytes; ++i) dst[i] = pa[i] & pb[i];
  } else {
    if (bytes > 0) std::memcpy(dst, (a != nullptr ? a : b)->data(), static_cast<size_t>(bytes));
  }
  *null_count = length - CountSetBits(dst, length);
  return out;
}

void ValidityOut::EnsureBuffer() {
  if (bits_ != nullptr) return;
  buffer_ = std::make_shared<Buffer>();
  // At least one byte, so the bitmap pointer is never null (empty batches).
  buffer_->Resize(std::max<int64_t>(1, BitmapBytes(length_)));
  bits_ = buffer_->mutable_data();
  std::memset(bits_, 0xFF, static_cast<size_t>(BitmapBytes(length_)));
}

bool ValidityOut::InitFromArgs(std::span<const Datum> args) {
  for (const Datum& d : args) {
    if (!AndArg(*d.column, d.constant)) return false;
  }
  return true;
}

bool ValidityOut::AndArg(const columnar::Column& c, bool constant) {
  if (c.validity == nullptr || c.null_count == 0) return true;
  if (constant) {
    if (!columnar::GetBit(c.validity->data(), 0)) {
      SetAllNull();
      return false;
    }
    return true;
  }
  EnsureBuffer();
  const uint8_t* src = c.validity->data();
  int64_t bytes = BitmapBytes(length_);
  for (int64_t i = 0; i < bytes; ++i) bits_[i] &= src[i];
  return true;
}

void ValidityOut::InitFromColumn(const columnar::Column& column) {
  if (column.validity == nullptr || column.null_count == 0) return;
  EnsureBuffer();
  std::memcpy(bits_, column.validity->data(), static_cast<size_t>(BitmapBytes(length_)));
}

void ValidityOut::FinishInto(columnar::Column* column) {
  if (bits_ == nullptr) {
    column->null_count = 0;
    return;
  }
  int64_t nulls = length_ - CountSetBits(bits_, length_);
  column->null_count = nulls;
  if (nulls > 0) column->validity = buffer_;
}

columnar::ColumnPtr NullColumn(const columnar::TypePtr& type, int64_t length) {
  return columnar::MakeNullColumn(type, length);
}

Result<columnar::ColumnPtr> GatherChoice(const columnar::TypePtr& type, std::span<const Datum> args,
                                         const std::vector<int16_t>& choice, int64_t n) {
  ValidityOut validity(n);
  auto source = [&](int64_t row, const Datum** d) -> int64_t {
    int c = choice[static_cast<size_t>(row)];
    if (c < 0) return -1;
    *d = &args[static_cast<size_t>(c)];
    int64_t src = (*d)->constant ? 0 : row;
    return (*d)->column->IsValid(src) ? src : -1;
  };
  switch (type->id()) {
    case columnar::TypeId::kNull: return NullColumn(type, n);
    case columnar::TypeId::kBoolean: {
      BoolWriter out(n);
      for (int64_t row = 0; row < n; ++row) {
        const Datum* d = nullptr;
        int64_t src = source(row, &d);
        if (src < 0) {
          validity.SetNull(row);
          out.Set(row, false);
          continue;
        }
        out.Set(row, d->column->BoolValue(src));
      }
      return out.Finish(type, &validity);
    }
    case columnar::TypeId::kString:
    case columnar::TypeId::kBinary: {
      columnar::ColumnBuilder builder(type);
      builder.Reserve(n);
      for (int64_t row = 0; row < n; ++row) {
        const Datum* d = nullptr;
        int64_t src = source(row, &d);
        if (src < 0) {
          builder.AppendNull();
          continue;
        }
        builder.AppendString(d->column->StringValue(src));
      }
      return builder.Finish();
    }
    default: {
      const size_t width = static_cast<size_t>(type->byte_width());
      if (width == 0) {
        return Status::NotSupported("Choosing between ", type->ToDdl(),
                                    " values (nested types are a later issue)");
      }
      auto values = std::make_shared<Buffer>();
      values->Resize(n * static_cast<int64_t>(width));
      uint8_t* dst = values->mutable_data();
      std::memset(dst, 0, static_cast<size_t>(n) * width);
      for (int64_t row = 0; row < n; ++row) {
        const Datum* d = nullptr;
        int64_t src = source(row, &d);
        if (src < 0) {
          validity.SetNull(row);
          continue;
        }
        std::memcpy(dst + static_cast<size_t>(row) * width,
                    d->column->values->data() + static_cast<size_t>(src) * width, width);
      }
      auto col = std::make_shared<columnar::Column>();
      col->type = type;
      col->length = n;
      col->values = std::move(values);
      validity.FinishInto(col.get());
      return columnar::ColumnPtr(std::move(col));
    }
  }
}

}  // namespace silt::expr
