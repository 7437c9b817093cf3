// DateTimeFormat: a compiled java.time.format.DateTimeFormatter pattern, as
// Spark 3.5 uses for to_timestamp(s, fmt) / to_date(s, fmt) with its
// defaults: case-insensitive text, strict field ranges, the whole input must
// match, missing fields default to 1970-01-01 00:00:00.
//
// Supported letters: y (year; yy = 2000-2099), M/L (1-2 digits, MM, MMM
// "Jan", MMMM "January"), d, H, k, K, h, m, s (1-2 digits or exactly 2 when
// doubled), S..S (fraction: 1 to n digits, beyond 6 truncated), a (AM/PM),
// E (day-of-week name, checked for form only), X/x/Z offsets (Z, +HH,
// +HHmm, +HH:mm, ...), 'quoted literals', '' for a quote, [optional
// sections], and any other non-letter as a literal. Other letters (week
// dates, zone names, ...) are rejected when compiling.
//
// Thread safety: immutable after Compile; share freely.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "silt/base/result.h"

namespace silt::expr {

class DateTimeFormat {
 public:
  // Errors: InvalidArgument for a malformed pattern (unterminated quote or
  // section), NotSupported naming a pattern letter silt does not parse.
  static Result<DateTimeFormat> Compile(std::string_view pattern);

  // Parses all of `text` to microseconds since the epoch (UTC). Text without
  // an offset is read in `default_offset_micros`. nullopt when the text does
  // not match or names an invalid date/time.
  std::optional<int64_t> ParseTimestamp(std::string_view text, int64_t default_offset_micros) const;

  // Parses all of `text` to the local date-time it names (micros since the
  // local epoch) and the zone offset it names, if any. nullopt as above.
  struct Local {
    int64_t micros = 0;
    bool has_offset = false;
    int64_t offset_seconds = 0;
  };
  std::optional<Local> ParseLocal(std::string_view text) const;

  // Spark 3.5's check against its legacy parser (timeParserPolicy
  // EXCEPTION): true when `text`, which this format failed to parse, is
  // accepted by java.text.SimpleDateFormat (non-lenient) with the same
  // pattern: numeric fields of any width unless adjacent to another numeric
  // field, trailing text ignored. Spark then raises
  // INCONSISTENT_BEHAVIOR_CROSS_VERSION instead of returning NULL. Only
  // patterns of numeric fields and literals are checked (false otherwise).
  bool LegacyParserAccepts(std::string_view text) const;

  // Appends the local date-time `local_micros` (micros since the local
  // epoch) whose zone offset is `offset_seconds`, as DateTimeFormatter.format
  // prints it (date_format, from_unixtime): optional sections are printed.
  void Format(int64_t local_micros, int32_t offset_seconds, std::string* out) const;

  const std::string& pattern() const { return pattern_; }

  // One pattern element. Public for the parser's helpers.
  struct Item {
    enum class Kind {
      kLiteral,
      kYear,
      kMonth,
      kMonthText,
      kDay,
      kHour24,     // H: 0-23
      kHour1To24,  // k: 1-24
      kHour0To11,  // K: 0-11
      kHour1To12,  // h: 1-12
      kAmPm,
      kMinute,
      kSecond,
      kFraction,
      kDayOfWeekText,
      kOffset,
      kOptionalBegin,
      kOptionalEnd,
    };
    Kind kind = Kind::kLiteral;
    int min_width = 1;
    int max_width = 2;
    bool full_text = false;  // MMMM / EEEE
    bool two_digit_year = false;
    // Offsets: accepted forms.
    bool offset_z_for_zero = false;  // X and ZZZZZ accept "Z"
    bool offset_colon = false;       // +HH:mm
    bool offset_minutes = false;     // minutes may (or must) follow
    bool offset_minutes_required = false;
    std::string literal;
    // Pattern letters in the run ("yyyy" = 4), for formatting.
    int letters = 1;
  };

 private:
  std::string pattern_;
  std::vector<Item> items_;
};

// The error Spark 3.5 raises (also with ANSI off) when `format` failed to
// parse `text` but the legacy parser accepts it; OK otherwise.
Status CheckLegacyParser(const DateTimeFormat& format, std::string_view text, int64_t row,
                         std::string_view sql);

}  // namespace silt::expr
