// Date/time conversions that need the session time zone by name (with DST):
// date_format, from_unixtime, unix_timestamp / to_unix_timestamp,
// timestamp_seconds / _millis / _micros, unix_seconds / _millis / _micros,
// date_trunc, trunc, weekofyear, months_between, add_months, last_day,
// from_utc_timestamp and to_utc_timestamp. Semantics of Spark 3.5's
// DateTimeUtils (non-ANSI: unparsable text and unknown units are NULL).
#include <cmath>
#include <limits>
#include <string>

#include "silt/columnar/builder.h"
#include "silt/columnar/temporal.h"
#include "silt/expr/ast.h"
#include "silt/expr/cast.h"
#include "silt/expr/datetime_format.h"
#include "silt/expr/function_registry.h"
#include "silt/expr/kernel_util.h"
#include "silt/expr/time_zone.h"
#include "silt/expr/type_util.h"

namespace silt::expr {

namespace {

using columnar::ColumnBuilder;
using columnar::ColumnPtr;
using columnar::kMicrosPerDay;
using columnar::kMicrosPerSecond;

constexpr const char* kDefaultPattern = "yyyy-MM-dd HH:mm:ss";

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

Status CoerceTo(CallSite& site, size_t index, const TypePtr& type, std::string_view expected) {
  const DataType& t = *site.args[index]->type();
  if (t.Equals(*type)) return Status::OK();
  if (t.is_nested()) return ArgTypeError(site, index, expected);
  SILT_ASSIGN_OR_RETURN(site.args[index],
                        ImplicitCast(std::move(site.args[index]), type, site.options));
  return Status::OK();
}

// A constant pattern argument compiled at bind time; nullopt for NULL.
Result<std::optional<DateTimeFormat>> PatternArg(CallSite& site, size_t index) {
  SILT_RETURN_NOT_OK(CoerceTo(site, index, DataType::String(), "a STRING pattern"));
  SILT_ASSIGN_OR_RETURN(ColumnPtr pattern, ConstantArg(site, index, "the datetime pattern"));
  if (pattern->IsNull(0)) return std::optional<DateTimeFormat>();
  Result<DateTimeFormat> format = DateTimeFormat::Compile(pattern->StringValue(0));
  if (!format.ok()) return format.status().WithContextParts("in '", site.text, "'");
  return std::optional<DateTimeFormat>(std::move(format).MoveValueUnsafe());
}

// date_format(ts, fmt) and from_unixtime(secs, fmt): TIMESTAMP micros or
// BIGINT seconds to text in the session time zone.
class FormatKernel final : public Kernel {
 public:
  FormatKernel(std::optional<DateTimeFormat> format, TimeZonePtr zone, bool seconds)
      : format_(std::move(format)), zone_(std::move(zone)), seconds_(seconds) {}
  Result<ColumnPtr> Exec(const KernelInfo& info, const ExecArgs& args) override {
    const int64_t n = args.num_rows;
    FixedReader<int64_t> in(args.args[0]);
    ValidityOut validity(n);
    ColumnBuilder builder(info.type);
    builder.Reserve(n);
    if (!validity.InitFromArgs(args.args.subspan(0, 1)) || !format_) {
      builder.AppendNulls(n);
      return builder.Finish();
    }
    std::string text;
    for (int64_t row = 0; row < n; ++row) {
      if (!validity.IsValid(row)) {
        builder.AppendNull();
        continue;
      }
      int64_t micros = in[row];
      if (seconds_) {
        if (micros > std::numeric_limits<int64_t>::max() / kMicrosPerSecond ||
            micros < std::numeric_limits<int64_t>::min() / kMicrosPerSecond) {
          builder.AppendNull();
          continue;
        }
        micros *= kMicrosPerSecond;
      }
      int32_t offset = zone_->OffsetSecondsAt(micros);
      text.clear();
      format_->Format(micros + int64_t{offset} * kMicrosPerSecond, offset, &text);
      builder.AppendString(text);
    }
    return builder.Finish();
  }

 private:
  std::optional<DateTimeFormat> format_;
  TimeZonePtr zone_;
  bool seconds_;
};

Result<BoundNodePtr> BindDateFormat(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 2, 2));
  SILT_RETURN_NOT_OK(CoerceTo(site, 0, DataType::Timestamp(), "TIMESTAMP"));
  SILT_ASSIGN_OR_RETURN(std::optional<DateTimeFormat> format, PatternArg(site, 1));
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  std::vector<BoundNodePtr> args;
  args.push_back(std::move(site.args[0]));
  return MakeBoundCall(
      site, DataType::String(), true, std::move(args),
      std::make_unique<FormatKernel>(std::move(format), SessionTimeZone(site.options), false),
      std::move(sql));
}

Result<BoundNodePtr> BindFromUnixtime(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 1, 2));
  SILT_RETURN_NOT_OK(CoerceTo(site, 0, DataType::Long(), "BIGINT"));
  std::optional<DateTimeFormat> format;
  std::vector<std::string> sqls = ArgSqls(site.args);
  if (site.args.size() == 2) {
    SILT_ASSIGN_OR_RETURN(format, PatternArg(site, 1));
  } else {
    SILT_ASSIGN_OR_RETURN(DateTimeFormat f, DateTimeFormat::Compile(kDefaultPattern));
    format = std::move(f);
    sqls.push_back(kDefaultPattern);
  }
  std::string sql = PrettyCall(site.name, sqls);
  std::vector<BoundNodePtr> args;
  args.push_back(std::move(site.args[0]));
  return MakeBoundCall(
      site, DataType::String(), true, std::move(args),
      std::make_unique<FormatKernel>(std::move(format), SessionTimeZone(site.options), true),
      std::move(sql));
}

// unix_timestamp / to_unix_timestamp: seconds since the epoch of a
// timestamp, a date (its local midnight) or text parsed with the pattern.
class UnixTimestampKernel final : public Kernel {
 public:
  UnixTimestampKernel(std::optional<DateTimeFormat> format, TimeZonePtr zone)
      : format_(std::move(format)), zone_(std::move(zone)) {}
  Result<ColumnPtr> Exec(const KernelInfo& info, const ExecArgs& args) override {
    const int64_t n = args.num_rows;
    ValidityOut validity(n);
    FixedWriter<int64_t> out(n);
    if (args.args.empty()) {
      for (int64_t row = 0; row < n; ++row) {
        out.Set(row, FloorDiv(args.eval->current_timestamp_micros, kMicrosPerSecond));
      }
      return out.Finish(info.type, &validity);
    }
    if (!validity.InitFromArgs(args.args.subspan(0, 1))) return out.Finish(info.type, &validity);
    switch (info.arg_types[0]->id()) {
      case TypeId::kTimestamp:
      case TypeId::kTimestampNtz: {
        FixedReader<int64_t> in(args.args[0]);
        // Spark divides with truncation (1969-12-31 23:59:59.5 gives 0).
        for (int64_t row = 0; row < n; ++row) out.Set(row, in[row] / kMicrosPerSecond);
        break;
      }
      case TypeId::kDate: {
        FixedReader<int32_t> in(args.args[0]);
        for (int64_t row = 0; row < n; ++row) {
          out.Set(row,
                  FloorDiv(zone_->LocalToUtc(int64_t{in[row]} * kMicrosPerDay), kMicrosPerSecond));
        }
        break;
      }
      default: {
        StringReader in(args.args[0]);
        if (!format_) {
          validity.SetAllNull();
          break;
        }
        for (int64_t row = 0; row < n; ++row) {
          if (!validity.IsValid(row)) continue;
          std::optional<int64_t> local = format_->ParseTimestamp(in[row], 0);
          if (!local) {
            SILT_RETURN_NOT_OK(CheckLegacyParser(*format_, in[row], row, info.sql));
            if (info.options.ansi) {
              return Status::InvalidArgument("Cannot parse '", in[row], "' with pattern '",
                                             format_->pattern(), "' (row ", row, ") in '", info.sql,
                                             "'");
            }
            validity.SetNull(row);
            continue;
          }
          // Text with its own offset parses to UTC directly; zone-less text
          // is local time in the session zone.
          std::optional<int64_t> with_offset =
              format_->ParseTimestamp(in[row], int64_t{1} * kMicrosPerSecond);
          int64_t utc =
              (with_offset && *with_offset == *local) ? *local : zone_->LocalToUtc(*local);
          out.Set(row, utc / kMicrosPerSecond);
        }
        break;
      }
    }
    return out.Finish(info.type, &validity);
  }

 private:
  std::optional<DateTimeFormat> format_;
  TimeZonePtr zone_;
};

Result<BoundNodePtr> BindUnixTimestamp(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, site.name == "unix_timestamp" ? 0 : 1, 2));
  std::vector<std::string> sqls = ArgSqls(site.args);
  if (site.args.empty()) {
    sqls = {"current_timestamp()", kDefaultPattern};
    std::string sql = PrettyCall(site.name, sqls);
    return MakeBoundCall(site, DataType::Long(), false, {},
                         std::make_unique<UnixTimestampKernel>(std::nullopt, TimeZone::Utc()),
                         std::move(sql), /*context_dependent=*/true);
  }
  TypeId in = site.args[0]->type()->id();
  if (in != TypeId::kTimestamp && in != TypeId::kTimestampNtz && in != TypeId::kDate) {
    SILT_RETURN_NOT_OK(CoerceTo(site, 0, DataType::String(), "STRING, DATE or TIMESTAMP"));
  }
  std::optional<DateTimeFormat> format;
  if (site.args.size() == 2) {
    SILT_ASSIGN_OR_RETURN(format, PatternArg(site, 1));
  } else {
    SILT_ASSIGN_OR_RETURN(DateTimeFormat f, DateTimeFormat::Compile(kDefaultPattern));
    format = std::move(f);
    sqls.push_back(kDefaultPattern);
  }
  std::string sql = PrettyCall(site.name, sqls);
  std::vector<BoundNodePtr> args;
  args.push_back(std::move(site.args[0]));
  return MakeBoundCall(
      site, DataType::Long(), true, std::move(args),
      std::make_unique<UnixTimestampKernel>(std::move(format), SessionTimeZone(site.options)),
      std::move(sql));
}

// timestamp_seconds / _millis / _micros: numbers to TIMESTAMP.
template <int64_t kUnit>
Result<ColumnPtr> FromEpochKernel(const KernelInfo& info, const ExecArgs& args) {
  const int64_t n = args.num_rows;
  ValidityOut validity(n);
  FixedWriter<int64_t> out(n);
  if (!validity.InitFromArgs(args.args)) return out.Finish(info.type, &validity);
  if (info.arg_types[0]->id() == TypeId::kDouble) {
    FixedReader<double> in(args.args[0]);
    for (int64_t row = 0; row < n; ++row) {
      if (!validity.IsValid(row)) continue;
      double v = in[row];
      if (!std::isfinite(v)) {
        validity.SetNull(row);
        continue;
      }
      // Spark: (d * MICROS_PER_SECOND).toLong, which saturates.
      double m = v * static_cast<double>(kUnit);
      int64_t r = m >= 9.2233720368547758e18    ? std::numeric_limits<int64_t>::max()
                  : m <= -9.2233720368547758e18 ? std::numeric_limits<int64_t>::min()
                                                : static_cast<int64_t>(m);
      out.Set(row, r);
    }
    return out.Finish(info.type, &validity);
  }
  FixedReader<int64_t> in(args.args[0]);
  for (int64_t row = 0; row < n; ++row) {
    if (!validity.IsValid(row)) continue;
    int64_t r;
    if (__builtin_mul_overflow(in[row], kUnit, &r)) {
      return Status::InvalidArgument("long overflow converting ", in[row], " (row ", row,
                                     ") to a timestamp in '", info.sql, "'");
    }
    out.Set(row, r);
  }
  return out.Finish(info.type, &validity);
}

template <int64_t kUnit>
Result<BoundNodePtr> BindFromEpoch(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 1, 1));
  const DataType& t = *site.args[0]->type();
  if (kUnit == kMicrosPerSecond &&
      (t.id() == TypeId::kFloat || t.id() == TypeId::kDouble || t.id() == TypeId::kDecimal)) {
    SILT_RETURN_NOT_OK(CoerceTo(site, 0, DataType::Double(), "numeric"));
  } else if (t.is_integral() || t.id() == TypeId::kNull) {
    SILT_RETURN_NOT_OK(CoerceTo(site, 0, DataType::Long(), "integral"));
  } else {
    return ArgTypeError(site, 0, kUnit == kMicrosPerSecond ? "numeric" : "integral");
  }
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  bool nullable = AnyNullable(site.args) || kUnit == kMicrosPerSecond;
  return MakeBoundCall(site, DataType::Timestamp(), nullable, std::move(site.args),
                       &FromEpochKernel<kUnit>, std::move(sql));
}

// unix_seconds / _millis / _micros: TIMESTAMP to BIGINT (floor).
template <int64_t kUnit>
Result<ColumnPtr> ToEpochKernel(const KernelInfo& info, const ExecArgs& args) {
  const int64_t n = args.num_rows;
  ValidityOut validity(n);
  FixedWriter<int64_t> out(n);
  validity.InitFromArgs(args.args);
  FixedReader<int64_t> in(args.args[0]);
  for (int64_t row = 0; row < n; ++row) out.Set(row, FloorDiv(in[row], kMicrosPerSecond / kUnit));
  return out.Finish(info.type, &validity);
}

template <int64_t kUnit>
Result<BoundNodePtr> BindToEpoch(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 1, 1));
  if (site.args[0]->type()->id() != TypeId::kTimestamp) {
    return ArgTypeError(site, 0, "TIMESTAMP");
  }
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  bool nullable = AnyNullable(site.args);
  return MakeBoundCall(site, DataType::Long(), nullable, std::move(site.args),
                       &ToEpochKernel<kUnit>, std::move(sql));
}

enum class Unit {
  kNone,
  kMicro,
  kMilli,
  kSecond,
  kMinute,
  kHour,
  kDay,
  kWeek,
  kMonth,
  kQuarter,
  kYear
};

Unit ParseUnit(std::string_view text, bool date_only) {
  std::string u;
  for (char c : text) u.push_back(c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c);
  if (u == "YEAR" || u == "YYYY" || u == "YY") return Unit::kYear;
  if (u == "QUARTER") return Unit::kQuarter;
  if (u == "MONTH" || u == "MM" || u == "MON") return Unit::kMonth;
  if (u == "WEEK") return Unit::kWeek;
  if (date_only) return Unit::kNone;
  if (u == "DAY" || u == "DD") return Unit::kDay;
  if (u == "HOUR") return Unit::kHour;
  if (u == "MINUTE") return Unit::kMinute;
  if (u == "SECOND") return Unit::kSecond;
  if (u == "MILLISECOND") return Unit::kMilli;
  if (u == "MICROSECOND") return Unit::kMicro;
  return Unit::kNone;
}

// Truncates a date (days) to the first day of its week/month/quarter/year.
int32_t TruncDays(int32_t days, Unit unit) {
  columnar::CivilDate c = columnar::CivilFromDays(days);
  switch (unit) {
    case Unit::kWeek: {
      // Monday-based weeks; 1970-01-01 was a Thursday.
      int32_t dow = static_cast<int32_t>(((int64_t{days} % 7) + 7 + 3) % 7);
      return days - dow;
    }
    case Unit::kMonth: return columnar::DaysFromCivil(c.year, c.month, 1);
    case Unit::kQuarter: return columnar::DaysFromCivil(c.year, (c.month - 1) / 3 * 3 + 1, 1);
    case Unit::kYear: return columnar::DaysFromCivil(c.year, 1, 1);
    default: return days;
  }
}

// date_trunc(unit, ts): truncation in the session time zone.
class DateTruncKernel final : public Kernel {
 public:
  explicit DateTruncKernel(TimeZonePtr zone) : zone_(std::move(zone)) {}
  Result<ColumnPtr> Exec(const KernelInfo& info, const ExecArgs& args) override {
    const int64_t n = args.num_rows;
    StringReader unit_in(args.args[0]);
    FixedReader<int64_t> in(args.args[1]);
    ValidityOut validity(n);
    FixedWriter<int64_t> out(n);
    if (!validity.InitFromArgs(args.args)) return out.Finish(info.type, &validity);
    std::string_view last_text;
    Unit unit = Unit::kNone;
    bool have_unit = false;
    for (int64_t row = 0; row < n; ++row) {
      if (!validity.IsValid(row)) continue;
      if (!have_unit || unit_in[row] != last_text) {
        last_text = unit_in[row];
        unit = ParseUnit(last_text, false);
        have_unit = true;
      }
      int64_t ts = in[row];
      int64_t r = ts;
      switch (unit) {
        case Unit::kNone: validity.SetNull(row); continue;
        case Unit::kMicro: break;
        case Unit::kMilli: r = ts - (ts - FloorDiv(ts, 1000) * 1000); break;
        case Unit::kSecond: r = FloorDiv(ts, kMicrosPerSecond) * kMicrosPerSecond; break;
        case Unit::kMinute:
        case Unit::kHour: {
          // Truncate the local time, then back to UTC (zones with
          // sub-hour offsets truncate differently from UTC).
          int64_t local = zone_->UtcToLocal(ts);
          int64_t unit_micros =
              unit == Unit::kMinute ? 60 * kMicrosPerSecond : 3600 * kMicrosPerSecond;
          int64_t local_trunc = FloorDiv(local, unit_micros) * unit_micros;
          r = ts - (local - local_trunc);
          break;
        }
        default: {
          int64_t local = zone_->UtcToLocal(ts);
          int32_t days = columnar::DaysFromMicros(local);
          int32_t t = unit == Unit::kDay ? days : TruncDays(days, unit);
          r = zone_->LocalToUtc(int64_t{t} * kMicrosPerDay);
          break;
        }
      }
      out.Set(row, r);
    }
    return out.Finish(info.type, &validity);
  }

 private:
  TimeZonePtr zone_;
};

Result<BoundNodePtr> BindDateTrunc(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 2, 2));
  SILT_RETURN_NOT_OK(CoerceTo(site, 0, DataType::String(), "STRING"));
  SILT_RETURN_NOT_OK(CoerceTo(site, 1, DataType::Timestamp(), "TIMESTAMP"));
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  return MakeBoundCall(site, DataType::Timestamp(), true, std::move(site.args),
                       std::make_unique<DateTruncKernel>(SessionTimeZone(site.options)),
                       std::move(sql));
}

// trunc(date, unit).
Result<ColumnPtr> TruncKernel(const KernelInfo& info, const ExecArgs& args) {
  const int64_t n = args.num_rows;
  FixedReader<int32_t> in(args.args[0]);
  StringReader unit_in(args.args[1]);
  ValidityOut validity(n);
  FixedWriter<int32_t> out(n);
  if (!validity.InitFromArgs(args.args)) return out.Finish(info.type, &validity);
  for (int64_t row = 0; row < n; ++row) {
    if (!validity.IsValid(row)) continue;
    Unit unit = ParseUnit(unit_in[row], true);
    if (unit == Unit::kNone) {
      validity.SetNull(row);
      continue;
    }
    out.Set(row, TruncDays(in[row], unit));
  }
  return out.Finish(info.type, &validity);
}

Result<BoundNodePtr> BindTrunc(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 2, 2));
  SILT_RETURN_NOT_OK(CoerceTo(site, 0, DataType::Date(), "DATE"));
  SILT_RETURN_NOT_OK(CoerceTo(site, 1, DataType::String(), "STRING"));
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  return MakeBoundCall(site, DataType::Date(), true, std::move(site.args), &TruncKernel,
                       std::move(sql));
}

// weekofyear(date): the ISO-8601 week number.
Result<ColumnPtr> WeekOfYearKernel(const KernelInfo& info, const ExecArgs& args) {
  const int64_t n = args.num_rows;
  FixedReader<int32_t> in(args.args[0]);
  ValidityOut validity(n);
  FixedWriter<int32_t> out(n);
  validity.InitFromArgs(args.args);
  for (int64_t row = 0; row < n; ++row) {
    int32_t days = in[row];
    // The Thursday of this ISO week decides its year.
    int32_t dow = static_cast<int32_t>(((int64_t{days} % 7) + 7 + 3) % 7);  // Monday = 0
    int32_t thursday = days - dow + 3;
    columnar::CivilDate c = columnar::CivilFromDays(thursday);
    int32_t jan1 = columnar::DaysFromCivil(c.year, 1, 1);
    out.Set(row, (thursday - jan1) / 7 + 1);
  }
  return out.Finish(info.type, &validity);
}

Result<BoundNodePtr> BindWeekOfYear(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 1, 1));
  SILT_RETURN_NOT_OK(CoerceTo(site, 0, DataType::Date(), "DATE"));
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  bool nullable = AnyNullable(site.args);
  return MakeBoundCall(site, DataType::Int(), nullable, std::move(site.args), &WeekOfYearKernel,
                       std::move(sql));
}

bool IsLeap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }
int DaysInMonth(int64_t y, int m) {
  static constexpr int kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[m - 1];
}

// add_months(date, n): the day is clamped to the target month's length.
Result<ColumnPtr> AddMonthsKernel(const KernelInfo& info, const ExecArgs& args) {
  const int64_t n = args.num_rows;
  FixedReader<int32_t> in(args.args[0]);
  FixedReader<int32_t> months(args.args[1]);
  ValidityOut validity(n);
  FixedWriter<int32_t> out(n);
  validity.InitFromArgs(args.args);
  for (int64_t row = 0; row < n; ++row) {
    columnar::CivilDate c = columnar::CivilFromDays(in[row]);
    int64_t total = int64_t{c.year} * 12 + (c.month - 1) + months[row];
    int64_t year = FloorDiv(total, 12);
    int month = static_cast<int>(total - year * 12) + 1;
    int day = std::min<int>(c.day, DaysInMonth(year, month));
    out.Set(row, columnar::DaysFromCivil(static_cast<int32_t>(year), month, day));
  }
  return out.Finish(info.type, &validity);
}

Result<BoundNodePtr> BindAddMonths(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 2, 2));
  SILT_RETURN_NOT_OK(CoerceTo(site, 0, DataType::Date(), "DATE"));
  if (!site.args[1]->type()->is_integral() && !IsNull(*site.args[1]->type()) &&
      !IsString(*site.args[1]->type())) {
    return ArgTypeError(site, 1, "INT");
  }
  SILT_RETURN_NOT_OK(CoerceTo(site, 1, DataType::Int(), "INT"));
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  bool nullable = AnyNullable(site.args);
  return MakeBoundCall(site, DataType::Date(), nullable, std::move(site.args), &AddMonthsKernel,
                       std::move(sql));
}

// last_day(date).
Result<ColumnPtr> LastDayKernel(const KernelInfo& info, const ExecArgs& args) {
  const int64_t n = args.num_rows;
  FixedReader<int32_t> in(args.args[0]);
  ValidityOut validity(n);
  FixedWriter<int32_t> out(n);
  validity.InitFromArgs(args.args);
  for (int64_t row = 0; row < n; ++row) {
    columnar::CivilDate c = columnar::CivilFromDays(in[row]);
    out.Set(row, columnar::DaysFromCivil(c.year, c.month, DaysInMonth(c.year, c.month)));
  }
  return out.Finish(info.type, &validity);
}

Result<BoundNodePtr> BindLastDay(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 1, 1));
  SILT_RETURN_NOT_OK(CoerceTo(site, 0, DataType::Date(), "DATE"));
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  bool nullable = AnyNullable(site.args);
  return MakeBoundCall(site, DataType::Date(), nullable, std::move(site.args), &LastDayKernel,
                       std::move(sql));
}

// months_between(ts1, ts2[, roundOff]) as DateTimeUtils.monthsBetween.
class MonthsBetweenKernel final : public Kernel {
 public:
  explicit MonthsBetweenKernel(TimeZonePtr zone) : zone_(std::move(zone)) {}
  Result<ColumnPtr> Exec(const KernelInfo& info, const ExecArgs& args) override {
    const int64_t n = args.num_rows;
    FixedReader<int64_t> a(args.args[0]);
    FixedReader<int64_t> b(args.args[1]);
    const bool has_round = args.args.size() > 2;
    BoolReader round(args.args[has_round ? 2 : 0]);
    ValidityOut validity(n);
    FixedWriter<double> out(n);
    if (!validity.InitFromArgs(args.args)) return out.Finish(info.type, &validity);
    for (int64_t row = 0; row < n; ++row) {
      if (!validity.IsValid(row)) continue;
      int64_t l1 = zone_->UtcToLocal(a[row]);
      int64_t l2 = zone_->UtcToLocal(b[row]);
      int32_t d1 = columnar::DaysFromMicros(l1);
      int32_t d2 = columnar::DaysFromMicros(l2);
      columnar::CivilDate c1 = columnar::CivilFromDays(d1);
      columnar::CivilDate c2 = columnar::CivilFromDays(d2);
      double month_diff = static_cast<double>((int64_t{c1.year} * 12 + c1.month) -
                                              (int64_t{c2.year} * 12 + c2.month));
      bool end1 = c1.day == DaysInMonth(c1.year, c1.month);
      bool end2 = c2.day == DaysInMonth(c2.year, c2.month);
      if (c1.day == c2.day || (end1 && end2)) {
        out.Set(row, month_diff);
        continue;
      }
      int64_t s1 = (l1 - int64_t{d1} * kMicrosPerDay) / kMicrosPerSecond;
      int64_t s2 = (l2 - int64_t{d2} * kMicrosPerDay) / kMicrosPerSecond;
      int64_t seconds_diff = int64_t{c1.day - c2.day} * 86400 + s1 - s2;
      double diff = month_diff + static_cast<double>(seconds_diff) / (31.0 * 86400);
      if (!has_round || round[row]) diff = static_cast<double>(std::llround(diff * 1e8)) / 1e8;
      out.Set(row, diff);
    }
    return out.Finish(info.type, &validity);
  }

 private:
  TimeZonePtr zone_;
};

Result<BoundNodePtr> BindMonthsBetween(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 2, 3));
  SILT_RETURN_NOT_OK(CoerceTo(site, 0, DataType::Timestamp(), "TIMESTAMP"));
  SILT_RETURN_NOT_OK(CoerceTo(site, 1, DataType::Timestamp(), "TIMESTAMP"));
  std::vector<std::string> sqls = ArgSqls(site.args);
  if (site.args.size() > 2) {
    SILT_RETURN_NOT_OK(CoerceTo(site, 2, DataType::Boolean(), "BOOLEAN"));
    sqls = ArgSqls(site.args);
  } else {
    sqls.push_back("true");
  }
  std::string sql = PrettyCall(site.name, sqls);
  bool nullable = AnyNullable(site.args);
  return MakeBoundCall(site, DataType::Double(), nullable, std::move(site.args),
                       std::make_unique<MonthsBetweenKernel>(SessionTimeZone(site.options)),
                       std::move(sql));
}

// from_utc_timestamp(ts, tz) / to_utc_timestamp(ts, tz).
template <bool kFromUtc>
class UtcShiftKernel final : public Kernel {
 public:
  Result<ColumnPtr> Exec(const KernelInfo& info, const ExecArgs& args) override {
    const int64_t n = args.num_rows;
    FixedReader<int64_t> in(args.args[0]);
    StringReader zone_in(args.args[1]);
    ValidityOut validity(n);
    FixedWriter<int64_t> out(n);
    if (!validity.InitFromArgs(args.args)) return out.Finish(info.type, &validity);
    for (int64_t row = 0; row < n; ++row) {
      if (!validity.IsValid(row)) continue;
      std::string_view name = zone_in[row];
      if (zone_ == nullptr || name != zone_->name()) {
        Result<TimeZonePtr> zone = TimeZone::Load(name);
        if (!zone.ok()) {
          if (info.options.ansi) return zone.status().WithContextParts("in '", info.sql, "'");
          zone_ = nullptr;
          validity.SetNull(row);
          continue;
        }
        zone_ = *zone;
      }
      out.Set(row, kFromUtc ? zone_->UtcToLocal(in[row]) : zone_->LocalToUtc(in[row]));
    }
    return out.Finish(info.type, &validity);
  }

 private:
  TimeZonePtr zone_;
};

template <bool kFromUtc>
Result<BoundNodePtr> BindUtcShift(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 2, 2));
  SILT_RETURN_NOT_OK(CoerceTo(site, 0, DataType::Timestamp(), "TIMESTAMP"));
  SILT_RETURN_NOT_OK(CoerceTo(site, 1, DataType::String(), "STRING"));
  if (site.args[1]->foldable()) {
    SILT_ASSIGN_OR_RETURN(ColumnPtr zone, ConstantArg(site, 1, "the time zone"));
    if (zone->IsValid(0)) {
      Result<TimeZonePtr> loaded = TimeZone::Load(zone->StringValue(0));
      if (!loaded.ok()) return loaded.status().WithContextParts("in '", site.text, "'");
    }
  }
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  bool nullable = AnyNullable(site.args);
  return MakeBoundCall(site, DataType::Timestamp(), nullable, std::move(site.args),
                       std::make_unique<UtcShiftKernel<kFromUtc>>(), std::move(sql));
}

}  // namespace

void RegisterDatetimeMoreFunctions(FunctionRegistry* registry) {
  registry->Register("date_format", &BindDateFormat);
  registry->Register("from_unixtime", &BindFromUnixtime);
  registry->Register("unix_timestamp", &BindUnixTimestamp);
  registry->Register("to_unix_timestamp", &BindUnixTimestamp);
  registry->Register("timestamp_seconds", &BindFromEpoch<kMicrosPerSecond>);
  registry->Register("timestamp_millis", &BindFromEpoch<1000>);
  registry->Register("timestamp_micros", &BindFromEpoch<1>);
  registry->Register("unix_seconds", &BindToEpoch<1>);
  registry->Register("unix_millis", &BindToEpoch<1000>);
  registry->Register("unix_micros", &BindToEpoch<kMicrosPerSecond>);
  registry->Register("date_trunc", &BindDateTrunc);
  registry->Register("trunc", &BindTrunc);
  registry->Register("weekofyear", &BindWeekOfYear);
  registry->Register("add_months", &BindAddMonths);
  registry->Register("last_day", &BindLastDay);
  registry->Register("months_between", &BindMonthsBetween);
  registry->Register("from_utc_timestamp", &BindUtcShift<true>);
  registry->Register("to_utc_timestamp", &BindUtcShift<false>);
}

}  // namespace silt::expr
