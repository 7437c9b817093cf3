#include "silt/cli/value_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "silt/base/utf8.h"
#include "silt/columnar/temporal.h"
#include "silt/columnar/variant.h"

namespace silt::cli {

namespace {

using columnar::Column;
using columnar::TypeId;

constexpr int64_t kMicrosPerMilli = 1000;

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

struct CivilTime {
  columnar::CivilDate date;
  int hour;
  int minute;
  int second;
  int64_t micros;  // 0..999999
};

CivilTime SplitMicros(int64_t micros) {
  int32_t days = columnar::DaysFromMicros(micros);
  int64_t in_day = micros - static_cast<int64_t>(days) * columnar::kMicrosPerDay;
  CivilTime t;
  t.date = columnar::CivilFromDays(days);
  int64_t secs = in_day / columnar::kMicrosPerSecond;
  t.micros = in_day % columnar::kMicrosPerSecond;
  t.hour = static_cast<int>(secs / 3600);
  t.minute = static_cast<int>((secs / 60) % 60);
  t.second = static_cast<int>(secs % 60);
  return t;
}

std::string FormatYear(int32_t year) {
  if (year < 0) return fmt::format("-{:04d}", -year);
  return fmt::format("{:04d}", year);
}

// "yyyy-MM-dd<sep>HH:mm:ss" of a split timestamp.
std::string FormatDateTime(const CivilTime& t, char sep) {
  return fmt::format("{}-{:02d}-{:02d}{}{:02d}:{:02d}:{:02d}", FormatYear(t.date.year),
                     t.date.month, t.date.day, sep, t.hour, t.minute, t.second);
}

std::string FormatNtzJsonTimestamp(int64_t micros) {
  CivilTime t = SplitMicros(FloorDiv(micros, kMicrosPerMilli) * kMicrosPerMilli);
  return fmt::format("{}.{:03d}", FormatDateTime(t, 'T'), t.micros / kMicrosPerMilli);
}

std::string FormatExactNtzTimestamp(int64_t micros) {
  CivilTime t = SplitMicros(micros);
  return fmt::format("{}.{:06d}", FormatDateTime(t, 'T'), t.micros);
}

// The shortest round-trip digits of `v` (std::to_chars in scientific form)
// laid out as Python's repr lays them out: plain for decimal exponents
// -4..15 ("0.0001", "123.25", "9007199254740994.0"), else scientific
// ("1e-05", "1.739274941520501e+18"); an integral plain value keeps ".0" so
// that a reader typing JSON numbers by their form keeps a float.
template <typename T>
std::string ShortestText(T v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), v, std::chars_format::scientific);
  if (ec != std::errc()) return FormatDoubleJava(static_cast<double>(v));
  std::string_view sci(buffer, static_cast<size_t>(end - buffer));
  std::string out;
  if (!sci.empty() && sci.front() == '-') {
    out += '-';
    sci.remove_prefix(1);
  }
  const size_t e_pos = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e_pos)) {
    if (c != '.') digits += c;
  }
  const int exponent = std::atoi(std::string(sci.substr(e_pos + 1)).c_str());
  if (exponent < -4 || exponent >= 16) {
    out += digits[0];
    if (digits.size() > 1) {
      out += '.';
      out += digits.substr(1);
    }
    out += exponent < 0 ? "e-" : "e+";
    out += fmt::format("{:02d}", exponent < 0 ? -exponent : exponent);
    return out;
  }
  if (exponent < 0) {
    out += "0.";
    out += std::string(static_cast<size_t>(-exponent - 1), '0');
    out += digits;
    return out;
  }
  const auto int_digits = static_cast<size_t>(exponent) + 1;
  if (digits.size() <= int_digits) {
    out += digits;
    out += std::string(int_digits - digits.size(), '0');
    out += ".0";
  } else {
    out += digits.substr(0, int_digits);
    out += '.';
    out += digits.substr(int_digits);
  }
  return out;
}

// A double or float value in `style`, non-finite ones as JSON strings.
template <typename T>
void WriteJsonFloating(T v, ValueStyle style, JsonWriter* writer) {
  std::string text;
  if (style == ValueStyle::kExact) {
    text = ShortestText(v);
  } else if constexpr (std::is_same_v<T, float>) {
    text = FormatFloatJava(v);
  } else {
    text = FormatDoubleJava(v);
  }
  if (std::isfinite(v)) {
    writer->Raw(text);
  } else {
    writer->String(text);
  }
}

// Shared by the JSON and CSV writers: a double as Jackson / Java print it.
std::string JavaDouble(double v) { return FormatDoubleJava(v); }

__int128 DecimalValue(const Column& column, int64_t row_idx) {
  __int128 v;
  std::memcpy(&v, column.values->data() + row_idx * 16, sizeof(v));
  return v;
}

std::string UnsignedDigits(unsigned __int128 v) {
  if (v == 0) return "0";
  std::string digits;
  while (v > 0) {
    digits.push_back(static_cast<char>('0' + static_cast<int>(v % 10)));
    v /= 10;
  }
  std::reverse(digits.begin(), digits.end());
  return digits;
}

std::string PlainDecimal(__int128 unscaled, int scale) {
  bool negative = unscaled < 0;
  unsigned __int128 magnitude = negative ? static_cast<unsigned __int128>(-(unscaled + 1)) + 1
                                         : static_cast<unsigned __int128>(unscaled);
  std::string digits = UnsignedDigits(magnitude);
  std::string out = negative ? "-" : "";
  if (scale <= 0) return out + digits;
  size_t s = static_cast<size_t>(scale);
  if (digits.size() <= s) digits.insert(0, s - digits.size() + 1, '0');
  out += digits.substr(0, digits.size() - s);
  out += '.';
  out += digits.substr(digits.size() - s);
  return out;
}

std::string EscapeShowMetaCharacters(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\f': out += "\\f"; break;
      case '\b': out += "\\b"; break;
      case '\v': out += "\\v"; break;
      case '\a': out += "\\a"; break;
      default: out += c;
    }
  }
  return out;
}

// Number of characters (UTF-8 code points) in `s`.
int64_t CharLength(std::string_view s) {
  int64_t n = 0;
  for (char c : s) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  }
  return n;
}

// The first `chars` characters of `s`.
std::string_view CharPrefix(std::string_view s, int64_t chars) {
  int64_t seen = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
      if (seen == chars) return s.substr(0, i);
      ++seen;
    }
  }
  return s;
}

// A variant's JSON text as Spark's Variant.toJson writes it (timestamps in
// UTC); "null" for bytes that are not a variant.
std::string VariantJson(const Column& column, int64_t row_idx) {
  columnar::VariantMetadata metadata;
  std::string out;
  if (!metadata.Init(column.children[0]->StringValue(row_idx)) ||
      !columnar::AppendVariantJson(metadata,
                                   columnar::VariantValue(column.children[1]->StringValue(row_idx)),
                                   columnar::VariantJsonOptions{}, &out)) {
    return "null";
  }
  return out;
}

// CAST(value AS STRING) without the top-level NULL handling; nested NULLs are
// "NULL" as in Spark 3.5's show().
void AppendShowText(const Column& column, int64_t row_idx, std::string* out) {
  if (column.IsNull(row_idx)) {
    *out += "NULL";
    return;
  }
  switch (column.type->id()) {
    case TypeId::kNull: *out += "NULL"; break;
    case TypeId::kBoolean: *out += column.BoolValue(row_idx) ? "true" : "false"; break;
    case TypeId::kByte: *out += std::to_string(column.Value<int8_t>(row_idx)); break;
    case TypeId::kShort: *out += std::to_string(column.Value<int16_t>(row_idx)); break;
    case TypeId::kInt: *out += std::to_string(column.Value<int32_t>(row_idx)); break;
    case TypeId::kLong: *out += std::to_string(column.Value<int64_t>(row_idx)); break;
    case TypeId::kFloat: *out += FormatFloatJava(column.Value<float>(row_idx)); break;
    case TypeId::kDouble: *out += JavaDouble(column.Value<double>(row_idx)); break;
    case TypeId::kDecimal:
      *out += PlainDecimal(DecimalValue(column, row_idx), column.type->scale());
      break;
    case TypeId::kString: *out += column.StringValue(row_idx); break;
    case TypeId::kBinary: {
      std::string_view bytes = column.StringValue(row_idx);
      *out += '[';
      for (size_t i = 0; i < bytes.size(); ++i) {
        if (i > 0) *out += ' ';
        *out += fmt::format("{:02X}", static_cast<unsigned char>(bytes[i]));
      }
      *out += ']';
      break;
    }
    case TypeId::kDate: *out += columnar::FormatDate(column.Value<int32_t>(row_idx)); break;
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: *out += FormatShowTimestamp(column.Value<int64_t>(row_idx)); break;
    case TypeId::kVariant: *out += VariantJson(column, row_idx); break;
    case TypeId::kStruct: {
      *out += '{';
      for (int field_idx = 0; field_idx < column.type->num_fields(); ++field_idx) {
        if (field_idx > 0) *out += ", ";
        AppendShowText(*column.children[static_cast<size_t>(field_idx)], row_idx, out);
      }
      *out += '}';
      break;
    }
    case TypeId::kArray: {
      const int32_t* offsets = column.offsets();
      *out += '[';
      for (int32_t elem_idx = offsets[row_idx]; elem_idx < offsets[row_idx + 1]; ++elem_idx) {
        if (elem_idx > offsets[row_idx]) *out += ", ";
        AppendShowText(*column.children[0], elem_idx, out);
      }
      *out += ']';
      break;
    }
    case TypeId::kMap: {
      const int32_t* offsets = column.offsets();
      const Column& entries = *column.children[0];
      *out += '{';
      for (int32_t entry_idx = offsets[row_idx]; entry_idx < offsets[row_idx + 1]; ++entry_idx) {
        if (entry_idx > offsets[row_idx]) *out += ", ";
        AppendShowText(*entries.children[0], entry_idx, out);
        *out += " -> ";
        AppendShowText(*entries.children[1], entry_idx, out);
      }
      *out += '}';
      break;
    }
  }
}

// JSON output is UTF-8: a string that is not (a corrupt record, a
// binary-to-string cast) is written with U+FFFD for each bad sequence, as
// Spark's to_json and df.write.json write it.
std::string JsonText(std::string_view s) {
  return IsValidUtf8(s) ? std::string(s) : ReplaceInvalidUtf8(s);
}

// Map keys in JSON are strings: the key's text form.
std::string JsonMapKey(const Column& keys, int64_t row_idx) {
  if (keys.type->id() == TypeId::kString) return JsonText(keys.StringValue(row_idx));
  std::string text;
  AppendShowText(keys, row_idx, &text);
  return JsonText(text);
}

}  // namespace

std::string FormatDecimal(__int128 unscaled, int scale) {
  // Java's BigDecimal.toString: plain unless the adjusted exponent is below
  // -6 (scale >= 0 here, so scientific notation only for tiny magnitudes).
  bool negative = unscaled < 0;
  unsigned __int128 magnitude = negative ? static_cast<unsigned __int128>(-(unscaled + 1)) + 1
                                         : static_cast<unsigned __int128>(unscaled);
  std::string digits = UnsignedDigits(magnitude);
  int64_t adjusted = -static_cast<int64_t>(scale) + static_cast<int64_t>(digits.size()) - 1;
  if (scale <= 0 || adjusted >= -6) return PlainDecimal(unscaled, scale);
  std::string out = negative ? "-" : "";
  out += digits[0];
  if (digits.size() > 1) {
    out += '.';
    out += digits.substr(1);
  }
  out += fmt::format("E{}", adjusted);
  return out;
}

std::string Base64Encode(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t n = (static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])) << 16) |
                 (static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8) |
                 static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 2]));
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += kAlphabet[n & 63];
  }
  size_t rest = bytes.size() - i;
  if (rest > 0) {
    uint32_t n = static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])) << 16;
    if (rest == 2) n |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += rest == 2 ? kAlphabet[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::string FormatJsonTimestamp(int64_t micros) {
  CivilTime t = SplitMicros(FloorDiv(micros, kMicrosPerMilli) * kMicrosPerMilli);
  return fmt::format("{}.{:03d}Z", FormatDateTime(t, 'T'), t.micros / kMicrosPerMilli);
}

std::string FormatExactTimestamp(int64_t micros) {
  CivilTime t = SplitMicros(micros);
  return fmt::format("{}.{:06d}Z", FormatDateTime(t, 'T'), t.micros);
}

std::string FormatShortestDouble(double v) { return ShortestText(v); }
std::string FormatShortestFloat(float v) { return ShortestText(v); }

std::string FormatShowTimestamp(int64_t micros) {
  CivilTime t = SplitMicros(micros);
  std::string out = FormatDateTime(t, ' ');
  if (t.micros != 0) {
    std::string fraction = fmt::format("{:06d}", t.micros);
    while (!fraction.empty() && fraction.back() == '0') fraction.pop_back();
    out += '.';
    out += fraction;
  }
  return out;
}

void WriteJsonValue(const Column& column, int64_t row_idx, JsonWriter* writer, ValueStyle style) {
  switch (column.type->id()) {
    case TypeId::kNull: writer->Null(); break;
    case TypeId::kBoolean: writer->Bool(column.BoolValue(row_idx)); break;
    case TypeId::kByte: writer->Int(column.Value<int8_t>(row_idx)); break;
    case TypeId::kShort: writer->Int(column.Value<int16_t>(row_idx)); break;
    case TypeId::kInt: writer->Int(column.Value<int32_t>(row_idx)); break;
    case TypeId::kLong: writer->Int(column.Value<int64_t>(row_idx)); break;
    case TypeId::kFloat: WriteJsonFloating(column.Value<float>(row_idx), style, writer); break;
    case TypeId::kDouble: WriteJsonFloating(column.Value<double>(row_idx), style, writer); break;
    case TypeId::kDecimal:
      writer->Raw(style == ValueStyle::kExact
                      ? PlainDecimal(DecimalValue(column, row_idx), column.type->scale())
                      : FormatDecimal(DecimalValue(column, row_idx), column.type->scale()));
      break;
    case TypeId::kString: writer->String(JsonText(column.StringValue(row_idx))); break;
    case TypeId::kBinary: writer->String(Base64Encode(column.StringValue(row_idx))); break;
    case TypeId::kDate: writer->String(columnar::FormatDate(column.Value<int32_t>(row_idx))); break;
    case TypeId::kTimestamp: {
      const int64_t micros = column.Value<int64_t>(row_idx);
      writer->String(style == ValueStyle::kExact ? FormatExactTimestamp(micros)
                                                 : FormatJsonTimestamp(micros));
      break;
    }
    case TypeId::kTimestampNtz: {
      const int64_t micros = column.Value<int64_t>(row_idx);
      writer->String(style == ValueStyle::kExact ? FormatExactNtzTimestamp(micros)
                                                 : FormatNtzJsonTimestamp(micros));
      break;
    }
    case TypeId::kVariant: writer->Raw(VariantJson(column, row_idx)); break;
    case TypeId::kStruct: {
      writer->BeginObject();
      for (int field_idx = 0; field_idx < column.type->num_fields(); ++field_idx) {
        const Column& child = *column.children[static_cast<size_t>(field_idx)];
        if (child.IsNull(row_idx)) continue;
        writer->Key(column.type->field(field_idx).name);
        WriteJsonValue(child, row_idx, writer, style);
      }
      writer->EndObject();
      break;
    }
    case TypeId::kArray: {
      const int32_t* offsets = column.offsets();
      const Column& elements = *column.children[0];
      writer->BeginArray();
      for (int32_t elem_idx = offsets[row_idx]; elem_idx < offsets[row_idx + 1]; ++elem_idx) {
        if (elements.IsNull(elem_idx)) {
          writer->Null();
        } else {
          WriteJsonValue(elements, elem_idx, writer, style);
        }
      }
      writer->EndArray();
      break;
    }
    case TypeId::kMap: {
      const int32_t* offsets = column.offsets();
      const Column& entries = *column.children[0];
      const Column& keys = *entries.children[0];
      const Column& values = *entries.children[1];
      writer->BeginObject();
      for (int32_t entry_idx = offsets[row_idx]; entry_idx < offsets[row_idx + 1]; ++entry_idx) {
        writer->Key(JsonMapKey(keys, entry_idx));
        if (values.IsNull(entry_idx)) {
          writer->Null();
        } else {
          WriteJsonValue(values, entry_idx, writer, style);
        }
      }
      writer->EndObject();
      break;
    }
  }
}

std::string RowToJson(const columnar::RecordBatch& batch, int64_t row_idx, ValueStyle style) {
  JsonWriter writer;
  writer.BeginObject();
  for (int col_idx = 0; col_idx < batch.num_columns(); ++col_idx) {
    const Column& column = *batch.column(col_idx);
    if (column.IsNull(row_idx)) continue;
    writer.Key(batch.schema->field(col_idx).name);
    WriteJsonValue(column, row_idx, &writer, style);
  }
  writer.EndObject();
  return writer.Take();
}

std::string CsvQuote(std::string_view field) {
  if (field.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(field);
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string CsvHeader(const columnar::Schema& schema) {
  std::string out;
  for (int col_idx = 0; col_idx < schema.num_fields(); ++col_idx) {
    if (col_idx > 0) out += ',';
    out += CsvQuote(schema.field(col_idx).name);
  }
  return out;
}

std::string RowToCsv(const columnar::RecordBatch& batch, int64_t row_idx, ValueStyle style) {
  const bool exact = style == ValueStyle::kExact;
  std::string out;
  for (int col_idx = 0; col_idx < batch.num_columns(); ++col_idx) {
    if (col_idx > 0) out += ',';
    const Column& column = *batch.column(col_idx);
    if (column.IsNull(row_idx)) continue;
    switch (column.type->id()) {
      case TypeId::kString: {
        std::string_view s = column.StringValue(row_idx);
        // Spark writes an empty string as "" so that it differs from NULL.
        out += s.empty() ? std::string("\"\"") : CsvQuote(s);
        break;
      }
      case TypeId::kBinary: out += Base64Encode(column.StringValue(row_idx)); break;
      case TypeId::kDecimal:
        out += exact ? PlainDecimal(DecimalValue(column, row_idx), column.type->scale())
                     : FormatDecimal(DecimalValue(column, row_idx), column.type->scale());
        break;
      case TypeId::kFloat:
        out += exact ? ShortestText(column.Value<float>(row_idx))
                     : FormatFloatJava(column.Value<float>(row_idx));
        break;
      case TypeId::kDouble:
        out += exact ? ShortestText(column.Value<double>(row_idx))
                     : JavaDouble(column.Value<double>(row_idx));
        break;
      case TypeId::kTimestamp:
        out += exact ? FormatExactTimestamp(column.Value<int64_t>(row_idx))
                     : FormatJsonTimestamp(column.Value<int64_t>(row_idx));
        break;
      case TypeId::kTimestampNtz:
        out += exact ? FormatExactNtzTimestamp(column.Value<int64_t>(row_idx))
                     : FormatNtzJsonTimestamp(column.Value<int64_t>(row_idx));
        break;
      case TypeId::kStruct:
      case TypeId::kArray:
      case TypeId::kMap:
      case TypeId::kVariant: {
        JsonWriter writer;
        WriteJsonValue(column, row_idx, &writer, style);
        out += CsvQuote(writer.str());
        break;
      }
      default: {
        std::string text;
        AppendShowText(column, row_idx, &text);
        out += text;
      }
    }
  }
  return out;
}

std::string ShowCell(const Column& column, int64_t row_idx) {
  std::string text;
  AppendShowText(column, row_idx, &text);
  return EscapeShowMetaCharacters(text);
}

TablePrinter::TablePrinter(std::vector<std::string> header, int truncate) : truncate_(truncate) {
  header_.reserve(header.size());
  for (auto& name : header) header_.push_back(Truncate(EscapeShowMetaCharacters(name)));
}

std::string TablePrinter::Truncate(std::string cell) const {
  if (truncate_ <= 0 || CharLength(cell) <= truncate_) return cell;
  // Spark shows no ellipsis when the width leaves no room for one.
  if (truncate_ < 4) return std::string(CharPrefix(cell, truncate_));
  return std::string(CharPrefix(cell, truncate_ - 3)) + "...";
}

void TablePrinter::AddRow(const columnar::RecordBatch& batch, int64_t row_idx) {
  std::vector<std::string> cells;
  cells.reserve(header_.size());
  for (int col_idx = 0; col_idx < batch.num_columns(); ++col_idx) {
    cells.push_back(Truncate(ShowCell(*batch.column(col_idx), row_idx)));
  }
  rows_.push_back(std::move(cells));
}

std::string TablePrinter::Render(bool has_more) const {
  constexpr int64_t kMinimumColWidth = 3;
  std::vector<int64_t> widths(header_.size(), kMinimumColWidth);
  auto widen = [&](const std::vector<std::string>& cells) {
    for (size_t col_idx = 0; col_idx < cells.size(); ++col_idx) {
      widths[col_idx] = std::max(widths[col_idx], CharLength(cells[col_idx]));
    }
  };
  widen(header_);
  for (const auto& row : rows_) widen(row);

  std::string sep = "+";
  for (int64_t w : widths) sep += std::string(static_cast<size_t>(w), '-') + "+";
  sep += '\n';

  auto render_row = [&](const std::vector<std::string>& cells, std::string* out) {
    *out += '|';
    for (size_t col_idx = 0; col_idx < cells.size(); ++col_idx) {
      std::string pad(static_cast<size_t>(widths[col_idx] - CharLength(cells[col_idx])), ' ');
      if (truncate_ > 0) {
        *out += pad + cells[col_idx];
      } else {
        *out += cells[col_idx] + pad;
      }
      *out += '|';
    }
    *out += '\n';
  };

  std::string out = sep;
  render_row(header_, &out);
  out += sep;
  for (const auto& row : rows_) render_row(row, &out);
  out += sep;
  if (has_more) {
    out +=
        fmt::format("only showing top {} {}\n", rows_.size(), rows_.size() == 1 ? "row" : "rows");
  }
  return out;
}

}  // namespace silt::cli
