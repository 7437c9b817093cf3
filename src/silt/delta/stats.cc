#include "silt/delta/stats.h"

#include <simdjson.h>

#include <climits>
#include <cmath>

#include "silt/base/json_writer.h"
#include "silt/base/utf8.h"
#include "silt/columnar/temporal.h"
#include "silt/delta/partition_utils.h"

namespace silt::delta {

namespace {

using columnar::TypeId;

// One UTF-8 encoded character: its byte length and code point. Invalid bytes
// count as one character of one byte, so truncation never loops or reads
// past the end on malformed input.
struct Utf8Char {
  int bytes;
  uint32_t code_point;
};

Utf8Char DecodeUtf8(std::string_view s, size_t pos) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  unsigned char c = byte(pos);
  int len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (len == 0 || pos + static_cast<size_t>(len) > s.size()) return {1, c};
  uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
  for (int k = 1; k < len; ++k) {
    unsigned char cont = byte(pos + static_cast<size_t>(k));
    if ((cont & 0xC0) != 0x80) return {1, c};
    cp = (cp << 6) | (cont & 0x3F);
  }
  return {len, cp};
}

// UTF-16 units of a code point: Java strings (and so Delta's prefix lengths)
// count supplementary characters as two.
int Utf16Units(uint32_t cp) { return cp >= 0x10000 ? 2 : 1; }

int64_t Utf16Length(std::string_view s) {
  int64_t units = 0;
  for (size_t pos = 0; pos < s.size();) {
    Utf8Char ch = DecodeUtf8(s, pos);
    units += Utf16Units(ch.code_point);
    pos += static_cast<size_t>(ch.bytes);
  }
  return units;
}

// Byte length and UTF-16 length of the min-truncated prefix.
std::pair<size_t, int64_t> MinPrefix(std::string_view s, int prefix_length) {
  size_t pos = 0;
  int64_t units = 0;
  while (pos < s.size() && units < prefix_length) {
    Utf8Char ch = DecodeUtf8(s, pos);
    units += Utf16Units(ch.code_point);
    pos += static_cast<size_t>(ch.bytes);
  }
  return {pos, units};
}

constexpr uint32_t kMaxCodePoint = 0x10FFFF;
constexpr std::string_view kMaxCodePointUtf8 = "\xF4\x8F\xBF\xBF";
constexpr char kAsciiMax = '\x7F';

int64_t FloorToMillisMicros(int64_t micros) {
  int64_t rem = micros % 1000;
  if (rem < 0) rem += 1000;
  return micros - rem;
}

bool IsStatsEligible(TypeId id) {
  switch (id) {
    case TypeId::kByte:
    case TypeId::kShort:
    case TypeId::kInt:
    case TypeId::kLong:
    case TypeId::kFloat:
    case TypeId::kDouble:
    case TypeId::kDecimal:
    case TypeId::kDate:
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz:
    case TypeId::kString: return true;
    default: return false;
  }
}

// Leaf columns as delta-spark counts them for dataSkippingNumIndexedCols:
// struct fields individually, everything else (arrays and maps too) as one.
int64_t CountLeaves(const columnar::DataType& type) {
  if (type.id() != TypeId::kStruct) return 1;
  int64_t n = 0;
  for (const auto& f : type.fields()) n += CountLeaves(*f.type);
  return n;
}

enum class Bound { kMin, kMax };

// NaN and the infinities as delta-spark's stats hold them: JSON strings
// (Jackson quotes non-numeric numbers), "NaN", "Infinity", "-Infinity".
void WriteNonFinite(JsonWriter* w, std::string_view key, double v) {
  w->Member(key, std::isnan(v) ? "NaN" : v > 0 ? "Infinity" : "-Infinity");
}

// Writes `key: value` for a length-1 min or max column. Nothing is written
// when the value is not a usable bound.
void WriteBound(JsonWriter* w, std::string_view key, const columnar::Column& value, Bound bound,
                int string_prefix_length) {
  if (value.length < 1 || value.IsNull(0)) return;
  const columnar::DataType& type = *value.type;
  switch (type.id()) {
    case TypeId::kByte: w->Member(key, value.Value<int8_t>(0)); return;
    case TypeId::kShort: w->Member(key, value.Value<int16_t>(0)); return;
    case TypeId::kInt: w->Member(key, value.Value<int32_t>(0)); return;
    case TypeId::kLong: w->Member(key, value.Value<int64_t>(0)); return;
    case TypeId::kFloat: {
      float v = value.Value<float>(0);
      if (!std::isfinite(v)) return WriteNonFinite(w, key, v);
      w->Key(key);
      w->Raw(FormatFloatJava(v));
      return;
    }
    case TypeId::kDouble: {
      double v = value.Value<double>(0);
      if (!std::isfinite(v)) return WriteNonFinite(w, key, v);
      w->Key(key);
      w->Raw(FormatDoubleJava(v));
      return;
    }
    case TypeId::kDecimal:
      w->Key(key);
      w->Raw(FormatDecimal(value.Value<__int128>(0), type.scale()));
      return;
    case TypeId::kDate: w->Member(key, columnar::FormatDate(value.Value<int32_t>(0))); return;
    case TypeId::kTimestamp:
      w->Member(key, columnar::FormatTimestampUtc(FloorToMillisMicros(value.Value<int64_t>(0)), 3));
      return;
    case TypeId::kTimestampNtz: {
      // yyyy-MM-ddTHH:mm:ss.SSS without a zone, as delta-spark writes it.
      std::string text =
          columnar::FormatTimestampPlain(FloorToMillisMicros(value.Value<int64_t>(0)), 3);
      size_t space = text.find(' ');
      if (space != std::string::npos) text[space] = 'T';
      w->Member(key, text);
      return;
    }
    case TypeId::kString: {
      std::string_view s = value.StringValue(0);
      // EncodeStats leaves out the bounds of a column whose min or max is not
      // UTF-8 before it gets here.
      if (bound == Bound::kMin) {
        w->Member(key, TruncateMinString(s, string_prefix_length));
      } else if (auto max = TruncateMaxString(s, string_prefix_length)) {
        w->Member(key, *max);
      }
      return;
    }
    default: return;
  }
}

const parquet::ColumnStats* FindStats(const parquet::WriteResult& result, size_t index,
                                      std::string_view name) {
  if (index < result.column_stats.size() && result.column_stats[index].name == name) {
    return &result.column_stats[index];
  }
  for (const auto& s : result.column_stats) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

// Whether the string min and max are valid UTF-8. When one is not (a corrupt
// record, a binary-to-string cast), the column gets no bounds in this file:
// the log must stay UTF-8, and no UTF-8 text is a safe stand-in. delta-spark
// writes U+FFFD for the bad bytes, which can rise above a minimum ("\x80" ->
// "\uFFFD") or fall below a maximum ("\xFF"), so readers skip files that
// hold matching rows; truncation's tie-breaker U+10FFFF sorts below bytes
// 0xF5-0xFF too. No bound is a valid bound.
bool StringBoundsAreUtf8(const parquet::ColumnStats& stats) {
  for (const columnar::ColumnPtr& bound : {stats.min, stats.max}) {
    if (bound != nullptr && bound->length > 0 && !bound->IsNull(0) &&
        !IsValidUtf8(bound->StringValue(0))) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::optional<int64_t> StatsNumRecords(std::string_view stats_json) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(stats_json.data(), stats_json.size(), true).get(root) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  int64_t n = 0;
  if (root["numRecords"].get_int64().get(n) != simdjson::SUCCESS) return std::nullopt;
  return n;
}

std::string TruncateMinString(std::string_view s, int prefix_length) {
  if (prefix_length <= 0) return std::string();
  return std::string(s.substr(0, MinPrefix(s, prefix_length).first));
}

std::optional<std::string> TruncateMaxString(std::string_view s, int prefix_length) {
  if (Utf16Length(s) <= prefix_length) return std::string(s);
  if (prefix_length <= 0) return std::nullopt;
  const int64_t limit = 2 * static_cast<int64_t>(prefix_length);
  auto [pos, units] = MinPrefix(s, prefix_length);
  while (units <= limit) {
    if (pos >= s.size()) return std::string(s);
    Utf8Char ch = DecodeUtf8(s, pos);
    if (ch.code_point == kMaxCodePoint) {
      // Appending the tie-breaker after a cut at U+10FFFF would not bound
      // the original; keep the character and look at the next one.
      pos += static_cast<size_t>(ch.bytes);
      units += 2;
      continue;
    }
    std::string out(s.substr(0, pos));
    if (ch.code_point < static_cast<uint32_t>(kAsciiMax)) {
      out += kAsciiMax;
    } else {
      out += kMaxCodePointUtf8;
    }
    return out;
  }
  return std::nullopt;
}

std::string EncodeStats(const parquet::WriteResult& result, const columnar::Schema& data_schema,
                        int num_indexed_cols, int string_prefix_length) {
  JsonWriter min_w;
  JsonWriter max_w;
  JsonWriter nulls_w;
  min_w.BeginObject();
  max_w.BeginObject();
  nulls_w.BeginObject();
  int64_t remaining = num_indexed_cols < 0 ? INT64_MAX : num_indexed_cols;
  for (int field_idx = 0; field_idx < data_schema.num_fields() && remaining > 0; ++field_idx) {
    const columnar::Field& field = data_schema.field(field_idx);
    if (field.type->id() == TypeId::kStruct) {
      // Per-leaf statistics of nested fields are not gathered by the Parquet
      // writer; their leaves still count against the limit, as in
      // delta-spark, so the set of indexed columns stays the same.
      remaining -= std::min(remaining, CountLeaves(*field.type));
      continue;
    }
    --remaining;
    const parquet::ColumnStats* stats =
        FindStats(result, static_cast<size_t>(field_idx), field.name);
    if (stats == nullptr) continue;
    nulls_w.Member(field.name, stats->null_count);
    if (!IsStatsEligible(field.type->id())) continue;
    if (field.type->id() == TypeId::kString && !StringBoundsAreUtf8(*stats)) continue;
    if (stats->min) WriteBound(&min_w, field.name, *stats->min, Bound::kMin, string_prefix_length);
    if (stats->max) WriteBound(&max_w, field.name, *stats->max, Bound::kMax, string_prefix_length);
  }
  min_w.EndObject();
  max_w.EndObject();
  nulls_w.EndObject();

  JsonWriter w;
  w.BeginObject();
  w.Member("numRecords", result.num_rows);
  w.Key("minValues");
  w.Raw(min_w.str());
  w.Key("maxValues");
  w.Raw(max_w.str());
  w.Key("nullCount");
  w.Raw(nulls_w.str());
  w.EndObject();
  return w.Take();
}

}  // namespace silt::delta
