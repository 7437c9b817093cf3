#include "silt/columnar/temporal.h"

#include <bit>
#include <cstdio>
#include <cstring>
#include <limits>

#include "silt/base/strings.h"

namespace silt::columnar {

namespace {

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

bool IsLeapYear(int64_t year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

int DaysInMonth(int64_t year, int month) {
  static constexpr int kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month == 2 && IsLeapYear(year)) return 29;
  return kDays[month - 1];
}

// Days since 1970-01-01 of a proleptic Gregorian date, computed through
// 400-year eras (146097 days each) so it is exact for negative years.
int64_t DaysFromCivil64(int64_t year, int64_t month, int64_t day) {
  year -= month <= 2 ? 1 : 0;
  int64_t era = FloorDiv(year, 400);
  int64_t year_of_era = year - era * 400;                                          // [0, 399]
  int64_t day_of_year = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;  // [0, 365]
  int64_t day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return era * 146097 + day_of_era - 719468;  // 719468 = days from 0000-03-01 to 1970-01-01
}

void AppendDigits(std::string* out, int64_t value, int width) {
  char buf[24];
  int n = std::snprintf(buf, sizeof(buf), "%0*lld", width, static_cast<long long>(value));
  out->append(buf, static_cast<size_t>(n));
}

// Two digits of 0..99 without snprintf: the CAST-to-string path calls this per row.
void AppendTwoDigits(std::string* out, int64_t value) {
  out->push_back(static_cast<char>('0' + value / 10));
  out->push_back(static_cast<char>('0' + value % 10));
}

void AppendDate(std::string* out, int32_t days) {
  CivilDate date = CivilFromDays(days);
  // ISO-8601 years: four digits, a sign when negative or beyond 9999.
  if (date.year < 0) {
    out->push_back('-');
    AppendDigits(out, -static_cast<int64_t>(date.year), 4);
  } else {
    if (date.year > 9999) out->push_back('+');
    AppendDigits(out, date.year, 4);
  }
  out->push_back('-');
  AppendDigits(out, date.month, 2);
  out->push_back('-');
  AppendDigits(out, date.day, 2);
}

int ShortestExactDigits(int64_t micros_of_second) {
  if (micros_of_second == 0) return 0;
  if (micros_of_second % 1000 == 0) return 3;
  return 6;
}

void AppendDateTime(std::string* out, int64_t micros, char separator, int fraction_digits) {
  int32_t days = DaysFromMicros(micros);
  int64_t micros_of_day = micros - static_cast<int64_t>(days) * kMicrosPerDay;
  AppendDate(out, days);
  out->push_back(separator);
  int64_t seconds_of_day = micros_of_day / kMicrosPerSecond;
  int64_t fraction = micros_of_day % kMicrosPerSecond;
  AppendDigits(out, seconds_of_day / 3600, 2);
  out->push_back(':');
  AppendDigits(out, seconds_of_day / 60 % 60, 2);
  out->push_back(':');
  AppendDigits(out, seconds_of_day % 60, 2);
  if (fraction_digits < 0) fraction_digits = ShortestExactDigits(fraction);
  if (fraction_digits >= 6) {
    out->push_back('.');
    AppendDigits(out, fraction, 6);
  } else if (fraction_digits >= 3) {
    out->push_back('.');
    AppendDigits(out, fraction / 1000, 3);
  }
}

// Reads 1..max_digits digits at s[*pos]; false when none.
bool ReadNumber(std::string_view s, size_t* pos, int max_digits, int64_t* value, int* digits) {
  int64_t v = 0;
  int n = 0;
  while (*pos < s.size() && IsAsciiDigit(s[*pos])) {
    if (n == max_digits) return false;
    v = v * 10 + (s[*pos] - '0');
    ++n;
    ++*pos;
  }
  if (n == 0) return false;
  *value = v;
  *digits = n;
  return true;
}

// The date part "[+-]yyyy*[-[m]m[-[d]d]]" at the start of `s`, as Spark's
// stringToDate reads it: a 4..7 digit year, 1..2 digit month and day.
// `*pos` ends after the last digit read. Returns days since the epoch.
std::optional<int64_t> ParseDatePart(std::string_view s, size_t* pos, bool* has_day) {
  int sign = 1;
  size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) {
    sign = s[i] == '-' ? -1 : 1;
    ++i;
  }
  int64_t year = 0;
  int64_t month = 1;
  int64_t day = 1;
  int digits = 0;
  if (!ReadNumber(s, &i, 7, &year, &digits) || digits < 4) return std::nullopt;
  *has_day = false;
  if (i < s.size() && s[i] == '-') {
    ++i;
    if (!ReadNumber(s, &i, 2, &month, &digits)) return std::nullopt;
    if (i < s.size() && s[i] == '-') {
      ++i;
      if (!ReadNumber(s, &i, 2, &day, &digits)) return std::nullopt;
      *has_day = true;
    }
  }
  year *= sign;
  if (month < 1 || month > 12 || day < 1 || day > DaysInMonth(year, static_cast<int>(month))) {
    return std::nullopt;
  }
  *pos = i;
  return DaysFromCivil64(year, month, day);
}

// "+h", "+hh", "+hh:mm", "+hhmm", "+hh:mm:ss", "+hhmmss" (sign required) as
// java.time.ZoneOffset.of accepts them. Returns the offset in seconds.
std::optional<int64_t> ParseOffset(std::string_view s) {
  if (s.empty() || (s[0] != '+' && s[0] != '-')) return std::nullopt;
  int64_t sign = s[0] == '-' ? -1 : 1;
  std::string_view body = s.substr(1);
  auto two = [](std::string_view t, size_t at, int64_t* out) {
    if (at + 2 > t.size() || !IsAsciiDigit(t[at]) || !IsAsciiDigit(t[at + 1])) return false;
    *out = (t[at] - '0') * 10 + (t[at + 1] - '0');
    return true;
  };
  int64_t hours = 0;
  int64_t minutes = 0;
  int64_t seconds = 0;
  switch (body.size()) {
    case 1:
      if (!IsAsciiDigit(body[0])) return std::nullopt;
      hours = body[0] - '0';
      break;
    case 2:
      if (!two(body, 0, &hours)) return std::nullopt;
      break;
    case 4:
      if (!two(body, 0, &hours) || !two(body, 2, &minutes)) return std::nullopt;
      break;
    case 5:
      if (!two(body, 0, &hours) || body[2] != ':' || !two(body, 3, &minutes)) return std::nullopt;
      break;
    case 6:
      if (!two(body, 0, &hours) || !two(body, 2, &minutes) || !two(body, 4, &seconds)) {
        return std::nullopt;
      }
      break;
    case 8:
      if (!two(body, 0, &hours) || body[2] != ':' || !two(body, 3, &minutes) || body[5] != ':' ||
          !two(body, 6, &seconds)) {
        return std::nullopt;
      }
      break;
    default: return std::nullopt;
  }
  if (hours > 18 || minutes > 59 || seconds > 59) return std::nullopt;
  int64_t total = hours * 3600 + minutes * 60 + seconds;
  if (total > 18 * 3600) return std::nullopt;
  return sign * total;
}

// Zone ids without a time-zone database: Z, UTC/GMT/UT (optionally followed
// by an offset) and bare offsets. Region ids (Europe/Paris) yield nullopt.
std::optional<int64_t> ParseZone(std::string_view zone) {
  if (zone == "Z" || zone == "z") return 0;
  for (std::string_view prefix :
       {std::string_view("UTC"), std::string_view("GMT"), std::string_view("UT")}) {
    if (zone.size() >= prefix.size()) {
      bool match = true;
      for (size_t i = 0; i < prefix.size(); ++i) {
        if ((zone[i] & ~0x20) != prefix[i]) match = false;
      }
      if (match) {
        std::string_view rest = zone.substr(prefix.size());
        if (rest.empty()) return 0;
        return ParseOffset(rest);
      }
    }
  }
  return ParseOffset(zone);
}

}  // namespace

int32_t DaysFromCivil(int32_t year, int32_t month, int32_t day) {
  return static_cast<int32_t>(DaysFromCivil64(year, month, day));
}

CivilDate CivilFromDays(int32_t days) {
  int64_t z = static_cast<int64_t>(days) + 719468;
  int64_t era = FloorDiv(z, 146097);
  int64_t day_of_era = z - era * 146097;  // [0, 146096]
  int64_t year_of_era =
      (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) /
      365;  // [0, 399]
  int64_t day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
  int64_t mp = (5 * day_of_year + 2) / 153;  // month counted from March, [0, 11]
  int64_t day = day_of_year - (153 * mp + 2) / 5 + 1;
  int64_t month = mp < 10 ? mp + 3 : mp - 9;
  int64_t year = year_of_era + era * 400 + (month <= 2 ? 1 : 0);
  return CivilDate{static_cast<int32_t>(year), static_cast<int32_t>(month),
                   static_cast<int32_t>(day)};
}

std::string FormatDate(int32_t days) {
  std::string out;
  out.reserve(10);
  AppendDate(&out, days);
  return out;
}

std::string FormatTimestampUtc(int64_t micros, int fraction_digits, bool zulu) {
  std::string out;
  out.reserve(32);
  AppendDateTime(&out, micros, 'T', fraction_digits);
  out += zulu ? "Z" : "+00:00";
  return out;
}

std::string FormatTimestampPlain(int64_t micros, int fraction_digits) {
  std::string out;
  out.reserve(26);
  AppendDateTime(&out, micros, ' ', fraction_digits);
  return out;
}

void AppendTimestampText(int64_t micros, std::string* out) {
  const int32_t days = DaysFromMicros(micros);
  const int64_t of_day = micros - int64_t{days} * kMicrosPerDay;
  AppendDate(out, days);
  out->push_back(' ');
  const int64_t seconds = of_day / kMicrosPerSecond;
  int64_t fraction = of_day % kMicrosPerSecond;
  AppendTwoDigits(out, seconds / 3600);
  out->push_back(':');
  AppendTwoDigits(out, seconds / 60 % 60);
  out->push_back(':');
  AppendTwoDigits(out, seconds % 60);
  if (fraction != 0) {
    char digits[6];
    for (int digit_idx = 5; digit_idx >= 0; --digit_idx) {
      digits[digit_idx] = static_cast<char>('0' + fraction % 10);
      fraction /= 10;
    }
    size_t len = 6;
    while (digits[len - 1] == '0') --len;  // stops: the fraction is non-zero
    out->push_back('.');
    out->append(digits, len);
  }
}

std::optional<int32_t> ParseDate(std::string_view s) {
  s = JavaTrim(s);
  size_t pos = 0;
  bool has_day = false;
  std::optional<int64_t> days = ParseDatePart(s, &pos, &has_day);
  if (!days) return std::nullopt;
  if (pos < s.size()) {
    // Only a full date may be followed by a time part, after ' ' or 'T'.
    if (!has_day || (s[pos] != ' ' && s[pos] != 'T')) return std::nullopt;
  }
  if (*days < std::numeric_limits<int32_t>::min() || *days > std::numeric_limits<int32_t>::max()) {
    return std::nullopt;
  }
  return static_cast<int32_t>(*days);
}

namespace {

// The digits s[at, at + n) as a number; -1 unless all are ASCII digits.
int64_t FixedDigits(std::string_view s, size_t at, size_t n) {
  int64_t v = 0;
  for (size_t i = at; i < at + n; ++i) {
    const unsigned d = static_cast<unsigned char>(s[i]) - '0';
    if (d > 9) return -1;
    v = v * 10 + d;
  }
  return v;
}

// "hh:mm:ss" in the eight bytes at `p`, read as one word: false unless the
// colons are there and the six others are ASCII digits.
bool ReadClock(const char* p, int64_t* hour, int64_t* minute, int64_t* second) {
  static_assert(std::endian::native == std::endian::little, "bytes are read little-endian");
  uint64_t word;
  std::memcpy(&word, p, 8);
  // Byte k of the word is p[k]: digits must be 0x30..0x39 (high nibble 3,
  // and adding 6 keeps it 3), colons exactly 0x3a.
  constexpr uint64_t kMask = 0xF0F0FFF0F0FFF0F0ULL;
  constexpr uint64_t kShape = 0x30303A30303A3030ULL;
  constexpr uint64_t kSix = 0x0606000606000606ULL;
  if ((word & kMask) != kShape || ((word + kSix) & kMask) != kShape) return false;
  const auto digit = [word](int k) { return static_cast<int64_t>((word >> (8 * k)) & 0x0F); };
  *hour = digit(0) * 10 + digit(1);
  *minute = digit(3) * 10 + digit(4);
  *second = digit(6) * 10 + digit(7);
  return true;
}

// "yyyy-mm-dd[T ]hh:mm:ss" at the start of `s` with exactly these widths,
// the form nearly every timestamp in data has: false when `s` does not
// start so (then the general reader decides), else the fields. The general
// reader gives the same result for such a prefix.
// With `memo`, a start equal to the memo's (which held the shape) gives
// its fields without reading them; a start whose date (its first 10 bytes)
// equals the memo's reads only the time (the date's day number costs more
// than the rest, and a column's events mostly share their day, not their
// second); a start read anew is remembered.
bool ReadCanonicalDateTime(std::string_view s, int64_t* days, int64_t* hour, int64_t* minute,
                           int64_t* second, TimestampParser::Canonical* memo) {
  if (s.size() < 19 || (s.size() > 19 && IsAsciiDigit(s[19]))) return false;
  const bool same_date =
      memo != nullptr && memo->valid && std::memcmp(s.data(), memo->text, 10) == 0;
  if (same_date && std::memcmp(s.data() + 10, memo->text + 10, 9) == 0) {
    *days = memo->days;
    *hour = memo->hour;
    *minute = memo->minute;
    *second = memo->second;
    return true;
  }
  if ((s[10] != 'T' && s[10] != ' ') || !ReadClock(s.data() + 11, hour, minute, second)) {
    return false;
  }
  if (same_date) {
    *days = memo->days;
  } else {
    if (s[4] != '-' || s[7] != '-') return false;
    const int64_t year = FixedDigits(s, 0, 4);
    const int64_t month = FixedDigits(s, 5, 2);
    const int64_t day = FixedDigits(s, 8, 2);
    if (year < 0 || month < 1 || month > 12 || day < 1 ||
        day > DaysInMonth(year, static_cast<int>(month))) {
      return false;
    }
    *days = DaysFromCivil64(year, month, day);
  }
  if (memo != nullptr) {
    std::memcpy(memo->text, s.data(), 19);
    memo->valid = true;
    memo->days = *days;
    memo->hour = *hour;
    memo->minute = *minute;
    memo->second = *second;
  }
  return true;
}

// Microseconds of a fraction of `digits` (1..9) digits: the value scaled to
// six digits, the ones beyond the sixth truncated (Spark's rule).
int64_t FractionMicros(int64_t fraction, int digits) {
  static constexpr int64_t kPow10[] = {1, 10, 100, 1000, 10000, 100000, 1000000};
  return digits <= 6 ? fraction * kPow10[6 - digits] : fraction / kPow10[digits - 6];
}

std::optional<int64_t> ParseTimestampImpl(std::string_view s, int64_t default_zone_offset_micros,
                                          TimestampParser::Canonical* memo) {
  s = JavaTrim(s);
  size_t pos = 0;
  int64_t hour = 0;
  int64_t minute = 0;
  int64_t second = 0;
  int64_t fraction_micros = 0;
  std::optional<int64_t> zone_seconds;
  int64_t day_number = 0;
  // Reads the optional ".fraction" and zone after the seconds at s[pos].
  auto read_tail = [&]() {
    int digits = 0;
    if (pos < s.size() && s[pos] == '.') {
      ++pos;
      int64_t fraction = 0;
      if (!ReadNumber(s, &pos, 9, &fraction, &digits)) return false;
      fraction_micros = FractionMicros(fraction, digits);
    }
    return true;
  };
  auto read_zone = [&]() {
    if (pos < s.size()) {
      std::string_view zone = s.substr(pos);
      // "Z" ends most ISO-8601 texts; ParseZone's answer for it, sooner.
      if (zone.size() == 1 && zone.front() == 'Z') {
        zone_seconds = 0;
        return true;
      }
      if (zone.front() == ' ') zone.remove_prefix(1);
      zone_seconds = ParseZone(zone);
      if (!zone_seconds) return false;
    }
    return true;
  };
  if (ReadCanonicalDateTime(s, &day_number, &hour, &minute, &second, memo)) {
    pos = 19;
    if (!read_tail() || !read_zone()) return std::nullopt;
  } else {
    bool has_day = false;
    std::optional<int64_t> days = ParseDatePart(s, &pos, &has_day);
    if (!days) return std::nullopt;
    day_number = *days;
    if (pos < s.size()) {
      if (!has_day || (s[pos] != ' ' && s[pos] != 'T')) return std::nullopt;
      ++pos;
      int digits = 0;
      // "yyyy-mm-dd " and "yyyy-mm-ddT" alone mean midnight.
      if (pos < s.size()) {
        if (!ReadNumber(s, &pos, 2, &hour, &digits)) return std::nullopt;
        if (pos < s.size() && s[pos] == ':') {
          ++pos;
          if (!ReadNumber(s, &pos, 2, &minute, &digits)) return std::nullopt;
          if (pos < s.size() && s[pos] == ':') {
            ++pos;
            if (!ReadNumber(s, &pos, 2, &second, &digits)) return std::nullopt;
            if (!read_tail()) return std::nullopt;
          }
        }
        if (!read_zone()) return std::nullopt;
      }
    }
  }
  if (hour > 23 || minute > 59 || second > 59) return std::nullopt;
  int64_t local = 0;
  int64_t time_micros = ((hour * 60 + minute) * 60 + second) * kMicrosPerSecond + fraction_micros;
  if (__builtin_mul_overflow(day_number, kMicrosPerDay, &local) ||
      __builtin_add_overflow(local, time_micros, &local)) {
    return std::nullopt;
  }
  int64_t offset = zone_seconds ? *zone_seconds * kMicrosPerSecond : default_zone_offset_micros;
  int64_t result = 0;
  if (__builtin_sub_overflow(local, offset, &result)) return std::nullopt;
  return result;
}

}  // namespace

std::optional<int64_t> ParseTimestamp(std::string_view s, int64_t default_zone_offset_micros) {
  return ParseTimestampImpl(s, default_zone_offset_micros, nullptr);
}

std::optional<int64_t> TimestampParser::Parse(std::string_view s,
                                              int64_t default_zone_offset_micros) {
  return ParseTimestampImpl(s, default_zone_offset_micros, &last_);
}

}  // namespace silt::columnar
