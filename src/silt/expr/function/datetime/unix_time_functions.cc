// Unix time and formatting in the session time zone: date_format,
// from_unixtime, unix_timestamp / to_unix_timestamp, timestamp_seconds /
// _millis / _micros and unix_seconds / _millis / _micros. Semantics of
// Spark 3.5's DateTimeUtils (non-ANSI: unparsable text is NULL).
#include <cmath>
#include <limits>
#include <string>

#include "silt/columnar/builder.h"
#include "silt/columnar/temporal.h"
#include "silt/expr/cast/cast.h"
#include "silt/expr/function/datetime/datetime_args.h"
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
using columnar::kMicrosPerDay;
using columnar::kMicrosPerSecond;
using datetime_args::CoerceTo;
using datetime_args::FloorDiv;

constexpr const char* kDefaultPattern = "yyyy-MM-dd HH:mm:ss";

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
    if (!format_) return NullColumn(info.type, args.num_rows);
    std::string text;
    auto op = [&](int64_t micros, StringAppender& out, RowContext& ctx) {
      if (seconds_) {
        if (micros > std::numeric_limits<int64_t>::max() / kMicrosPerSecond ||
            micros < std::numeric_limits<int64_t>::min() / kMicrosPerSecond) {
          ctx.SetNull();
          return;
        }
        micros *= kMicrosPerSecond;
      }
      int32_t offset = zone_->OffsetSecondsAt(micros);
      text.clear();
      format_->Format(micros + int64_t{offset} * kMicrosPerSecond, offset, &text);
      out.Append(text);
    };
    return UnaryExecutor<int64_t, std::string_view>::ExecuteChecked(info, args, op);
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
    if (args.args.empty()) {
      ValidityOut validity(n);
      FixedWriter<int64_t> out(n);
      for (int64_t row = 0; row < n; ++row) {
        out.Set(row, FloorDiv(args.eval->current_timestamp_micros, kMicrosPerSecond));
      }
      return out.Finish(info.type, &validity);
    }
    switch (info.arg_types[0]->id()) {
      case TypeId::kTimestamp:
      case TypeId::kTimestampNtz:
        // Spark divides with truncation (1969-12-31 23:59:59.5 gives 0).
        return UnaryExecutor<int64_t, int64_t>::Execute(
            info, args, [](int64_t micros) { return micros / kMicrosPerSecond; });
      case TypeId::kDate:
        return UnaryExecutor<int32_t, int64_t>::Execute(info, args, [this](int32_t days) {
          return FloorDiv(zone_->LocalToUtc(int64_t{days} * kMicrosPerDay), kMicrosPerSecond);
        });
      default: break;
    }
    if (!format_) return NullColumn(info.type, n);
    auto op = [&](std::string_view text, RowContext& ctx) -> int64_t {
      std::optional<int64_t> local = format_->ParseTimestamp(text, 0);
      if (!local) {
        Status st = info.options.time_parser_policy == TimeParserPolicy::kException
                        ? CheckLegacyParser(*format_, text, ctx.row(), info.sql)
                        : Status::OK();
        if (st.ok() && info.options.ansi) {
          st = Status::InvalidArgument("Cannot parse '", text, "' with pattern '",
                                       format_->pattern(), "' (row ", ctx.row(), ") in '", info.sql,
                                       "'");
        }
        if (!st.ok()) {
          ctx.Fail(std::move(st));
        } else {
          ctx.SetNull();
        }
        return 0;
      }
      // Text with its own offset parses to UTC directly; zone-less text
      // is local time in the session zone.
      std::optional<int64_t> with_offset =
          format_->ParseTimestamp(text, int64_t{1} * kMicrosPerSecond);
      int64_t utc = (with_offset && *with_offset == *local) ? *local : zone_->LocalToUtc(*local);
      return utc / kMicrosPerSecond;
    };
    return UnaryExecutor<std::string_view, int64_t>::ExecuteChecked(info, args, op);
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
  if (info.arg_types[0]->id() == TypeId::kDouble) {
    return UnaryExecutor<double, int64_t>::ExecuteChecked(
        info, args, [](double v, RowContext& ctx) -> int64_t {
          if (!std::isfinite(v)) {
            ctx.SetNull();
            return 0;
          }
          // Spark: (d * MICROS_PER_SECOND).toLong, which saturates.
          double m = v * static_cast<double>(kUnit);
          return m >= 9.2233720368547758e18    ? std::numeric_limits<int64_t>::max()
                 : m <= -9.2233720368547758e18 ? std::numeric_limits<int64_t>::min()
                                               : static_cast<int64_t>(m);
        });
  }
  return UnaryExecutor<int64_t, int64_t>::ExecuteChecked(
      info, args, [&info](int64_t v, RowContext& ctx) {
        int64_t r;
        if (__builtin_mul_overflow(v, kUnit, &r)) {
          ctx.Fail(Status::InvalidArgument("long overflow converting ", v, " (row ", ctx.row(),
                                           ") to a timestamp in '", info.sql, "'"));
        }
        return r;
      });
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
  return UnaryExecutor<int64_t, int64_t>::Execute(
      info, args, [](int64_t micros) { return FloorDiv(micros, kMicrosPerSecond / kUnit); });
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

}  // namespace

void RegisterUnixTimeFunctions(FunctionRegistry* registry) {
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
}

}  // namespace silt::expr
