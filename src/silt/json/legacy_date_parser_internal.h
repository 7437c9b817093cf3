// LegacyDateParser: the datetime parser Spark 3.5's JSON reader keeps from
// Spark 2 (LegacyDateFormats.FAST_DATE_FORMAT: commons-lang3 3.12's
// FastDateParser over a lenient GregorianCalendar). Spark uses it two ways:
//
//  - spark.sql.legacy.timeParserPolicy EXCEPTION (the default): when the
//    new parser (java.time) fails on a text, Spark runs this one with the
//    same pattern, and if it reads the text, fails the query
//    (INCONSISTENT_BEHAVIOR_CROSS_VERSION) instead of returning NULL.
//  - policy LEGACY: it is the parser.
//
// What it accepts, as FastDateParser does: the pattern's fields in order
// from the start of the text, anything after them ignored. A numeric field
// reads as many digits as follow (after skipping white space), or exactly
// its letter count when the next field is numeric too; literals match
// exactly (case-sensitively); month, day-of-week, AM/PM and era names (long
// or short, English) case-insensitively, the longest first; X/XX/XXX read
// "Z" or +HH, +HHmm, +HH:mm; Z/z read +HHmm, GMT+H:mm and UTC/GMT/Z. The
// calendar is lenient: any number fits (month 13 is January of the next
// year, day 0 the last day of the month before).
//
// Approximations (documented in docs/decisions.md): digits and white space
// are ASCII only (Java also takes other Unicode digits), time-zone names
// other than UTC/GMT/Z are not read, and values (policy LEGACY) are computed
// in the proleptic Gregorian calendar, which agrees with Spark's
// Julian-rebased result except when lenient overflow crosses 1582-10-15.
// Patterns with week-based fields (D, F, w, W, u, E, G, Y, k/K mixing) give
// no value (Parse's Value is nullopt) though they are still matched.
//
// Thread safety: immutable after Compile.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace silt::json::internal {

class LegacyDateParser {
 public:
  // nullopt when FastDateParser refuses the pattern (a letter it has no
  // strategy for, an unterminated quote, XXXX): then it never reads a text.
  static std::optional<LegacyDateParser> Compile(std::string_view pattern);

  // The fields read from a text, before the calendar resolves them.
  struct Fields {
    int64_t year = 1970;
    int64_t month = 0;  // 0-based, as java.util.Calendar
    int64_t day = 1;
    int64_t hour = 0;     // HOUR_OF_DAY
    int64_t hour12 = -1;  // HOUR (0..11 after h's 12 -> 0), -1 when unset
    int am_pm = 0;
    int64_t minute = 0;
    int64_t second = 0;
    int64_t millisecond = 0;  // the S field's number as read
    bool has_offset = false;
    int64_t offset_seconds = 0;
  };

  // Whether FastDateParser reads `text` (a prefix of it). `*fields` gets
  // what it read.
  bool Parse(std::string_view text, Fields* fields) const;

  // The lenient calendar's local date-time of `fields`, in micros since the
  // local epoch, with Spark's MicrosCalendar reading of the fraction (the S
  // field's number as a fraction of `S`-count digits). nullopt when the
  // pattern has fields silt does not resolve (see above) or on overflow.
  std::optional<int64_t> LocalMicros(const Fields& fields) const;

  const std::string& pattern() const { return pattern_; }

 private:
  enum class Kind : uint8_t {
    kLiteral,
    kYear,         // y (> 2 letters: as read; <= 2: two-digit years adjusted)
    kMonth,        // M/L, 1-2 letters
    kMonthText,    // M/L, 3+ letters
    kDay,          // d
    kHourOfDay,    // H
    kHour24,       // k (24 -> 0)
    kHour,         // K
    kHour12,       // h (12 -> 0)
    kMinute,       // m
    kSecond,       // s
    kMillisecond,  // S
    kAmPm,         // a
    kOtherNumber,  // D F w W u: read, not resolved
    kDayText,      // E
    kEraText,      // G
    kIsoZone,      // X, XX, XXX
    kZone,         // z, Z
  };
  struct Item {
    Kind kind = Kind::kLiteral;
    int width = 0;  // letter count
    std::string literal;
  };
  static bool IsNumber(Kind kind);

  std::string pattern_;
  std::vector<Item> items_;
  int fraction_digits_ = 0;  // count of 'S' in the pattern
  bool resolvable_ = true;
  int64_t two_digit_century_ = 1900;  // century of (this year - 80)
  int64_t two_digit_start_ = 0;       // (this year - 80) % 100
};

}  // namespace silt::json::internal
