// Calendar arithmetic and text forms for dates and timestamps, shared by the
// JSON decoder, expressions, Delta statistics/partition values and the CLI.
// Proleptic Gregorian calendar, UTC; dates are days since 1970-01-01 and
// timestamps microseconds since 1970-01-01T00:00:00Z.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace silt::columnar {

struct CivilDate {
  int32_t year;
  int32_t month;  // 1..12
  int32_t day;    // 1..31
};

int32_t DaysFromCivil(int32_t year, int32_t month, int32_t day);
CivilDate CivilFromDays(int32_t days);

inline constexpr int64_t kMicrosPerSecond = 1000000;
inline constexpr int64_t kMicrosPerDay = 86400LL * kMicrosPerSecond;

// Floor division of micros into days (correct for negative timestamps).
inline int32_t DaysFromMicros(int64_t micros) {
  int64_t d = micros / kMicrosPerDay;
  if (micros % kMicrosPerDay < 0) --d;
  return static_cast<int32_t>(d);
}

// "2026-06-22"
std::string FormatDate(int32_t days);
// Spark's to_json / Delta stats form with microsecond precision:
// "2026-06-22T08:16:00.123456Z" (fraction trimmed to 3 or 6 digits as Spark
// does: ".000Z"-style when sub-millisecond digits are zero is NOT applied;
// `fraction_digits` picks 0, 3 or 6; -1 = shortest of 0/3/6 that is exact).
// `zulu` = false writes the zone as "+00:00" instead of "Z". Years outside
// 0000..9999 are written ISO-style: "-0001-...", "+10000-...".
std::string FormatTimestampUtc(int64_t micros, int fraction_digits = 6, bool zulu = true);
// "2026-06-22 08:16:00.123456" (no zone), for timestamp_ntz and display.
std::string FormatTimestampPlain(int64_t micros, int fraction_digits = -1);
// Appends Spark's timestamp text of (local) micros to `out`: "yyyy-MM-dd
// HH:mm:ss", then the microsecond fraction only when it is non-zero, with its
// trailing zeros dropped ("2026-06-22 08:16:00.12"), as CAST(ts AS STRING)
// and Variant.toJson write it (Spark's TimestampFormatter fraction formatter).
// Years as FormatDate writes them.
void AppendTimestampText(int64_t micros, std::string* out);

// Parses "yyyy-[m]m-[d]d" with optional trailing time part ignored the way
// Spark's CAST(string AS DATE) does. nullopt when not a date.
std::optional<int32_t> ParseDate(std::string_view s);
// Spark's CAST(string AS TIMESTAMP) / to_timestamp(s) without a pattern:
// "yyyy-MM-dd", "yyyy-MM-dd HH:mm[:ss[.ffffff]]", 'T' separator, optional
// zone "Z", "+hh:mm", "+hhmm", "UTC". Strings without a zone are in
// `default_zone_offset_micros` (session time zone; 0 = UTC). nullopt when
// not a timestamp. Also accepted, as Spark does: leading/trailing whitespace,
// single-digit month/day/hour/minute/second, a 4..7 digit signed year, "yyyy"
// and "yyyy-[m]m" alone, a 1..9 digit fraction (truncated to micros), zones
// "+h", "+hh", "+hh:mm:ss", "UTC+hh:mm", "GMT", "UT" optionally after one
// space. Region zone ids ("Europe/Paris") and time-only strings yield nullopt.
std::optional<int64_t> ParseTimestamp(std::string_view s, int64_t default_zone_offset_micros = 0);

// ParseTimestamp for a column of texts: remembers the fields of the last
// "yyyy-mm-dd[T ]hh:mm:ss" start it read (the canonical shape, exactly these
// widths), so a text that starts with the same 19 bytes skips reading them
// again, and one with the same date (the first 10 bytes: events of one
// batch mostly share their day) reads only its time. Results are
// ParseTimestamp's for every text.
//
// Thread safety: one parser per thread.
class TimestampParser {
 public:
  std::optional<int64_t> Parse(std::string_view s, int64_t default_zone_offset_micros = 0);

  struct Canonical {
    char text[19] = {};
    bool valid = false;
    int64_t days = 0;
    int64_t hour = 0;
    int64_t minute = 0;
    int64_t second = 0;
  };

 private:
  Canonical last_;
};

}  // namespace silt::columnar
