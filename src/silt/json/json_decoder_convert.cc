// JsonDecoder's per-type readers: JSON numbers as integers, doubles and
// decimals, values as strings, and DATE / TIMESTAMP / TIMESTAMP_NTZ strings
// under Spark's parser policies.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "silt/base/json_writer.h"
#include "silt/base/strings.h"
#include "silt/columnar/temporal.h"
#include "silt/json/json_decoder_internal.h"
#include "silt/json/text_parse_internal.h"

namespace silt::json {

namespace dom = simdjson::dom;
using columnar::ColumnBuilder;
using internal::ValueKind;

namespace {

// Spark's FloatType/DoubleType accepted strings (with allowNonNumericNumbers).
bool SpecialDouble(std::string_view s, double* out) {
  if (s == "NaN") {
    *out = std::numeric_limits<double>::quiet_NaN();
  } else if (s == "Infinity" || s == "+Infinity" || s == "+INF") {
    *out = std::numeric_limits<double>::infinity();
  } else if (s == "-Infinity" || s == "-INF") {
    *out = -std::numeric_limits<double>::infinity();
  } else {
    return false;
  }
  return true;
}

constexpr int64_t kMicrosPerHour = 3600 * columnar::kMicrosPerSecond;

// Spark's cleanLegacyTimestampStr: "GMT" removed wherever it occurs.
std::string_view WithoutGmt(std::string_view s, std::string* scratch) {
  if (s.find("GMT") == std::string_view::npos) return s;
  scratch->clear();
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.compare(i, 3, "GMT") == 0) {
      i += 2;
      continue;
    }
    scratch->push_back(s[i]);
  }
  return *scratch;
}

}  // namespace

bool JsonDecoder::Impl::AsInt64(dom::element value, ValueKind kind, int64_t* out) const {
  // Jackson's getLongValue/getIntValue: integral tokens only; anything beyond
  // int64 (uint64 range, big integers) overflows.
  if (kind != ValueKind::kInt64) return false;
  *out = value.get_int64().value_unsafe();
  return true;
}

bool JsonDecoder::Impl::AsDouble(dom::element value, ValueKind kind, double* out) const {
  switch (kind) {
    case ValueKind::kInt64:
      *out = static_cast<double>(value.get_int64().value_unsafe());
      return true;
    case ValueKind::kUint64:
      *out = static_cast<double>(value.get_uint64().value_unsafe());
      return true;
    case ValueKind::kDouble: *out = value.get_double().value_unsafe(); return true;
    case ValueKind::kBigNumber:
      *out = internal::TextToDouble(internal::BigNumberText(value));
      return true;
    case ValueKind::kString:
      return allow_non_numeric && SpecialDouble(internal::StringOf(value), out);
    default: return false;
  }
}

bool JsonDecoder::Impl::AsDecimal(dom::element value, ValueKind kind, int precision, int scale,
                                  __int128* out) {
  char buf[64];
  switch (kind) {
    case ValueKind::kInt64: {
      auto res = std::to_chars(buf, buf + sizeof(buf), value.get_int64().value_unsafe());
      return internal::ParseDecimalText(std::string_view(buf, static_cast<size_t>(res.ptr - buf)),
                                        precision, scale, out);
    }
    case ValueKind::kUint64: {
      auto res = std::to_chars(buf, buf + sizeof(buf), value.get_uint64().value_unsafe());
      return internal::ParseDecimalText(std::string_view(buf, static_cast<size_t>(res.ptr - buf)),
                                        precision, scale, out);
    }
    case ValueKind::kDouble: {
      // The shortest text that round-trips is the JSON text for every number
      // with up to 15 significant digits, so rounding sees the written value.
      auto res = std::to_chars(buf, buf + sizeof(buf), value.get_double().value_unsafe());
      return internal::ParseDecimalText(std::string_view(buf, static_cast<size_t>(res.ptr - buf)),
                                        precision, scale, out);
    }
    case ValueKind::kBigNumber:
      return internal::ParseDecimalText(internal::BigNumberText(value), precision, scale, out);
    case ValueKind::kString: {
      // Spark's en-US decimal parser drops grouping commas first.
      std::string_view s = internal::StringOf(value);
      if (s.find(',') == std::string_view::npos) {
        return internal::ParseDecimalText(s, precision, scale, out);
      }
      scratch.clear();
      for (char c : s) {
        if (c != ',') scratch.push_back(c);
      }
      return internal::ParseDecimalText(scratch, precision, scale, out);
    }
    default: return false;
  }
}

void JsonDecoder::Impl::AppendTextWithStandIns(ColumnBuilder* builder, std::string_view text) {
  scratch.clear();
  internal::AppendWithoutStandIns(text, &scratch);
  builder->AppendString(scratch);
}

void JsonDecoder::Impl::AppendAsString(ColumnBuilder* builder, dom::element value, ValueKind kind) {
  if (kind == ValueKind::kString) {
    AppendText(builder, internal::StringOf(value));
    return;
  }
  scratch.clear();
  gen.Reset(&scratch);
  gen.set_lone_surrogates(row_lone_surrogates);
  internal::CopyValue(value, markers, &gen);
  builder->AppendString(scratch);
}

Status JsonDecoder::Impl::SetDateTime(const JsonDateTimeOptions& options) {
  datetime = options;
  const bool legacy = options.policy == TimeParserPolicy::kLegacy;
  timestamp_fallback = options.parsing_fallback.value_or(legacy || !options.timestamp_format);
  date_fallback = options.parsing_fallback.value_or(legacy || !options.date_format);
  // Spark 2's patterns: the user's, else its defaults (for parsing under
  // LEGACY, for the check under EXCEPTION).
  auto pattern_of = [](const std::shared_ptr<const DateTimePattern>& p, std::string_view dflt) {
    return p != nullptr ? std::string(p->pattern()) : std::string(dflt);
  };
  const std::string ts_pattern = pattern_of(
      options.timestamp_format, legacy ? "yyyy-MM-dd'T'HH:mm:ss.SSSXXX" : "yyyy-MM-dd HH:mm:ss");
  const std::string date_pattern = pattern_of(options.date_format, "yyyy-MM-dd");
  legacy_timestamp = internal::LegacyDateParser::Compile(ts_pattern);
  legacy_date = internal::LegacyDateParser::Compile(date_pattern);
  if (options.timestamp_ntz_format != nullptr) {
    legacy_ntz = internal::LegacyDateParser::Compile(options.timestamp_ntz_format->pattern());
  }
  if (legacy) {
    internal::LegacyDateParser::Fields probe;
    for (const auto& [parser, pattern, key] :
         {std::tuple(&legacy_timestamp, &ts_pattern, "timestampFormat"),
          std::tuple(&legacy_date, &date_pattern, "dateFormat")}) {
      if (!parser->has_value() || !(*parser)->LocalMicros(probe).has_value()) {
        return Status::NotSupported(
            key, " '", *pattern,
            "' under spark.sql.legacy.timeParserPolicy LEGACY (silt's Spark 2 parser reads "
            "y M d H k K h m s S a X Z and literals)");
      }
    }
  }
  return Status::OK();
}

bool JsonDecoder::Impl::DefaultTimestamp(std::string_view s, int64_t* out) const {
  std::optional<int64_t> micros = columnar::ParseTimestamp(s, zone_offset_micros);
  if (!micros.has_value()) return false;
  if (local_to_utc) {
    // Zone-less text moves with the default offset; text with a zone does
    // not.
    std::optional<int64_t> shifted = columnar::ParseTimestamp(s, zone_offset_micros + 1);
    if (shifted && *shifted == *micros - 1) micros = local_to_utc(*micros + zone_offset_micros);
  }
  *out = *micros;
  return true;
}

bool JsonDecoder::Impl::DefaultDate(std::string_view s, int32_t* out) {
  std::optional<int32_t> days = columnar::ParseDate(s);
  if (!days.has_value()) return false;
  *out = *days;
  return true;
}

bool JsonDecoder::Impl::LegacyTimestamp(const internal::LegacyDateParser& parser,
                                        std::string_view s, int64_t* out) const {
  internal::LegacyDateParser::Fields fields;
  if (!parser.Parse(s, &fields)) return false;
  std::optional<int64_t> local = parser.LocalMicros(fields);
  if (!local.has_value()) return false;
  *out = fields.has_offset ? *local - fields.offset_seconds * columnar::kMicrosPerSecond
                           : LocalToUtc(*local);
  return true;
}

void JsonDecoder::Impl::CheckUpgrade(const std::optional<internal::LegacyDateParser>& parser,
                                     std::string_view s) {
  if (upgrade_error || datetime.policy != TimeParserPolicy::kException || !parser.has_value()) {
    return;
  }
  internal::LegacyDateParser::Fields fields;
  if (!parser->Parse(s, &fields)) return;
  upgrade_error = true;
  upgrade_text = std::string(s);
  upgrade_pattern = parser->pattern();
}

bool JsonDecoder::Impl::ReadTimestamp(std::string_view s, int64_t* out) {
  bool ok = false;
  if (datetime.policy == TimeParserPolicy::kLegacy) {
    ok = LegacyTimestamp(*legacy_timestamp, s, out);
  } else if (datetime.timestamp_format == nullptr) {
    ok = DefaultTimestamp(s, out);
  } else {
    bool has_offset = false;
    int64_t offset_seconds = 0;
    ok = datetime.timestamp_format->Parse(s, out, &has_offset, &offset_seconds);
    if (ok) {
      *out = has_offset ? *out - offset_seconds * columnar::kMicrosPerSecond : LocalToUtc(*out);
    }
  }
  if (ok) return true;
  // Spark raises the upgrade error from the formatter, then its fallback
  // may still read the text; the error stands only when it does not.
  const bool was_flagged = upgrade_error;
  CheckUpgrade(legacy_timestamp, s);
  if (timestamp_fallback && DefaultTimestamp(WithoutGmt(s, &gmt_scratch), out)) {
    if (!was_flagged) upgrade_error = false;
    return true;
  }
  return false;
}

bool JsonDecoder::Impl::ReadDate(std::string_view s, int32_t* out) {
  bool ok = false;
  if (datetime.policy == TimeParserPolicy::kLegacy) {
    int64_t micros = 0;
    internal::LegacyDateParser::Fields fields;
    if (legacy_date->Parse(s, &fields)) {
      std::optional<int64_t> local = legacy_date->LocalMicros(fields);
      if (local.has_value()) {
        micros = *local;
        ok = true;
      }
    }
    if (ok) *out = columnar::DaysFromMicros(micros);
  } else if (datetime.date_format == nullptr) {
    ok = DefaultDate(s, out);
  } else {
    // The local date as written, whatever offset the text names.
    int64_t micros = 0;
    bool has_offset = false;
    int64_t offset_seconds = 0;
    ok = datetime.date_format->Parse(s, &micros, &has_offset, &offset_seconds);
    if (ok) *out = columnar::DaysFromMicros(micros);
  }
  if (ok) return true;
  const bool was_flagged = upgrade_error;
  CheckUpgrade(legacy_date, s);
  if (date_fallback &&
      (DefaultDate(WithoutGmt(s, &gmt_scratch), out) || internal::ParseJavaInt(s, out))) {
    if (!was_flagged) upgrade_error = false;
    return true;
  }
  return false;
}

bool JsonDecoder::Impl::ReadTimestampNtz(std::string_view s, int64_t* out) {
  if (datetime.timestamp_ntz_format != nullptr) {
    bool has_offset = false;
    int64_t offset_seconds = 0;
    if (datetime.timestamp_ntz_format->Parse(s, out, &has_offset, &offset_seconds) && !has_offset) {
      return true;
    }
    CheckUpgrade(legacy_ntz, s);
    return false;
  }
  std::optional<int64_t> micros = columnar::ParseTimestamp(s, 0);
  if (!micros.has_value()) return false;
  // A text that names its zone reads the same under any default zone;
  // Spark rejects those for TIMESTAMP_NTZ.
  std::optional<int64_t> shifted = columnar::ParseTimestamp(s, kMicrosPerHour);
  if (shifted.has_value() && *shifted == *micros) return false;
  *out = *micros;
  return true;
}

}  // namespace silt::json
