#include "silt/delta/zorder.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace silt::delta {

namespace {

// Sorts row indices by value (nulls first) with `less` on non-null rows and
// assigns each run of equal values the rank of its first row.
template <typename Less, typename Equal>
std::vector<uint32_t> RanksBy(const columnar::Column& column, int bits, Less less, Equal equal) {
  const int64_t rows = column.length;
  std::vector<int64_t> order(static_cast<size_t>(rows));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    const bool a_null = column.IsNull(a);
    const bool b_null = column.IsNull(b);
    if (a_null || b_null) return a_null && !b_null;
    return less(a, b);
  });
  std::vector<uint32_t> out(static_cast<size_t>(rows));
  const double scale = std::ldexp(1.0, bits) / static_cast<double>(std::max<int64_t>(rows, 1));
  const uint64_t max_code = (uint64_t{1} << bits) - 1;
  int64_t run_rank = 0;
  for (int64_t pos = 0; pos < rows; ++pos) {
    const int64_t row = order[static_cast<size_t>(pos)];
    if (pos > 0) {
      const int64_t prev = order[static_cast<size_t>(pos - 1)];
      const bool same =
          column.IsNull(row) ? column.IsNull(prev) : !column.IsNull(prev) && equal(prev, row);
      if (!same) run_rank = pos;
    }
    uint64_t code = static_cast<uint64_t>(static_cast<double>(run_rank) * scale);
    out[static_cast<size_t>(row)] = static_cast<uint32_t>(std::min(code, max_code));
  }
  return out;
}

template <typename T>
std::vector<uint32_t> RanksOfFixed(const columnar::Column& column, int bits) {
  const T* values = column.raw_values<T>();
  return RanksBy(
      column, bits, [values](int64_t a, int64_t b) { return values[a] < values[b]; },
      [values](int64_t a, int64_t b) { return values[a] == values[b]; });
}

// Floating point: NaN sorts after everything (Spark's ordering), -0.0 == 0.0.
template <typename T>
std::vector<uint32_t> RanksOfFloating(const columnar::Column& column, int bits) {
  const T* values = column.raw_values<T>();
  auto less = [values](int64_t a, int64_t b) {
    const T x = values[a];
    const T y = values[b];
    if (std::isnan(x)) return false;
    if (std::isnan(y)) return true;
    return x < y;
  };
  auto equal = [values](int64_t a, int64_t b) {
    const T x = values[a];
    const T y = values[b];
    return (std::isnan(x) && std::isnan(y)) || x == y;
  };
  return RanksBy(column, bits, less, equal);
}

}  // namespace

int ZOrderBitsPerColumn(int num_columns) {
  if (num_columns <= 0) return 0;
  return std::min(32, 64 / num_columns);
}

uint64_t InterleaveBits(std::span<const uint32_t> values, int bits_per_value) {
  uint64_t code = 0;
  for (int bit = bits_per_value - 1; bit >= 0; --bit) {
    for (uint32_t value : values) code = (code << 1) | ((value >> bit) & 1u);
  }
  return code;
}

Result<std::vector<uint32_t>> RankNormalize(const columnar::Column& column, int bits) {
  using columnar::TypeId;
  switch (column.type->id()) {
    case TypeId::kNull: return std::vector<uint32_t>(static_cast<size_t>(column.length), 0);
    case TypeId::kBoolean:
      return RanksBy(
          column, bits,
          [&column](int64_t a, int64_t b) { return !column.BoolValue(a) && column.BoolValue(b); },
          [&column](int64_t a, int64_t b) { return column.BoolValue(a) == column.BoolValue(b); });
    case TypeId::kByte: return RanksOfFixed<int8_t>(column, bits);
    case TypeId::kShort: return RanksOfFixed<int16_t>(column, bits);
    case TypeId::kInt:
    case TypeId::kDate: return RanksOfFixed<int32_t>(column, bits);
    case TypeId::kLong:
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: return RanksOfFixed<int64_t>(column, bits);
    case TypeId::kDecimal: return RanksOfFixed<__int128>(column, bits);
    case TypeId::kFloat: return RanksOfFloating<float>(column, bits);
    case TypeId::kDouble: return RanksOfFloating<double>(column, bits);
    case TypeId::kString:
    case TypeId::kBinary:
      // Byte order is UTF-8 code point order, which is Spark's string order.
      return RanksBy(
          column, bits,
          [&column](int64_t a, int64_t b) { return column.StringValue(a) < column.StringValue(b); },
          [&column](int64_t a, int64_t b) {
            return column.StringValue(a) == column.StringValue(b);
          });
    case TypeId::kStruct:
    case TypeId::kArray:
    case TypeId::kMap:
    case TypeId::kVariant: break;
  }
  return Status::NotSupported("Z-ordering by a column of type ", column.type->ToDdl(),
                              " (only primitive columns can be Z-ordered)");
}

Result<std::vector<int64_t>> ZOrderPermutation(const columnar::RecordBatch& batch,
                                               const std::vector<std::string>& columns) {
  const int bits = ZOrderBitsPerColumn(static_cast<int>(columns.size()));
  std::vector<std::vector<uint32_t>> normalized;
  normalized.reserve(columns.size());
  for (const std::string& name : columns) {
    columnar::ColumnPtr column = batch.GetColumn(name);
    if (column == nullptr) {
      return Status::InvalidArgument("Z-order column '", name, "' is not in the table");
    }
    SILT_ASSIGN_OR_RETURN_CTX(std::vector<uint32_t> ranks, RankNormalize(*column, bits),
                              "Z-order column '", name, "'");
    normalized.push_back(std::move(ranks));
  }
  const int64_t rows = batch.num_rows;
  std::vector<uint64_t> codes(static_cast<size_t>(rows));
  std::vector<uint32_t> row_values(columns.size());
  for (int64_t row_idx = 0; row_idx < rows; ++row_idx) {
    for (size_t col_idx = 0; col_idx < columns.size(); ++col_idx) {
      row_values[col_idx] = normalized[col_idx][static_cast<size_t>(row_idx)];
    }
    codes[static_cast<size_t>(row_idx)] = InterleaveBits(row_values, bits);
  }
  std::vector<int64_t> order(static_cast<size_t>(rows));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&codes](int64_t a, int64_t b) {
    return codes[static_cast<size_t>(a)] < codes[static_cast<size_t>(b)];
  });
  return order;
}

}  // namespace silt::delta
