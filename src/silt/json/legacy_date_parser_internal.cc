#include "silt/json/legacy_date_parser_internal.h"

#include <chrono>
#include <limits>

namespace silt::json::internal {

namespace {

constexpr const char* kMonths[12] = {"january",   "february", "march",    "april",
                                     "may",       "june",     "july",     "august",
                                     "september", "october",  "november", "december"};
constexpr const char* kShortMonths[12] = {"jan", "feb", "mar", "apr", "may", "jun",
                                          "jul", "aug", "sep", "oct", "nov", "dec"};
constexpr const char* kDays[7] = {"sunday",   "monday", "tuesday", "wednesday",
                                  "thursday", "friday", "saturday"};
constexpr const char* kShortDays[7] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};

bool IsLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// Java's Character.isWhitespace over ASCII.
bool IsJavaWhitespace(char c) {
  return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1c' && c <= '\x1f');
}

// Case-insensitive match of `word` (lower case) at text[pos].
bool MatchesAt(std::string_view text, size_t pos, std::string_view word) {
  if (text.size() - pos < word.size()) return false;
  for (size_t i = 0; i < word.size(); ++i) {
    if (Lower(text[pos + i]) != word[i]) return false;
  }
  return true;
}

// The longest of `names` (lower case) at text[*pos]; its index, or -1.
int MatchLongest(std::string_view text, size_t* pos, const char* const* names, int count,
                 const char* const* short_names) {
  int best = -1;
  size_t best_len = 0;
  for (int i = 0; i < count; ++i) {
    for (const char* name : {names[i], short_names != nullptr ? short_names[i] : names[i]}) {
      std::string_view word(name);
      if (word.size() > best_len && MatchesAt(text, *pos, word)) {
        best = i;
        best_len = word.size();
      }
    }
  }
  if (best >= 0) *pos += best_len;
  return best;
}

// Days from 1970-01-01 of a proleptic Gregorian (year, month 1..12, day 1).
int64_t DaysFromCivil64(int64_t y, int64_t m) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

}  // namespace

bool LegacyDateParser::IsNumber(Kind kind) {
  switch (kind) {
    case Kind::kYear:
    case Kind::kMonth:
    case Kind::kDay:
    case Kind::kHourOfDay:
    case Kind::kHour24:
    case Kind::kHour:
    case Kind::kHour12:
    case Kind::kMinute:
    case Kind::kSecond:
    case Kind::kMillisecond:
    case Kind::kOtherNumber: return true;
    default: return false;
  }
}

std::optional<LegacyDateParser> LegacyDateParser::Compile(std::string_view pattern) {
  LegacyDateParser out;
  out.pattern_ = std::string(pattern);
  auto add_literal = [&out](std::string_view text) {
    if (!out.items_.empty() && out.items_.back().kind == Kind::kLiteral) {
      out.items_.back().literal.append(text);
      return;
    }
    Item item;
    item.literal = std::string(text);
    out.items_.push_back(std::move(item));
  };
  size_t i = 0;
  while (i < pattern.size()) {
    const char c = pattern[i];
    if (!IsLetter(c)) {
      if (c != '\'') {
        add_literal(pattern.substr(i, 1));
        ++i;
        continue;
      }
      // A quoted run; '' is a quote.
      if (i + 1 < pattern.size() && pattern[i + 1] == '\'') {
        add_literal("'");
        i += 2;
        continue;
      }
      size_t j = i + 1;
      std::string text;
      while (true) {
        if (j >= pattern.size()) return std::nullopt;
        if (pattern[j] == '\'') {
          if (j + 1 < pattern.size() && pattern[j + 1] == '\'') {
            text.push_back('\'');
            j += 2;
            continue;
          }
          break;
        }
        text.push_back(pattern[j++]);
      }
      add_literal(text);
      i = j + 1;
      continue;
    }
    size_t j = i;
    while (j < pattern.size() && pattern[j] == c) ++j;
    Item item;
    item.width = static_cast<int>(j - i);
    i = j;
    switch (c) {
      case 'y':
      case 'Y': item.kind = Kind::kYear; break;
      case 'M':
      case 'L': item.kind = item.width >= 3 ? Kind::kMonthText : Kind::kMonth; break;
      case 'd': item.kind = Kind::kDay; break;
      case 'H': item.kind = Kind::kHourOfDay; break;
      case 'k': item.kind = Kind::kHour24; break;
      case 'K': item.kind = Kind::kHour; break;
      case 'h': item.kind = Kind::kHour12; break;
      case 'm': item.kind = Kind::kMinute; break;
      case 's': item.kind = Kind::kSecond; break;
      case 'S':
        item.kind = Kind::kMillisecond;
        out.fraction_digits_ += item.width;
        break;
      case 'a': item.kind = Kind::kAmPm; break;
      case 'D':
      case 'F':
      case 'w':
      case 'W':
      case 'u':
        item.kind = Kind::kOtherNumber;
        out.resolvable_ = false;
        break;
      case 'E':
        item.kind = Kind::kDayText;
        out.resolvable_ = false;
        break;
      case 'G':
        item.kind = Kind::kEraText;
        out.resolvable_ = false;
        break;
      case 'X':
        if (item.width > 3) return std::nullopt;
        item.kind = Kind::kIsoZone;
        break;
      case 'Z':
        item.kind = item.width == 2 ? Kind::kIsoZone : Kind::kZone;
        if (item.width == 2) item.width = 3;
        break;
      case 'z': item.kind = Kind::kZone; break;
      default: return std::nullopt;
    }
    out.items_.push_back(std::move(item));
  }
  // Two-digit years fall in [now - 80, now + 20).
  const auto now = std::chrono::system_clock::now();
  const int64_t days =
      std::chrono::duration_cast<std::chrono::hours>(now.time_since_epoch()).count() / 24;
  const int64_t start_year = 1970 + days * 400 / 146097 - 80;
  out.two_digit_century_ = start_year / 100 * 100;
  out.two_digit_start_ = start_year - out.two_digit_century_;
  return out;
}

bool LegacyDateParser::Parse(std::string_view text, Fields* f) const {
  *f = Fields();
  size_t pos = 0;
  for (size_t item_idx = 0; item_idx < items_.size(); ++item_idx) {
    const Item& item = items_[item_idx];
    if (IsNumber(item.kind)) {
      // A fixed width only when the next field is a number too.
      const bool fixed = item_idx + 1 < items_.size() && IsNumber(items_[item_idx + 1].kind);
      size_t end = text.size();
      if (!fixed) {
        while (pos < text.size() && IsJavaWhitespace(text[pos])) ++pos;
      } else if (end > pos + static_cast<size_t>(item.width)) {
        end = pos + static_cast<size_t>(item.width);
      }
      size_t digits_end = pos;
      while (digits_end < end && IsDigit(text[digits_end])) ++digits_end;
      if (digits_end == pos) return false;
      // Integer.parseInt: more than int32 is a NumberFormatException, which
      // Spark's check treats as "not read".
      int64_t value = 0;
      for (size_t k = pos; k < digits_end; ++k) {
        value = value * 10 + (text[k] - '0');
        if (value > std::numeric_limits<int32_t>::max()) return false;
      }
      pos = digits_end;
      switch (item.kind) {
        case Kind::kYear:
          // y and yy: a year under 100 lands in the century window.
          if (item.width <= 2 && value < 100) {
            value += value >= two_digit_start_ ? two_digit_century_ : two_digit_century_ + 100;
          }
          f->year = value;
          break;
        case Kind::kMonth: f->month = value - 1; break;
        case Kind::kDay: f->day = value; break;
        case Kind::kHourOfDay: f->hour = value; break;
        case Kind::kHour24: f->hour = value == 24 ? 0 : value; break;
        case Kind::kHour: f->hour12 = value; break;
        case Kind::kHour12: f->hour12 = value == 12 ? 0 : value; break;
        case Kind::kMinute: f->minute = value; break;
        case Kind::kSecond: f->second = value; break;
        case Kind::kMillisecond: f->millisecond = value; break;
        default: break;
      }
      continue;
    }
    switch (item.kind) {
      case Kind::kLiteral:
        if (text.substr(pos, item.literal.size()) != item.literal) return false;
        pos += item.literal.size();
        break;
      case Kind::kMonthText: {
        const int month = MatchLongest(text, &pos, kMonths, 12, kShortMonths);
        if (month < 0) return false;
        f->month = month;
        break;
      }
      case Kind::kDayText:
        if (MatchLongest(text, &pos, kDays, 7, kShortDays) < 0) return false;
        break;
      case Kind::kAmPm: {
        static constexpr const char* kAmPmNames[2] = {"am", "pm"};
        const int am_pm = MatchLongest(text, &pos, kAmPmNames, 2, nullptr);
        if (am_pm < 0) return false;
        f->am_pm = am_pm;
        break;
      }
      case Kind::kEraText: {
        static constexpr const char* kEras[2] = {"before christ", "anno domini"};
        static constexpr const char* kShortEras[2] = {"bc", "ad"};
        if (MatchLongest(text, &pos, kEras, 2, kShortEras) < 0) return false;
        break;
      }
      case Kind::kIsoZone: {
        // (Z|[+-]\d{2}), (Z|[+-]\d{4}), (Z|[+-]\d{2}:\d{2})
        if (pos < text.size() && text[pos] == 'Z') {
          ++pos;
          f->has_offset = true;
          f->offset_seconds = 0;
          break;
        }
        if (pos >= text.size() || (text[pos] != '+' && text[pos] != '-')) return false;
        const int64_t sign = text[pos] == '-' ? -1 : 1;
        size_t p = pos + 1;
        auto two = [&text, &p](int64_t* v) {
          if (p + 2 > text.size() || !IsDigit(text[p]) || !IsDigit(text[p + 1])) return false;
          *v = (text[p] - '0') * 10 + (text[p + 1] - '0');
          p += 2;
          return true;
        };
        int64_t hours = 0;
        int64_t minutes = 0;
        if (!two(&hours)) return false;
        if (item.width == 2 && !two(&minutes)) return false;
        if (item.width == 3) {
          if (p >= text.size() || text[p] != ':') return false;
          ++p;
          if (!two(&minutes)) return false;
        }
        pos = p;
        f->has_offset = true;
        f->offset_seconds = sign * (hours * 3600 + minutes * 60);
        break;
      }
      case Kind::kZone: {
        // [+-]\d{4} | GMT[+-]\d{1,2}:\d{2} | a zone name (UTC, GMT, Z).
        size_t p = pos;
        if (p < text.size() && (text[p] == '+' || text[p] == '-')) {
          if (p + 5 > text.size()) return false;
          for (size_t k = p + 1; k < p + 5; ++k) {
            if (!IsDigit(text[k])) return false;
          }
          const int64_t sign = text[p] == '-' ? -1 : 1;
          const int64_t hours = (text[p + 1] - '0') * 10 + (text[p + 2] - '0');
          const int64_t minutes = (text[p + 3] - '0') * 10 + (text[p + 4] - '0');
          f->offset_seconds = sign * (hours * 3600 + minutes * 60);
          pos = p + 5;
        } else if (MatchesAt(text, p, "gmt") && p + 3 < text.size() &&
                   (text[p + 3] == '+' || text[p + 3] == '-')) {
          const int64_t sign = text[p + 3] == '-' ? -1 : 1;
          size_t k = p + 4;
          int64_t hours = 0;
          int n = 0;
          while (k < text.size() && n < 2 && IsDigit(text[k])) {
            hours = hours * 10 + (text[k++] - '0');
            ++n;
          }
          if (n == 0 || k + 3 > text.size() || text[k] != ':' || !IsDigit(text[k + 1]) ||
              !IsDigit(text[k + 2])) {
            return false;
          }
          const int64_t minutes = (text[k + 1] - '0') * 10 + (text[k + 2] - '0');
          f->offset_seconds = sign * (hours * 3600 + minutes * 60);
          pos = k + 3;
        } else if (MatchesAt(text, p, "utc") || MatchesAt(text, p, "gmt")) {
          f->offset_seconds = 0;
          pos = p + 3;
        } else if (MatchesAt(text, p, "z")) {
          f->offset_seconds = 0;
          pos = p + 1;
        } else {
          return false;
        }
        f->has_offset = true;
        break;
      }
      default: return false;
    }
  }
  return true;
}

std::optional<int64_t> LegacyDateParser::LocalMicros(const Fields& f) const {
  if (!resolvable_) return std::nullopt;
  // Lenient: months past 11 carry into years, days and times add up.
  const int64_t year = f.year + FloorDiv(f.month, 12);
  const int64_t month = f.month - FloorDiv(f.month, 12) * 12 + 1;
  if (year < -300000 || year > 300000) return std::nullopt;
  const int64_t days = DaysFromCivil64(year, month) + (f.day - 1);
  const int64_t hour = f.hour12 >= 0 ? f.hour12 + 12 * f.am_pm : f.hour;
  // The S field is a fraction of fraction_digits_ digits (MicrosCalendar).
  int64_t fraction_micros = 0;
  if (f.millisecond != 0) {
    __int128 scaled = static_cast<__int128>(f.millisecond) * 1000000;
    for (int k = 0; k < fraction_digits_; ++k) scaled /= 10;
    fraction_micros = static_cast<int64_t>(scaled);
  }
  const __int128 seconds =
      static_cast<__int128>(days) * 86400 + hour * 3600 + f.minute * 60 + f.second;
  const __int128 micros = seconds * 1000000 + fraction_micros;
  if (micros > std::numeric_limits<int64_t>::max() ||
      micros < std::numeric_limits<int64_t>::min()) {
    return std::nullopt;
  }
  return static_cast<int64_t>(micros);
}

}  // namespace silt::json::internal
