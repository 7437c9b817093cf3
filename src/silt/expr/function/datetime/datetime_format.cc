#include "silt/expr/function/datetime/datetime_format.h"

#include "silt/base/strings.h"
#include "silt/columnar/temporal.h"

namespace silt::expr {

namespace {

using Item = DateTimeFormat::Item;
using Kind = DateTimeFormat::Item::Kind;

constexpr const char* kMonthNames[12] = {"january",   "february", "march",    "april",
                                         "may",       "june",     "july",     "august",
                                         "september", "october",  "november", "december"};
constexpr const char* kDayNames[7] = {"monday", "tuesday",  "wednesday", "thursday",
                                      "friday", "saturday", "sunday"};

bool IsLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

bool IsNumeric(Kind k) {
  switch (k) {
    case Kind::kYear:
    case Kind::kMonth:
    case Kind::kDay:
    case Kind::kHour24:
    case Kind::kHour1To24:
    case Kind::kHour0To11:
    case Kind::kHour1To12:
    case Kind::kMinute:
    case Kind::kSecond:
    case Kind::kFraction: return true;
    default: return false;
  }
}

bool IsLeap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }
int DaysInMonth(int64_t y, int m) {
  static constexpr int kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[m - 1];
}

struct Fields {
  int64_t year = 1970;
  int month = 1;
  int day = 1;
  int hour = 0;
  Kind hour_kind = Kind::kHour24;
  bool hour_set = false;
  int minute = 0;
  int second = 0;
  int64_t fraction_micros = 0;
  int am_pm = -1;  // 0 = AM, 1 = PM
  bool has_offset = false;
  int64_t offset_seconds = 0;
};

// Matches `word` (lower case) case-insensitively at text[*pos].
bool MatchWord(std::string_view text, size_t* pos, std::string_view word) {
  if (text.size() - *pos < word.size()) return false;
  for (size_t i = 0; i < word.size(); ++i) {
    if (AsciiLower(text[*pos + i]) != word[i]) return false;
  }
  *pos += word.size();
  return true;
}

// Reads min..max digits.
bool ReadDigits(std::string_view text, size_t* pos, int min, int max, int64_t* value, int* count) {
  int64_t v = 0;
  int n = 0;
  while (*pos < text.size() && n < max && IsAsciiDigit(text[*pos])) {
    v = v * 10 + (text[*pos] - '0');
    ++n;
    ++*pos;
  }
  if (n < min) return false;
  *value = v;
  *count = n;
  return true;
}

bool ReadTwo(std::string_view text, size_t* pos, int64_t* v) {
  int n = 0;
  return ReadDigits(text, pos, 2, 2, v, &n);
}

bool ParseOffset(const Item& item, std::string_view text, size_t* pos, int64_t* seconds) {
  if (*pos < text.size() && (text[*pos] == 'Z' || text[*pos] == 'z') && item.offset_z_for_zero) {
    ++*pos;
    *seconds = 0;
    return true;
  }
  if (*pos >= text.size() || (text[*pos] != '+' && text[*pos] != '-')) return false;
  int64_t sign = text[*pos] == '-' ? -1 : 1;
  ++*pos;
  int64_t hours = 0;
  int64_t minutes = 0;
  if (!ReadTwo(text, pos, &hours)) return false;
  if (item.offset_minutes) {
    size_t save = *pos;
    bool colon = item.offset_colon && *pos < text.size() && text[*pos] == ':';
    if (item.offset_colon && !colon) {
      if (item.offset_minutes_required) return false;
    } else {
      if (colon) ++*pos;
      if (!ReadTwo(text, pos, &minutes)) {
        if (item.offset_minutes_required) return false;
        *pos = save;
        minutes = 0;
      }
    }
  }
  if (hours > 18 || minutes > 59) return false;
  *seconds = sign * (hours * 3600 + minutes * 60);
  return true;
}

bool ParseRange(const std::vector<Item>& items, const std::vector<size_t>& match, size_t begin,
                size_t end, std::string_view text, size_t* pos, Fields* f);

bool ParseItem(const Item& item, std::string_view text, size_t* pos, Fields* f) {
  int64_t v = 0;
  int n = 0;
  switch (item.kind) {
    case Kind::kLiteral:
      for (char c : item.literal) {
        if (*pos >= text.size() || AsciiLower(text[*pos]) != AsciiLower(c)) return false;
        ++*pos;
      }
      return true;
    case Kind::kYear: {
      if (item.two_digit_year) {
        if (!ReadDigits(text, pos, item.min_width, item.max_width, &v, &n)) return false;
        f->year = 2000 + v;
        return true;
      }
      // java.time's strict sign rules: y and yyy (SignStyle.NORMAL) take a
      // '-' only; yyyy and longer (EXCEEDS_PAD) a '-', or a '+' exactly
      // when there are more digits than letters, which without a sign is
      // an error.
      const char sign = *pos < text.size() ? text[*pos] : '\0';
      const bool negative = sign == '-';
      const bool positive = sign == '+';
      if (positive && item.letters < 4) return false;
      if (negative || positive) ++*pos;
      if (!ReadDigits(text, pos, item.min_width, item.max_width, &v, &n)) return false;
      if (negative && v == 0) return false;  // "-0" is not a year in strict mode
      if (item.letters >= 4 && item.max_width > item.min_width) {
        if (positive && n <= item.letters) return false;
        if (!positive && !negative && n > item.letters) return false;
      }
      f->year = negative ? -v : v;
      return true;
    }
    case Kind::kMonth:
      if (!ReadDigits(text, pos, item.min_width, item.max_width, &v, &n)) return false;
      f->month = static_cast<int>(v);
      return v >= 1 && v <= 12;
    case Kind::kMonthText:
      for (int m = 0; m < 12; ++m) {
        std::string_view name = kMonthNames[m];
        if (MatchWord(text, pos, item.full_text ? name : name.substr(0, 3))) {
          f->month = m + 1;
          return true;
        }
      }
      return false;
    case Kind::kDayOfWeekText:
      for (const char* day : kDayNames) {
        std::string_view name = day;
        if (MatchWord(text, pos, item.full_text ? name : name.substr(0, 3))) return true;
      }
      return false;
    case Kind::kDay:
      if (!ReadDigits(text, pos, item.min_width, item.max_width, &v, &n)) return false;
      f->day = static_cast<int>(v);
      return v >= 1 && v <= 31;
    case Kind::kHour24:
    case Kind::kHour1To24:
    case Kind::kHour0To11:
    case Kind::kHour1To12: {
      if (!ReadDigits(text, pos, item.min_width, item.max_width, &v, &n)) return false;
      int lo = item.kind == Kind::kHour1To24 || item.kind == Kind::kHour1To12 ? 1 : 0;
      int hi = item.kind == Kind::kHour24      ? 23
               : item.kind == Kind::kHour1To24 ? 24
               : item.kind == Kind::kHour0To11 ? 11
                                               : 12;
      if (v < lo || v > hi) return false;
      f->hour = static_cast<int>(v);
      f->hour_kind = item.kind;
      f->hour_set = true;
      return true;
    }
    case Kind::kAmPm:
      if (MatchWord(text, pos, "am")) {
        f->am_pm = 0;
        return true;
      }
      if (MatchWord(text, pos, "pm")) {
        f->am_pm = 1;
        return true;
      }
      return false;
    case Kind::kMinute:
      if (!ReadDigits(text, pos, item.min_width, item.max_width, &v, &n)) return false;
      f->minute = static_cast<int>(v);
      return v <= 59;
    case Kind::kSecond:
      if (!ReadDigits(text, pos, item.min_width, item.max_width, &v, &n)) return false;
      f->second = static_cast<int>(v);
      return v <= 59;
    case Kind::kFraction: {
      if (!ReadDigits(text, pos, item.min_width, item.max_width, &v, &n)) return false;
      while (n < 6) {
        v *= 10;
        ++n;
      }
      while (n > 6) {
        v /= 10;
        --n;
      }
      f->fraction_micros = v;
      return true;
    }
    case Kind::kOffset: {
      int64_t seconds = 0;
      if (!ParseOffset(item, text, pos, &seconds)) return false;
      f->has_offset = true;
      f->offset_seconds = seconds;
      return true;
    }
    case Kind::kOptionalBegin:
    case Kind::kOptionalEnd: return true;
  }
  return false;
}

bool ParseRange(const std::vector<Item>& items, const std::vector<size_t>& match, size_t begin,
                size_t end, std::string_view text, size_t* pos, Fields* f) {
  for (size_t i = begin; i < end; ++i) {
    const Item& item = items[i];
    if (item.kind == Kind::kOptionalBegin) {
      size_t close = match[i];
      size_t p = *pos;
      Fields g = *f;
      if (ParseRange(items, match, i + 1, close, text, &p, &g)) {
        *pos = p;
        *f = g;
      }
      i = close;
      continue;
    }
    if (!ParseItem(item, text, pos, f)) return false;
  }
  return true;
}

}  // namespace

Result<DateTimeFormat> DateTimeFormat::Compile(std::string_view pattern) {
  DateTimeFormat format;
  format.pattern_ = std::string(pattern);
  std::vector<Item>& items = format.items_;
  auto add_literal = [&](std::string_view s) {
    if (!items.empty() && items.back().kind == Kind::kLiteral) {
      items.back().literal.append(s);
    } else {
      Item item;
      item.kind = Kind::kLiteral;
      item.literal = std::string(s);
      items.push_back(std::move(item));
    }
  };
  int open_sections = 0;
  size_t i = 0;
  while (i < pattern.size()) {
    char c = pattern[i];
    if (c == '\'') {
      if (i + 1 < pattern.size() && pattern[i + 1] == '\'') {
        add_literal("'");
        i += 2;
        continue;
      }
      std::string literal;
      size_t j = i + 1;
      bool closed = false;
      while (j < pattern.size()) {
        if (pattern[j] == '\'') {
          if (j + 1 < pattern.size() && pattern[j + 1] == '\'') {
            literal.push_back('\'');
            j += 2;
            continue;
          }
          closed = true;
          break;
        }
        literal.push_back(pattern[j]);
        ++j;
      }
      if (!closed) {
        return Status::InvalidArgument("Unterminated quote in datetime pattern '", pattern, "'");
      }
      add_literal(literal);
      i = j + 1;
      continue;
    }
    if (c == '[') {
      Item item;
      item.kind = Kind::kOptionalBegin;
      items.push_back(item);
      ++open_sections;
      ++i;
      continue;
    }
    if (c == ']') {
      if (open_sections == 0) {
        return Status::InvalidArgument("Unmatched ']' in datetime pattern '", pattern, "'");
      }
      Item item;
      item.kind = Kind::kOptionalEnd;
      items.push_back(item);
      --open_sections;
      ++i;
      continue;
    }
    if (c == '{' || c == '}' || c == '#') {
      return Status::InvalidArgument("Reserved character '", std::string(1, c),
                                     "' in datetime pattern '", pattern, "'");
    }
    if (!IsLetter(c)) {
      add_literal(std::string_view(&pattern[i], 1));
      ++i;
      continue;
    }
    size_t j = i;
    while (j < pattern.size() && pattern[j] == c) ++j;
    int count = static_cast<int>(j - i);
    i = j;
    Item item;
    item.letters = count;
    auto numeric = [&](Kind kind) {
      if (count > 2) return false;
      item.kind = kind;
      item.min_width = count;
      item.max_width = 2;
      return true;
    };
    bool ok = true;
    switch (c) {
      case 'y':
        item.kind = Kind::kYear;
        if (count == 2) {
          item.min_width = item.max_width = 2;
          item.two_digit_year = true;
        } else {
          item.min_width = count;
          item.max_width = count > 9 ? count : 9;
        }
        break;
      case 'M':
      case 'L':
        if (count <= 2) {
          ok = numeric(Kind::kMonth);
        } else if (count <= 4) {
          item.kind = Kind::kMonthText;
          item.full_text = count == 4;
        } else {
          ok = false;
        }
        break;
      case 'd': ok = numeric(Kind::kDay); break;
      case 'H': ok = numeric(Kind::kHour24); break;
      case 'k': ok = numeric(Kind::kHour1To24); break;
      case 'K': ok = numeric(Kind::kHour0To11); break;
      case 'h': ok = numeric(Kind::kHour1To12); break;
      case 'm': ok = numeric(Kind::kMinute); break;
      case 's': ok = numeric(Kind::kSecond); break;
      case 'S':
        if (count > 9) {
          ok = false;
          break;
        }
        item.kind = Kind::kFraction;
        item.min_width = 1;
        item.max_width = count;
        break;
      case 'a':
        ok = count == 1;
        item.kind = Kind::kAmPm;
        break;
      case 'E':
        ok = count <= 4;
        item.kind = Kind::kDayOfWeekText;
        item.full_text = count == 4;
        break;
      case 'X':
      case 'x':
        if (count > 5) {
          ok = false;
          break;
        }
        item.kind = Kind::kOffset;
        item.offset_z_for_zero = c == 'X';
        item.offset_minutes = true;
        item.offset_minutes_required = count >= 2;
        item.offset_colon = count == 3 || count == 5;
        break;
      case 'Z':
        item.kind = Kind::kOffset;
        if (count <= 3) {
          item.offset_minutes = true;
          item.offset_minutes_required = true;
        } else if (count == 5) {
          item.offset_z_for_zero = true;
          item.offset_minutes = true;
          item.offset_minutes_required = true;
          item.offset_colon = true;
        } else {
          ok = false;
        }
        break;
      default: ok = false; break;
    }
    if (!ok) {
      return Status::NotSupported("Datetime pattern letter '",
                                  std::string(static_cast<size_t>(count), c), "' in '", pattern,
                                  "' (silt parses y M L d H k K h m s S a E X x Z, quoted text "
                                  "and [optional] sections)");
    }
    items.push_back(std::move(item));
  }
  if (open_sections != 0) {
    return Status::InvalidArgument("Unterminated '[' in datetime pattern '", pattern, "'");
  }
  // Adjacent numeric fields ("yyyyMMdd") parse at fixed width, as Java's
  // adjacent value parsing does.
  for (size_t k = 0; k + 1 < items.size(); ++k) {
    if (IsNumeric(items[k].kind) && IsNumeric(items[k + 1].kind)) {
      items[k].max_width = items[k].min_width;
    }
  }
  return format;
}

bool DateTimeFormat::LegacyParserAccepts(std::string_view text) const {
  int64_t year = 1970;
  int64_t month = 1;
  int64_t day = 1;
  size_t pos = 0;
  for (size_t i = 0; i < items_.size(); ++i) {
    const Item& item = items_[i];
    if (item.kind == Kind::kLiteral) {
      if (text.substr(pos, item.literal.size()) != item.literal) return false;
      pos += item.literal.size();
      continue;
    }
    if (!IsNumeric(item.kind)) return false;
    // SimpleDateFormat reads as many digits as there are unless the next
    // field is numeric too (then exactly the letter count).
    const bool fixed = i + 1 < items_.size() && IsNumeric(items_[i + 1].kind);
    size_t end = pos;
    while (end < text.size() && text[end] >= '0' && text[end] <= '9' &&
           (!fixed || end - pos < static_cast<size_t>(item.letters))) {
      ++end;
    }
    if (end == pos || end - pos > 18) return false;
    int64_t value = 0;
    for (size_t k = pos; k < end; ++k) value = value * 10 + (text[k] - '0');
    pos = end;
    // Non-lenient calendar ranges.
    switch (item.kind) {
      case Kind::kYear:
        if (value < 1) return false;
        year = value;
        break;
      case Kind::kMonth:
        if (value < 1 || value > 12) return false;
        month = value;
        break;
      case Kind::kDay:
        if (value < 1 || value > 31) return false;
        day = value;
        break;
      case Kind::kHour24:
        if (value > 23) return false;
        break;
      case Kind::kHour1To24:
        if (value < 1 || value > 24) return false;
        break;
      case Kind::kHour0To11:
        if (value > 11) return false;
        break;
      case Kind::kHour1To12:
        if (value < 1 || value > 12) return false;
        break;
      case Kind::kMinute:
      case Kind::kSecond:
        if (value > 59) return false;
        break;
      case Kind::kFraction:  // milliseconds for SimpleDateFormat
        if (value > 999) return false;
        break;
      default: return false;
    }
  }
  return pos > 0 && year <= 9999999 && day <= DaysInMonth(year, static_cast<int>(month));
}

Status CheckLegacyParser(const DateTimeFormat& format, std::string_view text, int64_t row,
                         std::string_view sql) {
  if (!format.LegacyParserAccepts(text)) return Status::OK();
  return Status::InvalidArgument(
      "INCONSISTENT_BEHAVIOR_CROSS_VERSION: '", text, "' does not match the pattern '",
      format.pattern(), "' (row ", row, ") in '", sql,
      "', but Spark's pre-3.0 parser would accept it, so Spark 3.5 fails here too "
      "(spark.sql.legacy.timeParserPolicy EXCEPTION); fix the pattern, e.g. 'M' "
      "instead of 'MM' for one-digit months");
}

std::optional<int64_t> DateTimeFormat::ParseTimestamp(std::string_view text,
                                                      int64_t default_offset_micros) const {
  std::optional<Local> local = ParseLocal(text);
  if (!local.has_value()) return std::nullopt;
  const int64_t offset = local->has_offset ? local->offset_seconds * columnar::kMicrosPerSecond
                                           : default_offset_micros;
  return local->micros - offset;
}

std::optional<DateTimeFormat::Local> DateTimeFormat::ParseLocal(std::string_view text) const {
  // Matching [ and ] positions.
  std::vector<size_t> match(items_.size(), 0);
  std::vector<size_t> stack;
  for (size_t i = 0; i < items_.size(); ++i) {
    if (items_[i].kind == Kind::kOptionalBegin) stack.push_back(i);
    if (items_[i].kind == Kind::kOptionalEnd) {
      match[stack.back()] = i;
      stack.pop_back();
    }
  }
  Fields f;
  size_t pos = 0;
  if (!ParseRange(items_, match, 0, items_.size(), text, &pos, &f) || pos != text.size()) {
    return std::nullopt;
  }
  if (f.day > DaysInMonth(f.year, f.month)) return std::nullopt;
  int hour = f.hour;
  switch (f.hour_kind) {
    case Kind::kHour1To24: hour = f.hour == 24 ? 0 : f.hour; break;
    case Kind::kHour0To11: hour = f.hour + (f.am_pm == 1 ? 12 : 0); break;
    case Kind::kHour1To12: hour = f.hour % 12 + (f.am_pm == 1 ? 12 : 0); break;
    default: break;
  }
  if (f.year < -290000 || f.year > 290000) return std::nullopt;
  int64_t days = columnar::DaysFromCivil(static_cast<int32_t>(f.year), f.month, f.day);
  int64_t seconds = ((days * 24 + hour) * 60 + f.minute) * 60 + f.second;
  Local out;
  out.micros = seconds * columnar::kMicrosPerSecond + f.fraction_micros;
  out.has_offset = f.has_offset;
  out.offset_seconds = f.offset_seconds;
  return out;
}

namespace {

void AppendPadded(int64_t v, int width, std::string* out) {
  if (v < 0) {
    out->push_back('-');
    v = -v;
  }
  std::string digits = std::to_string(v);
  for (int i = static_cast<int>(digits.size()); i < width; ++i) out->push_back('0');
  out->append(digits);
}

std::string Capitalized(const char* name, bool full) {
  std::string s(name);
  if (!full) s.resize(3);
  s[0] = static_cast<char>(s[0] - 'a' + 'A');
  return s;
}

}  // namespace

void DateTimeFormat::Format(int64_t local_micros, int32_t offset_seconds, std::string* out) const {
  int32_t days = columnar::DaysFromMicros(local_micros);
  int64_t in_day = local_micros - int64_t{days} * columnar::kMicrosPerDay;
  columnar::CivilDate civil = columnar::CivilFromDays(days);
  int64_t secs = in_day / columnar::kMicrosPerSecond;
  int64_t frac = in_day % columnar::kMicrosPerSecond;
  int hour = static_cast<int>(secs / 3600);
  int minute = static_cast<int>(secs / 60 % 60);
  int second = static_cast<int>(secs % 60);
  for (const Item& item : items_) {
    switch (item.kind) {
      case Kind::kLiteral: out->append(item.literal); break;
      case Kind::kYear:
        if (item.two_digit_year) {
          int64_t y = civil.year % 100;
          AppendPadded(y < 0 ? y + 100 : y, 2, out);
        } else {
          AppendPadded(civil.year, item.letters, out);
        }
        break;
      case Kind::kMonth: AppendPadded(civil.month, item.letters, out); break;
      case Kind::kMonthText:
        out->append(Capitalized(kMonthNames[civil.month - 1], item.full_text));
        break;
      case Kind::kDay: AppendPadded(civil.day, item.letters, out); break;
      case Kind::kHour24: AppendPadded(hour, item.letters, out); break;
      case Kind::kHour1To24: AppendPadded(hour == 0 ? 24 : hour, item.letters, out); break;
      case Kind::kHour0To11: AppendPadded(hour % 12, item.letters, out); break;
      case Kind::kHour1To12:
        AppendPadded(hour % 12 == 0 ? 12 : hour % 12, item.letters, out);
        break;
      case Kind::kAmPm: out->append(hour < 12 ? "AM" : "PM"); break;
      case Kind::kMinute: AppendPadded(minute, item.letters, out); break;
      case Kind::kSecond: AppendPadded(second, item.letters, out); break;
      case Kind::kFraction: {
        std::string digits = std::to_string(frac + 1000000).substr(1);
        digits.append("000");
        out->append(digits.substr(0, static_cast<size_t>(std::min(item.letters, 9))));
        break;
      }
      case Kind::kDayOfWeekText: {
        // 1970-01-01 was a Thursday; kDayNames starts on Monday.
        int dow = static_cast<int>(((int64_t{days} % 7) + 7 + 3) % 7);
        out->append(Capitalized(kDayNames[dow], item.full_text));
        break;
      }
      case Kind::kOffset: {
        if (offset_seconds == 0 && item.offset_z_for_zero) {
          out->push_back('Z');
          break;
        }
        int32_t abs = offset_seconds < 0 ? -offset_seconds : offset_seconds;
        out->push_back(offset_seconds < 0 ? '-' : '+');
        AppendPadded(abs / 3600, 2, out);
        int32_t mins = abs / 60 % 60;
        if (item.offset_minutes_required || mins != 0) {
          if (item.offset_colon) out->push_back(':');
          AppendPadded(mins, 2, out);
        }
        break;
      }
      case Kind::kOptionalBegin:
      case Kind::kOptionalEnd: break;
    }
  }
}

}  // namespace silt::expr
