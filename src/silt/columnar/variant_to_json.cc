// A variant as JSON text (variant.h), as Spark's Variant.toJson.
#include <cmath>
#include <string>

#include "silt/base/json_writer.h"
#include "silt/base/utf8.h"
#include "silt/columnar/temporal.h"
#include "silt/columnar/variant.h"
#include "silt/columnar/variant_encoding_internal.h"

namespace silt::columnar {

namespace {

void AppendQuotedEscaped(std::string_view s, std::string* out) {
  out->push_back('"');
  if (IsValidUtf8(s)) {
    AppendJsonEscaped(out, s);
  } else {
    AppendJsonEscaped(out, ReplaceInvalidUtf8(s));
  }
  out->push_back('"');
}

void AppendTwo(int v, std::string* out) {
  out->push_back(static_cast<char>('0' + v / 10));
  out->push_back(static_cast<char>('0' + v % 10));
}

void AppendBase64(std::string_view bytes, std::string* out) {
  static const char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t v = (static_cast<uint8_t>(bytes[i]) << 16) |
                       (static_cast<uint8_t>(bytes[i + 1]) << 8) |
                       static_cast<uint8_t>(bytes[i + 2]);
    out->push_back(kAlphabet[(v >> 18) & 63]);
    out->push_back(kAlphabet[(v >> 12) & 63]);
    out->push_back(kAlphabet[(v >> 6) & 63]);
    out->push_back(kAlphabet[v & 63]);
  }
  const size_t rest = bytes.size() - i;
  if (rest == 1) {
    const uint32_t v = static_cast<uint8_t>(bytes[i]) << 16;
    out->push_back(kAlphabet[(v >> 18) & 63]);
    out->push_back(kAlphabet[(v >> 12) & 63]);
    out->append("==");
  } else if (rest == 2) {
    const uint32_t v =
        (static_cast<uint8_t>(bytes[i]) << 16) | (static_cast<uint8_t>(bytes[i + 1]) << 8);
    out->push_back(kAlphabet[(v >> 18) & 63]);
    out->push_back(kAlphabet[(v >> 12) & 63]);
    out->push_back(kAlphabet[(v >> 6) & 63]);
    out->push_back('=');
  }
}

void AppendUuidText(std::string_view b, std::string* out) {
  static const char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out->push_back('-');
    const uint8_t c = static_cast<uint8_t>(b[i]);
    out->push_back(kHex[c >> 4]);
    out->push_back(kHex[c & 15]);
  }
}

bool AppendJsonRec(const VariantMetadata& metadata, const VariantValue& value,
                   const VariantJsonOptions& options, std::string* out, int depth) {
  if (depth > kMaxVariantDepth) return false;
  switch (value.type()) {
    case VariantType::kInvalid: return false;
    case VariantType::kNull: out->append("null"); return true;
    case VariantType::kBoolean: out->append(value.GetBoolean() ? "true" : "false"); return true;
    case VariantType::kLong: out->append(std::to_string(value.GetLong())); return true;
    case VariantType::kDouble: {
      const double d = value.GetDouble();
      // Jackson's writeNumber quotes the non-finite values.
      if (!std::isfinite(d)) {
        out->push_back('"');
        AppendDoubleJava(out, d);
        out->push_back('"');
      } else {
        AppendDoubleJava(out, d);
      }
      return true;
    }
    case VariantType::kFloat: {
      const float f = value.GetFloat();
      if (!std::isfinite(f)) out->push_back('"');
      out->append(FormatFloatJava(f));
      if (!std::isfinite(f)) out->push_back('"');
      return true;
    }
    case VariantType::kDecimal: {
      __int128 unscaled = 0;
      int scale = 0;
      value.GetDecimal(&unscaled, &scale);
      StripTrailingZeros(&unscaled, &scale);
      AppendDecimalPlainText(unscaled, scale, out);
      return true;
    }
    case VariantType::kString: AppendQuotedEscaped(value.GetString(), out); return true;
    case VariantType::kDate:
      out->push_back('"');
      out->append(FormatDate(static_cast<int32_t>(value.GetLong())));
      out->push_back('"');
      return true;
    case VariantType::kTimestamp: {
      const int64_t micros = value.GetLong();
      const int32_t offset =
          options.offset_seconds != nullptr ? options.offset_seconds(options.zone, micros) : 0;
      int64_t local = 0;
      if (__builtin_add_overflow(micros, int64_t{offset} * kMicrosPerSecond, &local)) {
        local = micros;
      }
      out->push_back('"');
      AppendTimestampText(local, out);
      const int32_t a = offset < 0 ? -offset : offset;
      out->push_back(offset < 0 ? '-' : '+');
      AppendTwo(a / 3600, out);
      out->push_back(':');
      AppendTwo(a / 60 % 60, out);
      out->push_back('"');
      return true;
    }
    case VariantType::kTimestampNtz:
      out->push_back('"');
      AppendTimestampText(value.GetLong(), out);
      out->push_back('"');
      return true;
    case VariantType::kBinary:
      out->push_back('"');
      AppendBase64(value.GetBinary(), out);
      out->push_back('"');
      return true;
    case VariantType::kUuid:
      out->push_back('"');
      AppendUuidText(value.GetUuid(), out);
      out->push_back('"');
      return true;
    case VariantType::kObject: {
      VariantValue::Container c;
      value.GetContainer(&c);
      out->push_back('{');
      for (uint32_t i = 0; i < c.num_elements; ++i) {
        uint32_t id = 0;
        VariantValue child;
        std::string_view key;
        if (!value.ObjectField(c, i, &id, &child) || !metadata.Key(id, &key)) return false;
        if (i > 0) out->push_back(',');
        AppendQuotedEscaped(key, out);
        out->push_back(':');
        if (!AppendJsonRec(metadata, child, options, out, depth + 1)) return false;
      }
      out->push_back('}');
      return true;
    }
    case VariantType::kArray: {
      VariantValue::Container c;
      value.GetContainer(&c);
      out->push_back('[');
      for (uint32_t i = 0; i < c.num_elements; ++i) {
        VariantValue child;
        if (!value.ArrayElement(c, i, &child)) return false;
        if (i > 0) out->push_back(',');
        if (!AppendJsonRec(metadata, child, options, out, depth + 1)) return false;
      }
      out->push_back(']');
      return true;
    }
  }
  return false;
}

}  // namespace

bool AppendVariantJson(const VariantMetadata& metadata, const VariantValue& value,
                       const VariantJsonOptions& options, std::string* out) {
  return AppendJsonRec(metadata, value, options, out, 0);
}

}  // namespace silt::columnar
