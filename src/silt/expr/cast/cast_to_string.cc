// CAST to STRING and BINARY.
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <type_traits>

#include "silt/base/json_writer.h"
#include "silt/columnar/builder.h"
#include "silt/columnar/temporal.h"
#include "silt/expr/cast/cast_internal.h"
#include "silt/expr/kernel/bind_session_internal.h"
#include "silt/expr/kernel/function_registry.h"
#include "silt/expr/kernel/kernel_util.h"
#include "silt/expr/kernel/type_util.h"
#include "silt/expr/parse/ast.h"
#include "silt/expr/value/decimal_util.h"

namespace silt::expr::cast_internal {

Result<ColumnPtr> CastToBinary(const CastCtx& c, const Column& in) {
  if (c.from.id() == TypeId::kString) {
    // Same bytes; only the type changes.
    auto out = std::make_shared<Column>(in);
    out->type = c.to;
    return ColumnPtr(std::move(out));
  }
  auto big_endian = [](auto v, std::string* text) {
    using T = decltype(v);
    auto u = static_cast<std::make_unsigned_t<T>>(v);
    for (int i = static_cast<int>(sizeof(T)) - 1; i >= 0; --i) {
      text->push_back(static_cast<char>((u >> (8 * i)) & 0xFF));
    }
  };
  switch (c.from.id()) {
    case TypeId::kByte: return MapToString(c, in, FixedReader<int8_t>(in), big_endian);
    case TypeId::kShort: return MapToString(c, in, FixedReader<int16_t>(in), big_endian);
    case TypeId::kInt: return MapToString(c, in, FixedReader<int32_t>(in), big_endian);
    case TypeId::kLong: return MapToString(c, in, FixedReader<int64_t>(in), big_endian);
    default: return Status::Internal("Unsupported cast to BINARY from ", TypeName(c.from));
  }
}

Result<ColumnPtr> CastToString(const CastCtx& c, const Column& in) {
  const CastOptions& options = c.options;
  switch (c.from.id()) {
    case TypeId::kBinary: {
      auto out = std::make_shared<Column>(in);
      out->type = c.to;
      return ColumnPtr(std::move(out));
    }
    case TypeId::kBoolean:
      return MapToString(c, in, BoolReader(in),
                         [](bool v, std::string* t) { t->append(v ? "true" : "false"); });
    case TypeId::kByte:
      return MapToString(c, in, FixedReader<int8_t>(in),
                         [](int8_t v, std::string* t) { AppendInt(v, t); });
    case TypeId::kShort:
      return MapToString(c, in, FixedReader<int16_t>(in),
                         [](int16_t v, std::string* t) { AppendInt(v, t); });
    case TypeId::kInt:
      return MapToString(c, in, FixedReader<int32_t>(in),
                         [](int32_t v, std::string* t) { AppendInt(v, t); });
    case TypeId::kLong:
      return MapToString(c, in, FixedReader<int64_t>(in),
                         [](int64_t v, std::string* t) { AppendInt(v, t); });
    case TypeId::kFloat:
      return MapToString(c, in, FixedReader<float>(in),
                         [](float v, std::string* t) { t->append(FormatFloatJava(v)); });
    case TypeId::kDouble:
      return MapToString(c, in, FixedReader<double>(in),
                         [](double v, std::string* t) { t->append(FormatDoubleJava(v)); });
    case TypeId::kDecimal: {
      int scale = c.from.scale();
      bool plain = options.ansi;
      return MapToString(c, in, FixedReader<int128>(in), [scale, plain](int128 v, std::string* t) {
        if (plain) {
          AppendDecimalPlain(v, scale, t);
        } else {
          AppendDecimalJava(v, scale, t);
        }
      });
    }
    case TypeId::kDate:
      return MapToString(c, in, FixedReader<int32_t>(in),
                         [](int32_t v, std::string* t) { t->append(columnar::FormatDate(v)); });
    case TypeId::kTimestamp: {
      if (const TimeZone* zone = ZoneWithRules(options)) {
        return MapToString(c, in, FixedReader<int64_t>(in), [zone](int64_t v, std::string* t) {
          AppendTimestampText(zone->UtcToLocal(v), t);
        });
      }
      int64_t offset = FixedOffsetMicros(options);
      return MapToString(c, in, FixedReader<int64_t>(in), [offset](int64_t v, std::string* t) {
        AppendTimestampText(SaturatingAdd(v, offset), t);
      });
    }
    case TypeId::kTimestampNtz:
      return MapToString(c, in, FixedReader<int64_t>(in),
                         [](int64_t v, std::string* t) { AppendTimestampText(v, t); });
    case TypeId::kStruct:
    case TypeId::kArray:
    case TypeId::kMap: {
      // Nested values print per row; they are rare on hot paths.
      ColumnBuilder builder(c.to);
      builder.Reserve(in.length);
      std::string text;
      for (int64_t row = 0; row < in.length; ++row) {
        if (in.IsNull(row)) {
          builder.AppendNull();
          continue;
        }
        text.clear();
        AppendValueText(in, row, options, &text);
        builder.AppendString(text);
      }
      return builder.Finish();
    }
    default: return Status::Internal("Unsupported cast to STRING from ", TypeName(c.from));
  }
}

}  // namespace silt::expr::cast_internal
