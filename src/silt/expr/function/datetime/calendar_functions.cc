// Calendar functions in the session time zone: date_trunc, trunc,
// weekofyear, months_between, add_months, last_day, from_utc_timestamp and
// to_utc_timestamp. Semantics of Spark 3.5's DateTimeUtils (non-ANSI:
// unknown units are NULL).
#include <cmath>
#include <limits>
#include <string>
#include <string_view>

#include "silt/columnar/builder.h"
#include "silt/columnar/temporal.h"
#include "silt/expr/cast/cast.h"
#include "silt/expr/function/datetime/datetime_args.h"
#include "silt/expr/kernel/executor.h"
#include "silt/expr/kernel/function_registry.h"
#include "silt/expr/kernel/kernel_util.h"
#include "silt/expr/kernel/type_util.h"
#include "silt/expr/parse/ast.h"
#include "silt/expr/value/time_zone.h"

namespace silt::expr {

namespace {

using columnar::ColumnPtr;
using columnar::kMicrosPerDay;
using columnar::kMicrosPerSecond;
using datetime_args::CoerceTo;
using datetime_args::FloorDiv;

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
    std::string_view last_text;
    Unit unit = Unit::kNone;
    bool have_unit = false;
    auto op = [&](std::string_view unit_text, int64_t ts, RowContext& ctx) -> int64_t {
      if (!have_unit || unit_text != last_text) {
        last_text = unit_text;
        unit = ParseUnit(last_text, false);
        have_unit = true;
      }
      switch (unit) {
        case Unit::kNone: ctx.SetNull(); return 0;
        case Unit::kMicro: return ts;
        case Unit::kMilli: return ts - (ts - FloorDiv(ts, 1000) * 1000);
        case Unit::kSecond: return FloorDiv(ts, kMicrosPerSecond) * kMicrosPerSecond;
        case Unit::kMinute:
        case Unit::kHour: {
          // Truncate the local time, then back to UTC (zones with
          // sub-hour offsets truncate differently from UTC).
          int64_t local = zone_->UtcToLocal(ts);
          int64_t unit_micros =
              unit == Unit::kMinute ? 60 * kMicrosPerSecond : 3600 * kMicrosPerSecond;
          int64_t local_trunc = FloorDiv(local, unit_micros) * unit_micros;
          return ts - (local - local_trunc);
        }
        default: {
          int64_t local = zone_->UtcToLocal(ts);
          int32_t days = columnar::DaysFromMicros(local);
          int32_t t = unit == Unit::kDay ? days : TruncDays(days, unit);
          return zone_->LocalToUtc(int64_t{t} * kMicrosPerDay);
        }
      }
    };
    return BinaryExecutor<std::string_view, int64_t, int64_t>::ExecuteChecked(info, args, op);
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
  return BinaryExecutor<int32_t, std::string_view, int32_t>::ExecuteChecked(
      info, args, [](int32_t days, std::string_view unit_text, RowContext& ctx) {
        Unit unit = ParseUnit(unit_text, true);
        if (unit == Unit::kNone) ctx.SetNull();
        return TruncDays(days, unit);
      });
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
  return UnaryExecutor<int32_t, int32_t>::Execute(info, args, [](int32_t days) {
    // The Thursday of this ISO week decides its year.
    int32_t dow = static_cast<int32_t>(((int64_t{days} % 7) + 7 + 3) % 7);  // Monday = 0
    int32_t thursday = days - dow + 3;
    columnar::CivilDate c = columnar::CivilFromDays(thursday);
    int32_t jan1 = columnar::DaysFromCivil(c.year, 1, 1);
    return (thursday - jan1) / 7 + 1;
  });
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
  return BinaryExecutor<int32_t, int32_t, int32_t>::Execute(
      info, args, [](int32_t days, int32_t months) {
        columnar::CivilDate c = columnar::CivilFromDays(days);
        int64_t total = int64_t{c.year} * 12 + (c.month - 1) + months;
        int64_t year = FloorDiv(total, 12);
        int month = static_cast<int>(total - year * 12) + 1;
        int day = std::min<int>(c.day, DaysInMonth(year, month));
        return columnar::DaysFromCivil(static_cast<int32_t>(year), month, day);
      });
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
  return UnaryExecutor<int32_t, int32_t>::Execute(info, args, [](int32_t days) {
    columnar::CivilDate c = columnar::CivilFromDays(days);
    return columnar::DaysFromCivil(c.year, c.month, DaysInMonth(c.year, c.month));
  });
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
    auto op = [&](int64_t ts, std::string_view name, RowContext& ctx) -> int64_t {
      if (zone_ == nullptr || name != zone_->name()) {
        Result<TimeZonePtr> zone = TimeZone::Load(name);
        if (!zone.ok()) {
          if (info.options.ansi) {
            ctx.Fail(zone.status().WithContextParts("in '", info.sql, "'"));
          } else {
            ctx.SetNull();
          }
          zone_ = nullptr;
          return 0;
        }
        zone_ = *zone;
      }
      return kFromUtc ? zone_->UtcToLocal(ts) : zone_->LocalToUtc(ts);
    };
    return BinaryExecutor<int64_t, std::string_view, int64_t>::ExecuteChecked(info, args, op);
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

void RegisterCalendarFunctions(FunctionRegistry* registry) {
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
