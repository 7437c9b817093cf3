#include "silt/expr/function/json/json_options.h"

#include <memory>
#include <utility>

#include "silt/base/strings.h"
#include "silt/expr/function/datetime/datetime_format.h"
#include "silt/expr/value/time_zone.h"

namespace silt::expr {

namespace {

// A user pattern for the JSON decoder, read by DateTimeFormat (Spark 3.5's
// java.time parser).
class FormatPattern final : public json::DateTimePattern {
 public:
  explicit FormatPattern(DateTimeFormat format) : format_(std::move(format)) {}

  bool Parse(std::string_view text, int64_t* local_micros, bool* has_offset,
             int64_t* offset_seconds) const override {
    std::optional<DateTimeFormat::Local> local = format_.ParseLocal(text);
    if (!local.has_value()) return false;
    *local_micros = local->micros;
    *has_offset = local->has_offset;
    *offset_seconds = local->offset_seconds;
    return true;
  }
  const std::string& pattern() const override { return format_.pattern(); }

 private:
  DateTimeFormat format_;
};

void SetZone(const TimeZonePtr& zone, json::JsonDecodeOptions* out) {
  if (zone->is_fixed()) {
    out->default_zone_offset_micros = int64_t{zone->fixed_offset_seconds()} * 1000000;
    out->local_to_utc = nullptr;
  } else {
    out->default_zone_offset_micros = 0;
    out->local_to_utc = [zone](int64_t local_micros) { return zone->LocalToUtc(local_micros); };
  }
}

}  // namespace

bool* JsonParserFlag(json::JsonParseOptions* options, std::string_view key) {
  if (key == "allowcomments") return &options->allow_comments;
  if (key == "allowunquotedfieldnames") return &options->allow_unquoted_field_names;
  if (key == "allowsinglequotes") return &options->allow_single_quotes;
  if (key == "allownumericleadingzeros") return &options->allow_numeric_leading_zeros;
  if (key == "allownonnumericnumbers") return &options->allow_non_numeric_numbers;
  if (key == "allowbackslashescapinganycharacter") {
    return &options->allow_backslash_escaping_any_character;
  }
  if (key == "allowunquotedcontrolchars") return &options->allow_unquoted_control_chars;
  return nullptr;
}

namespace {

Result<bool> ParseFlag(std::string_view key, std::string_view value, std::string_view where) {
  // Spark reads these with String.toBoolean.
  const std::string lower = AsciiLower(value);
  if (lower != "true" && lower != "false") {
    return Status::InvalidArgument(where, " option '", key, "' must be true or false, not '", value,
                                   "'");
  }
  return lower == "true";
}

}  // namespace

Status ApplyDateTimeSparkConf(const std::map<std::string, std::string>& conf,
                              EvalOptions* options) {
  auto policy = conf.find("spark.sql.legacy.timeParserPolicy");
  if (policy != conf.end()) {
    const std::string value = AsciiLower(policy->second);
    if (value == "exception") {
      options->time_parser_policy = TimeParserPolicy::kException;
    } else if (value == "corrected") {
      options->time_parser_policy = TimeParserPolicy::kCorrected;
    } else if (value == "legacy") {
      options->time_parser_policy = TimeParserPolicy::kLegacy;
    } else {
      return Status::InvalidArgument(
          policy->first, ": expected EXCEPTION, CORRECTED or LEGACY, got '", policy->second, "'");
    }
  }
  auto fallback = conf.find("spark.sql.json.enableDateTimeParsingFallback");
  if (fallback != conf.end()) {
    SILT_ASSIGN_OR_RETURN(options->json_datetime_fallback,
                          ParseFlag(fallback->first, fallback->second, "Spark conf"));
  }
  return Status::OK();
}

JsonReadOptions::JsonReadOptions(const EvalOptions& session) {
  SetZone(SessionTimeZone(session), &decode_);
  switch (session.time_parser_policy) {
    case TimeParserPolicy::kException:
      decode_.datetime.policy = json::TimeParserPolicy::kException;
      break;
    case TimeParserPolicy::kCorrected:
      decode_.datetime.policy = json::TimeParserPolicy::kCorrected;
      break;
    case TimeParserPolicy::kLegacy:
      decode_.datetime.policy = json::TimeParserPolicy::kLegacy;
      break;
  }
  decode_.datetime.parsing_fallback = session.json_datetime_fallback;
}

Result<bool> JsonReadOptions::Set(std::string_view key, std::string_view value,
                                  std::string_view where) {
  const std::string lower = AsciiLower(key);
  if (bool* flag = JsonParserFlag(&decode_.parse, lower)) {
    SILT_ASSIGN_OR_RETURN(*flag, ParseFlag(key, value, where));
    return true;
  }
  std::shared_ptr<const json::DateTimePattern>* pattern = nullptr;
  if (lower == "timestampformat") {
    pattern = &decode_.datetime.timestamp_format;
  } else if (lower == "timestampntzformat") {
    pattern = &decode_.datetime.timestamp_ntz_format;
  } else if (lower == "dateformat") {
    pattern = &decode_.datetime.date_format;
  }
  if (pattern != nullptr) {
    Result<DateTimeFormat> format = DateTimeFormat::Compile(value);
    if (!format.ok()) return format.status().WithContextParts(where, " option '", key, "'");
    *pattern = std::make_shared<FormatPattern>(std::move(format).MoveValueUnsafe());
    return true;
  }
  if (lower == "enabledatetimeparsingfallback") {
    SILT_ASSIGN_OR_RETURN(bool on, ParseFlag(key, value, where));
    decode_.datetime.parsing_fallback = on;
    return true;
  }
  if (lower == "timezone") {
    Result<TimeZonePtr> zone = TimeZone::Load(value);
    if (!zone.ok()) return zone.status().WithContextParts(where, " option '", key, "'");
    SetZone(*zone, &decode_);
    return true;
  }
  if (lower == "locale") {
    // Locale.forLanguageTag: month, day and AM/PM names (and decimal
    // separators) come from it; silt reads English names only.
    const std::string tag = AsciiLower(value);
    if (tag != "en-us" && tag != "en") {
      return Status::NotSupported(where, " option '", key, "' = '", value,
                                  "' (silt reads en-US, Spark's default, and en)");
    }
    return true;
  }
  return false;
}

}  // namespace silt::expr
