// Date/time functions: to_timestamp, to_date, current_timestamp / now,
// current_date / curdate; the date parts year, quarter, month, day /
// dayofmonth, dayofweek, dayofyear (of a DATE; timestamps and strings are
// cast to DATE first, as Spark does), hour, minute, second (of a TIMESTAMP in
// the session time zone); date_add, date_sub and datediff.
//
// to_timestamp(s) and to_date(s) without a pattern are CAST(s AS TIMESTAMP /
// DATE), as in Spark. With a pattern they parse with a compiled
// DateTimeFormat; non-matching text is NULL (ANSI: an error). Zone-less text
// is in the session time zone. current_timestamp() is fixed per batch (the
// EvalContext's value), as Spark fixes it per micro-batch.
#include <optional>
#include <string_view>

#include "silt/columnar/temporal.h"
#include "silt/expr/cast/cast.h"
#include "silt/expr/function/datetime/datetime_format.h"
#include "silt/expr/kernel/executor.h"
#include "silt/expr/kernel/function_registry.h"
#include "silt/expr/kernel/kernel_util.h"
#include "silt/expr/kernel/type_util.h"
#include "silt/expr/parse/ast.h"
#include "silt/expr/value/time_zone.h"

namespace silt::expr {

namespace {

using columnar::ColumnPtr;

// Parses strings with a pattern into TIMESTAMP micros, or DATE days.
class ParseWithFormatKernel final : public Kernel {
 public:
  ParseWithFormatKernel(DateTimeFormat format, bool to_date)
      : format_(std::move(format)), to_date_(to_date) {}

  Result<ColumnPtr> Exec(const KernelInfo& info, const ExecArgs& args) override {
    const TimeZonePtr zone = SessionTimeZone(info.options);
    auto parse = [&](std::string_view text, RowContext& ctx) -> std::optional<int64_t> {
      std::optional<int64_t> micros =
          ParseInZone(*zone, [&](int64_t offset) { return format_.ParseTimestamp(text, offset); });
      if (!micros) {
        Status st = Fail(info, text, ctx.row());
        if (!st.ok()) {
          ctx.Fail(std::move(st));
        } else {
          ctx.SetNull();
        }
      }
      return micros;
    };
    if (to_date_) {
      return UnaryExecutor<std::string_view, int32_t>::ExecuteChecked(
          info, args, [&](std::string_view text, RowContext& ctx) -> int32_t {
            std::optional<int64_t> micros = parse(text, ctx);
            return micros ? columnar::DaysFromMicros(zone->UtcToLocal(*micros)) : 0;
          });
    }
    return UnaryExecutor<std::string_view, int64_t>::ExecuteChecked(
        info, args, [&](std::string_view text, RowContext& ctx) -> int64_t {
          return parse(text, ctx).value_or(0);
        });
  }

 private:
  Status Fail(const KernelInfo& info, std::string_view value, int64_t row) const {
    if (info.options.time_parser_policy == TimeParserPolicy::kException) {
      SILT_RETURN_NOT_OK(CheckLegacyParser(format_, value, row, info.sql));
    }
    if (!info.options.ansi) return Status::OK();
    return Status::InvalidArgument("Cannot parse '", value, "' with pattern '", format_.pattern(),
                                   "' (row ", row, ") in '", info.sql, "'");
  }

  DateTimeFormat format_;
  bool to_date_;
};

Result<ColumnPtr> CurrentTimestampKernel(const KernelInfo& info, const ExecArgs& args) {
  FixedWriter<int64_t> out(args.num_rows);
  for (int64_t row = 0; row < args.num_rows; ++row) {
    out.Set(row, args.eval->current_timestamp_micros);
  }
  ValidityOut validity(args.num_rows);
  return out.Finish(info.type, &validity);
}

Result<ColumnPtr> CurrentDateKernel(const KernelInfo& info, const ExecArgs& args) {
  FixedWriter<int32_t> out(args.num_rows);
  int32_t days = columnar::DaysFromMicros(
      SessionTimeZone(info.options)->UtcToLocal(args.eval->current_timestamp_micros));
  for (int64_t row = 0; row < args.num_rows; ++row) out.Set(row, days);
  ValidityOut validity(args.num_rows);
  return out.Finish(info.type, &validity);
}

template <bool kDate>
Result<BoundNodePtr> BindCurrent(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 0, 0));
  TypePtr type = kDate ? DataType::Date() : DataType::Timestamp();
  KernelFn fn = kDate ? &CurrentDateKernel : &CurrentTimestampKernel;
  std::string sql = PrettyCall(site.name, {});
  return MakeBoundCall(site, type, /*nullable=*/false, {}, std::make_unique<FunctionKernel>(fn),
                       std::move(sql), /*context_dependent=*/true);
}

// to_timestamp(x [, fmt]) and to_date(x [, fmt]).
template <bool kDate>
Result<BoundNodePtr> BindParse(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 1, 2));
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  TypePtr type = kDate ? DataType::Date() : DataType::Timestamp();
  TypeId in = site.args[0]->type()->id();
  bool is_datetime = in == TypeId::kDate || in == TypeId::kTimestamp || in == TypeId::kTimestampNtz;
  if (!is_datetime && in != TypeId::kString) {
    // Spark's implicit cast to the first accepted type: other atomic values
    // are read as text.
    if (!IsAtomic(*site.args[0]->type()) && in != TypeId::kNull) {
      return ArgTypeError(site, 0, "STRING, DATE or TIMESTAMP");
    }
    SILT_ASSIGN_OR_RETURN(site.args[0],
                          ImplicitCast(std::move(site.args[0]), DataType::String(), site.options));
  }
  bool has_format = site.args.size() == 2;
  bool is_text = !is_datetime;
  if (!has_format || !is_text) {
    // Spark replaces these by a cast (the pattern is ignored for dates and
    // timestamps).
    SILT_ASSIGN_OR_RETURN(BoundNodePtr cast,
                          ImplicitCast(std::move(site.args[0]), type, site.options));
    // Re-wrap so the generated name is the function's.
    std::vector<BoundNodePtr> args;
    args.push_back(std::move(cast));
    KernelFn identity = [](const KernelInfo&, const ExecArgs& a) -> Result<ColumnPtr> {
      return a.args[0].column;
    };
    return MakeBoundCall(site, type, /*nullable=*/true, std::move(args), identity, std::move(sql));
  }
  if (!IsString(*site.args[1]->type())) return ArgTypeError(site, 1, "a STRING pattern");
  SILT_ASSIGN_OR_RETURN(ColumnPtr pattern, ConstantArg(site, 1, "the datetime pattern"));
  std::vector<BoundNodePtr> args;
  args.push_back(std::move(site.args[0]));
  if (pattern->IsNull(0)) {
    // A NULL pattern makes every row NULL.
    KernelFn all_null = [](const KernelInfo& info, const ExecArgs& a) -> Result<ColumnPtr> {
      return NullColumn(info.type, a.num_rows);
    };
    return MakeBoundCall(site, type, true, std::move(args), all_null, std::move(sql));
  }
  Result<DateTimeFormat> format = DateTimeFormat::Compile(pattern->StringValue(0));
  if (!format.ok()) {
    return format.status().WithContextParts("in '", site.text, "'");
  }
  return MakeBoundCall(
      site, type, /*nullable=*/true, std::move(args),
      std::make_unique<ParseWithFormatKernel>(std::move(format).MoveValueUnsafe(), kDate),
      std::move(sql));
}

enum class Part { kYear, kQuarter, kMonth, kDay, kDayOfWeek, kDayOfYear, kHour, kMinute, kSecond };

constexpr bool IsTimePart(Part part) {
  return part == Part::kHour || part == Part::kMinute || part == Part::kSecond;
}

template <Part kPart>
int32_t DatePart(int32_t days) {
  if constexpr (kPart == Part::kDayOfWeek) {
    // 1970-01-01 was a Thursday; Spark counts 1 = Sunday .. 7 = Saturday.
    int32_t r = (days + 4) % 7;
    if (r < 0) r += 7;
    return r + 1;
  } else {
    columnar::CivilDate civil = columnar::CivilFromDays(days);
    if constexpr (kPart == Part::kYear) return civil.year;
    if constexpr (kPart == Part::kQuarter) return (civil.month - 1) / 3 + 1;
    if constexpr (kPart == Part::kMonth) return civil.month;
    if constexpr (kPart == Part::kDay) return civil.day;
    if constexpr (kPart == Part::kDayOfYear) {
      return days - columnar::DaysFromCivil(civil.year, 1, 1) + 1;
    }
    return 0;
  }
}

template <Part kPart>
Result<ColumnPtr> PartKernel(const KernelInfo& info, const ExecArgs& args) {
  if constexpr (IsTimePart(kPart)) {
    const TimeZonePtr zone = SessionTimeZone(info.options);
    auto part = [](int64_t local) {
      int64_t in_day = local % columnar::kMicrosPerDay;
      if (in_day < 0) in_day += columnar::kMicrosPerDay;
      int64_t seconds = in_day / 1000000;
      return static_cast<int32_t>(kPart == Part::kHour     ? seconds / 3600
                                  : kPart == Part::kMinute ? (seconds / 60) % 60
                                                           : seconds % 60);
    };
    using Exec = UnaryExecutor<int64_t, int32_t>;
    if (zone->is_fixed()) {
      // Wrapping add as before for fixed zones; the zone's rules otherwise.
      const uint64_t offset =
          static_cast<uint64_t>(int64_t{zone->fixed_offset_seconds()} * 1000000);
      return Exec::Execute(info, args, [part, offset](int64_t ts) {
        return part(static_cast<int64_t>(static_cast<uint64_t>(ts) + offset));
      });
    }
    return Exec::Execute(info, args, [&](int64_t ts) { return part(zone->UtcToLocal(ts)); });
  } else {
    return UnaryExecutor<int32_t, int32_t>::Execute(
        info, args, [](int32_t days) { return DatePart<kPart>(days); });
  }
}

Status CoerceTo(CallSite& site, size_t index, const TypePtr& to, std::string_view expected) {
  const DataType& t = *site.args[index]->type();
  if (t.Equals(*to)) return Status::OK();
  if (t.id() != TypeId::kString && t.id() != TypeId::kNull && t.id() != TypeId::kDate &&
      t.id() != TypeId::kTimestamp && t.id() != TypeId::kTimestampNtz) {
    return ArgTypeError(site, index, expected);
  }
  SILT_ASSIGN_OR_RETURN(site.args[index],
                        ImplicitCast(std::move(site.args[index]), to, site.options));
  return Status::OK();
}

template <Part kPart>
Result<BoundNodePtr> BindPart(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 1, 1));
  if constexpr (IsTimePart(kPart)) {
    SILT_RETURN_NOT_OK(CoerceTo(site, 0, DataType::Timestamp(), "TIMESTAMP"));
  } else {
    SILT_RETURN_NOT_OK(CoerceTo(site, 0, DataType::Date(), "DATE"));
  }
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  const bool nullable = AnyNullable(site.args);
  return MakeBoundCall(site, DataType::Int(), nullable, std::move(site.args), &PartKernel<kPart>,
                       std::move(sql));
}

// date_add(d, n) / date_sub(d, n): DATE plus or minus n days (kSign);
// datediff(end, start): days between (kSign 0).
template <int kSign>
Result<ColumnPtr> DayArithmeticKernel(const KernelInfo& info, const ExecArgs& args) {
  return BinaryExecutor<int32_t, int32_t, int32_t>::Execute(info, args, [](int32_t a, int32_t b) {
    // Wrapping int arithmetic, as Spark's non-ANSI date_add.
    int64_t v = kSign == 0 ? int64_t{a} - b : int64_t{a} + kSign * int64_t{b};
    return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
  });
}

template <int kSign>
Result<BoundNodePtr> BindDayArithmetic(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 2, 2));
  SILT_RETURN_NOT_OK(CoerceTo(site, 0, DataType::Date(), "DATE"));
  if constexpr (kSign == 0) {
    SILT_RETURN_NOT_OK(CoerceTo(site, 1, DataType::Date(), "DATE"));
  } else {
    TypeId id = site.args[1]->type()->id();
    if (id != TypeId::kInt && id != TypeId::kShort && id != TypeId::kByte && id != TypeId::kNull &&
        id != TypeId::kString) {
      return ArgTypeError(site, 1, "INT, SMALLINT or TINYINT");
    }
    SILT_ASSIGN_OR_RETURN(site.args[1],
                          ImplicitCast(std::move(site.args[1]), DataType::Int(), site.options));
  }
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  const bool nullable = AnyNullable(site.args);
  TypePtr type = kSign == 0 ? DataType::Int() : DataType::Date();
  return MakeBoundCall(site, type, nullable, std::move(site.args), &DayArithmeticKernel<kSign>,
                       std::move(sql));
}

}  // namespace

void RegisterDatetimeFunctions(FunctionRegistry* registry) {
  registry->Register("year", &BindPart<Part::kYear>);
  registry->Register("quarter", &BindPart<Part::kQuarter>);
  registry->Register("month", &BindPart<Part::kMonth>);
  registry->Register("day", &BindPart<Part::kDay>);
  registry->Register("dayofmonth", &BindPart<Part::kDay>);
  registry->Register("dayofweek", &BindPart<Part::kDayOfWeek>);
  registry->Register("dayofyear", &BindPart<Part::kDayOfYear>);
  registry->Register("hour", &BindPart<Part::kHour>);
  registry->Register("minute", &BindPart<Part::kMinute>);
  registry->Register("second", &BindPart<Part::kSecond>);
  registry->Register("date_add", &BindDayArithmetic<1>);
  registry->Register("date_sub", &BindDayArithmetic<-1>);
  registry->Register("datediff", &BindDayArithmetic<0>);
  registry->Register("current_timestamp", &BindCurrent<false>);
  registry->Register("now", &BindCurrent<false>);
  registry->Register("current_date", &BindCurrent<true>);
  registry->Register("curdate", &BindCurrent<true>);
  registry->Register("to_timestamp", &BindParse<false>);
  registry->Register("to_date", &BindParse<true>);
}

}  // namespace silt::expr
